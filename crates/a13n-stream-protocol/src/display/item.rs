//! The display's items: their kinds and states, positions, references and the observed entries a fold writes.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json::write_pydantic_str;
use crate::json::Object;
use crate::{MemorySource, UtcTime};

/// What an item presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// An assistant or user text message.
    TextMessage,
    /// A reasoning message.
    ReasoningMessage,
    /// A tool call with its arguments and result.
    ToolCall,
    /// Any other observation (lifecycle, custom events, carried-through native events).
    Observation,
}

impl ItemKind {
    pub(crate) const ALL: [ItemKind; 4] =
        [ItemKind::TextMessage, ItemKind::ReasoningMessage, ItemKind::ToolCall, ItemKind::Observation];

    /// The kind's name in the checkpoint JSON (`text_message`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::TextMessage => "text_message",
            ItemKind::ReasoningMessage => "reasoning_message",
            ItemKind::ToolCall => "tool_call",
            ItemKind::Observation => "observation",
        }
    }
}

/// Where an item stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    /// Still accumulating.
    InProgress,
    /// Finished.
    Completed,
    /// Stopped before finishing.
    Interrupted,
    /// Failed.
    Failed,
}

impl ItemState {
    pub(crate) const ALL: [ItemState; 4] =
        [ItemState::InProgress, ItemState::Completed, ItemState::Interrupted, ItemState::Failed];

    /// The state's name in the checkpoint JSON (`in_progress`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemState::InProgress => "in_progress",
            ItemState::Completed => "completed",
            ItemState::Interrupted => "interrupted",
            ItemState::Failed => "failed",
        }
    }
}

/// A position in a run's display stream: attempt and event sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamPosition {
    /// The delivery attempt.
    pub attempt: u64,
    /// The last folded event's sequence (0 before any).
    pub sequence: u64,
}

impl std::fmt::Display for StreamPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.attempt, self.sequence)
    }
}

/// Why a text is not a [`StreamPosition`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a stream position: expected attempt-sequence, two decimal numbers such as 0-42")]
pub struct PositionError {
    text: String,
}

impl std::str::FromStr for StreamPosition {
    type Err = PositionError;

    /// Parse `attempt-sequence` strictly: two decimal numbers without sign, space or leading zero, each within
    /// `u64`, so every position has exactly one spelling (the one [`Display`](std::fmt::Display) writes).
    fn from_str(text: &str) -> Result<StreamPosition, PositionError> {
        match StreamPosition::read_prefix(text.as_bytes()) {
            Some((position, end)) if end == text.len() => Ok(position),
            _ => Err(PositionError { text: text.chars().take(64).collect() }),
        }
    }
}

impl StreamPosition {
    /// The position spelled at the start of `bytes` as [`Display`](std::fmt::Display) writes it (two decimal
    /// numbers without sign or leading zero, each within `u64`), and where that spelling ends. Read a byte at a
    /// time, in one pass: positions are short.
    pub(crate) fn read_prefix(bytes: &[u8]) -> Option<(StreamPosition, usize)> {
        let (attempt, dash) = Self::read_number(bytes, 0)?;
        if bytes.get(dash) != Some(&b'-') {
            return None;
        }
        let (sequence, end) = Self::read_number(bytes, dash + 1)?;
        Some((StreamPosition { attempt, sequence }, end))
    }

    /// The decimal number at `bytes[start]` as [`Display`](std::fmt::Display) writes it (a leading `0` is the
    /// whole number), and where it ends; `None` past `u64`.
    #[inline]
    fn read_number(bytes: &[u8], start: usize) -> Option<(u64, usize)> {
        match bytes.get(start) {
            Some(b'0') => return Some((0, start + 1)),
            Some(b'1'..=b'9') => {}
            _ => return None,
        }
        let mut value = 0u64;
        let mut at = start;
        while let Some(digit) = bytes.get(at).map(|byte| byte.wrapping_sub(b'0')).filter(|digit| *digit < 10) {
            value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
            at += 1;
        }
        Some((value, at))
    }
}

/// An immutable host-owned value, loaded through the host's authorized content API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentRef {
    /// The value's identity in the host.
    pub id: String,
    /// Its size.
    pub size_bytes: u64,
    /// `text/plain` or `application/json`.
    pub media_type: String,
    /// A short preview.
    pub preview: String,
    /// Whether the preview is truncated.
    #[serde(default)]
    pub truncated: bool,
}

/// One display item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// `itm_` and 32 hex digits: stable across attempts.
    pub id: String,
    /// The item's place in the run's display: 1 for the first item, dense after it.
    pub ordinal: u64,
    /// What the item presents.
    pub kind: ItemKind,
    /// Where it stands.
    pub state: ItemState,
    /// The position of the first event that changed it (`attempt-sequence`).
    pub first_stream_id: String,
    /// The position of the latest event that changed it.
    pub last_stream_id: String,
    /// When its first event occurred.
    pub started_at: UtcTime,
    /// When the latest event that left it completed or failed occurred.
    pub ended_at: Option<UtcTime>,
    /// The accumulated, bounded content.
    pub content: Object,
    /// Host-owned values too large for the content.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub content_refs: IndexMap<String, ContentRef>,
}

/// The item a live event changed, and its state after the event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemRef {
    /// The item's id.
    pub id: String,
    /// Its kind.
    pub kind: ItemKind,
    /// Its state after the event.
    pub state: ItemState,
    /// Its ordinal.
    pub ordinal: Option<u64>,
    /// The host-selected response group (one per model request).
    pub response_group: Option<String>,
    /// Native failure diagnostics of a failed tool call.
    pub failure: Option<Object>,
    /// Memory evidence, sent at a message's end only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_sources: Option<Vec<MemorySource>>,
}

impl ItemRef {
    /// The reference's JSON of the item reference, as an observed entry carries it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }
}

/// One AG-UI event at its stream sequence, with the item it changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The event's sequence in the run's display stream.
    pub sequence: u64,
    /// The event as the stream carries it.
    pub event: Object,
    /// The item the event changed, if any.
    pub item: Option<ItemRef>,
}

/// What an observed line reports of the item its event changed: the fields of an [`ItemRef`], borrowed.
pub(super) struct ObservedItem<'a> {
    pub(super) id: &'a str,
    pub(super) kind: ItemKind,
    pub(super) state: ItemState,
    pub(super) ordinal: Option<u64>,
    pub(super) response_group: Option<&'a str>,
    pub(super) failure: Option<&'a Object>,
    pub(super) memory_sources: Option<&'a [MemorySource]>,
}

impl<'a> From<&'a ItemRef> for ObservedItem<'a> {
    fn from(item: &'a ItemRef) -> ObservedItem<'a> {
        ObservedItem {
            id: &item.id,
            kind: item.kind,
            state: item.state,
            ordinal: item.ordinal,
            response_group: item.response_group.as_deref(),
            failure: item.failure.as_ref(),
            memory_sources: item.memory_sources.as_deref(),
        }
    }
}

impl ObservedItem<'_> {
    /// The owned form.
    pub(super) fn to_item_ref(&self) -> ItemRef {
        ItemRef {
            id: self.id.to_owned(),
            kind: self.kind,
            state: self.state,
            ordinal: self.ordinal,
            response_group: self.response_group.map(str::to_owned),
            failure: self.failure.cloned(),
            memory_sources: self.memory_sources.map(<[MemorySource]>::to_vec),
        }
    }
}

/// Append one observed line and a newline, as the reference's recorded `observed.jsonl` writes an entry (the
/// layout of [`Observed`]'s `Serialize`): the one writer of this wire form, for the general path and every lane.
/// `event` appends the event's JSON.
pub(super) fn write_observed_line(
    out: &mut Vec<u8>,
    sequence: u64,
    event: impl FnOnce(&mut Vec<u8>),
    item: Option<ObservedItem<'_>>,
) {
    out.extend_from_slice(br#"{"sequence":"#);
    out.extend_from_slice(itoa::Buffer::new().format(sequence).as_bytes());
    out.extend_from_slice(br#","event":"#);
    event(out);
    out.extend_from_slice(br#","item":"#);
    match item {
        Some(item) => write_observed_item(out, &item),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}\n");
}

/// An item reference has no `item` key (nor text that could spell one outside a string): hosts split observed
/// lines at their last `,"item":` ([`ObservedLine`](super::ObservedLine)).
fn write_observed_item(out: &mut Vec<u8>, item: &ObservedItem<'_>) {
    out.extend_from_slice(br#"{"id":"#);
    write_pydantic_str(out, item.id);
    out.extend_from_slice(br#","kind":""#);
    out.extend_from_slice(item.kind.as_str().as_bytes());
    out.extend_from_slice(br#"","state":""#);
    out.extend_from_slice(item.state.as_str().as_bytes());
    out.extend_from_slice(br#"","ordinal":"#);
    match item.ordinal {
        Some(ordinal) => out.extend_from_slice(itoa::Buffer::new().format(ordinal).as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","response_group":"#);
    match item.response_group {
        Some(group) => write_pydantic_str(out, group),
        None => out.extend_from_slice(b"null"),
    }
    // Writing into memory cannot fail.
    out.extend_from_slice(br#","failure":"#);
    match item.failure {
        Some(failure) => drop(crate::json::to_python_writer(out, failure)),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(sources) = item.memory_sources {
        out.extend_from_slice(br#","memory_sources":"#);
        drop(crate::json::to_python_writer(out, sources));
    }
    out.push(b'}');
}

impl Item {
    /// The item's JSON as a checkpoint carries it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }
}

impl Observed {
    /// The observed entry as the reference's recorded `observed.jsonl` writes it (`json.dumps` of the JSON-mode
    /// dump: floats as Python `repr`).
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256);
        self.write_json(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Append the observed entry's JSON to `out` (no intermediate string).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_line(out);
        out.pop();
    }

    /// Append each entry's JSON followed by a newline: the layout [`DisplayFold::fold_line`](crate::DisplayFold::fold_line) writes.
    pub fn write_lines(observed: &[Observed], out: &mut Vec<u8>) {
        for entry in observed {
            entry.write_line(out);
        }
    }

    fn write_line(&self, out: &mut Vec<u8>) {
        let event = |out: &mut Vec<u8>| drop(crate::json::to_python_writer(out, &self.event));
        write_observed_line(out, self.sequence, event, self.item.as_ref().map(ObservedItem::from));
    }
}

/// An event object's JSON as the stream carries it (the layout of checkpoints and observed lines).
pub fn event_json(event: &Object) -> String {
    crate::json::to_pydantic_json(event).unwrap_or_default()
}

/// A stable item id: `itm_` and the first 32 hex digits of SHA-256 over run, kind and source identity.
pub fn item_id(run_id: &str, kind: ItemKind, source_id: &str) -> String {
    item_id_of(run_id, kind, &[source_id.as_bytes()])
}

/// The id of the observation item of the event folded as `sequence` in `attempt`: its source identity is
/// `attempt:sequence`. Hashed from the numbers' digits, with no string made.
pub(super) fn observation_id(run_id: &str, attempt: u64, sequence: u64) -> String {
    let (mut attempt_digits, mut sequence_digits) = (itoa::Buffer::new(), itoa::Buffer::new());
    let parts = [attempt_digits.format(attempt).as_bytes(), b":", sequence_digits.format(sequence).as_bytes()];
    item_id_of(run_id, ItemKind::Observation, &parts)
}

/// [`item_id`] of the source identity `parts` make one after another.
fn item_id_of(run_id: &str, kind: ItemKind, parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(run_id.as_bytes());
    hasher.update([0]);
    hasher.update(kind.as_str().as_bytes());
    hasher.update([0]);
    for part in parts {
        hasher.update(part);
    }
    let digest = hasher.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    out.push_str("itm_");
    for byte in &digest[..16] {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

/// The content of an observation item, borrowed from its event: what [`Store::put_sealed`](super::store) stores as
/// text. Written as the same content object would be, key for key.
#[derive(Serialize)]
pub(super) struct ObservationContent<'a> {
    pub(super) name: &'a str,
    pub(super) value: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) metadata: Option<&'a Value>,
    #[serde(rename = "subagentRunId", skip_serializing_if = "Option::is_none")]
    pub(super) subagent_run_id: Option<&'a Value>,
}

impl ObservationContent<'_> {
    /// The canonical JSON text a sealed item holds.
    pub(super) fn sealed(&self) -> Box<str> {
        // Writing into memory cannot fail.
        crate::json::to_pydantic_json(self).unwrap_or_else(|_| "{}".into()).into_boxed_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_id_is_the_id_of_attempt_and_sequence() {
        for (attempt, sequence) in [(0, 0), (0, 1), (3, 12_345), (u64::MAX, u64::MAX)] {
            let spelled = item_id("run-1", ItemKind::Observation, &format!("{attempt}:{sequence}"));
            assert_eq!(observation_id("run-1", attempt, sequence), spelled);
        }
    }

    /// The hand-written observed line is the derived `Serialize` layout, byte for byte, in every shape an entry
    /// takes: no item, no ordinal, a failure, memory evidence, escapes, floats.
    #[test]
    fn the_observed_line_writer_is_the_serialized_layout() {
        let event: Object = serde_json::from_str(
            r#"{"type":"CUSTOM","timestamp":1,"name":"x","value":{"f":1.5e-7,"n":-0.0,"s":"é\"\n\u0001"}}"#,
        )
        .unwrap();
        let failure: Object = serde_json::from_str(r#"{"error":"boom","retry":2.0}"#).unwrap();
        let sources: Vec<MemorySource> = serde_json::from_str(
            r#"[{"kind":"record","memory":"m","memory_id":null,"status":"recalled","records":[]}]"#,
        )
        .unwrap();
        let item = |ordinal, failure: Option<Object>, memory_sources| ItemRef {
            id: "itm_\"1\"".into(),
            kind: ItemKind::ToolCall,
            state: ItemState::Failed,
            ordinal,
            response_group: Some("g:0:1".into()),
            failure,
            memory_sources,
        };
        let entries = [
            Observed { sequence: 7, event: event.clone(), item: None },
            Observed { sequence: 8, event: event.clone(), item: Some(item(None, None, None)) },
            Observed { sequence: 9, event: event.clone(), item: Some(item(Some(3), Some(failure), None)) },
            Observed { sequence: 10, event, item: Some(item(Some(4), None, Some(sources))) },
        ];
        for entry in entries {
            let mut serialized = Vec::new();
            crate::json::to_python_writer(&mut serialized, &entry).unwrap();
            assert_eq!(entry.to_json(), String::from_utf8(serialized).unwrap());
        }
    }
}
