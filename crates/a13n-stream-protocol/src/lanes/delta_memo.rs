//! Reading a part delta by the one before it.
//!
//! The deltas of one part come one after another, and their lines differ in three values only: the sequence, the
//! time and the delta's text (a tool call's argument text, a text or thinking part's content). [`DeltaMemo`] keeps
//! the last delta line the full scan read, with where those three values are. A line with the same bytes
//! everywhere else is the same kind of delta of the same part, so its fields are the remembered ones, found at the
//! same places once the three values' lengths are allowed for; only the three values are read. Any other line is
//! scanned in full.

use std::borrow::Cow;
use std::ops::Range;

use crate::json::same;
use crate::lane_line::{written_head_values, LineHead};
use crate::lanes::delta_line::{ArgsDelta, ContentDelta, DeltaLine, LaneLine, MemoLine, MAX_ARGS_LINE_BYTES};
use crate::scan::Scanner;
use crate::source::MAX_SOURCE_LINE_BYTES;

/// The last delta line scanned in full, and where its fields are.
/// Not `Clone`: a copy would give lines the names this memo gives them.
#[derive(Debug)]
pub(crate) struct DeltaMemo {
    /// Empty until a line is remembered.
    line: String,
    /// Where the line holds its sequence, time and delta text, in that order.
    values: [Range<usize>; 3],
    fields: Option<Fields>,
    /// Counts the lines offered to [`DeltaMemo::remember`] and [`DeltaMemo::remember_content`]: names the
    /// remembered line ([`ArgsDelta::memo_line`]). It only grows, so no two remembered lines share a name.
    generation: u64,
    /// This memo's own number, so that no two memos give a line the same name (a fold may take deltas read by a
    /// memo it did not make: [`crate::display::ReadAhead`]).
    serial: u64,
}

impl Default for DeltaMemo {
    fn default() -> DeltaMemo {
        // A counter, not a clock or randomness: it only makes memos' names differ.
        static SERIALS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        DeltaMemo {
            line: String::new(),
            values: Default::default(),
            fields: None,
            generation: 0,
            serial: SERIALS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// The longest line the memo remembers or reads: the argument lane's bound (the full scan reads longer lines).
const MAX_MEMO_LINE_BYTES: usize =
    if MAX_ARGS_LINE_BYTES < MAX_SOURCE_LINE_BYTES { MAX_ARGS_LINE_BYTES } else { MAX_SOURCE_LINE_BYTES };

/// Which lane the remembered line is for, and so which field its text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// `args_delta`: an argument delta.
    Arguments,
    /// `content_delta`: a text or thinking part's content delta.
    Content,
}

/// Where the remembered line holds each field the delta borrows, and the fields that are not text.
#[derive(Clone, Debug)]
struct Fields {
    text: Text,
    thread_id: Range<usize>,
    run_id: Range<usize>,
    part_delta_kind: Range<usize>,
    signature_delta: Option<Range<usize>>,
    tool_name_delta: Option<Range<usize>>,
    tool_call_id: Option<Range<usize>>,
    provider_name: Option<Range<usize>>,
    provider_details: Option<Range<usize>>,
    provider_name_text: Option<Range<usize>>,
    index: i64,
}

/// Where `part` (a slice of `line`) lies in `line`.
fn span(line: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= line.len()).then_some(start..end)
}

/// Where a borrowed field lies in `line`; `None` (nothing to remember) for text decoded from escapes.
#[allow(clippy::ptr_arg, reason = "the Cow tells the line's own text from text decoded from escapes")]
fn borrowed(line: &str, field: &Cow<'_, str>) -> Option<Range<usize>> {
    match field {
        Cow::Borrowed(part) => span(line, part),
        Cow::Owned(_) => None,
    }
}

/// [`borrowed`] for an optional field: `Some(None)` when absent.
fn optional(line: &str, field: &Option<Cow<'_, str>>) -> Option<Option<Range<usize>>> {
    field.as_ref().map_or(Some(None), |field| borrowed(line, field).map(Some))
}

impl DeltaMemo {
    /// Remember `line`, whose full scan gave the argument delta `delta`, when it is in the writers' layout and
    /// every field it borrows is the line's own text, and return the name [`DeltaMemo::read`] gives the deltas it
    /// reads by it; otherwise forget whatever was remembered.
    pub(crate) fn remember(&mut self, line: &str, delta: &ArgsDelta<'_>) -> Option<MemoLine> {
        self.remember_line(line, &delta.line, Text::Arguments, &delta.provider_name)
    }

    /// [`DeltaMemo::remember`] for a content delta.
    pub(crate) fn remember_content(&mut self, line: &str, delta: &ContentDelta<'_>) {
        self.remember_line(line, &delta.line, Text::Content, &None);
    }

    fn remember_line(
        &mut self,
        line: &str,
        parsed: &DeltaLine<'_>,
        text: Text,
        provider_name_text: &Option<Cow<'_, str>>,
    ) -> Option<MemoLine> {
        self.fields = None;
        self.generation += 1;
        // A line longer than this is read in full each time: the memo keeps no copy of it.
        if line.len() > MAX_MEMO_LINE_BYTES {
            return None;
        }
        let (Some([sequence, time]), Some(delta_text)) = (written_head_values(line), parsed.text_at.clone()) else {
            return None;
        };
        let raw = |raw: Option<&str>| raw.map_or(Some(None), |raw| span(line, raw).map(Some));
        let fields = (|| {
            Some(Fields {
                text,
                thread_id: borrowed(line, &parsed.head.thread_id)?,
                run_id: borrowed(line, &parsed.head.run_id)?,
                part_delta_kind: borrowed(line, &parsed.part_delta_kind)?,
                signature_delta: optional(line, &parsed.signature_delta)?,
                tool_name_delta: optional(line, &parsed.tool_name_delta)?,
                tool_call_id: optional(line, &parsed.tool_call_id)?,
                provider_name: raw(parsed.provider_name)?,
                provider_details: raw(parsed.provider_details)?,
                provider_name_text: optional(line, provider_name_text)?,
                index: parsed.index,
            })
        })();
        // The three values come in this order, and no field lies inside one of them.
        let ordered = sequence.end <= time.start && time.end <= delta_text.start;
        if let (Some(fields), true) = (fields, ordered) {
            self.line.clear();
            self.line.shrink_to(MAX_MEMO_LINE_BYTES);
            self.line.push_str(line);
            self.values = [sequence, time, delta_text];
            self.fields = Some(fields);
            return Some(self.name());
        }
        None
    }

    /// The name of the line remembered last.
    fn name(&self) -> MemoLine {
        MemoLine { memo: self.serial, line: self.generation }
    }

    /// The delta `line` is when it is the remembered line but for its sequence, time and delta text; `None` for
    /// any other line (which is then scanned in full).
    pub(crate) fn read<'a>(&self, line: &'a str) -> Option<LaneLine<'a>> {
        let fields = self.fields.as_ref()?;
        if line.len() > MAX_MEMO_LINE_BYTES {
            return None;
        }
        let old = self.line.as_bytes();
        let [sequence_at, time_at, text_at] = &self.values;
        // The end first (whitespace after the line's object aside, as the full scan allows): it tells another
        // kind of line (a part's start or end, a tool return) at once, before any value is read.
        let json_space = [' ', '\t', '\n', '\r'];
        let tail = self.line[text_at.end..].trim_end_matches(json_space).as_bytes();
        let body = line.trim_end_matches(json_space).len().checked_sub(tail.len())?;
        if !same(&line.as_bytes()[body..body + tail.len()], tail) {
            return None;
        }
        let mut scanner = Scanner::new(&line[..body]);
        scanner.literal(&old[..sequence_at.start])?;
        let new_sequence = scanner.position();
        let sequence = scanner.integer()?;
        let sequence_shift = scanner.position() - new_sequence;
        scanner.literal(&old[sequence_at.end..time_at.start])?;
        let new_time = scanner.position();
        let occurred_at = scanner.string()?;
        let time_shift = scanner.position() - new_time;
        scanner.literal(&old[time_at.end..text_at.start])?;
        let new_text = scanner.position();
        let delta_text = scanner.string()?;
        let text_shift = scanner.position() - new_text;
        (scanner.position() == body).then_some(())?;
        // A field's place in `line`: its place in the remembered line, moved by how much longer or shorter each
        // value before it is.
        let place = |field: &Range<usize>| {
            let mut start = field.start as isize;
            for (value, new_len) in self.values.iter().zip([sequence_shift, time_shift, text_shift]) {
                if field.start >= value.end {
                    start += new_len as isize - value.len() as isize;
                }
            }
            let start = usize::try_from(start).ok()?;
            line.get(start..start + field.len())
        };
        // An optional field: `Some(None)` when absent, `None` when its place is not in `line`.
        let within = |field: &Option<Range<usize>>| match field {
            Some(field) => place(field).map(Some),
            None => Some(None),
        };
        let text = |field: &Option<Range<usize>>| within(field).map(|text| text.map(Cow::Borrowed));
        let head = LineHead::new(
            Cow::Borrowed(place(&fields.thread_id)?),
            Cow::Borrowed(place(&fields.run_id)?),
            sequence,
            &occurred_at,
        )?;
        let (content_delta, args_delta) = match fields.text {
            Text::Arguments => (None, Some(delta_text)),
            Text::Content => (Some(delta_text), None),
        };
        let delta = DeltaLine {
            head,
            index: fields.index,
            part_delta_kind: Cow::Borrowed(place(&fields.part_delta_kind)?),
            content_delta,
            signature_delta: text(&fields.signature_delta)?,
            args_delta,
            tool_name_delta: text(&fields.tool_name_delta)?,
            tool_call_id: text(&fields.tool_call_id)?,
            provider_name: within(&fields.provider_name)?,
            provider_details: within(&fields.provider_details)?,
            text_at: None,
        };
        match fields.text {
            Text::Arguments => {
                let provider_name = text(&fields.provider_name_text)?;
                let memo_line = Some(self.name());
                Some(LaneLine::Arguments(ArgsDelta {
                    line: delta,
                    provider_name,
                    memo_line,
                    prepared: Default::default(),
                }))
            }
            // An empty text is no content delta: the full scan declines it too.
            Text::Content => ContentDelta::new(delta).map(LaneLine::Content),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a lane reads of a delta, and the bytes it writes for it.
    fn reading(delta: &ArgsDelta<'_>) -> String {
        let line = &delta.line;
        let head = &line.head;
        let (mut event, mut identity) = (Vec::new(), Vec::new());
        delta.write_event(false, &mut event);
        delta.write_identity(&mut identity);
        format!(
            "{:?}",
            (
                (&head.thread_id, &head.run_id, head.sequence, head.timestamp, head.at),
                (line.index, &line.part_delta_kind, &line.args_delta, &line.tool_name_delta, &line.tool_call_id),
                (line.provider_name, line.provider_details, &delta.provider_name),
                (String::from_utf8(event).unwrap(), String::from_utf8(identity).unwrap()),
            )
        )
    }

    fn scanned(line: &str) -> Option<ArgsDelta<'_>> {
        arguments(LaneLine::scan(line))
    }

    fn arguments(read: Option<LaneLine<'_>>) -> Option<ArgsDelta<'_>> {
        match read? {
            LaneLine::Arguments(delta) => Some(delta),
            LaneLine::Content(_) => None,
        }
    }

    /// A line the memo reads is read exactly as the full scan reads it; a line it declines is one that differs
    /// from the remembered line outside the three values (or that the full scan refuses).
    #[test]
    fn the_memo_reads_a_line_as_the_full_scan_does() {
        let first = r#"{"thread_id":"t-1","run_id":"r-1","sequence":3,"occurred_at":"2026-11-29T12:00:00.003988+00:00","event":{"index":0,"delta":{"tool_name_delta":null,"args_delta":"ru","tool_call_id":"call_1","provider_name":"openai","provider_details":null,"part_delta_kind":"tool_call"},"event_kind":"part_delta"}}"#;
        let read_by_memo = [
            first.to_owned(),
            first.replace(r#""sequence":3"#, r#""sequence":12345"#),
            first.replace(r#""args_delta":"ru""#, r#""args_delta":"""#),
            first.replace(r#""args_delta":"ru""#, r#""args_delta":"a \"quoted\"\n\u00e9 longer text""#),
            first.replace("00.003988+00:00", "59.5-07:00").replace(r#""sequence":3"#, r#""sequence":4"#),
            first.replace(r#""sequence":3"#, r#""sequence": 7"#),
            format!("{first} \n"),
        ];
        let declined = [
            first.replace("call_1", "call_2"),
            first.replace(r#""index":0"#, r#""index":1"#),
            first.replace(r#""args_delta":"ru""#, r#""args_delta":null"#),
            first.replace(r#""args_delta":"ru""#, r#""args_delta":7"#),
            first.replace(r#""sequence":3"#, r#""sequence":-3"#),
            first.replace(r#""sequence":3"#, r#""sequence":3.5"#),
            first.replace("2026-11-29T12:00:00.003988+00:00", "yesterday"),
            first.replace(r#""t-1""#, r#""  ""#),
            format!("{first}x"),
            first.replace(r#""part_delta"}}"#, r#""part_delta"},"x":1}"#),
        ];
        let mut memo = DeltaMemo::default();
        memo.remember(first, &scanned(first).unwrap());
        for line in &read_by_memo {
            let (by_memo, by_scan) = (arguments(memo.read(line)), scanned(line));
            assert_eq!(by_memo.as_ref().map(reading), by_scan.as_ref().map(reading), "{line}");
            assert!(by_memo.is_some(), "{line}");
        }
        for line in &declined {
            assert!(memo.read(line).is_none(), "{line}");
        }
    }

    /// Everything a content lane reads of a delta, and the event it writes for it.
    fn reading_content(delta: &ContentDelta<'_>) -> String {
        let line = &delta.line;
        let head = &line.head;
        let mut event = Vec::new();
        delta.write_event("msg", false, &mut event);
        format!(
            "{:?}",
            (
                (&head.thread_id, &head.run_id, head.sequence, head.timestamp, head.at),
                (line.index, &line.part_delta_kind, &line.content_delta, &line.signature_delta, &line.args_delta),
                (line.provider_name, line.provider_details, delta.part_kind, delta.event_type),
                String::from_utf8(event).unwrap(),
            )
        )
    }

    fn content(read: Option<LaneLine<'_>>) -> Option<ContentDelta<'_>> {
        match read? {
            LaneLine::Content(delta) => Some(delta),
            LaneLine::Arguments(_) => None,
        }
    }

    /// A text or thinking delta is read by the one before it exactly as the full scan reads it; the memo declines
    /// what the full scan declines (an empty delta) and any line that differs outside the three values.
    #[test]
    fn the_memo_reads_a_content_delta_as_the_full_scan_does() {
        let text = r#"{"thread_id":"t","run_id":"r","sequence":9,"occurred_at":"2026-11-29T12:00:00.5+00:00","event":{"index":1,"delta":{"content_delta":"ver","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}}"#;
        let thinking = r#"{"thread_id":"t","run_id":"r","sequence":6,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"index":0,"delta":{"content_delta":"slas","signature_delta":null,"provider_name":null,"provider_details":null,"part_delta_kind":"thinking"},"event_kind":"part_delta"}}"#;
        for first in [text, thinking] {
            let mut memo = DeltaMemo::default();
            let LaneLine::Content(delta) = LaneLine::scan(first).unwrap() else { panic!("{first}") };
            memo.remember_content(first, &delta);
            let read_by_memo = [
                first.to_owned(),
                first.replace(r#""sequence":"#, r#""sequence":1234"#),
                first.replace(r#""content_delta":""#, r#""content_delta":"a \"quoted\"\n\u00e9 longer "#),
                first.replace("12:00:00", "13:14:15").replace("+00:00", "-07:00"),
            ];
            for line in &read_by_memo {
                let by_scan = content(LaneLine::scan(line));
                assert_eq!(
                    content(memo.read(line)).as_ref().map(reading_content),
                    by_scan.as_ref().map(reading_content)
                );
                assert!(by_scan.is_some(), "{line}");
            }
            let declined = [
                first
                    .replace(r#""content_delta":"ver""#, r#""content_delta":"""#)
                    .replace(r#""content_delta":"slas""#, r#""content_delta":"""#),
                first.replace(r#""index":"#, r#""index":7"#),
                first.replace(r#""provider_name":null"#, r#""provider_name":"x""#),
                first.replace(r#""signature_delta":null"#, r#""signature_delta":"sig""#),
                first.replace(r#""part_delta_kind":"text""#, r#""part_delta_kind":"thinking""#),
                first.replace(r#""part_delta_kind":"thinking""#, r#""part_delta_kind":"text""#),
            ];
            for line in declined.iter().filter(|line| line.as_str() != first) {
                assert!(memo.read(line).is_none(), "{line}");
            }
        }
    }

    /// A content delta longer than the memo's bound is read in full each time: the memo keeps no copy of it.
    #[test]
    fn a_long_content_delta_is_not_remembered() {
        let short = r#"{"thread_id":"t","run_id":"r","sequence":9,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"index":1,"delta":{"content_delta":"ver","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}}"#;
        let long = short.replace("\"ver\"", &format!("\"{}\"", "v".repeat(MAX_MEMO_LINE_BYTES)));
        let mut memo = DeltaMemo::default();
        let LaneLine::Content(delta) = LaneLine::scan(&long).unwrap() else { panic!() };
        memo.remember_content(&long, &delta);
        assert!(memo.read(&long).is_none());
        assert!(memo.line.capacity() <= MAX_MEMO_LINE_BYTES);
        let LaneLine::Content(delta) = LaneLine::scan(short).unwrap() else { panic!() };
        memo.remember_content(short, &delta);
        assert!(memo.read(short).is_some());
        assert!(memo.read(&long).is_none(), "read in full");
    }

    /// A line whose fields are decoded from escapes is not remembered (its fields are not its own text).
    #[test]
    fn a_line_with_escaped_fields_is_not_remembered() {
        let line = r#"{"thread_id":"t\u002d1","run_id":"r","sequence":3,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"index":0,"delta":{"tool_name_delta":null,"args_delta":"ru","tool_call_id":"c","provider_name":null,"provider_details":null,"part_delta_kind":"tool_call"},"event_kind":"part_delta"}}"#;
        let mut memo = DeltaMemo::default();
        memo.remember(line, &scanned(line).unwrap());
        assert!(memo.read(line).is_none());
        let plain = line.replace(r"t\u002d1", "t-1");
        memo.remember(&plain, &scanned(&plain).unwrap());
        assert!(memo.read(&plain).is_some());
    }
}
