// The one error the package throws, with a kind a caller can act on.

/**
 * What went wrong:
 * - `checkpoint`: the checkpoint is not one (`path` names the field);
 * - `entry`: an `Observed` entry is malformed (`sequence` and `path` say where);
 * - `gap`: an entry is later than the next one expected: entries were lost, take a new snapshot;
 * - `diverged`: the host's item reference differs from this fold's, because the entry is from another run or the
 *   checkpoint does not belong to the stream; take a new snapshot. (A display restored with another content
 *   policy than the host's gives the same references with other content: nothing can tell; `follow()` takes the
 *   host's policy from its answer);
 * - `stale`: an earlier `diverged` or `entry` error left the display unusable; take a new snapshot.
 */
export type DisplayErrorKind = "checkpoint" | "entry" | "gap" | "diverged" | "stale";

export class DisplayError extends Error {
  override readonly name = "DisplayError";
  readonly kind: DisplayErrorKind;
  /** The sequence of the entry refused, when an entry was. */
  readonly sequence: number | undefined;
  /** The field at fault, as a path such as `continuation.position.sequence`, when one is. */
  readonly path: string | undefined;

  constructor(kind: DisplayErrorKind, message: string, where: { sequence?: number; path?: string } = {}) {
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
