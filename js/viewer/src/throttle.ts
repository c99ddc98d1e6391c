// Re-rendering a page at most once a frame, and, when rendering is slow (a run of 100,000 items), no more often
// than leaves the reader most of the main thread: after a render of T ms the next waits until T × (1/share − 1)
// ms have passed, so the page updates less often instead of freezing while a run streams in.

export interface ThrottleClock {
  /** Milliseconds, increasing. */
  now(): number;
  /** Call `run` after `ms` milliseconds. */
  after(ms: number, run: () => void): void;
  /** Call `run` before the next paint. */
  frame(run: () => void): void;
}

const browserClock: ThrottleClock = {
  now: () => performance.now(),
  after: (ms, run) => void setTimeout(run, ms),
  frame: (run) => void requestAnimationFrame(run),
};

export class Throttle {
  private pending = false;
  private readyAt = 0;

  /**
   * `work` runs when requested, at most once a frame; `share` is the most of the main thread it may take over
   * time (a quarter by default).
   */
  constructor(
    private readonly work: () => void,
    private readonly share = 0.25,
    private readonly clock: ThrottleClock = browserClock,
  ) {}

  /** Run `work` soon: before the next paint, or once the time a slow last run earned has passed. */
  request(): void {
    if (this.pending) return;
    this.pending = true;
    const wait = this.readyAt - this.clock.now();
    if (wait > 0) this.clock.after(wait, () => this.clock.frame(() => this.run()));
    else this.clock.frame(() => this.run());
  }

  private run(): void {
    this.pending = false;
    const start = this.clock.now();
    this.work();
    const end = this.clock.now();
    this.readyAt = end + (end - start) * (1 / this.share - 1);
  }
}
