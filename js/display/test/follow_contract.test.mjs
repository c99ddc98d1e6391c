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

test("a signal already aborted stops the follower before any request", bounded, async () => {
  let asked = 0;
  const controller = new AbortController();
  controller.abort(new Error("not wanted"));
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => {
      asked += 1;
      return stream(snapshot + end);
    },
    signal: controller.signal,
  });
  await assert.rejects(follower.done, /not wanted/);
  assert.equal(asked, 0);
});

test("an exception of the caller's onChange ends the following with it, and is not retried", bounded, async () => {
  let asked = 0;
  const retries = [];
  const mistake = new Error("the renderer failed");
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => {
      asked += 1;
      return stream(snapshot + end);
    },
    retryMs: 1,
    onChange: () => {
      throw mistake;
    },
    onRetry: (error) => retries.push(error),
  });
  await assert.rejects(follower.done, (error) => error === mistake);
  assert.equal(asked, 1);
  assert.deepEqual(retries, []);
});

test("onConnect says each connection is up, before any new frame", bounded, async () => {
  const events = [];
  const answers = [() => stream(snapshot, true), () => stream(end)];
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => answers.shift()(),
    retryMs: 1,
    onConnect: () => events.push("connect"),
    onChange: (_, change) => events.push(change.kind),
    onRetry: () => events.push("retry"),
  });
  await follower.done;
  assert.deepEqual(events, ["connect", "snapshot", "retry", "connect"]);
});

/** `stream`, its answer saying the host's content policy. */
function withPolicy(frames, retain) {
  const response = stream(frames);
  const headers = new Headers(response.headers);
  headers.set("a13n-retain-content", String(retain));
  return new Response(response.body, { headers });
}

test("the host's content policy is adopted, and a caller's that differs is refused", bounded, async () => {
  const adopted = follow("http://host.invalid/v1/runs/r/observed", { fetch: async () => withPolicy(snapshot + end, true) });
  assert.equal((await adopted.done).retainContent, true);
  const agreed = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => withPolicy(snapshot + end, false),
    retainContent: false,
  });
  assert.equal((await agreed.done).retainContent, false);
  const differing = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => withPolicy(snapshot + end, true),
    retainContent: false,
  });
  await assert.rejects(differing.done, (error) => error.name === "FollowError" && /keeps whole values/.test(error.message));
});

test("frames split anywhere, a long line over many chunks and a CRLF across two, read as written", bounded, async () => {
  const { frames } = await import("../dist/follow.js");
  const long = "x".repeat(20_000);
  const text = `event: a\r\nid: 1\r\ndata: ${long}\r\ndata: two\r\n\r\nevent: b\rdata: c\r\rdata: d\n\n`;
  const bytes = new TextEncoder().encode(text);
  for (const size of [1, 7, 4096, bytes.length]) {
    let at = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + size));
        at += size;
      },
    });
    const read = [];
    for await (const frame of frames(body)) read.push(frame);
    assert.deepEqual(read, [
      { event: "a", id: "1", data: `${long}\ntwo` },
      { event: "b", id: "1", data: "c" },
      { event: "message", id: "1", data: "d" },
    ], `chunks of ${size}`);
  }
});

test("a refused policy closes the host's stream, and a policy changed under a held display brings a new snapshot", bounded, async () => {
  let cancelled = 0;
  const counted = (frames, retain) => {
    const encoder = new TextEncoder();
    let sent = false;
    const body = new ReadableStream({
      pull(controller) {
        if (!sent) {
          sent = true;
          return controller.enqueue(encoder.encode(frames));
        }
        controller.close();
      },
      cancel() {
        cancelled += 1;
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream", "a13n-retain-content": String(retain) } });
  };
  const refused = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => counted(snapshot + end, true),
    retainContent: false,
  });
  await assert.rejects(refused.done, (error) => error.name === "FollowError");
  assert.equal(cancelled, 1, "the refused answer's stream was closed");

  const asked = [];
  const answers = [() => withPolicy(snapshot, false), () => counted("", true), () => withPolicy(snapshot + end, true)];
  const changed = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async (_, init) => {
      asked.push(init.headers["Last-Event-ID"] ?? null);
      return answers.shift()();
    },
    retryMs: 1,
  });
  const display = await changed.done;
  assert.deepEqual(asked, [null, position, null], "after the policy changed, a new snapshot was asked for");
  assert.equal(display.retainContent, true);
  assert.equal(cancelled, 2);
});

test("a stream of another route (no snapshot, only messages) is a FollowError, not a follower that waits forever", bounded, async () => {
  // Regression (a new user's trial): pointed at `/events`, the follower never called back nor ended.
  const fetch = async () => stream(`id: 0-1\ndata: {"type":"RUN_STARTED"}\n\n`);
  const follower = follow("http://host.invalid/v1/runs/r/events", { fetch, retryMs: 1 });
  await assert.rejects(follower.done, (error) => error.name === "FollowError" && /not a run's \/observed stream/.test(error.message));
});

test("a snapshot that is no display checkpoint is a FollowError, not retried for ever", bounded, async () => {
  // Regression (a new user's trial): pointed at `/display`, whose snapshot is no checkpoint, it retried every
  // `retryMs` for ever, because the frame counted as a working connection.
  let asked = 0;
  const follower = follow("http://host.invalid/v1/runs/r/display", {
    fetch: async () => {
      asked += 1;
      return stream(`event: snapshot\nid: 0-3\ndata: {"position":"0-3","complete":false,"items":[]}\n\n`);
    },
    retryMs: 1,
  });
  await assert.rejects(follower.done, (error) => error.name === "FollowError" && /no display checkpoint/.test(error.message));
  assert.equal(asked, 1);
});

test("a named frame the follower does not know is passed over", bounded, async () => {
  const follower = follow("http://host.invalid/v1/runs/r/observed", {
    fetch: async () => stream(`event: future\ndata: {}\n\n` + snapshot + end),
    retryMs: 1,
  });
  const display = await follower.done;
  assert.equal(`${display.position.attempt}-${display.position.sequence}`, position);
});
