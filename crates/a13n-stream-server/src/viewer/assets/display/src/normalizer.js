// The browser's copy of a run's display: a checkpoint restored, then each later `Observed` entry the host hands
// out applied to it, item for item as the host's own fold.
import { readCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { DisplayError } from "./errors.js";
import { Fold } from "./fold.js";
import { isObject, pyEqual } from "./values.js";
/**
 * A run's display items, kept current from the host's `Observed` entries.
 *
 * Call order: {@link DisplayNormalizer.restore} a checkpoint, then {@link DisplayNormalizer.apply} the entries
 * after its position, in order. An entry at or before the position is a repeat and is ignored; one after the next
 * expected is a gap (`DisplayError` of kind `gap`), and an entry that is no entry (no integer sequence, no event
 * object with a type) an `entry` error: either refuses the whole call with nothing applied, and the display goes
 * on. An event the fold cannot read is an `entry` error, and the host's item reference of each entry is checked
 * against this fold's own: a difference (an entry of another run, a checkpoint of another stream) is a `diverged`
 * error. After either of these two, raised while the call's earlier entries were applied, the display refuses
 * entries and `export()` (`stale`) until restored; its items may show what the refused entry did.
 */
export class DisplayNormalizer {
    fold;
    restoredObserver;
    restoredSequence;
    broken = null;
    constructor(fold, observer) {
        this.fold = fold;
        this.restoredObserver = observer;
        this.restoredSequence = fold.state.sequence;
    }
    /** Restore a display checkpoint: the host's `DisplaySnapshot`, as an object or as its JSON text. */
    static restore(checkpoint, options = {}) {
        const restored = readCheckpoint(checkpoint, options.retainContent ?? false, options.clock ?? Date.now);
        return new DisplayNormalizer(new Fold(restored.state), restored.observer);
    }
    /** The run the display belongs to. */
    get runId() {
        return this.fold.state.runId;
    }
    /** Whether whole values are kept (the `retainContent` it was restored with: the host's `retain_content`). */
    get retainContent() {
        return this.fold.state.retainContent;
    }
    /** The position of the last entry applied (or of the checkpoint, before any). */
    get position() {
        return { attempt: this.fold.state.attempt, sequence: this.fold.state.sequence };
    }
    /**
     * Apply one entry or several, in order. Returns the ids of the items they changed, each once, in the order they
     * first changed. A repeat of an entry already applied changes nothing.
     */
    apply(entries) {
        const list = Array.isArray(entries) ? entries : [entries];
        this.refuseIfBroken();
        // Every entry is checked before any is applied: a gap or a malformed entry anywhere applies nothing.
        const fresh = [];
        let expected = this.fold.state.sequence + 1;
        for (const [index, entry] of list.entries()) {
            // In a batch, a field is named with its entry's place: `[2].sequence`.
            const at = Array.isArray(entries) ? `[${index}].` : "";
            const sequence = entrySequence(entry, at);
            if (sequence < expected)
                continue;
            if (sequence > expected) {
                const missing = sequence - 1 === expected ? `entry ${expected} is` : `entries ${expected} to ${sequence - 1} are`;
                throw new DisplayError("gap", `the next entry is ${expected}: ${missing} missing`, {
                    sequence,
                });
            }
            const event = entry.event;
            if (!isObject(event) || typeof event["type"] !== "string") {
                throw new DisplayError("entry", "must be an AG-UI event object with a type", { sequence, path: `${at}event` });
            }
            checkItem(entry, sequence, at);
            fresh.push([entry, sequence]);
            expected += 1;
        }
        const changed = new Set();
        for (const [entry, sequence] of fresh) {
            try {
                const id = this.step(entry, sequence);
                if (id !== null)
                    changed.add(id);
            }
            catch (error) {
                this.broken = asDisplayError(error, sequence);
                throw this.broken;
            }
        }
        return [...changed];
    }
    /** The items, in ordinal order. */
    items() {
        const items = [...this.fold.state.items.values()];
        // Held in the order they were made, which is their ordinals' (a checkpoint lists them so): sorted only when not.
        for (let index = 1; index < items.length; index += 1) {
            if (items[index - 1].ordinal > items[index].ordinal) {
                return items.sort((left, right) => left.ordinal - right.ordinal);
            }
        }
        return items;
    }
    /** One item by its id. */
    item(id) {
        return this.fold.state.items.get(id);
    }
    /**
     * The checkpoint at the current position, detached (a `stale` error after a `diverged` one). Its `observer` is
     * the host's conversion state, which a browser does not compute: it is the restored one while no entry has been
     * applied since, and `null` after, so that a host refuses to resume conversion from a browser's checkpoint
     * rather than convert from a stale state. The browser's own `restore` takes either.
     */
    export() {
        // A display that diverged holds an entry it could not check: no checkpoint is made of it.
        this.refuseIfBroken();
        const current = this.fold.state.sequence === this.restoredSequence;
        return writeCheckpoint(this.fold.state, current ? this.restoredObserver : null);
    }
    refuseIfBroken() {
        if (this.broken !== null)
            throw new DisplayError("stale", `restore a new checkpoint: ${this.broken.message}`);
    }
    /** Fold one entry checked by `apply` (an event object with a type, the next sequence). */
    step(entry, sequence) {
        const event = entry.event;
        const host = entry.item ?? null;
        this.fold.state.sequence = sequence;
        let ours = this.fold.event(event);
        if (host !== null && differences(ours, host).length > 0 && host.kind === "tool_call" && host.state === "failed") {
            // A tool result with no event of its own (a retry prompt, a denial) fails its call at this event.
            if (isObject(host.failure))
                ours = this.fold.failToolCall(host.id, host.failure, this.fold.occurred(event));
        }
        const differing = differences(ours, host);
        if (differing.length > 0) {
            const said = described(host, differing);
            const found = described(ours, differing);
            throw new DisplayError("diverged", `the host's entry names ${said}, this display of run ${JSON.stringify(this.runId)} gives ${found}: ` +
                "the entry is from another run, or the checkpoint from another stream", { sequence, path: "item" });
        }
        return ours?.id ?? null;
    }
}
function entrySequence(entry, at) {
    if (!isObject(entry)) {
        const path = at ? at.slice(0, -1) : undefined;
        throw new DisplayError("entry", `must be an Observed entry object, found ${shown(entry)}`, { path });
    }
    const sequence = entry.sequence;
    if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1) {
        const beyond = typeof sequence === "number" && Number.isInteger(sequence) && sequence > 1;
        const range = beyond ? "from 1 to 2^53 - 1 (JavaScript's exact integers)" : "of at least 1";
        throw new DisplayError("entry", `must be an integer ${range}, found ${shown(sequence)}`, { path: `${at}sequence` });
    }
    return sequence;
}
/** Refuse, before anything is applied, an entry whose `item` is no item reference: the host writes `null` or one
 * (`{id, kind, state, ordinal, response_group, failure}`) for every entry. The first field at fault is named. */
function checkItem(entry, sequence, at) {
    const item = entry.item;
    if (item === null)
        return;
    const path = `${at}item`;
    if (!isObject(item)) {
        const found = item === undefined ? "nothing" : shown(item);
        const message = `must be null or an item reference {id, kind, state, ordinal, response_group, failure}, found ${found}`;
        throw new DisplayError("entry", message, { sequence, path });
    }
    const ref = item;
    const wrong = ITEM_FIELDS.find(([name, valid]) => !valid(ref[name]));
    if (wrong !== undefined) {
        const [name, , must] = wrong;
        throw new DisplayError("entry", `${must}, found ${shown(ref[name])}`, { sequence, path: `${path}.${name}` });
    }
}
/** An item reference's fields: each one's check and what it must be. */
const ITEM_FIELDS = [
    ["id", (value) => typeof value === "string", "must be a string"],
    ["kind", (value) => typeof value === "string", "must be a string"],
    ["state", (value) => typeof value === "string", "must be a string"],
    ["ordinal", (value) => value === null || Number.isSafeInteger(value), "must be an integer or null"],
    ["response_group", (value) => value === undefined || value === null || typeof value === "string", "must be a string or null"],
    ["failure", (value) => value === undefined || value === null || isObject(value), "must be an object or null"],
];
/** A value as an error message shows it: its JSON, cut short. */
function shown(value) {
    const text = value === undefined ? "undefined" : JSON.stringify(value) ?? String(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
/** The fields of two item references that differ (`item` when only one is a reference). */
function differences(ours, host) {
    if (ours === null || host === null)
        return ours === host ? [] : ["item"];
    const differing = [];
    if (ours.id !== host.id)
        differing.push("id");
    if (ours.kind !== host.kind)
        differing.push("kind");
    if (ours.state !== host.state)
        differing.push("state");
    if (ours.ordinal !== (host.ordinal ?? null))
        differing.push("ordinal");
    if (ours.response_group !== (host.response_group ?? null))
        differing.push("response_group");
    if (!pyEqual(ours.failure, (host.failure ?? null)))
        differing.push("failure");
    return differing;
}
/** An item reference as a message shows it: id, kind, state and ordinal, and its response group and failure where
 * those are among the `differing` fields. */
function described(ref, differing) {
    if (ref === null)
        return "no item";
    const group = differing.includes("response_group") ? `, response group ${JSON.stringify(ref.response_group ?? null)}` : "";
    const failure = differing.includes("failure") ? `, failure ${JSON.stringify(ref.failure ?? null)}` : "";
    return `item ${ref.id} (${ref.kind}, ${ref.state}, #${ref.ordinal}${group}${failure})`;
}
function asDisplayError(error, sequence) {
    if (error instanceof DisplayError)
        return error;
    const message = error instanceof Error ? error.message : String(error);
    return new DisplayError("entry", message, { sequence, path: "event" });
}
