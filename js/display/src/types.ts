// The display checkpoint and the live entries as they travel between a host and a browser: the Python
// reference's `DisplaySnapshot`, `Item`, `ItemRef` and `Observed`, field for field.

/** Any JSON value, as `JSON.parse` returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** What an item shows. */
export type ItemKind = "text_message" | "reasoning_message" | "tool_call" | "observation";
/** Where an item is in its life. */
export type ItemState = "in_progress" | "completed" | "interrupted" | "failed";

/** One display item: a message, a tool call, or an observation. */
export interface Item {
  id: string;
  /** The item's place in the run's display: 1 for the first item, dense after it. */
  ordinal: number;
  kind: ItemKind;
  state: ItemState;
  /** The stream position (`attempt-sequence`) of the first and the latest event that changed the item. */
  first_stream_id: string;
  last_stream_id: string;
  /** When the item's first event occurred, and the latest event that left it completed or failed (UTC). */
  started_at: string;
  ended_at: string | null;
  content: JsonObject;
  /** Host-owned values, present only when a host set some. */
  content_refs?: JsonObject;
}

/** The item a live event changed, and its state after the event. */
export interface ItemRef {
  id: string;
  kind: ItemKind;
  state: ItemState;
  ordinal: number | null;
  response_group: string | null;
  failure: JsonObject | null;
  memory_sources?: JsonObject[];
}

/** One AG-UI event at its stream sequence, with the item it changed: what the host's fold hands out. */
export interface Observed {
  sequence: number;
  event: JsonObject;
  item: ItemRef | null;
}

/** A position in a run's stream. */
export interface StreamPosition {
  attempt: number;
  sequence: number;
}

/** Streamed tool-call arguments so far and the one observation item that holds them. */
export interface HeldArguments {
  stream: Json;
  key: string;
  at: string;
  /** The sequence of the last delta folded in: only the next event continues the item. */
  sequence: number;
  /** The whole observation, until its value outgrows the observation limit. */
  event: JsonObject | null;
  size: number;
}

/** A CUSTOM event being reassembled from its frames. */
export interface PendingAssembly {
  count: number;
  parts: string[];
  size: number;
}

/** Incomplete fragmented CUSTOM events. */
export interface FragmentState {
  pending: { [identity: string]: PendingAssembly };
  gap: boolean;
  max_bytes: number;
  max_pending: number;
}

/** The fold's state at a cut: what continuing needs besides the items. */
export interface DisplayContinuation {
  run_id: string;
  position: StreamPosition;
  next_ordinal: number;
  full_content: boolean;
  response_groups: { [scope: string]: string };
  memory_sources?: { [scope: string]: JsonObject[] };
  arguments: HeldArguments | null;
  fragments: FragmentState;
  /** The host's conversion state. A browser converts nothing: this is carried as restored. */
  observer: Json;
}

/** A display checkpoint: the items and the continuation. */
export interface DisplaySnapshot {
  items: Item[];
  continuation: DisplayContinuation;
}
