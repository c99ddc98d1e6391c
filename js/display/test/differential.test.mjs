// Differential: the package against the Rust fold (`a13n-stream fold`, itself exact against the reference) on
// generated streams. At each cut K the Rust fold's own checkpoint is restored, the Rust fold's entries for lines
// K.. applied, and the result must equal the Rust fold's final checkpoint. The crafted AG-UI stream puts values at
// the size limits (observation bytes, field characters), in non-ASCII and astral text, floats in Python's repr,
// fragmented CUSTOM events with lost frames, streamed tool arguments, memory evidence and subagent scopes.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { DisplayNormalizer } from "../dist/index.js";
import { craftedStream } from "./crafted.mjs";
import { binary, root, rust } from "./cli.mjs";

const scratch = mkdtempSync(join(tmpdir(), "a13n-display-"));

function withoutObserver(snapshot) {
  const { observer, ...continuation } = snapshot.continuation;
  return JSON.stringify({ items: snapshot.items, continuation });
}

/** Compare at `cutCount` cuts (plus the first and the last line) of the stream in `input`, folded with `flags`. */
function differential(input, flags, cutCount) {
  const observedPath = `${input}.observed.jsonl`;
  const final = JSON.parse(rust(["fold", ...flags, "--observed", observedPath, input]));
  const lines = readFileSync(observedPath, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).observed ?? []);
  const total = lines.length;
  // A source fold takes its run from its first line: before one, its checkpoint is of no run yet.
  const cuts = new Set([flags.includes("--agui") ? 0 : 1, 1, total]);
  for (let index = 1; index <= cutCount; index++) cuts.add(Math.floor((total * index) / (cutCount + 1)));
  const retainContent = flags.includes("--retain-content");
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const checkpoint = rust(["fold", ...flags, "--stop", String(cut), input]);
    const display = DisplayNormalizer.restore(checkpoint, { retainContent, clock: () => 0 });
    for (const entries of lines.slice(cut)) display.apply(entries);
    assert.equal(withoutObserver(display.export()), withoutObserver(final), `${input} ${flags.join(" ")} from cut ${cut}`);
  }
  return total;
}

test("the Rust CLI is built", () => {
  assert.ok(binary, "no a13n-stream binary: run `cargo build --release -p a13n-stream` or set A13N_STREAM_BIN");
});

for (const kind of ["text", "short", "tools", "subagents"]) {
  test(`generated ${kind} stream equals the Rust fold at every cut`, () => {
    assert.ok(binary, "no a13n-stream binary");
    const input = join(scratch, `${kind}.jsonl`);
    writeFileSync(input, rust(["bench", "--emit", kind, "600"]));
    assert.ok(differential(input, [], 12) > 100);
    assert.ok(differential(input, ["--retain-content"], 4) > 100);
  });
}

for (const mode of [[], ["--retain-content"], ["--full-content"]]) {
  test(`crafted AG-UI stream at the limits equals the Rust fold (${mode.join(" ") || "bounded"})`, () => {
    assert.ok(binary, "no a13n-stream binary");
    const input = join(scratch, `crafted${mode.join("")}.jsonl`);
    writeFileSync(input, craftedStream(7).map((event) => JSON.stringify(event)).join("\n") + "\n");
    assert.ok(differential(input, ["--agui", "--run-id", "run-crafted", ...mode], mode.length === 0 ? 20 : 6) > 100);
  });
}

test("a checkpoint's date-times in other ISO 8601 spellings are written back as the Rust fold writes them", () => {
  // Found by a new user's trial: the package kept a time as written (an offset, no zone, a comma, no seconds,
  // seven digits of fraction), where the host's reader writes it in UTC, to the microsecond, with `Z`.
  assert.ok(binary, "no a13n-stream binary");
  const input = join(root, "examples", "streams", "tools.jsonl");
  const base = JSON.parse(rust(["fold", "--stop", "20", input]));
  const spellings = [
    "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00", "2026-01-01T00:00:00,5Z", "2026-01-01T00:00Z",
    "2026-01-01 00:00:00.1234567Z", "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.120Z",
    "2026-01-01t00:00:00z", "2026-01-01T00:00:00-00:30:15", "2026-03-01T00:30:00+01:00", "0001-01-01T12:00:00+11:59",
  ];
  for (const spelling of spellings) {
    const checkpoint = structuredClone(base);
    checkpoint.items[0].started_at = spelling;
    const path = join(scratch, "spelled.json");
    writeFileSync(path, JSON.stringify(checkpoint));
    const cli = JSON.parse(rust(["fold", "--agui", "--restore", path, "--start", "0", "/dev/null"]));
    const ours = DisplayNormalizer.restore(JSON.stringify(checkpoint), { clock: () => 0 }).export();
    assert.equal(ours.items[0].started_at, cli.items[0].started_at, spelling);
    assert.equal(withoutObserver(ours), withoutObserver(cli), spelling);
  }
});
