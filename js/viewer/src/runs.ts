// The run list, newest first: `GET /v1/runs?order=newest&after=&limit=`, a page at a time (the page's address
// holds `after` and `limit`, so the browser's back button and a shared link keep the page), refreshed every few
// seconds.

import { getJson, NeedsToken } from "./api.js";
import { byId, count, el, fullTime } from "./dom.js";

interface RunSummary {
  run_id: string;
  journal_len: number;
  position: string;
  complete: boolean;
  items: number;
  updated_ms: number;
  thread_id: string | null;
  /** How the run ended (`null` while it runs, and for runs a host completed before it kept this). */
  outcome: RunOutcome | null;
}

type RunOutcome = "completed" | "failed" | "cancelled" | "interrupted";

/** A run's state in the list: its badge's `data-state` and its word. */
function runState(run: RunSummary): [state: string, word: string] {
  if (!run.complete) return ["in_progress", "running"];
  switch (run.outcome) {
    case "failed":
    case "cancelled":
    case "interrupted":
      return [run.outcome, run.outcome];
    case "completed":
      return ["completed", "complete"];
    default:
      // Completed on a host that did not keep outcomes yet: how it ended is not known here.
      return ["ended", "ended"];
  }
}

interface RunsPage {
  runs: RunSummary[];
  next_after: string | null;
}

export interface RunsPageHooks {
  setConnection(text: string): void;
  needsToken(retry: () => void): void;
  offline(retryInMs: number | null): void;
}

const DEFAULT_LIMIT = 50;
const REFRESH_MS = 5000;

export async function showRuns(hooks: RunsPageHooks): Promise<void> {
  byId("runs-view").hidden = false;
  document.title = "Runs · a13n-stream";
  const params = new URLSearchParams(location.search);
  // A page's place in the newest-first order (an address of an older viewer, which listed by id, starts over).
  const given = params.get("after");
  const after = given !== null && /^\d+$/.test(given) ? given : null;
  const asked = Number(params.get("limit"));
  const limit = Number.isInteger(asked) && asked >= 1 && asked <= 1000 ? asked : DEFAULT_LIMIT;
  for (;;) {
    try {
      const query = new URLSearchParams({ order: "newest", limit: String(limit) });
      if (after) query.set("after", after);
      const page = await getJson<RunsPage>(`/v1/runs?${query}`);
      render(page, after, limit);
      hooks.setConnection("");
      hooks.offline(null);
    } catch (error) {
      if (error instanceof NeedsToken) {
        hooks.needsToken(() => void showRuns(hooks));
        return;
      }
      hooks.setConnection("host unreachable; retrying");
      hooks.offline(REFRESH_MS);
    }
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
  }
}

function ago(ms: number): string {
  const seconds = Math.round((Date.now() - ms) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}

function render(page: RunsPage, after: string | null, limit: number): void {
  const rows = page.runs.map((run) => {
    const [state, word] = runState(run);
    return el("tr", { "data-run": run.run_id }, [
      el("td", { class: "run" }, [el("a", { href: `/runs/${encodeURIComponent(run.run_id)}`, text: run.run_id })]),
      el("td", { class: "state" }, [el("span", { class: "badge", "data-state": state, text: word })]),
      el("td", { class: "thread" }, [
        run.thread_id ? el("a", { href: `/threads/${encodeURIComponent(run.thread_id)}`, text: run.thread_id }) : "–",
      ]),
      el("td", { class: "number", "data-label": run.items === 1 ? "item" : "items", text: count(run.items) }),
      el("td", { class: "number", "data-label": run.journal_len === 1 ? "line" : "lines", text: count(run.journal_len) }),
      el("td", {}, [
        run.updated_ms
          ? el("time", { datetime: new Date(run.updated_ms).toISOString(), title: fullTime(run.updated_ms), text: ago(run.updated_ms) })
          : "",
      ]),
    ]);
  });
  byId("runs").replaceChildren(...rows);
  const empty = byId("runs-empty");
  empty.hidden = rows.length > 0;
  if (after !== null) empty.textContent = "No more runs.";
  const pager = byId("runs-pager");
  const links: Node[] = [];
  if (after !== null) links.push(el("a", { href: limit === DEFAULT_LIMIT ? "/" : `/?limit=${limit}`, text: "← First page" }));
  if (page.next_after !== null) {
    const next = new URLSearchParams({ after: page.next_after });
    if (limit !== DEFAULT_LIMIT) next.set("limit", String(limit));
    links.push(el("a", { href: `/?${next}`, rel: "next", id: "runs-next", text: "Next page →" }));
  }
  pager.replaceChildren(...links);
  pager.hidden = links.length === 0;
}
