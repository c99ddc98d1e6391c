//! A line spelled with whitespace between its tokens (`json.dumps`' default `", "` and `": "`, a formatter's
//! spaces inside braces), made compact so that a lane may read it: the same text with every space, tab, carriage
//! return and line feed left out where it stands beside a structural character (`{ } [ ] : ,`) or at either end,
//! and nothing inside a string touched.
//!
//! JSON allows whitespace exactly there, so a valid line keeps its value, and an invalid one stays invalid:
//! whitespace between two other tokens (`1 2`, `"a" "b"`), which no valid line holds, is kept.

use std::ops::Range;

use crate::source::MAX_SOURCE_LINE_BYTES;

/// `line` compact, or `None` when nothing in it is left out (or it is longer than a source line may be).
pub(crate) fn compacted(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    if bytes.len() > MAX_SOURCE_LINE_BYTES || space_beside_structure(bytes) == Some(false) {
        return None;
    }
    compact_text(bytes)
}

/// [`compacted`]'s text of `bytes`, following its strings.
fn compact_text(bytes: &[u8]) -> Option<String> {
    // The compact text, made once the first run of whitespace to leave out is found: up to it, the line's own.
    let mut out: Option<Vec<u8>> = None;
    let (mut at, mut kept) = (0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => at = string_end(bytes, at),
            byte if is_space(byte) => {
                let end = bytes[at..].iter().position(|&byte| !is_space(byte)).map_or(bytes.len(), |run| at + run);
                if beside_structure(bytes, at..end) {
                    let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                    out.extend_from_slice(&bytes[kept..at]);
                    kept = end;
                }
                at = end;
            }
            _ => at += 1,
        }
    }
    let mut out = out?;
    out.extend_from_slice(&bytes[kept..]);
    // Only ASCII whitespace left out, between whole characters: still UTF-8.
    String::from_utf8(out).ok()
}

/// How many whitespace bytes [`space_beside_structure`] looks at before it leaves the question to the reading that
/// follows the strings, which costs about as much as that many stops of the search.
const SPACES_SOUGHT: usize = 32;

/// Whether any whitespace byte of `bytes`, in a string or not, stands beside a structural character or at either
/// end; `None` when the first [`SPACES_SOUGHT`] do not (a line whose strings hold many spaces). Without one, no run
/// of whitespace outside a string can stand there either (a run beside a structural character has a first byte
/// after it or a last byte before it), so [`compacted`] leaves the line as it is; this finds that out without
/// following the strings, one search for the whitespace itself.
fn space_beside_structure(bytes: &[u8]) -> Option<bool> {
    let spaces = memchr::memchr3_iter(b' ', b'\t', b'\n', bytes).chain(memchr::memchr_iter(b'\r', bytes));
    for (sought, at) in spaces.enumerate() {
        if beside_structure(bytes, at..at + 1) {
            return Some(true);
        }
        if sought + 1 == SPACES_SOUGHT {
            return None;
        }
    }
    Some(false)
}

/// Whether the whitespace at `run` in `bytes` stands beside a structural character or at either end.
fn beside_structure(bytes: &[u8], run: Range<usize>) -> bool {
    let before = run.start.checked_sub(1).map(|last| bytes[last]);
    before.is_none_or(is_structural) || bytes.get(run.end).is_none_or(|&after| is_structural(after))
}

/// The end of the string opening at `at` (past its closing quote; the line's end when it has none).
fn string_end(bytes: &[u8], at: usize) -> usize {
    let mut index = at + 1;
    // A string's text is skipped a run at a time, to its next quote or backslash.
    while let Some(run) = memchr::memchr2(b'"', b'\\', &bytes[index.min(bytes.len())..]) {
        index += run;
        if bytes[index] == b'"' {
            return index + 1;
        }
        index += 2;
    }
    bytes.len()
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_structural(byte: u8) -> bool {
    matches!(byte, b'{' | b'}' | b'[' | b']' | b':' | b',')
}

#[cfg(test)]
mod tests {
    use super::{compact_text, compacted};

    #[test]
    fn whitespace_beside_structure_goes_and_strings_stay() {
        let cases = [
            (r#"{"a": 1, "b": [1, 2]}"#, Some(r#"{"a":1,"b":[1,2]}"#)),
            (" {\t\"a\" :\r\n\"x, y\" } ", Some(r#"{"a":"x, y"}"#)),
            (r#"{"a": "q\" : ,", "b" : "\\", "c": 2}"#, Some(r#"{"a":"q\" : ,","b":"\\","c":2}"#)),
            (r#"{"a":1}"#, None),
            (r#"{"a":"b c"}"#, None),
        ];
        for (line, compact) in cases {
            assert_eq!(compacted(line).as_deref(), compact, "{line}");
        }
    }

    /// The search for whitespace beside structure finds every line the full reading would compact: lines of
    /// structural characters, quotes, escapes, letters and whitespace, in every order a small generator makes.
    #[test]
    fn the_whitespace_search_misses_no_line_to_compact() {
        const ALPHABET: &[u8] = b"{}[]:,\"\\ab \t\r\n";
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut compacted_lines = 0;
        for _ in 0..200_000 {
            let length = (next() % 12) as usize;
            let line: Vec<u8> = (0..length).map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize]).collect();
            let line = String::from_utf8(line).unwrap();
            let full = compact_text(line.as_bytes());
            compacted_lines += usize::from(full.is_some());
            assert_eq!(compacted(&line), full, "{line:?}");
        }
        assert!(compacted_lines > 10_000, "{compacted_lines}");
    }

    /// Found by a review: the search stopped at every space of a long text, at about a hundred instructions each,
    /// where following the strings skips the text at once. It now stops looking after a few.
    #[test]
    fn a_text_of_many_spaces_is_left_to_the_reading_that_follows_strings() {
        let line = format!(r#"{{"a":"{}","b":1}}"#, "word ".repeat(10_000));
        assert_eq!(super::space_beside_structure(line.as_bytes()), None);
        assert_eq!(compacted(&line), None);
        let spaced = line.replacen(r#","b""#, r#", "b""#, 1);
        assert_eq!(compacted(&spaced).as_deref(), Some(line.as_str()));
        assert_eq!(super::space_beside_structure(br#"{"a":"b c"}"#), Some(false));
    }

    /// An invalid line stays invalid: whitespace no valid line holds is kept.
    #[test]
    fn whitespace_between_other_tokens_is_kept() {
        for (line, expected) in [(r#"{"a": 1 2}"#, r#"{"a":1 2}"#), (r#"{"a" "b": tr ue }"#, r#"{"a" "b":tr ue}"#)] {
            let compact = compacted(line).unwrap();
            assert_eq!(compact, expected, "{line}");
            assert!(serde_json::from_str::<serde_json::Value>(&compact).is_err(), "{compact}");
        }
        // An unterminated string runs to the end of the line, kept as it is.
        assert_eq!(compacted(r#"{ "a": "b  "#).as_deref(), Some(r#"{"a":"b  "#));
    }
}
