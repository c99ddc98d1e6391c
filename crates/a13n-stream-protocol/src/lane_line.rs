//! The frame every lane's scan shares: a source line `{thread_id, run_id, sequence, occurred_at, event}` walked in
//! place, its identity and time checked as the general decoder checks them, and its `event` handed to the lane's
//! own scan. Also the head of the copy of a source item that a carried-through observation holds.

use std::borrow::Cow;

use crate::fields::source_key;
use crate::scan::{once, Scanner};
use crate::sink::{Bytes, JsonSink};
use crate::time::{SourceTime, UtcTime};

/// A source line's identity and time.
pub(crate) struct LineHead<'a> {
    pub(crate) thread_id: Cow<'a, str>,
    pub(crate) run_id: Cow<'a, str>,
    pub(crate) sequence: i64,
    pub(crate) time: SourceTime,
    /// The time in epoch milliseconds, as the events' `timestamp`.
    pub(crate) timestamp: i64,
    /// The time as the display holds it.
    pub(crate) at: UtcTime,
}

/// Walk `line` (at most `max_bytes`), handing the value of `event` to `event`, which must consume it. `None` for a
/// longer line, any other or repeated top-level key, a blank thread or run, a time the general path would reject
/// or the display cannot hold, or an event the lane's scan refused.
pub(crate) fn scan_line<'a>(
    line: &'a str,
    max_bytes: usize,
    mut event: impl FnMut(&mut Scanner<'a>) -> Option<()>,
) -> Option<LineHead<'a>> {
    if line.len() > max_bytes {
        return None;
    }
    let mut scanner = Scanner::new(line);
    let (mut thread_id, mut run_id, mut sequence, mut occurred_at) = (None, None, None, None);
    let mut seen_event = false;
    scanner.object(|scanner, key| match key.as_ref() {
        "thread_id" => once(&mut thread_id, scanner.string()),
        "run_id" => once(&mut run_id, scanner.string()),
        "sequence" => once(&mut sequence, scanner.integer()),
        "occurred_at" => once(&mut occurred_at, scanner.string()),
        "event" => {
            (!std::mem::replace(&mut seen_event, true)).then_some(())?;
            event(scanner)
        }
        _ => None,
    })?;
    scanner.end()?;
    seen_event.then_some(())?;
    let (thread_id, run_id): (Cow<'a, str>, Cow<'a, str>) = (thread_id?, run_id?);
    if thread_id.trim().is_empty() || run_id.trim().is_empty() {
        return None;
    }
    let time = SourceTime::parse(&occurred_at?).ok()?;
    let timestamp = time.timestamp_ms();
    let at = UtcTime::from_epoch_ms(timestamp)?;
    Some(LineHead { thread_id, run_id, sequence: sequence?, time, timestamp, at })
}

impl LineHead<'_> {
    /// Append the start of a carried-through observation's value, up to its event:
    /// `{"thread_id":…,"run_id":…,"sequence":…,"occurred_at":…,"event":`.
    pub(crate) fn write_value_head(&self, out: &mut Vec<u8>) {
        self.describe_value_head(&mut Bytes(out));
    }

    /// Describe the start of a carried-through observation's value: open it and give its identity and time, up to
    /// the `event` key, whose value (and the closing of the object) is the caller's.
    pub(crate) fn describe_value_head(&self, sink: &mut impl JsonSink) {
        sink.open();
        sink.key(source_key::written::THREAD_ID);
        sink.text(Some(&self.thread_id));
        sink.key(source_key::written::RUN_ID);
        sink.text(Some(&self.run_id));
        sink.key(source_key::written::SEQUENCE);
        sink.integer(self.sequence);
        sink.key(source_key::written::OCCURRED_AT);
        sink.text(Some(&self.time.isoformat()));
        sink.key(source_key::written::EVENT);
    }
}
