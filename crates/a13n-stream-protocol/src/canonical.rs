//! Recognising canonical JSON: text spelled exactly as this library writes the value `serde_json` reads from it
//! (compact; strings with only the escapes [`write_pydantic_str`](crate::json::write_pydantic_str) writes; plain
//! integers within `i64` and no negative zero; no floats; no repeated keys).
//!
//! Such text can be copied instead of parsed and written again: a checkpoint's sealed items, a carried-through
//! observation's event. The recogniser is sound, not complete: it never accepts text that writes back otherwise,
//! but it declines some canonical text (integers of 19 digits, nesting deeper than [`MAX_DEPTH`]); the caller then
//! parses and writes, which gives the same bytes more slowly.
//!
//! It walks the text once, without recursion: the open containers are a stack in caller-owned [`Scratch`]
//! memory, so recognising the many values of a checkpoint allocates once. Scratch memory made
//! [`Scratch::with_skeletons`] also keeps the skeletons of recent values ([`crate::skeleton`]) and tries them
//! first: a value of a shape seen before is then recognised by comparing byte runs.

use crate::canonical_token::{integer_end, string_end};
use crate::skeleton::{Hole, Skeletons};

/// Deeper values are left to the general path (whose limit is 128).
pub(crate) const MAX_DEPTH: usize = 64;

/// Working memory for [`canonical_end`]; reuse one across calls.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The open containers, innermost last.
    frames: Vec<Frame>,
    /// The keys of the open objects as byte ranges of the text, each object's from its frame's `keys` on.
    keys: Vec<(usize, usize)>,
    /// The skeletons of recent values, when kept.
    skeletons: Option<Skeletons>,
    /// The holes of the value being walked, when its skeleton is to be kept.
    holes: Vec<(usize, usize, Hole)>,
}

impl Scratch {
    /// Scratch memory that also keeps the skeletons of the values it recognises, for recognising many values
    /// of a few shapes (a checkpoint's items).
    pub(crate) fn with_skeletons() -> Scratch {
        Scratch { skeletons: Some(Skeletons::default()), ..Scratch::default() }
    }
}

/// One open container.
#[derive(Debug, Clone, Copy)]
struct Frame {
    object: bool,
    /// A bit per key seen so far ([`key_bit`]): a key is compared with the others only when its bit was set.
    seen: u64,
    /// Where the object's keys start in [`Scratch::keys`].
    keys: usize,
}

/// The end (exclusive) of the canonical JSON value that starts at `bytes[start]`, or `None` if the value there
/// is not canonical or not JSON.
pub(crate) fn canonical_end(bytes: &[u8], start: usize, scratch: &mut Scratch) -> Option<usize> {
    let Some(mut skeletons) = scratch.skeletons.take() else { return walk(bytes, start, scratch, false) };
    let end = skeletons.end_of(bytes, start).or_else(|| {
        let end = walk(bytes, start, scratch, true)?;
        skeletons.keep(&bytes[start..end], start, &scratch.holes);
        Some(end)
    });
    scratch.skeletons = Some(skeletons);
    end
}

/// [`canonical_end`] token by token, noting the value's holes in `scratch.holes` when `holes` is set.
fn walk(bytes: &[u8], start: usize, scratch: &mut Scratch, holes: bool) -> Option<usize> {
    scratch.frames.clear();
    scratch.keys.clear();
    scratch.holes.clear();
    // The innermost open container, kept out of the stack (which holds the ones around it).
    let mut top: Option<Frame> = None;
    let mut at = start;
    loop {
        // A value starts at `at`.
        match *bytes.get(at)? {
            b'"' => {
                let end = string_end(bytes, at)?;
                if holes {
                    scratch.holes.push((at, end, Hole::String));
                }
                at = end;
            }
            open @ (b'{' | b'[') => {
                let object = open == b'{';
                let close = if object { b'}' } else { b']' };
                if bytes.get(at + 1) == Some(&close) {
                    at += 2;
                } else {
                    if let Some(outer) = top {
                        if scratch.frames.len() + 1 == MAX_DEPTH {
                            return None;
                        }
                        scratch.frames.push(outer);
                    }
                    let mut frame = Frame { object, seen: 0, keys: scratch.keys.len() };
                    at = if object { key_end(bytes, at + 1, &mut frame, &mut scratch.keys)? } else { at + 1 };
                    top = Some(frame);
                    continue;
                }
            }
            b't' => at = literal_end(bytes, at, b"true")?,
            b'f' => at = literal_end(bytes, at, b"false")?,
            b'n' => at = literal_end(bytes, at, b"null")?,
            _ => {
                let end = integer_end(bytes, at)?;
                if holes {
                    scratch.holes.push((at, end, Hole::Integer));
                }
                at = end;
            }
        }
        // A value ends at `at`: close every container it completes, then go on to the next value.
        loop {
            let Some(frame) = top.as_mut() else { return Some(at) };
            match (bytes.get(at), frame.object) {
                (Some(b','), true) => {
                    at = key_end(bytes, at + 1, frame, &mut scratch.keys)?;
                    break;
                }
                (Some(b','), false) => {
                    at += 1;
                    break;
                }
                (Some(b'}'), true) => {
                    scratch.keys.truncate(frame.keys);
                    top = scratch.frames.pop();
                    at += 1;
                }
                (Some(b']'), false) => {
                    top = scratch.frames.pop();
                    at += 1;
                }
                _ => return None,
            }
        }
    }
}

/// Past an object key at `at` and its colon, rejecting a key the object (`frame`, whose keys are in `keys`
/// from its `keys` on) has already.
#[inline(always)]
fn key_end(bytes: &[u8], at: usize, frame: &mut Frame, keys: &mut Vec<(usize, usize)>) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let end = string_end(bytes, at)?;
    let (from, to) = (at + 1, end - 1);
    let bit = key_bit(bytes, from, to);
    // Canonical escapes spell each text one way, so equal keys are equal bytes.
    if frame.seen & bit != 0 && keys[frame.keys..].iter().any(|&(s, e)| bytes[s..e] == bytes[from..to]) {
        return None;
    }
    frame.seen |= bit;
    keys.push((from, to));
    (bytes.get(end) == Some(&b':')).then_some(end + 1)
}

/// One of 64 bits for the key `bytes[from..to]`, from its first eight bytes, its length and its last byte: equal
/// keys get equal bits, and the few distinct keys of an object seldom share one.
#[inline(always)]
fn key_bit(bytes: &[u8], from: usize, to: usize) -> u64 {
    let len = to - from;
    let head = match bytes.get(from..from + 8) {
        Some(word) => {
            let mut lanes = [0u8; 8];
            lanes.copy_from_slice(word);
            let mask = if len >= 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 };
            u64::from_le_bytes(lanes) & mask
        }
        None => head_near_end(&bytes[from..to]),
    };
    // The byte before `to` (the opening quote for an empty key) is always in the text.
    let last = u64::from(bytes[to - 1]);
    let mixed = (head ^ (last << 56) ^ ((len as u64) << 48)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    1u64 << (mixed >> 58)
}

/// The first eight bytes of a key near the end of the text, as [`key_bit`] reads them elsewhere.
#[cold]
fn head_near_end(key: &[u8]) -> u64 {
    key.iter().take(8).rev().fold(0u64, |word, &byte| (word << 8) | u64::from(byte))
}

#[inline]
fn literal_end(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(word).then_some(at + word.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn canonical(text: &str) -> bool {
        canonical_end(text.as_bytes(), 0, &mut Scratch::default()) == Some(text.len())
    }

    #[test]
    fn canonical_spellings_are_recognised() {
        for text in [
            r#"{"a":"x y\n","b":[1,null,true],"c":"\u001f é"}"#,
            r#"[]"#,
            r#"{}"#,
            r#"[[],{},[{}],{"a":[]}]"#,
            r#""\"\\\b\f\n\r\t\u0000\u001f""#,
            r#"-12"#,
            r#"0"#,
            r#"{"ab":1,"ba":2,"a":3,"b":4,"abc":5,"acb":6}"#,
        ] {
            assert!(canonical(text), "{text}");
        }
    }

    #[test]
    fn other_spellings_are_declined() {
        for odd in [
            r#"{"a": 1}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e5}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":1},"a":2}"#,
            r#"[1,]"#,
            r#"{"a":1,}"#,
            r#"{"a"}"#,
            r#"[1}"#,
            r#"{"a":1]"#,
            r#"-0"#,
            r#"01"#,
            r#"1234567890123456789"#,
            "\"a\u{1}\"",
            r#"tru"#,
            r#""open"#,
        ] {
            assert!(!canonical(odd), "{odd}");
        }
        assert_eq!(canonical_end(b"1 ", 0, &mut Scratch::default()), Some(1), "a value ends where it ends");
        let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        assert!(!canonical(&nested(MAX_DEPTH + 1)));
        assert!(canonical(&nested(MAX_DEPTH)));
    }

    /// A repeated key is found however many keys the object has and however their bits collide, in nested
    /// objects too, and a key repeated only in another object is not a repetition.
    #[test]
    fn repeated_keys_are_found_among_many() {
        let keys: Vec<String> = (0..200).map(|n| format!("k{n}")).collect();
        let object = |keys: &[String]| {
            format!("{{{}}}", keys.iter().map(|k| format!("\"{k}\":1")).collect::<Vec<_>>().join(","))
        };
        assert!(canonical(&object(&keys)));
        for repeat in [0, 63, 64, 199] {
            let mut repeated = keys.clone();
            repeated.push(keys[repeat].clone());
            assert!(!canonical(&object(&repeated)), "k{repeat}");
            let nested = format!("{{\"outer\":{},\"k0\":2}}", object(&repeated));
            assert!(!canonical(&nested));
        }
        assert!(canonical(&format!("{{\"k0\":{},\"k1\":2}}", object(&keys))));
        // Distinct keys that share a bit are compared, and told apart.
        let bit = |key: &str| {
            let text = format!("\"{key}\"");
            key_bit(text.as_bytes(), 1, text.len() - 1)
        };
        let (a, b) = (1..200)
            .find_map(|n| (0..n).find(|&m| bit(&keys[m]) == bit(&keys[n])).map(|m| (&keys[m], &keys[n])))
            .expect("64 bits for 200 keys share some");
        assert!(canonical(&format!("{{\"{a}\":1,\"{b}\":2}}")));
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[ -~\\n\\u{1}\\u{7f}é\"\\\\/]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-c\"é]{0,3}", inner), 0..6)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever is recognised writes back byte for byte; what this library writes is recognised unless it
        /// holds an integer of 19 digits or a float.
        #[test]
        fn recognised_text_writes_back_as_it_is(value in value(), spaced in any::<bool>()) {
            let written = crate::json::to_pydantic_json(&value).unwrap();
            let text = if spaced { serde_json::to_string_pretty(&value).unwrap() } else { written.clone() };
            if canonical(&text) {
                let parsed: Value = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(crate::json::to_pydantic_json(&parsed).unwrap(), text);
            } else if !spaced {
                let number = |n: &serde_json::Number| n.is_f64() || n.to_string().trim_start_matches('-').len() > 18;
                prop_assert!(has_number(&value, &number), "{}", text);
            }
        }
    }

    fn has_number(value: &Value, test: &dyn Fn(&serde_json::Number) -> bool) -> bool {
        match value {
            Value::Number(n) => test(n),
            Value::Array(items) => items.iter().any(|v| has_number(v, test)),
            Value::Object(fields) => fields.values().any(|v| has_number(v, test)),
            _ => false,
        }
    }
}
