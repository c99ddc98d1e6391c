//! Compact display items folded from AG-UI events, and checkpoints that continue exactly.
//!
//! [`DisplayFold`] gives every AG-UI event the next stream sequence and folds it into at most one display item:
//! a text message, a reasoning message, a tool call or an observation. Items have stable ids (a hash of run, kind
//! and source identity), dense ordinals from 1 and bounded content. [`DisplayFold::export`] detaches a
//! [`DisplaySnapshot`] at any point, open messages and tool calls included; [`DisplayFold::restore`] continues
//! from it with the next event exactly as the uninterrupted fold would. The snapshot's JSON is the reference's
//! checkpoint JSON byte for byte.
//!
//! Call order: [`DisplayFold::new`] (or [`DisplayFold::restore`]), then for each Harness source item
//! [`DisplayFold::fold_source`] (or [`DisplayFold::events`] followed by [`DisplayFold::fold`]); AG-UI events from
//! elsewhere go to [`DisplayFold::fold`] directly. Export whenever a checkpoint is due.

use std::collections::HashSet;

mod lane;
mod store;

use store::{CharCounts, ItemsView, RawItem, Store, StreamId};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::agui::{Event, EventType, ToolResultContent};
use crate::content::{tool_execution_value, tool_result_content};
use crate::error::{FoldError, InputError};
use crate::fragments::{Accepted, CustomEventAssembler, FragmentState};
use crate::json::{char_boundary, char_len, escaped_str_size, json_size, Object, PyDumps};
use crate::memory::{memory_sources, MemorySource};
use crate::names;
use crate::observer::{AguiEventProcessor, HarnessAguiStreamObserver, ObserverContinuation};
use crate::source::{EventKind, SourceItem};
use crate::time::UtcTime;

/// Observations larger than this (bytes of ASCII-escaped JSON) keep only their name.
pub const MAX_OBSERVATION_BYTES: usize = 32_768;
/// A message text, tool arguments or tool result keeps this many characters (code points).
pub const MAX_FIELD_CHARS: usize = 262_144;
const TRUNCATED_PARTS_NOTICE: &str = "Result parts omitted: display size limit exceeded.";

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
    fn as_str(self) -> &'static str {
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
    fn as_str(self) -> &'static str {
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
        fn number(digits: &str) -> Option<u64> {
            let canonical = digits == "0" || (!digits.starts_with('0') && !digits.is_empty());
            (canonical && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
        }
        let parsed = text.split_once('-').and_then(|(attempt, sequence)| {
            Some(StreamPosition { attempt: number(attempt)?, sequence: number(sequence)? })
        });
        parsed.ok_or_else(|| PositionError { text: text.chars().take(64).collect() })
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

/// A tool-call part's streamed arguments so far and the one observation item that holds them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamedArguments {
    /// What identifies the stream: name, thread, run and the source event without its argument text.
    pub stream: Value,
    /// The observation item's id.
    pub key: String,
    /// When the first delta occurred.
    pub at: UtcTime,
    /// The sequence of the last delta folded in: only the next event continues the item.
    pub sequence: u64,
    /// The whole observation, until its value outgrows the observation limit.
    pub event: Option<Object>,
    /// The observation value's size (ASCII-escaped JSON bytes).
    pub size: u64,
}

/// Parsing state at a cut; host paging may retire only immutable items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplayContinuation {
    /// The run the display belongs to.
    pub run_id: String,
    /// The last folded position.
    pub position: StreamPosition,
    /// The ordinal the next new item takes.
    pub next_ordinal: u64,
    /// Whether the fold keeps full content (and skips native part observations).
    #[serde(default)]
    pub full_content: bool,
    /// The current response group per scope (`root` or a subagent run).
    #[serde(default)]
    pub response_groups: IndexMap<String, String>,
    /// Memory evidence per scope, attached to the next assistant message's end.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub memory_sources: IndexMap<String, Vec<MemorySource>>,
    /// The streamed tool arguments being coalesced.
    #[serde(default)]
    pub arguments: Option<StreamedArguments>,
    /// Incomplete fragment frames.
    #[serde(default)]
    pub fragments: FragmentState,
    /// The conversion state of the fold's observer.
    #[serde(default)]
    pub observer: ObserverContinuation,
}

/// Completed blocks and active accumulations, with enough state for an intact suffix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplaySnapshot {
    /// The items, in order of creation.
    pub items: Vec<Item>,
    /// The state to continue from.
    pub continuation: DisplayContinuation,
}

impl DisplaySnapshot {
    /// The checkpoint JSON, byte for byte as the reference writes it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }

    /// Read a checkpoint written by this library or the reference.
    pub fn from_json(text: &str) -> Result<DisplaySnapshot, InputError> {
        let snapshot: DisplaySnapshot = serde_json::from_str(text).map_err(|error| checkpoint_error(&error))?;
        snapshot.validate()?;
        Ok(snapshot)
    }

    /// Whether no later event can change `item`, so a host may page it out before restoring: an observation
    /// other than the one still collecting streamed tool arguments. Messages and tool calls stay changeable
    /// (a failed tool result can still arrive for a completed call).
    pub fn is_immutable(&self, item: &Item) -> bool {
        item.kind == ItemKind::Observation
            && self.continuation.arguments.as_ref().is_none_or(|held| held.key != item.id)
    }

    /// Page out every immutable item (see [`DisplaySnapshot::is_immutable`]), returning them in order. The
    /// continuation keeps the next ordinal, so items created later keep dense, increasing ordinals.
    pub fn retire_immutable(&mut self) -> Vec<Item> {
        let (retired, kept) = std::mem::take(&mut self.items).into_iter().partition(|item| self.is_immutable(item));
        self.items = kept;
        retired
    }

    fn validate(&self) -> Result<(), InputError> {
        if self.continuation.next_ordinal < 1 {
            return Err(InputError::new("continuation.next_ordinal", "must be at least 1"));
        }
        for (index, item) in self.items.iter().enumerate() {
            if item.ordinal < 1 {
                return Err(InputError::new(format!("items.{index}.ordinal"), "must be at least 1"));
            }
        }
        Ok(())
    }
}

impl Item {
    /// The item's JSON as a checkpoint carries it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }
}

impl DisplayContinuation {
    /// The continuation's JSON as a checkpoint carries it.
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
        // Serializing into memory cannot fail for these types.
        let _ = crate::json::to_python_writer(out, self);
    }

    /// Append each entry's JSON followed by a newline: the layout [`DisplayFold::fold_line`] writes.
    pub fn write_lines(observed: &[Observed], out: &mut Vec<u8>) {
        for entry in observed {
            entry.write_json(out);
            out.push(b'\n');
        }
    }
}

/// An event object's JSON as the stream carries it (the layout of checkpoints and observed lines).
pub fn event_json(event: &Object) -> String {
    crate::json::to_pydantic_json(event).unwrap_or_default()
}

/// A checkpoint that does not decode: what serde found, and where.
fn checkpoint_error(error: &serde_json::Error) -> InputError {
    InputError::new("checkpoint", format!("{error} (a DisplaySnapshot: items and continuation)"))
}

/// A stable item id: `itm_` and the first 32 hex digits of SHA-256 over run, kind and source identity.
pub fn item_id(run_id: &str, kind: ItemKind, source_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(run_id.as_bytes());
    hasher.update([0]);
    hasher.update(kind.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(source_id.as_bytes());
    let digest = hasher.finalize();
    let mut out = String::with_capacity(36);
    out.push_str("itm_");
    for byte in &digest[..16] {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Options of a new [`DisplayFold`].
pub struct DisplayOptions {
    /// The delivery attempt (default 0).
    pub attempt: u64,
    /// The first ordinal (default 1).
    pub first: u64,
    /// Items already committed (their ordinals continue from `first`).
    pub items: Vec<Item>,
    /// Keep full values and skip native part observations (an interactive host that stores everything).
    pub full_content: bool,
    /// Keep full values but the same observations (a durable host).
    pub retain_content: bool,
    /// A host processor for every converted event.
    pub processor: Option<AguiEventProcessor>,
    /// The time of an event without an integer `timestamp` (default: the Unix epoch). The library reads no
    /// clock of its own; a host that wants wall-clock time supplies it here.
    pub clock: Option<Box<dyn Fn() -> UtcTime + Send>>,
}

impl Default for DisplayOptions {
    fn default() -> Self {
        DisplayOptions {
            attempt: 0,
            first: 1,
            items: Vec::new(),
            full_content: false,
            retain_content: false,
            processor: None,
            clock: None,
        }
    }
}

/// Folds AG-UI events once into compact display items, independently of host storage.
pub struct DisplayFold {
    run_id: String,
    attempt: u64,
    store: Store,
    sequence: u64,
    full_content: bool,
    retain_content: bool,
    response_groups: IndexMap<String, String>,
    memory_sources: IndexMap<String, Vec<MemorySource>>,
    arguments: Option<StreamedArguments>,
    assembler: CustomEventAssembler,
    observer: HarnessAguiStreamObserver,
    clock: Option<Box<dyn Fn() -> UtcTime + Send>>,
    /// The last item id computed: consecutive events of one message or call hash their source identity once.
    last_id: Option<(ItemKind, String, String)>,
    /// The part the fast lane folded last; any other change to the fold forgets it (see `lane.rs`).
    lane: Option<lane::LaneHit>,
    /// Whether the held argument stream's observation is still live (unsealed) in the store.
    arguments_open: bool,
}

impl std::fmt::Debug for DisplayFold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisplayFold")
            .field("run_id", &self.run_id)
            .field("position", &self.position())
            .field("items", &self.store.len())
            .field("next_ordinal", &self.store.next)
            .finish()
    }
}

/// Cap the payloads the observer hands on; one character over the bound survives so the fold sees truncation.
fn bound_event(event: Event) -> Event {
    match event {
        Event::ToolCallResult(mut result) => {
            match &mut result.content {
                ToolResultContent::Text(text) => {
                    if text.len() > MAX_FIELD_CHARS && char_len(text) > MAX_FIELD_CHARS {
                        let end = char_boundary(text, MAX_FIELD_CHARS + 1);
                        text.truncate(end);
                    }
                }
                ToolResultContent::Parts(_) => {
                    let encoded = Event::ToolCallResult(result.clone()).to_json();
                    if char_len(&encoded) > MAX_FIELD_CHARS {
                        result.content =
                            ToolResultContent::Parts(vec![json!({"type": "text", "text": TRUNCATED_PARTS_NOTICE})]);
                    }
                }
            }
            Event::ToolCallResult(result)
        }
        Event::ToolCallArgs(mut args) => {
            if args.delta.len() > MAX_FIELD_CHARS && char_len(&args.delta) > MAX_FIELD_CHARS {
                let end = char_boundary(&args.delta, MAX_FIELD_CHARS + 1);
                args.delta.truncate(end);
            }
            Event::ToolCallArgs(args)
        }
        other => other,
    }
}

/// Python truthiness of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64() != Some(0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Python's `str()` of a JSON value.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => py_repr(other),
    }
}

fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() => crate::json::py_float_repr(float),
            _ => number.to_string(),
        },
        Value::String(text) => {
            let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
            let mut out = String::with_capacity(text.len() + 2);
            out.push(quote);
            for ch in text.chars() {
                match ch {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => format!("[{}]", items.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| format!("{}: {}", py_repr(&Value::String(key.clone())), py_repr(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The message kinds and the item kind each folds into.
fn message_kind(event_type: EventType) -> Option<ItemKind> {
    use EventType as T;
    match event_type {
        T::TextMessageStart | T::TextMessageContent | T::TextMessageEnd => Some(ItemKind::TextMessage),
        T::ReasoningMessageStart | T::ReasoningMessageContent | T::ReasoningMessageEnd | T::ReasoningEncryptedValue => {
            Some(ItemKind::ReasoningMessage)
        }
        T::ToolCallStart | T::ToolCallArgs | T::ToolCallEnd | T::ToolCallResult => Some(ItemKind::ToolCall),
        _ => None,
    }
}

const COPIED: [&str; 8] = [
    "messageId",
    "role",
    "toolCallId",
    "toolCallName",
    "parentMessageId",
    "metadata",
    "subagentRunId",
    "responseGroup",
];

/// Python's `isinstance(timestamp, int)`, as epoch milliseconds.
fn integer_timestamp(payload: &Object) -> Option<i64> {
    match payload.get("timestamp")? {
        Value::Bool(flag) => Some(i64::from(*flag)),
        Value::Number(number) if !number.is_f64() => number.as_i64().or(Some(i64::MAX)),
        _ => None,
    }
}

/// Check everything folding an event indexes, so that folding itself cannot fail half-way.
fn validate_event(payload: &Object) -> Result<(), InputError> {
    let event_type = match payload.get("type") {
        None => return Err(InputError::new("type", "missing field")),
        Some(Value::String(event_type)) => event_type.as_str(),
        Some(_) => return Ok(()),
    };
    if let Some(ms) = integer_timestamp(payload) {
        if UtcTime::from_epoch_ms(ms).is_none() {
            return Err(InputError::new("timestamp", format!("{ms} ms is outside the representable datetimes")));
        }
    }
    let require_str = |key: &str| -> Result<(), InputError> {
        match payload.get(key) {
            Some(Value::String(_)) => Ok(()),
            Some(other) => Err(InputError::new(key, format!("expected a string, found {other}"))),
            None => Err(InputError::new(key, format!("missing field for {event_type}"))),
        }
    };
    use EventType as T;
    let Some(known) = EventType::parse(event_type) else { return Ok(()) };
    match known {
        T::ReasoningEncryptedValue => require_str("entityId")?,
        T::ToolCallStart | T::ToolCallEnd | T::ToolCallResult => require_str("toolCallId")?,
        T::ToolCallArgs => {
            require_str("toolCallId")?;
            require_str("delta")?;
        }
        T::TextMessageContent | T::ReasoningMessageContent => {
            require_str("messageId")?;
            require_str("delta")?;
        }
        t if message_kind(t).is_some() => require_str("messageId")?,
        T::Custom if payload.get("name").and_then(Value::as_str) == Some(names::PART_DELTA) => {
            let delta = payload.get("value").and_then(|v| v.get("event")).and_then(|e| e.get("delta"));
            if !delta.is_some_and(Value::is_object) {
                return Err(InputError::new("value.event.delta", "a part_delta observation needs its source delta"));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The delta of a streamed tool-call argument observation, when the event is one.
fn streamed_arguments(payload: &Object) -> Option<&Object> {
    if payload.get("name").and_then(Value::as_str) != Some(names::PART_DELTA) {
        return None;
    }
    let delta = payload.get("value")?.get("event")?.get("delta")?.as_object()?;
    let arguments = delta.get("part_delta_kind").and_then(Value::as_str) == Some("tool_call")
        && delta.get("args_delta").is_some_and(Value::is_string);
    (arguments && !delta.get("tool_name_delta").is_some_and(truthy)).then_some(delta)
}

/// A tool result the observer does not present (retry prompts, failures, denials): its call and message.
fn failed_tool_call(source: &SourceItem) -> Option<(String, String)> {
    let event = source.event()?;
    if !matches!(event.kind(), EventKind::FunctionToolResult | EventKind::OutputToolResult) {
        return None;
    }
    let part = event.object("part")?;
    let is_return = part.get("part_kind").and_then(Value::as_str) == Some("tool-return");
    if is_return && part.get("outcome").and_then(Value::as_str).unwrap_or("success") == "success" {
        return None;
    }
    let content = part.get("content").unwrap_or(&Value::Null);
    let value = if is_return {
        tool_execution_value(content, part.get("metadata").and_then(Value::as_object)).ok()?
    } else {
        content
    };
    let message = match tool_result_content(value) {
        ToolResultContent::Text(text) => text,
        ToolResultContent::Parts(parts) => PyDumps::DEFAULT.dumps(&Value::Array(parts)),
    };
    let end = char_boundary(&message, 4096);
    Some((part.get("tool_call_id")?.as_str()?.to_owned(), message[..end].to_owned()))
}

impl DisplayFold {
    /// A fold for `run_id` with default options.
    pub fn new(run_id: impl Into<String>) -> DisplayFold {
        DisplayFold::with_options(run_id, DisplayOptions::default())
    }

    /// A fold with explicit options.
    pub fn with_options(run_id: impl Into<String>, options: DisplayOptions) -> DisplayFold {
        let bounded = !(options.full_content || options.retain_content);
        let next = options.first + options.items.len() as u64;
        DisplayFold {
            run_id: run_id.into(),
            attempt: options.attempt,
            store: Store::new(options.items, next, None),
            sequence: 0,
            full_content: options.full_content,
            retain_content: options.retain_content,
            response_groups: IndexMap::new(),
            memory_sources: IndexMap::new(),
            arguments: None,
            assembler: CustomEventAssembler::default(),
            observer: observer_with(options.processor, bounded),
            clock: options.clock,
            last_id: None,
            lane: None,
            arguments_open: false,
        }
    }

    /// Continue from a checkpoint. `retain_content` and the processor are host policy, not checkpoint state:
    /// supply the ones the exporting fold had.
    pub fn restore(
        snapshot: DisplaySnapshot,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        snapshot.validate()?;
        let state = snapshot.continuation;
        let bounded = !(state.full_content || retain_content);
        let mut fold = DisplayFold::with_options(
            state.run_id.clone(),
            DisplayOptions {
                attempt: state.position.attempt,
                full_content: state.full_content,
                retain_content,
                ..DisplayOptions::default()
            },
        );
        let open = state.arguments.as_ref().map(|held| held.key.as_str());
        fold.store = Store::new(snapshot.items, state.next_ordinal, open);
        fold.arguments_open = open.is_some();
        fold.sequence = state.position.sequence;
        fold.response_groups = state.response_groups;
        fold.memory_sources = state.memory_sources;
        fold.arguments = state.arguments;
        fold.assembler = CustomEventAssembler::restore(state.fragments)?;
        let mut observer = HarnessAguiStreamObserver::restore(state.observer, processor);
        if bounded {
            observer = observer.with_finish(bound_event);
        }
        fold.observer = observer;
        Ok(fold)
    }

    /// Continue from checkpoint JSON directly: [`DisplaySnapshot::from_json`] and [`DisplayFold::restore`] in
    /// one step, keeping immutable items' text as it is instead of rebuilding it.
    pub fn restore_json(
        text: &str,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawSnapshot<'a> {
            #[serde(borrow)]
            items: Vec<RawItem<'a>>,
            continuation: DisplayContinuation,
        }
        let snapshot: RawSnapshot<'_> = serde_json::from_str(text).map_err(|error| checkpoint_error(&error))?;
        DisplayFold::restore_raw(snapshot.items, snapshot.continuation, retain_content, processor)
    }

    /// Continue from a checkpoint held in parts, as a host stores it: each item's JSON (in ordinal order) and the
    /// continuation's JSON. The same as [`DisplayFold::restore_json`] of the checkpoint they make up.
    pub fn restore_parts<'a>(
        items: impl IntoIterator<Item = &'a str>,
        continuation: &str,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        let items = items
            .into_iter()
            .enumerate()
            .map(|(index, text)| {
                serde_json::from_str::<RawItem<'a>>(text)
                    .map_err(|error| FoldError::from(InputError::new(format!("items.{index}"), error.to_string())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let continuation: DisplayContinuation = serde_json::from_str(continuation)
            .map_err(|error| FoldError::from(InputError::new("continuation", error.to_string())))?;
        DisplayFold::restore_raw(items, continuation, retain_content, processor)
    }

    fn restore_raw(
        items: Vec<RawItem<'_>>,
        continuation: DisplayContinuation,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        if continuation.next_ordinal < 1 {
            return Err(InputError::new("continuation.next_ordinal", "must be at least 1").into());
        }
        if let Some(index) = items.iter().position(|item| item.ordinal < 1) {
            return Err(InputError::new(format!("items.{index}.ordinal"), "must be at least 1").into());
        }
        let state = continuation;
        let open = state.arguments.as_ref().map(|held| held.key.clone());
        let store = Store::from_raw(items, state.next_ordinal, open.as_deref())?;
        let mut fold = DisplayFold::restore(
            DisplaySnapshot { items: Vec::new(), continuation: state },
            retain_content,
            processor,
        )?;
        fold.store = store;
        fold.arguments_open = open.is_some();
        Ok(fold)
    }

    /// Continue from a checkpoint, rejecting one of another run, attempt or content policy.
    pub fn restore_checked(
        run_id: &str,
        attempt: u64,
        full_content: bool,
        snapshot: DisplaySnapshot,
        retain_content: bool,
        processor: Option<AguiEventProcessor>,
    ) -> Result<DisplayFold, FoldError> {
        let state = &snapshot.continuation;
        if state.run_id != run_id || state.position.attempt != attempt || state.full_content != full_content {
            return Err(FoldError::Continuation(format!(
                "the checkpoint is for run {:?}, attempt {}, full_content {}; this fold is for run {run_id:?}, \
                 attempt {attempt}, full_content {full_content}",
                state.run_id, state.position.attempt, state.full_content
            )));
        }
        DisplayFold::restore(snapshot, retain_content, processor)
    }

    /// The run this display belongs to.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The Harness thread and run of the root stream, fixed by the first source item folded (`None` before).
    pub fn source_identity(&self) -> Option<(&str, &str)> {
        Some((self.observer.thread_id()?, self.observer.run_id()?))
    }

    /// The last folded position.
    pub fn position(&self) -> StreamPosition {
        StreamPosition { attempt: self.attempt, sequence: self.sequence }
    }

    fn stream_id(&self) -> StreamId {
        StreamId::At { attempt: self.attempt, sequence: self.sequence }
    }

    /// The items, in order of creation (materialized: sealed items are read back from their text).
    pub fn items(&self) -> impl Iterator<Item = Item> + '_ {
        self.store.items()
    }

    /// How many items the display holds.
    pub fn item_count(&self) -> usize {
        self.store.len()
    }

    /// One item by id.
    pub fn item(&self, id: &str) -> Option<Item> {
        self.store.item(id)
    }

    /// Ids of items changed since [`DisplayFold::clear_changed`] (live publication), in order of creation.
    pub fn changed(&self) -> Vec<String> {
        self.store.changed_ids()
    }

    /// Forget live changes; checkpoint deltas ([`DisplayFold::capture_delta`]) are unaffected.
    pub fn clear_changed(&mut self) {
        self.store.clear_changed();
    }

    /// A detached checkpoint. Export never ends, interrupts or pages active content.
    pub fn export(&self) -> DisplaySnapshot {
        DisplaySnapshot { items: self.store.items().collect(), continuation: self.export_continuation() }
    }

    /// The checkpoint JSON of [`DisplayFold::export`], written straight from the fold's state (no copy of the
    /// items; sealed items are copied as text).
    pub fn export_json(&self) -> String {
        let mut out = Vec::with_capacity(self.store.sealed_bytes() + 4096);
        // Writing into memory cannot fail.
        let _ = self.write_export(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Write the checkpoint JSON of [`DisplayFold::export`] to `writer` as it is produced, holding no copy of it.
    pub fn write_export<W: std::io::Write>(&self, writer: W) -> std::io::Result<()> {
        #[derive(Serialize)]
        struct View<'a> {
            items: ItemsView<'a>,
            continuation: DisplayContinuation,
        }
        let view = View { items: ItemsView(&self.store), continuation: self.export_continuation() };
        let mut serializer = serde_json::Serializer::with_formatter(writer, crate::json::PydanticFormatter);
        view.serialize(&mut serializer).map_err(std::io::Error::other)
    }

    /// The items changed since the last capture (by ordinal) and the parser state, independently of live
    /// publication.
    pub fn capture_delta(&mut self) -> DisplaySnapshot {
        self.lane = None;
        let items = self.store.take_checkpoint_changed();
        DisplaySnapshot { items, continuation: self.export_continuation() }
    }

    /// The parser state alone, without the accumulated display.
    pub fn export_continuation(&self) -> DisplayContinuation {
        DisplayContinuation {
            run_id: self.run_id.clone(),
            position: self.position(),
            next_ordinal: self.store.next,
            full_content: self.full_content,
            response_groups: self.response_groups.clone(),
            memory_sources: self.memory_sources.clone(),
            arguments: self.arguments.clone(),
            fragments: self.assembler.export(),
            observer: self.observer.export(),
        }
    }

    /// The AG-UI events of one Harness source item, as the JSON the stream carries. Atomic: a rejected item
    /// leaves the fold's observer unchanged.
    pub fn events(&mut self, source: &SourceItem) -> Result<Vec<Object>, FoldError> {
        self.lane = None;
        let events = self.observer.observe(source)?;
        Ok(events.into_iter().map(Event::into_object).collect())
    }

    /// Convert and fold one source item: [`DisplayFold::events`] then [`DisplayFold::fold`] with the source.
    pub fn fold_source(&mut self, source: &SourceItem) -> Result<Vec<Observed>, FoldError> {
        let events = self.events(source)?;
        self.fold(events, Some(source))
    }

    /// Give each event the next sequence and fold it. When `source` is a tool result the observer does not
    /// present, its call's item fails and the last event reports it. Atomic: a malformed event rejects the whole
    /// batch before anything changes.
    pub fn fold(&mut self, events: Vec<Object>, source: Option<&SourceItem>) -> Result<Vec<Observed>, FoldError> {
        self.lane = None;
        for (index, payload) in events.iter().enumerate() {
            validate_event(payload).map_err(|error| error.nested(&format!("events.{index}")))?;
        }
        let mut observed = Vec::with_capacity(events.len());
        for payload in events {
            self.sequence += 1;
            let mut item = self.fold_one(&payload);
            if let Some(reference) = item.as_mut() {
                if payload.get("type").and_then(Value::as_str) == Some(EventType::TextMessageEnd.as_str()) {
                    let sources = self.store.live_content(&reference.id).and_then(|c| c.get("memory_sources"));
                    if let Some(Value::Array(sources)) = sources {
                        reference.memory_sources =
                            sources.iter().map(|s| serde_json::from_value(s.clone())).collect::<Result<_, _>>().ok();
                    }
                }
            }
            observed.push(Observed { sequence: self.sequence, event: payload, item });
        }
        if let (Some(last), Some(source)) = (observed.last_mut(), source) {
            if let Some((call_id, message)) = failed_tool_call(source) {
                let at = self.occurred(&last.event);
                let subagent =
                    (Some(source.run_id.as_str()) != self.observer.run_id()).then_some(source.run_id.as_str());
                if let Some(reference) = self.fail_tool_call(&call_id, message, at, subagent) {
                    last.item = Some(reference);
                }
            }
        }
        Ok(observed)
    }

    fn occurred(&self, payload: &Object) -> UtcTime {
        integer_timestamp(payload)
            .and_then(UtcTime::from_epoch_ms)
            .unwrap_or_else(|| self.clock.as_ref().map_or(UtcTime::EPOCH, |clock| clock()))
    }

    fn scoped(&mut self, kind: ItemKind, scope: Option<&Value>, source_id: &str) -> String {
        let identity = match scope.filter(|s| truthy(s)) {
            Some(scope) => std::borrow::Cow::Owned(format!("{}:{source_id}", py_str(scope))),
            None => std::borrow::Cow::Borrowed(source_id),
        };
        if let Some((last_kind, last_identity, key)) = &self.last_id {
            if *last_kind == kind && *last_identity == *identity {
                return key.clone();
            }
        }
        let key = item_id(&self.run_id, kind, &identity);
        self.last_id = Some((kind, identity.into_owned(), key.clone()));
        key
    }

    /// Seal the observation of a finished argument stream: no later event can extend it.
    fn seal_arguments(&mut self) {
        if let (Some(held), true) = (&self.arguments, self.arguments_open) {
            self.store.seal(&held.key);
            self.arguments_open = false;
        }
    }

    fn fold_one(&mut self, payload: &Object) -> Option<ItemRef> {
        if self.arguments.as_ref().is_some_and(|held| held.sequence + 1 < self.sequence) {
            self.seal_arguments();
        }
        use EventType as T;
        let event_type = EventType::parse(payload.get("type")?.as_str()?)?;
        if event_type == T::Custom {
            return self.observation(payload);
        }
        let position = self.stream_id();
        if matches!(
            event_type,
            T::RunStarted | T::RunFinished | T::RunError | T::SubagentStarted | T::SubagentFinished | T::SubagentError
        ) {
            let key = item_id(&self.run_id, ItemKind::Observation, &format!("{}:{}", self.attempt, self.sequence));
            let at = self.occurred(payload);
            let content = Some(payload.clone());
            let kind = ItemKind::Observation;
            return Some(self.store.put(key, kind, ItemState::Completed, content, position, at, true, |_, _, _| {}));
        }
        let kind = message_kind(event_type)?;
        let id_field = match event_type {
            T::ReasoningEncryptedValue => "entityId",
            _ if kind == ItemKind::ToolCall => "toolCallId",
            _ => "messageId",
        };
        let source_id = payload.get(id_field).and_then(Value::as_str).unwrap_or_default();
        let key = self.scoped(kind, payload.get("subagentRunId"), source_id);
        let state = if matches!(event_type, T::TextMessageEnd | T::ReasoningMessageEnd | T::ToolCallResult) {
            ItemState::Completed
        } else {
            self.store.state(&key).unwrap_or(ItemState::InProgress)
        };
        let at = self.occurred(payload);
        let full = self.full_content || self.retain_content;
        let response_groups = &self.response_groups;
        let memory_sources = &self.memory_sources;
        let update = |content: &mut Object, counts: &mut CharCounts, key: usize| {
            for name in COPIED {
                if let Some(value) = payload.get(name) {
                    content.insert(name.into(), value.clone());
                }
            }
            let scope = content.get("subagentRunId").filter(|s| truthy(s)).map_or_else(|| "root".to_owned(), py_str);
            if let Some(group) = response_groups.get(&scope) {
                if !content.contains_key("responseGroup") {
                    content.insert("responseGroup".into(), group.clone().into());
                }
            }
            if event_type == T::TextMessageEnd && content.get("role").and_then(Value::as_str) == Some("assistant") {
                if let Some(sources) = memory_sources.get(&scope) {
                    content.insert("memory_sources".into(), serde_json::to_value(sources).unwrap_or(Value::Null));
                }
            }
            if event_type == T::ToolCallEnd {
                content.insert("arguments_complete".into(), true.into());
            }
            let accumulated = match event_type {
                T::TextMessageContent | T::ReasoningMessageContent => Some("text"),
                T::ToolCallArgs => Some("arguments"),
                _ => None,
            };
            if let Some(field) = accumulated {
                let delta = payload.get("delta").and_then(Value::as_str).unwrap_or_default();
                append_bounded(content, field, delta, full, counts, key);
            }
            if event_type == T::ReasoningEncryptedValue {
                content.insert("encrypted_value".into(), payload.get("encryptedValue").cloned().unwrap_or(Value::Null));
            }
            if event_type == T::ToolCallResult {
                match payload.get("content") {
                    Some(Value::Array(parts)) => {
                        let keep = full || json_size(&payload["content"]) <= MAX_FIELD_CHARS;
                        let kept = if keep { parts.clone() } else { Vec::new() };
                        let empty = kept.is_empty();
                        content.insert("result_parts".into(), Value::Array(kept));
                        if empty {
                            content.insert("truncated".into(), true.into());
                        }
                    }
                    other => {
                        counts.remove(&(key, "result"));
                        let text = other.map_or_else(String::new, py_str);
                        set_bounded(content, "result", text, full);
                    }
                }
            }
        };
        Some(self.store.put(key, kind, state, None, position, at, false, update))
    }

    fn observation(&mut self, payload: &Object) -> Option<ItemRef> {
        if let Some(delta) = streamed_arguments(payload) {
            if self.full_content {
                return None;
            }
            return Some(self.arguments(payload, delta));
        }
        let assembled = match self.assembler.accept(payload) {
            Accepted::Pending => return None,
            Accepted::Passed(event) => std::borrow::Cow::Borrowed(event),
            Accepted::Assembled(event) => std::borrow::Cow::Owned(event),
        };
        let name = assembled.get("name").map(py_str).unwrap_or_else(|| "None".into());
        let value = assembled.get("value").cloned().unwrap_or(Value::Null);
        let input_event = value.get("event").and_then(Value::as_object);
        let lifecycle = input_event.and_then(|e| e.get("payload")).and_then(Value::as_object);
        let scope_key =
            || assembled.get("subagentRunId").filter(|s| truthy(s)).map_or_else(|| "root".to_owned(), py_str);
        if name == names::HARNESS_LIFECYCLE
            && lifecycle.and_then(|l| l.get("type")).and_then(Value::as_str) == Some("model_request_started")
        {
            let group = format!("{}:{}:{}", self.run_id, self.attempt, self.sequence);
            self.response_groups.insert(scope_key(), group);
        }
        if name == names::HARNESS_CONTEXT {
            if let Some(sources) = lifecycle.and_then(memory_sources) {
                let scope = scope_key();
                let kinds: HashSet<&str> = sources.iter().map(|s| s.kind.as_str()).collect();
                let mut merged: Vec<MemorySource> = self
                    .memory_sources
                    .get(&scope)
                    .map(|existing| existing.iter().filter(|s| !kinds.contains(s.kind.as_str())).cloned().collect())
                    .unwrap_or_default();
                merged.extend(sources);
                self.memory_sources.insert(scope, merged);
            }
        }
        let position = self.stream_id();
        let media_input = name == names::INPUT_MEDIA
            && input_event
                .and_then(|e| e.get("source"))
                .and_then(Value::as_str)
                .is_some_and(|s| s == "user" || s == "steering");
        let authored = name == names::INPUT_USER || name == names::INPUT_STEERING || media_input;
        if let (true, Some(input)) = (authored, input_event.filter(|e| e.contains_key("message_id"))) {
            let message_id = input.get("message_id").map(py_str).unwrap_or_default();
            let mut content = Object::new();
            content.insert("messageId".into(), message_id.clone().into());
            content.insert("role".into(), "user".into());
            if let Some(scope) = assembled.get("subagentRunId") {
                content.insert("subagentRunId".into(), scope.clone());
            }
            if let Some(metadata) = assembled.get("metadata") {
                content.insert("metadata".into(), metadata.clone());
            }
            if media_input {
                content.insert("input_media".into(), input.get("content").cloned().unwrap_or(Value::Null));
            } else {
                let text = input.get("content").map(py_str).unwrap_or_else(|| "None".into());
                set_bounded(&mut content, "text", text, self.full_content || self.retain_content);
            }
            content.insert("input_source".into(), input.get("source").cloned().unwrap_or_else(|| "user".into()));
            content.insert("input_group".into(), input.get("input_id").cloned().unwrap_or(Value::Null));
            let key = self.scoped(ItemKind::TextMessage, assembled.get("subagentRunId"), &message_id);
            let at = self.occurred(&assembled);
            let kind = ItemKind::TextMessage;
            return Some(self.store.put(
                key,
                kind,
                ItemState::Completed,
                Some(content),
                position,
                at,
                false,
                |_, _, _| {},
            ));
        }
        if let Some(input) = input_event {
            if let Some(reference) = self.tool_observation(&assembled, &name, input) {
                return Some(reference);
            }
        }
        if self.full_content && matches!(name.as_str(), names::PART_START | names::PART_END | names::PART_DELTA) {
            return None;
        }
        let summary = matches!(name.as_str(), names::HANDOFF_SUMMARY | names::COMPACTION_SUMMARY);
        let keep_whole = self.retain_content || (self.full_content && summary);
        let value =
            if !keep_whole && json_size(&value) > MAX_OBSERVATION_BYTES { json!({"omitted": true}) } else { value };
        let key = item_id(&self.run_id, ItemKind::Observation, &format!("{}:{}", self.attempt, self.sequence));
        let mut content = Object::new();
        content.insert("name".into(), name.into());
        content.insert("value".into(), value);
        if let Some(metadata) = assembled.get("metadata") {
            content.insert("metadata".into(), metadata.clone());
        }
        if let Some(scope) = assembled.get("subagentRunId") {
            content.insert("subagentRunId".into(), scope.clone());
        }
        let at = self.occurred(payload);
        let kind = ItemKind::Observation;
        Some(self.store.put(key, kind, ItemState::Completed, Some(content), position, at, true, |_, _, _| {}))
    }

    fn tool_observation(&mut self, event: &Object, name: &str, value: &Object) -> Option<ItemRef> {
        let part = value.get("part").and_then(Value::as_object);
        let part_kind = |source: &Object| source.get("part_kind").and_then(Value::as_str).map(str::to_owned);
        let native = part
            .and_then(|p| p.get("part_kind"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == "builtin-tool-call" || kind == "builtin-tool-return");
        let result = matches!(name, names::FUNCTION_TOOL_RESULT | names::OUTPUT_TOOL_RESULT);
        let supplement = matches!(
            name,
            names::FILESYSTEM_EDIT_APPLIED
                | names::TOOL_IMAGES
                | names::HARNESS_UI_TOOL_IMAGES
                | names::HARNESS_UI_MCP_APPS
                | names::MCP_APPS
        );
        let source = if native || result {
            part?
        } else if supplement {
            value
        } else {
            return None;
        };
        let call_id = source.get("tool_call_id")?.as_str()?.to_owned();
        let scope = event.get("subagentRunId");
        let provider = native
            .then(|| source.get("provider_name").filter(|p| truthy(p)).map_or_else(|| "provider".to_owned(), py_str));
        let identity = match &provider {
            Some(provider) => format!("native:{provider}:{call_id}"),
            None => call_id.clone(),
        };
        let key = self.scoped(ItemKind::ToolCall, scope, &identity);
        let full = self.full_content || self.retain_content;
        let scope_key = scope.filter(|s| truthy(s)).map_or_else(|| "root".to_owned(), py_str);
        let group = self.response_groups.get(&scope_key).cloned();
        // A result settles the call; arguments and supplements keep its state.
        let is_arguments = !supplement && part_kind(source).as_deref() == Some("builtin-tool-call");
        let state = if supplement || is_arguments {
            self.store.state(&key).unwrap_or(ItemState::InProgress)
        } else {
            let outcome = source.get("outcome").and_then(Value::as_str);
            let retry = part_kind(source).as_deref() == Some("retry-prompt") || outcome == Some("retried");
            if retry || matches!(outcome, Some("failed" | "denied" | "interrupted")) {
                ItemState::Failed
            } else {
                ItemState::Completed
            }
        };
        let at = self.occurred(event);
        let position = self.stream_id();
        let update = |content: &mut Object, counts: &mut CharCounts, key: usize| {
            content.insert("toolCallId".into(), call_id.clone().into());
            if let Some(Value::String(scope)) = scope {
                content.insert("subagentRunId".into(), scope.clone().into());
            }
            if let Some(provider) = &provider {
                content.insert("provider".into(), provider.clone().into());
            }
            if let Some(tool_name) = source.get("tool_name") {
                content.insert("toolCallName".into(), tool_name.clone());
            }
            if let Some(group) = group {
                content.entry("responseGroup").or_insert(group.into());
            }
            if supplement {
                if name == names::FILESYSTEM_EDIT_APPLIED {
                    let mut edit = Object::new();
                    for field in ["file_path", "before", "after"] {
                        edit.insert(field.into(), source.get(field).cloned().unwrap_or(Value::Null));
                    }
                    content.insert("applied_edit".into(), Value::Object(edit));
                } else if name == names::TOOL_IMAGES || name == names::HARNESS_UI_TOOL_IMAGES {
                    content.insert("tool_images".into(), source.get("images").cloned().unwrap_or_else(|| json!([])));
                    let unavailable = source.get("unavailable").cloned().unwrap_or(false.into());
                    content.insert("tool_image_unavailable".into(), unavailable);
                } else {
                    content.insert("mcp_apps".into(), source.get("apps").cloned().unwrap_or_else(|| json!([])));
                }
            } else if is_arguments {
                let arguments = match source.get("args") {
                    Some(Value::String(text)) => text.clone(),
                    other => PyDumps::TEXT.dumps(other.unwrap_or(&Value::Null)),
                };
                counts.remove(&(key, "arguments"));
                set_bounded(content, "arguments", arguments, full);
                content.insert("arguments_complete".into(), true.into());
            } else {
                let result_value = source.get("content").cloned().unwrap_or(Value::Null);
                if full || json_size(&result_value) <= MAX_FIELD_CHARS {
                    content.insert("value".into(), result_value);
                } else {
                    content.insert("truncated".into(), true.into());
                }
                let outcome = source.get("outcome").cloned().unwrap_or(Value::Null);
                let retry = part_kind(source).as_deref() == Some("retry-prompt") || outcome.as_str() == Some("retried");
                content.insert("outcome".into(), outcome);
                content.insert("retry".into(), retry.into());
            }
        };
        Some(self.store.put(key, ItemKind::ToolCall, state, None, position, at, false, update))
    }

    /// Consecutive argument deltas of one tool-call part fold into one observation: the first delta's, with the
    /// argument text of all of them and the first one's time.
    fn arguments(&mut self, payload: &Object, delta: &Object) -> ItemRef {
        let text = delta.get("args_delta").and_then(Value::as_str).unwrap_or_default();
        let value = payload.get("value");
        let mut source = value.and_then(|v| v.get("event")).cloned().unwrap_or(Value::Null);
        let mut stripped = delta.clone();
        stripped.insert("args_delta".into(), Value::Null);
        if let Value::Object(source) = &mut source {
            source.insert("delta".into(), Value::Object(stripped));
        }
        let stream = json!([
            names::PART_DELTA,
            value.and_then(|v| v.get("thread_id")).cloned().unwrap_or(Value::Null),
            value.and_then(|v| v.get("run_id")).cloned().unwrap_or(Value::Null),
            source
        ]);
        let position = self.stream_id();
        let sequence = self.sequence;
        let continued = match self.arguments.as_mut() {
            Some(held) if held.stream == stream && held.sequence + 1 == sequence => {
                if let Some(event) = held.event.as_mut() {
                    append_args_delta(event, text);
                    held.size = held.size.saturating_add((escaped_str_size(text) - 2) as u64);
                }
                true
            }
            _ => false,
        };
        if !continued {
            self.seal_arguments();
            self.arguments_open = true;
            let key = item_id(&self.run_id, ItemKind::Observation, &format!("{}:{sequence}", self.attempt));
            let size = json_size(value.unwrap_or(&Value::Null)) as u64;
            let at = self.occurred(payload);
            self.arguments =
                Some(StreamedArguments { stream, key, at, sequence: 0, event: Some(payload.clone()), size });
        }
        let retain = self.retain_content;
        // Set above when the stream did not continue; the default is never built.
        let held = self.arguments.get_or_insert_with(|| StreamedArguments {
            stream: Value::Null,
            key: String::new(),
            at: UtcTime::EPOCH,
            sequence: 0,
            event: None,
            size: 0,
        });
        held.sequence = sequence;
        if !retain && held.size > MAX_OBSERVATION_BYTES as u64 {
            held.event = None;
        }
        let (key, at) = (held.key.clone(), held.at);
        let whole = held.event.is_some();
        let subagent = payload.get("subagentRunId").cloned();
        let kind = ItemKind::Observation;
        if continued && self.store.contains(&key) {
            // The item's copy grows by the delta alone, like the held event.
            let omitted = !whole;
            let update = move |content: &mut Object, _: &mut CharCounts, _: usize| {
                if omitted {
                    content.insert("value".into(), json!({"omitted": true}));
                } else if let Some(Value::Object(value)) = content.get_mut("value") {
                    append_value_args_delta(value, text);
                }
                if let Some(subagent) = subagent {
                    content.insert("subagentRunId".into(), subagent);
                }
            };
            return self.store.put(key, kind, ItemState::Completed, None, position, at, false, update);
        }
        let held_value = held.event.as_ref().and_then(|event| event.get("value")).cloned();
        let mut content = Object::new();
        content.insert("name".into(), names::PART_DELTA.into());
        content.insert("value".into(), held_value.unwrap_or_else(|| json!({"omitted": true})));
        if let Some(subagent) = subagent {
            content.insert("subagentRunId".into(), subagent);
        }
        self.store.put(key, kind, ItemState::Completed, Some(content), position, at, false, |_, _, _| {})
    }

    fn fail_tool_call(
        &mut self,
        call_id: &str,
        message: String,
        at: UtcTime,
        subagent: Option<&str>,
    ) -> Option<ItemRef> {
        let key = match subagent {
            Some(scope) => item_id(&self.run_id, ItemKind::ToolCall, &format!("{scope}:{call_id}")),
            None => item_id(&self.run_id, ItemKind::ToolCall, call_id),
        };
        self.store.state(&key)?;
        let position = self.stream_id();
        let failure = json!({"code": "tool_failed", "message": message});
        Some(self.store.put(
            key,
            ItemKind::ToolCall,
            ItemState::Failed,
            None,
            position,
            at,
            false,
            move |content, _, _| {
                content.insert("failure".into(), failure);
            },
        ))
    }
}

/// The fold's own observer: no journal, the host's processor, then the payload bounds unless content is kept.
fn observer_with(processor: Option<AguiEventProcessor>, bounded: bool) -> HarnessAguiStreamObserver {
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    if let Some(processor) = processor {
        observer = observer.with_processor(processor);
    }
    if bounded {
        observer = observer.with_finish(bound_event);
    }
    observer
}

/// `content[field] = value[:MAX]` (and `truncated` when cut), or the whole value for a full-content fold.
fn set_bounded(content: &mut Object, field: &str, mut value: String, full: bool) {
    if !full && value.len() > MAX_FIELD_CHARS && char_len(&value) > MAX_FIELD_CHARS {
        value.truncate(char_boundary(&value, MAX_FIELD_CHARS));
        content.insert(field.into(), value.into());
        content.insert("truncated".into(), true.into());
        return;
    }
    content.insert(field.into(), value.into());
}

/// Append a delta to an accumulated field with the same result as bounding the concatenation, in time
/// proportional to the delta (the field's code point count is cached per item).
fn append_bounded(
    content: &mut Object,
    field: &'static str,
    delta: &str,
    full: bool,
    counts: &mut CharCounts,
    key: usize,
) {
    let slot = content.entry(field).or_insert_with(|| Value::String(String::new()));
    if !slot.is_string() {
        *slot = Value::String(py_str(slot));
    }
    let Value::String(text) = slot else { return };
    if full {
        text.push_str(delta);
        return;
    }
    if text.len() + delta.len() <= MAX_FIELD_CHARS {
        // Bytes bound code points: nothing can be cut.
        text.push_str(delta);
        return;
    }
    let count_key = (key, field);
    let current = *counts.entry(count_key).or_insert_with(|| char_len(text));
    let delta_chars = char_len(delta);
    let total = current + delta_chars;
    if total <= MAX_FIELD_CHARS {
        text.push_str(delta);
        counts.insert(count_key, total);
        return;
    }
    let room = MAX_FIELD_CHARS.saturating_sub(current);
    text.push_str(&delta[..char_boundary(delta, room)]);
    counts.insert(count_key, current + room.min(delta_chars));
    content.insert("truncated".into(), true.into());
}

fn append_args_delta(event: &mut Object, text: &str) {
    if let Some(Value::Object(value)) = event.get_mut("value") {
        append_value_args_delta(value, text);
    }
}

fn append_value_args_delta(value: &mut Object, text: &str) {
    let slot = value.get_mut("event").and_then(|e| e.get_mut("delta")).and_then(|d| d.get_mut("args_delta"));
    if let Some(Value::String(args)) = slot {
        args.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_seed_round_trip() {
        let prefix = vec![
            event(
                json!({"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000}),
            ),
            event(
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001}),
            ),
        ];
        let suffix = vec![
            event(
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002}),
            ),
            event(json!({"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003})),
        ];
        let mut fold = DisplayFold::new("run-example");
        fold.fold(prefix.clone(), None).unwrap();
        let checkpoint = fold.export().to_json();
        let mut restored = DisplayFold::restore(DisplaySnapshot::from_json(&checkpoint).unwrap(), false, None).unwrap();
        restored.fold(suffix.clone(), None).unwrap();
        let mut uninterrupted = DisplayFold::new("run-example");
        uninterrupted.fold(prefix.into_iter().chain(suffix).collect(), None).unwrap();
        assert_eq!(restored.export().to_json(), uninterrupted.export().to_json());
        let item = restored.items().next().unwrap();
        assert_eq!(item.content["text"], "Hello world");
        assert_eq!(item.state, ItemState::Completed);
    }

    #[test]
    fn bounded_append_equals_bounding_the_concatenation() {
        let mut counts = CharCounts::default();
        let mut content = Object::new();
        let piece = "é".repeat(100_000);
        for _ in 0..3 {
            append_bounded(&mut content, "text", &piece, false, &mut counts, 0);
        }
        let text = content["text"].as_str().unwrap();
        assert_eq!(char_len(text), MAX_FIELD_CHARS);
        assert_eq!(content["truncated"], true);
    }

    #[test]
    fn malformed_events_reject_the_whole_batch() {
        let mut fold = DisplayFold::new("r");
        let error = fold
            .fold(
                vec![
                    event(json!({"type": "TEXT_MESSAGE_START", "messageId": "m"})),
                    event(json!({"type": "TOOL_CALL_ARGS"})),
                ],
                None,
            )
            .unwrap_err();
        assert!(error.to_string().contains("events.1.toolCallId"), "{error}");
        assert_eq!(fold.position().sequence, 0);
        assert_eq!(fold.items().count(), 0);
    }

    #[test]
    fn item_ids_are_stable_hashes() {
        assert_eq!(item_id("run-agui", ItemKind::Observation, "0:1"), "itm_a1810a2cc7d273f62ff5f1b8e94b22dd");
    }

    #[test]
    fn python_str_of_values() {
        assert_eq!(
            py_str(&json!({"a": [1, 2.5, null, true], "b": "it's"})),
            r#"{'a': [1, 2.5, None, True], 'b': "it's"}"#
        );
    }
}
