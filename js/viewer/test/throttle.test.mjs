// The page's render throttle (throttle.ts) on a clock the test moves by hand: once a frame when rendering is quick,
// and, after a slow render, not before it has left the rest of the main thread to the reader.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Throttle } from "../../../crates/a13n-stream-server/src/viewer/assets/viewer/src/throttle.js";

/** A clock whose time moves only when the test (or a render's cost) moves it. */
function fakeClock() {
  const clock = {
    time: 0,
    timers: [],
    frames: [],
    now: () => clock.time,
    after: (ms, run) => clock.timers.push({ at: clock.time + ms, run }),
    frame: (run) => clock.frames.push(run),
    /** Move to `ms`, firing the timers due by then, then paint (each frame waiting then runs). */
    advance(ms) {
      clock.time = ms;
      for (const timer of clock.timers.filter((timer) => timer.at <= ms)) {
        clock.timers.splice(clock.timers.indexOf(timer), 1);
        timer.run();
      }
      const frames = clock.frames.splice(0);
      for (const frame of frames) frame();
    },
  };
  return clock;
}

test("a quick render runs at the next frame, once however often it is asked for", () => {
  const clock = fakeClock();
  const renders = [];
  const throttle = new Throttle(() => renders.push(clock.time), 0.25, clock);
  throttle.request();
  throttle.request();
  throttle.request();
  clock.advance(16);
  assert.deepEqual(renders, [16]);
  throttle.request();
  clock.advance(32);
  assert.deepEqual(renders, [16, 32]);
});

test("after a slow render the next waits three times as long: the page takes a quarter of the main thread", () => {
  const clock = fakeClock();
  const renders = [];
  const throttle = new Throttle(() => {
    renders.push(clock.time);
    clock.time += 100; // the render itself takes 100 ms
  }, 0.25, clock);
  throttle.request();
  clock.advance(0);
  assert.deepEqual(renders, [0]);
  throttle.request(); // at 100 ms, as the render ends
  clock.advance(200);
  assert.deepEqual(renders, [0], "not before 100 + 300 ms");
  clock.advance(400);
  assert.deepEqual(renders, [0, 400]);
  throttle.request();
  throttle.request();
  clock.advance(799);
  assert.deepEqual(renders, [0, 400]);
  clock.advance(800);
  assert.deepEqual(renders, [0, 400, 800], "asked twice, rendered once");
});
