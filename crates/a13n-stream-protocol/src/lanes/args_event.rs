//! Writing an argument delta's event by the one written before it.
//!
//! The `CUSTOM` observation of an argument delta ([`ArgsDelta::write_event`]) holds the whole source line, so
//! writing it costs as much again as reading the line. But the deltas a [`DeltaMemo`](crate::lanes::delta_memo::DeltaMemo)
//! reads by one remembered line differ from it in three values only (sequence, time and argument text), and their
//! events differ in those and the timestamp made from the time. [`EventTemplate`] keeps the event of the first
//! such delta it writes, with where those four values are, and writes the next ones' events as those bytes with
//! the four values written afresh, each by the writer the full event uses. Any other delta is written in full.

use std::ops::Range;

use crate::json::write_pydantic_str;
use crate::lanes::delta_line::{ArgsDelta, MemoLine};
use crate::sink::{Bytes, JsonSink};

/// The last written argument-delta event, cut where its four changing values are.
#[derive(Clone, Debug, Default)]
pub(crate) struct EventTemplate {
    /// The [`ArgsDelta::memo_line`] and child flag the bytes were written for; `None` holds nothing.
    written_for: Option<(MemoLine, bool)>,
    bytes: Vec<u8>,
    /// Where `bytes` holds the timestamp, sequence, time and argument text, in that order.
    values: [Range<usize>; 4],
}

impl EventTemplate {
    /// Append the event [`ArgsDelta::write_event`] appends for `delta`, from the template when `delta` was read by
    /// the line the template's event was written for.
    pub(crate) fn write(&mut self, delta: &ArgsDelta<'_>, child: bool, out: &mut Vec<u8>) {
        let wanted = delta.memo_line.map(|line| (line, child));
        if wanted.is_none() || wanted != self.written_for {
            let from = out.len();
            delta.write_event(child, out);
            self.written_for = wanted.filter(|_| self.keep(&out[from..], delta));
            return;
        }
        let mut from = 0;
        for (value, (_, write)) in self.values.iter().zip(VALUES) {
            out.extend_from_slice(&self.bytes[from..value.start]);
            write(delta, out);
            from = value.end;
        }
        out.extend_from_slice(&self.bytes[from..]);
    }

    /// Keep `written`, the event of `delta`, when each of its four values is found where it is written, once:
    /// `false` (nothing kept) otherwise.
    fn keep(&mut self, written: &[u8], delta: &ArgsDelta<'_>) -> bool {
        let mut value = Vec::with_capacity(64);
        let mut from = 0;
        let mut values: [Range<usize>; 4] = Default::default();
        // Each key is looked for after the value before it; a string cannot hold a key's unescaped quotes, so the
        // first match is the key itself.
        for (slot, (key, write)) in values.iter_mut().zip(VALUES) {
            let Some(at) = find(&written[from..], key) else { return false };
            let start = from + at + key.len();
            value.clear();
            write(delta, &mut value);
            let end = start + value.len();
            if written.get(start..end) != Some(value.as_slice()) {
                return false;
            }
            *slot = start..end;
            from = end;
        }
        // The argument text's key comes once: a second one would be another field the template does not change.
        if find(&written[from..], VALUES[3].0).is_some() {
            return false;
        }
        self.bytes.clear();
        self.bytes.extend_from_slice(written);
        self.values = values;
        true
    }
}

/// Writes one value of a delta's event.
type WriteValue = fn(&ArgsDelta<'_>, &mut Vec<u8>);

/// The four values a template changes, in the order the event holds them: the key each follows, and its writer
/// (the one the full event uses).
const VALUES: [(&[u8], WriteValue); 4] = [
    (br#""timestamp":"#, |delta, out| Bytes(out).integer(delta.line.head.timestamp)),
    (br#","sequence":"#, |delta, out| Bytes(out).integer(delta.line.head.sequence)),
    (br#","occurred_at":"#, |delta, out| Bytes(out).time(delta.line.head.time)),
    (br#""args_delta":"#, |delta, out| write_pydantic_str(out, delta.text())),
];

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::delta_line::LaneLine;
    use crate::lanes::delta_memo::DeltaMemo;

    const FIRST: &str = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"delta":{"tool_name_delta":null,"args_delta":"{\"q","tool_call_id":"c1","provider_name":null,"provider_details":null,"part_delta_kind":"tool_call"},"event_kind":"part_delta"}}"#;

    fn full(line: &str) -> Vec<u8> {
        let Some(LaneLine::Arguments(delta)) = LaneLine::scan(line) else { panic!("{line}") };
        let mut out = Vec::new();
        delta.write_event(false, &mut out);
        out
    }

    /// Every delta the memo reads by the first line is written as its full event is, whatever its values'
    /// lengths; a child's event is another template.
    #[test]
    fn a_read_delta_is_written_as_in_full() {
        let mut memo = DeltaMemo::default();
        let mut template = EventTemplate::default();
        let Some(LaneLine::Arguments(mut first)) = LaneLine::scan(FIRST) else { panic!() };
        first.memo_line = memo.remember(FIRST, &first);
        let mut out = Vec::new();
        template.write(&first, false, &mut out);
        assert_eq!(out, full(FIRST));
        assert!(template.written_for.is_some());
        let next = [
            FIRST.replace(r#""sequence":1"#, r#""sequence":12345"#).replace(r#"{\"q"#, r#"\": \"ü\n\"}"#),
            FIRST.replace("12:00:01Z", "12:00:01.250+02:00").replace(r#"{\"q"#, ""),
            FIRST.replace(r#""sequence":1"#, r#""sequence":2"#),
        ];
        for line in &next {
            let Some(LaneLine::Arguments(delta)) = memo.read(line) else {
                panic!("not read by the first line: {line}")
            };
            for child in [false, true, false] {
                out.clear();
                template.write(&delta, child, &mut out);
                let mut expected = Vec::new();
                delta.write_event(child, &mut expected);
                assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&expected), "{line}");
            }
        }
    }

    /// A delta no memo read is written in full and leaves no template.
    #[test]
    fn an_unread_delta_keeps_no_template() {
        let Some(LaneLine::Arguments(delta)) = LaneLine::scan(FIRST) else { panic!() };
        let mut template = EventTemplate::default();
        let mut out = Vec::new();
        template.write(&delta, false, &mut out);
        assert_eq!(out, full(FIRST));
        assert!(template.written_for.is_none());
    }
}
