// The display fold's rules: which item each AG-UI event changes and how, as the reference's `DisplayFold` folds
// them. The state is plain data so that a checkpoint restores it and exports it unchanged.
import { memorySources } from "./memory.js";
import { codePoints, dumpsUnicode, headCodePoints, jsonSize, pyStr, stringSize, truthy } from "./python.js";
import { sha256Hex } from "./sha256.js";
import { clockTime, fromEpochMillis } from "./time.js";
import { isObject, pyEqual } from "./values.js";
/** Harness observations beyond this size keep only their name. */
export const MAX_OBSERVATION_BYTES = 32768;
/** A message text, tool arguments or tool result keeps this many characters (code points). */
export const MAX_FIELD_CHARS = 262144;
// Keyed by what events say: maps, never plain objects, whose inherited names (`constructor`, `__proto__`) an event
// could name.
const MESSAGE_KINDS = new Map([
    ["TEXT_MESSAGE_START", "text_message"],
    ["TEXT_MESSAGE_CONTENT", "text_message"],
    ["TEXT_MESSAGE_END", "text_message"],
    ["REASONING_MESSAGE_START", "reasoning_message"],
    ["REASONING_MESSAGE_CONTENT", "reasoning_message"],
    ["REASONING_MESSAGE_END", "reasoning_message"],
    ["REASONING_ENCRYPTED_VALUE", "reasoning_message"],
]);
const TOOL_EVENTS = new Set(["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]);
const LIFECYCLE_EVENTS = new Set([
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "SUBAGENT_STARTED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_ERROR",
]);
const ENDS = new Set(["TEXT_MESSAGE_END", "REASONING_MESSAGE_END", "TOOL_CALL_RESULT"]);
// Event fields an item's content copies, in the order it first takes them.
const COPIED = [
    "messageId",
    "role",
    "toolCallId",
    "toolCallName",
    "parentMessageId",
    "metadata",
    "subagentRunId",
    "responseGroup",
];
// Events whose `delta` appends to one content field.
const ACCUMULATED = new Map([
    ["TEXT_MESSAGE_CONTENT", "text"],
    ["REASONING_MESSAGE_CONTENT", "text"],
    ["TOOL_CALL_ARGS", "arguments"],
]);
/** CUSTOM event names the fold reads. */
export const NAMES = {
    partDelta: "a13n.pydantic_ai.part_delta",
    partStart: "a13n.pydantic_ai.part_start",
    partEnd: "a13n.pydantic_ai.part_end",
    lifecycle: "a13n.harness.lifecycle",
    context: "a13n.harness.context",
    inputMedia: "a13n.input.media",
    authoredInputs: ["a13n.input.user", "a13n.input.steering"],
    toolResults: ["a13n.pydantic_ai.function_tool_result", "a13n.pydantic_ai.output_tool_result"],
    editApplied: "a13n.filesystem.edit_applied",
    toolImages: ["a13n.tool_images", "a13n.harness-ui.tool_images"],
    toolSupplements: [
        "a13n.filesystem.edit_applied",
        "a13n.tool_images",
        "a13n.harness-ui.tool_images",
        "a13n.harness-ui.mcp_apps",
        "a13n.mcp_apps",
    ],
    summaries: ["a13n.context.handoff_summary", "a13n.context.compaction_summary"],
};
const RESPONSE_PARTS = [NAMES.partStart, NAMES.partEnd, NAMES.partDelta];
/** The stable id of an item: the same across attempts, so a retried tool call updates its item. */
export function itemId(runId, kind, sourceId) {
    return "itm_" + sha256Hex(`${runId}\0${kind}\0${sourceId}`).slice(0, 32);
}
/** The fold: each event, at the sequence already taken, changes at most one item. */
export class Fold {
    state;
    lastId = null;
    /** The code points of each accumulated field (by item key and field) as last written, so that a delta costs what
     * it adds: a field at the bound is never scanned again. Not state: a restored fold counts a field once. */
    counted = new Map();
    constructor(state) {
        this.state = state;
    }
    /** Fold one event; the reference to the item it changed, if it changed one. */
    event(payload) {
        const type = payload["type"];
        if (type === "CUSTOM")
            return this.observation(payload);
        if (typeof type === "string" && LIFECYCLE_EVENTS.has(type)) {
            const key = this.id("observation", `${this.state.attempt}:${this.state.sequence}`);
            return this.put(key, "observation", "completed", { ...payload }, this.occurred(payload));
        }
        let kind;
        let sourceId;
        if (typeof type !== "string")
            return null;
        const messageKind = MESSAGE_KINDS.get(type);
        if (messageKind !== undefined) {
            kind = messageKind;
            sourceId = type === "REASONING_ENCRYPTED_VALUE" ? payload["entityId"] : payload["messageId"];
        }
        else if (TOOL_EVENTS.has(type)) {
            kind = "tool_call";
            sourceId = payload["toolCallId"];
        }
        else {
            return null;
        }
        if (sourceId === undefined)
            throw new TypeError(`a ${type} event without its message or tool call id`);
        const scope = payload["subagentRunId"];
        const key = this.id(kind, truthy(scope) ? `${pyStr(scope)}:${pyStr(sourceId)}` : pyStr(sourceId));
        return this.message(type, payload, key, kind);
    }
    message(type, payload, key, kind) {
        const previous = this.state.items.get(key);
        const content = previous !== undefined ? { ...previous.content } : {};
        for (const name of COPIED) {
            if (name in payload)
                content[name] = payload[name] ?? null;
        }
        const scope = scopeOf(content["subagentRunId"]);
        const group = this.state.responseGroups.get(scope);
        if (group !== undefined && !("responseGroup" in content))
            content["responseGroup"] = group;
        if (type === "TEXT_MESSAGE_END" && content["role"] === "assistant") {
            const sources = this.state.memorySources.get(scope);
            if (sources !== undefined)
                content["memory_sources"] = structuredClone(sources);
        }
        if (type === "TOOL_CALL_END")
            content["arguments_complete"] = true;
        const accumulated = ACCUMULATED.get(type);
        if (accumulated !== undefined) {
            const delta = payload["delta"];
            if (typeof delta !== "string")
                throw new TypeError(`a ${type} event without a text delta`);
            this.append(key, content, accumulated, delta);
        }
        if (type === "REASONING_ENCRYPTED_VALUE")
            content["encrypted_value"] = payload["encryptedValue"] ?? null;
        // A result without content is an empty text; one whose content is null, Python's `None`.
        if (type === "TOOL_CALL_RESULT")
            this.result(content, payload["content"] === undefined ? "" : payload["content"]);
        const state = ENDS.has(type) ? "completed" : (previous?.state ?? "in_progress");
        return this.put(key, kind, state, content, this.occurred(payload));
    }
    result(content, result) {
        if (!Array.isArray(result)) {
            this.bounded(content, "result", pyStr(result));
            return;
        }
        const whole = this.state.fullContent || this.state.retainContent || jsonSize(result) <= MAX_FIELD_CHARS;
        content["result_parts"] = whole ? result : [];
        if (!whole || result.length === 0)
            content["truncated"] = true;
    }
    observation(payload) {
        const streamed = streamedArguments(payload);
        if (streamed !== null)
            return this.state.fullContent ? null : this.arguments(payload, streamed.stream, streamed.text);
        const accepted = this.state.assembler.accept(payload);
        if (accepted === null)
            return null;
        const event = accepted.event;
        const name = event["name"];
        let value = event["value"] ?? null;
        const input = isObject(value) && isObject(value["event"]) ? value["event"] : null;
        const lifecycle = input !== null && isObject(input["payload"]) ? input["payload"] : null;
        const scope = scopeOf(event["subagentRunId"]);
        if (name === NAMES.lifecycle && lifecycle !== null && lifecycle["type"] === "model_request_started") {
            this.state.responseGroups.set(scope, `${this.state.runId}:${this.state.attempt}:${this.state.sequence}`);
        }
        if (name === NAMES.context && lifecycle !== null)
            this.rememberSources(scope, lifecycle);
        const media = name === NAMES.inputMedia && input !== null && (input["source"] === "user" || input["source"] === "steering");
        if (input !== null && (media || NAMES.authoredInputs.includes(name ?? null))) {
            return this.authoredInput(event, input, media);
        }
        if (input !== null) {
            const tool = this.toolObservation(event, input);
            if (tool !== null)
                return tool;
        }
        if (this.state.fullContent && typeof name === "string" && RESPONSE_PARTS.includes(name))
            return null;
        const summary = typeof name === "string" && NAMES.summaries.includes(name);
        const keepWhole = this.state.retainContent || (this.state.fullContent && summary);
        if (!keepWhole && jsonSize(value) > MAX_OBSERVATION_BYTES)
            value = { omitted: true };
        const key = this.id("observation", `${this.state.attempt}:${this.state.sequence}`);
        const content = { name: pyStr(name), value };
        if ("metadata" in event)
            content["metadata"] = event["metadata"] ?? null;
        if ("subagentRunId" in event)
            content["subagentRunId"] = event["subagentRunId"] ?? null;
        return this.put(key, "observation", "completed", content, this.occurred(payload));
    }
    rememberSources(scope, payload) {
        const sources = memorySources(payload);
        if (sources === null)
            return;
        const kinds = new Set(sources.map((source) => source["kind"]));
        const kept = (this.state.memorySources.get(scope) ?? []).filter((source) => !kinds.has(source["kind"]));
        this.state.memorySources.set(scope, [...kept, ...sources]);
    }
    authoredInput(event, input, media) {
        const messageId = pyStr(input["message_id"]);
        if (!("message_id" in input))
            throw new TypeError("an authored input without a message_id");
        const content = { messageId, role: "user" };
        if ("subagentRunId" in event)
            content["subagentRunId"] = event["subagentRunId"] ?? null;
        if ("metadata" in event)
            content["metadata"] = event["metadata"] ?? null;
        if (media)
            content["input_media"] = input["content"] ?? null;
        else
            this.bounded(content, "text", pyStr(input["content"]));
        content["input_source"] = "source" in input ? (input["source"] ?? null) : "user";
        content["input_group"] = input["input_id"] ?? null;
        const scope = event["subagentRunId"];
        const key = this.id("text_message", truthy(scope) ? `${pyStr(scope)}:${messageId}` : messageId);
        return this.put(key, "text_message", "completed", content, this.occurred(event));
    }
    toolObservation(event, value) {
        const name = event["name"];
        const part = value["part"];
        const partKind = isObject(part) ? part["part_kind"] : undefined;
        const native = partKind === "builtin-tool-call" || partKind === "builtin-tool-return";
        const result = NAMES.toolResults.includes(name ?? null);
        const supplement = NAMES.toolSupplements.includes(name ?? null);
        const source = native || result ? part : supplement ? value : undefined;
        if (!isObject(source))
            return null;
        const callId = source["tool_call_id"];
        if (typeof callId !== "string")
            return null;
        const scope = event["subagentRunId"];
        const provider = native ? (truthy(source["provider_name"]) ? pyStr(source["provider_name"]) : "provider") : null;
        const identity = native ? `native:${provider}:${callId}` : callId;
        const key = this.id("tool_call", truthy(scope) ? `${pyStr(scope)}:${identity}` : identity);
        const previous = this.state.items.get(key);
        const content = previous !== undefined ? { ...previous.content } : {};
        content["toolCallId"] = callId;
        if (typeof scope === "string")
            content["subagentRunId"] = scope;
        if (provider)
            content["provider"] = provider;
        if ("tool_name" in source)
            content["toolCallName"] = source["tool_name"] ?? null;
        const group = this.state.responseGroups.get(scopeOf(scope));
        if (group !== undefined && !("responseGroup" in content))
            content["responseGroup"] = group;
        let state = previous?.state ?? "in_progress";
        if (supplement) {
            this.supplement(content, name, source);
        }
        else if (source["part_kind"] === "builtin-tool-call") {
            const args = source["args"] ?? null;
            this.bounded(content, "arguments", typeof args === "string" ? args : dumpsUnicode(args));
            content["arguments_complete"] = true;
        }
        else {
            state = this.toolResult(content, source);
        }
        return this.put(key, "tool_call", state, content, this.occurred(event));
    }
    supplement(content, name, source) {
        if (name === NAMES.editApplied) {
            const edit = {};
            for (const key of ["file_path", "before", "after"])
                edit[key] = source[key] ?? null;
            content["applied_edit"] = edit;
        }
        else if (NAMES.toolImages.includes(name ?? null)) {
            content["tool_images"] = "images" in source ? (source["images"] ?? null) : [];
            content["tool_image_unavailable"] = "unavailable" in source ? (source["unavailable"] ?? null) : false;
        }
        else {
            content["mcp_apps"] = "apps" in source ? (source["apps"] ?? null) : [];
        }
    }
    toolResult(content, source) {
        const value = source["content"] ?? null;
        if (this.state.fullContent || this.state.retainContent || jsonSize(value) <= MAX_FIELD_CHARS) {
            content["value"] = value;
        }
        else {
            content["truncated"] = true;
        }
        const outcome = source["outcome"] ?? null;
        content["outcome"] = outcome;
        const retry = source["part_kind"] === "retry-prompt" || outcome === "retried";
        content["retry"] = retry;
        const failed = retry || outcome === "failed" || outcome === "denied" || outcome === "interrupted";
        return failed ? "failed" : "completed";
    }
    /** Consecutive argument deltas of one tool-call part fold into one observation: the first delta's, with the
     * argument text of all of them and the first one's time. */
    arguments(event, stream, text) {
        let held = this.state.arguments;
        if (held !== null && held.sequence === this.state.sequence - 1 && pyEqual(held.stream, stream)) {
            if (held.event !== null) {
                extendArguments(held.event, text);
                // JSON escapes character by character, so the value grows by the escaped text alone.
                held.size += stringSize(text) - 2;
            }
        }
        else {
            const copy = structuredClone(event);
            const key = this.id("observation", `${this.state.attempt}:${this.state.sequence}`);
            held = { stream, key, at: this.occurred(copy), sequence: 0, event: copy, size: jsonSize(copy["value"]) };
            this.state.arguments = held;
        }
        held.sequence = this.state.sequence;
        if (!this.state.retainContent && held.size > MAX_OBSERVATION_BYTES)
            held.event = null;
        const value = held.event !== null ? argumentsValue(held.event) : { omitted: true };
        const content = { name: NAMES.partDelta, value };
        if ("subagentRunId" in event)
            content["subagentRunId"] = event["subagentRunId"] ?? null;
        return this.put(held.key, "observation", "completed", content, held.at);
    }
    /** A tool call the host reports failed by a tool result that has no event of its own. */
    failToolCall(key, failure, at) {
        const previous = this.state.items.get(key);
        if (previous === undefined || previous.kind !== "tool_call")
            return null;
        return this.put(key, "tool_call", "failed", { ...previous.content, failure }, at);
    }
    /** `bounded(content, field, content[field] + delta)`, at the cost of the delta: the field's code points are
     * remembered, and one already at the bound keeps its text (a longer value's head is the same). */
    append(key, content, field, delta) {
        const previous = pyStr(content[field] ?? "");
        if (this.state.fullContent || this.state.retainContent) {
            content[field] = previous + delta;
            return;
        }
        const name = `${key}\0${field}`;
        const known = this.counted.get(name);
        const points = known !== undefined && known.text === previous ? known.points : codePoints(previous);
        // A surrogate pair split between the text and the delta is one code point once joined. The delta is looked at
        // first: reading the text's last character makes the engine flatten the whole text it has been growing.
        const joined = startsWithLowSurrogate(delta) && endsInHighSurrogate(previous);
        let text;
        let total;
        let truncated = false;
        if (points > MAX_FIELD_CHARS) {
            // Past the bound: a checkpoint folded with whole values. Cut once; at the bound from then on.
            text = headCodePoints(previous + delta, MAX_FIELD_CHARS);
            total = MAX_FIELD_CHARS;
            truncated = true;
        }
        else if (points === MAX_FIELD_CHARS) {
            // At the bound: the head is the text (with the rest of a pair it ends in), whatever else the delta brings.
            text = joined ? previous + delta.slice(0, 1) : previous;
            total = MAX_FIELD_CHARS;
            truncated = delta.length > (joined ? 1 : 0);
        }
        else {
            const added = codePoints(delta) - (joined ? 1 : 0);
            if (points + added <= MAX_FIELD_CHARS) {
                text = previous + delta;
                total = points + added;
            }
            else {
                // Crossing the bound: cut once.
                text = headCodePoints(previous + delta, MAX_FIELD_CHARS);
                total = MAX_FIELD_CHARS;
                truncated = true;
            }
        }
        // The field before the flag: a first delta past the bound adds both, in this order.
        content[field] = text;
        if (truncated)
            content["truncated"] = true;
        this.counted.set(name, { text, points: total });
    }
    bounded(content, field, value) {
        if (this.state.fullContent || this.state.retainContent || value.length <= MAX_FIELD_CHARS) {
            content[field] = value;
            return;
        }
        content[field] = headCodePoints(value, MAX_FIELD_CHARS);
        if (codePoints(value) > MAX_FIELD_CHARS)
            content["truncated"] = true;
    }
    put(key, kind, state, content, at) {
        const { items } = this.state;
        const position = `${this.state.attempt}-${this.state.sequence}`;
        const previous = items.get(key);
        const ordinal = previous?.ordinal ?? this.state.next++;
        items.set(key, {
            id: key,
            ordinal,
            kind,
            state,
            first_stream_id: previous?.first_stream_id ?? position,
            last_stream_id: position,
            started_at: previous?.started_at ?? at,
            ended_at: state === "completed" || state === "failed" ? at : null,
            content,
        });
        const group = content["responseGroup"];
        const failure = content["failure"];
        return {
            id: key,
            kind,
            state,
            ordinal,
            response_group: typeof group === "string" ? group : null,
            failure: isObject(failure) ? failure : null,
        };
    }
    /** When an event occurred: its `timestamp` (epoch milliseconds; an integer as Python has it, so `true` is 1 and
     * `false` 0), or the clock's time when it has none. */
    occurred(payload) {
        const timestamp = payload["timestamp"];
        const millis = typeof timestamp === "boolean" ? Number(timestamp) : timestamp;
        const known = typeof millis === "number" && Number.isInteger(millis) ? fromEpochMillis(millis) : null;
        return known ?? clockTime(this.state.clock);
    }
    id(kind, identity) {
        const last = this.lastId;
        if (last !== null && last.kind === kind && last.identity === identity)
            return last.key;
        const key = itemId(this.state.runId, kind, identity);
        this.lastId = { kind, identity, key };
        return key;
    }
}
function endsInHighSurrogate(text) {
    const unit = text.charCodeAt(text.length - 1);
    return unit >= 0xd800 && unit <= 0xdbff;
}
function startsWithLowSurrogate(text) {
    const unit = text.charCodeAt(0);
    return unit >= 0xdc00 && unit <= 0xdfff;
}
/** `str(value or "root")`: the scope a response group or memory evidence belongs to. */
function scopeOf(value) {
    return truthy(value) ? pyStr(value) : "root";
}
/** A streamed tool-call argument observation: the stream it continues and the text it appends. */
function streamedArguments(event) {
    if (event["name"] !== NAMES.partDelta)
        return null;
    const value = event["value"];
    const source = isObject(value) ? value["event"] : undefined;
    const delta = isObject(source) ? source["delta"] : undefined;
    if (!isObject(value) || !isObject(source) || !isObject(delta)) {
        throw new TypeError(`a ${NAMES.partDelta} observation without its source delta`);
    }
    const text = delta["args_delta"];
    if (delta["part_delta_kind"] !== "tool_call" || typeof text !== "string" || truthy(delta["tool_name_delta"])) {
        return null;
    }
    const stream = [
        NAMES.partDelta,
        value["thread_id"] ?? null,
        value["run_id"] ?? null,
        { ...source, delta: { ...delta, args_delta: null } },
    ];
    return { stream, text };
}
/** The held argument observation's value, as the item holds it: the path down to the argument text copied (later
 * deltas grow that text in the held event, and nothing else of it changes), the rest shared, so that a delta costs
 * what it adds, not what the arguments hold. */
function argumentsValue(event) {
    const value = event["value"] ?? null;
    const source = isObject(value) ? value["event"] : undefined;
    const delta = isObject(source) ? source["delta"] : undefined;
    if (!isObject(value) || !isObject(source) || !isObject(delta))
        return structuredClone(value);
    return { ...value, event: { ...source, delta: { ...delta } } };
}
function extendArguments(event, text) {
    const value = event["value"];
    const source = isObject(value) ? value["event"] : undefined;
    const delta = isObject(source) ? source["delta"] : undefined;
    if (isObject(delta))
        delta["args_delta"] = pyStr(delta["args_delta"]) + text;
}
