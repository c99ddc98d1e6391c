// The run viewer: a run list, and one run's display followed live from GET /v1/runs/{run_id}/display.
// No framework and no build step. Frames are read with a streaming fetch (EventSource cannot send the bearer
// token); after a dropped connection the stream resumes with Last-Event-ID, so nothing is missed or repeated.
"use strict";

const TOKEN_KEY = "a13n-stream-token";
const PREVIEW_CHARS = 2000;
const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem(TOKEN_KEY); }

function headers(extra) {
  const all = Object.assign({}, extra);
  if (token()) all.Authorization = "Bearer " + token();
  return all;
}

class NeedsToken extends Error {}

async function api(path, extra) {
  const response = await fetch(path, { headers: headers(extra) });
  if (response.status === 401) { askForToken(); throw new NeedsToken(); }
  return response;
}

function askForToken() {
  const form = $("token-form");
  form.hidden = false;
  $("token").focus();
}

function setConnection(text) { $("connection").textContent = text; }

function el(tag, attributes, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key === "class" || key === "href" || key === "type") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children || []) if (child) node.append(child);
  return node;
}

// Long content shows its first characters and a button for the rest.
function longText(tag, className, text) {
  const node = el(tag, { class: className });
  if (text.length <= PREVIEW_CHARS) { node.textContent = text; return [node]; }
  node.textContent = text.slice(0, PREVIEW_CHARS) + "…";
  const more = el("button", { type: "button", class: "more", text: "Show all (" + text.length + " characters)" });
  more.addEventListener("click", () => { node.textContent = text; more.remove(); });
  return [node, more];
}

function stateBadge(state) {
  return el("span", { class: "state", "data-state": state, text: state.replace("_", " ") });
}

function pretty(value) {
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch (_) { return value; }
  }
  return JSON.stringify(value, null, 2);
}

// ---- runs list -------------------------------------------------------------------------------------------

async function showRuns() {
  $("runs-view").hidden = false;
  document.title = "Runs · a13n-stream";
  for (;;) {
    try {
      const response = await api("/v1/runs?limit=1000");
      const page = await response.json();
      const rows = page.runs.map((run) => el("tr", {}, [
        el("td", {}, [el("a", { href: "/runs/" + encodeURIComponent(run.run_id), text: run.run_id })]),
        el("td", {}, [stateBadge(run.complete ? "completed" : "in_progress")]),
        el("td", { text: String(run.items) }),
        el("td", { text: run.updated_ms ? new Date(run.updated_ms).toLocaleString() : "" }),
      ]));
      $("runs").replaceChildren(...rows);
      $("runs-empty").hidden = rows.length > 0;
      setConnection("");
    } catch (error) {
      if (error instanceof NeedsToken) return;
      setConnection("host unreachable; retrying");
    }
    await sleep(5000);
  }
}

// ---- one run ---------------------------------------------------------------------------------------------

const items = new Map();       // id -> item JSON
const elements = new Map();    // id -> <li>
const scopes = new Map();      // subagent run id -> <ol> of its section

function render(item) {
  const content = item.content || {};
  const children = [];
  const header = el("header");
  let label = item.kind.replace("_", " ");
  if (item.kind === "text_message") label = content.role === "user" ? "User" : content.role === "system" ? "System" : "Assistant";
  if (item.kind === "reasoning_message") label = "Reasoning";
  if (item.kind === "tool_call") label = "Tool call " + (content.toolCallName || "");
  if (item.kind === "observation") label = content.type || content.name || "observation";
  header.append(el("span", { class: "kind", text: label }), stateBadge(item.state === "failed" || content.failure ? "failed" : item.state));
  if (item.kind === "text_message") {
    children.push(header, ...longText("div", "text", String(content.text || "")));
  } else if (item.kind === "reasoning_message") {
    const details = el("details", {}, [el("summary", {}, [header])]);
    details.append(...longText("div", "text", String(content.text || "")));
    children.push(details);
  } else if (item.kind === "tool_call") {
    const details = el("details", { open: true }, [el("summary", {}, [header])]);
    if (content.arguments !== undefined) details.append(el("div", { class: "label", text: "Arguments" }), ...longText("pre", "", pretty(content.arguments)));
    const result = content.result !== undefined ? content.result : content.result_parts !== undefined ? content.result_parts : content.value;
    if (result !== undefined) details.append(el("div", { class: "label", text: "Result" }), ...longText("pre", "", pretty(result)));
    if (content.failure) details.append(el("p", { class: "failure", text: "Failed: " + (content.failure.message || content.failure.code || "") }));
    children.push(details);
  } else {
    const details = el("details", {}, [el("summary", {}, [header])]);
    details.append(...longText("pre", "", pretty(content)));
    children.push(details);
  }
  const failed = item.state === "failed" || Boolean(content.failure);
  const li = el("li", {
    class: "item kind-" + item.kind,
    "data-item-id": item.id, "data-kind": item.kind, "data-state": failed ? "failed" : item.state,
    "data-ordinal": String(item.ordinal), "data-role": content.role || "",
  }, children);
  return li;
}

function insertByOrdinal(list, node, ordinal) {
  for (const child of list.children) {
    if (Number(child.dataset.ordinal) > ordinal) { list.insertBefore(node, child); return; }
  }
  list.append(node);
}

// The list an item belongs in: the root list, or its subagent run's section (nested under the run that
// started it, placed where its first item is).
function scopeList(item) {
  const run = item.content && item.content.subagentRunId;
  if (!run) return $("items");
  if (scopes.has(run)) return scopes.get(run);
  const list = el("ol", { class: "items" });
  const section = el("li", { class: "subagent", "data-ordinal": String(item.ordinal), "data-subagent": run }, [
    el("details", { open: true }, [el("summary", { text: "Subagent run " + run }), list]),
  ]);
  scopes.set(run, list);
  const parent = item.content.parentSubagentRunId;
  insertByOrdinal(parent && scopes.has(parent) ? scopes.get(parent) : $("items"), section, item.ordinal);
  return list;
}

function apply(frame) {
  const data = JSON.parse(frame.data);
  if (frame.event === "snapshot") {
    items.clear(); elements.clear(); scopes.clear(); $("items").replaceChildren();
  }
  for (const item of data.items || []) {
    items.set(item.id, item);
    const node = render(item);
    const old = elements.get(item.id);
    if (old) old.replaceWith(node); else insertByOrdinal(scopeList(item), node, item.ordinal);
    elements.set(item.id, node);
  }
  const state = $("run-state");
  if (frame.event === "end" && data.reason === "deleted") {
    // The run was deleted (DELETE or retention): what is shown is all there was; nothing of it is stored now.
    state.textContent = "deleted";
    state.dataset.state = "interrupted";
    return;
  }
  const complete = frame.event === "end" || data.complete;
  state.textContent = complete ? "completed" : "in progress";
  state.dataset.state = complete ? "completed" : "in_progress";
  $("run-count").textContent = items.size + " items";
}

// Server-Sent Events from a streaming response body.
async function* frames(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      const frame = { id: null, event: "message", data: "" };
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") frame.id = text;
        else if (field === "event") frame.event = text;
        else if (field === "data") frame.data += (frame.data ? "\n" : "") + text;
      }
      if (frame.data) yield frame;
    }
  }
}

async function follow(runId) {
  $("run-view").hidden = false;
  $("run-title").textContent = runId;
  document.title = runId + " · a13n-stream";
  let last = null;
  let pause = 250;
  for (;;) {
    try {
      const extra = { Accept: "text/event-stream" };
      if (last) extra["Last-Event-ID"] = last;
      const response = await api("/v1/runs/" + encodeURIComponent(runId) + "/display", extra);
      if (!response.ok) throw new Error("HTTP " + response.status);
      setConnection("live");
      pause = 250;
      for await (const frame of frames(response.body)) {
        apply(frame);
        if (frame.id) last = frame.id;
        if (frame.event === "end") { setConnection(JSON.parse(frame.data).reason === "deleted" ? "run deleted" : "run ended"); return; }
      }
    } catch (error) {
      if (error instanceof NeedsToken) return;
    }
    setConnection("reconnecting…");
    await sleep(pause);
    pause = Math.min(pause * 2, 5000);
  }
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

function start() {
  const path = location.pathname;
  if (path.startsWith("/runs/")) follow(decodeURIComponent(path.slice("/runs/".length)));
  else showRuns();
}

document.addEventListener("DOMContentLoaded", () => {
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    $("token-form").hidden = true;
    start();
  });
  start();
});
