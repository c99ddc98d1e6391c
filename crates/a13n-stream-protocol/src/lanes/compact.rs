//! A line spelled with whitespace between its tokens (`json.dumps`' default `", "` and `": "`, a formatter's
//! spaces inside braces), made compact so that a lane may read it: the same text with every space, tab, carriage
//! return and line feed left out where it stands beside a structural character (`{ } [ ] : ,`) or at either end,
//! and nothing inside a string touched.
//!
//! JSON allows whitespace exactly there, so a valid line keeps its value, and an invalid one stays invalid:
//! whitespace between two other tokens (`1 2`, `"a" "b"`), which no valid line holds, is kept.

use crate::source::MAX_SOURCE_LINE_BYTES;

/// `line` compact, or `None` when nothing in it is left out (or it is longer than a source line may be).
pub(crate) fn compacted(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    if bytes.len() > MAX_SOURCE_LINE_BYTES {
        return None;
    }
    // The compact text, made once the first run of whitespace to leave out is found: up to it, the line's own.
    let mut out: Option<Vec<u8>> = None;
    let (mut at, mut kept) = (0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => at = string_end(bytes, at),
            byte if is_space(byte) => {
                let end = bytes[at..].iter().position(|&byte| !is_space(byte)).map_or(bytes.len(), |run| at + run);
                let before = at.checked_sub(1).map(|last| bytes[last]);
                let beside_structure =
                    before.is_none_or(is_structural) || bytes.get(end).is_none_or(|&after| is_structural(after));
                if beside_structure {
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
    use super::compacted;

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
