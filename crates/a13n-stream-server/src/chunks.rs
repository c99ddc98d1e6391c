//! Journal lines and AG-UI events are stored a batch to a row: a *journal chunk* (the batch's lines from its
//! offset on) and an *event chunk* (its events from the first one's sequence on, each with its item reference).
//! A commit writes two rows, not one a line and one an event; a database's cost is mostly per row.
//!
//! SQLite holds a chunk's parts joined by newlines: no part holds one (journal lines are split at newlines; events
//! and item references are compact JSON, which escapes them), and [`check`] refuses a batch with a part that does,
//! before the batch is written (the writer joins the parts without looking again). PostgreSQL
//! holds them as arrays. Either way a chunk's `first` is the journal offset or sequence of its first part, and
//! the next part is the next one: a batch's events have consecutive sequences ([`first_sequence`] checks).

use crate::storage::{Batch, StorageError, StoredEvent};

/// What separates a chunk's parts in SQLite.
pub(crate) const SEPARATOR: char = '\n';

/// A chunk's bytes, beyond which a batch's parts go on in another chunk (a part alone may be longer): what a commit
/// copies at once stays bounded whatever the batch's size.
pub(crate) const CHUNK_BYTES: usize = 1 << 20;

/// The index ranges of `sizes` (each part's bytes) that make a batch's chunks: consecutive parts, each range as
/// long as [`CHUNK_BYTES`] allows and never empty.
pub(crate) fn ranges(sizes: impl IntoIterator<Item = usize>) -> Vec<std::ops::Range<usize>> {
    let (mut ranges, mut start, mut bytes) = (Vec::new(), 0, 0);
    let mut end = 0;
    for (index, size) in sizes.into_iter().enumerate() {
        if index > start && bytes + size > CHUNK_BYTES {
            ranges.push(start..index);
            (start, bytes) = (index, 0);
        }
        bytes += size + 1;
        end = index + 1;
    }
    if end > start {
        ranges.push(start..end);
    }
    ranges
}

/// `parts` joined into one chunk's text. The parts come from a batch [`check`] passed, so none holds the separator.
pub(crate) fn join<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut joined = String::new();
    for (index, part) in parts.into_iter().enumerate() {
        debug_assert!(!part.contains(SEPARATOR), "a checked batch's part holds no separator");
        if index > 0 {
            joined.push(SEPARATOR);
        }
        joined.push_str(part);
    }
    joined
}

/// Whether `batch` can be stored as chunks in SQLite (events at consecutive sequences, no part holding the
/// separator), checked before it joins a commit group, whose other batches it would otherwise fail.
pub(crate) fn check(batch: &Batch) -> Result<(), StorageError> {
    first_sequence(&batch.events)?;
    let events = batch.events.iter().flat_map(|event| [Some(event.event.as_str()), event.item.as_deref()]);
    let parts = batch.lines.iter().map(String::as_str).chain(events.flatten());
    match parts.enumerate().find(|(_, part)| part.contains(SEPARATOR)) {
        None => Ok(()),
        Some((index, _)) => Err(StorageError::Database(format!("part {index} of a batch holds a newline"))),
    }
}

/// A chunk's parts, in order.
pub(crate) fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split(SEPARATOR)
}

/// The sequence of a batch's first event (`None` without events), or an error when their sequences are not
/// consecutive (a chunk stores only the first).
pub(crate) fn first_sequence(events: &[StoredEvent]) -> Result<Option<u64>, StorageError> {
    let Some(first) = events.first().map(|event| event.sequence) else { return Ok(None) };
    match events.iter().zip(first..).find(|(event, expected)| event.sequence != *expected) {
        None => Ok(Some(first)),
        Some((event, expected)) => Err(StorageError::Database(format!(
            "a batch's events must have consecutive sequences: {} where {expected} was next",
            event.sequence
        ))),
    }
}

/// The journal lines of a chunk starting at `first` that lie in `from..to`, appended to `out`.
pub(crate) fn lines_within<S: Into<String>>(
    first: u64,
    parts: impl IntoIterator<Item = S>,
    (from, to): (u64, u64),
    out: &mut Vec<String>,
) {
    let lines = parts.into_iter().zip(first..).filter(|(_, at)| (from..to).contains(at));
    out.extend(lines.map(|(line, _)| line.into()));
}

/// The events of a chunk starting at `first` with a sequence after `after`, appended to `out` until it holds
/// `limit`. Whether `out` is full.
pub(crate) fn events_after<S: Into<String>>(
    first: u64,
    parts: impl IntoIterator<Item = (S, Option<S>)>,
    after: u64,
    limit: usize,
    out: &mut Vec<StoredEvent>,
) -> bool {
    for ((event, item), sequence) in parts.into_iter().zip(first..) {
        if out.len() >= limit {
            break;
        }
        if sequence > after {
            out.push(StoredEvent { sequence, event: event.into(), item: item.map(Into::into) });
        }
    }
    out.len() >= limit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(sequence: u64) -> StoredEvent {
        StoredEvent { sequence, event: format!("{{\"n\":{sequence}}}"), item: Some("null".into()) }
    }

    #[test]
    fn parts_join_and_split_back_and_a_newline_is_refused() {
        let joined = join(["a", "", "{\"b\":1}"]);
        assert_eq!(split(&joined).collect::<Vec<_>>(), ["a", "", "{\"b\":1}"]);
        let lines = vec!["a".to_owned(), "b\nc".to_owned()];
        let refused = check(&Batch { lines, ..Batch::default() });
        assert!(matches!(refused, Err(StorageError::Database(message)) if message.contains("part 1")));
    }

    #[test]
    fn a_batch_is_cut_into_chunks_of_bounded_size() {
        assert!(ranges([]).is_empty());
        assert_eq!(ranges([10, 20, 30]), vec![(0..3)]);
        let half = CHUNK_BYTES / 2;
        assert_eq!(ranges([half, half, 5, CHUNK_BYTES * 3, 1]), [0..1, 1..3, 3..4, 4..5]);
    }

    #[test]
    fn a_batch_is_checked_before_it_joins_a_group() {
        let batch =
            |events: Vec<StoredEvent>, line: &str| Batch { lines: vec![line.into()], events, ..Batch::default() };
        assert!(check(&batch(vec![event(3), event(4)], "a")).is_ok());
        assert!(check(&batch(vec![event(3), event(5)], "a")).is_err(), "sequences not consecutive");
        assert!(check(&batch(vec![event(3)], "a\nb")).is_err(), "a line holding a newline");
        let mut item = event(3);
        item.item = Some("{\"a\":\n1}".into());
        assert!(check(&batch(vec![item], "a")).is_err(), "an item reference holding a newline");
    }

    #[test]
    fn only_consecutive_sequences_make_a_chunk() {
        assert_eq!(first_sequence(&[]).expect("empty"), None);
        assert_eq!(first_sequence(&[event(7), event(8), event(9)]).expect("consecutive"), Some(7));
        assert!(first_sequence(&[event(7), event(9)]).is_err());
    }

    #[test]
    fn a_chunk_gives_the_parts_in_range() {
        let mut lines = Vec::new();
        lines_within(10, ["a", "b", "c", "d"], (11, 13), &mut lines);
        assert_eq!(lines, ["b", "c"]);
        let mut events = Vec::new();
        let parts = || (5..9).map(|n| (format!("{{\"n\":{n}}}"), Some("null".to_owned())));
        assert!(!events_after(5, parts(), 6, 10, &mut events));
        assert_eq!(events, [event(7), event(8)]);
        assert!(events_after(5, parts(), 0, 3, &mut events));
        assert_eq!(events.len(), 3, "the limit counts what `out` held before");
    }
}
