//! A fold's side of reading lines ahead ([`crate::read_ahead`]): handing out its memos, taking them back, and
//! folding a line read ahead.

use super::DisplayFold;
use crate::error::FoldError;
use crate::read_ahead::{ReadAhead, ScannedLine};

impl DisplayFold {
    /// A reader of lines ahead of this fold, for a journal replayed on two threads: one scans lines
    /// ([`ReadAhead::scan`]), the other folds them in the same order ([`DisplayFold::replay_scanned`]).
    ///
    /// ```
    /// use a13n_stream_protocol::DisplayFold;
    ///
    /// let journal = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"index":0,"part":{"content":"Hel","part_kind":"text"},"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    /// ];
    /// let mut fold = DisplayFold::new("r");
    /// let mut reader = fold.read_ahead();
    /// let (folded, reader) = std::thread::scope(|scope| {
    ///     let (send, receive) = std::sync::mpsc::sync_channel(64);
    ///     let reading = scope.spawn(move || {
    ///         // The fold stops receiving at a line that fails: then nothing more is read.
    ///         journal.iter().map_while(|line| send.send(reader.scan(line)).ok()).for_each(drop);
    ///         reader
    ///     });
    ///     let folded = receive.iter().try_for_each(|scanned| fold.replay_scanned(&scanned).map(drop));
    ///     drop(receive);
    ///     (folded, reading.join().unwrap())
    /// });
    /// fold.end_read_ahead(reader);
    /// folded?;
    /// let mut folded = DisplayFold::new("r");
    /// journal.iter().try_for_each(|line| folded.replay_line(line).map(drop))?;
    /// assert_eq!(fold.export_json(), folded.export_json());
    /// # Ok::<(), a13n_stream_protocol::FoldError>(())
    /// ```
    ///
    /// Until the reader is given back ([`DisplayFold::end_read_ahead`]), the fold's own line methods read with
    /// fresh memos: the same results, found more slowly.
    pub fn read_ahead(&mut self) -> ReadAhead {
        ReadAhead { memos: std::mem::take(&mut self.fast.memos), for_fold: true }
    }

    /// Take back what `reader` has learnt of the lines it read, so that later lines are read as fast as before.
    pub fn end_read_ahead(&mut self, reader: ReadAhead) {
        self.fast.memos = reader.memos;
    }

    /// Fold a line read ahead: the same as [`DisplayFold::replay_line`] on its line, state for state, and as
    /// atomic. Lines must come in the order they were read (a reader's memos name lines by it). What the scan
    /// made for the fold is taken out of `line`: a line folded twice is read from its text the second time.
    pub fn replay_scanned(&mut self, line: &ScannedLine<'_>) -> Result<usize, FoldError> {
        self.writes_observed = false;
        let folded = self.fold_scanned(line.line(), &line.scanned, line.respell(), &mut Vec::new());
        self.writes_observed = true;
        folded
    }

    /// Fold a line read ahead and append its observed entries to `out`: the same as [`DisplayFold::fold_line`]
    /// on its line, byte for byte, state for state, and as atomic. Lines must come in the order they were read.
    pub fn fold_scanned_line(&mut self, line: &ScannedLine<'_>, out: &mut Vec<u8>) -> Result<usize, FoldError> {
        self.fold_scanned(line.line(), &line.scanned, line.respell(), out)
    }
}
