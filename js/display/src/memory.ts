// Which memories a context observation says were delivered: payload-free evidence that a message's end reports.
// Evidence that is missing or malformed gives nothing, never an empty list.

import type { Json, JsonObject } from "./types.js";

const STATUSES = ["recalled", "failed", "timeout", "full", "changes", "unchanged", "omitted", "unavailable"];
// Statuses that must list their records or files.
const NEED_SOURCES = ["recalled", "full", "changes", "unchanged", "omitted"];

/** The memory sources of a `memory_recall` or `memory_context` payload, in the reference's model layout. */
export function memorySources(payload: JsonObject): JsonObject[] | null {
  const kind = payload["type"] === "memory_recall" ? "record" : payload["type"] === "memory_context" ? "file" : null;
  const memories = payload["memories"];
  if (kind === null || !Array.isArray(memories)) return null;
  const statusKey = kind === "record" ? "recall" : "context";
  const listKey = kind === "record" ? "records" : "files";
  const sources: JsonObject[] = [];
  for (const memory of memories) {
    if (!isObject(memory)) return null;
    const status = memory[statusKey];
    if (typeof status !== "string") return null;
    if (NEED_SOURCES.includes(status) && !(listKey in memory)) return null;
    if (!STATUSES.includes(status)) return null;
    const name = memory["memory"];
    const memoryId = optionalString(memory["memory_id"]);
    const records = list(memory["records"], record);
    const files = list(memory["files"], file);
    const cursor = optionalString(memory["cursor"]);
    const truncated = boolean(memory["sources_truncated"]);
    if (typeof name !== "string" || memoryId === undefined || records === null || files === null) return null;
    if (cursor === undefined || truncated === null) return null;
    sources.push({
      kind,
      memory: name,
      memory_id: memoryId,
      status,
      records,
      files,
      cursor,
      sources_truncated: truncated,
    });
  }
  return sources;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string or null; undefined when it is neither. */
function optionalString(value: Json | undefined): string | null | undefined {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : undefined;
}

/** A flag as the model's lax `bool` reads it (see `laxBool`); false when absent. */
function boolean(value: Json | undefined): boolean | null {
  return value === undefined ? false : laxBool(value);
}

const FALSE_WORDS = ["0", "off", "f", "false", "n", "no"];
const TRUE_WORDS = ["1", "on", "t", "true", "y", "yes"];

/** Pydantic's lax `bool`: a boolean, the number 0 or 1, or one of its words in any ASCII case; null otherwise. */
function laxBool(value: Json): boolean | null {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value !== "string") return null;
  const word = value.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  return TRUE_WORDS.includes(word) ? true : FALSE_WORDS.includes(word) ? false : null;
}

// White space as Pydantic trims it from text (Unicode's White_Space; not U+FEFF, which `String.trim` removes).
const SPACE = "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const EDGE_SPACE = new RegExp(`^${SPACE}+|${SPACE}+$`, "g");
// An integer as Python's `int()` spells one, with at most a fraction of zeros.
const INT_TEXT = /^([+-]?)([0-9](?:_?[0-9])*)(?:\.0+)?$/;

/**
 * Pydantic's lax `int`: an integral number, a boolean (1 or 0), or text that is such an integer once trimmed
 * (`" +1_0.00 "` is 10); null otherwise, and for text beyond what a number holds exactly.
 */
function laxInt(value: Json): number | null {
  if (typeof value === "boolean") return value ? 1 : 0;
  // Only what a JSON number here holds exactly (Pydantic also refuses floats from 2**63 on).
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : null;
  if (typeof value !== "string") return null;
  const match = INT_TEXT.exec(value.replace(EDGE_SPACE, ""));
  if (match === null) return null;
  const magnitude = Number(match[2]!.replaceAll("_", ""));
  if (!Number.isSafeInteger(magnitude)) return null;
  return match[1] === "-" ? -magnitude : magnitude;
}

function list(value: Json | undefined, item: (object: JsonObject) => JsonObject | null): JsonObject[] | null {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return null;
  const out: JsonObject[] = [];
  for (const entry of value) {
    const parsed = isObject(entry) ? item(entry) : null;
    if (parsed === null) return null;
    out.push(parsed);
  }
  return out;
}

function onlyKeys(object: JsonObject, keys: string[]): boolean {
  return Object.keys(object).every((key) => keys.includes(key));
}

function record(object: JsonObject): JsonObject | null {
  const { id, sha256 } = object;
  if (!onlyKeys(object, ["id", "sha256"]) || typeof id !== "string" || typeof sha256 !== "string") return null;
  return { id, sha256 };
}

function file(object: JsonObject): JsonObject | null {
  const { path, sha256 } = object;
  if (!onlyKeys(object, ["path", "sha256", "bytes", "truncated"])) return null;
  const truncated = boolean(object["truncated"]);
  if (typeof path !== "string" || typeof sha256 !== "string" || truncated === null) return null;
  // The model's `int` at least 0, read in its lax mode (`"10"` and `10.0` are 10); `-0` is 0.
  const bytes = object["bytes"] === undefined ? null : laxInt(object["bytes"]);
  if (bytes === null || bytes < 0) return null;
  return { path, sha256, bytes: bytes === 0 ? 0 : bytes, truncated };
}
