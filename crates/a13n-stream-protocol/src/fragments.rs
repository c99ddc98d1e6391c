//! Lossless transport fragmentation of large `CUSTOM` events.
//!
//! A `CUSTOM` event whose JSON exceeds 48 KiB is sent as ordered `a13n.stream.fragment` frames of 4096 code
//! points of its JSON text each. [`CustomEventAssembler`] puts ordered frames back together within a byte budget
//! and a bound on concurrently pending events; a lost or out-of-order frame sets [`CustomEventAssembler::gap`]
//! and never yields a partial event.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agui::{CustomEvent, Event};
use crate::error::InputError;
use crate::json::{char_boundary, Object};
use crate::names;

/// The `CUSTOM` name of a fragment frame.
pub const FRAGMENT_EVENT_NAME: &str = names::STREAM_FRAGMENT;
/// Events up to this many bytes of JSON travel whole.
pub(crate) const WHOLE_EVENT_BYTES: usize = 48 * 1024;
/// Code points of JSON text per frame.
const FRAME_CHARS: usize = 4096;
/// Default byte budget of an assembler.
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Default number of events an assembler reassembles at once.
pub const DEFAULT_MAX_PENDING: u64 = 8;

/// Split a `CUSTOM` event into fragment frames when its JSON exceeds the transport limit.
///
/// `identity` names the event's frames (the observer uses `thread:run:sequence:index`).
pub fn fragment_custom_event(event: CustomEvent, identity: &str) -> Vec<Event> {
    fragment_lazily(event, || identity.to_owned())
}

/// [`fragment_custom_event`], naming the frames only when the event is split. The exact encoded size is computed
/// without encoding; only events within 1 KiB of the limit are encoded (to be measured exactly and split).
pub(crate) fn fragment_lazily(event: CustomEvent, identity: impl FnOnce() -> String) -> Vec<Event> {
    if custom_size(&event) + 1024 < WHOLE_EVENT_BYTES {
        return vec![Event::Custom(event)];
    }
    let event = Event::Custom(event);
    let encoded = event.to_json();
    match event {
        Event::Custom(event) => split_encoded(event, &encoded, &identity()),
        other => vec![other],
    }
}

/// The length of a `CUSTOM` event's compact JSON: `{"type":"CUSTOM",…,"name":…,"value":…}`.
fn custom_size(event: &CustomEvent) -> usize {
    use crate::json::{pydantic_object_size, pydantic_size, utf8_str_size};
    let mut size =
        r#"{"type":"CUSTOM","name":,"value":}"#.len() + utf8_str_size(&event.name) + pydantic_size(&event.value);
    if let Some(timestamp) = event.timestamp {
        size += r#","timestamp":"#.len() + timestamp.to_string().len();
    }
    if let Some(raw) = &event.raw_event {
        size += r#","rawEvent":"#.len() + pydantic_size(raw);
    }
    if let Some(metadata) = &event.metadata {
        size += r#","metadata":"#.len() + pydantic_object_size(metadata);
    }
    if let Some(run) = &event.subagent_run_id {
        size += r#","subagentRunId":"#.len() + utf8_str_size(run);
    }
    size
}

/// Split an event whose Pydantic JSON text is `encoded`.
fn split_encoded(event: CustomEvent, encoded: &str, identity: &str) -> Vec<Event> {
    if encoded.len() <= WHOLE_EVENT_BYTES {
        return vec![Event::Custom(event)];
    }
    let mut chunks = Vec::new();
    let mut rest = encoded;
    while !rest.is_empty() {
        let end = char_boundary(rest, FRAME_CHARS);
        chunks.push(&rest[..end]);
        rest = &rest[end..];
    }
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(index, data)| {
            let mut value = Object::with_capacity(4);
            value.insert("id".into(), identity.into());
            value.insert("index".into(), index.into());
            value.insert("count".into(), count.into());
            value.insert("data".into(), data.into());
            Event::Custom(CustomEvent {
                timestamp: event.timestamp,
                subagent_run_id: event.subagent_run_id.clone(),
                name: FRAGMENT_EVENT_NAME.into(),
                value: Value::Object(value),
                ..CustomEvent::default()
            })
        })
        .collect()
}

/// One event being reassembled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assembly {
    /// How many frames the event has.
    pub count: u64,
    /// The frames received so far, in order.
    #[serde(default)]
    pub parts: Vec<String>,
    /// UTF-8 bytes received so far.
    #[serde(default)]
    pub size: u64,
}

/// An assembler's state: incomplete events only, never completed ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragmentState {
    /// Events being reassembled, oldest first.
    #[serde(default)]
    pub pending: IndexMap<String, Assembly>,
    /// Whether a frame was lost since the assembler started.
    #[serde(default)]
    pub gap: bool,
    /// The byte budget over all pending events.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// How many events may be pending at once.
    #[serde(default = "default_max_pending")]
    pub max_pending: u64,
}

fn default_max_bytes() -> u64 {
    DEFAULT_MAX_BYTES
}

fn default_max_pending() -> u64 {
    DEFAULT_MAX_PENDING
}

impl Default for FragmentState {
    fn default() -> Self {
        FragmentState {
            pending: IndexMap::new(),
            gap: false,
            max_bytes: DEFAULT_MAX_BYTES,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

/// Reassembles fragment frames into whole `CUSTOM` events, within bounds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CustomEventAssembler {
    state: FragmentState,
    size: u64,
}

/// What [`CustomEventAssembler::accept`] made of one event.
#[derive(Clone, Debug, PartialEq)]
pub enum Accepted<'a> {
    /// Not a fragment frame: the event itself.
    Passed(&'a Object),
    /// The last frame of an event: the reassembled event.
    Assembled(Object),
    /// A frame was consumed (or rejected, setting the gap flag); nothing to deliver yet.
    Pending,
}

impl CustomEventAssembler {
    /// An assembler with a byte budget and a bound on pending events (both at least 1).
    pub fn new(max_bytes: u64, max_pending: u64) -> Result<CustomEventAssembler, InputError> {
        let mut assembler = CustomEventAssembler::default();
        assembler.set_bounds(max_bytes, max_pending)?;
        Ok(assembler)
    }

    /// Whether a frame was lost: a caller may show an observation-gap notice.
    pub fn gap(&self) -> bool {
        self.state.gap
    }

    /// Set or clear the gap flag (a caller that has shown its notice clears it).
    pub fn set_gap(&mut self, gap: bool) {
        self.state.gap = gap;
    }

    /// The byte budget over all pending events.
    pub fn max_bytes(&self) -> u64 {
        self.state.max_bytes
    }

    /// How many events may be pending at once.
    pub fn max_pending(&self) -> u64 {
        self.state.max_pending
    }

    /// Change the bounds (both at least 1); events already pending are held to them as later frames arrive, as
    /// [`CustomEventAssembler::accept`] holds any.
    pub fn set_bounds(&mut self, max_bytes: u64, max_pending: u64) -> Result<(), InputError> {
        if max_bytes < 1 || max_pending < 1 {
            return Err(InputError::new("", "custom event assembly bounds must be positive"));
        }
        self.state.max_bytes = max_bytes;
        self.state.max_pending = max_pending;
        Ok(())
    }

    /// A detached copy of the state.
    pub fn export(&self) -> FragmentState {
        self.state.clone()
    }

    /// Continue from an exported state.
    pub fn restore(state: FragmentState) -> Result<CustomEventAssembler, InputError> {
        if state.max_bytes < 1 || state.max_pending < 1 {
            return Err(InputError::new("fragments", "custom event assembly bounds must be positive"));
        }
        let size = state.pending.values().map(|assembly| assembly.size).sum();
        Ok(CustomEventAssembler { state, size })
    }

    fn discard(&mut self, identity: &str) {
        if let Some(assembly) = self.state.pending.shift_remove(identity) {
            self.size -= assembly.size;
        }
    }

    /// Take one `CUSTOM` event payload (as JSON): frames are held until their event is complete.
    pub fn accept<'a>(&mut self, payload: &'a Object) -> Accepted<'a> {
        if payload.get("name").and_then(Value::as_str) != Some(FRAGMENT_EVENT_NAME) {
            return Accepted::Passed(payload);
        }
        let Some(value) = payload.get("value").and_then(Value::as_object) else {
            self.state.gap = true;
            return Accepted::Pending;
        };
        let identity = value.get("id").and_then(Value::as_str);
        let index = value.get("index").and_then(python_int);
        let count = value.get("count").and_then(python_int);
        let data = value.get("data").and_then(Value::as_str);
        let (Some(identity), Some(index), Some(count), Some(data)) = (identity, index, count, data) else {
            self.state.gap = true;
            return Accepted::Pending;
        };
        if !(0 <= index && index < count) {
            self.state.gap = true;
            return Accepted::Pending;
        }
        if index == 0 {
            self.discard(identity);
            while self.state.pending.len() as u64 >= self.state.max_pending {
                if let Some(oldest) = self.state.pending.keys().next().cloned() {
                    self.discard(&oldest);
                }
                self.state.gap = true;
            }
            self.state
                .pending
                .insert(identity.to_owned(), Assembly { count: count as u64, parts: Vec::new(), size: 0 });
        }
        let size = data.len() as u64;
        let fits = self.size + size <= self.state.max_bytes;
        let complete = match self.state.pending.get_mut(identity) {
            Some(assembly) if fits && assembly.count == count as u64 && assembly.parts.len() as i128 == index => {
                assembly.parts.push(data.to_owned());
                assembly.size += size;
                assembly.parts.len() as u64 == assembly.count
            }
            _ => {
                self.discard(identity);
                self.state.gap = true;
                return Accepted::Pending;
            }
        };
        self.size += size;
        if !complete {
            return Accepted::Pending;
        }
        let assembly =
            self.state.pending.shift_remove(identity).unwrap_or(Assembly { count: 0, parts: vec![], size: 0 });
        self.size -= assembly.size;
        match reassemble(&assembly.parts.concat()) {
            Some(event) => Accepted::Assembled(event),
            None => {
                self.state.gap = true;
                Accepted::Pending
            }
        }
    }
}

/// Python's `isinstance(v, int)`: integers, and booleans as 0 and 1.
fn python_int(value: &Value) -> Option<i128> {
    match value {
        Value::Bool(flag) => Some(i128::from(*flag)),
        Value::Number(number) => number.as_i64().map(i128::from).or_else(|| number.as_u64().map(i128::from)),
        _ => None,
    }
}

/// Validate reassembled JSON as a `CUSTOM` event and write it in canonical field order.
fn reassemble(text: &str) -> Option<Object> {
    let Value::Object(mut object) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    match object.shift_remove("type") {
        None => {}
        Some(Value::String(kind)) if kind == "CUSTOM" => {}
        Some(_) => return None,
    }
    let name = match object.shift_remove("name") {
        Some(Value::String(name)) if name != FRAGMENT_EVENT_NAME => name,
        _ => return None,
    };
    let value = object.shift_remove("value")?;
    let mut out = Object::with_capacity(object.len() + 3);
    out.insert("type".into(), "CUSTOM".into());
    for (key, alias) in [
        ("timestamp", "timestamp"),
        ("rawEvent", "raw_event"),
        ("metadata", "metadata"),
        ("subagentRunId", "subagent_run_id"),
    ] {
        let field = object.shift_remove(key).or_else(|| object.shift_remove(alias));
        match (key, field) {
            (_, None | Some(Value::Null)) => {}
            ("timestamp", Some(Value::Number(number))) if number.as_i64().is_some_and(|t| t.abs() < (1 << 53)) => {
                out.insert(key.into(), Value::Number(number));
            }
            ("metadata", Some(Value::Object(metadata))) => {
                out.insert(key.into(), Value::Object(metadata));
            }
            ("subagentRunId", Some(Value::String(run))) => {
                out.insert(key.into(), Value::String(run));
            }
            ("rawEvent", Some(raw)) => {
                out.insert(key.into(), raw);
            }
            _ => return None,
        }
    }
    out.insert("name".into(), name.into());
    out.insert("value".into(), value);
    out.extend(object);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn big_event() -> CustomEvent {
        CustomEvent {
            timestamp: Some(7),
            name: "big".into(),
            value: json!({"text": "é".repeat(30_000)}),
            ..CustomEvent::default()
        }
    }

    #[test]
    fn custom_sizes_are_exact() {
        let mut metadata = Object::new();
        metadata.insert("display".into(), true.into());
        let event = CustomEvent {
            timestamp: Some(1_795_975_539_742),
            raw_event: Some(serde_json::json!({"x": 1.5})),
            metadata: Some(metadata),
            subagent_run_id: Some("run-é".into()),
            name: "a13n.harness.tool".into(),
            value: serde_json::json!({"text": "东京\n\"", "n": [1, 2e-7]}),
        };
        assert_eq!(custom_size(&event), Event::Custom(event.clone()).to_json().len());
        let bare = CustomEvent { name: "n".into(), ..CustomEvent::default() };
        assert_eq!(custom_size(&bare), Event::Custom(bare.clone()).to_json().len());
    }

    #[test]
    fn small_events_stay_whole_and_large_ones_round_trip() {
        let small = CustomEvent { name: "s".into(), ..CustomEvent::default() };
        assert_eq!(fragment_custom_event(small.clone(), "x"), vec![Event::Custom(small)]);
        let frames = fragment_custom_event(big_event(), "t:r:1:0");
        assert!(frames.len() > 1);
        let mut assembler = CustomEventAssembler::default();
        let mut out = None;
        for frame in &frames {
            let Value::Object(payload) = frame.to_value() else { unreachable!() };
            if let Accepted::Assembled(event) = assembler.accept(&payload) {
                out = Some(event);
            }
        }
        assert_eq!(Value::Object(out.unwrap()), Event::Custom(big_event()).to_value());
        assert!(!assembler.gap());
        assert_eq!(assembler.export(), FragmentState::default());
    }

    #[test]
    fn a_lost_frame_is_a_gap_never_a_partial_event() {
        let frames = fragment_custom_event(big_event(), "id");
        let mut assembler = CustomEventAssembler::default();
        for (index, frame) in frames.iter().enumerate() {
            if index == 1 {
                continue;
            }
            let Value::Object(payload) = frame.to_value() else { unreachable!() };
            assert_eq!(assembler.accept(&payload), Accepted::Pending);
        }
        assert!(assembler.gap());
        assert!(assembler.export().pending.is_empty());
    }

    #[test]
    fn pending_and_byte_bounds_hold() {
        let mut assembler = CustomEventAssembler::new(10, 2).unwrap();
        for id in ["a", "b", "c"] {
            let frame =
                json!({"name": FRAGMENT_EVENT_NAME, "value": {"id": id, "index": 0, "count": 2, "data": "abc"}});
            assembler.accept(frame.as_object().unwrap());
        }
        let state = assembler.export();
        assert_eq!(state.pending.keys().collect::<Vec<_>>(), ["b", "c"]);
        assert!(state.gap);
        let frame =
            json!({"name": FRAGMENT_EVENT_NAME, "value": {"id": "b", "index": 1, "count": 2, "data": "0123456789"}});
        assert_eq!(assembler.accept(frame.as_object().unwrap()), Accepted::Pending);
        assert_eq!(assembler.export().pending.len(), 1);
        assert!(CustomEventAssembler::new(0, 1).is_err());
    }
}
