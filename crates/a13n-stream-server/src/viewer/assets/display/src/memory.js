// Which memories a context observation says were delivered: payload-free evidence that a message's end reports.
// Evidence that is missing or malformed gives nothing, never an empty list.
const STATUSES = ["recalled", "failed", "timeout", "full", "changes", "unchanged", "omitted", "unavailable"];
// Statuses that must list their records or files.
const NEED_SOURCES = ["recalled", "full", "changes", "unchanged", "omitted"];
/** The memory sources of a `memory_recall` or `memory_context` payload, in the reference's model layout. */
export function memorySources(payload) {
    const kind = payload["type"] === "memory_recall" ? "record" : payload["type"] === "memory_context" ? "file" : null;
    const memories = payload["memories"];
    if (kind === null || !Array.isArray(memories))
        return null;
    const statusKey = kind === "record" ? "recall" : "context";
    const listKey = kind === "record" ? "records" : "files";
    const sources = [];
    for (const memory of memories) {
        if (!isObject(memory))
            return null;
        const status = memory[statusKey];
        if (typeof status !== "string")
            return null;
        if (NEED_SOURCES.includes(status) && !(listKey in memory))
            return null;
        if (!STATUSES.includes(status))
            return null;
        const name = memory["memory"];
        const memoryId = optionalString(memory["memory_id"]);
        const records = list(memory["records"], record);
        const files = list(memory["files"], file);
        const cursor = optionalString(memory["cursor"]);
        const truncated = boolean(memory["sources_truncated"]);
        if (typeof name !== "string" || memoryId === undefined || records === null || files === null)
            return null;
        if (cursor === undefined || truncated === null)
            return null;
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
function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
/** A string or null; undefined when it is neither. */
function optionalString(value) {
    if (value === undefined || value === null)
        return null;
    return typeof value === "string" ? value : undefined;
}
function boolean(value) {
    if (value === undefined)
        return false;
    if (typeof value === "boolean")
        return value;
    if (value === 0 || value === 1)
        return value === 1;
    return null;
}
function list(value, item) {
    if (value === undefined)
        return [];
    if (!Array.isArray(value))
        return null;
    const out = [];
    for (const entry of value) {
        const parsed = isObject(entry) ? item(entry) : null;
        if (parsed === null)
            return null;
        out.push(parsed);
    }
    return out;
}
function onlyKeys(object, keys) {
    return Object.keys(object).every((key) => keys.includes(key));
}
function record(object) {
    const { id, sha256 } = object;
    if (!onlyKeys(object, ["id", "sha256"]) || typeof id !== "string" || typeof sha256 !== "string")
        return null;
    return { id, sha256 };
}
function file(object) {
    const { path, sha256, bytes } = object;
    if (!onlyKeys(object, ["path", "sha256", "bytes", "truncated"]))
        return null;
    const truncated = boolean(object["truncated"]);
    if (typeof path !== "string" || typeof sha256 !== "string" || truncated === null)
        return null;
    if (typeof bytes !== "number" || !Number.isInteger(bytes) || bytes < 0)
        return null;
    return { path, sha256, bytes, truncated };
}
