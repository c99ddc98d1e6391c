// The one error the package throws, with a kind a caller can act on.
export class DisplayError extends Error {
    name = "DisplayError";
    kind;
    /** The sequence of the entry refused, when an entry was. */
    sequence;
    /** The field at fault, as a path such as `continuation.position.sequence`, when one is. */
    path;
    constructor(kind, message, where = {}) {
        const place = [
            where.sequence !== undefined ? `sequence ${where.sequence}` : "",
            where.path !== undefined ? `field ${where.path}` : "",
        ].filter(Boolean);
        super(place.length > 0 ? `${place.join(", ")}: ${message}` : message);
        this.kind = kind;
        this.sequence = where.sequence;
        this.path = where.path;
    }
}
