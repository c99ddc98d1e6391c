//! The Harness source model: one public source item per JSON line.
//!
//! A source item is either a native event or the terminal Run result, each behind the same correlation
//! (`thread_id`, `run_id`, `sequence`, `occurred_at`). Decoding checks the shape of every field a conversion rule
//! reads and classifies the event; the event object itself is kept as parsed, key order intact, so events of
//! kinds the protocol does not map are carried through unchanged.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::{InputError, InputKind};
use crate::fields::event_kind as kinds;
use crate::fields::source_key::{self, CAPABILITY_IDS, CUSTOM_IDS, INPUT_SOURCES};
use crate::json::{finite_numbers, long_integer, may_hold_long_integer, py_u64, Object, PY_INT_MAX_DIGITS};
use crate::lax::lax_bool;
use crate::names;
use crate::time::SourceTime;
use crate::{PartIndex, SourceSequence};

/// One public Harness source item: a native event or the terminal Run result.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceItem {
    /// The Harness Thread this item belongs to.
    pub thread_id: String,
    /// The Harness Run this item belongs to (a root Run or one of its inline children).
    pub run_id: String,
    /// The item's position in its Run's stream.
    pub sequence: SourceSequence,
    /// When the item occurred, with the offset it was written with.
    pub occurred_at: SourceTime,
    /// The event or the terminal result.
    pub body: SourceBody,
}

/// What a source item carries.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceBody {
    /// A native observation.
    Event(SourceEvent),
    /// The terminal Run result.
    Result(RunResult),
}

/// The classification of a native event: which conversion rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A Harness extension event `{schema_version, kind, payload}`.
    Extension,
    /// A text input observation (`a13n.input.text`).
    InputText,
    /// A payload-free media input observation (`a13n.input.media`).
    InputMedia,
    /// Delivery of enqueued messages.
    EnqueuedMessages,
    /// Deferred tool calls resolved by a handler.
    DeferredToolResults,
    /// Any other capability event.
    Capability,
    /// A model response part started.
    PartStart,
    /// A delta to an open model response part.
    PartDelta,
    /// A model response part ended.
    PartEnd,
    /// A function tool's result.
    FunctionToolResult,
    /// An output tool's result.
    OutputToolResult,
    /// An event kind without a dedicated rule: carried through as a `CUSTOM` event.
    Other,
}

/// A native event: its classification and its original JSON object.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceEvent {
    kind: EventKind,
    raw: Object,
}

impl SourceEvent {
    /// Which conversion rule applies.
    pub fn kind(&self) -> EventKind {
        self.kind
    }

    /// The event exactly as decoded (key order preserved).
    pub fn raw(&self) -> &Object {
        &self.raw
    }

    /// Decode and validate one event object.
    pub fn from_object(raw: Object) -> Result<SourceEvent, InputError> {
        let mut raw = crate::source_model::normalize_event(raw)?;
        let kind = classify(&raw)?;
        if kind == EventKind::Extension {
            bound_payload(&mut raw)?;
        }
        Ok(SourceEvent { kind, raw })
    }

    pub(crate) fn str_field(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    pub(crate) fn index(&self) -> PartIndex {
        self.raw.get("index").and_then(PartIndex::of_value).unwrap_or(PartIndex::from(0))
    }

    pub(crate) fn object(&self, key: &str) -> Option<&Object> {
        self.raw.get(key).and_then(Value::as_object)
    }
}

/// The terminal Run result.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// `completed`, `suspended`, `failed` or `cancelled`.
    pub status: RunStatus,
    raw: Object,
}

/// How a Run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// The Run produced its output.
    Completed,
    /// The Run waits for approvals or external tool results.
    Suspended,
    /// The Run failed.
    Failed,
    /// The Run was cancelled.
    Cancelled,
}

impl RunStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Suspended => "suspended",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// Token counts of a Run.
#[derive(Clone, Debug, PartialEq)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from a provider cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to a provider cache.
    pub cache_write_tokens: u64,
    /// `details.reasoning_tokens` when it is an integer (a boolean is one, as in Python).
    pub reasoning_tokens: Option<u64>,
}

impl RunResult {
    /// The result object exactly as decoded.
    pub fn raw(&self) -> &Object {
        &self.raw
    }

    /// The Run's token usage.
    pub fn usage(&self) -> Usage {
        let usage = self.raw.get("usage").and_then(Value::as_object);
        let count = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
        // An integer as Python's `isinstance(value, int)` finds one: a boolean is one (1 or 0).
        let reasoning =
            usage.and_then(|u| u.get("details")).and_then(|d| d.get("reasoning_tokens")).and_then(|v| match v {
                Value::Bool(flag) => Some(u64::from(*flag)),
                // As Python reads it: `-0` is `0`.
                Value::Number(_) => py_u64(v),
                _ => None,
            });
        Usage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cache_read_tokens: count("cache_read_tokens"),
            cache_write_tokens: count("cache_write_tokens"),
            reasoning_tokens: reasoning,
        }
    }

    pub(crate) fn field(&self, key: &str) -> Option<&Value> {
        self.raw.get(key)
    }
}

impl SourceItem {
    /// Decode one source line (the conformance wire form), of at most [`MAX_SOURCE_LINE_BYTES`].
    pub fn from_json(line: &str) -> Result<SourceItem, InputError> {
        SourceItem::from_json_limited(line, MAX_SOURCE_LINE_BYTES)
    }

    /// The `thread_id` and `run_id` of a line in the layout every writer uses (`{"thread_id":…,"run_id":…,
    /// "sequence":…,"occurred_at":…,"event":…}`), read from its head with the event skipped, not decoded: `None`
    /// for any other layout. A host checks a line's identity with it before folding; the line may still be
    /// refused when it is decoded.
    ///
    /// ```
    /// use a13n_stream_protocol::source::SourceItem;
    ///
    /// let line = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{}}"#;
    /// let (thread, run) = SourceItem::written_identity(line).unwrap();
    /// assert_eq!((&*thread, &*run), ("t", "r"));
    /// assert!(SourceItem::written_identity(r#"{"run_id":"r","thread_id":"t"}"#).is_none());
    /// // A key after the event could repeat the head's: only decoding tells.
    /// assert!(SourceItem::written_identity(&line.replace("{}}", r#"{},"run_id":"x"}"#)).is_none());
    /// ```
    pub fn written_identity(line: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        crate::lane_line::written_identity(line)
    }

    /// Decode one source line of at most `max_bytes`. JSON nesting is bounded at 128 levels.
    pub fn from_json_limited(line: &str, max_bytes: usize) -> Result<SourceItem, InputError> {
        if line.len() > max_bytes {
            return Err(InputError::of(
                InputKind::TooLarge,
                "",
                format!("the line is {} bytes; the limit is {max_bytes}", line.len()),
            ));
        }
        let value: Value = serde_json::from_str(line).map_err(json_error)?;
        // Only a line with a run of more digits than the limit can hold an integer past it.
        if may_hold_long_integer(line) {
            if let Some((path, digits)) = long_integer(&value) {
                let message = format!(
                    "Exceeds the limit ({PY_INT_MAX_DIGITS} digits) for integer string conversion: value has {digits} \
                     digits"
                );
                return Err(InputError::of(InputKind::Invalid, path, message));
            }
        }
        SourceItem::from_value(value)
    }

    /// Decode one source item from a parsed JSON value.
    pub fn from_value(value: Value) -> Result<SourceItem, InputError> {
        let Value::Object(mut object) = value else {
            return Err(InputError::wrong_type(
                "",
                format!("expected a source item object, found {}", type_name(&value)),
            ));
        };
        let thread_id = take_id(&mut object, "thread_id")?;
        let run_id = take_id(&mut object, "run_id")?;
        let sequence = match object.get("sequence") {
            Some(value) => SourceSequence::of_value(value).ok_or_else(|| {
                InputError::wrong_type("sequence", format!("expected an integer of 0 or more, found {value}"))
            })?,
            None => return Err(InputError::missing("sequence")),
        };
        let occurred_at = match object.get("occurred_at") {
            Some(Value::String(text)) => {
                let time = SourceTime::parse(text).map_err(|e| InputError::new("occurred_at", e))?;
                if let Some(why) = time.timestamp_refused() {
                    return Err(InputError::new("occurred_at", format!("{why}: {text:?} has no timestamp")));
                }
                time
            }
            Some(other) => {
                return Err(InputError::wrong_type(
                    "occurred_at",
                    format!("expected an ISO 8601 string, found {other}"),
                ))
            }
            None => return Err(InputError::missing("occurred_at")),
        };
        let body = match (object.shift_remove("event"), object.shift_remove("result")) {
            (Some(Value::Object(event)), None) => {
                SourceBody::Event(SourceEvent::from_object(event).map_err(|e| e.nested("event"))?)
            }
            (None, Some(Value::Object(result))) => {
                SourceBody::Result(decode_result(result).map_err(|e| e.nested("result"))?)
            }
            (Some(_), Some(_)) => {
                return Err(InputError::new("", "a source item has either `event` or `result`, not both"))
            }
            (Some(other), None) => {
                return Err(InputError::wrong_type("event", format!("expected an object, found {}", type_name(&other))))
            }
            (None, Some(other)) => {
                return Err(InputError::wrong_type(
                    "result",
                    format!("expected an object, found {}", type_name(&other)),
                ))
            }
            (None, None) => return Err(InputError::of(InputKind::Missing, "", "missing field `event` (or `result`)")),
        };
        Ok(SourceItem { thread_id, run_id, sequence, occurred_at, body })
    }

    /// The canonical JSON form of this item (the journal wire form).
    pub fn to_value(&self) -> Value {
        match &self.body {
            SourceBody::Event(event) => self.identity().source_value(Value::Object(event.raw.clone())),
            SourceBody::Result(result) => self.identity().value_with("result", Value::Object(result.raw.clone())),
        }
    }

    /// The journal line of this item: its canonical JSON as Python's `json.dumps(item, ensure_ascii=False,
    /// separators=(",", ":"))` writes it (floats as Python's `repr`), the form the corpus and the host store.
    pub fn to_line(&self) -> String {
        crate::json::PyDumps::TEXT.dumps(&self.to_value())
    }

    /// The native event, when this item is not the terminal result.
    pub fn event(&self) -> Option<&SourceEvent> {
        match &self.body {
            SourceBody::Event(event) => Some(event),
            SourceBody::Result(_) => None,
        }
    }

    /// The item's identity and time.
    pub(crate) fn identity(&self) -> ItemIdentity<'_> {
        ItemIdentity {
            thread_id: &self.thread_id,
            run_id: &self.run_id,
            sequence: &self.sequence,
            occurred_at: self.occurred_at,
        }
    }
}

/// What an input event's conversion reads (`InputTextEvent`, `InputMediaEvent`), from a decoded item or from a
/// line the input lane scanned.
pub(crate) struct Input<'a> {
    /// The item the input is.
    pub(crate) item: ItemIdentity<'a>,
    /// A media input (`a13n.input.media`) rather than text.
    pub(crate) media: bool,
    /// The event's `input_id`, `source` and `content`, as given.
    pub(crate) input_id: Value,
    pub(crate) source: &'a str,
    pub(crate) content: Value,
    /// The event's metadata (`None` when absent: the model's defaults).
    pub(crate) metadata: Option<&'a Object>,
}

/// A source item's identity and time, borrowed: what a conversion reads of an item besides its event, whether
/// the item was decoded or a lane scanned its line.
#[derive(Clone, Copy)]
pub(crate) struct ItemIdentity<'a> {
    /// As [`SourceItem`]'s fields of the same names.
    pub(crate) thread_id: &'a str,
    pub(crate) run_id: &'a str,
    pub(crate) sequence: &'a SourceSequence,
    pub(crate) occurred_at: SourceTime,
}

impl ItemIdentity<'_> {
    /// `{thread_id, run_id, sequence, occurred_at, event}`: the value of a carried-through `CUSTOM` event.
    pub(crate) fn source_value(&self, event: Value) -> Value {
        self.value_with("event", event)
    }

    /// The identity and time, then `body` under `key`.
    fn value_with(&self, key: &str, body: Value) -> Value {
        let mut object = Object::with_capacity(5);
        object.insert("thread_id".into(), self.thread_id.into());
        object.insert("run_id".into(), self.run_id.into());
        object.insert("sequence".into(), self.sequence.to_value());
        object.insert("occurred_at".into(), self.occurred_at.isoformat().into());
        object.insert(key.into(), body);
        Value::Object(object)
    }
}

/// The largest source line [`SourceItem::from_json`] accepts (64 MiB).
pub const MAX_SOURCE_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A JSON syntax error as an input error, naming the column (and the nesting bound when that was hit).
pub(crate) fn json_error(error: serde_json::Error) -> InputError {
    let message = error.to_string();
    if message.starts_with("recursion limit exceeded") {
        let message = format!("JSON nested deeper than 128 levels (column {})", error.column());
        return InputError::decoding("", message, error);
    }
    // serde_json names a surrogate escape without its pair after what it read next ("unexpected end of hex
    // escape" when no escape follows): said as what it is.
    if message.starts_with("unexpected end of hex escape") || message.starts_with("lone leading surrogate") {
        let message = format!(
            "invalid JSON: a lone surrogate escape (\\uD800-\\uDBFF must be followed by a \\uDC00-\\uDFFF escape; \
             the text must be Unicode) at column {}",
            error.column()
        );
        return InputError::decoding("", message, error);
    }
    // A line is one line of JSON: serde_json's "at line 1 column 5" read beside a file's line number as a second
    // line number, so only the column is named.
    let place = format!(" at line {} column {}", error.line(), error.column());
    let message = match message.strip_suffix(&place) {
        Some(what) if error.line() == 1 => format!("{what} at column {}", error.column()),
        _ => message,
    };
    InputError::decoding("", format!("invalid JSON: {message}"), error)
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn take_id(object: &mut Object, key: &str) -> Result<String, InputError> {
    match object.shift_remove(key) {
        Some(Value::String(text)) if !crate::pystr::is_blank(&text) => Ok(text),
        Some(Value::String(_)) => Err(InputError::new(key, "must not be empty")),
        Some(other) => Err(InputError::wrong_type(key, format!("expected a string, found {}", type_name(&other)))),
        None => Err(InputError::missing(key)),
    }
}

/// What an input event's model refuses of the fields besides its id, content and envelope: a `source` not one of
/// `INPUT_SOURCES`, or metadata that is not an object or that [`metadata_error`] refuses.
fn check_input(check: &Check<'_>) -> Result<(), InputError> {
    let source = check.string(source_key::SOURCE)?;
    if !INPUT_SOURCES.contains(&source) {
        let message = format!("expected one of {}, found {}", INPUT_SOURCES.join(", "), Value::from(source));
        return Err(check.err(InputKind::Invalid, source_key::SOURCE, message));
    }
    if check.object.contains_key(source_key::METADATA) {
        let mut path = String::new();
        let metadata = check.nested(source_key::METADATA, &mut path)?;
        if let Some((key, message)) = metadata_error(metadata.object) {
            return Err(metadata.err(InputKind::WrongType, key, message));
        }
    }
    Ok(())
}

/// Why an input's metadata fails its model (`ContentMetadata`, which keeps other keys as given): `display` or
/// `media` that Pydantic cannot read as a boolean, or a `source_id` that is not a string or null. The key, and
/// what it holds.
pub(crate) fn metadata_error(metadata: &Object) -> Option<(&'static str, String)> {
    for key in [source_key::DISPLAY, source_key::MEDIA] {
        match metadata.get(key) {
            Some(value) if lax_bool(value).is_none() => {
                return Some((key, format!("expected a boolean, found {value}")));
            }
            _ => {}
        }
    }
    match metadata.get(source_key::SOURCE_ID) {
        None | Some(Value::Null | Value::String(_)) => None,
        Some(other) => Some((source_key::SOURCE_ID, format!("expected a string or null, found {}", type_name(other)))),
    }
}

/// Shape checks for the fields the conversion rules read.
struct Check<'a> {
    object: &'a Object,
    path: &'a str,
}

impl<'a> Check<'a> {
    fn err(&self, kind: InputKind, key: &str, message: String) -> InputError {
        let path = if self.path.is_empty() { key.to_owned() } else { format!("{}.{key}", self.path) };
        InputError::of(kind, path, message)
    }

    fn require(&self, key: &str) -> Result<&'a Value, InputError> {
        self.object.get(key).ok_or_else(|| self.err(InputKind::Missing, key, "missing field".into()))
    }

    fn string(&self, key: &str) -> Result<&'a str, InputError> {
        match self.require(key)? {
            Value::String(text) => Ok(text),
            other => Err(self.err(InputKind::WrongType, key, format!("expected a string, found {}", type_name(other)))),
        }
    }

    /// Absent, null or a string.
    fn opt_string(&self, key: &str) -> Result<Option<&'a str>, InputError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.err(
                InputKind::WrongType,
                key,
                format!("expected a string or null, found {}", type_name(other)),
            )),
        }
    }

    /// A part's index: an integer of any size, as Python's `int`.
    fn index(&self, key: &str) -> Result<PartIndex, InputError> {
        let value = self.require(key)?;
        PartIndex::of_value(value)
            .ok_or_else(|| self.err(InputKind::WrongType, key, format!("expected an integer, found {value}")))
    }

    fn object(&self, key: &str) -> Result<&'a Object, InputError> {
        match self.require(key)? {
            Value::Object(object) => Ok(object),
            other => {
                Err(self.err(InputKind::WrongType, key, format!("expected an object, found {}", type_name(other))))
            }
        }
    }

    fn opt_object(&self, key: &str) -> Result<Option<&'a Object>, InputError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object)),
            Some(other) => Err(self.err(
                InputKind::WrongType,
                key,
                format!("expected an object or null, found {}", type_name(other)),
            )),
        }
    }

    fn nested(&self, key: &str, path: &'a mut String) -> Result<Check<'a>, InputError> {
        let object = self.object(key)?;
        *path = if self.path.is_empty() { key.to_owned() } else { format!("{}.{key}", self.path) };
        Ok(Check { object, path })
    }
}

/// Whether an extension event's `schema_version` is of the length the Harness's model allows: 1 to 32 characters.
pub(crate) fn schema_version_fits(version: &str) -> bool {
    (1..=32).contains(&version.chars().count())
}

/// An extension event's payload as the Harness's model holds it: redacted, and at most 64 KiB of compact JSON
/// once redacted (see `redact.rs`).
fn bound_payload(raw: &mut Object) -> Result<(), InputError> {
    let Some(payload) = raw.get_mut("payload") else { return Ok(()) };
    crate::redact::redact(payload);
    let size = crate::json::dumps_utf8_size(payload);
    if size > crate::redact::MAX_PAYLOAD_BYTES {
        let most = crate::redact::MAX_PAYLOAD_BYTES;
        let message = format!("Harness extension payload is too large ({size} bytes; at most {most})");
        return Err(InputError::of(InputKind::Invalid, "payload", message));
    }
    Ok(())
}

fn classify(raw: &Object) -> Result<EventKind, InputError> {
    let check = Check { object: raw, path: "" };
    let Some(event_kind) = raw.get("event_kind") else {
        // A Harness extension event.
        check.string("kind")?;
        // Its payload is validated as JSON, which holds no infinite number: `1E400` is refused.
        if !finite_numbers(check.require("payload")?) {
            return Err(check.err(InputKind::Invalid, "payload", "JSON numbers must be finite".into()));
        }
        match raw.get("schema_version") {
            Some(Value::String(version)) if !schema_version_fits(version) => {
                let message = "expected 1 to 32 characters".into();
                return Err(check.err(InputKind::Invalid, "schema_version", message));
            }
            Some(version) if !version.is_string() => {
                return Err(check.err(InputKind::WrongType, "schema_version", "expected a string".into()));
            }
            _ => {}
        }
        return Ok(EventKind::Extension);
    };
    let Some(event_kind) = event_kind.as_str() else {
        return Err(check.err(
            InputKind::WrongType,
            "event_kind",
            format!("expected a string, found {}", type_name(event_kind)),
        ));
    };
    Ok(match event_kind {
        kinds::CAPABILITY => {
            // An event without a kind has one by now: `normalize_event` laid it out as the unknown envelope.
            let kind = check.string(source_key::KIND)?;
            // Every capability class holds these as its envelope.
            for key in CAPABILITY_IDS {
                check.opt_string(key)?;
            }
            match kind {
                names::INPUT_TEXT | names::INPUT_MEDIA => {
                    check.string("input_id")?;
                    check_input(&check)?;
                    if kind == names::INPUT_TEXT {
                        check.string("content")?;
                        EventKind::InputText
                    } else {
                        check.object("content")?;
                        EventKind::InputMedia
                    }
                }
                _ => EventKind::Capability,
            }
        }
        kinds::CUSTOM => {
            // Pydantic AI's `CustomEvent` refuses an empty name when it is built (`UserError`).
            if check.string(source_key::NAME)?.is_empty() {
                let message = "a custom event requires a `name`".into();
                return Err(check.err(InputKind::Invalid, source_key::NAME, message));
            }
            for key in CUSTOM_IDS {
                check.opt_string(key)?;
            }
            EventKind::Other
        }
        kinds::ENQUEUED_MESSAGES => {
            check.string("enqueue_id")?;
            EventKind::EnqueuedMessages
        }
        kinds::DEFERRED_TOOL_RESULTS => {
            let mut path = String::new();
            let results = check.nested("results", &mut path)?;
            results.object("calls")?;
            results.object("approvals")?;
            EventKind::DeferredToolResults
        }
        kinds::PART_START | kinds::PART_END => {
            check.index("index")?;
            let mut path = String::new();
            let part = check.nested("part", &mut path)?;
            check_part(&part)?;
            if event_kind == kinds::PART_START {
                EventKind::PartStart
            } else {
                EventKind::PartEnd
            }
        }
        kinds::PART_DELTA => {
            check.index("index")?;
            let mut path = String::new();
            let delta = check.nested("delta", &mut path)?;
            match delta.string("part_delta_kind")? {
                "text" => {
                    delta.string("content_delta")?;
                }
                "thinking" => {
                    delta.opt_string("content_delta")?;
                    delta.opt_string("signature_delta")?;
                }
                "tool_call" => {
                    delta.opt_string("tool_name_delta")?;
                    delta.opt_string("tool_call_id")?;
                }
                _ => {}
            }
            EventKind::PartDelta
        }
        kinds::FUNCTION_TOOL_RESULT | kinds::OUTPUT_TOOL_RESULT => {
            let mut path = String::new();
            let part = check.nested("part", &mut path)?;
            match part.string("part_kind")? {
                "tool-return" => {
                    part.string("tool_call_id")?;
                    part.require("content")?;
                    // Any value (the model's field is `Any`): the conversion reads it as Python reads it.
                    if let Some(outcome) = part.object.get("outcome") {
                        if !outcome.is_string() {
                            return Err(part.err(InputKind::WrongType, "outcome", "expected a string".into()));
                        }
                    }
                }
                "retry-prompt" => {
                    part.string("tool_call_id")?;
                    part.require("content")?;
                }
                other => {
                    return Err(part.err(
                        InputKind::Invalid,
                        "part_kind",
                        format!("expected `tool-return` or `retry-prompt`, found {other:?}"),
                    ))
                }
            }
            if event_kind == kinds::FUNCTION_TOOL_RESULT {
                EventKind::FunctionToolResult
            } else {
                EventKind::OutputToolResult
            }
        }
        // Pydantic AI's event union is tagged by `event_kind`: a tag none of its events has is refused.
        other if crate::source_model::event_models(Some(other)).is_empty() => {
            let message = format!("{other:?} is no event kind of Pydantic AI's `AgentStreamEvent`");
            return Err(check.err(InputKind::Invalid, source_key::EVENT_KIND, message));
        }
        _ => EventKind::Other,
    })
}

fn check_part(part: &Check<'_>) -> Result<(), InputError> {
    match part.string("part_kind")? {
        "text" => {
            part.string("content")?;
            part.opt_string("id")?;
        }
        "thinking" => {
            part.string("content")?;
            part.opt_string("signature")?;
        }
        "tool-call" | "builtin-tool-call" => {
            part.string("tool_name")?;
            part.string("tool_call_id")?;
            // The model's `str | dict[str, Any] | None`: Pydantic refuses a list, a number or a boolean.
            if let Some(args @ (Value::Array(_) | Value::Number(_) | Value::Bool(_))) = part.object.get("args") {
                let message = format!("expected a string, an object or null, found {}", type_name(args));
                return Err(part.err(InputKind::WrongType, "args", message));
            }
        }
        _ => {}
    }
    Ok(())
}

fn decode_result(raw: Object) -> Result<RunResult, InputError> {
    let raw = crate::source_model::normalize_result(raw)?;
    let check = Check { object: &raw, path: "" };
    let status = match check.string("status")? {
        "completed" => RunStatus::Completed,
        "suspended" => RunStatus::Suspended,
        "failed" => RunStatus::Failed,
        "cancelled" => RunStatus::Cancelled,
        other => {
            return Err(check.err(
                InputKind::Invalid,
                "status",
                format!("expected one of completed, suspended, failed, cancelled; found {other:?}"),
            ))
        }
    };
    let mut path = String::new();
    let usage = check.nested("usage", &mut path)?;
    for key in ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"] {
        match usage.require(key)? {
            value if py_u64(value).is_some() => {}
            other => {
                return Err(usage.err(
                    InputKind::WrongType,
                    key,
                    format!("expected an integer from 0 to 2**64 - 1, found {other}"),
                ))
            }
        }
    }
    usage.opt_object("details")?;
    match status {
        RunStatus::Failed => {
            let mut path = String::new();
            let failure = check.nested("failure", &mut path)?;
            failure.string("message")?;
            failure.opt_string("code")?;
        }
        RunStatus::Suspended => {
            let mut path = String::new();
            let deferred = check.nested("deferred", &mut path)?;
            deferred.opt_object("metadata")?;
            for list in ["approvals", "calls"] {
                let entries = match deferred.object.get(list) {
                    None => continue,
                    Some(Value::Array(entries)) => entries,
                    Some(other) => {
                        return Err(deferred.err(
                            InputKind::WrongType,
                            list,
                            format!("expected an array, found {}", type_name(other)),
                        ))
                    }
                };
                for (index, entry) in entries.iter().enumerate() {
                    let entry_path = format!("deferred.{list}.{index}");
                    let Value::Object(entry) = entry else {
                        return Err(InputError::wrong_type(entry_path, "expected an object"));
                    };
                    let entry = Check { object: entry, path: &entry_path };
                    let mut model_path = String::new();
                    entry.nested("model_call", &mut model_path)?.string("tool_call_id")?;
                    let mut target_path = String::new();
                    let target = entry.nested("target_call", &mut target_path)?;
                    target.string("tool_call_id")?;
                    target.string("tool_name")?;
                }
            }
        }
        RunStatus::Completed | RunStatus::Cancelled => {}
    }
    Ok(RunResult { status, raw })
}

#[cfg(test)]
mod tests {
    /// Found by a sweep against the reference: lines the Harness's models refuse as they load were taken. An
    /// extension payload larger than 64 KiB once redacted, a schema version of no or more than 32 characters, an
    /// identity Python's `strip()` empties (it strips `\x1c` to `\x1f`).
    #[test]
    fn lines_the_harness_models_refuse_are_refused() {
        let line = |thread: &str, event: String| {
            format!(
                r#"{{"thread_id":"{thread}","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:00Z","event":{event}}}"#
            )
        };
        let payload =
            |version: &str, text: &str| format!(r#"{{"schema_version":"{version}","kind":"state","payload":{text}}}"#);
        let big = format!(r#"{{"type":"s","kept":"{}"}}"#, "k".repeat(70_000));
        let redacted_small = format!(r#"{{"type":"s","secret":"{}"}}"#, "k".repeat(70_000));
        // `{"k":"…"}` of exactly 65,536 bytes: 8 bytes around 32,764 two-byte characters.
        let at_limit = format!(r#"{{"k":"{}"}}"#, "é".repeat((65_536 - 8) / 2));
        for (line, refused) in [
            (line("t", payload("1", &big)), true),
            (line("t", payload("1", &redacted_small)), false),
            (line("t", payload("1", &at_limit)), false),
            (line("t", payload("1", &at_limit.replacen('é', "éé", 1))), true),
            (line("t", payload("", "{}")), true),
            (line("t", payload(&"\u{1f600}".repeat(32), "{}")), false),
            (line("t", payload(&"\u{1f600}".repeat(33), "{}")), true),
            (line("\\u001f", payload("1", "{}")), true),
            (line("\\u00a0 ", payload("1", "{}")), true),
            (line("\\u200b", payload("1", "{}")), false),
        ] {
            assert_eq!(super::SourceItem::from_json(&line).is_err(), refused, "{}", &line[..line.len().min(160)]);
        }
    }

    /// Regression: an input's model (`InputTextEvent`, its `ContentMetadata`) refuses a source outside its
    /// `Literal`, ids of other types, metadata `null`, and `display`, `media` or `source_id` it cannot read; these
    /// were carried through. What Pydantic's lax mode reads as a boolean stays accepted, and converts to it.
    #[test]
    fn inputs_their_model_refuses_are_refused() {
        let input = |source: &str, capability_id: &str, metadata: &str| {
            format!(
                r#"{{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:00Z","event":{{"kind":"a13n.input.text","capability_id":{capability_id},"tool_call_id":null,"tool_name":null,"event_kind":"capability","input_id":"i","source":"{source}","content":"hi","metadata":{metadata}}}}}"#
            )
        };
        let plain = r#"{"display":true,"source_id":null,"media":false}"#;
        for (line, refused) in [
            (input("user", "null", plain), false),
            (input("background_process", r#""a13n.input""#, plain), false),
            (input("bogus", "null", plain), true),
            (input("User", "null", plain), true),
            (input("user", "3", plain), true),
            (input("user", "null", "null"), true),
            (input("user", "null", r#"{"display":null}"#), true),
            (input("user", "null", r#"{"display":"x"}"#), true),
            (input("user", "null", r#"{"media":2}"#), true),
            (input("user", "null", r#"{"source_id":5}"#), true),
            (input("user", "null", r#"{"display":"YES","media":1.0,"source_id":"s","extra":[null]}"#), false),
            (input("user", "null", r#"{"display":0,"media":-0}"#), false),
            (input("user", "null", "{}"), false),
        ] {
            assert_eq!(super::SourceItem::from_json(&line).is_err(), refused, "{line}");
        }
        let error = super::SourceItem::from_json(&input("user", "null", r#"{"source_id":5}"#)).unwrap_err();
        assert_eq!(error.to_string(), "event.metadata.source_id: expected a string or null, found a number");
        // The booleans convert as Pydantic reads them.
        let started = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#;
        let mut observer = crate::HarnessAguiStreamObserver::new();
        observer.observe(&super::SourceItem::from_json(started).unwrap()).unwrap();
        let lax = input("user", "null", r#"{"display":"YES","source_id":"s","media":0.0,"extra":[null]}"#);
        let events = observer.observe(&super::SourceItem::from_json(&lax).unwrap()).unwrap();
        let metadata = events[0].to_value()["metadata"].to_string();
        assert_eq!(metadata, r#"{"display":true,"source_id":"s","media":false,"extra":[null]}"#);
    }

    /// The sources an input's conversion admits are the `Literal` of its models, as the generated table has them.
    #[test]
    fn input_sources_are_the_models_literal() {
        use crate::source_model::{event_models, model};
        let capabilities = event_models(Some(kinds::CAPABILITY)).iter().map(|&index| model(index));
        let inputs: Vec<_> = capabilities.filter(|m| matches!(m.name, "InputTextEvent" | "InputMediaEvent")).collect();
        assert_eq!(inputs.len(), 2, "both input models");
        for input in inputs {
            let field = input.fields.iter().find(|field| field.key == source_key::SOURCE).expect("a source");
            assert_eq!(field.literal, INPUT_SOURCES, "{}", input.name);
        }
    }

    /// Regression: a surrogate escape without its pair was reported as "unexpected end of hex escape".
    #[test]
    fn a_lone_surrogate_escape_is_named_as_such() {
        for text in [r#""\ud800""#, r#""\ud800\u0041""#, r#""\udc00""#] {
            let line = format!(
                r#"{{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{{"kind":"lifecycle","payload":{{"type":"run_started","x":{text}}}}}}}"#
            );
            let error = super::SourceItem::from_json(&line).unwrap_err().to_string();
            assert!(error.contains("a lone surrogate escape") && error.contains("column"), "{text}: {error}");
        }
    }

    use super::*;

    /// A JSON error said "at line 1 column 5", read beside the CLI's own "line 3:" as a second line number.
    #[test]
    fn a_json_error_names_its_column_alone() {
        let error = SourceItem::from_json(r#"{"a":"#).unwrap_err().to_string();
        assert!(error.ends_with("at column 5") && !error.contains("line 1"), "{error}");
        let error = SourceItem::from_json(r#"{"a": "x\ud800"}"#).unwrap_err().to_string();
        assert!(error.contains("lone surrogate") && !error.contains("line 1"), "{error}");
        // A text of several lines (not a journal line) keeps its line.
        let error = SourceItem::from_json("{\n\"a\":").unwrap_err().to_string();
        assert!(error.contains("at line 2 column"), "{error}");
    }

    #[test]
    fn errors_name_the_field() {
        let error = SourceItem::from_json(
            r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-01-01T00:00:00+00:00",
               "event":{"index":0,"part":{"part_kind":"text","content":5},"event_kind":"part_start"}}"#,
        )
        .unwrap_err();
        assert_eq!(error.path(), "event.part.content");
        assert!(error.to_string().contains("expected a string"), "{error}");
        let error = SourceItem::from_json(r#"{"thread_id":" ","run_id":"r"}"#).unwrap_err();
        assert_eq!(error.path(), "thread_id");
        let error = SourceItem::from_json("{not json").unwrap_err();
        assert!(error.to_string().starts_with("invalid JSON"), "{error}");
    }

    /// A tool call's `args` is `str | dict | None` in its model, which refuses a list or a number as the line loads;
    /// they were converted (found by helper-61's sweep).
    #[test]
    fn tool_call_args_of_another_type_are_refused() {
        let line = |args: &str| {
            format!(
                r#"{{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-01-01T00:00:00+00:00","event":{{"index":0,"part":{{"tool_name":"f","args":{args},"tool_call_id":"c","part_kind":"tool-call"}},"event_kind":"part_end"}}}}"#
            )
        };
        for args in ["[1]", "5", "true"] {
            let error = SourceItem::from_json(&line(args)).unwrap_err();
            assert_eq!((error.kind(), error.path()), (InputKind::WrongType, "event.part.args"), "{args}");
            assert!(error.to_string().contains("expected a string, an object or null"), "{error}");
        }
        for args in [r#""{}""#, r#"{"a":[1]}"#, "null"] {
            assert!(SourceItem::from_json(&line(args)).is_ok(), "{args}");
        }
    }

    /// Found by a differential sweep: `-0` is Python's `0`, but a sequence or a usage count spelled so was refused
    /// as "expected an integer from 0 to 2**64 - 1".
    #[test]
    fn a_negative_zero_count_is_zero() {
        let line = r#"{"thread_id":"t","run_id":"r","sequence":-0,"occurred_at":"2026-11-29T12:00:00Z","result":{"status":"completed","usage":{"input_tokens":-0,"output_tokens":1,"cache_read_tokens":-0,"cache_write_tokens":0,"details":{}}}}"#;
        let item = SourceItem::from_json(line).unwrap();
        assert_eq!(item.sequence, 0);
        let text = crate::json::PyDumps::TEXT.dumps(&item.to_value());
        assert!(text.contains(r#""input_tokens":0,"output_tokens":1,"cache_read_tokens":0,"#), "{text}");
        for refused in ["-1", "1.0"] {
            let line = line.replace(r#""sequence":-0"#, &format!(r#""sequence":{refused}"#));
            assert_eq!(SourceItem::from_json(&line).unwrap_err().path(), "sequence", "{refused}");
        }
    }

    /// Found by helper-61's sweep: Python's `int` has no size limit, and the reference carries a sequence past
    /// 64 bits into the observations (here refused as "expected an integer from 0 to 2**64 - 1").
    #[test]
    fn a_sequence_past_64_bits_is_carried_as_written() {
        let large = "18446744073709551616";
        let line = format!(
            r#"{{"thread_id":"t","run_id":"r","sequence":{large},"occurred_at":"2026-11-29T12:00:00+00:00","event":{{"schema_version":"1","kind":"state","payload":{{}}}}}}"#
        );
        let item = SourceItem::from_json(&line).unwrap();
        assert_eq!((item.sequence.to_string().as_str(), item.sequence.as_u64()), (large, None));
        assert_eq!(item.to_line(), line);
    }

    #[test]
    fn round_trips_the_wire_form() {
        let line = r#"{"thread_id":"t","run_id":"r","sequence":3,"occurred_at":"2026-11-29T12:00:00.5+00:00","event":{"schema_version":"1","kind":"state","payload":{"b":1,"a":2}}}"#;
        let item = SourceItem::from_json(line).unwrap();
        assert_eq!(item.event().unwrap().kind(), EventKind::Extension);
        let text = serde_json::to_string(&item.to_value()).unwrap();
        assert!(text.contains(r#""occurred_at":"2026-11-29T12:00:00.500000+00:00""#), "{text}");
        assert!(text.contains(r#"{"schema_version":"1","kind":"state","payload":{"b":1,"a":2}}"#), "{text}");
    }

    /// The reference reads objects: an event's dump follows its model, whatever the line's layout. Keys in
    /// another order, omitted defaults and unknown keys give the dump's layout; an extension event, whose model
    /// refuses unknown keys, is refused with one; numbers are kept as Python keeps them; and `occurred_at` is
    /// read in every layout `datetime.fromisoformat` reads.
    #[test]
    fn an_event_takes_its_models_layout_whatever_the_lines() {
        let line = |time: &str, event: &str| {
            format!(r#"{{"event":{event},"occurred_at":"{time}","sequence":1,"run_id":"r","thread_id":"t"}}"#)
        };
        let event =
            |line: &str| serde_json::to_string(&SourceItem::from_json(line).unwrap().to_value()["event"]).unwrap();
        let spelled = line(
            "20261129T120001Z",
            r#"{"event_kind":"part_start","part":{"part_kind":"tool-call","args":"","x":[1],"tool_call_id":"c1","tool_name":"f"},"index":0}"#,
        );
        assert_eq!(
            event(&spelled),
            r#"{"index":0,"part":{"tool_name":"f","args":"","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"},"previous_part_kind":null,"event_kind":"part_start"}"#
        );
        let item = SourceItem::from_json(&spelled).unwrap();
        assert_eq!(item.occurred_at.isoformat(), "2026-11-29T12:00:01+00:00");
        let extension = line(
            "2026-11-29T12:00:01Z",
            r#"{"payload":{"big":18446744073709551616,"zero":-0,"f":1E2},"kind":"usage"}"#,
        );
        assert_eq!(
            crate::json::PyDumps::TEXT.dumps(&SourceItem::from_json(&extension).unwrap().to_value()["event"]),
            r#"{"schema_version":"1","kind":"usage","payload":{"big":18446744073709551616,"zero":0,"f":100.0}}"#
        );
        // Found by a differential sweep: the Harness refuses a payload holding a number no float holds; it was
        // carried through as `null`.
        for payload in [r#"{"x":1E400}"#, r#"{"x":[1,{"y":-1e999}]}"#] {
            let refused = line("2026-11-29T12:00:01Z", &format!(r#"{{"kind":"usage","payload":{payload}}}"#));
            let error = SourceItem::from_json(&refused).unwrap_err();
            assert_eq!((error.kind(), error.path()), (InputKind::Invalid, "event.payload"), "{error}");
            assert!(error.to_string().contains("JSON numbers must be finite"), "{error}");
        }
        let kept = line("2026-11-29T12:00:01Z", r#"{"kind":"usage","payload":{"x":1e308}}"#);
        assert!(SourceItem::from_json(&kept).is_ok());
        let refused = line("2026-11-29T12:00:01Z", r#"{"kind":"usage","payload":{},"z":1}"#);
        let error = SourceItem::from_json(&refused).unwrap_err();
        assert_eq!((error.kind(), error.path()), (InputKind::Shape, "event.z"));
        for (written, iso) in [
            ("2026-W48-7T10:00+05", "2026-11-29T10:00:00+05:00"),
            ("20261129T180539.742828+0000", "2026-11-29T18:05:39.742828+00:00"),
            ("2026-11-29 18:05:39,5-0130", "2026-11-29T18:05:39.500000-01:30"),
            ("2026-11-29", "2026-11-29T00:00:00"),
        ] {
            assert_eq!(SourceTime::parse(written).unwrap().isoformat(), iso, "{written}");
        }
        for refused in ["2026-11-29T24:00:00", "2026-1129", "20261129T25"] {
            assert!(SourceTime::parse(refused).is_err(), "{refused}");
        }
        // Pydantic AI's part discriminator picks a typed part by its `tool_kind` only: a plain tool call named as
        // the tool search's tool stays a plain tool call.
        let search = line(
            "2026-11-29T12:00:01Z",
            r#"{"index":0,"part":{"tool_name":"search_tools","args":"{}","tool_call_id":"c","part_kind":"tool-call"},"event_kind":"part_start"}"#,
        );
        assert!(event(&search).contains(r#""tool_call_id":"c","tool_kind":null,"#), "{}", event(&search));
        // A result's failure is dumped by its model: declared fields, then the computed `details` (default `{}`).
        let failed = r#"{"thread_id":"t","run_id":"r","sequence":2,"occurred_at":"2026-11-29T12:00:02Z","result":{"failure":{"retry_hint":"new_run","message":"m","code":"c"},"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"details":{}},"status":"failed"}}"#;
        let SourceBody::Result(result) = SourceItem::from_json(failed).unwrap().body else { panic!("a result") };
        assert_eq!(
            serde_json::to_string(&result.raw()["failure"]).unwrap(),
            r#"{"code":"c","message":"m","retry_hint":"new_run","details":{}}"#
        );
    }
}
