//! An item's stream position as its `first_stream_id` / `last_stream_id` spell it: `attempt-sequence` held as
//! two numbers, or any other text a restored checkpoint carried, kept as it is (the reference stores the field as
//! a plain string, so a checkpoint written elsewhere may spell it any way and must be written back unchanged).

use super::StreamPosition;
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
        match text.parse::<StreamPosition>() {
            Ok(StreamPosition { attempt, sequence }) => StreamId::At { attempt, sequence },
            Err(_) => StreamId::Text(text.into()),
        }
    }

    /// The position in the JSON string whose opening quote is `bytes[at]`, and the end of that string, when it
    /// is `attempt-sequence` as [`StreamId::write_json`] writes it (anything else is left to the caller).
    pub(super) fn read(bytes: &[u8], at: usize) -> Option<(StreamId, usize)> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let (StreamPosition { attempt, sequence }, length) = StreamPosition::read_prefix(bytes.get(at + 1..)?)?;
        let end = at + 1 + length;
        (bytes.get(end) == Some(&b'"')).then_some((StreamId::At { attempt, sequence }, end + 1))
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

    /// Whatever `read` reads, `parse` reads the same from the string; it reads every position `write_json` writes.
    #[test]
    fn stream_ids_read_from_text_as_parsed() {
        for text in
            ["0-15", "3-18446744073709551615", "3-1844674407370955161", "01-2", "+1-2", "1-2-3", "1-", "", "1-2x"]
        {
            let quoted = format!("\"{text}\"}}");
            match StreamId::read(quoted.as_bytes(), 0) {
                Some((id, end)) => assert_eq!((id, end), (StreamId::parse(text), quoted.len() - 1), "{text}"),
                None => assert!(matches!(StreamId::parse(text), StreamId::Text(_)), "{text}"),
            }
        }
    }

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
        assert_eq!(
            StreamId::parse("9999999999999999999-0"),
            StreamId::At { attempt: 9_999_999_999_999_999_999, sequence: 0 }
        );
        // A number past `u64` is kept as text too.
        for odd in ["01-2", "1-", "-1", "a-b", "1-2-3", "", "+1-2", "1-+2", "18446744073709551616-0", "1 -2", "0-00"] {
            assert_eq!(StreamId::parse(odd).to_string(), odd);
            assert!(matches!(StreamId::parse(odd), StreamId::Text(_)), "{odd}");
        }
    }
}
