// What a delta costs: applying it and reading its frame must cost what it adds, not what its message already holds
// (a text past the field bound, tool arguments kept whole, one large frame read in many chunks). Counted, not
// timed: the work is observed through the built-ins it goes through (a character read, a deep copy, a line-break
// search), each counted while the later deltas are applied. Timings are in `bench/cost.mjs`.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { DisplayNormalizer, MAX_FIELD_CHARS } from "../dist/index.js";
import { frames } from "../dist/follow.js";
import { binary, root, rust } from "./cli.mjs";

const scratch = mkdtempSync(join(tmpdir(), "a13n-display-cost-"));

/** Fold `lines` (a file's lines) with the CLI: its checkpoint after `cut` lines, its entries, its final export. */
function folded(name, lines, flags, cut) {
  const input = join(scratch, `${name}.jsonl`);
  writeFileSync(input, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  const observed = `${input}.observed`;
  const final = JSON.parse(rust(["fold", ...flags, "--observed", observed, input]));
  const entries = readFileSync(observed, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).observed);
  return { checkpoint: rust(["fold", ...flags, "--stop", String(cut), input]), entries, final };
}

/** Run `work` with `owner[name]` (a function) counting: what `measure` says of each call, summed. */
function counting(owner, name, measure, work) {
  const original = owner[name];
  let total = 0;
  owner[name] = function (...args) {
    total += measure(this, args);
    return original.apply(this, args);
  };
  try {
    work();
  } finally {
    owner[name] = original;
  }
  return total;
}

const items = (snapshot) => JSON.stringify(snapshot.items);

test("a text past the field bound costs each later delta its own characters", () => {
  assert.ok(binary, "no a13n-stream binary");
  const big = Array.from({ length: 30 }, (_, index) => ({
    type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "a".repeat(10_000), timestamp: 1001 + index,
  }));
  const small = Array.from({ length: 20 }, (_, index) => ({
    type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "b".repeat(10), timestamp: 2000 + index,
  }));
  const lines = [
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant", timestamp: 1000 },
    ...big,
    ...small,
    { type: "TEXT_MESSAGE_END", messageId: "m1", timestamp: 3000 },
  ];
  const { checkpoint, entries, final } = folded("long-text", lines, ["--agui", "--run-id", "r"], 0);
  const display = DisplayNormalizer.restore(checkpoint, { clock: () => 0 });
  for (const entry of entries.slice(0, 1 + big.length)) display.apply(entry);
  const read = counting(String.prototype, "charCodeAt", () => 1, () => {
    for (const entry of entries.slice(1 + big.length, 1 + big.length + small.length)) display.apply(entry);
  });
  assert.ok(read < 20 * 1000, `${read} characters read for 20 deltas of 10 (the text holds ${MAX_FIELD_CHARS})`);
  for (const entry of entries.slice(1 + big.length + small.length)) display.apply(entry);
  assert.equal(items(display.export()), items(final));
});

test("a text below the field bound is not read whole for each delta", () => {
  // Found by a new user's trial: each delta looked at the last character of the text before it (whether a
  // surrogate pair was split between them), which made the engine flatten the whole growing text: 176 ms a
  // thousand deltas at 160k characters, 10 ms at 10k.
  assert.ok(binary, "no a13n-stream binary");
  const deltas = (letter, count, size, from) => Array.from({ length: count }, (_, index) => ({
    type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: letter.repeat(size), timestamp: from + index,
  }));
  const lines = [
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant", timestamp: 1000 },
    ...deltas("a", 2000, 100, 1001),
    ...deltas("b", 20, 10, 5000),
    { type: "TEXT_MESSAGE_END", messageId: "m1", timestamp: 6000 },
  ];
  const { checkpoint, entries, final } = folded("below-bound", lines, ["--agui", "--run-id", "r"], 0);
  const display = DisplayNormalizer.restore(checkpoint, { clock: () => 0 });
  for (const entry of entries.slice(0, 2001)) display.apply(entry);
  const long = counting(String.prototype, "charCodeAt", (text) => (text.length > 1000 ? 1 : 0), () => {
    for (const entry of entries.slice(2001, 2021)) display.apply(entry);
  });
  assert.equal(long, 0, `the 200,000-character text was read ${long} times for 20 deltas`);
  for (const entry of entries.slice(2021)) display.apply(entry);
  assert.equal(items(display.export()), items(final));
});

test("tool arguments kept whole are not copied whole for each delta", () => {
  assert.ok(binary, "no a13n-stream binary");
  const source = readFileSync(join(root, "examples", "streams", "tools.jsonl"), "utf8").split("\n").filter(Boolean);
  const head = source.slice(0, 6).map((line) => JSON.parse(line));
  const delta = JSON.parse(source[6]);
  const deltas = Array.from({ length: 40 }, (_, index) => {
    const line = structuredClone(delta);
    line.sequence = 6 + index;
    line.event.delta.args_delta = "x".repeat(1000);
    return line;
  });
  const flags = ["--retain-content"];
  const { checkpoint, entries, final } = folded("long-args", [...head, ...deltas], flags, head.length);
  const display = DisplayNormalizer.restore(checkpoint, { retainContent: true, clock: () => 0 });
  for (const entry of entries.slice(0, 2)) display.apply(entry);
  const copied = counting(globalThis, "structuredClone", (_, [value]) => JSON.stringify(value ?? null).length, () => {
    for (const entry of entries.slice(2)) display.apply(entry);
  });
  assert.ok(copied < 40 * 1000, `${copied} bytes deep-copied for 38 deltas of 1000 characters`);
  assert.equal(items(display.export()), items(final));
});

/** The frames `frames()` reads from `text` delivered in `chunks` pieces (or split at the given offsets). */
async function read(text, cuts) {
  const bytes = new TextEncoder().encode(text);
  const pieces = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.slice(from, cut));
    from = cut;
  }
  const body = new ReadableStream({
    pull(controller) {
      const piece = pieces.shift();
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
  const out = [];
  for await (const frame of frames(body)) out.push(frame);
  return out;
}

test("one large frame read in many chunks costs its size once", async () => {
  const data = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, index) => ({ id: `item-${index}`, text: "y".repeat(40) })) });
  const text = `event: snapshot\nid: 0-1\ndata: ${data}\n\n`;
  const cuts = Array.from({ length: Math.floor(text.length / 4096) }, (_, index) => (index + 1) * 4096);
  let got;
  const searched = await (async () => {
    const original = RegExp.prototype.exec;
    let total = 0;
    RegExp.prototype.exec = function (input) {
      total += String(input).length;
      return original.call(this, input);
    };
    try {
      got = await read(text, cuts);
    } finally {
      RegExp.prototype.exec = original;
    }
    return total;
  })();
  assert.deepEqual(got, [{ event: "snapshot", id: "0-1", data }]);
  assert.ok(searched < 4 * text.length, `${searched} characters searched for a frame of ${text.length}`);
});

test("line breaks split across chunks (CR, LF, CRLF) read as in one piece", async () => {
  const text = "event: a\r\nid: 1\r\ndata: x\r\ndata: y\r\n\r\n: note\rdata: z\r\rid: 2\ndata: w\n\nevent: b\r\ndata: v\r\n\r\n";
  const whole = await read(text, []);
  assert.deepEqual(whole, [
    { event: "a", id: "1", data: "x\ny" },
    { event: "message", id: "1", data: "z" },
    { event: "message", id: "2", data: "w" },
    { event: "b", id: "2", data: "v" },
  ]);
  for (let at = 1; at < text.length; at++) {
    assert.deepEqual(await read(text, [at]), whole, `split at ${at}`);
    // An empty chunk between two pieces (a CR in one, its LF in the next) changes nothing.
    assert.deepEqual(await read(text, [at, at]), whole, `split at ${at}, an empty chunk there`);
    for (let second = at + 1; second < Math.min(text.length, at + 4); second++) {
      assert.deepEqual(await read(text, [at, second]), whole, `split at ${at} and ${second}`);
    }
  }
});

test("a text grown by deltas that split surrogate pairs, around the bound, is the whole text's head", async () => {
  // From the review of the remembered counts: a pair split between the text and a delta is one code point.
  const { Fold } = await import("../dist/fold.js");
  const { readCheckpoint } = await import("../dist/checkpoint.js");
  const empty = JSON.stringify({
    items: [],
    continuation: { run_id: "r", position: { attempt: 0, sequence: 0 }, next_ordinal: 1, full_content: false, observer: null },
  });
  const head = (text) => {
    let units = 0;
    for (let taken = 0; taken < MAX_FIELD_CHARS && units < text.length; taken++) {
      const unit = text.charCodeAt(units);
      const next = text.charCodeAt(units + 1);
      units += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    }
    return text.slice(0, units);
  };
  const grown = (deltas) => {
    const fold = new Fold(readCheckpoint(empty, false, () => 0).state);
    fold.state.sequence = 1;
    fold.event({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant", timestamp: 1 });
    deltas.forEach((delta, index) => {
      fold.state.sequence = index + 2;
      fold.event({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta, timestamp: 2 });
    });
    return [...fold.state.items.values()][0].content.text;
  };
  // Ten pairs split between deltas, then text up to just short of the bound, then more.
  const split = Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? "\ud83d" : "\ude00"));
  const deltas = [...split, "a".repeat(MAX_FIELD_CHARS - 15), "b".repeat(10), "c".repeat(10)];
  assert.ok(grown(deltas) === head(deltas.join("")), "ten split pairs, then past the bound");
  const pieces = ["a", "\ud83d", "\ude00", "\ud83d\ude00", "é"];
  for (let seed = 1; seed <= 100; seed++) {
    let state = seed;
    const random = (n) => ((state = (state * 1103515245 + 12345) & 0x7fffffff) % n);
    const fold = new Fold(readCheckpoint(empty, false, () => 0).state);
    fold.state.sequence = 1;
    fold.event({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant", timestamp: 1 });
    let whole = "";
    for (let step = 0; step < 40; step++) {
      let delta = "";
      for (let count = random(4); count > 0; count--) delta += pieces[random(pieces.length)];
      if (random(5) === 0) delta += "b".repeat(random(3) === 0 ? Math.max(0, MAX_FIELD_CHARS - whole.length - random(4)) : random(5));
      whole += delta;
      fold.state.sequence = step + 2;
      fold.event({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta, timestamp: 2 });
      const text = [...fold.state.items.values()][0].content.text;
      assert.ok(text === head(whole), `seed ${seed}, delta ${step}: ${text.length} units, the head has ${head(whole).length}`);
    }
  }
});
