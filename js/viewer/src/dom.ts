// Building DOM nodes from data without ever parsing data as markup: text goes in as text nodes, attributes through
// `setAttribute`, and links only to http(s) addresses.

export type Child = Node | string | null | undefined | false;

/** An element with attributes (`text` sets its text; `null`/`undefined`/`false` values are left out). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number | boolean | null | undefined> = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** A link when `url` is an http(s) address, else the address as plain text. */
export function safeLink(url: string, text = url): Node {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") {
      return el("a", { href: parsed.href, rel: "noopener noreferrer nofollow", target: "_blank", text });
    }
  } catch {
    // not an absolute address: shown as text
  }
  return document.createTextNode(text);
}

/** Text cut to `limit` characters with an ellipsis. */
export function excerpt(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** A duration in words: `850 ms`, `4.2 s`, `3 min 5 s`, `2 h 4 min`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** An offset from the run's start: `+12 ms`, `+1.25 s`, `+3:05`, `+1:02:03`. */
export function offset(ms: number): string {
  if (!Number.isFinite(ms)) return "";
  const sign = ms < 0 ? "−" : "+";
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(2)} s`;
  const seconds = Math.floor(abs / 1000);
  const pad = (value: number) => String(value).padStart(2, "0");
  if (seconds < 3600) return `${sign}${Math.floor(seconds / 60)}:${pad(seconds % 60)}`;
  return `${sign}${Math.floor(seconds / 3600)}:${pad(Math.floor((seconds % 3600) / 60))}:${pad(seconds % 60)}`;
}

/** A time as the reader's locale writes it, with milliseconds, and the UTC instant. */
export function fullTime(at: number): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return "";
  const local = date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    fractionalSecondDigits: 3,
  } as Intl.DateTimeFormatOptions);
  return `${local} (${date.toISOString()})`;
}

/** An integer with thousands separators. */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

export function plural(value: number, one: string, many = `${one}s`): string {
  return `${count(value)} ${value === 1 ? one : many}`;
}
