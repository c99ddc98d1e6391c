// One row of the run page as DOM: a message, reasoning, a tool call, a failure, a subagent's header, a folded
// group of observations, or one observation. Everything from the data goes in as text.
import { el, excerpt, fullTime, offset, plural, safeLink } from "./dom.js";
import { codeBlock, renderMarkdown } from "./markdown.js";
import { failed, harnessEvent, isObject, scopeState, text, time } from "./model.js";
/** Characters of a long text shown before "Show all". */
const PREVIEW_CHARS = 3000;
export function renderRow(row, context) {
    switch (row.type) {
        case "fold":
            return foldRow(row, context);
        case "subagent":
            return subagentRow(row, context);
        case "item":
            return itemRow(row, context);
    }
}
/** A fingerprint of what a row shows: a row is rebuilt only when it changes. */
export function version(row) {
    switch (row.type) {
        case "fold":
            return `${row.open}:${row.items.length}:${row.items[row.items.length - 1]?.last_stream_id ?? ""}`;
        case "subagent": {
            const { started, finished, failed: error } = row.scope;
            return `${row.scope.name}:${started?.id ?? ""}:${finished?.id ?? ""}:${error?.id ?? ""}`;
        }
        case "item":
            return `${row.item.last_stream_id}:${row.item.state}:${row.item.ended_at ?? ""}`;
    }
}
function shell(row, attributes, children) {
    const node = el("article", { class: `row depth`, "data-key": row.key, "data-depth": String(row.depth), tabindex: "-1", ...attributes }, children);
    node.style.setProperty("--depth", String(row.depth));
    return node;
}
function stamp(item, context) {
    const at = time(item.started_at);
    const ended = time(item.ended_at);
    const relative = at !== null && context.startMs !== null ? offset(at - context.startMs) : "";
    const title = at === null ? "" : ended !== null && ended !== at ? `${fullTime(at)} → ${fullTime(ended)}` : fullTime(at);
    return el("time", { class: "at", datetime: item.started_at, title, text: relative });
}
function badge(state, label = state.replace("_", " ")) {
    return el("span", { class: "badge", "data-state": state, text: label });
}
/** `value` shown in `node` by `show`: whole when short, else `preview` and a button that shows the rest. */
function shownWhole(node, value, preview, show) {
    if (value.length <= PREVIEW_CHARS) {
        show(node, value);
        return [node];
    }
    show(node, preview);
    const more = el("button", { type: "button", class: "more", text: `Show all (${value.length.toLocaleString("en-US")} characters)` });
    more.addEventListener("click", () => {
        show(node, value);
        more.remove();
    });
    return [node, more];
}
/** Long text: its first characters and a button for the rest. */
function longText(tag, className, value) {
    const node = el(tag, { class: className, dir: "auto" });
    return shownWhole(node, value, `${value.slice(0, PREVIEW_CHARS)}…`, (into, text) => (into.textContent = text));
}
/** Model text rendered as markdown (see markdown.ts): up to its first lines, and a button for the rest. */
function markdownText(value) {
    const lineEnd = value.lastIndexOf("\n", PREVIEW_CHARS);
    const preview = value.slice(0, lineEnd > PREVIEW_CHARS / 2 ? lineEnd : PREVIEW_CHARS);
    return shownWhole(el("div", { class: "text md" }), value, preview, (into, text) => into.replaceChildren(...renderMarkdown(text)));
}
/** A JSON value (or JSON text) laid out for reading. */
export function pretty(value) {
    const parsed = parsedJson(value);
    if (parsed === undefined)
        return "";
    return typeof parsed === "string" ? parsed : JSON.stringify(parsed, null, 2);
}
/** The most strings of several lines shown as their own blocks under a value. */
const MULTILINE_BLOCKS = 8;
/**
 * The strings of several lines inside a JSON value (or JSON text), each as its lines (a file's content, a
 * command's output), under the field that holds it: JSON shows them as one line of `\n` escapes.
 */
function multilineValues(value) {
    const found = [];
    const visit = (node, path, depth) => {
        if (found.length >= MULTILINE_BLOCKS || depth > 4 || node === undefined || node === null)
            return;
        if (typeof node === "string") {
            if (node.includes("\n") && path !== "")
                found.push([path, node]);
            return;
        }
        if (Array.isArray(node))
            node.forEach((child, index) => visit(child, `${path}[${index}]`, depth + 1));
        else if (isObject(node))
            for (const [key, child] of Object.entries(node))
                visit(child, path === "" ? key : `${path}.${key}`, depth + 1);
    };
    visit(parsedJson(value), "", 0);
    return found.flatMap(([path, lines]) => [
        el("div", { class: "label field-label", text: path }),
        lines.length > PREVIEW_CHARS * 4 ? longText("pre", "code", lines) : codeBlock(lines),
    ]).flat();
}
/** A JSON text's value (a value that is not JSON text as it is). */
function parsedJson(value) {
    if (typeof value !== "string")
        return value;
    const trimmed = value.trim();
    if (!trimmed.startsWith("{") && !trimmed.startsWith("["))
        return value;
    try {
        return JSON.parse(trimmed);
    }
    catch {
        return value;
    }
}
/** A JSON value (or JSON text) on one line, for a preview. */
function compact(value) {
    const parsed = parsedJson(value);
    if (parsed === undefined)
        return "";
    return typeof parsed === "string" ? parsed : JSON.stringify(parsed);
}
/** A `<details>` whose open state survives re-rendering. */
function details(context, key, openByDefault, summary, body, className = "") {
    const open = context.opened.get(key) ?? openByDefault;
    const node = el("details", { class: className, open }, [el("summary", {}, summary), ...body]);
    node.addEventListener("toggle", () => context.opened.set(key, node.open));
    return node;
}
function head(children) {
    return el("header", { class: "head" }, children);
}
function itemRow(row, context) {
    const { item } = row;
    const isFailed = failed(item);
    const attributes = {
        "data-row": row.role === "observation" ? "observation" : "conversation",
        "data-item-id": item.id,
        "data-kind": item.kind,
        "data-state": isFailed ? "failed" : item.state,
        "data-ordinal": String(item.ordinal),
    };
    if (row.role === "observation")
        return shell(row, { ...attributes, class: "row observation", "aria-label": `Observation ${observationName(item.content)}` }, observation(row, context));
    if (row.role === "failure")
        return shell(row, { ...attributes, class: "row failure-row", "data-role": "failure", "aria-label": "Run failed" }, runError(item, context));
    if (row.role === "shown")
        return shell(row, { ...attributes, class: "row message shown", "data-role": "context", "aria-label": "Context" }, shownObservation(item, context));
    if (row.role === "streaming") {
        const name = row.call?.toolName ?? "tool";
        return shell(row, { ...attributes, class: "row tool", "data-role": "tool", "data-streaming": "true", "aria-label": `Tool call ${name}, arguments streaming` }, streamingArguments(row, context));
    }
    switch (item.kind) {
        case "text_message":
            return shell(row, { ...attributes, class: "row message", "data-role": text(item.content["role"]) || "assistant", "aria-label": `${roleLabel(text(item.content["role"]))} message` }, message(item, context));
        case "reasoning_message":
            return shell(row, { ...attributes, class: "row message reasoning", "data-role": "reasoning", "aria-label": "Reasoning" }, reasoning(row, context));
        case "tool_call":
            return shell(row, { ...attributes, class: `row tool${isFailed ? " failed" : ""}`, "data-role": "tool", "aria-label": `Tool call ${text(item.content["toolCallName"]) || ""}${isFailed ? ", failed" : ""}` }, toolCall(row, context));
        default:
            return shell(row, { ...attributes, class: "row observation" }, observation(row, context));
    }
}
function roleLabel(role) {
    if (role === "user")
        return "User";
    if (role === "system")
        return "System";
    if (role === "developer")
        return "Developer";
    return "Assistant";
}
function message(item, context) {
    const content = item.content;
    const role = text(content["role"]) || "assistant";
    const body = [];
    const media = content["input_media"];
    if (isObject(media))
        body.push(mediaLine(media));
    const value = content["text"];
    // What a model wrote is markdown; what a person or the host wrote is shown as written.
    if (value !== undefined && value !== null)
        body.push(...(role === "assistant" ? markdownText(text(value)) : longText("div", "text", text(value))));
    if (content["truncated"] === true)
        body.push(el("p", { class: "note", text: "The text was cut by the host's size bound." }));
    const memory = content["memory_sources"];
    if (Array.isArray(memory) && memory.length > 0)
        body.push(memoryLine(memory));
    const source = text(content["input_source"]);
    return [
        head([
            el("span", { class: "who", text: roleLabel(role) }),
            source && source !== "user" ? el("span", { class: "tag", text: source }) : null,
            item.state !== "completed" ? badge(item.state) : null,
            stamp(item, context),
        ]),
        ...body,
    ];
}
function mediaLine(media) {
    const kind = text(media["kind"]) || "media";
    const url = text(media["url"]);
    const type = text(media["media_type"]);
    return el("p", { class: "media" }, [`${kind}${type ? ` (${type})` : ""}: `, url ? safeLink(url) : "(no address)"]);
}
function memoryLine(sources) {
    const words = sources.filter(isObject).map((source) => {
        const records = Array.isArray(source["records"]) ? source["records"].length : 0;
        const files = Array.isArray(source["files"]) ? source["files"].length : 0;
        const held = [records ? plural(records, "record") : "", files ? plural(files, "file") : ""].filter(Boolean).join(", ");
        return `${text(source["memory"]) || text(source["kind"])} (${[text(source["status"]), held].filter(Boolean).join(", ")})`;
    });
    return el("p", { class: "note", text: `Memory: ${words.join("; ")}` });
}
function reasoning(row, context) {
    const { item } = row;
    const value = text(item.content["text"]);
    return [
        details(context, `${row.key}:reasoning`, false, [
            el("span", { class: "who", text: "Reasoning" }),
            el("span", { class: "preview", text: excerpt(value, 120) }),
            item.state !== "completed" ? badge(item.state) : null,
            stamp(item, context),
        ], markdownText(value), "reasoning-body"),
    ];
}
function toolResult(content) {
    if (content["result"] !== undefined)
        return { label: "Result", value: content["result"] };
    if (content["value"] !== undefined && content["value"] !== null) {
        return { label: content["retry"] === true || content["outcome"] === "retried" ? "Retry prompt" : "Value", value: content["value"] };
    }
    return null;
}
/** A tool call whose arguments are still streaming: its name, how much has arrived, and the latest of it. */
function streamingArguments(row, context) {
    const args = row.call?.args ?? null;
    const summary = [
        el("span", { class: "tool-name", text: row.call?.toolName ?? "tool" }),
        el("span", { class: "args-preview", text: args === null ? "arguments streaming" : `arguments streaming · ${plural(args.length, "character")}` }),
        badge("in_progress", "streaming"),
        stamp(row.item, context),
    ];
    const body = args === null
        ? [el("p", { class: "note", text: "The arguments so far are past the size a display shows while they stream." })]
        : [el("div", { class: "label", text: "Arguments so far (the latest)" }), el("pre", { class: "code", text: args.length > 400 ? `…${args.slice(-400)}` : args })];
    return [details(context, `${row.key}:tool`, false, summary, body, "tool-body")];
}
function toolCall(row, context) {
    const { item } = row;
    const content = item.content;
    const name = text(content["toolCallName"]) || "tool";
    const args = content["arguments"];
    const argsText = args === undefined ? "" : compact(args);
    const result = toolResult(content);
    const failure = content["failure"];
    const isFailed = failed(item);
    const retried = content["retry"] === true || content["outcome"] === "retried";
    const state = isFailed ? "failed" : item.state;
    const summary = [
        el("span", { class: "tool-name", text: name }),
        el("span", { class: "args-preview", text: `(${excerpt(argsText, 90)})` }),
        result && !isFailed ? el("span", { class: "result-preview", text: `→ ${excerpt(compact(result.value), 90)}` }) : null,
        retried ? el("span", { class: "tag", text: "retried" }) : null,
        badge(state, state === "in_progress" ? "running" : state.replace("_", " ")),
        stamp(item, context),
    ];
    const body = [];
    if (args !== undefined) {
        body.push(el("div", { class: "label", text: content["arguments_complete"] === false ? "Arguments (streaming)" : "Arguments" }));
        body.push(...longText("pre", "code", pretty(args)), ...multilineValues(args));
    }
    if (result !== null) {
        body.push(el("div", { class: "label", text: result.label }), ...longText("pre", "code", pretty(result.value)), ...multilineValues(result.value));
    }
    const parts = content["result_parts"];
    if (Array.isArray(parts))
        body.push(el("div", { class: "label", text: "Result" }), resultParts(parts));
    const images = content["tool_images"];
    if (Array.isArray(images) && images.length > 0) {
        body.push(el("div", { class: "label", text: "Images" }), el("ul", { class: "links" }, images.filter(isObject).map((image) => el("li", {}, [safeLink(text(image["url"]))]))));
    }
    if (content["tool_image_unavailable"] === true)
        body.push(el("p", { class: "note", text: "An image of the result is not available." }));
    const edit = content["applied_edit"];
    if (isObject(edit)) {
        body.push(el("div", { class: "label", text: `Edit of ${text(edit["file_path"])}` }));
        body.push(el("pre", { class: "code removed", text: text(edit["before"]) }), el("pre", { class: "code added", text: text(edit["after"]) }));
    }
    const apps = content["mcp_apps"];
    if (Array.isArray(apps) && apps.length > 0) {
        body.push(el("p", { class: "note", text: `Apps: ${apps.map((app) => (isObject(app) ? text(app["name"]) : text(app))).join(", ")}` }));
    }
    if (content["truncated"] === true)
        body.push(el("p", { class: "note", text: "The value was cut by the host's size bound." }));
    if (body.length === 0)
        body.push(el("p", { class: "note", text: item.state === "in_progress" ? "Waiting for arguments…" : "No arguments or result." }));
    const out = [details(context, `${row.key}:tool`, false, summary, body, "tool-body")];
    if (isFailed) {
        const words = isObject(failure) ? [text(failure["message"]), text(failure["code"])].filter(Boolean).join(" · ") : "";
        out.push(el("p", { class: "failure", role: "note" }, [el("strong", { text: retried ? "Failed, retried: " : "Failed: " }), words || "the tool call failed"]));
    }
    return out;
}
function resultParts(parts) {
    const list = el("ul", { class: "parts" });
    for (const part of parts) {
        if (!isObject(part)) {
            list.append(el("li", {}, [el("pre", { class: "code", text: pretty(part) })]));
            continue;
        }
        if (part["type"] === "text") {
            list.append(el("li", {}, [el("pre", { class: "code", text: pretty(part["text"]) })]));
            continue;
        }
        const source = part["source"];
        const url = isObject(source) ? text(source["value"]) : "";
        const mime = isObject(source) ? text(source["mimeType"]) : "";
        list.append(el("li", { class: "media" }, [`${text(part["type"]) || "part"}${mime ? ` (${mime})` : ""}: `, url ? safeLink(url) : pretty(part)]));
    }
    return list;
}
function runError(item, context) {
    const words = [text(item.content["message"]), text(item.content["code"])].filter(Boolean).join(" · ");
    return [
        head([el("span", { class: "who", text: "Run failed" }), badge("failed"), stamp(item, context)]),
        el("p", { class: "failure", role: "note" }, [words || "The run ended with an error."]),
    ];
}
function shownObservation(item, context) {
    const name = text(item.content["name"]);
    const event = harnessEvent(item.content);
    if (name.startsWith("a13n.context.")) {
        const label = name.endsWith("compaction_summary") ? "Context compacted" : "Handoff summary";
        const summary = event ? text(event["summary"]) : "";
        return [head([el("span", { class: "who", text: label }), stamp(item, context)]), ...longText("div", "text", summary || "(omitted)")];
    }
    const contentValue = event?.["content"];
    const body = [];
    if (isObject(contentValue))
        body.push(mediaLine(contentValue));
    else
        body.push(...longText("div", "text", text(contentValue)));
    const source = event ? text(event["source"]) : "";
    return [head([el("span", { class: "who", text: roleLabel(event ? text(event["role"]) : "system") }), source ? el("span", { class: "tag", text: source }) : null, stamp(item, context)]), ...body];
}
function subagentRow(row, context) {
    const { scope } = row;
    const state = scopeState(scope);
    const error = scope.failed;
    const started = scope.started ?? scope.items[0] ?? null;
    const children = [
        head([
            el("span", { class: "who", text: `Subagent ${scope.name ?? ""}`.trim() }),
            el("code", { class: "run-id", text: scope.runId }),
            badge(state, state === "running" ? "running" : state),
            started ? stamp(started, context) : null,
        ]),
    ];
    if (error !== null) {
        const words = [text(error.content["message"]), text(error.content["code"])].filter(Boolean).join(" · ");
        children.push(el("p", { class: "failure", role: "note" }, [el("strong", { text: "Failed: " }), words || "the subagent failed"]));
    }
    return shell(row, { class: `row subagent${state === "failed" ? " failed" : ""}`, "data-row": "subagent", "data-subagent": scope.runId, "data-state": state, "aria-label": `Subagent ${scope.name ?? scope.runId}, ${state}` }, children);
}
function foldRow(row, context) {
    const names = [];
    for (const item of row.items) {
        const label = observationName(item.content);
        if (!names.includes(label))
            names.push(label);
        if (names.length > 4)
            break;
    }
    const list = names.length > 4 ? `${names.slice(0, 4).join(", ")}, …` : names.join(", ");
    const button = el("button", {
        type: "button",
        class: "fold-toggle",
        "aria-expanded": row.open ? "true" : "false",
        "data-count": String(row.items.length),
    }, [
        el("span", { class: "chevron", "aria-hidden": "true", text: row.open ? "▾" : "▸" }),
        `${row.open ? "Hide" : "Show"} ${plural(row.items.length, "observation")}`,
    ]);
    button.addEventListener("click", () => context.toggleFold(row.key));
    return shell(row, { class: "row fold", "data-row": "fold", "aria-label": plural(row.items.length, "folded observation") }, [button, el("span", { class: "fold-names", text: list })]);
}
/** An observation's short name: the AG-UI type, or the Harness name without its `a13n.` prefix. */
export function observationName(content) {
    const type = content["type"];
    if (typeof type === "string")
        return type;
    const name = text(content["name"]);
    return name.startsWith("a13n.") ? name.slice(5) : name || "observation";
}
/** A few words on what an observation says. */
export function observationGist(content) {
    const event = harnessEvent(content);
    if (event === null) {
        const type = content["type"];
        if (type === "RUN_FINISHED") {
            const outcome = content["outcome"];
            return isObject(outcome) ? text(outcome["type"]) : "";
        }
        const value = content["value"];
        return isObject(value) && value["omitted"] === true ? "(too large: omitted)" : excerpt(text(value ?? ""), 140);
    }
    const payload = event["payload"];
    if (isObject(payload)) {
        if (payload["type"] === "usage_report" && Array.isArray(payload["records"])) {
            let input = 0;
            let output = 0;
            for (const record of payload["records"]) {
                const usage = isObject(record) ? record["request_usage"] : undefined;
                if (isObject(usage)) {
                    input += typeof usage["input_tokens"] === "number" ? usage["input_tokens"] : 0;
                    output += typeof usage["output_tokens"] === "number" ? usage["output_tokens"] : 0;
                }
            }
            return `${input} in · ${output} out tokens`;
        }
        const words = [payload["type"], payload["phase"], payload["action"], payload["tool_name"], payload["subagent"]].filter((value) => typeof value === "string");
        if (words.length > 0)
            return words.join(" · ");
    }
    const part = event["part"];
    if (isObject(part))
        return [text(part["part_kind"]), text(part["tool_name"])].filter(Boolean).join(" · ");
    const delta = event["delta"];
    if (isObject(delta))
        return [text(delta["part_delta_kind"]), excerpt(text(delta["args_delta"] ?? delta["content_delta"] ?? ""), 60)].filter(Boolean).join(" · ");
    if (typeof event["content"] === "string")
        return `${text(event["source"])}: ${excerpt(event["content"], 120)}`;
    return excerpt(text(event), 140);
}
function observation(row, context) {
    const { item } = row;
    return [
        details(context, `${row.key}:observation`, false, [
            el("span", { class: "obs-name", text: observationName(item.content) }),
            el("span", { class: "preview", text: observationGist(item.content) }),
            stamp(item, context),
        ], longText("pre", "code", JSON.stringify(item.content, null, 2)), "obs-body"),
    ];
}
