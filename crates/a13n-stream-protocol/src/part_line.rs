//! Scanning a text part's start or end into borrowed typed fields without a JSON tree: what the part lanes of
//! [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) and
//! [`HarnessAguiStreamObserver::observe_line`](crate::HarnessAguiStreamObserver::observe_line) read. A text part's
//! start opens a message (`TEXT_MESSAGE_START`, and its first content when it has some); its end closes it
//! (its content when none was sent yet, then `TEXT_MESSAGE_END`).

use std::borrow::Cow;

use crate::scan::Scanner;
use crate::time::{SourceTime, UtcTime};

/// The longest part line the lanes take (a longer one is rare and takes the general path).
const MAX_PART_LINE_BYTES: usize = 64 * 1024;

/// Which boundary of the part the line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Boundary {
    Start,
    End,
}

/// A text part's start or end, as the conversion reads it.
pub(crate) struct PartLine<'a> {
    pub(crate) thread_id: Cow<'a, str>,
    pub(crate) run_id: Cow<'a, str>,
    pub(crate) timestamp: i64,
    pub(crate) index: i64,
    pub(crate) boundary: Boundary,
    /// The part's text.
    pub(crate) content: Cow<'a, str>,
    /// The part's own message id, when it names one.
    pub(crate) id: Option<Cow<'a, str>>,
}

impl<'a> PartLine<'a> {
    /// Scan `line`; `None` for any other line and for anything the general decoder would read differently.
    pub(crate) fn scan(line: &'a str) -> Option<PartLine<'a>> {
        if line.len() > MAX_PART_LINE_BYTES {
            return None;
        }
        let mut scanner = Scanner::new(line);
        let (mut thread_id, mut run_id, mut sequence, mut occurred_at) = (None, None, None, None);
        let (mut index, mut event_kind, mut part_kind, mut content, mut id) = (None, None, None, None, None);
        let (mut seen_event, mut seen_part) = (false, false);
        fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
            slot.is_none().then_some(())?;
            *slot = Some(value?);
            Some(())
        }
        scanner.object(|scanner, key| match key.as_ref() {
            "thread_id" => once(&mut thread_id, scanner.string()),
            "run_id" => once(&mut run_id, scanner.string()),
            "sequence" => once(&mut sequence, scanner.integer()),
            "occurred_at" => once(&mut occurred_at, scanner.string()),
            "event" => {
                (!std::mem::replace(&mut seen_event, true)).then_some(())?;
                scanner.object(|scanner, key| match key.as_ref() {
                    "index" => once(&mut index, scanner.integer()),
                    "event_kind" => once(&mut event_kind, scanner.string()),
                    "part" => {
                        (!std::mem::replace(&mut seen_part, true)).then_some(())?;
                        scanner.object(|scanner, key| match key.as_ref() {
                            "part_kind" => once(&mut part_kind, scanner.string()),
                            "content" => once(&mut content, scanner.string()),
                            "id" => once(&mut id, scanner.opt_string()),
                            // Not read by a text part's conversion; any value will do.
                            _ => scanner.skip_value(),
                        })
                    }
                    // `previous_part_kind`, `next_part_kind` and anything else: not read.
                    _ => scanner.skip_value(),
                })
            }
            _ => None,
        })?;
        scanner.end()?;
        sequence?;
        let boundary = match event_kind?.as_ref() {
            "part_start" => Boundary::Start,
            "part_end" => Boundary::End,
            _ => return None,
        };
        (part_kind? == "text").then_some(())?;
        let (thread_id, run_id): (Cow<'a, str>, Cow<'a, str>) = (thread_id?, run_id?);
        if thread_id.trim().is_empty() || run_id.trim().is_empty() {
            return None;
        }
        let timestamp = SourceTime::parse(&occurred_at?).ok()?.timestamp_ms();
        // A time the display cannot hold is an error the general path names.
        UtcTime::from_epoch_ms(timestamp)?;
        Some(PartLine { thread_id, run_id, timestamp, index: index?, boundary, content: content?, id: id.flatten() })
    }

    /// The part's own message id, when it names a non-empty one.
    pub(crate) fn own_id(&self) -> Option<&str> {
        self.id.as_deref().filter(|id| !id.is_empty())
    }
}
