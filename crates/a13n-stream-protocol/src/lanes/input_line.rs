//! Scanning a text input (`a13n.input.text`: a user's message, steering, a context block): its fields read in
//! place, its metadata copied as canonical JSON, so that the observer converts it by the general path's own rule
//! (`observer/custom.rs`, `input_event`) without the line's tree.

use std::borrow::Cow;

use serde_json::Value;

use crate::fields::event_kind as kinds;
use crate::fields::source_key::{self, CAPABILITY_IDS, INPUT_SOURCES};
use crate::fragments::WHOLE_EVENT_BYTES;
use crate::json::Object;
use crate::lane_line::{scan_line, LineHead};
use crate::names;
use crate::scan::once;
use crate::source::{metadata_error, Input, ItemIdentity};
use crate::SourceSequence;

/// The longest line the lane takes, so that its event stays whole, as the general path would leave it: every
/// string and number of the event comes from the line, written no longer than the line spells it, and none more
/// than three times (the run id in the value, the message id and a child's `subagentRunId`), so the event is at most
/// three times the line and a few fixed keys.
const MAX_INPUT_LINE_BYTES: usize = 12 * 1024;
const _: () =
    assert!(3 * MAX_INPUT_LINE_BYTES + 4 * 1024 < WHOLE_EVENT_BYTES, "the event of a line the lane takes is whole");

/// A text input line, with everything its conversion reads.
pub(crate) struct InputLine<'a> {
    /// The line's identity and time.
    pub(crate) head: LineHead<'a>,
    /// The head's sequence, as an item's identity holds it.
    sequence: SourceSequence,
    /// The input's `input_id`, `source` (one its model names) and `content`.
    input_id: Cow<'a, str>,
    source: Cow<'a, str>,
    content: Cow<'a, str>,
    /// The metadata object, as its model reads it.
    metadata: Object,
}

impl<'a> InputLine<'a> {
    /// Scan `line`; `None` for any other line and for anything the general path would treat otherwise (a field of
    /// another type or refused by its model, metadata that is not canonical JSON, a negative sequence).
    pub(crate) fn scan(line: &'a str) -> Option<InputLine<'a>> {
        let (mut kind, mut event_kind, mut input_id, mut source, mut content) = (None, None, None, None, None);
        let mut metadata = None;
        let head = scan_line(line, MAX_INPUT_LINE_BYTES, |scanner| {
            scanner.object(|scanner, key| match key.as_ref() {
                source_key::KIND => once(&mut kind, scanner.string()),
                source_key::EVENT_KIND => once(&mut event_kind, scanner.string()),
                source_key::INPUT_ID => once(&mut input_id, scanner.string()),
                source_key::SOURCE => once(&mut source, scanner.string()),
                source_key::CONTENT => once(&mut content, scanner.string()),
                source_key::METADATA => once(&mut metadata, scanner.canonical_value()),
                // A string or null, as the model holds them; not read by the conversion.
                key if CAPABILITY_IDS.contains(&key) => scanner.literal(b"null").or_else(|| scanner.string().map(drop)),
                _ => scanner.skip_value(),
            })
        })?;
        (kind?.as_ref() == names::INPUT_TEXT && event_kind?.as_ref() == kinds::CAPABILITY).then_some(())?;
        let source = source.filter(|source| INPUT_SOURCES.contains(&source.as_ref()))?;
        let Value::Object(metadata) = serde_json::from_str(metadata?).ok()? else { return None };
        metadata_error(&metadata).is_none().then_some(())?;
        let sequence = SourceSequence::from(u64::try_from(head.sequence).ok()?);
        Some(InputLine { head, sequence, input_id: input_id?, source, content: content?, metadata })
    }

    /// What the conversion reads.
    pub(crate) fn input(&self) -> Input<'_> {
        Input {
            item: ItemIdentity {
                thread_id: &self.head.thread_id,
                run_id: &self.head.run_id,
                sequence: &self.sequence,
                occurred_at: self.head.time,
            },
            media: false,
            input_id: Value::String(self.input_id.to_string()),
            source: &self.source,
            content: Value::String(self.content.to_string()),
            metadata: Some(&self.metadata),
        }
    }
}
