#!/usr/bin/env node
// What one streamed message costs on the wire and on disk, per delta, as a live Harness host posts it: one text
// message of N deltas, one source line per POST, to a fresh `a13n-stream serve` (SQLite), with one subscriber on
// each of `/events`, `/observed` and `/display`. Reports each stream's bytes and bytes per delta, `/observed` over
// `/events`, and the bytes the host process wrote to disk (`/proc/<pid>/io` write_bytes: database, WAL and
// checkpoints) per one-line commit, over the deltas alone.
//
//   node bench/wire_bytes.mjs [--deltas 1000,3000,10000] [--bin target/release/a13n-stream]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    deltas: { type: "string", default: "1000,3000,10000" },
    bin: { type: "string", default: "target/release/a13n-stream" },
  },
});

function serve(bin, db) {
  const child = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--db", db], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve({ child, address: match[1] });
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

function writtenBytes(pid) {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  return Number(/write_bytes: (\d+)/.exec(io)[1]);
}

/** Count a stream's bytes until it ends. */
async function count(url) {
  const response = await fetch(url, { headers: { Accept: "text/event-stream" } });
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  return bytes;
}

function lines(deltas) {
  const run = "run-wire";
  let sequence = 0;
  const at = () => new Date(Date.UTC(2026, 10, 29, 12, 0, 0) + sequence).toISOString().replace("Z", "+00:00");
  const line = (body) => JSON.stringify({ thread_id: "thread-wire", run_id: run, sequence: sequence++, occurred_at: at(), ...body });
  const text = [];
  const out = [
    line({ event: { schema_version: "1", kind: "lifecycle", payload: { type: "run_started" } } }),
    line({ event: { schema_version: "1", kind: "lifecycle", payload: { type: "model_request_started", request_id: "r1", request_index: 0, message_count: 1 } } }),
    line({ event: { index: 0, part: { content: "", id: null, provider_name: null, provider_details: null, citations: null, part_kind: "text" }, previous_part_kind: null, event_kind: "part_start" } }),
  ];
  const head = out.length;
  for (let index = 0; index < deltas; index++) {
    const delta = `w${index % 10}rd `;
    text.push(delta);
    out.push(line({ event: { index: 0, delta: { content_delta: delta, provider_name: null, provider_details: null, citations_delta: null, part_delta_kind: "text" }, event_kind: "part_delta" } }));
  }
  const whole = text.join("");
  out.push(line({ event: { index: 0, part: { content: whole, id: null, provider_name: null, provider_details: null, citations: null, part_kind: "text" }, next_part_kind: null, event_kind: "part_end" } }));
  out.push(line({ result: { status: "completed", output: whole, usage: { input_tokens: 1, output_tokens: deltas, cache_read_tokens: 0, cache_write_tokens: 0, details: {} } } }));
  return { run, lines: out, head };
}

async function measure(bin, deltas) {
  const db = join(mkdtempSync(join(tmpdir(), "a13n-wire-")), "host.db");
  const { child, address } = await serve(bin, db);
  const { run, lines: source, head } = lines(deltas);
  const streams = ["events", "observed", "display"].map((route) => count(`${address}/v1/runs/${run}/${route}`));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const post = async (offset) => {
    const response = await fetch(`${address}/v1/runs/${run}/source?offset=${offset}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-ndjson" },
      body: source[offset] + "\n",
    });
    if (response.status !== 200) throw new Error(`POST ${offset}: ${response.status} ${await response.text()}`);
  };
  for (let offset = 0; offset < head; offset++) await post(offset);
  const before = writtenBytes(child.pid);
  for (let offset = head; offset < head + deltas; offset++) await post(offset);
  const disk = writtenBytes(child.pid) - before;
  for (let offset = head + deltas; offset < source.length; offset++) await post(offset);
  const [events, observed, display] = await Promise.all(streams);
  child.kill("SIGTERM");
  return { deltas, events, observed, display, disk };
}

const kb = (bytes) => (bytes / 1024).toFixed(2);
console.log("| deltas | /events | /observed | /display | /observed ÷ /events | /observed per delta | /display per delta | disk per one-line commit |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const deltas of values.deltas.split(",").map(Number)) {
  const r = await measure(values.bin, deltas);
  console.log(
    `| ${deltas} | ${kb(r.events)} KiB | ${kb(r.observed)} KiB | ${kb(r.display)} KiB | ${(r.observed / r.events).toFixed(2)}x | ` +
      `${(r.observed / deltas).toFixed(0)} B | ${(r.display / deltas).toFixed(0)} B | ${kb(r.disk / deltas)} KiB |`,
  );
}
