//! The argument stream a fold holds: decoded, opened by the fold's lane with its identity as text, or as the
//! checkpoint text it was restored from.
//!
//! Decoding a held stream builds two JSON trees (its identity and its whole observation), which costs a small
//! checkpoint's restore more than all its items. Most restores never read them: only the next argument delta of
//! the same stream does. So a restore keeps the checkpoint's text of the held stream when it is exactly what this
//! library writes for it, and reads it back the first time a delta needs it. Likewise a stream the argument lane
//! opens keeps its identity as the text the lane compares identities by, and builds its tree only when another
//! path, or an export, reads it.

use std::borrow::Cow;

use super::checkpoint::StreamedArguments;
use crate::canonical::Scratch;
use crate::lanes::delta_line::stream_of_identity;
use crate::scan::Scanner;
use crate::time::{TimeReader, UtcTime};

/// The held argument stream.
#[derive(Clone, Debug)]
pub(super) enum Held {
    Decoded(StreamedArguments),
    /// Opened by the argument lane: the stream's identity as the JSON text of its value
    /// ([`ArgsDelta::write_identity`](crate::lanes::delta_line::ArgsDelta::write_identity)), and the other fields,
    /// whose `stream` is not read.
    Lane {
        identity: Box<[u8]>,
        fields: StreamedArguments,
    },
    /// The JSON text of a [`StreamedArguments`] exactly as this library writes it, with the two fields the fold
    /// reads without decoding the rest.
    Restored {
        key: String,
        sequence: u64,
        text: Box<str>,
    },
}

impl Held {
    /// The held stream at the scanner, when its text is exactly what this library writes (fields in order, each
    /// value canonical): kept as that text. `None` for anything else, which is then decoded.
    pub(super) fn scan(scanner: &mut Scanner<'_>) -> Option<Held> {
        // The scanner's readers allow whitespace before a value; kept text must have none.
        fn tight(scanner: &Scanner<'_>) -> Option<()> {
            (!scanner.rest().starts_with(|c: char| c.is_ascii_whitespace())).then_some(())
        }
        let mut scratch = Scratch::default();
        let from = scanner.position();
        scanner.literal(br#"{"stream":"#)?;
        tight(scanner)?;
        scanner.canonical_value_in(&mut scratch)?;
        scanner.literal(br#","key":"#)?;
        tight(scanner)?;
        // A key with escapes is spelled canonically only in some ways; it is decoded instead (keys are item ids).
        let Cow::Borrowed(key) = scanner.string()? else { return None };
        scanner.literal(br#","at":"#)?;
        let at_from = scanner.position();
        let at = scanner.read_with(|bytes, at| TimeReader::default().read(bytes, at))?;
        let mut written = Vec::with_capacity(32);
        at.write_json(&mut written);
        (scanner.scanned_since(at_from) == written.as_slice()).then_some(())?;
        scanner.literal(br#","sequence":"#)?;
        tight(scanner)?;
        let sequence = u64::try_from(scanner.integer()?).ok()?;
        scanner.literal(br#","event":"#)?;
        if scanner.literal(b"null").is_none() {
            tight(scanner)?;
            scanner.canonical_value_in(&mut scratch)?.starts_with('{').then_some(())?;
        }
        scanner.literal(br#","size":"#)?;
        tight(scanner)?;
        scanner.integer()?;
        scanner.literal(b"}")?;
        let text = scanner.text_since(from);
        Some(Held::Restored { key: key.to_owned(), sequence, text: text.into() })
    }

    /// The id of the observation item that holds the stream.
    pub(super) fn key(&self) -> &str {
        match self {
            Held::Decoded(held) | Held::Lane { fields: held, .. } => &held.key,
            Held::Restored { key, .. } => key,
        }
    }

    /// The sequence of the last delta folded in.
    pub(super) fn sequence(&self) -> u64 {
        match self {
            Held::Decoded(held) | Held::Lane { fields: held, .. } => held.sequence,
            Held::Restored { sequence, .. } => *sequence,
        }
    }

    /// The decoded stream, read back from its text first if need be.
    pub(super) fn decoded(&mut self) -> &mut StreamedArguments {
        match self {
            Held::Decoded(held) => held,
            Held::Lane { identity, fields } => {
                // Moved, not copied: the observation it holds may be large.
                let stream = stream_of_identity(identity);
                *self = Held::Decoded(StreamedArguments { stream, ..std::mem::replace(fields, unset()) });
                self.decoded()
            }
            Held::Restored { .. } => {
                *self = Held::Decoded(self.to_decoded());
                self.decoded()
            }
        }
    }

    /// The stream's fields other than its identity, to read or change: a stream the lane opened keeps its identity
    /// as text (`stream` is then not to be read).
    pub(super) fn fields(&mut self) -> &mut StreamedArguments {
        match self {
            Held::Lane { fields, .. } => fields,
            held => held.decoded(),
        }
    }

    /// Whether the stream's identity is the one `identity` writes, when the lane opened it (`None` otherwise: its
    /// value is then to be compared).
    pub(super) fn has_identity(&self, identity: &[u8]) -> Option<bool> {
        match self {
            Held::Lane { identity: own, .. } => Some(**own == *identity),
            _ => None,
        }
    }

    /// A decoded copy.
    pub(super) fn to_decoded(&self) -> StreamedArguments {
        match self {
            Held::Decoded(held) => held.clone(),
            Held::Lane { identity, fields } => {
                StreamedArguments { stream: stream_of_identity(identity), ..fields.clone() }
            }
            // The text decoded as these fields when it was restored, and it is this library's own writing of
            // them: it decodes again.
            Held::Restored { key, sequence, text } => serde_json::from_str(text)
                .unwrap_or_else(|_| StreamedArguments { key: key.clone(), sequence: *sequence, ..unset() }),
        }
    }
}

/// A stream's fields with nothing set: no identity, key or observation, the epoch, sequence and size 0.
pub(super) fn unset() -> StreamedArguments {
    StreamedArguments {
        stream: serde_json::Value::Null,
        key: String::new(),
        at: UtcTime::EPOCH,
        sequence: 0,
        event: None,
        size: 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn streamed() -> StreamedArguments {
        let event =
            json!({"type": "CUSTOM", "name": "a13n.pydantic_ai.part_delta", "value": {"args_delta": "{\"a\":"}});
        StreamedArguments {
            stream: json!(["a13n.pydantic_ai.part_delta", "t", "r", {"index": 0, "delta": {"args_delta": null}}]),
            key: "itm_1".into(),
            at: UtcTime::parse("2026-11-29T12:00:00.338000Z").unwrap(),
            sequence: 7,
            event: event.as_object().cloned(),
            size: 41,
        }
    }

    fn scanned(text: &str) -> Option<Held> {
        Held::scan(&mut Scanner::new(text))
    }

    /// The writer's text is kept as it is, and reads back as the stream it was written from.
    #[test]
    fn a_written_stream_is_kept_as_its_text() {
        for event in [true, false] {
            let mut held = streamed();
            if !event {
                held.event = None;
            }
            let text = crate::json::to_pydantic_json(&held).unwrap();
            let Some(Held::Restored { key, sequence, text: kept }) = scanned(&text) else { panic!("{text}") };
            assert_eq!((key.as_str(), sequence, &*kept), ("itm_1", 7, text.as_str()));
            let mut restored = Held::Restored { key, sequence, text: kept };
            assert_eq!(restored.to_decoded(), held);
            assert_eq!(*restored.decoded(), held);
            assert!(matches!(restored, Held::Decoded(_)));
        }
    }

    /// A stream the lane opened reads as the stream its identity's text is, without the text's fields being
    /// touched; its identity is compared as text, and nothing else is.
    #[test]
    fn a_lane_stream_keeps_its_identity_as_text() {
        let held = streamed();
        let identity = crate::json::to_pydantic_json(&held.stream).unwrap();
        let fields = StreamedArguments { stream: serde_json::Value::Null, ..held.clone() };
        let mut lane = Held::Lane { identity: identity.as_bytes().into(), fields };
        assert_eq!((lane.key(), lane.sequence()), ("itm_1", 7));
        assert_eq!(lane.to_decoded(), held);
        assert_eq!(lane.has_identity(identity.as_bytes()), Some(true));
        assert_eq!(lane.has_identity(identity.replace("\"r\"", "\"s\"").as_bytes()), Some(false));
        lane.fields().sequence = 8;
        assert!(matches!(lane, Held::Lane { .. }), "reading the fields decodes nothing");
        assert_eq!(*lane.decoded(), StreamedArguments { sequence: 8, ..held.clone() });
        assert!(matches!(lane, Held::Decoded(_)));
        assert_eq!(lane.has_identity(identity.as_bytes()), None);
    }

    /// Any other spelling is left to serde, even one that decodes to the same stream.
    #[test]
    fn any_other_spelling_is_not_kept() {
        let text = crate::json::to_pydantic_json(&streamed()).unwrap();
        for other in [
            text.replacen(r#""stream":"#, r#""stream": "#, 1),
            text.replacen(r#""key":"#, r#""key": "#, 1),
            text.replacen(r#""sequence":"#, r#""sequence": "#, 1),
            text.replacen(r#""event":"#, r#""event": "#, 1),
            text.replacen(r#""size":"#, "\"size\":\n", 1),
            text.replacen("itm_1", r"\u0069tm_1", 1),
            text.replacen("00.338000Z", "00.338000+00:00", 1),
            text.replacen(r#""index":0"#, r#""index":0.0"#, 1),
            text.replacen(r#","size":41"#, "", 1),
            text.replacen(r#""sequence":7"#, r#""sequence":-7"#, 1),
            text.replacen(r#""event":{"#, r#""event":[{"#, 1).replacen(r#"}},"size""#, r#"}}],"size""#, 1),
        ] {
            assert_ne!(other, text);
            assert!(scanned(&other).is_none(), "{other}");
        }
    }
}
