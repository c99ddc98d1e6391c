// A windowed list: of any number of rows, only those on screen (and a margin around them) are in the DOM. Rows
// keep their natural heights: each is measured once it is rendered (and again when it changes size), and rows not
// measured yet count with an estimate. Two spacers stand in for the rows above and below the window, so the page
// scrolls as if every row were there. The list follows the ARIA feed pattern: rows are articles with their
// position in the set, one of them focusable at a time (arrow keys, j/k, Page Up/Down, Home/End move it).
export class WindowedList {
    container;
    options;
    rows = [];
    keys = [];
    positions = new Map();
    heights = new Map();
    offsets = new Float64Array(1);
    rendered = new Map();
    top;
    body;
    bottom;
    observer;
    frame = 0;
    active = null;
    gap = -1;
    constructor(container, options) {
        this.container = container;
        this.options = options;
        this.top = document.createElement("div");
        this.bottom = document.createElement("div");
        this.body = document.createElement("div");
        this.top.className = "spacer";
        this.bottom.className = "spacer";
        this.body.className = "window";
        this.top.setAttribute("aria-hidden", "true");
        this.bottom.setAttribute("aria-hidden", "true");
        container.replaceChildren(this.top, this.body, this.bottom);
        container.setAttribute("role", "feed");
        window.addEventListener("scroll", () => this.schedule(), { passive: true });
        window.addEventListener("resize", () => this.schedule());
        this.observer = new ResizeObserver(() => {
            if (this.measure())
                this.schedule();
        });
        container.addEventListener("keydown", (event) => this.key(event));
        container.addEventListener("focusin", (event) => {
            const row = event.target.closest("[data-key]");
            if (row !== null && row.parentElement === this.body)
                this.setActive(row.dataset["key"] ?? null);
        });
    }
    /** The rows now; rendered rows that did not change are kept as they are. */
    setRows(rows) {
        this.rows = rows;
        this.keys = rows.map((row) => this.options.key(row));
        this.positions.clear();
        this.keys.forEach((key, index) => this.positions.set(key, index));
        for (const [key, rendered] of this.rendered) {
            if (!this.positions.has(key)) {
                this.observer.unobserve(rendered.node);
                rendered.node.remove();
                this.rendered.delete(key);
            }
        }
        this.layout();
        this.update();
    }
    get length() {
        return this.rows.length;
    }
    /** The key of the row that takes the focus (the one last focused), if any. */
    get activeKey() {
        return this.active;
    }
    /** Where the row of `key` is in the list now, if it is. */
    indexOf(key) {
        return this.positions.get(key);
    }
    /** How many rows are in the DOM. */
    get renderedCount() {
        return this.rendered.size;
    }
    /** The list's full height (px), measured rows as measured. */
    get height() {
        return this.offsets[this.rows.length] ?? 0;
    }
    /** Bring row `index` on screen (`atTop`: near the top, as a place jumped to), render it, and focus it. */
    focusIndex(index, atTop = false) {
        if (this.rows.length === 0)
            return;
        const target = Math.max(0, Math.min(this.rows.length - 1, index));
        const key = this.keys[target];
        this.setActive(key);
        this.reveal(target, atTop);
        this.rendered.get(key)?.node.focus({ preventScroll: true });
    }
    /** Scroll so that row `index` is on screen, and render the window there. */
    reveal(index, atTop = false) {
        const listTop = this.container.getBoundingClientRect().top + window.scrollY;
        const rowTop = listTop + (this.offsets[index] ?? 0);
        const rowBottom = listTop + (this.offsets[index + 1] ?? 0);
        const header = this.stickyHeight();
        if (atTop || rowTop < window.scrollY + header)
            window.scrollTo(0, rowTop - header - 8);
        else if (rowBottom > window.scrollY + window.innerHeight)
            window.scrollTo(0, Math.min(rowTop - header - 8, rowBottom - window.innerHeight + 8));
        this.update();
        // The row's real height may differ from its estimate: place it again once measured.
        if (this.measure()) {
            this.layout();
            const top = listTop + (this.offsets[index] ?? 0);
            if (atTop || top < window.scrollY + header || top > window.scrollY + window.innerHeight - 40)
                window.scrollTo(0, top - header - 8);
            this.update();
        }
    }
    stickyHeight() {
        const sticky = document.querySelector("[data-sticky]");
        return sticky ? sticky.getBoundingClientRect().height : 0;
    }
    setActive(key) {
        if (this.active === key)
            return;
        if (this.active !== null)
            this.rendered.get(this.active)?.node.setAttribute("tabindex", "-1");
        this.active = key;
        if (key !== null)
            this.rendered.get(key)?.node.setAttribute("tabindex", "0");
    }
    key(event) {
        const target = event.target;
        if (target.closest("input, textarea, select"))
            return;
        const row = target.closest("[data-key]");
        const current = row ? (this.positions.get(row.dataset["key"] ?? "") ?? 0) : 0;
        const page = Math.max(1, Math.floor(window.innerHeight / 80));
        let next = null;
        switch (event.key) {
            case "ArrowDown":
            case "j":
                next = current + 1;
                break;
            case "ArrowUp":
            case "k":
                next = current - 1;
                break;
            case "PageDown":
                next = current + page;
                break;
            case "PageUp":
                next = current - page;
                break;
            case "Home":
                next = 0;
                break;
            case "End":
                next = this.rows.length - 1;
                break;
            case "Enter":
            case " ":
                // On a row itself: open or close it (its details, or its fold button).
                if (row !== null && target === row) {
                    const toggle = row.querySelector("button.fold-toggle, details > summary");
                    if (toggle) {
                        event.preventDefault();
                        toggle.click();
                    }
                }
                return;
            default:
                return;
        }
        if (event.altKey || event.ctrlKey || event.metaKey)
            return;
        event.preventDefault();
        this.focusIndex(next);
    }
    /** Measure the rendered rows; whether any height changed. */
    measure() {
        if (this.gap < 0) {
            const first = this.body.firstElementChild;
            if (first === null)
                return false;
            this.gap = parseFloat(getComputedStyle(first).marginBottom) || 0;
        }
        let changed = false;
        for (const [key, { node }] of this.rendered) {
            if (!node.isConnected)
                continue;
            const height = node.getBoundingClientRect().height + this.gap;
            if (height > this.gap && Math.abs((this.heights.get(key) ?? -1) - height) > 0.5) {
                this.heights.set(key, height);
                changed = true;
            }
        }
        return changed;
    }
    layout() {
        const count = this.rows.length;
        if (this.offsets.length !== count + 1)
            this.offsets = new Float64Array(count + 1);
        let at = 0;
        for (let index = 0; index < count; index += 1) {
            this.offsets[index] = at;
            at += this.heights.get(this.keys[index]) ?? this.options.estimate(this.rows[index]);
        }
        this.offsets[count] = at;
    }
    schedule() {
        if (this.frame !== 0)
            return;
        this.frame = requestAnimationFrame(() => {
            this.frame = 0;
            this.layout();
            this.update();
        });
    }
    /** The first row whose bottom is below `y` (binary search on the offsets). */
    rowAt(y) {
        let low = 0;
        let high = this.rows.length;
        while (low < high) {
            const middle = (low + high) >>> 1;
            if ((this.offsets[middle + 1] ?? 0) <= y)
                low = middle + 1;
            else
                high = middle;
        }
        return low;
    }
    update() {
        const count = this.rows.length;
        const overscan = this.options.overscan ?? 800;
        const viewTop = -this.container.getBoundingClientRect().top;
        const start = Math.min(count, this.rowAt(Math.max(0, viewTop - overscan)));
        let end = start;
        const limit = viewTop + window.innerHeight + overscan;
        while (end < count && (this.offsets[end] ?? 0) < limit)
            end += 1;
        const wanted = [];
        const keep = new Set();
        for (let index = start; index < end; index += 1) {
            const row = this.rows[index];
            const key = this.keys[index];
            const version = this.options.version(row);
            let rendered = this.rendered.get(key);
            if (rendered === undefined || rendered.version !== version) {
                const node = this.options.render(row);
                if (rendered !== undefined) {
                    this.observer.unobserve(rendered.node);
                    const focused = rendered.node.contains(document.activeElement);
                    rendered.node.replaceWith(node);
                    if (focused)
                        node.focus({ preventScroll: true });
                }
                rendered = { node, version };
                this.rendered.set(key, rendered);
                this.observer.observe(node);
            }
            rendered.node.setAttribute("aria-posinset", String(index + 1));
            rendered.node.setAttribute("aria-setsize", String(count));
            rendered.node.setAttribute("tabindex", key === this.active ? "0" : "-1");
            keep.add(key);
            wanted.push(rendered.node);
        }
        for (const [key, rendered] of this.rendered) {
            if (!keep.has(key)) {
                this.observer.unobserve(rendered.node);
                rendered.node.remove();
                this.rendered.delete(key);
            }
        }
        // Put the wanted nodes in order, moving only those out of place (a moved node loses focus).
        let cursor = this.body.firstElementChild;
        for (const node of wanted) {
            if (cursor === node) {
                cursor = cursor.nextElementSibling;
                continue;
            }
            this.body.insertBefore(node, cursor);
        }
        while (cursor !== null) {
            const next = cursor.nextElementSibling;
            cursor.remove();
            cursor = next;
        }
        if (this.active === null || !keep.has(this.active)) {
            const first = wanted[0];
            if (first !== undefined)
                first.setAttribute("tabindex", "0");
        }
        this.top.style.height = `${this.offsets[start] ?? 0}px`;
        this.bottom.style.height = `${Math.max(0, (this.offsets[count] ?? 0) - (this.offsets[end] ?? 0))}px`;
    }
}
