// A client of a host's `GET /v1/threads/{thread_id}/observed`: every run of a thread, run after run, each run's
// `snapshot`, `observed` and `end` frames with ids `<run_id>/<attempt>-<sequence>`. One `DisplayNormalizer` per run,
// restored from its snapshot and kept current by its entries. The stream does not end by itself: a lost connection
// is resumed with `Last-Event-ID` (the last id received). Entries that do not fit a run's display (a gap, a
// `DisplayError`) drop that run and the runs after it, and the follower reconnects from the end of the run before
// it, so the host sends that run again from its snapshot (or, for the thread's first run, from the beginning).
import { FollowError, frames, RETAIN_CONTENT_HEADER } from "../../display/src/follow.js";
import { DisplayNormalizer } from "../../display/src/normalizer.js";
const MAX_RETRY_MS = 30_000;
/** Follow the thread whose `/observed` route is `url` (for example `/v1/threads/thread-1/observed`). */
export function followThread(url, options = {}) {
    const controller = new AbortController();
    options.signal?.addEventListener("abort", () => controller.abort(options.signal?.reason));
    const state = new ThreadState(url, options, controller.signal);
    const done = state.run();
    done.catch(() => undefined);
    return {
        get runs() {
            return state.runs;
        },
        done,
        stop: () => controller.abort(),
    };
}
/** A thread position's run id and its position in the run. */
function split(id) {
    if (id === null)
        return null;
    const slash = id.lastIndexOf("/");
    return slash < 0 ? null : [id.slice(0, slash), id.slice(slash + 1)];
}
class ThreadState {
    url;
    options;
    signal;
    runs = [];
    /** The last id received: where a new connection resumes. */
    lastId = null;
    /** The host's content policy, as its last answer said it. */
    retainContent = false;
    constructor(url, options, signal) {
        this.url = url;
        this.options = options;
        this.signal = signal;
    }
    async run() {
        const base = this.options.retryMs ?? 500;
        let delay = base;
        for (;;) {
            this.signal.throwIfAborted();
            let wait = delay;
            try {
                const outcome = await this.connect();
                if (outcome === "resync")
                    wait = 0;
                else if (outcome === "progressed")
                    wait = delay = base;
                this.options.onRetry?.(new Error("the thread's event stream ended"), wait);
            }
            catch (error) {
                if (error instanceof FollowError && error.status === 400 && this.lastId !== null) {
                    // The position names no run of the thread any more (deleted meanwhile): start over.
                    this.resync(null, error);
                    wait = 0;
                }
                else if (error instanceof FollowError || this.signal.aborted) {
                    throw error;
                }
                else {
                    this.options.onRetry?.(error, wait);
                }
            }
            await sleep(wait, this.signal);
            if (wait > 0)
                delay = Math.min(delay * 2, MAX_RETRY_MS);
        }
    }
    /** One connection, read until it ends or a run must be sent again. */
    async connect() {
        const headers = { Accept: "text/event-stream", ...this.options.headers };
        if (this.lastId !== null)
            headers["Last-Event-ID"] = this.lastId;
        const response = await (this.options.fetch ?? fetch)(this.url, { headers, signal: this.signal });
        if (!response.ok || response.body === null) {
            const text = await response.text().catch(() => "");
            const message = `${this.url} answered ${response.status}: ${text.slice(0, 500)}`;
            if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
                throw new FollowError(message, response.status);
            }
            throw new Error(message);
        }
        // The host's content policy (`a13n-retain-content`): the runs are folded as the host folds them. Runs held
        // under another policy (the host restarted with another) are sent again from the thread's start.
        const retainContent = response.headers.get(RETAIN_CONTENT_HEADER) === "true";
        if (retainContent !== this.retainContent) {
            this.retainContent = retainContent;
            if (this.runs.length > 0) {
                this.runs.splice(0);
                this.lastId = null;
                await response.body.cancel().catch(() => undefined);
                return "resync";
            }
        }
        this.options.onConnect?.();
        let progressed = false;
        // The run this connection is in: an `end` frame without an id (a deleted run) belongs to it.
        let current = split(this.lastId)?.[0] ?? null;
        for await (const frame of frames(response.body)) {
            progressed = true;
            const named = split(frame.id)?.[0] ?? null;
            if (named !== null)
                current = named;
            if (current === null)
                continue;
            try {
                if (!this.frame(frame, current))
                    return "resync";
            }
            catch (error) {
                this.gap(current, error);
                return "resync";
            }
        }
        return progressed ? "progressed" : "idle";
    }
    /** Apply one frame of run `runId`; false when a run must be sent again. */
    frame(frame, runId) {
        // The run's last entry: an id ingested again after a delete is held twice, and its frames are the later one's.
        const index = lastIndexOf(this.runs, runId);
        if (frame.event === "snapshot") {
            const display = DisplayNormalizer.restore(frame.data, { retainContent: this.retainContent });
            const run = { runId, display, ended: null, endId: null };
            // The run being followed, sent again from a snapshot, replaces what was held of it. Any other run held under
            // that id (ended, or before others) was deleted and its id ingested again: the host lists that run last, a
            // new run after the ones held (a gap drops the run and those after it before the run is sent again).
            if (index >= 0 && index === this.runs.length - 1 && this.runs[index]?.ended === null)
                this.runs[index] = run;
            else
                this.runs.push(run);
            this.lastId = frame.id;
            this.options.onChange?.(this.runs);
            return true;
        }
        if (frame.event !== "observed" && frame.event !== "end")
            return true;
        const run = this.runs[index];
        // A connection resumed at a run's last id gets its `end` again (the client may not have had it): known.
        if (frame.event === "end" && run?.ended === "complete" && run.endId === frame.id)
            return true;
        if (run === undefined || index !== this.runs.length - 1 || run.ended !== null) {
            this.gap(runId, new Error(`${frame.event} of ${runId} without its snapshot`));
            return false;
        }
        if (frame.event === "observed") {
            const { observed } = JSON.parse(frame.data);
            run.display.apply(observed);
            this.lastId = frame.id;
            this.options.onChange?.(this.runs);
            return true;
        }
        const { reason } = JSON.parse(frame.data);
        if (reason === "deleted") {
            run.ended = "deleted";
            this.options.onChange?.(this.runs);
            return true;
        }
        // The end names the run's last position: a display short of it lost entries on the way.
        const at = split(frame.id)?.[1];
        const position = run.display.position;
        if (position === undefined || at !== `${position.attempt}-${position.sequence}`) {
            this.gap(runId, new Error(`${runId} ended at ${at ?? "?"}, its display is at ${position?.attempt}-${position?.sequence}`));
            return false;
        }
        run.ended = "complete";
        run.endId = frame.id;
        this.lastId = frame.id;
        this.options.onChange?.(this.runs);
        return true;
    }
    /** Entries of `runId` were lost or do not fit: resume from the end of the complete run before it. */
    gap(runId, error) {
        let index = lastIndexOf(this.runs, runId);
        if (index < 0)
            index = this.runs.length;
        let before = index - 1;
        while (before >= 0 && this.runs[before]?.ended !== "complete")
            before -= 1;
        this.resync(before >= 0 ? before : null, error);
    }
    /** Keep the runs up to `keep` (none: `null`) and resume after its end. */
    resync(keep, error) {
        this.options.onRetry?.(error, 0);
        if (keep === null) {
            this.runs = [];
            this.lastId = null;
        }
        else {
            this.runs = this.runs.slice(0, keep + 1);
            this.lastId = this.runs[keep]?.endId ?? null;
        }
        this.options.onChange?.(this.runs);
    }
}
/** The index of the last run held under `runId`, or -1. */
function lastIndexOf(runs, runId) {
    for (let index = runs.length - 1; index >= 0; index -= 1) {
        if (runs[index]?.runId === runId)
            return index;
    }
    return -1;
}
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (ms <= 0)
            return resolve();
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(signal.reason);
        }, { once: true });
    });
}
