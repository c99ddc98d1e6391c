// The follower's contract without a host, through its `fetch` option: what it retries, what it refuses at once,
// and how long it waits.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { DisplayNormalizer, follow } from "../dist/index.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const caseDir = join(root, "tests", "cases", "extra-parts");
const cut = JSON.parse(readFileSync(join(caseDir, "case.json"), "utf8")).cuts[0];
const checkpoint = readFileSync(join(caseDir, "cuts", `${cut}.display.json`), "utf8");
const position = (() => {
  const { attempt, sequence } = DisplayNormalizer.restore(checkpoint).position;
  return `${attempt}-${sequence}`;
})();

/** An event-stream response of `frames` (SSE text), then, if `fail`, a broken connection. */
function stream(frames, fail = false) {
  let sent = false;
  const body = new ReadableStream({
    // Pulled: an error raised with chunks still queued would discard them.
    pull(controller) {
      if (!sent) {
        sent = true;
        return controller.enqueue(new TextEncoder().encode(frames));
      }
      if (fail) controller.error(new TypeError("terminated"));
      else controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

const snapshot = `event: snapshot\nid: ${position}\ndata: ${checkpoint.trim()}\n\n`;
// Before these were mended, the follower retried such calls forever: each test is bounded.
const bounded = { timeout: 10_000 };
const end = `event: end\nid: ${position}\ndata: {"position":"${position}","reason":"complete"}\n\n`;

test("a URL that cannot be parsed is refused at once, not retried forever", bounded, () => {
  assert.throws(() => follow("/v1/runs/r/observed"), (error) => error instanceof TypeError && /absolute/.test(error.message));
});

test("an answer that is not an event stream is a FollowError, not a stream that keeps ending", bounded, async () => {
  const fetch = async () => new Response('{"status":"ok"}', { headers: { "content-type": "application/json" } });
  const follower = follow("http://host.invalid/healthz", { fetch, retryMs: 1 });
  await assert.rejects(follower.done, (error) => error.name === "FollowError" && /not an event stream/.test(error.message));
});

test("a connection that delivered frames and then broke starts the delays again", bounded, async () => {
  const answers = [
    () => Promise.reject(new TypeError("fetch failed")),
    () => Promise.reject(new TypeError("fetch failed")),
    () => Promise.resolve(stream(snapshot, true)),
    () => Promise.reject(new TypeError("fetch failed")),
    () => Promise.resolve(stream(snapshot + end)),
  ];
  const delays = [];
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: () => answers.shift()(),
    retryMs: 5,
    onRetry: (_, delay) => delays.push(delay),
  });
  await follower.done;
  // The third connection worked for a while: the wait after it is the first delay again, not the fourth.
  assert.deepEqual(delays, [5, 10, 5, 10]);
});

test("a resume position the host refuses (the run deleted and ingested again) brings a new snapshot", bounded, async () => {
  const asked = [];
  const answers = [
    () => stream(snapshot),
    () => new Response('{"error":{"code":"position","message":"0-37 is beyond the run\'s committed position"}}', { status: 400 }),
    () => stream(snapshot + end),
  ];
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async (_, init) => {
      asked.push(init.headers["Last-Event-ID"] ?? null);
      return answers.shift()();
    },
    retryMs: 1,
  });
  const display = await follower.done;
  assert.deepEqual(asked, [null, position, null]);
  assert.equal(`${display.position.attempt}-${display.position.sequence}`, position);
});

test("a 400 that is not about the resume position is a FollowError, not a new snapshot", bounded, async () => {
  const answers = [() => stream(snapshot), () => new Response('{"error":{"code":"query"}}', { status: 400 })];
  const follower = follow("http://host.invalid/v1/runs/r/observed", { fetch: async () => answers.shift()(), retryMs: 1 });
  await assert.rejects(follower.done, (error) => error.name === "FollowError" && error.status === 400);
});
