// The follower against a real host (`a13n-stream serve`, the release binary): corpus runs ingested a few lines at
// a time while the client follows `/observed`, the host SIGKILLed and restarted on the same port half-way, and a
// frame dropped on the way (a gap: the client must take a new snapshot). The client's display must end equal to
// the host's snapshot and to the reference's recorded display.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { DisplayNormalizer, follow, frames } from "../dist/index.js";
import { binary, root } from "./cli.mjs";

const corpus = process.env.A13N_CONFORMANCE
  ? join(process.env.A13N_CONFORMANCE, "cases")
  : join(root, "..", "shared", "conformance", "cases");

/** Start `serve` on `listen`; resolves with the process and its address once it listens. */
function serve(db, listen = "127.0.0.1:0") {
  const child = spawn(binary, ["serve", "--listen", listen, "--db", db], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, address: match[1] });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
  });
}

function stopped(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** POST lines at `offset`, retrying while the host is down. */
async function post(address, run, offset, lines) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`${address()}/v1/runs/${run}/source?offset=${offset}`, {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: lines.join("\n") + "\n",
      });
      assert.equal(response.status, 200, await response.text());
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function withoutObserver(snapshot) {
  const { observer, ...continuation } = snapshot.continuation;
  return JSON.stringify({ items: snapshot.items, continuation });
}

/** A fetch whose first answer loses the `observed` frames `lose` picks (by frame text and count so far). */
function losingFetch(lose = (frame, count) => count === 2) {
  let first = true;
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!first || response.body === null) return response;
    first = false;
    let buffer = "";
    let observed = 0;
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const body = response.body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          buffer += decoder.decode(chunk, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const frame = buffer.slice(0, end + 2);
            buffer = buffer.slice(end + 2);
            if (frame.includes("event: observed") && lose(frame, ++observed)) continue;
            controller.enqueue(encoder.encode(frame));
          }
        },
      }),
    );
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

for (const name of ["real-tools", "real-subagent", "real-chat-thinking"]) {
  test(`${name}: a follower through a host restart and a lost frame ends at the host's display`, async () => {
    assert.ok(binary, "no a13n-stream binary: run `cargo build --release -p a13n-stream` or set A13N_STREAM_BIN");
    const dir = join(corpus, name);
    assert.ok(existsSync(dir), `no corpus case at ${dir}`);
    const lines = readFileSync(join(dir, "source.jsonl"), "utf8").split("\n").filter(Boolean);
    const run = JSON.parse(lines[0]).run_id;
    const db = join(mkdtempSync(join(tmpdir(), "a13n-follow-")), "host.db");
    let host = await serve(db);
    const port = new URL(host.address).port;
    const address = () => host.address;
    const changes = [];
    const retries = [];
    const follower = follow(`${host.address}/v1/runs/${run}/observed`, {
      fetch: losingFetch(),
      retryMs: 50,
      onChange: (_, change) => changes.push(change),
      onRetry: (error) => retries.push(error),
    });
    try {
      const batch = 4;
      for (let offset = 0; offset < lines.length; offset += batch) {
        if (offset >= lines.length / 2 && offset < lines.length / 2 + batch) {
          await stopped(host.child);
          host = await serve(db, `127.0.0.1:${port}`);
        }
        await post(address, run, offset, lines.slice(offset, offset + batch));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("the follower did not end")), 60_000));
      const display = await Promise.race([follower.done, timeout]);
      const snapshot = await (await fetch(`${host.address}/v1/runs/${run}/snapshot`)).json();
      assert.equal(withoutObserver(display.export()), withoutObserver(snapshot));
      const reference = JSON.parse(readFileSync(join(dir, "display.json"), "utf8"));
      assert.equal(withoutObserver(display.export()), withoutObserver(reference));
      assert.ok(changes.some((change) => change.kind === "observed"), "no observed frame was applied");
      assert.ok(changes.filter((change) => change.kind === "snapshot").length >= 2, "the lost frame did not bring a new snapshot");
      assert.ok(retries.some((error) => error?.kind === "gap"), "the lost frame was not seen as a gap");
    } finally {
      follower.stop();
      await stopped(host.child);
    }
  });
}

test("a follower that lost the frame with the run's terminal event takes a snapshot before it ends", async () => {
  assert.ok(binary, "no a13n-stream binary");
  const dir = join(corpus, "real-tools");
  const lines = readFileSync(join(dir, "source.jsonl"), "utf8").split("\n").filter(Boolean);
  const run = JSON.parse(lines[0]).run_id;
  const host = await serve(join(mkdtempSync(join(tmpdir(), "a13n-follow-")), "host.db"));
  const retries = [];
  const follower = follow(`${host.address}/v1/runs/${run}/observed`, {
    fetch: losingFetch((frame) => frame.includes('"type":"RUN_FINISHED"')),
    retryMs: 50,
    onRetry: (error) => retries.push(error),
  });
  try {
    for (let offset = 0; offset < lines.length; offset += 10) {
      await post(() => host.address, run, offset, lines.slice(offset, offset + 10));
    }
    const display = await follower.done;
    const reference = JSON.parse(readFileSync(join(dir, "display.json"), "utf8"));
    assert.equal(withoutObserver(display.export()), withoutObserver(reference));
    assert.ok(retries.some((error) => /the run ended at/.test(String(error?.message))), "the short display was not noticed");
  } finally {
    follower.stop();
    await stopped(host.child);
  }
});

test("a follower of a run that is deleted stops with a FollowError of status 410", async () => {
  assert.ok(binary, "no a13n-stream binary");
  const lines = readFileSync(join(corpus, "real-tools", "source.jsonl"), "utf8").split("\n").filter(Boolean);
  const run = JSON.parse(lines[0]).run_id;
  const host = await serve(join(mkdtempSync(join(tmpdir(), "a13n-follow-")), "host.db"));
  const changes = [];
  const follower = follow(`${host.address}/v1/runs/${run}/observed`, { retryMs: 50, onChange: (_, change) => changes.push(change) });
  try {
    await post(() => host.address, run, 0, lines.slice(0, 10));
    const deadline = Date.now() + 20_000;
    while (!changes.some((change) => change.kind === "observed") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal((await fetch(`${host.address}/v1/runs/${run}`, { method: "DELETE" })).status, 204);
    await assert.rejects(follower.done, (error) => error.name === "FollowError" && error.status === 410);
  } finally {
    follower.stop();
    await stopped(host.child);
  }
});

test("a follower goes on from a display the caller restored from its own checkpoint, with no snapshot", async () => {
  // Asked by a trial: a page that saved a checkpoint (in localStorage, say) could not resume from it.
  assert.ok(binary, "no a13n-stream binary");
  const dir = join(corpus, "real-tools");
  const lines = readFileSync(join(dir, "source.jsonl"), "utf8").split("\n").filter(Boolean);
  const run = JSON.parse(lines[0]).run_id;
  const host = await serve(join(mkdtempSync(join(tmpdir(), "a13n-follow-")), "host.db"));
  const half = Math.floor(lines.length / 2);
  await post(() => host.address, run, 0, lines.slice(0, half));
  const saved = await (await fetch(`${host.address}/v1/runs/${run}/snapshot`)).text();
  const from = DisplayNormalizer.restore(saved);
  const kinds = [];
  const follower = follow(`${host.address}/v1/runs/${run}/observed`, { from, onChange: (_, change) => kinds.push(change.kind) });
  try {
    assert.equal(follower.display, from);
    await post(() => host.address, run, half, lines.slice(half));
    const display = await follower.done;
    assert.equal(display, from, "the caller's display was kept");
    const reference = JSON.parse(readFileSync(join(dir, "display.json"), "utf8"));
    assert.equal(withoutObserver(display.export()), withoutObserver(reference));
    assert.ok(kinds.length > 0 && kinds.every((kind) => kind === "observed"), `changes: ${kinds}`);
  } finally {
    follower.stop();
    await stopped(host.child);
  }
});

test("frames() is the package's reader of an event stream, exported for the host's other streams", async () => {
  const text = "event: observed\nid: 0-1\ndata: {\"a\":1}\n\n: comment\ndata: x\ndata: y\n\n";
  const body = new Response(text).body;
  const read = [];
  for await (const frame of frames(body)) read.push(frame);
  assert.deepEqual(read, [
    { event: "observed", id: "0-1", data: '{"a":1}' },
    { event: "message", id: "0-1", data: "x\ny" },
  ]);
});
