// A display checkpoint read into the fold's state, and the fold's state written back as one: checked field by
// field, so that a bad checkpoint is refused at restore, naming the field, never half-applied later.
import { DisplayError } from "./errors.js";
import { CustomEventAssembler, DEFAULT_MAX_BYTES, DEFAULT_MAX_PENDING } from "./fragments.js";
import { formatUtc } from "./time.js";
import { isObject } from "./values.js";
const KINDS = ["text_message", "reasoning_message", "tool_call", "observation"];
// The fields each object of a checkpoint may have: the reference's models refuse any other, as the host does.
const SNAPSHOT_FIELDS = ["items", "continuation"];
const CONTINUATION_FIELDS = [
    "run_id", "position", "next_ordinal", "full_content", "response_groups", "memory_sources", "arguments", "fragments",
    "observer",
];
const ITEM_FIELDS = [
    "id", "ordinal", "kind", "state", "first_stream_id", "last_stream_id", "started_at", "ended_at", "content",
    "content_refs",
];
const STATES = ["in_progress", "completed", "interrupted", "failed"];
/** Read a checkpoint (an object or its JSON text). */
export function readCheckpoint(checkpoint, retainContent, clock) {
    let snapshot;
    try {
        snapshot = typeof checkpoint === "string" ? JSON.parse(checkpoint) : structuredClone(checkpoint);
    }
    catch (error) {
        throw new DisplayError("checkpoint", `not JSON: ${error.message}`);
    }
    const root = fields(snapshot, "", SNAPSHOT_FIELDS);
    const list = root["items"];
    if (!Array.isArray(list))
        throw fault("items", "a list of items");
    const continuation = fields(root["continuation"], "continuation", CONTINUATION_FIELDS);
    const items = new Map();
    list.forEach((entry, index) => {
        const item = readItem(entry, `items[${index}]`);
        items.set(item.id, item);
    });
    const position = fields(continuation["position"], "continuation.position", ["attempt", "sequence"]);
    const state = {
        runId: string(continuation["run_id"], "continuation.run_id"),
        attempt: count(position["attempt"], "continuation.position.attempt", 0),
        sequence: count(position["sequence"], "continuation.position.sequence", 0),
        next: count(continuation["next_ordinal"], "continuation.next_ordinal", 1),
        fullContent: optionalBoolean(continuation["full_content"], "continuation.full_content"),
        retainContent,
        items,
        responseGroups: stringMap(continuation["response_groups"], "continuation.response_groups"),
        memorySources: sourcesMap(continuation["memory_sources"], "continuation.memory_sources"),
        arguments: readArguments(continuation["arguments"], "continuation.arguments"),
        assembler: readFragments(continuation["fragments"], "continuation.fragments"),
        clock,
    };
    return { state, observer: continuation["observer"] ?? null };
}
/** The checkpoint of a fold state; `observer` as the caller says. */
export function writeCheckpoint(state, observer) {
    // Written with `fromEntries`, which defines every key as a property (a key `__proto__` included).
    const memory = Object.fromEntries(state.memorySources);
    const continuation = {
        run_id: state.runId,
        position: { attempt: state.attempt, sequence: state.sequence },
        next_ordinal: state.next,
        full_content: state.fullContent,
        response_groups: Object.fromEntries(state.responseGroups),
        ...(state.memorySources.size > 0 ? { memory_sources: memory } : {}),
        arguments: state.arguments,
        fragments: state.assembler.export(),
        observer,
    };
    return structuredClone({ items: [...state.items.values()], continuation });
}
function readItem(value, path) {
    const item = fields(value, path, ITEM_FIELDS);
    const kind = item["kind"];
    const state = item["state"];
    if (typeof kind !== "string" || !KINDS.includes(kind))
        throw fault(`${path}.kind`, `one of ${KINDS.join(", ")}`);
    if (typeof state !== "string" || !STATES.includes(state))
        throw fault(`${path}.state`, `one of ${STATES.join(", ")}`);
    const ended = item["ended_at"];
    const read = {
        id: string(item["id"], `${path}.id`),
        ordinal: count(item["ordinal"], `${path}.ordinal`, 1),
        kind: kind,
        state: state,
        first_stream_id: string(item["first_stream_id"], `${path}.first_stream_id`),
        last_stream_id: string(item["last_stream_id"], `${path}.last_stream_id`),
        started_at: dateTime(item["started_at"], `${path}.started_at`),
        ended_at: ended === undefined || ended === null ? null : dateTime(ended, `${path}.ended_at`),
        content: object(item["content"], `${path}.content`),
    };
    const refs = item["content_refs"];
    if (refs !== undefined && Object.keys(object(refs, `${path}.content_refs`)).length > 0) {
        read.content_refs = refs;
    }
    return read;
}
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):?(\d{2})(?::(\d{2}))?)?$/;
/** Milliseconds since the epoch of a UTC civil time (any year from 1 on, unlike `Date.UTC`'s two-digit years). */
function utcMillis(year, month, day, seconds) {
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    return date.getTime() + seconds * 1000;
}
const EARLIEST = utcMillis(1, 1, 1, 0);
const LATEST = utcMillis(9999, 12, 31, 86_399);
/** A date-time as the host's checkpoint reader takes one (ISO 8601: a date, a time to the minute at least, an
 * optional fraction, and `Z` or an offset of hours and minutes, with seconds if any; without one, UTC), within years
 * 1 to 9999 in UTC; written back as the host writes it: in UTC, to the second, with microseconds when there are
 * any (a longer fraction cut to six digits), and `Z`. */
function dateTime(value, path) {
    const text = string(value, path);
    const parts = DATE_TIME.exec(text);
    const field = (index) => Number(parts?.[index] ?? 0);
    const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map(field);
    const [offsetHours, offsetMinutes, offsetSeconds] = [9, 10, 11].map(field);
    const fields = parts !== null &&
        month >= 1 &&
        month <= 12 &&
        day >= 1 &&
        day <= new Date(utcMillis(year, month + 1, 0, 0)).getUTCDate() &&
        hour <= 23 &&
        minute <= 59 &&
        second <= 59 &&
        offsetHours <= 23 &&
        offsetMinutes <= 59 &&
        offsetSeconds <= 59;
    const offset = (parts?.[8] === "-" ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds);
    const instant = utcMillis(year, month, day, hour * 3600 + minute * 60 + second - offset);
    if (!fields || instant < EARLIEST || instant > LATEST) {
        throw fault(path, `an ISO 8601 date-time of years 1 to 9999, not ${JSON.stringify(text).slice(0, 80)}`);
    }
    const micros = BigInt((parts?.[7] ?? "").slice(0, 6).padEnd(6, "0"));
    return formatUtc(BigInt(instant) * 1000n + micros);
}
function readArguments(value, path) {
    if (value === undefined || value === null)
        return null;
    const held = fields(value, path, ["stream", "key", "at", "sequence", "event", "size"]);
    const event = held["event"];
    if (held["stream"] === undefined)
        throw fault(`${path}.stream`, "the stream's identity (present, even null)");
    return {
        stream: held["stream"],
        key: string(held["key"], `${path}.key`),
        at: dateTime(held["at"], `${path}.at`),
        sequence: count(held["sequence"], `${path}.sequence`, 0),
        event: event === undefined || event === null ? null : object(event, `${path}.event`),
        size: count(held["size"], `${path}.size`, 0),
    };
}
function readFragments(value, path) {
    const fragments = value === undefined ? {} : fields(value, path, ["pending", "gap", "max_bytes", "max_pending"]);
    const pending = [];
    for (const [identity, entry] of Object.entries(object(orDefault(fragments["pending"], {}), `${path}.pending`))) {
        const at = `${path}.pending.${identity}`;
        const assembly = fields(entry, at, ["count", "parts", "size"]);
        const parts = orDefault(assembly["parts"], []);
        if (!Array.isArray(parts))
            throw fault(`${at}.parts`, "a list of strings");
        const bad = parts.findIndex((part) => typeof part !== "string");
        if (bad >= 0)
            throw fault(`${at}.parts[${bad}]`, "a string");
        pending.push([identity, {
                count: count(assembly["count"], `${at}.count`, 0),
                parts: parts,
                size: count(orDefault(assembly["size"], 0), `${at}.size`, 0),
            }]);
    }
    try {
        return new CustomEventAssembler({
            pending: Object.fromEntries(pending),
            gap: optionalBoolean(fragments["gap"], `${path}.gap`),
            max_bytes: count(orDefault(fragments["max_bytes"], DEFAULT_MAX_BYTES), `${path}.max_bytes`, 1),
            max_pending: count(orDefault(fragments["max_pending"], DEFAULT_MAX_PENDING), `${path}.max_pending`, 1),
        });
    }
    catch (error) {
        throw error instanceof DisplayError ? error : fault(path, error.message);
    }
}
function stringMap(value, path) {
    const map = new Map();
    if (value === undefined)
        return map;
    for (const [key, entry] of Object.entries(object(value, path)))
        map.set(key, string(entry, `${path}.${key}`));
    return map;
}
function sourcesMap(value, path) {
    const map = new Map();
    if (value === undefined)
        return map;
    for (const [scope, list] of Object.entries(object(value, path))) {
        if (!Array.isArray(list))
            throw fault(`${path}.${scope}`, "a list of memory sources");
        map.set(scope, list.map((entry, index) => object(entry, `${path}.${scope}[${index}]`)));
    }
    return map;
}
function object(value, path) {
    if (!isObject(value))
        throw fault(path || "(checkpoint)", "an object");
    return value;
}
function string(value, path) {
    if (typeof value !== "string")
        throw fault(path, "a string");
    return value;
}
function count(value, path, least) {
    if (typeof value === "number" && Number.isInteger(value) && value >= least && !Number.isSafeInteger(value)) {
        // Past 2^53 JavaScript's numbers skip integers: a position there could not be counted on.
        throw fault(path, `an integer of at least ${least} and at most 2^53 - 1 (JavaScript's exact integers)`);
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < least) {
        throw fault(path, `an integer of at least ${least}`);
    }
    return value;
}
function optionalBoolean(value, path) {
    if (value === undefined)
        return false;
    if (typeof value !== "boolean")
        throw fault(path, "true or false");
    return value;
}
/** `object(value, path)`, refused if it has a field `names` does not name. */
function fields(value, path, names) {
    const read = object(value, path);
    for (const key of Object.keys(read)) {
        if (!names.includes(key)) {
            const at = path === "" ? key : `${path}.${key}`;
            throw new DisplayError("checkpoint", `is no field of a checkpoint (the fields are ${names.join(", ")})`, { path: at });
        }
    }
    return read;
}
/** A field's value, or `fallback` when the field is missing (a `null` is a value, which the host refuses where it
 * wants another type). */
function orDefault(value, fallback) {
    return value === undefined ? fallback : value;
}
function fault(path, expected) {
    return new DisplayError("checkpoint", `must be ${expected}`, { path });
}
