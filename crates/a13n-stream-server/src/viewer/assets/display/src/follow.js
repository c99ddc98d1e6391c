// A client of a host's `GET /v1/runs/{run_id}/observed`: a streaming `fetch` read as Server-Sent Events, a
// display restored from each `snapshot` frame and kept current by each `observed` frame, resumed after a lost
// connection with `Last-Event-ID`, and restored from a new snapshot when entries were lost.
import { DisplayError } from "./errors.js";
import { DisplayNormalizer } from "./normalizer.js";
const MAX_RETRY_MS = 30_000;
/** Follow the run whose `/observed` route is `url` (for example `/v1/runs/run-1/observed` in a page; outside one,
 * as in Node, an absolute URL). A URL that cannot be parsed throws a `TypeError` at once. */
export function follow(url, options = {}) {
    // A URL no request can be made of is the caller's mistake, not a lost connection to retry.
    const base = globalThis.location?.href;
    try {
        new URL(url, base);
    }
    catch {
        const hint = base === undefined ? " (outside a page, give an absolute one)" : "";
        throw new TypeError(`follow: ${JSON.stringify(url)} is not a URL${hint}`);
    }
    const controller = new AbortController();
    const signal = options.signal;
    const forward = () => controller.abort(signal?.reason);
    if (signal?.aborted)
        controller.abort(signal.reason);
    else
        signal?.addEventListener("abort", forward, { once: true });
    const state = new FollowState(url, options, controller.signal);
    const done = state.run().finally(() => signal?.removeEventListener("abort", forward));
    // A caller that stops without awaiting `done` must not see an unhandled rejection.
    done.catch(() => undefined);
    return {
        get display() {
            return state.display;
        },
        done,
        stop: () => controller.abort(),
    };
}
/** A refusal the follower does not retry. */
export class FollowError extends Error {
    status;
    name = "FollowError";
    constructor(message, status) {
        super(message);
        this.status = status;
    }
}
/** An exception of the caller's own callback: it ends the following, it is not a connection to retry. */
class CallbackFailure {
    error;
    constructor(error) {
        this.error = error;
    }
}
/** Call a caller's callback; what it throws is the caller's, and stops the follower. */
function call(callback, ...args) {
    try {
        callback?.(...args);
    }
    catch (error) {
        throw new CallbackFailure(error);
    }
}
/** The host's answer header that says its content policy (`--retain-content`). */
export const RETAIN_CONTENT_HEADER = "a13n-retain-content";
class FollowState {
    url;
    options;
    signal;
    display = null;
    position = null;
    ended = false;
    /** Whether the current connection delivered a frame. */
    progressed = false;
    /** The host's content policy, as its last answer said it (the option until then). */
    retainContent;
    constructor(url, options, signal) {
        this.url = url;
        this.options = options;
        this.signal = signal;
        this.retainContent = options.retainContent ?? options.from?.retainContent ?? false;
        if (options.from !== undefined) {
            this.display = options.from;
            this.position = this.current();
        }
    }
    async run() {
        try {
            return await this.follow();
        }
        catch (error) {
            throw error instanceof CallbackFailure ? error.error : error;
        }
    }
    async follow() {
        const base = this.options.retryMs ?? 500;
        let delay = base;
        for (;;) {
            this.signal.throwIfAborted();
            this.progressed = false;
            try {
                await this.connect();
                if (this.ended && this.display !== null)
                    return this.display;
                if (this.progressed)
                    delay = base;
                call(this.options.onRetry, new Error("the event stream ended before the run did"), delay);
            }
            catch (error) {
                if (error instanceof FollowError || error instanceof CallbackFailure || this.signal.aborted)
                    throw error;
                // A connection that delivered frames before it broke was a working one: the delays start again.
                if (this.progressed)
                    delay = base;
                call(this.options.onRetry, error, delay);
            }
            await sleep(delay, this.signal);
            delay = Math.min(delay * 2, MAX_RETRY_MS);
        }
    }
    /** One connection, read to its end (`progressed` says whether any frame arrived). */
    async connect() {
        const headers = { Accept: "text/event-stream", ...this.options.headers };
        const resuming = this.display !== null ? this.position : null;
        if (resuming !== null)
            headers["Last-Event-ID"] = resuming;
        const response = await (this.options.fetch ?? fetch)(this.url, { headers, signal: this.signal });
        if (!response.ok || response.body === null) {
            const text = await response.text().catch(() => "");
            const message = `${this.url} answered ${response.status}: ${text.slice(0, 500)}`;
            // A resume position the host refuses (`position`): the run was deleted and ingested again meanwhile. The
            // next connection asks for a new snapshot.
            if (response.status === 400 && resuming !== null && problemCode(text) === "position") {
                this.display = null;
                this.position = null;
                throw new Error(message);
            }
            if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
                throw new FollowError(message, response.status);
            }
            throw new Error(message);
        }
        const type = response.headers.get("content-type") ?? "";
        if (!type.startsWith("text/event-stream")) {
            const what = type || "no content type";
            await response.body.cancel().catch(() => undefined);
            throw new FollowError(`${this.url} answered ${response.status} with ${what}, not an event stream`, response.status);
        }
        try {
            if (!(await this.adoptPolicy(response, response.body)))
                return;
            call(this.options.onConnect);
        }
        catch (error) {
            // The host keeps a subscriber (and the run in memory) while the stream is open: close it.
            await response.body.cancel().catch(() => undefined);
            throw error;
        }
        for await (const frame of frames(response.body)) {
            // Counted once applied: a connection whose snapshot cannot be restored is retried with growing delays.
            const going = this.frame(frame, response.status);
            this.progressed = true;
            if (!going)
                break;
        }
    }
    /** Take the host's content policy from its answer; one the caller gave must agree with it. False (the answer's
     * stream closed) when the host changed its policy under a display held: the next connection asks for a new
     * snapshot. */
    async adoptPolicy(response, body) {
        const said = response.headers.get(RETAIN_CONTENT_HEADER);
        if (said !== "true" && said !== "false")
            return true;
        const hostRetains = said === "true";
        if (this.options.retainContent !== undefined && this.options.retainContent !== hostRetains) {
            const message = `${this.url}: the host ${hostRetains ? "keeps" : "bounds"} whole values (${RETAIN_CONTENT_HEADER}: ${said}), ` +
                `but retainContent is ${this.options.retainContent}: the display would differ from the host's`;
            throw new FollowError(message, response.status);
        }
        const changed = hostRetains !== this.retainContent;
        this.retainContent = hostRetains;
        if (changed && this.display !== null) {
            // The host restarted with another policy: its entries would not fit the display made under the old one.
            await body.cancel().catch(() => undefined);
            this.progressed = true;
            this.resnapshot(new Error(`${this.url}: the host's content policy changed (${RETAIN_CONTENT_HEADER}: ${said})`));
            return false;
        }
        return true;
    }
    /** Apply one frame; false when the connection should be dropped (the run ended, or a new snapshot is needed). */
    frame(frame, status) {
        if (this.display === null && frame.event === "message") {
            // `/events` (its frames are unnamed): nothing it sends would ever make a display. (A named frame this
            // package does not know is passed over: a later host may send more kinds.)
            throw new FollowError(`${this.url} sent an unnamed frame before any snapshot: not a run's /observed stream`, status);
        }
        if (frame.event === "snapshot") {
            try {
                this.display = DisplayNormalizer.restore(frame.data, {
                    retainContent: this.retainContent,
                    ...(this.options.clock !== undefined ? { clock: this.options.clock } : {}),
                });
            }
            catch (error) {
                // The host's checkpoint always restores: a snapshot that does not is another route's (`/display`) or
                // another protocol's, and would be sent again the same.
                if (!(error instanceof DisplayError) || error.kind !== "checkpoint")
                    throw error;
                throw new FollowError(`${this.url} sent a snapshot that is no display checkpoint (${error.message})`, status);
            }
            this.position = frame.id;
            const changed = this.display.items().map((item) => item.id);
            call(this.options.onChange, this.display, { kind: "snapshot", changed, position: this.current() });
            return true;
        }
        if (frame.event === "end") {
            const { reason } = JSON.parse(frame.data);
            if (reason === "deleted")
                throw new FollowError(`${this.url}: the run was deleted`, 410);
            // The end names the run's last position: a display short of it lost entries on the way.
            if (this.display === null || frame.id !== this.current()) {
                return this.resnapshot(new Error(`the run ended at ${frame.id}, the display is at ${this.current()}`));
            }
            this.ended = true;
            return false;
        }
        if (frame.event !== "observed")
            return true;
        if (this.display === null)
            return this.resnapshot(new Error("entries arrived before any snapshot"));
        let changed;
        try {
            const { observed } = JSON.parse(frame.data);
            changed = this.display.apply(observed);
        }
        catch (error) {
            return this.resnapshot(error);
        }
        this.position = frame.id;
        call(this.options.onChange, this.display, { kind: "observed", changed, position: this.current() });
        return true;
    }
    /** Entries were lost or do not fit: reconnect without a position, for a new snapshot. */
    resnapshot(error) {
        const retry = error instanceof DisplayError || error instanceof SyntaxError ? error : new Error(String(error));
        this.display = null;
        this.position = null;
        call(this.options.onRetry, retry, 0);
        return false;
    }
    current() {
        const position = this.display?.position;
        return position === undefined ? "" : `${position.attempt}-${position.sequence}`;
    }
}
/** The frames of an event stream (the `text/event-stream` format: fields, blank-line separated); the thread
 * follower of the host's viewer reads `/v1/threads/{thread_id}/observed` with it. */
export async function* frames(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    // The line being read, a piece a chunk: each chunk is searched for line breaks once, and a long line (a large
    // snapshot) is joined once, when it ends, so reading a frame costs its size, not its size times its chunks.
    let pieces = [];
    // The last chunk ended with a CR: a LF that starts the next one is the second half of its CRLF.
    let afterCR = false;
    let event = "";
    let id = null;
    let data = [];
    try {
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                return;
            const text = decoder.decode(value, { stream: true });
            // An empty chunk (or one holding only part of a character) decides nothing, a CR before it included.
            if (text === "")
                continue;
            let start = afterCR && text.startsWith("\n") ? 1 : 0;
            afterCR = false;
            for (;;) {
                const newline = lineBreak(text, start);
                if (newline < 0) {
                    if (start < text.length)
                        pieces.push(text.slice(start));
                    break;
                }
                pieces.push(text.slice(start, newline));
                const line = pieces.length === 1 ? (pieces[0] ?? "") : pieces.join("");
                pieces = [];
                if (text[newline] === "\r" && newline === text.length - 1)
                    afterCR = true;
                start = newline + (text.startsWith("\r\n", newline) ? 2 : 1);
                if (line === "") {
                    if (data.length > 0)
                        yield { event: event || "message", id, data: data.join("\n") };
                    event = "";
                    data = [];
                    continue;
                }
                if (line.startsWith(":"))
                    continue;
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                const rest = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
                if (field === "event")
                    event = rest;
                else if (field === "data")
                    data.push(rest);
                else if (field === "id")
                    id = rest;
            }
        }
    }
    finally {
        await reader.cancel().catch(() => undefined);
    }
}
/** The index of the first line break (CR, LF or CRLF) in `text` at or after `from`, or -1. */
function lineBreak(text, from) {
    LINE_BREAK.lastIndex = from;
    return LINE_BREAK.exec(text)?.index ?? -1;
}
const LINE_BREAK = /\r\n|\r|\n/g;
/** The `code` of a host's error answer (`{"error": {"code": ...}}`), if it is one. */
function problemCode(text) {
    try {
        const code = JSON.parse(text)?.error?.code;
        return typeof code === "string" ? code : null;
    }
    catch {
        return null;
    }
}
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (ms <= 0)
            return resolve();
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(signal.reason);
        }, { once: true });
    });
}
