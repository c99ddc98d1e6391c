//! Laying lines out again by shape. A journal written in another layout writes each kind of line the same way
//! every time: a line with the same bytes as a line laid out before, outside its string values and numbers (its
//! holes, as [`super::layout`] finds them), is laid out the same way, with its own values where the other's were.
//! So the memo lays out a line of a known shape by copying the remembered text around the line's values, instead
//! of reading the line's objects one by one ([`laid_out_copying`]).
//!
//! Why that is exact: the two lines differ only inside string values that choose no model and numbers, which
//! [`laid_out_copying`] copies as they stand or leaves out with the key that holds them, and inside date-times held to
//! Pydantic's own spelling, which it copies too. Everything it decides by (the keys and their order, the values
//! that choose a model, which fields are missing, what each value opens with) is in the bytes the lines share. A
//! line whose laying out wrote a value otherwise than it stands (a date-time put in Pydantic's spelling) is not
//! remembered, nor one with a key spelled with an escape (the holes are found by keys as spelled, laying out reads
//! them decoded), nor one where a key that chooses a model or is a date-time holds an object or array (laying out
//! reads its whole text, an escape anywhere in it included, where the holes are its strings). Laying out also
//! checks that every value is valid JSON: a copied value is checked again by the lane that reads the laid-out text,
//! as in any line, but one left out is not, so the memo checks those itself.

use std::ops::Range;

use super::laid_out::{laid_out_copying, LaidOut};
use super::layout::Shape;
use crate::scan::Scanner;

/// How many shapes the memo keeps: a run's kinds of line (a content delta, an argument delta, a part's start and
/// end of each kind, a tool's return, the lifecycle events), the latest used first. Lines whose values are objects
/// of their own shape (a tool's result) come once each, and would push out the kinds that recur, so a shape a line
/// has matched is kept apart ([`KEPT`] at most, the longest unused of them going back when more are): the oldest
/// of the others makes room.
const SHAPES: usize = 32;

/// How many of the [`SHAPES`] may be kept apart as matched: the rest take the new shapes, so two new shapes that
/// take turns both stay long enough to match.
const KEPT: usize = 24;

/// Lines laid out before, by shape (see the module's documentation).
#[derive(Debug, Default)]
pub(crate) struct LaidOutMemo {
    shapes: Vec<Remembered>,
    /// Where the holes' values are in the line being matched (working memory).
    found: Vec<Range<usize>>,
}

/// A line laid out, its shape, and the laid-out text as pieces: its own text, and where each hole's value goes.
#[derive(Debug, Default)]
struct Remembered {
    shape: Shape,
    text: String,
    /// The text's pieces in order: a stretch of `text`, then the value of the hole it names (`None` after the last).
    pieces: Vec<(Range<usize>, Option<usize>)>,
    /// The holes whose values laying out left out.
    left_out: Vec<usize>,
    /// Whether the shape is kept apart: a line has matched it since it was remembered (see [`KEPT`]).
    matched: bool,
}

impl LaidOutMemo {
    /// `line` laid out ([`laid_out_copying`]'s text, which this equals): by the shape of a line remembered, or else
    /// read and then remembered.
    pub(crate) fn laid_out(&mut self, line: &str) -> Option<String> {
        self.by_shape(line).or_else(|| self.read(line))
    }

    /// `line` laid out by the shape of a line remembered, when one matches. Such a line has no whitespace between
    /// its tokens: the memo remembers only lines laying out read, which are JSON with none, and whitespace there
    /// is in the bytes a shape compares (its holes are string values and numbers).
    pub(crate) fn by_shape(&mut self, line: &str) -> Option<String> {
        let found = &mut self.found;
        let index = self.shapes.iter().position(|remembered| {
            remembered.shape.holes_of(line.as_bytes(), found) && remembered.left_out_valid(line, found)
        })?;
        self.shapes[index].matched = true;
        self.shapes[..=index].rotate_right(1);
        if self.shapes.iter().filter(|remembered| remembered.matched).count() > KEPT {
            if let Some(longest_unused) = self.shapes.iter().rposition(|remembered| remembered.matched) {
                self.shapes[longest_unused].matched = false;
            }
        }
        Some(self.shapes[0].fill(line, &self.found))
    }

    /// `line` laid out by reading it ([`laid_out_copying`]), then remembered by its shape.
    pub(crate) fn read(&mut self, line: &str) -> Option<String> {
        let laid = laid_out_copying(line)?;
        self.remember(line, &laid);
        Some(laid.text)
    }

    fn remember(&mut self, line: &str, laid: &LaidOut) {
        if laid.rewritten {
            return;
        }
        if self.shapes.len() < SHAPES {
            self.shapes.push(Remembered::default());
        }
        // The oldest shape not kept apart makes room; its buffers are reused for the newest.
        let last = self.shapes.len() - 1;
        let room = self.shapes.iter().rposition(|remembered| !remembered.matched).unwrap_or(last);
        self.shapes[..=room].rotate_right(1);
        self.shapes[0].matched = false;
        if !self.shapes[0].remember(line, laid) {
            self.shapes.remove(0);
        }
    }
}

impl Remembered {
    /// Remember `line`, laid out as `laid`: `false` when its shape cannot be read, or a hole's value is neither
    /// inside a stretch laying out copied nor apart from all of them (left out with its key).
    fn remember(&mut self, line: &str, laid: &LaidOut) -> bool {
        if !self.shape.remember_line(line.as_bytes()) {
            return false;
        }
        // Where each hole's value went in the laid-out text (and its length), and which were left out.
        let mut placed: Vec<(usize, usize, usize)> = Vec::new();
        self.left_out.clear();
        for (hole, value) in self.shape.holes().enumerate() {
            let copy = laid.copies.iter().find(|(copied, _)| copied.start <= value.start && value.end <= copied.end);
            match copy {
                Some((copied, at)) => placed.push((at + (value.start - copied.start), hole, value.len())),
                // Partly inside a copied stretch, which laying out never makes: not remembered.
                None if laid.copies.iter().any(|(copied, _)| copied.start < value.end && value.start < copied.end) => {
                    return false
                }
                None => self.left_out.push(hole),
            }
        }
        placed.sort_unstable();
        self.pieces.clear();
        let mut from = 0;
        for (at, hole, len) in placed {
            self.pieces.push((from..at, Some(hole)));
            from = at + len;
        }
        self.pieces.push((from..laid.text.len(), None));
        self.text.clear();
        self.text.push_str(&laid.text);
        true
    }

    /// Whether the values of `line` (at `found`) that laying out leaves out are valid JSON, as it requires.
    fn left_out_valid(&self, line: &str, found: &[Range<usize>]) -> bool {
        self.left_out.iter().all(|&hole| {
            let mut scanner = Scanner::new(&line[found[hole].clone()]);
            scanner.raw_value().is_some() && scanner.end().is_some()
        })
    }

    /// The remembered text with `line`'s values (at `found`, a hole's each) in the holes'.
    fn fill(&self, line: &str, found: &[Range<usize>]) -> String {
        let mut out = String::with_capacity(self.text.len() + line.len());
        for (own, hole) in &self.pieces {
            out.push_str(&self.text[own.clone()]);
            if let Some(hole) = hole {
                out.push_str(&line[found[*hole].clone()]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source_model::laid_out::laid_out;

    const HEAD: &str = r#""occurred_at":"2026-11-29T12:00:01+00:00","run_id":"r","sequence":1,"thread_id":"t""#;

    /// A sorted line's content delta, with `text` as its delta and `index` as its part's index.
    fn delta(text: &str, index: u32) -> String {
        format!(
            r#"{{"event":{{"delta":{{"content_delta":"{text}","part_delta_kind":"text","provider_details":null}},"event_kind":"part_delta","index":{index}}},{HEAD}}}"#
        )
    }

    #[test]
    fn a_line_of_a_known_shape_is_laid_out_as_reading_it_would() {
        let mut memo = LaidOutMemo::default();
        let lines = [delta("Hel", 0), delta("lo, \\\"you\\\"", 12), delta("", 3), delta("\\u00e9t\\u00e9", 7)];
        for line in &lines {
            assert_eq!(memo.laid_out(line), laid_out(line), "{line}");
        }
        assert_eq!(memo.shapes.len(), 1, "one shape for lines that differ in their values alone");
    }

    #[test]
    fn a_line_of_another_shape_is_read() {
        let mut memo = LaidOutMemo::default();
        let first = delta("Hel", 0);
        assert_eq!(memo.laid_out(&first), laid_out(&first));
        // A value that chooses a model, a key left out, a value of another kind: each is another shape.
        let thinking = first.replace(r#""part_delta_kind":"text""#, r#""part_delta_kind":"thinking""#);
        let shorter = first.replace(r#","provider_details":null"#, "");
        let object = first.replace(r#""provider_details":null"#, r#""provider_details":{"a":"b"}"#);
        for line in [&thinking, &shorter, &object] {
            assert_eq!(memo.laid_out(line), laid_out(line), "{line}");
        }
        assert_eq!(memo.shapes.len(), 4);
    }

    /// Lines of shapes that come once each (a tool's result, an object of its own shape) do not push out a shape
    /// lines keep matching; on the old rule (the oldest goes) the content delta's shape was gone after [`SHAPES`]
    /// of them.
    #[test]
    fn shapes_that_recur_outlast_shapes_that_come_once() {
        let mut memo = LaidOutMemo::default();
        for text in ["a", "b"] {
            memo.laid_out(&delta(text, 0));
        }
        for once in 0..3 * SHAPES {
            let line =
                delta("x", 1).replace(r#""provider_details":null"#, &format!(r#""provider_details":{{"k{once}":1}}"#));
            assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
        }
        assert_eq!(memo.shapes.len(), SHAPES);
        let later = delta("c", 2);
        let mut found = Vec::new();
        assert!(memo.shapes.iter().any(|remembered| remembered.shape.holes_of(later.as_bytes(), &mut found)));
        assert_eq!(memo.laid_out(&later), laid_out(&later));
    }

    /// Found by a review: with every shape matched once, new shapes took turns in one place, so two that alternate
    /// pushed each other out and each of their lines was read in full. At most [`KEPT`] are kept apart now.
    #[test]
    fn shapes_that_alternate_after_the_memo_is_full_stay() {
        let mut memo = LaidOutMemo::default();
        let shape = |n: usize, text: &str| {
            delta(text, 1).replace(r#""provider_details":null"#, &format!(r#""provider_details":{{"k{n}":1}}"#))
        };
        for n in 0..SHAPES {
            memo.laid_out(&shape(n, "a"));
            memo.laid_out(&shape(n, "b"));
        }
        assert_eq!(memo.shapes.iter().filter(|remembered| remembered.matched).count(), KEPT);
        for text in ["a", "b", "c", "d"] {
            for n in [SHAPES, SHAPES + 1] {
                let line = shape(n, text);
                assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
            }
        }
        let mut found = Vec::new();
        for n in [SHAPES, SHAPES + 1] {
            let later = shape(n, "e");
            assert!(
                memo.shapes.iter().any(|remembered| remembered.shape.holes_of(later.as_bytes(), &mut found)),
                "{n}"
            );
        }
    }

    /// A line with whitespace between its tokens matches no shape (the rule's caller asks the memo before looking
    /// for whitespace to leave out), while one with whitespace inside its strings alone does.
    #[test]
    fn a_line_with_whitespace_between_its_tokens_matches_no_shape() {
        let mut memo = LaidOutMemo::default();
        assert!(memo.laid_out(&delta("a, b: c", 0)).is_some());
        assert_eq!(memo.by_shape(&delta("x, \"y\": z { }", 5)), laid_out(&delta("x, \"y\": z { }", 5)));
        let line = delta("a, b", 1);
        let spaced = [
            line.replacen(r#"":"#, r#"": "#, 1),
            line.replacen(r#","index""#, r#", "index""#, 1),
            format!(" {line}"),
            format!("{line}\t"),
            line.replacen(r#"{"delta":{"#, r#"{"delta": {"#, 1),
        ];
        for spaced in &spaced {
            assert!(crate::lanes::compact::compacted(spaced).is_some(), "{spaced}");
            assert_eq!(memo.by_shape(spaced), None, "{spaced}");
        }
    }

    /// A value left out with its key (one the model drops) is not copied, and the line's others still are.
    #[test]
    fn values_left_out_stay_out() {
        let mut memo = LaidOutMemo::default();
        let line =
            |extra: &str, text: &str| delta(text, 1).replace(r#""index":1"#, &format!(r#""index":1,"zz":"{extra}""#));
        for (extra, text) in [("a", "one"), ("bb", "two"), ("", "three")] {
            let line = line(extra, text);
            let laid = memo.laid_out(&line);
            assert_eq!(laid, laid_out(&line), "{line}");
            assert!(!laid.unwrap().contains("zz"));
        }
        assert_eq!(memo.shapes.len(), 1);
    }

    /// Found by a review: a key spelled with an escape is read decoded by laying out (here `part_delta_kind`, whose
    /// value chooses the delta's model) but as spelled by the shape, where its value was a hole: a line choosing
    /// another model matched the first one's shape.
    #[test]
    fn a_line_with_a_key_spelled_with_an_escape_is_not_remembered() {
        let mut memo = LaidOutMemo::default();
        for kind in ["text", "thinking"] {
            let line =
                delta("x", 0).replace(r#""part_delta_kind":"text""#, &format!(r#""part\u005fdelta_kind":"{kind}""#));
            assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
        }
        assert!(memo.shapes.is_empty());
    }

    /// Found by a review: a key whose value may choose a model (`provider_name`) holding an object is read whole by
    /// laying out, which refuses an escape anywhere in it, but the object's strings are holes to the shape.
    #[test]
    fn a_line_with_an_object_under_a_model_choosing_key_is_not_remembered() {
        let mut memo = LaidOutMemo::default();
        for inner in [r#""x""#, r#""\u0041""#] {
            let line =
                delta("x", 0).replace(r#""provider_details":null"#, &format!(r#""provider_name":{{"a":{inner}}}"#));
            assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
        }
        assert!(memo.shapes.is_empty());
    }

    /// Found by a review: a value laying out leaves out (with a key the model drops) must still be valid JSON, as
    /// laying out requires; the laid-out text no longer holds it for a lane to check.
    #[test]
    fn a_value_left_out_is_still_checked() {
        let mut memo = LaidOutMemo::default();
        let line = |extra: &str| delta("x", 1).replace(r#""index":1"#, &format!(r#""index":1,"zz":{extra}"#));
        for extra in ["1", "1e", "01", "-", r#""a""#, r#""\x""#, r#""\ud800""#, "\"\u{1}\"", "2", r#""b""#] {
            let line = line(extra);
            assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
        }
    }

    /// A date-time laid out in Pydantic's spelling is written, not copied: such a line is not remembered, and
    /// one already in Pydantic's spelling is.
    #[test]
    fn a_date_time_written_again_is_not_remembered() {
        let part = |timestamp: &str| {
            format!(
                r#"{{"event":{{"event_kind":"part_start","index":0,"part":{{"content":"x","part_kind":"builtin-tool-return","timestamp":"{timestamp}","tool_call_id":"c","tool_name":"f"}}}},{HEAD}}}"#
            )
        };
        let mut memo = LaidOutMemo::default();
        for timestamp in ["2026-11-29T12:00:01+00:00", "2026-11-29T12:00:02+00:00"] {
            let line = part(timestamp);
            let laid = laid_out(&line).expect("laid out");
            assert!(laid.contains(&timestamp.replace("+00:00", "Z")), "{laid}");
            assert_eq!(memo.laid_out(&line).as_ref(), Some(&laid), "{line}");
        }
        assert!(memo.shapes.is_empty());
        for timestamp in ["2026-11-29T12:00:01Z", "2026-11-29T12:00:02Z"] {
            let line = part(timestamp);
            assert_eq!(memo.laid_out(&line), laid_out(&line), "{line}");
        }
        assert_eq!(memo.shapes.len(), 1);
    }

    /// `value` with its keys sorted, and each string value and number replaced by one of `STRINGS` or `NUMBERS`
    /// where `next` says so (a line of the same shape with other values, or of another shape where the value
    /// chose a model or was a date-time).
    fn respelled(value: &serde_json::Value, next: &mut impl FnMut() -> usize) -> serde_json::Value {
        use serde_json::Value;
        const STRINGS: [&str; 8] =
            ["", "x", "a\"b", "\\", "\u{e9}\u{6771}\u{1f680}", "two\nlines", "\u{1}", "2026-11-29T12:00:01Z"];
        const NUMBERS: [&str; 8] = ["0", "-0", "7", "-12", "1.5", "1e5", "123456789012345678901234567890", "-0.0"];
        match value {
            Value::Object(map) => {
                let mut keys: Vec<_> = map.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|key| (key.clone(), respelled(&map[key], next))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(|item| respelled(item, next)).collect()),
            Value::String(_) if next() % 3 == 0 => Value::String(STRINGS[next() % STRINGS.len()].to_owned()),
            Value::Number(_) if next() % 3 == 0 => serde_json::from_str(NUMBERS[next() % NUMBERS.len()]).unwrap(),
            other => other.clone(),
        }
    }

    /// Every line of the repository's recorded streams with its keys sorted, several times over with a third of
    /// its values changed, through one memo: each laid out exactly as reading it would, and most by a shape.
    #[test]
    fn recorded_lines_with_other_values_are_laid_out_as_reading_them_would() {
        let cases = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/cases");
        let mut dirs: Vec<_> = std::fs::read_dir(cases).unwrap().map(|entry| entry.unwrap().path()).collect();
        dirs.sort();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let (mut memo, mut laid, mut known) = (LaidOutMemo::default(), 0, 0);
        for dir in dirs {
            let Ok(text) = std::fs::read_to_string(dir.join("source.jsonl")) else { continue };
            for line in text.lines() {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                for _ in 0..4 {
                    let line = respelled(&value, &mut next).to_string();
                    known +=
                        usize::from(memo.shapes.iter().any(|r| r.shape.holes_of(line.as_bytes(), &mut Vec::new())));
                    let got = memo.laid_out(&line);
                    assert_eq!(got, laid_out(&line), "{line}");
                    laid += usize::from(got.is_some());
                }
            }
        }
        assert!(laid > 2000 && known * 2 > laid, "{laid} lines laid out, {known} by a shape");
    }
}
