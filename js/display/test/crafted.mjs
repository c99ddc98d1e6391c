// A deterministic AG-UI stream that exercises every rule of the display fold at and around its limits.
import { jsonSize } from "../dist/python.js";

const MAX_FIELD_CHARS = 262144;
const MAX_OBSERVATION_BYTES = 32768;
const PART_DELTA = "a13n.pydantic_ai.part_delta";

function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters whose sizes differ: ASCII, escapes of two and six bytes, two- and three-byte UTF-8, astral.
const ALPHABET = ["a", "b", " ", "é", "😀", '"', "\\", "\n", "\u0001", "\u007f", "\u2028", "z"];

export function craftedStream(seed) {
  const random = generator(seed);
  const events = [];
  let clock = 1_700_000_000_000;
  const at = () => (clock += 1 + Math.floor(random() * 997));
  const text = (length) => Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join("");
  const custom = (name, value, extra = {}) => events.push({ type: "CUSTOM", name, value, timestamp: at(), ...extra });
  /** A string that makes `{"f": 1e-05, "g": -2.5, "t": s}` exactly `size` bytes as `json.dumps` writes it. */
  const sized = (size) => {
    const value = { f: 1e-5, g: -2.5, t: "" };
    let room = size - jsonSize(value);
    let body = "";
    // Characters of any size while the largest (an astral one, twelve bytes) still fits, then ASCII to the exact size.
    while (room >= 12) {
      const char = text(1);
      body += char;
      room -= jsonSize(char) - 2;
    }
    return { ...value, t: body + "a".repeat(room) };
  };

  events.push({ type: "RUN_STARTED", threadId: "t", runId: "run-crafted", timestamp: at() });
  for (const scope of [undefined, "sub-1"]) {
    const extra = scope ? { subagentRunId: scope } : {};
    custom("a13n.harness.lifecycle", { event: { payload: { type: "model_request_started" } } }, extra);
    custom(
      "a13n.harness.context",
      { event: { payload: { type: "memory_recall", memories: [{ memory: "m", recall: "recalled", records: [{ id: "r1", sha256: "s" }] }] } } },
      extra,
    );
    custom(
      "a13n.harness.context",
      { event: { payload: { type: "memory_context", memories: [{ memory: "f", context: "full", files: [{ path: "a", sha256: "b", bytes: 3, truncated: 0 }], sources_truncated: 1 }] } } },
      extra,
    );
    // Sizes and flags as the model's lax mode reads them.
    custom(
      "a13n.harness.context",
      { event: { payload: { type: "memory_context", memories: [{ memory: "g", context: "full", files: [{ path: "b", sha256: "c", bytes: " +1_0.00 ", truncated: "YES" }, { path: "c", sha256: "d", bytes: true, truncated: "off" }], sources_truncated: "t" }] } } },
      extra,
    );
    custom("a13n.input.user", { event: { message_id: "u1", content: text(50), source: "user", input_id: "i1" } }, extra);
    custom("a13n.input.media", { event: { message_id: "u2", content: [{ kind: "image", url: "x" }], source: "steering" } }, extra);
    // A message longer than the field bound, in deltas with astral characters.
    events.push({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant", timestamp: at(), ...extra });
    let written = 0;
    while (written < MAX_FIELD_CHARS + 500) {
      const delta = text(9000);
      written += [...delta].length;
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta, timestamp: at(), ...extra });
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId: "m1", timestamp: at(), ...extra });
    events.push({ type: "REASONING_MESSAGE_START", messageId: "r1", role: "reasoning", timestamp: at(), ...extra });
    events.push({ type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: text(40), ...extra });
    events.push({ type: "REASONING_MESSAGE_END", messageId: "r1", timestamp: at(), ...extra });
    events.push({ type: "REASONING_ENCRYPTED_VALUE", subtype: "message", entityId: "r1", encryptedValue: "zz", timestamp: at(), ...extra });
    // Observations at the observation bound, and a summary.
    for (let size = MAX_OBSERVATION_BYTES - 2; size <= MAX_OBSERVATION_BYTES + 2; size++) custom("a13n.example", sized(size), extra);
    custom("a13n.context.compaction_summary", sized(MAX_OBSERVATION_BYTES + 10), extra);
    // A tool call with long arguments, a result list at the field bound and one past it, and a long text result.
    for (const [call, parts] of [["c1", 0], ["c2", 1], ["c3", -1]]) {
      events.push({ type: "TOOL_CALL_START", toolCallId: call, toolCallName: "search", parentMessageId: "m1", timestamp: at(), ...extra });
      events.push({ type: "TOOL_CALL_ARGS", toolCallId: call, delta: text(MAX_FIELD_CHARS / 2 + 7), timestamp: at(), ...extra });
      events.push({ type: "TOOL_CALL_ARGS", toolCallId: call, delta: text(MAX_FIELD_CHARS / 2), timestamp: at(), ...extra });
      events.push({ type: "TOOL_CALL_END", toolCallId: call, timestamp: at(), ...extra });
      const list = [{ type: "text", text: "" }];
      const base = jsonSize(list);
      list[0].text = "a".repeat(MAX_FIELD_CHARS - base + parts);
      const content = parts === -1 ? text(MAX_FIELD_CHARS + 3) : parts === 0 ? list : [...list];
      events.push({ type: "TOOL_CALL_RESULT", messageId: `res-${call}`, toolCallId: call, content, role: "tool", timestamp: at(), ...extra });
    }
    // An empty result list, and a message that names its own response group.
    events.push({ type: "TOOL_CALL_START", toolCallId: "c5", toolCallName: "noop", timestamp: at(), ...extra });
    events.push({ type: "TOOL_CALL_RESULT", messageId: "res-c5", toolCallId: "c5", content: [], timestamp: at(), ...extra });
    // A result whose content is null (Python's `None`), and a first delta already past the field bound (the field
    // comes before its `truncated` flag).
    events.push({ type: "TOOL_CALL_START", toolCallId: "c6", toolCallName: "noop", timestamp: at(), ...extra });
    events.push({ type: "TOOL_CALL_RESULT", messageId: "res-c6", toolCallId: "c6", content: null, timestamp: at(), ...extra });
    events.push({ type: "TOOL_CALL_START", toolCallId: "c7", toolCallName: "write", timestamp: at(), ...extra });
    events.push({ type: "TOOL_CALL_ARGS", toolCallId: "c7", delta: text(MAX_FIELD_CHARS + 5), timestamp: at(), ...extra });
    events.push({ type: "TOOL_CALL_END", toolCallId: "c7", timestamp: at(), ...extra });
    events.push({ type: "TEXT_MESSAGE_START", messageId: "m4", role: "assistant", timestamp: at(), ...extra });
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: "m4", delta: text(MAX_FIELD_CHARS + 2), timestamp: at(), ...extra });
    events.push({ type: "TEXT_MESSAGE_END", messageId: "m4", timestamp: at(), ...extra });
    events.push({ type: "TEXT_MESSAGE_START", messageId: "m3", role: "assistant", responseGroup: "own", timestamp: at(), ...extra });
    events.push({ type: "TEXT_MESSAGE_END", messageId: "m3", timestamp: at(), ...extra });
    // Streamed tool-call arguments: one run of deltas past the observation bound, broken by another event, resumed.
    const partDelta = (args) => ({
      thread_id: "t",
      run_id: "run-crafted",
      event: { index: 1, delta: { tool_name_delta: null, args_delta: args, tool_call_id: "c9", part_delta_kind: "tool_call" }, event_kind: "part_delta" },
    });
    for (let index = 0; index < 9; index++) custom(PART_DELTA, partDelta(text(4000)), extra);
    events.push({ type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant", ...extra });
    for (let index = 0; index < 3; index++) custom(PART_DELTA, partDelta(text(30)), extra);
    custom(PART_DELTA, { thread_id: "t", run_id: "run-crafted", event: { index: 2, delta: { content_delta: "x", part_delta_kind: "text" }, event_kind: "part_delta" } }, extra);
    // Tool observations: a failed function result, a native call and its return, and the supplements.
    custom("a13n.pydantic_ai.function_tool_result", { event: { part: { tool_name: "search", content: { n: 1.5, s: text(20) }, tool_call_id: "c1", outcome: "failed", part_kind: "tool-return" } } }, extra);
    custom("a13n.pydantic_ai.output_tool_result", { event: { part: { tool_name: "out", content: "no", tool_call_id: "c4", part_kind: "retry-prompt" } } }, extra);
    custom("a13n.pydantic_ai.part_start", { event: { part: { part_kind: "builtin-tool-call", tool_call_id: "b1", tool_name: "web", args: { q: "é\u2028", n: 2.5 }, provider_name: "openai" } } }, extra);
    custom("a13n.pydantic_ai.part_start", { event: { part: { part_kind: "builtin-tool-return", tool_call_id: "b1", tool_name: "web", content: [1, 2], provider_name: "openai" } } }, extra);
    custom("a13n.filesystem.edit_applied", { event: { tool_call_id: "c2", file_path: "a.txt", before: "x", after: "y" } }, extra);
    custom("a13n.tool_images", { event: { tool_call_id: "c2", images: [{ url: "i" }] } }, extra);
    custom("a13n.mcp_apps", { event: { tool_call_id: "c3" } }, extra);
  }
  fragments(events, custom, text);
  events.push({ type: "RUN_FINISHED", threadId: "t", runId: "run-crafted", timestamp: at() });
  return events;
}

/** CUSTOM events split into frames: whole, interleaved, one with a lost frame, and more pending than the bound. */
function fragments(events, custom, text) {
  const frames = (identity, event, drop = -1) => {
    // Frames of 4096 code points, as the reference cuts them: never inside a surrogate pair.
    const encoded = [...JSON.stringify(event)];
    const count = Math.ceil(encoded.length / 4096);
    return Array.from({ length: count }, (_, index) => ({
      id: identity,
      index,
      count,
      data: encoded.slice(index * 4096, (index + 1) * 4096).join(""),
    })).filter((_, index) => index !== drop);
  };
  const big = (n) => ({ type: "CUSTOM", name: "a13n.big", value: { text: text(n), n: 0.25 }, timestamp: 1_700_000_100_000 + n });
  const first = frames("f1", big(12000));
  const second = frames("f2", big(9000), 1);
  for (let index = 0; index < Math.max(first.length, second.length); index++) {
    if (first[index]) custom("a13n.stream.fragment", first[index]);
    if (second[index]) custom("a13n.stream.fragment", second[index]);
  }
  for (let identity = 0; identity < 10; identity++) custom("a13n.stream.fragment", frames(`p${identity}`, big(5000 + identity))[0]);
  for (let identity = 0; identity < 10; identity++) {
    for (const frame of frames(`p${identity}`, big(5000 + identity)).slice(1)) custom("a13n.stream.fragment", frame);
  }
  custom("a13n.stream.fragment", { id: "bad", index: 2, count: 1, data: "x" });
  custom("a13n.stream.fragment", frames("small", { name: "a13n.small", value: { ok: true }, subagent_run_id: "sub-2" })[0]);
}
