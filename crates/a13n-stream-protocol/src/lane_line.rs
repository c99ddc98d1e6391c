//! The frame every lane's scan shares: a source line `{thread_id, run_id, sequence, occurred_at, event}` walked in
//! place, its identity and time checked as the general decoder checks them, and its `event` handed to the lane's
//! own scan. Also the head of the copy of a source item that a carried-through observation holds.

use std::borrow::Cow;
use std::ops::Range;

use crate::fields::source_key;
use crate::pystr;
use crate::scan::{once, Scanner};
use crate::sink::JsonSink;
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
    let (thread_id, run_id, sequence, occurred_at) = match written_head(line) {
        // The layout every writer uses: the identity read in order, no key compared. Anything after the event
        // but the closing brace would be a repeated or unknown key, which `any_head` refuses too.
        Some((mut scanner, head, _)) => {
            event(&mut scanner)?;
            scanner.literal(b"}")?;
            scanner.end()?;
            head
        }
        None => any_head(line, event)?,
    };
    LineHead::new(thread_id, run_id, sequence, &occurred_at)
}

impl<'a> LineHead<'a> {
    /// The head a line's identity and time make, checked as the general decoder checks them: `None` for a blank
    /// thread or run, or a time the general path would reject or the display cannot hold.
    pub(crate) fn new(
        thread_id: Cow<'a, str>,
        run_id: Cow<'a, str>,
        sequence: i64,
        occurred_at: &str,
    ) -> Option<LineHead<'a>> {
        if pystr::is_blank(&thread_id) || pystr::is_blank(&run_id) {
            return None;
        }
        let time = SourceTime::parse(occurred_at).ok()?;
        time.timestamp_refused().is_none().then_some(())?;
        let timestamp = time.timestamp_ms();
        let at = UtcTime::from_epoch_ms(timestamp)?;
        Some(LineHead { thread_id, run_id, sequence, time, timestamp, at })
    }
}

/// Where a line in the layout every writer uses holds its `sequence` and `occurred_at` values (each with any
/// whitespace before it); `None` for any other layout.
pub(crate) fn written_head_values(line: &str) -> Option<[Range<usize>; 2]> {
    written_head(line).map(|(_, _, values)| values)
}

/// The thread and run a line in the layout every writer uses names, its event skipped unread; `None` for any other
/// layout, or a line with anything after its event (a repeated key would override the head). The line may still
/// be refused when it is decoded.
pub(crate) fn written_identity(line: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    let (mut scanner, (thread_id, run_id, _, _), _) = written_head(line)?;
    scanner.skip_value()?;
    scanner.literal(b"}")?;
    scanner.end()?;
    Some((thread_id, run_id))
}

/// The identity and time a source line spells, unread: thread, run, sequence and time text.
type RawHead<'a> = (Cow<'a, str>, Cow<'a, str>, i64, Cow<'a, str>);

/// A line's head in the layout every writer uses, `{"thread_id":…,"run_id":…,"sequence":…,"occurred_at":…,
/// "event":`, and the scanner at the event. `None` for any other layout (nothing has been handed out yet, so
/// [`any_head`] can read the line again).
fn written_head(line: &str) -> Option<(Scanner<'_>, RawHead<'_>, [Range<usize>; 2])> {
    let mut scanner = Scanner::new(line);
    scanner.literal(br#"{"thread_id":"#)?;
    let thread_id = scanner.string()?;
    scanner.literal(br#","run_id":"#)?;
    let run_id = scanner.string()?;
    scanner.literal(br#","sequence":"#)?;
    let sequence_at = scanner.position();
    let sequence = scanner.integer()?;
    let sequence_at = sequence_at..scanner.position();
    scanner.literal(br#","occurred_at":"#)?;
    let time_at = scanner.position();
    let occurred_at = scanner.string()?;
    let time_at = time_at..scanner.position();
    scanner.literal(br#","event":"#)?;
    Some((scanner, (thread_id, run_id, sequence, occurred_at), [sequence_at, time_at]))
}

/// A line's head in any key order, the event handed to `event` where it comes.
fn any_head<'a>(line: &'a str, mut event: impl FnMut(&mut Scanner<'a>) -> Option<()>) -> Option<RawHead<'a>> {
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
    Some((thread_id?, run_id?, sequence?, occurred_at?))
}

impl LineHead<'_> {
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
        sink.time(self.time);
        sink.key(source_key::written::EVENT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(line: &str) -> Option<(String, String, i64, i64)> {
        let head = scan_line(line, usize::MAX, Scanner::skip_value)?;
        Some((head.thread_id.into_owned(), head.run_id.into_owned(), head.sequence, head.timestamp))
    }

    /// The written layout (read in order) and any other (read key by key) give the same head; what the
    /// key-by-key reading refuses after the event, the in-order reading refuses too.
    #[test]
    fn every_layout_reads_the_same_head() {
        let written = r#"{"thread_id":"t","run_id":"r","sequence":7,"occurred_at":"2026-11-29T12:00:00.5+00:00","event":{"a":1}}"#;
        let expected = Some(("t".to_owned(), "r".to_owned(), 7, 1_795_953_600_500));
        assert_eq!(head(written), expected);
        for other in [
            r#"{"event":{"a":1},"sequence":7,"run_id":"r","occurred_at":"2026-11-29T12:00:00.5+00:00","thread_id":"t"}"#,
            r#"{ "thread_id" : "t", "run_id":"r","sequence":7,"occurred_at":"2026-11-29T12:00:00.5+00:00","event":{"a":1}}"#,
            r#"{"thread_id":"\u0074","run_id":"r","sequence":7,"occurred_at":"2026-11-29T12:00:00.5+00:00","event":{"a":1}}"#,
        ] {
            assert_eq!(head(other), expected, "{other}");
        }
        for refused in [
            written.replace(r#"{"a":1}}"#, r#"{"a":1},"thread_id":"t"}"#),
            written.replace(r#"{"a":1}}"#, r#"{"a":1},"extra":1}"#),
            written.replace(r#"{"a":1}}"#, r#"{"a":1}}x"#),
            written.replace(r#""run_id":"r""#, r#""run_id":" ""#),
            written.replace(r#","event":{"a":1}"#, ""),
        ] {
            assert_eq!(head(&refused), None, "{refused}");
        }
    }
}
