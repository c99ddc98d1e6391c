//! Skeletons of canonical values, so that the many values of one shape in a checkpoint are recognised quickly.
//!
//! A checkpoint's observations come in a handful of shapes: the same keys in the same order, the same
//! punctuation, only string values and integers differing. A value's *skeleton* is its text with every string
//! value and integer cut out, leaving holes. Text that matches a skeleton of a value found canonical (the same
//! bytes outside the holes, a canonical string in each string hole, a canonical integer in each integer hole)
//! is canonical too: its structure, keys (so their distinctness), literals and compactness are that value's
//! bytes, and each hole is checked. Matching compares byte runs instead of walking tokens, and skips comparing
//! keys with each other. Most string holes of a shape hold the same string every time (a name, a thread id, a
//! kind): while a hole has, it is compared as those bytes, which is cheaper than finding where a string ends.

use crate::canonical_token::{integer_end, string_end};
use crate::json::same;

/// At most this many skeletons are kept (the least recently matched is replaced first).
const MAX_SKELETONS: usize = 8;
/// Values longer than this are not kept as skeletons (they are rarely repeated and costly to compare).
const MAX_SKELETON_BYTES: usize = 4096;

/// What a hole holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hole {
    String,
    Integer,
}

/// A canonical value with its holes cut out: `literal` is the text outside the holes, and each piece says where
/// its run of `literal` ends and which hole follows (none after the last run). `signature` is the value's text
/// up to the end of its first hole: values of one shape usually share it (an observation's name), so it picks
/// the skeleton to try first.
#[derive(Debug)]
struct Skeleton {
    literal: Vec<u8>,
    pieces: Vec<(usize, Option<Hole>)>,
    signature: Vec<u8>,
    /// Per piece, the string (quotes included) its hole has held in every value compared with the skeleton, while
    /// it has held only that one and it is short: most holes of a shape do (a name, a thread, a kind), and
    /// comparing known bytes costs less than finding where a string ends.
    same_string: Vec<Option<Box<[u8]>>>,
    /// When the skeleton last matched (a [`Skeletons`] clock reading): the least recent is replaced first.
    used: u64,
    /// The slot of the skeleton that matched right after this one last time: values come in a rhythm (a call,
    /// its observations, the next call), so it is tried first next time.
    next: Option<usize>,
}

/// Strings longer than this are not remembered as a hole's one string.
const MAX_SAME_STRING: usize = 64;

impl Skeleton {
    /// The skeleton of `value`, canonical text whose holes are at `holes` (byte ranges, in order, of the text
    /// `value` starts at `offset` of).
    fn new(value: &[u8], offset: usize, holes: &[(usize, usize, Hole)]) -> Skeleton {
        let mut literal = Vec::with_capacity(value.len());
        let mut pieces = Vec::with_capacity(holes.len() + 1);
        let mut same_string = Vec::with_capacity(holes.len() + 1);
        let mut from = 0;
        for &(start, end, hole) in holes {
            literal.extend_from_slice(&value[from..start - offset]);
            pieces.push((literal.len(), Some(hole)));
            let text = &value[start - offset..end - offset];
            same_string.push((hole == Hole::String && text.len() <= MAX_SAME_STRING).then(|| text.into()));
            from = end - offset;
        }
        literal.extend_from_slice(&value[from..]);
        pieces.push((literal.len(), None));
        same_string.push(None);
        let signature = value[..holes.first().map_or(value.len(), |&(_, end, _)| end - offset)].to_vec();
        Skeleton { literal, pieces, signature, same_string, used: 0, next: None }
    }

    /// Whether the text at `bytes[start]` starts with the skeleton's signature. Its last eight bytes are compared
    /// first: signatures of one checkpoint mostly share their start (`{"name":"a13n.`) and differ at the end.
    fn signed(&self, bytes: &[u8], start: usize) -> bool {
        let Some(head) = bytes.get(start..start + self.signature.len()) else { return false };
        fn tail(text: &[u8]) -> Option<&[u8]> {
            text.len().checked_sub(8).map(|from| &text[from..])
        }
        match (tail(head), tail(&self.signature)) {
            (Some(a), Some(b)) if a != b => false,
            _ => same(head, &self.signature),
        }
    }

    /// The end of the value at `bytes[start]` if it matches the skeleton.
    fn end_of(&mut self, bytes: &[u8], start: usize) -> Option<usize> {
        let (mut at, mut from) = (start, 0);
        for (&(to, hole), same_string) in self.pieces.iter().zip(&mut self.same_string) {
            let run = &self.literal[from..to];
            if !same(bytes.get(at..at + run.len())?, run) {
                return None;
            }
            at += run.len();
            from = to;
            // A string the hole has always held is canonical here too (the same bytes); any other is read.
            if let Some(string) = same_string {
                match bytes.get(at..at + string.len()) {
                    Some(text) if same(text, string) => {
                        at += string.len();
                        continue;
                    }
                    _ => *same_string = None,
                }
            }
            at = match hole {
                None => return Some(at),
                Some(Hole::String) if bytes.get(at) == Some(&b'"') => string_end(bytes, at)?,
                Some(Hole::String) => return None,
                Some(Hole::Integer) => integer_end(bytes, at)?,
            };
        }
        None
    }
}

/// The skeletons of recently recognised values, each in its slot.
#[derive(Debug, Default)]
pub(crate) struct Skeletons {
    kept: Vec<Skeleton>,
    /// The slot that matched or was kept last.
    last: Option<usize>,
    /// Counts matches, to date each skeleton's last one.
    clock: u64,
}

impl Skeletons {
    /// The end of the value at `bytes[start]` if it matches a kept skeleton. The one that followed the last match
    /// last time is tried first; then those whose signature the value starts with; then the others (a value of
    /// another shape often differs from a skeleton only deep inside, so trying skeletons in turn would cost a
    /// long comparison each).
    pub(crate) fn end_of(&mut self, bytes: &[u8], start: usize) -> Option<usize> {
        let predicted = self.last.and_then(|slot| self.kept[slot].next);
        let hit = predicted.and_then(|slot| Some((slot, self.kept.get_mut(slot)?.end_of(bytes, start)?)));
        let (slot, end) = hit.or_else(|| self.search(bytes, start, predicted))?;
        self.clock += 1;
        self.kept[slot].used = self.clock;
        self.follow(slot);
        Some(end)
    }

    /// Record that `slot` matched or was kept right after the last one.
    fn follow(&mut self, slot: usize) {
        if let Some(last) = self.last {
            self.kept[last].next = Some(slot);
        }
        self.last = Some(slot);
    }

    /// The slot and end of the value at `bytes[start]` among the skeletons but `tried`: signed ones first, each
    /// signature read once, when the first pass reaches it.
    fn search(&mut self, bytes: &[u8], start: usize, tried: Option<usize>) -> Option<(usize, usize)> {
        let mut unsigned = 0u32;
        for (slot, skeleton) in self.kept.iter_mut().enumerate().filter(|&(slot, _)| Some(slot) != tried) {
            if !skeleton.signed(bytes, start) {
                unsigned |= 1 << slot;
            } else if let Some(end) = skeleton.end_of(bytes, start) {
                return Some((slot, end));
            }
        }
        let mut candidates = self.kept.iter_mut().enumerate().filter(|(slot, _)| unsigned >> slot & 1 == 1);
        candidates.find_map(|(slot, skeleton)| Some((slot, skeleton.end_of(bytes, start)?)))
    }

    /// Keep the skeleton of `value`, canonical text at `offset` of a text whose holes are at `holes`, in place of
    /// the least recently matched one when all slots are taken.
    pub(crate) fn keep(&mut self, value: &[u8], offset: usize, holes: &[(usize, usize, Hole)]) {
        if value.len() > MAX_SKELETON_BYTES {
            return;
        }
        self.clock += 1;
        let mut skeleton = Skeleton::new(value, offset, holes);
        skeleton.used = self.clock;
        let slot = if self.kept.len() < MAX_SKELETONS {
            self.kept.push(skeleton);
            self.kept.len() - 1
        } else {
            let oldest = self.kept.iter().enumerate().min_by_key(|(_, kept)| kept.used).map_or(0, |(slot, _)| slot);
            self.kept[oldest] = skeleton;
            oldest
        };
        self.follow(slot);
    }
}

#[cfg(test)]
mod tests {
    use crate::canonical::{canonical_end, Scratch};
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// Values of a few shapes, as a checkpoint's observations are: the same keys, different strings and numbers.
    fn shaped() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e3f64..1e3).prop_map(Value::from),
            "[ a-c\\n\\u{1}é\"\\\\]{0,6}".prop_map(Value::String),
        ];
        (0..3usize, leaf.clone(), leaf.clone(), leaf).prop_map(|(shape, a, b, c)| match shape {
            0 => json!({"name": "one", "value": {"a": a, "b": [b, c]}}),
            1 => json!({"name": "two", "value": {"a": a, "c": {"d": b}}, "e": c}),
            _ => json!([a, {"name": b}, c]),
        })
    }

    /// A spelling of `text` changed at `at`: a byte another, one inserted, or a key repeated.
    fn mutate(text: &str, at: usize, how: u8) -> String {
        let mut bytes = text.as_bytes().to_vec();
        let at = at % (bytes.len() + 1);
        let insert = |bytes: &mut Vec<u8>, what: &[u8]| drop(bytes.splice(at..at, what.iter().copied()));
        match how % 6 {
            0 => insert(&mut bytes, b" "),
            1 if at < bytes.len() => bytes[at] = b'0',
            2 if at < bytes.len() => bytes[at] = b'"',
            3 => insert(&mut bytes, b"\\u00e9"),
            4 => return text.replacen(r#""name":"#, r#""name":1,"name":"#, 1),
            _ => insert(&mut bytes, b".5"),
        }
        String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
    }

    /// A hole compared as the one string it has held still reads any other string in full: a longer one sharing
    /// its start, one with an escape the writer would not write, one ending early, one of the same length.
    #[test]
    fn a_remembered_string_still_reads_others_in_full() {
        let mut remembering = Scratch::with_skeletons();
        let first = r#"{"name":"run","value":{"thread":"t-1","n":1}}"#;
        for text in [
            first,
            first,
            r#"{"name":"run","value":{"thread":"t-1\"","n":2}}"#,
            r#"{"name":"run","value":{"thread":"t-1A","n":3}}"#,
            r#"{"name":"run","value":{"thread":"t-","n":4}}"#,
            r#"{"name":"run","value":{"thread":"t-1","n":5}}"#,
            r#"{"name":"run","value":{"thread":"t-1""n":6}}"#,
            r#"{"name":"run","value":{"thread":"\/-1","n":7}}"#,
        ] {
            let expected = canonical_end(text.as_bytes(), 0, &mut Scratch::default());
            assert_eq!(canonical_end(text.as_bytes(), 0, &mut remembering), expected, "{text}");
        }
    }

    /// More shapes than slots, in a rhythm and out of it: skeletons are replaced and predictions go stale, and
    /// every verdict stays the token-by-token one.
    #[test]
    fn replaced_skeletons_and_stale_predictions_change_no_verdict() {
        let mut remembering = Scratch::with_skeletons();
        for round in 0..4u64 {
            for shape in (0..12u64).chain([3, 3, 11, 0, 7]) {
                let value = json!({format!("k{shape}"): format!("s{round}"), "v": [shape, {"x": round}]});
                let text = crate::json::to_pydantic_json(&value).unwrap();
                for text in [text.clone(), mutate(&text, (shape * 7 + round) as usize, (shape + round) as u8)] {
                    let bytes = text.as_bytes();
                    let expected = canonical_end(bytes, 0, &mut Scratch::default());
                    assert_eq!(canonical_end(bytes, 0, &mut remembering), expected, "{text}");
                }
            }
        }
    }

    proptest! {
        /// Recognising with skeletons gives exactly the verdict of recognising token by token, whatever came
        /// before: skeletons of earlier values never make a value that is not canonical pass.
        #[test]
        fn skeletons_change_no_verdict(values in prop::collection::vec((shaped(), any::<usize>(), any::<u8>()), 1..24)) {
            let mut remembering = Scratch::with_skeletons();
            for (value, at, how) in values {
                let text = crate::json::to_pydantic_json(&value).unwrap();
                for text in [text.clone(), mutate(&text, at, how)] {
                    let bytes = text.as_bytes();
                    let expected = canonical_end(bytes, 0, &mut Scratch::default());
                    prop_assert_eq!(canonical_end(bytes, 0, &mut remembering), expected, "{}", text);
                }
            }
        }
    }
}
