// One run's page: the display followed live from `GET /v1/runs/{run_id}/observed` by the js/display package's
// `follow()` (a checkpoint, then the fold's own entries; it resumes with Last-Event-ID after a lost connection,
// a host restart included), shown as a conversation under a header of the run's figures.
import { follow, FollowError } from "../../display/src/follow.js";
import { authHeaders } from "./api.js";
import { byId, count, duration, el, fullTime, plural } from "./dom.js";
import { failed, rows, searchText, streamingCalls, summarize, text } from "./model.js";
import { renderRow, version } from "./render.js";
import { Throttle } from "./throttle.js";
import { WindowedList } from "./windowed.js";
const STATUS_WORDS = {
    waiting: "waiting",
    running: "running",
    complete: "complete",
    failed: "failed",
    cancelled: "cancelled",
    interrupted: "interrupted",
};
export function showRun(runId, hooks) {
    byId("run-view").hidden = false;
    byId("run-title").textContent = runId;
    document.title = `${runId} · a13n-stream`;
    let display = null;
    let ended = false;
    let deleted = false;
    // Whether the host has stored nothing of this run (asked once the stream opens on an empty display).
    let unknown = false;
    let asked = false;
    let startMs = null;
    const open = new Set();
    const opened = new Map();
    const filter = byId("filter");
    const showAll = byId("show-observations");
    // The item a link names (`#item=<id>`): focused once it has arrived.
    let linked = linkedItem();
    let lastQuery = "";
    let currentRows = [];
    const context = {
        get startMs() {
            return startMs;
        },
        opened,
        toggleFold(key) {
            if (open.has(key))
                open.delete(key);
            else
                open.add(key);
            refresh();
        },
    };
    const list = new WindowedList(byId("rows"), {
        key: (row) => row.key,
        version: (row) => `${version(row)}:${startMs ?? ""}`,
        estimate,
        render: (row) => renderRow(row, context),
    });
    // A long run's page renders less often rather than freezing as it streams in (throttle.ts).
    const renders = new Throttle(() => refresh());
    const schedule = () => {
        renders.request();
    };
    filter.addEventListener("input", schedule);
    showAll.addEventListener("change", schedule);
    document.addEventListener("keydown", (event) => {
        const target = event.target;
        if (event.key === "/" && !target.closest("input, textarea, select")) {
            event.preventDefault();
            filter.focus();
        }
    });
    const filtered = rowFilter();
    byId("jump-latest").addEventListener("click", () => list.focusIndex(list.length - 1));
    // The row a reader focuses is the page's address, so a link or a reload comes back to it (a group of folded
    // observations by its first, which a link opens).
    byId("rows").addEventListener("focusin", (event) => {
        const key = event.target.closest("[data-key]")?.dataset["key"];
        const row = key === undefined ? undefined : currentRows[list.indexOf(key) ?? -1];
        const id = row?.type === "item" ? row.item.id : row?.type === "fold" ? row.items[0]?.id : undefined;
        if (id)
            history.replaceState(null, "", `#item=${encodeURIComponent(id)}`);
    });
    // "N failed" (in the header, and "Next failed" in the toolbar) steps through the failed calls and failures.
    const nextFailed = () => {
        const failedRows = currentRows.flatMap((row, index) => (row.type === "item" && (failed(row.item) || row.role === "failure") ? [index] : []));
        if (failedRows.length === 0)
            return;
        const at = list.activeKey === null ? -1 : (list.indexOf(list.activeKey) ?? -1);
        const next = failedRows.find((index) => index > at) ?? failedRows[0];
        list.focusIndex(next, true);
        byId("next-failed").textContent = `Failed ${count(failedRows.indexOf(next) + 1)} of ${count(failedRows.length)} ↓`;
    };
    byId("run-tools").addEventListener("click", (event) => {
        if (event.target.closest(".failed-count"))
            nextFailed();
    });
    byId("next-failed").addEventListener("click", nextFailed);
    function refresh() {
        const items = display?.items() ?? [];
        // Both the summary and the rows read the calls whose arguments stream: found once a render.
        const streaming = streamingCalls(items);
        const summary = summarize(items, ended, streaming);
        startMs = summary.startMs;
        header(summary);
        if (deleted)
            showDeleted();
        showThreadLink(items);
        const position = display?.position;
        byId("run-view").dataset["position"] = position ? `${position.attempt}-${position.sequence}` : "";
        byId("run-view").dataset["complete"] = String(ended);
        const query = filter.value.trim().toLowerCase();
        const all = rows(items, { open, showAll: showAll.checked, streaming });
        const shown = query === "" ? all : filtered(all, query);
        const count = byId("filter-count");
        count.textContent = query === "" ? "" : `${plural(shown.filter((row) => row.type === "item").length, "item")} match`;
        const root = document.documentElement;
        const atBottom = window.scrollY > 0 && window.scrollY + window.innerHeight >= root.scrollHeight - 24;
        // The row the reader chose stays on screen when the filter changes (a match found, then the filter cleared).
        const chosen = query !== lastQuery ? list.activeKey : null;
        lastQuery = query;
        currentRows = shown;
        list.setRows(shown);
        const chosenAt = chosen === null ? undefined : list.indexOf(chosen);
        if (chosenAt !== undefined)
            list.reveal(chosenAt);
        if (linked !== null) {
            const at = shown.findIndex((row) => row.type === "item" && row.item.id === linked);
            const folded = shown.find((row) => row.type === "fold" && row.items.some((item) => item.id === linked));
            if (at >= 0) {
                linked = null;
                list.focusIndex(at, true);
            }
            else if (folded !== undefined && !open.has(folded.key)) {
                // The row is among folded observations: their group opens, and the next render finds it.
                open.add(folded.key);
                schedule();
            }
        }
        byId("rows").dataset["rows"] = String(shown.length);
        const empty = byId("rows-empty");
        empty.hidden = shown.length > 0;
        empty.textContent = deleted
            ? "This run was deleted."
            : items.length === 0
                ? unknown
                    ? "This host has no run with this id yet: the page shows it as soon as its first lines arrive."
                    : "Waiting for the run's first events…"
                : "No item matches the filter.";
        byId("rows-unknown").dataset["shown"] = String(unknown && items.length === 0 && !deleted);
        if (atBottom && !ended && chosenAt === undefined)
            window.scrollTo(0, root.scrollHeight);
    }
    function header(summary) {
        const word = STATUS_WORDS[summary.status];
        showStatus(summary.status, word, summary.statusDetail, `${word} · ${plural(summary.items, "item")}`);
        const nextFailedButton = byId("next-failed");
        nextFailedButton.hidden = summary.failedToolCalls === 0;
        if (nextFailedButton.textContent === "")
            nextFailedButton.textContent = "Next failed ↓";
        const started = byId("run-started");
        started.textContent = summary.startMs === null ? "" : `· started ${new Date(summary.startMs).toLocaleString()}`;
        started.title = summary.startMs === null ? "" : fullTime(summary.startMs);
        const length = byId("run-duration");
        if (summary.startMs !== null && summary.endMs !== null) {
            const ms = summary.endMs - summary.startMs;
            length.textContent = duration(ms);
            length.dataset["ms"] = String(ms);
            length.title = `${fullTime(summary.startMs)} → ${fullTime(summary.endMs)}`;
        }
        else {
            length.textContent = "–";
            length.dataset["ms"] = "";
            length.title = "";
        }
        const tokens = byId("run-tokens");
        const { input, output, total, source } = summary.tokens;
        tokens.dataset["input"] = String(input);
        tokens.dataset["output"] = String(output);
        tokens.dataset["total"] = String(total);
        tokens.replaceChildren(source === "none" ? "–" : count(total), source === "none" ? "" : el("span", { class: "sub", text: ` ${count(input)} in · ${count(output)} out` }));
        tokens.title =
            source === "result"
                ? "From the run's result (subagents' usage reports added)"
                : source === "reports"
                    ? "From the usage reports so far"
                    : "No usage reported";
        const tools = byId("run-tools");
        tools.dataset["total"] = String(summary.toolCalls);
        tools.dataset["failed"] = String(summary.failedToolCalls);
        tools.replaceChildren(count(summary.toolCalls), summary.failedToolCalls > 0
            ? el("button", { type: "button", class: "sub failed-count", title: "Go to the next failed call", text: ` ${count(summary.failedToolCalls)} failed` })
            : "");
        const items = byId("run-items");
        items.dataset["total"] = String(summary.items);
        items.textContent = count(summary.items);
        byId("observation-count").textContent = `Show all ${plural(summary.observations, "observation")}`;
    }
    function showDeleted() {
        showStatus("deleted", "deleted", "The run was deleted from the host", "deleted");
    }
    /** The run's status in the header (its word, and why in full) and in the toolbar (`toolbar`). */
    function showStatus(state, word, detail, toolbar) {
        const status = byId("run-status");
        status.dataset["status"] = state;
        status.textContent = word;
        status.title = detail;
        const why = byId("run-status-detail");
        why.textContent = detail;
        why.title = detail;
        const barStatus = byId("bar-status");
        barStatus.dataset["status"] = state;
        barStatus.textContent = toolbar;
    }
    /** Ask the host, once, whether it has stored anything of this run (a page of its items is `404` when not): only
     * when the display the stream began with is empty, and for the least the host can answer. */
    async function askStored() {
        if (asked)
            return;
        asked = true;
        try {
            const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/items?limit=1`, { headers: authHeaders() });
            void response.body?.cancel();
            unknown = response.status === 404 && (display?.items().length ?? 0) === 0;
            schedule();
        }
        catch {
            asked = false; // the host is away: asked again on the next change
        }
    }
    const connect = () => {
        const follower = follow(`/v1/runs/${encodeURIComponent(runId)}/observed`, {
            headers: authHeaders(),
            onChange: (current) => {
                display = current;
                hooks.live();
                if (current.items().length === 0)
                    void askStored();
                schedule();
            },
            onConnect: () => hooks.live(),
            onRetry: (error, delayMs) => {
                const why = error instanceof Error ? error.message : text(String(error));
                // The notice at the foot counts down to the next try.
                hooks.setConnection(delayMs > 0 ? "reconnecting…" : "catching up…");
                if (delayMs > 0)
                    hooks.offline(delayMs);
                console.debug("a13n-stream viewer:", why);
            },
        });
        follower.done.then((current) => {
            display = current;
            ended = true;
            unknown = false;
            hooks.offline(null);
            hooks.setConnection("run ended");
            schedule();
        }, (error) => {
            if (error instanceof FollowError && error.status === 401) {
                hooks.needsToken(connect);
                return;
            }
            if (error instanceof FollowError && error.status === 410) {
                // The run is gone: none of it is shown, as the thread page shows a deleted run.
                ended = true;
                deleted = true;
                display = null;
                hooks.setConnection("run deleted");
                schedule();
                return;
            }
            hooks.setConnection(error instanceof Error ? error.message : String(error));
        });
    };
    connect();
}
/** The item id the page's address names (`#item=<id>`), if any. */
function linkedItem() {
    const match = /^#item=(.+)$/.exec(location.hash);
    if (match === null)
        return null;
    try {
        return decodeURIComponent(match[1]);
    }
    catch {
        return null;
    }
}
/** A filter over rows (its cache of what items say lives as long as the filter). */
export function rowFilter() {
    const searchCache = new Map();
    function matches(item, query) {
        const at = `${item.last_stream_id}:${item.state}`;
        let cached = searchCache.get(item.id);
        if (cached === undefined || cached.at !== at) {
            cached = { at, text: searchText(item) };
            searchCache.set(item.id, cached);
        }
        return cached.text.includes(query);
    }
    /** The rows a filter leaves: matching items, and the subagent headers above them. */
    return function filtered(all, query) {
        const out = [];
        const headers = [];
        for (const row of all) {
            while (headers.length > 0 && headers[headers.length - 1].depth >= row.depth)
                headers.pop();
            if (row.type === "fold")
                continue;
            if (row.type === "subagent") {
                const own = `subagent ${row.scope.name ?? ""} ${row.scope.runId}`.toLowerCase().includes(query);
                if (own) {
                    out.push(...headers.splice(0), row);
                }
                else {
                    headers.push(row);
                }
                continue;
            }
            if (matches(row.item, query))
                out.push(...headers.splice(0), row);
        }
        return out;
    };
}
/** The thread of a run: the `threadId` of its root run's first event that names one. */
export function threadOf(items) {
    for (const item of items) {
        const thread = item.content["threadId"];
        if (typeof thread === "string" && thread !== "" && item.content["subagentRunId"] === undefined)
            return thread;
    }
    return null;
}
/** The run page's link to its thread's page, once the run's first event named the thread. */
function showThreadLink(items) {
    const link = byId("run-thread");
    if (!link.hidden)
        return;
    const thread = threadOf(items);
    if (thread === null)
        return;
    link.href = `/threads/${encodeURIComponent(thread)}`;
    link.textContent = `Thread ${thread}`;
    link.dataset["thread"] = thread;
    link.hidden = false;
}
/** A row's height before it is measured. */
export function estimate(row) {
    if (row.type === "fold")
        return 34;
    if (row.type === "subagent")
        return 52;
    if (row.role === "observation")
        return 34;
    const item = row.item;
    if (item.kind === "reasoning_message" || item.kind === "tool_call")
        return 52;
    const value = item.content["text"];
    const length = typeof value === "string" ? Math.min(value.length, 3000) : 0;
    return 60 + Math.ceil(length / 95) * 22;
}
