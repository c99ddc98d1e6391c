//! Reading a journal's lines ahead of taking them.
//!
//! A fast lane's scan reads its line and the lanes' memos, never the state of the observer or fold that takes
//! the line. A program that reads a whole journal can therefore scan lines on one thread while the observer or
//! fold takes the lines scanned before on another: a [`ReadAhead`] holds the memos, its [`ReadAhead::scan`] makes
//! a [`ScannedLine`], and [`HarnessAguiStreamObserver::observe_scanned`] or [`DisplayFold::fold_scanned_line`]
//! takes it exactly as `observe_line` or `fold_line` takes the line.
//!
//! [`HarnessAguiStreamObserver::observe_scanned`]: crate::HarnessAguiStreamObserver::observe_scanned
//! [`DisplayFold::fold_scanned_line`]: crate::DisplayFold::fold_scanned_line

use crate::lanes::lane_hint::{respelled_ahead, scan_for_lane, LaneMemos, Respell, Respelled, Scanned};

/// Reads source lines for an observer or a fold ahead of it, on any thread: the lanes' scans, and for a line spelled
/// otherwise than the lanes read, the spelling they may. (A line no lane takes is decoded by its taker: decoded here,
/// it would make the reader the slower of the two on a real Harness run.)
///
/// Made by [`ReadAhead::for_new_fold`] for a fold that has read no line yet, or taken from an observer or a fold
/// with `read_ahead` and given back with `end_read_ahead`. One reader serves one taker: its lines name the memos
/// they were read by.
pub struct ReadAhead {
    pub(crate) memos: LaneMemos,
    /// The taker is a fold: an argument delta read in full also makes its stream's identity, which the fold's
    /// lane then takes instead of making it (an observer reads no identity).
    pub(crate) for_fold: bool,
}

/// A source line as [`ReadAhead::scan`] read it.
pub struct ScannedLine<'a> {
    line: &'a str,
    pub(crate) scanned: Scanned<'a>,
    /// The line spelled again for a lane, where no lane read it as spelled and another spelling is to be tried.
    respelled: Option<Respelled>,
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ScannedLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScannedLine").field("line", &self.line).finish_non_exhaustive()
    }
}

impl ReadAhead {
    /// A reader for a fold that has read no line yet. (An observer's reader comes from its `read_ahead`.)
    pub fn for_new_fold() -> ReadAhead {
        ReadAhead { memos: LaneMemos::default(), for_fold: true }
    }

    /// Read `line` for its taker: what its lane reads, if a lane may take it.
    pub fn scan<'a>(&mut self, line: &'a str) -> ScannedLine<'a> {
        let scanned = scan_for_lane(&mut self.memos, line, self.for_fold);
        let respelled = respelled_ahead(&mut self.memos, line, &scanned);
        ScannedLine { line, scanned, respelled }
    }
}

impl<'a> ScannedLine<'a> {
    /// The line.
    pub fn line(&self) -> &'a str {
        self.line
    }

    /// Where the taker finds the line's other spelling: made by the reader.
    pub(crate) fn respell(&self) -> Respell<'_> {
        Respell::Ahead(self.respelled.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_and_its_lines_move_between_threads() {
        fn sendable<T: Send>() {}
        sendable::<ReadAhead>();
        sendable::<ScannedLine<'static>>();
    }
}
