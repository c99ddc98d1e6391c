// What applying a long message costs in the package, against the CLI folding the same stream: one message of
// `chars` characters in 10-character deltas (past the field bound of 262,144 from 300k on), tool arguments of
// `chars` characters kept whole (`--retain-content`), and one snapshot frame of `chars` characters read in 64 KiB
// chunks. Each figure should grow with `chars` in proportion, as the CLI's does.
//
//   npm run build && node bench/cost.mjs [chars...]      (default: 300000 1200000; needs target/release/a13n-stream)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { DisplayNormalizer } from "../dist/index.js";
import { frames } from "../dist/follow.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const binary = process.env.A13N_STREAM_BIN ?? join(root, "target", "release", "a13n-stream");
const scratch = mkdtempSync(join(tmpdir(), "a13n-display-bench-"));
const sizes = process.argv.slice(2).map(Number);

function timed(work) {
  const start = performance.now();
  work();
  return performance.now() - start;
}

/** The CLI's time and the package's for the stream `lines`. */
function fold(name, lines, flags, retainContent, cut = 0) {
  const input = join(scratch, `${name}.jsonl`);
  writeFileSync(input, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  const observed = `${input}.observed`;
  const cli = timed(() => execFileSync(binary, ["fold", ...flags, "--observed", observed, input], { stdio: ["ignore", "ignore", "inherit"] }));
  const checkpoint = execFileSync(binary, ["fold", ...flags, "--stop", String(cut), input], { encoding: "utf8", maxBuffer: 1 << 30 });
  const entries = readFileSync(observed, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).observed);
  const display = DisplayNormalizer.restore(checkpoint, { retainContent, clock: () => 0 });
  const ours = timed(() => entries.slice(cut).forEach((entry) => display.apply(entry)));
  return `CLI ${cli.toFixed(0)} ms, package ${ours.toFixed(0)} ms`;
}

function text(chars) {
  const deltas = Array.from({ length: chars / 10 }, (_, index) => ({
    type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "abcdefghij", timestamp: 1001 + index,
  }));
  const lines = [{ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant", timestamp: 1000 }, ...deltas];
  return fold(`text-${chars}`, lines, ["--agui", "--run-id", "r"], false);
}

function args(chars) {
  const source = readFileSync(join(root, "examples", "streams", "tools.jsonl"), "utf8").split("\n").filter(Boolean);
  const head = source.slice(0, 6).map((line) => JSON.parse(line));
  const delta = JSON.parse(source[6]);
  const deltas = Array.from({ length: chars / 10 }, (_, index) => {
    const line = structuredClone(delta);
    line.sequence = 6 + index;
    line.event.delta.args_delta = "abcdefghij";
    return line;
  });
  return fold(`args-${chars}`, [...head, ...deltas], ["--retain-content"], true, 1);
}

async function frame(chars) {
  const bytes = new TextEncoder().encode(`event: snapshot\nid: 0-1\ndata: ${"z".repeat(chars)}\n\n`);
  let at = 0;
  const body = new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 65536));
      at += 65536;
    },
  });
  const start = performance.now();
  for await (const _ of frames(body)) void _;
  return `package ${(performance.now() - start).toFixed(0)} ms`;
}

for (const chars of sizes.length > 0 ? sizes : [300_000, 1_200_000]) {
  console.log(`${chars} characters: text ${text(chars)}; arguments kept whole ${args(chars)}; one frame ${await frame(chars * 10)}`);
}
