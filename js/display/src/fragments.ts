// CUSTOM events split into ordered frames for transport (`a13n.stream.fragment`), put back together. A lost,
// repeated or malformed frame never produces a partial event: the assembly is dropped and `gap` is set.

import type { FragmentState, Json, JsonObject, PendingAssembly } from "./types.js";

/** The CUSTOM event name of a transport frame. */
export const FRAGMENT_EVENT_NAME = "a13n.stream.fragment";
/** The default bound on the bytes of all pending frames. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** The default bound on the number of events being reassembled at once. */
export const DEFAULT_MAX_PENDING = 8;

// The optional CUSTOM fields a reassembled event carries, by their wire name and their Python name.
const OPTIONAL_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ["timestamp", "timestamp"],
  ["rawEvent", "raw_event"],
  ["metadata", "metadata"],
  ["subagentRunId", "subagent_run_id"],
];

const encoder = new TextEncoder();

/** What a CUSTOM event became: itself, a whole event put back together, or nothing yet. */
export type Accepted = { kind: "passed"; event: JsonObject } | { kind: "assembled"; event: JsonObject } | null;

export class CustomEventAssembler {
  private readonly pending: Map<string, PendingAssembly>;
  private size: number;
  private gap: boolean;
  private readonly maxBytes: number;
  private readonly maxPending: number;

  constructor(state: FragmentState) {
    if (!(state.max_bytes >= 1 && state.max_pending >= 1)) {
      throw new RangeError("fragments: custom event assembly bounds must be positive");
    }
    this.pending = new Map(
      Object.entries(state.pending).map(([id, part]) => [id, { ...part, parts: [...part.parts] }]),
    );
    this.size = [...this.pending.values()].reduce((sum, part) => sum + part.size, 0);
    this.gap = state.gap;
    this.maxBytes = state.max_bytes;
    this.maxPending = state.max_pending;
  }

  /** The state to carry in a checkpoint, detached from this assembler. */
  export(): FragmentState {
    // `fromEntries` defines every identity as a property (`__proto__` included).
    const pending = Object.fromEntries([...this.pending].map(([identity, part]) => [identity, { ...part, parts: [...part.parts] }]));
    return { pending, gap: this.gap, max_bytes: this.maxBytes, max_pending: this.maxPending };
  }

  /** Take one CUSTOM event: any other than a frame passes through. */
  accept(event: JsonObject): Accepted {
    if (event["name"] !== FRAGMENT_EVENT_NAME) return { kind: "passed", event };
    const value = event["value"];
    if (!isObject(value)) return this.lost();
    const { id, index, count, data } = value;
    if (typeof id !== "string" || typeof data !== "string" || !isInt(index) || !isInt(count)) return this.lost();
    const at = Number(index);
    const total = Number(count);
    if (!(at >= 0 && at < total)) return this.lost();
    if (at === 0) {
      this.discard(id);
      while (this.pending.size >= this.maxPending) {
        const oldest = this.pending.keys().next().value;
        if (oldest !== undefined) this.discard(oldest);
        this.gap = true;
      }
      this.pending.set(id, { count: total, parts: [], size: 0 });
    }
    const assembly = this.pending.get(id);
    const bytes = encoder.encode(data).length;
    if (
      assembly === undefined ||
      assembly.count !== total ||
      assembly.parts.length !== at ||
      this.size + bytes > this.maxBytes
    ) {
      this.discard(id);
      return this.lost();
    }
    assembly.parts.push(data);
    assembly.size += bytes;
    this.size += bytes;
    if (assembly.parts.length !== total) return null;
    this.discard(id);
    const whole = reassemble(assembly.parts.join(""));
    return whole === null ? this.lost() : { kind: "assembled", event: whole };
  }

  private lost(): null {
    this.gap = true;
    return null;
  }

  private discard(identity: string): void {
    const assembly = this.pending.get(identity);
    if (assembly !== undefined) {
      this.pending.delete(identity);
      this.size -= assembly.size;
    }
  }
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A Python `int` (a bool is one). */
function isInt(value: Json | undefined): boolean {
  return typeof value === "boolean" || (typeof value === "number" && Number.isInteger(value));
}

/** The CUSTOM event a frame sequence encodes, as the reference validates and dumps it; null if it is not one. */
function reassemble(text: string): JsonObject | null {
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return null;
  }
  if (!isObject(parsed)) return null;
  const rest: JsonObject = { ...parsed };
  const kind = take(rest, "type");
  if (kind !== undefined && kind !== "CUSTOM") return null;
  const name = take(rest, "name");
  if (typeof name !== "string" || name === FRAGMENT_EVENT_NAME || !("value" in rest)) return null;
  const value = take(rest, "value") ?? null;
  const out: JsonObject = { type: "CUSTOM" };
  for (const [key, alias] of OPTIONAL_FIELDS) {
    const field = key in rest ? take(rest, key) : take(rest, alias);
    if (field === undefined || field === null) continue;
    if (!fieldValid(key, field)) return null;
    out[key] = field;
  }
  out["name"] = name;
  out["value"] = value;
  // Unknown fields follow, as the model keeps extra fields (`defineProperty`: a key `__proto__` is data too).
  for (const [key, field] of Object.entries(rest)) {
    Object.defineProperty(out, key, { value: field, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function fieldValid(key: string, field: Json): boolean {
  if (key === "timestamp") return typeof field === "number" && Number.isSafeInteger(field);
  if (key === "metadata") return isObject(field);
  if (key === "subagentRunId") return typeof field === "string";
  return true;
}

function take(object: JsonObject, key: string): Json | undefined {
  const value = object[key];
  delete object[key];
  return value;
}
