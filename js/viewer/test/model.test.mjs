// The viewer's model (which items are conversation, which fold away, where subagents go, the header's figures) on
// every recorded display of the conversation corpus (`../shared/conformance`, or A13N_CONFORMANCE) and of
// tests/cases: no item is lost or shown twice, whatever its shape. It runs the compiled module the binary embeds.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { roleOf, rows, streamingCalls, summarize } from "../../../crates/a13n-stream-server/src/viewer/assets/viewer/src/model.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const shared = process.env.A13N_CONFORMANCE
  ? join(process.env.A13N_CONFORMANCE, "cases")
  : join(root, "..", "shared", "conformance", "cases");
const dirs = [shared, join(root, "tests", "cases")];

function cases() {
  const found = [];
  for (const dir of dirs) {
    assert.ok(existsSync(dir), `no corpus at ${dir}`);
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name, "display.json");
      if (existsSync(path)) found.push({ name, items: JSON.parse(readFileSync(path, "utf8")).items });
    }
  }
  assert.ok(found.length > 30, `found ${found.length} cases`);
  return found;
}

const BOUNDARIES = new Set(["SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"]);

for (const { name, items } of cases()) {
  test(`${name}: every item is shown once, where it belongs`, () => {
    const folded = rows(items, { open: new Set(), showAll: false });
    const all = rows(items, { open: new Set(), showAll: true });
    const ids = (list) => list.filter((row) => row.type === "item").map((row) => row.item.id);

    // Folded: the conversation items once each, in ordinal order within their list; the folds hold the rest.
    const shown = ids(folded);
    assert.equal(new Set(shown).size, shown.length, "no item twice");
    const boundary = items.filter((item) => item.kind === "observation" && BOUNDARIES.has(item.content.type));
    // A call whose arguments still stream shows its held deltas as the call.
    const streaming = new Set(folded.filter((row) => row.role === "streaming").map((row) => row.item.id));
    const hidden = items.filter((item) => roleOf(item) === "observation" && !streaming.has(item.id));
    assert.equal(shown.length + hidden.length + boundary.length, items.length);
    for (const item of items) {
      if (item.kind !== "observation" && item.content.metadata?.display !== false) assert.ok(shown.includes(item.id), `${item.id} shown`);
    }
    const foldCount = folded.filter((row) => row.type === "fold").reduce((sum, row) => sum + row.items.length, 0);
    assert.equal(foldCount, hidden.length, "the folds hold every other observation");
    assert.ok(folded.every((row) => row.type !== "item" || row.role !== "observation"), "no observation row while folded");

    // Shown all: every item but the subagent boundaries (their subagent's header says them), once.
    const every = ids(all);
    assert.equal(new Set(every).size, every.length);
    assert.equal(every.length, items.length - boundary.length);

    // Subagents: one header each, every item of a subagent below its header and deeper.
    const headers = all.filter((row) => row.type === "subagent");
    assert.equal(new Set(headers.map((row) => row.scope.runId)).size, headers.length);
    all.forEach((row, index) => {
      if (row.type !== "item") return;
      const run = row.item.content.subagentRunId;
      if (!run) return assert.equal(row.depth, 0, `${row.item.id} of the root run at depth 0`);
      const header = all.slice(0, index).reverse().find((other) => other.type === "subagent" && other.depth < row.depth);
      assert.equal(header?.scope.runId, run, `${row.item.id} under its subagent's header`);
    });

    // The header's figures.
    const summary = summarize(items, false);
    assert.equal(summary.items, items.length);
    assert.equal(summary.toolCalls, items.filter((item) => item.kind === "tool_call").length + streaming.size);
    const terminal = items.filter((item) => ["RUN_FINISHED", "RUN_ERROR"].includes(item.content.type) && !item.content.subagentRunId).pop();
    if (terminal?.content.type === "RUN_ERROR") assert.equal(summary.status, "failed");
    else if (terminal?.content.outcome?.type === "success") assert.equal(summary.status, "complete");
    else if (!terminal && items.length > 0) assert.equal(summary.status, "running");
    if (terminal?.content.usage?.length) {
      const own = terminal.content.usage.reduce((sum, usage) => sum + usage.inputTokens + usage.outputTokens, 0);
      assert.ok(summary.tokens.total >= own);
      assert.equal(summary.tokens.source, "result");
    }
  });
}

test("real-subagent: the subagent sits right after the tool call that started it", () => {
  const items = cases().find((entry) => entry.name === "real-subagent").items;
  const list = rows(items, { open: new Set(), showAll: false });
  const at = list.findIndex((row) => row.type === "subagent");
  assert.ok(at > 0);
  assert.equal(list[at - 1].item.content.toolCallName, "delegate");
  assert.equal(list[at].depth, 1);
  assert.equal(summarize(items, true).tokens.total, 128 + 91, "the root's result and the subagent's report");
});

test("real-tools-retry: the header's figures", () => {
  const items = cases().find((entry) => entry.name === "real-tools-retry").items;
  const summary = summarize(items, true);
  assert.deepEqual(
    { status: summary.status, tokens: summary.tokens.total, tools: summary.toolCalls, failed: summary.failedToolCalls },
    { status: "complete", tokens: 159, tools: 3, failed: 1 },
  );
  assert.equal(summary.endMs - summary.startMs, Date.parse("2026-11-29T18:05:39.966Z") - Date.parse("2026-11-29T18:05:39.919Z"));
});

test("a tool call whose arguments stream shows as the call until its item comes, and not after its run ended", () => {
  // Found by a trial: 100 KB of arguments in 2,000 deltas showed "TOOL CALLS 0" and two folded observations
  // until the call's part ended, so the run looked stalled.
  const cut = (name, position) =>
    JSON.parse(readFileSync(join(root, "tests/cases", name, "cuts", `${position}.display.json`), "utf8")).items;
  const streamingRows = (items) => rows(items, { open: new Set(), showAll: false }).filter((row) => row.role === "streaming");
  // Kept whole (a host that retains content), and past the observation bound, where the held deltas keep only
  // their name: the call shows either way, with its arguments so far when the display has them.
  for (const [name, args] of [["extra-large-args-retain", 20_000], ["extra-large-args", undefined]]) {
    const during = streamingRows(cut(name, 12));
    assert.equal(during.length, 1, name);
    assert.deepEqual([during[0].call.toolCallId, during[0].call.toolName], ["w-1", "write"]);
    assert.equal(during[0].call.args?.length, args, name);
  }
  // A real run: a call streaming at a cut has its item by the run's end.
  assert.deepEqual(streamingRows(cut("layout-real-tools-retry", 21)).map((row) => row.call.toolName), ["get_weather"]);
  const whole = JSON.parse(readFileSync(join(root, "tests/cases/layout-real-tools-retry/display.json"), "utf8")).items;
  assert.deepEqual(streamingRows(whole), [], "every call has its item");
  // The same start once the run ended without the call's item: an observation again.
  // A subagent's call: over when its subagent ended, or when the root run ended without that (the run cut off);
  // and call ids are a run's own, so a subagent's finished call of the same id is another call.
  const inKid = (item) => ({ ...item, content: { ...item.content, subagentRunId: "kid" } });
  const base = cut("extra-large-args", 12);
  const kid = [base[0], ...base.slice(1).map(inKid)];
  assert.equal(streamingCalls(kid).size, 1);
  const rootError = { ...base[0], id: "itm_err", ordinal: 10_000, content: { type: "RUN_ERROR", message: "x" } };
  assert.equal(streamingCalls([...kid, rootError]).size, 0, "the root run failed");
  const kidEnd = { ...base[0], id: "itm_kid_end", ordinal: 10_001, content: { type: "SUBAGENT_FINISHED", subagentRunId: "kid" } };
  assert.equal(streamingCalls([...kid, kidEnd]).size, 0, "the subagent finished");
  const kidsCall = { ...base[0], id: "itm_kid_call", kind: "tool_call", ordinal: 10_002, content: { toolCallId: "w-1", subagentRunId: "kid" } };
  assert.equal(streamingCalls([...base, kidsCall]).size, 1, "a subagent's call of the same id is another call");
  // The header counts it as a tool call, not as an observation.
  const summary = summarize(base, false);
  assert.equal(summary.toolCalls, 1);
  assert.equal(summary.observations, base.filter((item) => item.kind === "observation").length - 1);
  const held = cut("extra-large-args", 24);
  const finished = { ...held[0], id: "itm_end", ordinal: 10_000, content: { type: "RUN_FINISHED" } };
  assert.equal(streamingCalls(held).size, 1);
  assert.equal(streamingCalls([...held, finished]).size, 0);
});
