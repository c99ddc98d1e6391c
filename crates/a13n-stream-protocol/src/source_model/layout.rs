//! Whether a journal line's event is already in its model's layout, read from the text: the fast lanes copy
//! what they scan, so they take only such lines; any other spelling is written in that layout first
//! ([`super::laid_out`]) or takes the general path, which decodes it into that layout.

use std::borrow::Cow;
use std::ops::Range;

use super::scalar::written_as_held;
use super::{choose, unset_text, Default, Extra, Model, Scalar, Ty};
use crate::canonical::{canonical_end, Scratch};
use crate::canonical_token::{integer_end, string_end};
use crate::fields::source_key;
use crate::json::json_string_end;
use crate::lax_time::unix_time_of_number;
use crate::scan::Scanner;

/// More keys than this in one object: not a layout the lanes take.
const MAX_KEYS: usize = 32;

/// Where `line`'s event is and whether it is in its model's layout (every field of the model, in its order, nested
/// models too, and date-times as Pydantic writes them); `None` when the scan cannot read the line (it is not JSON,
/// or has no event).
fn event_layout(line: &str) -> Option<(Range<usize>, bool)> {
    let mut scanner = Scanner::new(line);
    let mut found = None;
    scanner.object(|scanner, key| {
        if key == "event" {
            let text = scanner.raw_value()?;
            found = Some(text);
        } else {
            scanner.skip_value()?;
        }
        Some(())
    })?;
    let text = found?;
    let in_layout = object_in_layout(&mut Scanner::new(text), None)?;
    let start = text.as_ptr() as usize - line.as_ptr() as usize;
    Some((start..start + text.len(), in_layout))
}

/// One object's keys and the ranges of their values' text.
pub(super) struct Entries<'a> {
    pub(super) text: &'a str,
    pub(super) keys: Vec<(Cow<'a, str>, Range<usize>)>,
}

impl<'a> Entries<'a> {
    pub(super) fn read(scanner: &mut Scanner<'a>) -> Option<Entries<'a>> {
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

    pub(super) fn value(&self, key: &str) -> Option<&'a str> {
        self.keys.iter().find(|(name, _)| name == key).map(|(_, range)| &self.text[range.clone()])
    }

    /// A value's text as a string literal holding no escape, for comparing with a `Literal`.
    pub(super) fn plain_string(&self, key: &str) -> Option<Option<&'a str>> {
        self.value(key)
            .map(|text| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).filter(|t| !t.contains('\\')))
    }

    /// Whether the value of a key that chooses a model or is a date-time ([`fixed_key`]) holds an escape, which
    /// only decoding reads.
    pub(super) fn has_escaped_fixed(&self) -> bool {
        self.keys.iter().any(|(key, range)| fixed_key(key.as_bytes()) && self.text[range.clone()].contains('\\'))
    }

    /// The models this object may be as an event, by its `event_kind`.
    pub(super) fn event_models(&self) -> &'static [usize] {
        super::event_models(self.plain_string(source_key::EVENT_KIND).map(Option::unwrap_or_default))
    }

    /// Whether a key is given twice (a decoder keeps the last value, a scan of the text finds the first).
    pub(super) fn has_repeats(&self) -> bool {
        self.keys.iter().enumerate().any(|(at, (key, _))| self.keys[..at].iter().any(|(earlier, _)| earlier == key))
    }
}

/// `None` when the text does not scan; `Some(false)` when it is not in the layout of the model it is.
fn object_in_layout(scanner: &mut Scanner<'_>, choices: Option<&[usize]>) -> Option<bool> {
    let entries = Entries::read(scanner)?;
    // A value that chooses the model spelled with an escape: left to the general path, which decodes it.
    if entries.has_escaped_fixed() {
        return Some(false);
    }
    let choices = choices.unwrap_or_else(|| entries.event_models());
    let Some(model) = choose(choices, |key| entries.plain_string(key)) else { return Some(true) };
    Some(fields_in_layout(&entries, model))
}

fn fields_in_layout(entries: &Entries<'_>, model: &Model) -> bool {
    let declared = model.fields.len();
    let exact = entries.keys.len() == declared || (model.extra == Extra::Allow && entries.keys.len() > declared);
    exact
        && entries.keys.iter().zip(model.fields).all(|((key, range), field)| {
            let text = &entries.text[range.clone()];
            let computed = matches!(field.default, Default::Digest(_)) && unset_text(text.as_bytes());
            key == field.key && !computed && value_in_layout(text, &field.ty).unwrap_or(false)
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
            Some(crate::lax_time::pydantic_datetime(&written).is_none_or(|pydantic| pydantic == written))
        }
        Ty::Time if unix_time_of_number(text).is_some() => Some(false),
        Ty::Scalar(scalar) => Some(written_as_held(text, *scalar)),
        _ => Some(true),
    }
}

/// How many lines each slot of a [`LayoutMemo`] remembers. A lane's lines come in a few recurring shapes (a tool
/// call's start after a thinking part or after another call, a lifecycle event's kinds, a usage report),
/// interleaved, and a journal in another layout brings each twice (as written, out of layout, and laid out): a slot
/// holds enough of them that a run's steady state finds its line's shape.
const SHAPES_PER_SLOT: usize = 24;

/// A line the memo found in its model's layout.
#[derive(Debug)]
pub(crate) struct InLayout {
    /// Where the line's event is, when it is known to be canonical JSON (see [`crate::canonical`]): it matched a
    /// remembered line whose event is, with a canonical string or integer in each of its holes. A lane may then
    /// copy the event without walking it again. `None` says only that the memo does not know.
    pub(crate) canonical_event: Option<Range<usize>>,
}

/// The memo's slots, one for each lane a line's `event_kind` sends it to (`LaneFor`, which checks the count).
pub(crate) const SLOTS: usize = 5;

/// The layout verdicts of recent lines, [`SHAPES_PER_SLOT`] lines a slot (a slot per lane, so that interleaved
/// lines of several lanes each find theirs), the latest found first: a line with the same bytes as a line found in
/// layout, outside its string values and numbers, is in layout too, so the next content delta of a part costs a
/// few byte comparisons instead of a decode; and one with the bytes of a line found out of layout is out of it
/// (see [`Known`]). The values that choose a model (its `Literal` fields) are compared too, and a date-time must be
/// written as Pydantic writes it.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayoutMemo {
    known: [Vec<Known>; SLOTS],
}

/// A line the memo remembers, and its verdict. A line found out of layout is remembered only when the scan read it
/// whole (it is JSON) and each of its date-times is written as Pydantic writes it: the verdict then came from the
/// bytes another line of its shape shares (its keys, their order, the values that choose a model), since a
/// date-time is the only value the layout reads and a line of the shape has each in Pydantic's form. A journal
/// written in another layout (event keys in another order, defaults left out) is then told apart without reading
/// each line's objects.
#[derive(Clone, Debug, Default)]
struct Known {
    shape: Shape,
    in_layout: bool,
}

/// A line found in layout, and where its holes are: the string values and numbers another line of the same
/// shape may hold otherwise.
#[derive(Clone, Debug, Default)]
pub(super) struct Shape {
    line: Vec<u8>,
    holes: Vec<(usize, usize, Hole)>,
    /// Where the line's event is, when its text is canonical JSON; and which of the holes lie in it.
    canonical_event: Option<(Range<usize>, Range<usize>)>,
    /// Whether a key of the line is spelled with an escape (which names the key a decoder reads only decoded), or
    /// the value of a key that chooses a model or is a date-time is an object or array (whose own strings are
    /// holes, where the layout reads the whole value as its key's).
    unfollowed_keys: bool,
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
    /// A number under a date-time's key, read as a Unix time (`read`) or not, as the remembered line's was: a model's
    /// field holding one read is out of its layout, and a payload's key of that name holds any number as written.
    TimeNumber { read: bool },
    /// The value of a scalar field (`int`, `bool`, `float`, base64 `bytes`; a string or, for `string` false, a
    /// number) held as written ([`written_as_held`]: `3.0` is not an `int` field's layout, `+/8=` not base64's).
    Scalar { scalar: Scalar, string: bool },
    /// A computed identifier given ([`Default::Digest`]): any string but an empty one, which the model computes
    /// in place of.
    Digest,
}

impl LayoutMemo {
    /// Whether `line` is in its model's layout (`None` when it is not): known from a line remembered in `slot`,
    /// or checked and then remembered there.
    pub(crate) fn in_layout(&mut self, slot: usize, line: &str) -> Option<InLayout> {
        let known = &mut self.known[slot];
        let verdict = known.iter().enumerate().find_map(|(index, known)| match known.in_layout {
            true => Some((index, Some(known.shape.matches(line.as_bytes())?))),
            false => known.shape.same_shape(line.as_bytes()).then_some((index, None)),
        });
        if let Some((index, verdict)) = verdict {
            known[..=index].rotate_right(1);
            return verdict;
        }
        // A line the scan cannot read is not remembered: the holes take values the scan refuses (a bad escape, a
        // number such as `01`), so lines of its shape may well be JSON in layout.
        let (event, in_layout) = event_layout(line)?;
        if known.len() < SHAPES_PER_SLOT {
            known.push(Known::default());
        }
        // The oldest line's buffers are reused for the newest.
        known.rotate_right(1);
        let newest = &mut known[0];
        newest.in_layout = in_layout;
        if !in_layout {
            if !newest.shape.remember_outside(line.as_bytes()) {
                known.remove(0);
            }
            return None;
        }
        newest.shape.remember(line.as_bytes(), event);
        Some(InLayout { canonical_event: None })
    }
}

impl Shape {
    /// Remember `line`, found out of layout, when the scan follows it and each of its date-times is written as
    /// Pydantic writes it (see [`Known`]); `false` otherwise.
    fn remember_outside(&mut self, line: &[u8]) -> bool {
        self.remember_line(line)
            && self.holes.iter().all(|&(start, end, hole)| match hole {
                Hole::Time => pydantic_time(&line[start + 1..end - 1]),
                Hole::Scalar { scalar, .. } => scalar_held(&line[start..end], scalar),
                Hole::Digest => !unset_text(&line[start..end]),
                Hole::String | Hole::Number | Hole::TimeNumber { .. } => true,
            })
    }

    /// Remember `line`, whose event is at `event`, and find its holes: every string value but a
    /// literal key's ([`KeyKind::Literal`]), and every number.
    fn remember(&mut self, line: &[u8], event: Range<usize>) {
        // Whether a laid-out memo could follow the line's keys does not matter here: it is in layout as it stands.
        self.remember_line(line);
        if self.line.is_empty() || canonical_end(line, event.start, &mut Scratch::default()) != Some(event.end) {
            return;
        }
        let first = self.holes.iter().position(|&(start, _, _)| start >= event.start).unwrap_or(self.holes.len());
        let last = self.holes.iter().position(|&(_, end, _)| end > event.end).unwrap_or(self.holes.len());
        self.canonical_event = Some((event, first..last));
    }

    /// Note the holes of `line` (valid JSON): its string values but a literal key's, and its numbers. A line
    /// the scan cannot follow is forgotten (its text cleared), so no line matches it.
    fn find_holes(&mut self, line: &[u8]) {
        self.unfollowed_keys = false;
        // What the key last seen asks of its value.
        let (mut at, mut kind) = (0, None);
        while at < line.len() {
            match line[at] {
                b'"' => {
                    let Some(end) = json_string_end(line, at + 1) else { return self.line.clear() };
                    let is_key = line[end + 1..].iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b':');
                    if is_key {
                        let key = &line[at + 1..end];
                        self.unfollowed_keys |= key.contains(&b'\\');
                        kind = key_kind(key);
                    } else {
                        let hole = match kind {
                            Some(KeyKind::Literal) => None,
                            Some(KeyKind::Time) => Some(Hole::Time),
                            Some(KeyKind::Scalar(scalar)) => Some(Hole::Scalar { scalar, string: true }),
                            Some(KeyKind::Digest) => Some(Hole::Digest),
                            None => Some(Hole::String),
                        };
                        self.holes.extend(hole.map(|hole| (at, end + 1, hole)));
                    }
                    at = end + 1;
                }
                // `true`, `false`, `null`: the shape's own bytes (the `e` of `true` is no number).
                b't' | b'f' | b'n' => {
                    while line.get(at).is_some_and(u8::is_ascii_lowercase) {
                        at += 1;
                    }
                }
                byte if number_byte(byte) => {
                    let start = at;
                    while line.get(at).is_some_and(|&byte| number_byte(byte)) {
                        at += 1;
                    }
                    let hole = match kind {
                        Some(KeyKind::Scalar(scalar)) => Hole::Scalar { scalar, string: false },
                        Some(KeyKind::Time) => Hole::TimeNumber { read: time_number_read(&line[start..at]) },
                        _ => Hole::Number,
                    };
                    self.holes.push((start, at, hole));
                }
                // (Conservative: the last key seen may be an earlier element's in an array.)
                b'{' | b'[' => {
                    self.unfollowed_keys |= matches!(kind, Some(KeyKind::Literal | KeyKind::Time));
                    at += 1;
                }
                _ => at += 1,
            }
        }
    }

    /// Whether `other` has this line's bytes outside its holes, and in each a value the hole may hold; and where its
    /// event is, when the holes in it hold canonical values and this line's event is canonical.
    fn matches(&self, other: &[u8]) -> Option<InLayout> {
        if !self.ends_as(other) {
            return None;
        }
        // The event starts in the gap before its first hole and ends in the gap before the first hole after it
        // (no hole straddles a brace), at the same offsets from those gaps' starts in `other`.
        let Some((event, inside)) = &self.canonical_event else {
            return self.walk_whole(other, |_| {}).then_some(InLayout { canonical_event: None });
        };
        let mut canonical = true;
        let (from, at) = self.walk(&self.holes[..inside.start], other, (0, 0), None, |_| {})?;
        let start = at + (event.start - from);
        let (from, at) = self.walk(&self.holes[inside.clone()], other, (from, at), Some(&mut canonical), |_| {})?;
        let end = at + (event.end - from);
        let (from, at) = self.walk(&self.holes[inside.end..], other, (from, at), None, |_| {})?;
        self.ends_alike(other, from, at).then_some(InLayout { canonical_event: canonical.then_some(start..end) })
    }

    /// Past `holes` (the next of this line's, from its position `from`, at `other`'s `at`), each with the gap
    /// before it: where this line and `other` then are, or `None` where `other` differs. `canonical`, when given,
    /// is cleared at a value that is not canonical; `each` is told where each hole's value is in `other`.
    fn walk(
        &self,
        holes: &[(usize, usize, Hole)],
        other: &[u8],
        (mut from, mut at): (usize, usize),
        mut canonical: Option<&mut bool>,
        mut each: impl FnMut(Range<usize>),
    ) -> Option<(usize, usize)> {
        for &(start, end, hole) in holes {
            let gap = &self.line[from..start];
            if other.get(at..at + gap.len()) != Some(gap) {
                return None;
            }
            at += gap.len();
            let value = at;
            at = match hole {
                Hole::Number => number_hole(other, at, canonical.as_deref_mut())?,
                Hole::TimeNumber { read } => {
                    let end = number_hole(other, at, canonical.as_deref_mut())?;
                    (time_number_read(&other[at..end]) == read).then_some(end)?
                }
                Hole::String | Hole::Time => string_hole(other, at, hole, canonical.as_deref_mut())?,
                Hole::Scalar { scalar, string } => {
                    let end = match string {
                        true => string_hole(other, at, Hole::String, canonical.as_deref_mut())?,
                        false => number_hole(other, at, canonical.as_deref_mut())?,
                    };
                    scalar_held(&other[at..end], scalar).then_some(end)?
                }
                Hole::Digest => {
                    let end = string_hole(other, at, Hole::String, canonical.as_deref_mut())?;
                    (!unset_text(&other[at..end])).then_some(end)?
                }
            };
            each(value..at);
            from = end;
        }
        Some((from, at))
    }

    /// A line to match others against by its holes alone ([`Shape::holes_of`]); `false` when the scan cannot
    /// follow it, a key is spelled with an escape (its holes are found by the key as spelled, where a decoder reads
    /// a model's key, perhaps one whose value chooses the model or is a date-time), or the value of a key that
    /// chooses a model or is a date-time is an object or array (whose strings the layout reads as that key's).
    pub(super) fn remember_line(&mut self, line: &[u8]) -> bool {
        self.line.clear();
        self.line.extend_from_slice(line);
        self.holes.clear();
        self.canonical_event = None;
        self.find_holes(line);
        !self.line.is_empty() && !self.unfollowed_keys
    }

    /// Where this line's holes are in it, in order.
    pub(super) fn holes(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.holes.iter().map(|&(start, end, _)| start..end)
    }

    /// Whether `other` has this line's bytes outside its holes and in each a value the hole may hold: then `found`
    /// holds where each hole's value is in `other`, in order.
    pub(super) fn holes_of(&self, other: &[u8], found: &mut Vec<Range<usize>>) -> bool {
        found.clear();
        self.ends_as(other) && self.walk_whole(other, |value| found.push(value))
    }

    /// Whether `other` has this line's bytes outside its holes and in each a value the hole may hold.
    fn same_shape(&self, other: &[u8]) -> bool {
        self.ends_as(other) && self.walk_whole(other, |_| {})
    }

    /// Whether `other` ends with this line's text after its last hole (and this line is one the scan followed).
    /// Checked first: it names the event kind (a lane's shapes differ most there), so a line of another shape is
    /// told apart without walking its holes.
    fn ends_as(&self, other: &[u8]) -> bool {
        let tail = self.holes.last().map_or(0, |&(_, end, _)| end);
        !self.line.is_empty() && other.ends_with(&self.line[tail..])
    }

    /// Whether `other` has this line's bytes outside all its holes and in each a value the hole may hold; `each`
    /// is told where each hole's value is in `other`.
    fn walk_whole(&self, other: &[u8], each: impl FnMut(Range<usize>)) -> bool {
        self.walk(&self.holes, other, (0, 0), None, each).is_some_and(|(from, at)| self.ends_alike(other, from, at))
    }

    /// Whether `other` from `at` is this line from `from`, to the end.
    fn ends_alike(&self, other: &[u8], from: usize, at: usize) -> bool {
        other.get(at..) == Some(&self.line[from..])
    }
}

/// Past the number at `at` in `other` (a hole's); `canonical`, when given, cleared unless it is a plain integer.
fn number_hole(other: &[u8], at: usize, canonical: Option<&mut bool>) -> Option<usize> {
    let mut end = at;
    while other.get(end).is_some_and(|&byte| number_byte(byte)) {
        end += 1;
    }
    if end == at {
        return None;
    }
    if let Some(canonical) = canonical.filter(|canonical| **canonical) {
        *canonical = integer_end(other, at) == Some(end);
    }
    Some(end)
}

/// Past the string at `at` in `other` (a hole's), a date-time for [`Hole::Time`]; `canonical`, when given,
/// cleared unless its escapes are the canonical ones.
fn string_hole(other: &[u8], at: usize, hole: Hole, canonical: Option<&mut bool>) -> Option<usize> {
    if other.get(at) != Some(&b'"') {
        return None;
    }
    // The canonical reading first, while the event is still canonical: it finds the same end when the escapes
    // are canonical, at the same cost.
    let checking = canonical.filter(|canonical| **canonical);
    let end = match checking.as_ref().and_then(|_| string_end(other, at)) {
        Some(end) => end,
        None => {
            if let Some(canonical) = checking {
                *canonical = false;
            }
            json_string_end(other, at + 1)? + 1
        }
    };
    if hole == Hole::Time && !pydantic_time(&other[at + 1..end - 1]) {
        return None;
    }
    Some(end)
}

/// Whether a string value's text is a date-time as Pydantic writes it (no escape, the canonical form).
fn pydantic_time(text: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(text) else { return false };
    !text.contains('\\') && crate::lax_time::pydantic_datetime(text).is_some_and(|written| written == text)
}

/// Whether a number (its text in a line) is one Pydantic reads as a Unix time.
fn time_number_read(text: &[u8]) -> bool {
    std::str::from_utf8(text).is_ok_and(|text| unix_time_of_number(text).is_some())
}

/// Whether a scalar field's value (its text in a line) is written as the field holds it.
fn scalar_held(text: &[u8], scalar: Scalar) -> bool {
    std::str::from_utf8(text).is_ok_and(|text| written_as_held(text, scalar))
}

fn number_byte(byte: u8) -> bool {
    matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// What a key of the models' fields asks of its value where the layout reads it: a key of two kinds is the first
/// kind's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyKind {
    /// Its value takes part in choosing a model (a `Literal` field): compared as written.
    Literal,
    /// A date-time field's: its value must be written as Pydantic writes it.
    Time,
    /// A scalar field's: its value must be written as the field holds it.
    Scalar(Scalar),
    /// A computed identifier's ([`Default::Digest`]): an empty string is not its layout.
    Digest,
}

/// What `key` asks of its value, if it is one of the models' keys that ask something.
fn key_kind(key: &[u8]) -> Option<KeyKind> {
    static KEYS: std::sync::OnceLock<rustc_hash::FxHashMap<&'static [u8], KeyKind>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let fields = || super::table::MODELS.iter().flat_map(|model| model.fields);
        let literal = fields().filter(|field| !field.literal.is_empty()).map(|field| (field.key, KeyKind::Literal));
        let time = fields().filter(|field| matches!(field.ty, Ty::Time)).map(|field| (field.key, KeyKind::Time));
        // No key is a scalar of two types (`layout::tests::each_scalar_key_has_one_type`).
        let scalar = fields().filter_map(|field| match field.ty {
            Ty::Scalar(scalar) => Some((field.key, KeyKind::Scalar(scalar))),
            _ => None,
        });
        let digest = fields()
            .filter(|field| matches!(field.default, Default::Digest(_)))
            .map(|field| (field.key, KeyKind::Digest));
        let mut keys = rustc_hash::FxHashMap::default();
        for (key, kind) in literal.chain(time).chain(scalar).chain(digest) {
            keys.entry(key.as_bytes()).or_insert(kind);
        }
        keys
    });
    keys.get(key).copied()
}

/// A key whose value takes part in choosing a model (a `Literal` field) or in its layout (a date-time).
fn fixed_key(key: &[u8]) -> bool {
    matches!(key_kind(key), Some(KeyKind::Literal | KeyKind::Time))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where `line`'s event is, when it is in its model's layout.
    fn laid_out_event(line: &str) -> Option<Range<usize>> {
        event_layout(line).and_then(|(event, in_layout)| in_layout.then_some(event))
    }

    fn line(event: &str) -> String {
        format!(
            r#"{{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{event}}}"#
        )
    }

    #[test]
    fn a_dump_is_in_layout_and_other_spellings_are_not() {
        let dump = r#"{"index":0,"part":{"tool_name":"f","args":"","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"},"previous_part_kind":null,"event_kind":"part_start"}"#;
        assert!(laid_out_event(&line(dump)).is_some());
        let omitted = r#"{"index":0,"part":{"tool_name":"f","args":"","tool_call_id":"c1","part_kind":"tool-call"},"event_kind":"part_start"}"#;
        assert!(laid_out_event(&line(omitted)).is_none());
        let kind_first = r#"{"event_kind":"part_delta","index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"}}"#;
        assert!(laid_out_event(&line(kind_first)).is_none());
        let delta = r#"{"index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}"#;
        assert!(laid_out_event(&line(delta)).is_some());
        let unknown = r#"{"index":0,"delta":{"content_delta":"x","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text","x":1},"event_kind":"part_delta"}"#;
        assert!(laid_out_event(&line(unknown)).is_none());
        let extension = r#"{"schema_version":"1","kind":"lifecycle","payload":{"b":1,"a":2}}"#;
        assert!(laid_out_event(&line(extension)).is_some());
        assert!(laid_out_event(&line(r#"{"kind":"lifecycle","schema_version":"1","payload":{}}"#)).is_none());
        // A model-choosing value spelled with an escape is decoded by the general path, never copied.
        let escaped = r#"{"index":0,"delta":{"part_delta_kind":"tool\u005fcall","args_delta":"x","tool_call_id":"c","tool_name_delta":null,"provider_name":null,"provider_details":null},"event_kind":"part_delta"}"#;
        assert!(laid_out_event(&line(escaped)).is_none());
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
        let tool_return_at = |time: &str| {
            line(&format!(
                r#"{{"part":{{"tool_name":"f","content":"ok","tool_call_id":"c","tool_kind":null,"metadata":null,"timestamp":{time},"outcome":"success","retry":null,"part_kind":"tool-return"}},"content":null,"event_kind":"function_tool_result"}}"#
            ))
        };
        let tool_return = |time: &str| tool_return_at(&format!("\"{time}\""));
        let lines = [
            delta("a", "text"),
            delta("a longer \\\"escaped\\\" text", "text"),
            delta("x", "thinking"),
            tool_return("2026-11-29T12:00:00Z"),
            tool_return("2026-11-29T12:00:00+00:00"),
            tool_return("2026-11-29T12:00:00.5Z"),
            // Unix times: a number and text Pydantic reads (out of layout), a number it refuses (kept as given).
            tool_return_at("1764439540"),
            tool_return("1764439540"),
            tool_return_at("1e400"),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"n":-0,"m":1e5}}"#),
            // Out of layout: keys sorted, with other values, and with each date-time spelling.
            sorted_return("ok", "2026-11-29T12:00:00Z"),
            sorted_return("other", "2026-11-29T12:00:00.5Z"),
            sorted_return("ok", "2026-11-29T12:00:00+00:00"),
            line(r#"{"delta":{"content_delta":"a","part_delta_kind":"text"},"event_kind":"part_delta","index":0}"#),
            line(r#"{"delta":{"content_delta":"bc","part_delta_kind":"text"},"event_kind":"part_delta","index":7}"#),
        ];
        for first in &lines {
            for second in &lines {
                let mut memo = LayoutMemo::default();
                assert_eq!(memo.in_layout(0, first).is_some(), laid_out_event(first).is_some(), "{first}");
                assert_eq!(
                    memo.in_layout(0, second).is_some(),
                    laid_out_event(second).is_some(),
                    "{first} then {second}"
                );
            }
        }
    }

    /// A tool's return with its keys sorted (out of layout), holding `content` and `time`.
    fn sorted_return(content: &str, time: &str) -> String {
        line(&format!(
            r#"{{"content":null,"event_kind":"function_tool_result","part":{{"content":"{content}","metadata":null,"outcome":"success","part_kind":"tool-return","retry":null,"timestamp":"{time}","tool_call_id":"c","tool_kind":null,"tool_name":"f"}}}}"#
        ))
    }

    /// A line out of layout is remembered, and a line of its shape is answered from memory; one with a date-time
    /// not as Pydantic writes it is not remembered (a line of its shape with a Pydantic one may be in layout).
    #[test]
    fn lines_out_of_layout_are_remembered_by_shape() {
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &sorted_return("a", "2026-11-29T12:00:00Z")).is_none());
        assert_eq!(memo.known[0].len(), 1);
        assert!(memo.in_layout(0, &sorted_return("b", "2026-11-29T12:00:01.5Z")).is_none());
        assert_eq!(memo.known[0].len(), 1, "answered from memory");
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &sorted_return("a", "2026-11-29T12:00:00+00:00")).is_none());
        assert!(memo.known[0].is_empty());
    }

    /// A payload's key named as a date-time field holds any number as written: a line holding one is remembered,
    /// and a line of its shape is answered from memory while its number is read as a Unix time as the remembered
    /// one was (found by a review: such lines were forgotten, and each was checked in full).
    #[test]
    fn a_number_under_a_date_times_key_in_a_payload_is_remembered() {
        let usage =
            |time: &str| line(&format!(r#"{{"schema_version":"1","kind":"usage","payload":{{"timestamp":{time}}}}}"#));
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &usage("1764439540")).is_some());
        assert!(memo.in_layout(0, &usage("1764439541.5")).is_some());
        assert_eq!(memo.known[0].len(), 1, "answered from memory");
        assert!(memo.in_layout(0, &usage("1e400")).is_some());
        assert_eq!(memo.known[0].len(), 2, "a number not read as a Unix time is checked in full");
    }

    /// Found by a review: a line the scan refuses (a lone surrogate, a number spelled `01`) was remembered as out of
    /// layout, and every later line of its shape, in layout, was then sent to be laid out and on to the general path.
    #[test]
    fn a_line_that_is_not_json_is_not_remembered() {
        let start = |args: &str, index: &str| {
            line(&format!(
                r#"{{"index":{index},"part":{{"tool_name":"f","args":"{args}","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"}},"previous_part_kind":null,"event_kind":"part_start"}}"#
            ))
        };
        for bad in [start(r"\ud800", "1"), start(r"\q", "1"), start("x", "01"), start("x", "1.")] {
            let mut memo = LayoutMemo::default();
            assert!(memo.in_layout(0, &bad).is_none(), "{bad}");
            assert!(memo.known[0].is_empty(), "{bad}");
            let good = start("{}", "2");
            assert!(memo.in_layout(0, &good).is_some(), "{bad} then {good}");
        }
    }

    #[test]
    fn each_scalar_key_has_one_type() {
        let mut types = std::collections::HashMap::new();
        for field in super::super::table::MODELS.iter().flat_map(|model| model.fields) {
            if let Ty::Scalar(scalar) = field.ty {
                assert_eq!(*types.entry(field.key).or_insert(scalar), scalar, "{}", field.key);
            }
        }
    }

    /// A line of a remembered shape in layout is in layout only where each scalar field holds its value as
    /// written: a part's `index` of `-0.0` or `3.0`, a `force_download` of `"yes"`, are read by the model's lax
    /// mode, and the line must be laid out again.
    #[test]
    fn a_scalar_spelled_as_lax_mode_reads_it_is_not_in_layout() {
        let start = |index: &str| {
            line(&format!(
                r#"{{"index":{index},"part":{{"content":"hi","id":null,"provider_name":null,"provider_details":null,"citations":null,"part_kind":"text"}},"previous_part_kind":null,"event_kind":"part_start"}}"#
            ))
        };
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &start("0")).is_some());
        assert!(memo.in_layout(0, &start("12")).is_some());
        for lax in ["3.0", "-0.0", "1e1"] {
            assert!(laid_out_event(&start(lax)).is_none(), "{lax}");
            assert!(memo.in_layout(0, &start(lax)).is_none(), "{lax}");
        }
        let event = |force: &str| {
            format!(
                r#"{{"enqueue_id":"e","messages":[{{"parts":[{{"content":[{{"url":"https://x/a.png","force_download":"{force}","vendor_metadata":null,"kind":"image-url","media_type":"image/png","identifier":"c1"}}],"timestamp":"2026-11-29T18:59:18.959984Z","part_kind":"user-prompt"}}],"timestamp":null,"instructions":null,"kind":"request","run_id":null,"conversation_id":null,"metadata":null,"state":"complete"}}],"parts":[],"event_kind":"enqueued_messages"}}"#
            )
        };
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &line(&event("allow-local"))).is_some());
        assert!(memo.in_layout(0, &line(&event("yes"))).is_none());
    }

    /// A content's bytes must be written as URL-safe, padded base64, and its identifier given, for a line to be in
    /// layout; a line of a remembered shape with other base64 or an empty identifier is not.
    #[test]
    fn binary_content_is_in_layout_only_as_the_model_writes_it() {
        let file = |data: &str, identifier: &str| {
            line(&format!(
                r#"{{"index":0,"part":{{"content":{{"data":"{data}","media_type":"image/png","vendor_metadata":null,"kind":"binary","identifier":"{identifier}"}},"id":null,"provider_name":null,"provider_details":null,"part_kind":"file"}},"previous_part_kind":null,"event_kind":"part_start"}}"#
            ))
        };
        let mut memo = LayoutMemo::default();
        assert!(memo.in_layout(0, &file("aGVsbG_7_w==", "154738")).is_some());
        assert!(memo.in_layout(0, &file("YQ==", "86f7e4")).is_some());
        for (data, identifier) in [("aGVsbG/7/w==", "154738"), ("YQ", "86f7e4"), ("YQ==", "")] {
            assert!(laid_out_event(&file(data, identifier)).is_none(), "{data} {identifier}");
            assert!(memo.in_layout(0, &file(data, identifier)).is_none(), "{data} {identifier}");
        }
    }

    /// The memo says where a line's event is, as canonical JSON, only when the canonical recogniser would accept
    /// that text; and it says so whenever the remembered line's event and the new one's both are.
    #[test]
    fn the_memo_knows_a_canonical_event_only_where_the_recogniser_does() {
        let lifecycle = |thread: &str, number: &str, text: &str| {
            format!(
                r#"{{"thread_id":"{thread}","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{{"schema_version":"1","kind":"lifecycle","payload":{{"type":"x","n":{number},"s":"{text}","l":[{number},"{text}",true,false,null]}}}}}}"#
            )
        };
        let numbers = ["1", "-7", "-0", "1.5", "1e3", "123456789012345678", "1234567890123456789"];
        let texts = ["a", "é", r"a\nb", r"\u001f", r"\u001F", r"\u0041", r"\/", r"\\"];
        let mut lines = Vec::new();
        for number in numbers {
            for text in texts {
                lines.push(lifecycle("t", number, text));
            }
        }
        lines.push(lifecycle(r"t\u0041", "1", "a"));
        // Found by review: the `e` of `true` was a number hole, so `tru5` matched a remembered `true`.
        let mut memo = LayoutMemo::default();
        memo.in_layout(0, &lines[0]);
        let not_json = lines[0].replace("true", "tru5");
        assert!(memo.in_layout(0, &not_json).is_none(), "{not_json}");
        let canonical = |line: &str| {
            let event = laid_out_event(line).expect("in layout");
            (canonical_end(line.as_bytes(), event.start, &mut Scratch::default()) == Some(event.end)).then_some(event)
        };
        for first in &lines {
            for second in &lines {
                let mut memo = LayoutMemo::default();
                assert!(memo.in_layout(0, first).is_some_and(|found| found.canonical_event.is_none()), "{first}");
                let found = memo.in_layout(0, second).expect("in layout").canonical_event;
                let expected = canonical(second);
                if let Some(range) = &found {
                    assert_eq!(Some(range), expected.as_ref(), "{first} then {second}");
                }
                if canonical(first).is_some() && expected.is_some() {
                    assert_eq!(found, expected, "{first} then {second}");
                }
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
        let tool_return_at = |time: &str| {
            line(&format!(
                r#"{{"part":{{"tool_name":"f","content":"ok","tool_call_id":"c","tool_kind":null,"metadata":null,"timestamp":{time},"outcome":"success","retry":null,"part_kind":"tool-return"}},"content":null,"event_kind":"function_tool_result"}}"#
            ))
        };
        let tool_return = |time: &str| tool_return_at(&format!("\"{time}\""));
        let lines = [
            start("null"),
            start(r#""thinking""#),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}"#),
            line(r#"{"schema_version":"1","kind":"lifecycle","payload":{"type":"x","request_id":"r","n":1}}"#),
            tool_return("2026-11-29T12:00:00Z"),
        ];
        let mut memo = LayoutMemo::default();
        for line in &lines {
            assert!(memo.in_layout(0, line).is_some(), "{line}");
        }
        assert_eq!(memo.known[0].len(), lines.len());
        for line in &lines {
            assert!(memo.known[0].iter().any(|known| known.shape.matches(line.as_bytes()).is_some()), "{line}");
        }
        let later = [tool_return("2026-11-29T12:00:01.250000Z"), start(r#""tool-call""#)];
        assert!(later
            .iter()
            .all(|later| memo.known[0].iter().any(|known| known.shape.matches(later.as_bytes()).is_some())));
        for other in ["2026-11-29T12:00:01+00:00", "2026-11-29T12:00:01.25Z", "2026-11-29 12:00:01Z"] {
            let other = tool_return(other);
            assert!(!memo.known[0].iter().any(|known| known.shape.matches(other.as_bytes()).is_some()), "{other}");
            assert!(memo.in_layout(0, &other).is_none(), "{other}");
        }
    }
}
