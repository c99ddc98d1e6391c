//! An item's stream position as its `first_stream_id` / `last_stream_id` spell it: `attempt-sequence` held as
//! two numbers, or any other text a restored checkpoint carried, kept as it is (the reference stores the field as
//! a plain string, so a checkpoint written elsewhere may spell it any way and must be written back unchanged).

use crate::json::write_pydantic_str;

/// An item's stream position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum StreamId {
    /// `attempt-sequence`, both decimal without sign or leading zero.
    At { attempt: u64, sequence: u64 },
    /// Any other text a restored checkpoint carried.
    Text(Box<str>),
}

impl StreamId {
    /// The position `text` spells: numbers only when writing them back gives `text` again.
    pub(super) fn parse(text: &str) -> StreamId {
        match numbers(text.as_bytes()) {
            Some((attempt, sequence)) => StreamId::At { attempt, sequence },
            None => StreamId::Text(text.into()),
        }
    }

    /// Append the JSON string of the position.
    pub(super) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            StreamId::At { attempt, sequence } => {
                // The first attempt (every host's, and most folds') is written as one constant.
                match attempt {
                    0 => out.extend_from_slice(b"\"0-"),
                    _ => {
                        out.push(b'"');
                        out.extend_from_slice(itoa::Buffer::new().format(*attempt).as_bytes());
                        out.push(b'-');
                    }
                }
                out.extend_from_slice(itoa::Buffer::new().format(*sequence).as_bytes());
                out.push(b'"');
            }
            StreamId::Text(text) => write_pydantic_str(out, text),
        }
    }
}

/// The two numbers of `attempt-sequence`.
fn numbers(bytes: &[u8]) -> Option<(u64, u64)> {
    let dash = bytes.iter().position(|&byte| byte == b'-')?;
    Some((number(&bytes[..dash])?, number(&bytes[dash + 1..])?))
}

/// A decimal number spelled as `itoa` writes it (no sign, no leading zero) and within `u64`.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || (digits[0] == b'0' && digits.len() > 1) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Up to 19 digits always fit; longer ones are checked.
    match digits.len() {
        ..=19 => Some(digits.iter().fold(0u64, |value, &digit| value * 10 + u64::from(digit - b'0'))),
        _ => std::str::from_utf8(digits).ok()?.parse().ok(),
    }
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamId::At { attempt, sequence } => write!(f, "{attempt}-{sequence}"),
            StreamId::Text(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_are_written_as_json_strings() {
        for (id, text) in [
            (StreamId::At { attempt: 0, sequence: 15 }, r#""0-15""#),
            (StreamId::At { attempt: 0, sequence: 0 }, r#""0-0""#),
            (StreamId::At { attempt: 3, sequence: 18_446_744_073_709_551_615 }, r#""3-18446744073709551615""#),
            (StreamId::parse("01-\"2"), r#""01-\"2""#),
        ] {
            let mut out = Vec::new();
            id.write_json(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }

    /// Only a spelling that writes back the same becomes numbers; any other (a sign, a leading zero, a number
    /// past `u64`) is kept as text.
    #[test]
    fn stream_ids_parse_only_canonical_positions() {
        assert_eq!(StreamId::parse("0-15"), StreamId::At { attempt: 0, sequence: 15 });
        assert_eq!(StreamId::parse("18446744073709551615-0"), StreamId::At { attempt: u64::MAX, sequence: 0 });
        for odd in ["01-2", "1-", "-1", "a-b", "1-2-3", "", "+1-2", "1-+2", "18446744073709551616-0", "1 -2"] {
            assert_eq!(StreamId::parse(odd).to_string(), odd);
            assert!(matches!(StreamId::parse(odd), StreamId::Text(_)), "{odd}");
        }
    }
}
