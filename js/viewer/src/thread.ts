// A thread's page: every run of the thread, in the order of their first ingest, as one conversation followed live
// from `GET /v1/threads/{thread_id}/observed` (threadfollow.ts: one display per run). Each run is a header row (its
// id linking to its page, status, start time, duration, items) followed by its rows as the run page shows them:
// the conversation first, observations folded, one windowed list for the whole thread.

import { FollowError } from "../../display/src/follow.js";
import { authHeaders } from "./api.js";
import { byId, duration, el, fullTime, plural } from "./dom.js";
import { rows, streamingCalls, summarize, text, type Row, type Summary } from "./model.js";
import { renderRow, version, type RenderContext } from "./render.js";
import { estimate, rowFilter, type RunPageHooks } from "./run.js";
import { followThread, type ThreadRun } from "./threadfollow.js";
import { Throttle } from "./throttle.js";
import { WindowedList } from "./windowed.js";

/** A run's header row in the thread's list. */
interface RunHead {
  type: "run";
  key: string;
  runId: string;
  index: number;
  summary: Summary;
  /** `attempt-sequence` of the run's display. */
  position: string;
  deleted: boolean;
}

/** A row of a run, with the run's context (item times count from the run's start). */
interface RunRow {
  type: "row";
  key: string;
  row: Row;
  context: RenderContext;
}

type ThreadRow = RunHead | RunRow;

/** What the thread page keeps of one run it shows: the rows the reader opened, its start, its render context. */
interface RunView {
  open: Set<string>;
  startMs: number | null;
  context: RenderContext;
}

export function showThread(threadId: string, hooks: RunPageHooks): void {
  const view = byId("run-view");
  view.hidden = false;
  view.dataset["thread"] = threadId;
  byId("run-title").textContent = threadId;
  byId("run-figures").hidden = true;
  byId("thread-summary").hidden = false;
  document.title = `Thread ${threadId} · a13n-stream`;

  let runs: readonly ThreadRun[] = [];
  // What the page keeps of each run it shows, by the run's key (its id, and `#n` for the id ingested again: another
  // run, whose rows share the first's keys): the rows the reader opened, its start, its render context.
  const views = new Map<string, RunView>();
  const filtered = rowFilter();
  const filter = byId<HTMLInputElement>("filter");
  const showAll = byId<HTMLInputElement>("show-observations");

  function viewOf(runKey: string): RunView {
    const known = views.get(runKey);
    if (known !== undefined) return known;
    const open = new Set<string>();
    const view: RunView = {
      open,
      startMs: null,
      context: {
        get startMs() {
          return view.startMs;
        },
        opened: new Map<string, boolean>(),
        toggleFold(key: string) {
          if (open.has(key)) open.delete(key);
          else open.add(key);
          refresh();
        },
      },
    };
    views.set(runKey, view);
    return view;
  }

  const list = new WindowedList<ThreadRow>(byId("rows"), {
    key: (row) => row.key,
    version: (row) =>
      row.type === "run"
        ? `${row.summary.status}:${row.position}:${row.summary.startMs}:${row.summary.endMs}:${row.summary.items}:${row.deleted}`
        : `${version(row.row)}:${row.context.startMs ?? ""}`,
    estimate: (row) => (row.type === "run" ? 56 : estimate(row.row)),
    render: (row) => (row.type === "run" ? runHeader(row) : renderRow(row.row, row.context)),
  });

  // A long run's page renders less often rather than freezing as it streams in (throttle.ts).
  const renders = new Throttle(() => refresh());
  const schedule = () => {
    renders.request();
  };
  filter.addEventListener("input", schedule);
  showAll.addEventListener("change", schedule);
  document.addEventListener("keydown", (event) => {
    const target = event.target as HTMLElement;
    if (event.key === "/" && !target.closest("input, textarea, select")) {
      event.preventDefault();
      filter.focus();
    }
  });

  function refresh(): void {
    const query = filter.value.trim().toLowerCase();
    const shown: ThreadRow[] = [];
    let items = 0;
    let matched = 0;
    let observations = 0;
    const held = new Map<string, number>();
    runs.forEach((run, index) => {
      // A run id ingested again after a delete is a second run under the same id: its rows are keyed apart.
      const incarnation = held.get(run.runId) ?? 0;
      held.set(run.runId, incarnation + 1);
      const runKey = incarnation === 0 ? run.runId : `${run.runId}#${incarnation}`;
      const all = run.ended === "deleted" ? [] : run.display.items();
      const streaming = streamingCalls(all);
      const summary = summarize(all, run.ended === "complete", streaming);
      const view = viewOf(runKey);
      view.startMs = summary.startMs;
      items += all.length;
      observations += summary.observations;
      const position = run.display.position;
      shown.push({
        type: "run",
        key: `run:${runKey}`,
        runId: run.runId,
        index,
        summary,
        position: position ? `${position.attempt}-${position.sequence}` : "",
        deleted: run.ended === "deleted",
      });
      const { context, open } = view;
      const own = rows(all, { open, showAll: showAll.checked, streaming });
      const kept = query === "" ? own : filtered(own, query);
      matched += kept.filter((row) => row.type === "item").length;
      const rowKey = (key: string) => (incarnation === 0 ? key : `${key}#${incarnation}`);
      for (const row of kept) shown.push({ type: "row", key: rowKey(row.key), row, context });
    });

    const complete = runs.filter((run) => run.ended === "complete").length;
    // Each run's position and status, whether or not its header is in the window (tests and tools read it).
    view.dataset["progress"] = shown
      .filter((row): row is RunHead => row.type === "run")
      .map((head) => `${head.runId}@${head.position}:${head.deleted ? "deleted" : head.summary.status}`)
      .join(" ");
    view.dataset["runs"] = String(runs.length);
    view.dataset["completeRuns"] = String(complete);
    const summaryLine =
      runs.length === 0 ? "No run yet" : [plural(runs.length, "run"), ...ended(shown), plural(items, "item")].join(" · ");
    byId("thread-summary").textContent = summaryLine;
    // The toolbar's status: the thread's runs (a thread never ends: the page watches for more).
    const barStatus = byId("bar-status");
    barStatus.dataset["status"] = "waiting";
    barStatus.textContent = runs.length === 0 ? "waiting for a run" : `${plural(runs.length, "run")} · watching for more`;
    byId("filter-count").textContent = query === "" ? "" : `${plural(matched, "item")} match`;
    byId("observation-count").textContent = `Show all ${plural(observations, "observation")}`;

    const root = document.documentElement;
    const atBottom = window.scrollY > 0 && window.scrollY + window.innerHeight >= root.scrollHeight - 24;
    list.setRows(shown);
    byId("rows").dataset["rows"] = String(shown.length);
    const empty = byId("rows-empty");
    empty.hidden = shown.length > 0;
    empty.textContent = runs.length === 0 ? "Waiting for the thread's first run…" : "No item matches the filter.";
    if (atBottom) window.scrollTo(0, root.scrollHeight);
  }

  const connect = () => {
    const follower = followThread(`/v1/threads/${encodeURIComponent(threadId)}/observed`, {
      headers: authHeaders(),
      onChange: (current) => {
        runs = current;
        hooks.live();
        schedule();
      },
      onConnect: () => hooks.live(),
      onRetry: (error, delayMs) => {
        const why = error instanceof Error ? error.message : text(String(error));
        // The notice at the foot counts down to the next try.
        hooks.setConnection(delayMs > 0 ? "reconnecting…" : "catching up…");
        if (delayMs > 0) hooks.offline(delayMs);
        console.debug("a13n-stream viewer:", why);
      },
    });
    follower.done.catch((error: unknown) => {
      if (error instanceof FollowError && error.status === 401) {
        hooks.needsToken(connect);
        return;
      }
      hooks.setConnection(error instanceof Error ? error.message : String(error));
    });
  };
  refresh();
  connect();
}

/** How the thread's runs that ended did, each state once with its count (`1 complete`, `2 failed`): a failed or
 * cancelled run is not counted as complete. */
function ended(shown: readonly ThreadRow[]): string[] {
  const counts = new Map<string, number>();
  for (const row of shown) {
    if (row.type !== "run" || row.deleted || row.summary.status === "running" || row.summary.status === "waiting") continue;
    const word = STATUS_WORDS[row.summary.status];
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts].map(([word, count]) => `${count} ${word}`);
}

const STATUS_WORDS: Record<Summary["status"], string> = {
  waiting: "waiting",
  running: "running",
  complete: "complete",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
};

/** A run's header in the thread: which run, its status and its time. */
function runHeader(head: RunHead): HTMLElement {
  const { summary } = head;
  const status = head.deleted ? "deleted" : summary.status;
  const times: Node[] = [];
  if (summary.startMs !== null) {
    times.push(
      el("time", {
        class: "sub",
        datetime: new Date(summary.startMs).toISOString(),
        title: fullTime(summary.startMs),
        text: `started ${new Date(summary.startMs).toLocaleString()}`,
      }),
    );
    if (summary.endMs !== null) times.push(el("span", { class: "sub", text: ` · ${duration(summary.endMs - summary.startMs)}` }));
  }
  return el(
    "article",
    {
      class: "row run-separator",
      "data-key": head.key,
      "data-row": "run",
      "data-run": head.runId,
      "data-status": status,
      "data-position": head.position,
      "data-items": String(summary.items),
      "data-depth": "0",
      tabindex: "-1",
      "aria-label": `Run ${head.index + 1}: ${head.runId}, ${status}`,
    },
    [
      el("span", { class: "run-number", text: `Run ${head.index + 1}` }),
      " ",
      el("a", { href: `/runs/${encodeURIComponent(head.runId)}`, class: "run-link", text: head.runId }),
      " ",
      el("span", { class: "status", "data-status": status, text: head.deleted ? "deleted" : STATUS_WORDS[summary.status] }),
      " ",
      ...times,
      el("span", { class: "sub", text: ` · ${plural(summary.items, "item")}` }),
    ],
  );
}
