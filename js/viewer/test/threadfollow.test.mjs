// The thread follower (`followThread`, the compiled module the binary embeds) against a scripted
// `/v1/threads/{thread_id}/observed`: three corpus runs, run after run; a frame of the second run lost on the way
// (a gap) must bring a reconnection from the first run's end, which sends the second run again from its snapshot;
// a connection that ends is resumed with the last id received. Each run's display must end as the recorded one.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { followThread } from "../../../crates/a13n-stream-server/src/viewer/assets/viewer/src/threadfollow.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const corpus = process.env.A13N_CONFORMANCE
  ? join(process.env.A13N_CONFORMANCE, "cases")
  : join(root, "..", "shared", "conformance", "cases");

function load(name) {
  const dir = join(corpus, name);
  assert.ok(existsSync(dir), `no corpus case at ${dir}`);
  const display = JSON.parse(readFileSync(join(dir, "display.json"), "utf8"));
  // A cut after N source lines: its checkpoint, then the entries of lines N and on.
  const cuts = readdirSync(join(dir, "cuts")).map((file) => /^(\d+)\.display\.json$/.exec(file)?.[1]).filter(Boolean).map(Number).sort((x, y) => x - y);
  const lines = cuts[1];
  const cut = JSON.parse(readFileSync(join(dir, "cuts", `${lines}.display.json`), "utf8"));
  const observed = readFileSync(join(dir, "observed.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).observed);
  return { run: display.continuation.run_id, display, cut, lines, observed };
}

const at = (position) => `${position.attempt}-${position.sequence}`;
const frame = (event, id, data) => `event: ${event}\nid: ${id}\ndata: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

/** A run's frames: its snapshot (a cut, or its whole display), its entries after the cut, its end. */
function runFrames({ run, display, cut, lines, observed }, { fromCut, lose = -1 }) {
  const out = [];
  if (!fromCut) {
    out.push(frame("snapshot", `${run}/${at(display.continuation.position)}`, display));
  } else {
    out.push(frame("snapshot", `${run}/${at(cut.continuation.position)}`, cut));
    let sent = 0;
    for (const entries of observed.slice(lines)) {
      if (entries.length === 0) continue;
      const last = entries[entries.length - 1].sequence;
      sent += 1;
      if (sent === lose) continue;
      out.push(frame("observed", `${run}/0-${last}`, { position: `0-${last}`, observed: entries }));
    }
  }
  const end = display.continuation.position;
  out.push(frame("end", `${run}/${at(end)}`, { position: at(end), reason: "complete" }));
  return out;
}

/** A response whose body is `chunks`, then stays open (until aborted) unless `close`. */
function stream(chunks, signal, close) {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (close) controller.close();
      else signal.addEventListener("abort", () => controller.error(signal.reason), { once: true });
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
}

test("a thread's runs in order; a gap resumes from the previous run's end; a lost connection from the last id", async () => {
  const cases = ["real-chat", "real-tools", "real-tools-retry"].map(load);
  const [a, b, c] = cases;
  const asked = [];
  let resolveIdle;
  const idle = new Promise((resolve) => (resolveIdle = resolve));
  const fake = async (url, init) => {
    const last = init.headers["Last-Event-ID"] ?? null;
    asked.push(last);
    switch (asked.length) {
      case 1:
        // Run A whole; run B from a cut with its third entries frame lost: the follower must drop B and resume.
        return stream([...runFrames(a, {}), ...runFrames(b, { fromCut: true, lose: 3 })], init.signal, false);
      case 2:
        // From A's end: B again, from its cut with nothing lost, then C; the connection ends.
        return stream([...runFrames(b, { fromCut: true }), ...runFrames(c, {})], init.signal, true);
      default:
        resolveIdle();
        return stream([], init.signal, false);
    }
  };
  const retries = [];
  const follower = followThread("http://host.invalid/v1/threads/T/observed", { fetch: fake, retryMs: 10, onRetry: (error) => retries.push(error) });
  const deadline = setTimeout(() => follower.stop(), 30_000);
  await idle;
  clearTimeout(deadline);
  follower.stop();
  await assert.rejects(follower.done);

  assert.equal(asked[0], null, "the first connection holds nothing");
  assert.equal(asked[1], `${a.run}/${at(a.display.continuation.position)}`, "a gap in run B resumes from run A's end");
  assert.equal(asked[2], `${c.run}/${at(c.display.continuation.position)}`, "an ended connection resumes from the last id");
  assert.ok(retries.length >= 2);
  assert.deepEqual(follower.runs.map((run) => run.runId), cases.map((one) => one.run), "the runs in order, each once");
  for (const [index, run] of follower.runs.entries()) {
    assert.equal(run.ended, "complete");
    const expected = cases[index].display;
    const got = run.display.export();
    assert.deepEqual(got.items, expected.items, `${run.runId}: the recorded display`);
    assert.equal(run.endId, `${run.runId}/${at(expected.continuation.position)}`);
  }
});

test("the runs are folded with the host's content policy, and sent again when it changes", async () => {
  const a = load("real-chat");
  const policies = ["true", "true", "false", "false"];
  const asked = [];
  const connected = [];
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  const fake = async (url, init) => {
    asked.push(init.headers["Last-Event-ID"] ?? null);
    const policy = policies[asked.length - 1];
    if (policy === undefined) {
      resolveDone();
      return stream([], init.signal, false);
    }
    const response = stream(runFrames(a, {}), init.signal, true);
    response.headers.set("a13n-retain-content", policy);
    return response;
  };
  const seen = [];
  const follower = followThread("http://host.invalid/v1/threads/T/observed", {
    fetch: fake,
    retryMs: 1,
    onConnect: () => connected.push(asked.length),
    onChange: (runs) => seen.push(runs.map((run) => run.display.retainContent)),
  });
  const deadline = setTimeout(() => follower.stop(), 30_000);
  await done;
  clearTimeout(deadline);
  follower.stop();
  await assert.rejects(follower.done);
  assert.deepEqual(seen[0], [true], "the first host keeps whole values");
  assert.deepEqual(seen.at(-1), [false], "after it restarted bounding them, the run was folded again that way");
  assert.equal(asked[3], null, "the run was asked for again from the thread's start");
  assert.deepEqual(connected.slice(0, 2), [1, 2]);
});

test("a run id ingested again after a delete is a new run after the others; the runs before stay", async () => {
  // Regression (a new user's trial): the second snapshot of run A dropped every run after A's first place.
  const [a, b] = ["real-chat", "real-tools"].map(load);
  const deleted = `event: end\ndata: ${JSON.stringify({ position: "0-0", reason: "deleted" })}\n\n`;
  let calls = 0;
  const fake = async (url, init) => {
    calls += 1;
    if (calls > 1) return stream([], init.signal, false);
    // A and B whole; A ingested again (a new run, listed last) and deleted while followed; A once more, whole.
    const again = runFrames(a, { fromCut: true }).slice(0, -1);
    return stream([...runFrames(a, {}), ...runFrames(b, {}), ...again, deleted, ...runFrames(a, {})], init.signal, false);
  };
  const want = `${a.run}:complete ${b.run}:complete ${a.run}:deleted ${a.run}:complete`;
  let last = "";
  const follower = followThread("http://host.invalid/v1/threads/T/observed", {
    fetch: fake,
    retryMs: 10,
    onChange: (runs) => (last = runs.map((run) => `${run.runId}:${run.ended}`).join(" ")),
  });
  for (let waited = 0; last !== want && waited < 300; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  follower.stop();
  await assert.rejects(follower.done);
  assert.equal(last, want);
  assert.deepEqual(follower.runs.at(-1).display.export().items, a.display.items, "the last run's display is the recorded one");
  assert.equal(calls, 1, "one connection: nothing was sent again");
});
