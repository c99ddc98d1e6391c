//! Whether a journal line's event is already in its model's layout, read from the text: the fast lanes copy
//! what they scan, so they take only such lines, and any other spelling takes the general path, which decodes it
//! into that layout.

use std::borrow::Cow;
use std::ops::Range;

use super::{choose, Extra, Model, Ty};
use crate::json::json_string_end;
use crate::scan::Scanner;

/// More keys than this in one object: not a layout the lanes take.
const MAX_KEYS: usize = 32;

/// Whether `line`'s `event` is spelled in its model's layout: every field of the model, in its order, nested
/// models too (with no key a model drops or refuses), and date-times as Pydantic writes them. `false` for
/// anything the scanner does not read, which then takes the general path.
pub(crate) fn event_in_layout(line: &str) -> bool {
    let mut scanner = Scanner::new(line);
    let mut found = None;
    let walked = scanner.object(|scanner, key| {
        if key == "event" {
            let text = scanner.raw_value()?;
            found = Some(text);
        } else {
            scanner.skip_value()?;
        }
        Some(())
    });
    match (walked, found) {
        (Some(()), Some(text)) => {
            let mut event = Scanner::new(text);
            object_in_layout(&mut event, None).unwrap_or(false)
        }
        _ => false,
    }
}

/// One object's keys and the ranges of their values' text.
struct Entries<'a> {
    text: &'a str,
    keys: Vec<(Cow<'a, str>, Range<usize>)>,
}

impl<'a> Entries<'a> {
    fn read(scanner: &mut Scanner<'a>) -> Option<Entries<'a>> {
        let text = scanner.rest();
        let mut keys = Vec::with_capacity(12);
        scanner.object(|scanner, key| {
            let value = scanner.raw_value()?;
            let start = value.as_ptr() as usize - text.as_ptr() as usize;
            keys.push((key, start..start + value.len()));
            (keys.len() <= MAX_KEYS).then_some(())
        })?;
        Some(Entries { text, keys })
    }

    fn value(&self, key: &str) -> Option<&'a str> {
        self.keys.iter().find(|(name, _)| name == key).map(|(_, range)| &self.text[range.clone()])
    }

    /// A value's text as a string literal holding no escape, for comparing with a `Literal`.
    fn plain_string(&self, key: &str) -> Option<Option<&'a str>> {
        self.value(key)
            .map(|text| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).filter(|t| !t.contains('\\')))
    }
}

/// `None` when the text does not scan; `Some(false)` when it is not in the layout of the model it is.
fn object_in_layout(scanner: &mut Scanner<'_>, choices: Option<&[usize]>) -> Option<bool> {
    let entries = Entries::read(scanner)?;
    // A value that chooses the model spelled with an escape: left to the general path, which decodes it.
    if entries.keys.iter().any(|(key, range)| fixed_key(key.as_bytes()) && entries.text[range.clone()].contains('\\')) {
        return Some(false);
    }
    let choices = match (choices, entries.plain_string("event_kind")) {
        (Some(choices), _) => choices,
        (None, None) => super::event_models(None),
        (None, Some(kind)) => super::event_models(Some(kind.unwrap_or_default())),
    };
    let Some(model) = choose(choices, |key| entries.plain_string(key)) else { return Some(true) };
    Some(fields_in_layout(&entries, model))
}

fn fields_in_layout(entries: &Entries<'_>, model: &Model) -> bool {
    let declared = model.fields.len();
    let exact = entries.keys.len() == declared || (model.extra == Extra::Allow && entries.keys.len() > declared);
    exact
        && entries.keys.iter().zip(model.fields).all(|((key, range), field)| {
            key == field.key && value_in_layout(&entries.text[range.clone()], &field.ty).unwrap_or(false)
        })
}

fn value_in_layout(text: &str, ty: &Ty) -> Option<bool> {
    let mut scanner = Scanner::new(text);
    match ty {
        Ty::Any => Some(true),
        Ty::One(choices) if text.starts_with('{') => object_in_layout(&mut scanner, Some(choices)),
        Ty::List(choices) if text.starts_with('[') => {
            let mut all = true;
            scanner.array(|scanner| {
                let item = scanner.raw_value()?;
                all &= value_in_layout(item, &Ty::One(choices))?;
                Some(())
            })?;
            Some(all)
        }
        Ty::Dict(choices) if text.starts_with('{') => {
            let mut all = true;
            scanner.object(|scanner, _| {
                let item = scanner.raw_value()?;
                all &= value_in_layout(item, &Ty::One(choices))?;
                Some(())
            })?;
            Some(all)
        }
        Ty::Time if text.starts_with('"') => {
            let written = scanner.string()?;
            Some(crate::time::pydantic_datetime(&written).is_none_or(|pydantic| pydantic == written))
        }
        _ => Some(true),
    }
}

/// How many lines in layout each slot of a [`LayoutMemo`] remembers. A lane's lines come in a few recurring
/// shapes (a tool call's start after a thinking part or after another call, a lifecycle event's kinds, a usage
/// report), interleaved: a slot holds enough of them that a run's steady state finds its line's shape.
const SHAPES_PER_SLOT: usize = 16;

/// The layout verdicts of recent lines, [`SHAPES_PER_SLOT`] lines a slot (a slot per lane, so that interleaved
/// lines of several lanes each find theirs), the latest found first: a line with the same bytes as a line found in
/// layout, outside its string values and numbers, is in layout too, so the next content delta of a part costs a
/// few byte comparisons instead of a decode. The values that choose a model (its `Literal` fields) are compared
/// too, and a date-time must be written as Pydantic writes it.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayoutMemo {
    shapes: [Vec<Shape>; 4],
}

/// A line found in layout, and where its holes are: the string values and numbers another line of the same
/// shape may hold otherwise.
#[derive(Clone, Debug, Default)]
struct Shape {
    line: Vec<u8>,
    holes: Vec<(usize, usize, Hole)>,
}

/// What another line of a shape may hold where the shape's line has a string value or a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hole {
    /// Any string.
    String,
    /// Any number.
    Number,
    /// A date-time as Pydantic writes it.
    Time,
}

impl LayoutMemo {
    /// Whether `line` is in its model's layout: known from a line remembered in `slot`, or checked and then
    /// remembered there.
    pub(crate) fn in_layout(&mut self, slot: usize, line: &str) -> bool {
        let shapes = &mut self.shapes[slot];
        if let Some(found) = shapes.iter().position(|shape| shape.matches(line.as_bytes())) {
            shapes[..=found].rotate_right(1);
            return true;
        }
        let found = event_in_layout(line);
        if found {
            if shapes.len() < SHAPES_PER_SLOT {
                shapes.push(Shape::default());
            }
            // The oldest shape's buffers are reused for the newest.
            shapes.rotate_right(1);
            shapes[0].remember(line.as_bytes());
        }
        found
    }
}

impl Shape {
    /// Remember `line` and find its holes: every string value but a [`literal_key`]'s, and every number.
    fn remember(&mut self, line: &[u8]) {
        self.line.clear();
        self.line.extend_from_slice(line);
        self.holes.clear();
        let (mut at, mut key): (usize, &[u8]) = (0, b"");
        while at < line.len() {
            match line[at] {
                b'"' => {
                    let Some(end) = json_string_end(line, at + 1) else { return self.line.clear() };
                    let is_key = line[end + 1..].iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b':');
                    if is_key {
                        key = &line[at + 1..end];
                    } else if !literal_key(key) {
                        let hole = if time_key(key) { Hole::Time } else { Hole::String };
                        self.holes.push((at, end + 1, hole));
                    }
                    at = end + 1;
                }
                byte if number_byte(byte) => {
                    let start = at;
                    while line.get(at).is_some_and(|&byte| number_byte(byte)) {
                        at += 1;
                    }
                    self.holes.push((start, at, Hole::Number));
                }
                _ => at += 1,
            }
        }
    }

    /// Whether `other` has this line's bytes outside its holes, and in each a value the hole may hold.
    fn matches(&self, other: &[u8]) -> bool {
        // The text after the last hole first: it names the event kind (a lane's shapes differ most there), so a
        // line of another shape is told apart without walking its holes.
        let tail = self.holes.last().map_or(0, |&(_, end, _)| end);
        if self.line.is_empty() || !other.ends_with(&self.line[tail..]) {
            return false;
        }
        let (mut from, mut at) = (0usize, 0usize);
        for &(start, end, hole) in &self.holes {
            let gap = &self.line[from..start];
            if other.get(at..at + gap.len()) != Some(gap) {
                return false;
            }
            at += gap.len();
            if hole == Hole::Number {
                let begin = at;
                while other.get(at).is_some_and(|&byte| number_byte(byte)) {
                    at += 1;
                }
                if at == begin {
                    return false;
                }
            } else {
                if other.get(at) != Some(&b'"') {
                    return false;
                }
                let Some(close) = json_string_end(other, at + 1) else { return false };
                if hole == Hole::Time && !pydantic_time(&other[at + 1..close]) {
                    return false;
                }
                at = close + 1;
            }
            from = end;
        }
        other.get(at..) == Some(&self.line[from..])
    }
}

/// Whether a string value's text is a date-time as Pydantic writes it (no escape, the canonical form).
fn pydantic_time(text: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(text) else { return false };
    !text.contains('\\') && crate::time::pydantic_datetime(text).is_some_and(|written| written == text)
}

fn number_byte(byte: u8) -> bool {
    matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// The keys of the models' fields whose value takes part in choosing a model (a `Literal` field), and of their
/// date-time fields; a key of both kinds is a literal one.
struct SpecialKeys {
    literal: rustc_hash::FxHashSet<&'static [u8]>,
    time: rustc_hash::FxHashSet<&'static [u8]>,
}

fn special_keys() -> &'static SpecialKeys {
    static KEYS: std::sync::OnceLock<SpecialKeys> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let fields = || super::table::MODELS.iter().flat_map(|model| model.fields);
        let literal: rustc_hash::FxHashSet<&'static [u8]> =
            fields().filter(|field| !field.literal.is_empty()).map(|field| field.key.as_bytes()).collect();
        let time = fields()
            .filter(|field| matches!(field.ty, Ty::Time))
            .map(|field| field.key.as_bytes())
            .filter(|key| !literal.contains(key))
            .collect();
        SpecialKeys { literal, time }
    })
}

/// A key whose value takes part in choosing a model (a `Literal` field): compared as written.
fn literal_key(key: &[u8]) -> bool {
    special_keys().literal.contains(key)
}

/// A key of a date-time field: its value must be written as Pydantic writes it.
fn time_key(key: &[u8]) -> bool {
    special_keys().time.contains(key)
}

/// A key whose value takes part in choosing a model (a `Literal` field) or in its layout (a date-time).
fn fixed_key(key: &[u8]) -> bool {
    literal_key(key) || time_key(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: &str) -> String {
        format!(
            r#"{{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{event}}}"#
        )
    }

    #[test]
    fn a_dump_is_in_layout_and_other_spellings_are_not() {
        let dump = r#"{"index":0,"part":{"tool_name":"f","args":"","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"},"previous_part_kind":null,"event_kind":"part_start"}"#;
        assert!(event_in_layout(&line(dump)));
        let omitted = r#"{"index":0,"part":{"tool_name":"f","args":"","tool_call_id":"c1","part_kind":"tool-call"},"event_kind":"part_start"}"#;
        assert!(!event_in_layout(&line(omitted)));
        let kind_first = r#"{"event_kind":"part_delta","index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"}}"#;
        assert!(!event_in_layout(&line(kind_first)));
        let delta = r#"{"index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}"#;
        assert!(event_in_layout(&line(delta)));
        let unknown = r#"{"index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text","x":1},"event_kind":"part_delta"}"#;
        assert!(!event_in_layout(&line(unknown)));
        let extension = r#"{"schema_version":"1","kind":"lifecycle","payload":{"b":1,"a":2}}"#;
        assert!(event_in_layout(&line(extension)));
        assert!(!event_in_layout(&line(r#"{"kind":"lifecycle","schema_version":"1","payload":{}}"#)));
        // A model-choosing value spelled with an escape is decoded by the general path, never copied.
        let escaped = r#"{"index":0,"delta":{"part_delta_kind":"tool\u005fcall","args_delta":"x","tool_call_id":"c","tool_name_delta":null,"provider_name":null,"provider_details":null},"event_kind":"part_delta"}"#;
        assert!(!event_in_layout(&line(escaped)));
    }

    /// The memo answers as a full check would: for a line of the remembered shape with other values, and for
    /// lines that differ only in a value that chooses the model or in a date-time's layout.
    #[test]
    fn the_memo_answers_as_the_full_check() {
        let delta = |text: &str, kind: &str| {
            line(&format!(
                r#"{{"index":0,"delta":{{"content_delta":"{text}","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"{kind}"}},"event_kind":"part_delta"}}"#
            ))
        };
        let tool_return = |time: &str| {
            line(&format!(
                r#"{{"part":{{"tool_name":"f","content":"ok","tool_call_id":"c","tool_kind":null,"metadata":null,"timestamp":"{time}","outcome":"success","retry":null,"part_kind":"tool-return"}},"content":null,"event_kind":"function_tool_result"}}"#
            ))
        };
        let lines = [
            delta("a", "text"),
            delta("a longer \\\"escaped\\\" text", "text"),
            delta("x", "thinking"),
            tool_return("2026-11-29T12:00:00Z"),
            tool_return("2026-11-29T12:00:00+00:00"),
            tool_return("2026-11-29T12:00:00.5Z"),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"n":-0,"m":1e5}}"#),
        ];
        for first in &lines {
            for second in &lines {
                let mut memo = LayoutMemo::default();
                assert_eq!(memo.in_layout(0, first), event_in_layout(first), "{first}");
                assert_eq!(memo.in_layout(0, second), event_in_layout(second), "{first} then {second}");
            }
        }
    }

    /// A slot holds several interleaved shapes (a lane's lines recur in a few), each answered from memory after
    /// its first check, and a date-time in Pydantic's form matches another line's.
    #[test]
    fn a_slot_remembers_interleaved_shapes() {
        let start = |previous: &str| {
            line(&format!(
                r#"{{"index":1,"part":{{"tool_name":"f","args":"","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"}},"previous_part_kind":{previous},"event_kind":"part_start"}}"#
            ))
        };
        let tool_return = |time: &str| {
            line(&format!(
                r#"{{"part":{{"tool_name":"f","content":"ok","tool_call_id":"c","tool_kind":null,"metadata":null,"timestamp":"{time}","outcome":"success","retry":null,"part_kind":"tool-return"}},"content":null,"event_kind":"function_tool_result"}}"#
            ))
        };
        let lines = [
            start("null"),
            start(r#""thinking""#),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}"#),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"type":"x","request_id":"r","n":1}}"#),
            tool_return("2026-11-29T12:00:00Z"),
        ];
        let mut memo = LayoutMemo::default();
        for line in &lines {
            assert!(memo.in_layout(0, line), "{line}");
        }
        assert_eq!(memo.shapes[0].len(), lines.len());
        for line in &lines {
            assert!(memo.shapes[0].iter().any(|shape| shape.matches(line.as_bytes())), "{line}");
        }
        let later = [tool_return("2026-11-29T12:00:01.250000Z"), start(r#""tool-call""#)];
        assert!(later.iter().all(|later| memo.shapes[0].iter().any(|shape| shape.matches(later.as_bytes()))));
        for other in ["2026-11-29T12:00:01+00:00", "2026-11-29T12:00:01.25Z", "2026-11-29 12:00:01Z"] {
            let other = tool_return(other);
            assert!(!memo.shapes[0].iter().any(|shape| shape.matches(other.as_bytes())), "{other}");
            assert!(!memo.in_layout(0, &other), "{other}");
        }
    }
}
