// Model text as the markdown it is written in: a safe subset (headings, paragraphs, fenced code, lists, quotes,
// tables, rules; code spans, bold, italic, strikethrough, links) parsed into a small tree, then built as DOM with
// `el` — never parsed as HTML, so nothing in the text can become markup. Text that is not markdown comes out as
// the same characters: no backslash escapes or entities are read, and line breaks are kept.
import { el, safeLink } from "./dom.js";
const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^( {0,3})([-*+])([ \t]+)(.*)$/;
const NUMBERED = /^( {0,3})(\d{1,9})([.)])([ \t]+)(.*)$/;
const DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
/** The blocks of `source`, parsed. */
export function parseMarkdown(source) {
    return blocks(source.replace(/\r\n?/g, "\n").split("\n"), 0);
}
function blank(line) {
    return line.trim() === "";
}
/** Whether `line` is a table's header: a line with a bar, over a delimiter row (`|---|:--:|`). */
function startsTable(line, next) {
    return line.includes("|") && next !== undefined && DELIMITER.test(next) && next.includes("-");
}
/** A line that begins a block other than a paragraph (so it ends a paragraph). */
function opens(line, next) {
    return (FENCE.test(line) ||
        HEADING.test(line) ||
        RULE.test(line) ||
        QUOTE.test(line) ||
        BULLET.test(line) ||
        NUMBERED.test(line) ||
        startsTable(line, next));
}
function blocks(lines, depth) {
    if (depth >= MAX_DEPTH)
        return lines.some((line) => !blank(line)) ? [{ type: "paragraph", children: [{ type: "text", text: lines.join("\n") }] }] : [];
    const out = [];
    let at = 0;
    while (at < lines.length) {
        const line = lines[at];
        if (blank(line)) {
            at += 1;
            continue;
        }
        const fence = FENCE.exec(line);
        if (fence) {
            const mark = fence[1];
            const body = [];
            at += 1;
            while (at < lines.length && !isClosingFence(lines[at], mark))
                body.push(lines[at++]);
            at += 1; // the closing fence (or the end: an unclosed fence runs to the end, as while it streams)
            out.push({ type: "code", lang: fence[2] ?? "", text: body.join("\n") });
            continue;
        }
        const heading = HEADING.exec(line);
        if (heading) {
            out.push({ type: "heading", level: heading[1].length, children: inlines(heading[2]) });
            at += 1;
            continue;
        }
        if (RULE.test(line)) {
            out.push({ type: "rule" });
            at += 1;
            continue;
        }
        if (QUOTE.test(line)) {
            const inner = [];
            while (at < lines.length && !blank(lines[at])) {
                const quoted = QUOTE.exec(lines[at]);
                inner.push(quoted ? quoted[1] : lines[at]);
                at += 1;
            }
            out.push({ type: "quote", children: blocks(inner, depth + 1) });
            continue;
        }
        if (BULLET.test(line) || NUMBERED.test(line)) {
            at = list(lines, at, out, depth);
            continue;
        }
        const next = lines[at + 1];
        if (startsTable(line, next)) {
            at = table(lines, at, out);
            continue;
        }
        const paragraph = [line];
        at += 1;
        while (at < lines.length && !blank(lines[at]) && !opens(lines[at], lines[at + 1]))
            paragraph.push(lines[at++]);
        out.push({ type: "paragraph", children: inlines(paragraph.join("\n")) });
    }
    return out;
}
function isClosingFence(line, mark) {
    const trimmed = line.trim();
    return trimmed.length >= mark.length && trimmed === mark[0].repeat(trimmed.length) && line.search(/\S/) <= 3;
}
/** A list from `lines[at]`: each item its first line and the lines indented under it, parsed as blocks. */
function list(lines, at, out, depth) {
    const first = lines[at];
    const numbered = NUMBERED.exec(first);
    const ordered = numbered !== null;
    const marker = (line) => (ordered ? NUMBERED.exec(line) : BULLET.exec(line));
    const items = [];
    const start = numbered ? Number(numbered[2]) : 1;
    while (at < lines.length) {
        const match = marker(lines[at]);
        if (!match)
            break;
        const indent = ordered ? match[1].length + match[2].length + 1 + match[4].length : match[1].length + 1 + match[3].length;
        const body = [ordered ? match[5] : match[4]];
        at += 1;
        while (at < lines.length) {
            const line = lines[at];
            if (blank(line)) {
                // A blank line continues the item only when the next line is indented under it.
                const next = lines[at + 1];
                if (next === undefined || leading(next) < indent)
                    break;
                body.push("");
                at += 1;
                continue;
            }
            if (leading(line) >= Math.min(indent, 4))
                body.push(line.slice(Math.min(indent, leading(line))));
            else if (marker(line) || opens(line, lines[at + 1]))
                break;
            else
                body.push(line.trimStart()); // a lazy continuation of the item's paragraph
            at += 1;
        }
        items.push(blocks(body, depth + 1));
        while (at < lines.length && blank(lines[at]) && lines[at + 1] !== undefined && marker(lines[at + 1]))
            at += 1;
    }
    out.push({ type: "list", ordered, start, items });
    return at;
}
function leading(line) {
    return line.length - line.trimStart().length;
}
function cells(line) {
    let row = line.trim();
    if (row.startsWith("|"))
        row = row.slice(1);
    if (row.endsWith("|"))
        row = row.slice(0, -1);
    return row.split("|").map((cell) => cell.trim());
}
function table(lines, at, out) {
    const head = cells(lines[at]);
    const align = cells(lines[at + 1]).map((cell) => {
        const left = cell.startsWith(":");
        const right = cell.endsWith(":");
        return left && right ? "center" : right ? "right" : left ? "left" : null;
    });
    at += 2;
    const rows = [];
    while (at < lines.length && !blank(lines[at]) && lines[at].includes("|")) {
        const row = cells(lines[at]);
        rows.push(head.map((_, index) => inlines(row[index] ?? "")));
        at += 1;
    }
    out.push({ type: "table", align: head.map((_, index) => align[index] ?? null), head: head.map(inlines), rows });
    return at;
}
/** An address written out (`https://…`), up to 2,048 characters; not its closing punctuation. */
const AUTOLINK = /https?:\/\/[^\s<>()[\]]{0,2048}[^\s<>()[\].,;:!?'"]/y;
/** `[text](address)`, each of bounded length. */
const LINK = /\[([^\]\n]{1,1000})\]\(([^()\s]{1,2048})\)/y;
/**
 * How deeply spans and blocks nest before the rest is taken as plain text: far beyond what a model writes, and
 * short of a browser's stack.
 */
const MAX_DEPTH = 16;
/** One text being read into spans: where each marker may close, found once (reading stays linear in the text). */
class SpanText {
    text;
    depth;
    closers = new Map();
    codeClosers = new Map();
    /** Whether the text holds `](` at all (else no `[` opens a link, and none is tried). */
    mayLink;
    constructor(text, depth) {
        this.text = text;
        this.depth = depth;
        this.mayLink = text.includes("](");
    }
    /** The first place after `from` where emphasis `mark` may close. */
    closer(mark, from) {
        let places = this.closers.get(mark);
        if (places === undefined) {
            places = [];
            for (let at = this.text.indexOf(mark); at >= 0; at = this.text.indexOf(mark, at + 1)) {
                const before = this.text[at - 1];
                const following = this.text[at + mark.length];
                const wordAfter = mark[0] === "_" && following !== undefined && /\w/.test(following);
                if (before !== undefined && !/\s/.test(before) && !wordAfter && following !== mark[0])
                    places.push(at);
            }
            this.closers.set(mark, places);
        }
        return firstFrom(places, from);
    }
    /** The first run of exactly `length` backticks at or after `from`. */
    codeCloser(length, from) {
        let places = this.codeClosers.get(length);
        if (places === undefined) {
            places = [];
            for (let at = this.text.indexOf("`"); at >= 0;) {
                let end = at;
                while (this.text[end] === "`")
                    end += 1;
                if (end - at === length)
                    places.push(at);
                at = this.text.indexOf("`", end);
            }
            this.codeClosers.set(length, places);
        }
        return firstFrom(places, from);
    }
}
/** The first of the sorted `places` at or after `from`. */
function firstFrom(places, from) {
    let [low, high] = [0, places.length];
    while (low < high) {
        const middle = (low + high) >> 1;
        if (places[middle] < from)
            low = middle + 1;
        else
            high = middle;
    }
    return places[low];
}
/** The inline spans of `text`. */
export function inlines(text, depth = 0) {
    if (depth >= MAX_DEPTH)
        return text === "" ? [] : [{ type: "text", text }];
    const read = new SpanText(text, depth);
    const out = [];
    let plain = "";
    const flush = () => {
        if (plain !== "")
            out.push({ type: "text", text: plain });
        plain = "";
    };
    let at = 0;
    while (at < text.length) {
        const span = spanAt(read, at);
        if (span === null) {
            plain += text[at];
            at += 1;
            continue;
        }
        flush();
        out.push(span.inline);
        at = span.end;
    }
    flush();
    return out;
}
/** The span that begins at `text[at]`, if one does, and where it ends. */
function spanAt(read, at) {
    const text = read.text;
    const char = text[at];
    if (char === "`") {
        if (text[at - 1] === "`")
            return null; // inside a run whose start was no span
        let length = 0;
        while (text[at + length] === "`")
            length += 1;
        const close = read.codeCloser(length, at + length);
        if (close === undefined)
            return null;
        const inner = text.slice(at + length, close);
        const trimmed = inner.length > 2 && inner.startsWith(" ") && inner.endsWith(" ") ? inner.slice(1, -1) : inner;
        return { inline: { type: "code", text: trimmed }, end: close + length };
    }
    if (char === "[") {
        if (!read.mayLink)
            return null;
        LINK.lastIndex = at;
        const link = LINK.exec(text);
        if (link === null)
            return null;
        // A link holds no link (an address written out in its text stays text).
        const children = inlines(link[1], read.depth + 1).flatMap((span) => (span.type === "link" ? span.children : [span]));
        return { inline: { type: "link", href: link[2], children }, end: at + link[0].length };
    }
    if (char === "h" && (at === 0 || /[\s(]/.test(text[at - 1]))) {
        AUTOLINK.lastIndex = at;
        const url = AUTOLINK.exec(text);
        if (url === null)
            return null;
        return { inline: { type: "link", href: url[0], children: [{ type: "text", text: url[0] }] }, end: at + url[0].length };
    }
    if (char === "~" && text.startsWith("~~", at))
        return emphasis(read, at, "~~", "del");
    if (char === "*" || char === "_") {
        const double = text.startsWith(char + char, at);
        return (double ? emphasis(read, at, char + char, "strong") : null) ?? emphasis(read, at, char, "em");
    }
    return null;
}
/** `mark`…`mark` around text that neither begins nor ends with a space (and, for `_`, not inside a word). */
function emphasis(read, at, mark, type) {
    const text = read.text;
    const start = at + mark.length;
    const after = text[start];
    if (after === undefined || /\s/.test(after) || after === mark[0])
        return null;
    if (mark[0] === "_" && at > 0 && /\w/.test(text[at - 1]))
        return null;
    const close = read.closer(mark, start + 1);
    if (close === undefined)
        return null;
    return { inline: { type, children: inlines(text.slice(start, close), read.depth + 1) }, end: close + mark.length };
}
/** The characters `blocks` shows, as one text (what a reader would select and copy, near enough). */
export function plainText(parsed) {
    const inline = (spans) => spans.map((span) => (span.type === "text" || span.type === "code" ? span.text : inline(span.children))).join("");
    return parsed
        .map((block) => {
        switch (block.type) {
            case "paragraph":
            case "heading":
                return inline(block.children);
            case "code":
                return block.text;
            case "quote":
                return plainText(block.children);
            case "list":
                return block.items.map(plainText).join("\n");
            case "table":
                return [block.head, ...block.rows].map((row) => row.map(inline).join(" ")).join("\n");
            case "rule":
                return "";
        }
    })
        .join("\n");
}
/**
 * `source` as DOM nodes: one element a block, separated by line breaks (so its text reads as the source's). Should
 * reading it fail, the text as it is.
 */
export function renderMarkdown(source) {
    try {
        return renderBlocks(parseMarkdown(source));
    }
    catch (error) {
        console.debug("a13n-stream viewer: markdown shown as text:", error);
        return [el("p", { text: source })];
    }
}
function renderBlocks(parsed) {
    const out = [];
    parsed.forEach((block, index) => {
        if (index > 0)
            out.push(document.createTextNode("\n"));
        out.push(renderBlock(block));
    });
    return out;
}
function renderBlock(block) {
    switch (block.type) {
        case "paragraph":
            return el("p", { dir: "auto" }, renderInlines(block.children));
        case "heading":
            return el(`h${Math.min(6, block.level + 2)}`, { class: "md-heading", dir: "auto" }, renderInlines(block.children));
        case "code":
            return codeBlock(block.text, block.lang);
        case "quote":
            return el("blockquote", {}, renderBlocks(block.children));
        case "list": {
            const items = block.items.map((item) => el("li", { dir: "auto" }, renderBlocks(item)));
            return block.ordered ? el("ol", { start: block.start === 1 ? null : block.start }, items) : el("ul", {}, items);
        }
        case "table": {
            const cell = (tag, spans, index) => el(tag, { dir: "auto", class: block.align[index] ? `align-${block.align[index]}` : null }, renderInlines(spans));
            const head = el("thead", {}, [el("tr", {}, block.head.map((spans, index) => cell("th", spans, index)))]);
            const body = el("tbody", {}, block.rows.map((row) => el("tr", {}, row.map((spans, index) => cell("td", spans, index)))));
            return el("div", { class: "md-table" }, [el("table", {}, [head, body])]);
        }
        case "rule":
            return el("hr");
    }
}
/** A code block with a button that copies its text. */
export function codeBlock(code, lang = "") {
    const copy = el("button", { type: "button", class: "copy", "aria-label": "Copy code", text: "Copy" });
    copy.addEventListener("click", () => {
        void navigator.clipboard?.writeText(code).then(() => (copy.textContent = "Copied"), () => (copy.textContent = "Copy failed"));
    });
    return el("div", { class: "md-code" }, [
        el("pre", { "data-lang": lang || null }, [el("code", { text: code })]),
        copy,
    ]);
}
function renderInlines(spans) {
    return spans.map((span) => {
        switch (span.type) {
            case "text":
                return span.text;
            case "code":
                return el("code", { text: span.text });
            case "strong":
            case "em":
            case "del":
                return el(span.type === "strong" ? "strong" : span.type === "em" ? "em" : "del", {}, renderInlines(span.children));
            case "link": {
                const link = safeLink(span.href, "");
                if (link instanceof HTMLAnchorElement) {
                    link.append(...renderInlines(span.children).filter((child) => Boolean(child)));
                    return link;
                }
                return el("span", {}, renderInlines(span.children));
            }
        }
    });
}
