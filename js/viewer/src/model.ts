// What the run page shows, derived from the display's items (pure: no DOM). The conversation comes first: user
// inputs, assistant text, reasoning, tool calls, failures, and each subagent's items nested under the tool call
// (or the subagent) that started it. Every other observation folds into "show N observations" rows between them.

import type { Item, Json, JsonObject } from "../../display/src/types.js";

/** How an item is shown. */
export type Role =
  /** A message, reasoning, a tool call. */
  | "conversation"
  /** An observation the protocol marks for display: an input shown to the user, a context summary. */
  | "shown"
  /** The run failed (RUN_ERROR). */
  | "failure"
  /** A subagent's start, end or failure: the subagent's header says it. */
  | "boundary"
  /** A tool call whose arguments are still streaming: the held argument deltas of a call no tool call item has
   * yet (the host makes the item when the call's part ends). */
  | "streaming"
  /** Anything else (lifecycle, context, part start/delta, usage, diagnostics...): folded away. */
  | "observation";

export interface ItemRow {
  type: "item";
  key: string;
  depth: number;
  item: Item;
  role: Exclude<Role, "boundary">;
  /** For the `streaming` role: the call and its arguments so far. */
  call?: StreamingCall;
}

export interface FoldRow {
  type: "fold";
  key: string;
  depth: number;
  /** The folded observations, in ordinal order. */
  items: Item[];
  open: boolean;
}

export interface SubagentRow {
  type: "subagent";
  key: string;
  depth: number;
  scope: Scope;
}

export type Row = ItemRow | FoldRow | SubagentRow;

/** A subagent run: its boundary observations and its items. */
export interface Scope {
  runId: string;
  name: string | null;
  parentToolCallId: string | null;
  parentSubagentRunId: string | null;
  /** The ordinal where the subagent starts (its start observation, else its first item). */
  ordinal: number;
  started: Item | null;
  finished: Item | null;
  failed: Item | null;
  items: Item[];
}

export type RunStatus = "waiting" | "running" | "complete" | "failed" | "cancelled" | "interrupted";

/** The run header's figures. */
export interface Summary {
  status: RunStatus;
  /** The outcome's words (an error's message, an interrupt's reason), when there is one. */
  statusDetail: string;
  items: number;
  observations: number;
  startMs: number | null;
  endMs: number | null;
  tokens: { input: number; output: number; total: number; source: "result" | "reports" | "none" };
  toolCalls: number;
  failedToolCalls: number;
}

const SUBAGENT_ENDS = new Set(["SUBAGENT_FINISHED", "SUBAGENT_ERROR"]);
const BOUNDARIES = new Set(["SUBAGENT_STARTED", ...SUBAGENT_ENDS]);
const TERMINALS = new Set(["RUN_FINISHED", "RUN_ERROR"]);
const SUMMARIES = new Set(["a13n.context.handoff_summary", "a13n.context.compaction_summary"]);

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function text(value: Json | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function num(value: Json | undefined): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** `value.event` of a Harness observation. */
export function harnessEvent(content: JsonObject): JsonObject | null {
  const value = content["value"];
  const event = isObject(value) ? value["event"] : undefined;
  return isObject(event) ? event : null;
}

export function roleOf(item: Item): Role {
  const content = item.content;
  if (item.kind !== "observation") {
    // An input the protocol marks as not for display stays out of the conversation.
    const metadata = content["metadata"];
    return isObject(metadata) && metadata["display"] === false ? "observation" : "conversation";
  }
  const type = content["type"];
  if (typeof type === "string") {
    if (BOUNDARIES.has(type)) return "boundary";
    if (type === "RUN_ERROR") return "failure";
    return "observation";
  }
  const name = content["name"];
  if (typeof name === "string") {
    if (SUMMARIES.has(name)) return "shown";
    const metadata = content["metadata"];
    if (name.startsWith("a13n.input.") && isObject(metadata) && metadata["display"] === true) return "shown";
  }
  return "observation";
}

export function failed(item: Item): boolean {
  return item.state === "failed" || isObject(item.content["failure"]);
}

export function time(value: string | null | undefined): number | null {
  if (!value) return null;
  let at = parsedTimes.get(value);
  if (at === undefined) {
    at = Date.parse(value);
    // Every render reads every item's times: each text is parsed once (a run's items keep theirs), and the memo
    // starts over when it holds more texts than a long run has.
    if (parsedTimes.size >= PARSED_TIMES) parsedTimes.clear();
    parsedTimes.set(value, at);
  }
  return Number.isNaN(at) ? null : at;
}

/** The most time texts `time` remembers: two for each of a run of 100,000 items, and some. */
const PARSED_TIMES = 250_000;
const parsedTimes = new Map<string, number>();

const PART_START = "a13n.pydantic_ai.part_start";
const PART_DELTA = "a13n.pydantic_ai.part_delta";
const PART_END = "a13n.pydantic_ai.part_end";

/** A tool call whose part started and whose arguments are still arriving. */
export interface StreamingCall {
  toolCallId: string;
  toolName: string;
  /** The arguments' text so far, when the observation holding them shows it (`null` past the observation bound,
   * which keeps only its name). */
  args: string | null;
}

/** The tool-call part an observation starts (`part_start`) or ends (`part_end`): its call id and tool name. */
function toolCallPart(item: Item, name: string): { id: string; tool: string } | null {
  if (item.kind !== "observation" || item.content["name"] !== name) return null;
  const part = harnessEvent(item.content)?.["part"];
  if (!isObject(part) || part["part_kind"] !== "tool-call" || typeof part["tool_call_id"] !== "string") return null;
  return { id: part["tool_call_id"], tool: text(part["tool_name"]) };
}

/** The calls whose arguments still stream, by the id of the `part_start` observation that started each: no tool
 * call item of that id in its run yet, its part not ended, and neither its own run (a subagent's) nor the root run
 * over. Two passes over the items, whatever their number. */
export function streamingCalls(items: readonly Item[]): Map<string, StreamingCall> {
  // Call ids are a run's own (a subagent may reuse its parent's): keyed with the run.
  const key = (item: Item, id: string) => `${scopeOf(item) ?? ""}\u0000${id}`;
  const done = new Set<string>();
  const over = new Set<string | null>();
  const held = new Map<string, string>();
  for (const item of items) {
    const content = item.content;
    if (item.kind === "tool_call" && typeof content["toolCallId"] === "string") done.add(key(item, content["toolCallId"]));
    const ended = toolCallPart(item, PART_END);
    if (ended !== null) done.add(key(item, ended.id));
    const type = text(content["type"]);
    if (TERMINALS.has(type) && scopeOf(item) === null) return new Map();
    if (SUBAGENT_ENDS.has(type)) over.add(scopeOf(item));
    const delta = content["name"] === PART_DELTA ? harnessEvent(content)?.["delta"] : undefined;
    if (isObject(delta) && delta["part_delta_kind"] === "tool_call" && typeof delta["tool_call_id"] === "string") {
      held.set(key(item, delta["tool_call_id"]), text(delta["args_delta"]));
    }
  }
  const calls = new Map<string, StreamingCall>();
  for (const item of items) {
    const started = toolCallPart(item, PART_START);
    if (started === null || done.has(key(item, started.id)) || over.has(scopeOf(item))) continue;
    const args = held.get(key(item, started.id)) ?? null;
    calls.set(item.id, { toolCallId: started.id, toolName: started.tool || "tool", args });
  }
  return calls;
}

/** The subagent an item belongs to (`null`: the root run). Boundary events name the subagent they are about. */
function scopeOf(item: Item): string | null {
  const run = item.content["subagentRunId"];
  return typeof run === "string" && run !== "" ? run : null;
}

/** Items of one run or subagent, and the subagents inside it. */
interface Tree {
  root: Item[];
  scopes: Map<string, Scope>;
}

function tree(items: readonly Item[]): Tree {
  const root: Item[] = [];
  const scopes = new Map<string, Scope>();
  const scope = (runId: string, ordinal: number): Scope => {
    let found = scopes.get(runId);
    if (found === undefined) {
      found = {
        runId,
        name: null,
        parentToolCallId: null,
        parentSubagentRunId: null,
        ordinal,
        started: null,
        finished: null,
        failed: null,
        items: [],
      };
      scopes.set(runId, found);
    }
    return found;
  };
  for (const item of items) {
    const run = scopeOf(item);
    const type = item.content["type"];
    if (run !== null && typeof type === "string" && BOUNDARIES.has(type)) {
      const found = scope(run, item.ordinal);
      if (type === "SUBAGENT_STARTED") {
        found.started = item;
        found.ordinal = Math.min(found.ordinal, item.ordinal);
        const name = item.content["name"];
        const tool = item.content["parentToolCallId"];
        const parent = item.content["parentSubagentRunId"];
        found.name = typeof name === "string" ? name : found.name;
        found.parentToolCallId = typeof tool === "string" && tool !== "" ? tool : null;
        found.parentSubagentRunId = typeof parent === "string" && parent !== "" ? parent : null;
      } else if (type === "SUBAGENT_FINISHED") {
        found.finished = item;
      } else {
        found.failed = item;
      }
      continue;
    }
    if (run === null) root.push(item);
    else scope(run, item.ordinal).items.push(item);
  }
  return { root, scopes };
}

/** How the rows are wanted. */
export interface RowOptions {
  /** Fold rows opened by the reader (their keys). */
  open: ReadonlySet<string>;
  /** Every observation shown. */
  showAll: boolean;
  /** `streamingCalls(items)`, when the caller has it already (a render needs it for the summary too). */
  streaming?: Map<string, StreamingCall>;
}

/** The rows of the conversation, in order. */
export function rows(items: readonly Item[], options: RowOptions): Row[] {
  const { root, scopes } = tree(items);
  // Where each subagent goes: after the tool call that started it (the last call of that id before the start, in
  // its parent subagent's list when it names one, else outside its own), else in its parent subagent's list, else in
  // the root list, at its start.
  const calls = new Map<string, Item[]>();
  for (const item of items) {
    const id = item.content["toolCallId"];
    if (item.kind !== "tool_call" || typeof id !== "string") continue;
    const list = calls.get(id) ?? [];
    list.push(item);
    calls.set(id, list);
  }
  // A call whose arguments still stream has no tool call item yet: its part's start shows as the call.
  const streaming = options.streaming ?? streamingCalls(items);
  const underTool = new Map<string, Scope[]>();
  const inList = new Map<string | null, Scope[]>();
  for (const scope of [...scopes.values()].sort((a, b) => a.ordinal - b.ordinal)) {
    const parentScope = scope.parentSubagentRunId !== null ? scopes.get(scope.parentSubagentRunId) : undefined;
    if (scope.parentToolCallId !== null) {
      const candidates = (calls.get(scope.parentToolCallId) ?? []).filter(
        (call) =>
          call.ordinal < scope.ordinal &&
          (parentScope !== undefined ? scopeOf(call) === parentScope.runId : scopeOf(call) !== scope.runId),
      );
      const call = candidates[candidates.length - 1];
      if (call !== undefined && !inside(scopeOf(call), scope, scopes)) {
        const list = underTool.get(call.id) ?? [];
        list.push(scope);
        underTool.set(call.id, list);
        continue;
      }
    }
    const parent = parentScope && !inside(parentScope.runId, scope, scopes) ? parentScope.runId : null;
    const list = inList.get(parent) ?? [];
    list.push(scope);
    inList.set(parent, list);
  }

  const out: Row[] = [];
  const emitted = new Set<string>();
  const emitScope = (list: readonly Item[], own: string | null, depth: number) => {
    const entries: (Item | Scope)[] = [...list, ...(inList.get(own) ?? [])];
    entries.sort((a, b) => a.ordinal - b.ordinal);
    let folded: Item[] = [];
    const flush = () => {
      if (folded.length === 0) return;
      const key = `fold:${folded[0]!.id}`;
      const open = options.showAll || options.open.has(key);
      out.push({ type: "fold", key, depth, items: folded, open });
      if (open) for (const item of folded) out.push({ type: "item", key: item.id, depth, item, role: "observation" });
      folded = [];
    };
    for (const entry of entries) {
      if ("runId" in entry) {
        flush();
        emitSubagent(entry, depth);
        continue;
      }
      const role = roleOf(entry);
      if (role === "boundary") continue;
      const call = role === "observation" ? streaming.get(entry.id) : undefined;
      if (call !== undefined) {
        flush();
        out.push({ type: "item", key: entry.id, depth, item: entry, role: "streaming", call });
        continue;
      }
      if (role === "observation") {
        folded.push(entry);
        continue;
      }
      flush();
      out.push({ type: "item", key: entry.id, depth, item: entry, role });
      for (const scope of underTool.get(entry.id) ?? []) emitSubagent(scope, depth + 1);
    }
    flush();
  };
  const emitSubagent = (scope: Scope, depth: number) => {
    if (emitted.has(scope.runId)) return;
    emitted.add(scope.runId);
    out.push({ type: "subagent", key: `subagent:${scope.runId}`, depth, scope });
    emitScope(scope.items, scope.runId, depth + 1);
  };
  emitScope(root, null, 0);
  // A subagent whose parent could not be placed (a cycle in the parents named) still shows, at the end.
  for (const scope of scopes.values()) if (!emitted.has(scope.runId)) emitSubagent(scope, 1);
  return out;
}

/** Whether the subagent `run` is `ancestor` or inside it, following parent subagents (a cycle would hide both). */
function inside(run: string | null, ancestor: Scope, scopes: Map<string, Scope>): boolean {
  const seen = new Set<string>();
  let current = run !== null ? scopes.get(run) : undefined;
  while (current !== undefined && !seen.has(current.runId)) {
    if (current === ancestor) return true;
    seen.add(current.runId);
    current = current.parentSubagentRunId !== null ? scopes.get(current.parentSubagentRunId) : undefined;
  }
  return false;
}

export function scopeState(scope: Scope): "running" | "completed" | "failed" {
  if (scope.failed !== null) return "failed";
  if (scope.finished !== null) {
    const outcome = scope.finished.content["outcome"];
    const type = isObject(outcome) ? outcome["type"] : undefined;
    return type === undefined || type === "success" ? "completed" : "failed";
  }
  return "running";
}

/** Token counts of a usage report's records (`request_usage`). */
function reportTokens(item: Item): { input: number; output: number } | null {
  if (item.content["name"] !== "a13n.harness.usage") return null;
  const payload = harnessEvent(item.content)?.["payload"];
  const records = isObject(payload) ? payload["records"] : undefined;
  if (!Array.isArray(records)) return null;
  let input = 0;
  let output = 0;
  for (const record of records) {
    const usage = isObject(record) ? record["request_usage"] : undefined;
    if (!isObject(usage)) continue;
    input += num(usage["input_tokens"]);
    output += num(usage["output_tokens"]);
  }
  return { input, output };
}

/** The header's figures. */
export function summarize(items: readonly Item[], ended: boolean, calls?: Map<string, StreamingCall>): Summary {
  let startMs: number | null = null;
  let endMs: number | null = null;
  let toolCalls = 0;
  let failedToolCalls = 0;
  let observations = 0;
  let terminal: Item | null = null;
  const reports = { input: 0, output: 0, seen: false };
  const subagents = { input: 0, output: 0 };
  for (const item of items) {
    const started = time(item.started_at);
    const finished = time(item.ended_at) ?? started;
    if (started !== null && (startMs === null || started < startMs)) startMs = started;
    if (finished !== null && (endMs === null || finished > endMs)) endMs = finished;
    if (item.kind === "tool_call") {
      toolCalls += 1;
      if (failed(item)) failedToolCalls += 1;
    }
    if (item.kind === "observation") observations += 1;
    if (TERMINALS.has(text(item.content["type"])) && scopeOf(item) === null) terminal = item;
    const tokens = reportTokens(item);
    if (tokens !== null) {
      const into = scopeOf(item) === null ? reports : subagents;
      into.input += tokens.input;
      into.output += tokens.output;
      reports.seen = true;
    }
  }
  // The root run's result carries its usage; while it runs, its usage reports add up to the same. Subagents'
  // reports are added: their use is not in the root's result.
  let input = reports.input;
  let output = reports.output;
  let source: Summary["tokens"]["source"] = reports.seen ? "reports" : "none";
  const usage = terminal?.content["usage"];
  if (Array.isArray(usage) && usage.length > 0) {
    input = 0;
    output = 0;
    for (const entry of usage) {
      if (!isObject(entry)) continue;
      input += num(entry["inputTokens"]);
      output += num(entry["outputTokens"]);
    }
    source = "result";
  }
  input += subagents.input;
  output += subagents.output;

  // A call whose arguments stream is shown as a call, not among the observations.
  const streaming = (calls ?? streamingCalls(items)).size;
  toolCalls += streaming;
  observations -= streaming;

  let status: RunStatus = items.length === 0 ? "waiting" : ended ? "complete" : "running";
  let statusDetail = "";
  if (terminal !== null) {
    if (terminal.content["type"] === "RUN_ERROR") {
      status = "failed";
      statusDetail = [text(terminal.content["message"]), text(terminal.content["code"])].filter(Boolean).join(" · ");
    } else {
      const outcome = terminal.content["outcome"];
      const type = isObject(outcome) ? outcome["type"] : "success";
      status = type === "cancelled" ? "cancelled" : type === "interrupt" ? "interrupted" : "complete";
      if (type === "interrupt" && isObject(outcome) && Array.isArray(outcome["interrupts"])) {
        const reasons = outcome["interrupts"].map((entry) => (isObject(entry) ? text(entry["reason"]) : "")).filter(Boolean);
        statusDetail = reasons.length > 0 ? `awaiting ${[...new Set(reasons)].join(", ")}` : "";
      }
    }
  }
  return {
    status,
    statusDetail,
    items: items.length,
    observations,
    startMs,
    endMs,
    tokens: { input, output, total: input + output, source },
    toolCalls,
    failedToolCalls,
  };
}

/** What a filter looks in: the words an item shows (its text, tool name, arguments, result, failure...). */
export function searchText(item: Item): string {
  const content = item.content;
  const parts: string[] = [item.kind, item.state];
  for (const key of ["role", "toolCallName", "name", "type", "text", "arguments", "result", "value", "message", "code"]) {
    const value = content[key];
    if (value !== undefined && value !== null) parts.push(text(value));
  }
  const failure = content["failure"];
  if (isObject(failure)) parts.push(text(failure["message"]), text(failure["code"]));
  const resultParts = content["result_parts"];
  if (Array.isArray(resultParts)) parts.push(text(resultParts));
  if (item.kind === "observation") parts.push(text(content["value"]).slice(0, 4096));
  return parts.join("\n").toLowerCase();
}
