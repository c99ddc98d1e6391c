// Values that name what JavaScript objects inherit (`constructor`, `toString`, `__proto__`) as scopes, event types
// and fragment identities, and timestamps that Python reads as integers (`true`, `false`), fold as the Rust fold
// folds them (itself exact against the reference): regressions from a new user's trial, where a subagent scope
// `constructor` made the export throw, `__proto__` lost its response group and a `constructor` event broke the fold.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { DisplayNormalizer } from "../dist/index.js";
import { binary, rust } from "./cli.mjs";

const scratch = mkdtempSync(join(tmpdir(), "a13n-display-names-"));

function events() {
  const out = [];
  let at = 1000;
  for (const scope of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
    out.push({ type: "CUSTOM", name: "a13n.harness.lifecycle", value: { event: { payload: { type: "model_request_started" } } }, timestamp: at++, subagentRunId: scope });
    out.push({ type: "TEXT_MESSAGE_START", messageId: `m-${scope}`, role: "assistant", timestamp: at++, subagentRunId: scope });
    out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: `m-${scope}`, delta: "hi", timestamp: at++, subagentRunId: scope });
    out.push({ type: "TEXT_MESSAGE_END", messageId: `m-${scope}`, timestamp: at++, subagentRunId: scope });
  }
  for (const type of ["constructor", "toString", "__proto__", "valueOf"]) out.push({ type, messageId: "x", timestamp: at++ });
  out.push({ type: "RUN_STARTED", threadId: "t", runId: "r1", timestamp: true });
  out.push({ type: "RUN_STARTED", threadId: "t", runId: "r2", timestamp: false });
  out.push({ type: "TEXT_MESSAGE_START", messageId: "late", role: "assistant", timestamp: true });
  return out;
}

test("inherited names and boolean timestamps fold as the Rust fold folds them, at every cut", () => {
  assert.ok(binary, "no a13n-stream binary");
  const input = join(scratch, "names.jsonl");
  writeFileSync(input, events().map((event) => JSON.stringify(event)).join("\n") + "\n");
  const flags = ["--agui", "--run-id", "r"];
  const observed = `${input}.observed`;
  const final = JSON.parse(rust(["fold", ...flags, "--observed", observed, input]));
  const lines = readFileSync(observed, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).observed);
  const items = (snapshot) => JSON.stringify(snapshot.items);
  const groups = (snapshot) => JSON.stringify(snapshot.continuation.response_groups);
  for (const cut of [0, 3, 9, lines.length - 2, lines.length]) {
    const display = DisplayNormalizer.restore(rust(["fold", ...flags, "--stop", String(cut), input]), { clock: () => 0 });
    for (const entries of lines.slice(cut)) display.apply(entries);
    const exported = display.export();
    assert.equal(items(exported), items(final), `from cut ${cut}`);
    assert.equal(groups(exported), groups(final), `from cut ${cut}`);
  }
  assert.ok(groups(final).includes('"__proto__"'), groups(final));
});
