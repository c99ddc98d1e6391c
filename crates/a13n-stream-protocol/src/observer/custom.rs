//! CUSTOM events: Pydantic AI and Harness events carried through, inputs, and fragmentation of large ones.

use serde_json::Value;

use super::{fragment_lazily, CustomEvent};
use crate::fields::source_key;
use crate::json::char_len;
use crate::json::Object;
use crate::lax::lax_bool;
use crate::source::{EventKind, Input};
use crate::{names, Event, SourceEvent, SourceItem};

pub(super) fn frame_custom(event: CustomEvent, item: &SourceItem, index: usize, out: &mut Vec<Event>) {
    let identity = || format!("{}:{}:{}:{index}", item.thread_id, item.run_id, item.sequence);
    out.extend(fragment_lazily(event, identity));
}

pub(super) fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for ch in camel.chars() {
        if ch.is_ascii_uppercase() {
            out.push('_');
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

// ------------------------------------------------------------------------------------------ conversion rules

pub(super) fn custom(item: &SourceItem, name: String, event: Value) -> Event {
    Event::Custom(CustomEvent {
        timestamp: Some(item.occurred_at.timestamp_ms()),
        name,
        value: item.identity().source_value(event),
        ..CustomEvent::default()
    })
}

pub(super) fn custom_pydantic_event(item: &SourceItem, raw: Object) -> Event {
    let kind = raw.get("event_kind").and_then(Value::as_str).unwrap_or_default();
    custom(item, format!("{}{kind}", names::PYDANTIC_AI_PREFIX), Value::Object(raw))
}

pub(super) fn custom_harness_event(item: &SourceItem, event: &SourceEvent) -> Event {
    let kind = event.str_field("kind").unwrap_or_default();
    let raw = event.raw();
    let mut name = format!("{}{kind}", names::HARNESS_PREFIX);
    if kind == "tool" {
        if let Some(tool) = raw.get("payload").and_then(Value::as_object).and_then(tool_extra_name) {
            name.push('.');
            name.push_str(tool);
        }
    }
    // The extension event's own dump: schema_version, kind, payload.
    let mut value = Object::with_capacity(3);
    value.insert("schema_version".into(), raw.get("schema_version").cloned().unwrap_or_else(|| "1".into()));
    value.insert("kind".into(), kind.into());
    value.insert("payload".into(), raw.get("payload").cloned().unwrap_or(Value::Null));
    custom(item, name, Value::Object(value))
}

/// The `name` of a valid Tool extra payload (`ToolExtraEventPayload`), which names the observation.
pub(super) fn tool_extra_name(payload: &Object) -> Option<&str> {
    const FIELDS: [&str; 6] = ["type", "tool_call_id", "tool_name", "tool_id", "name", "value"];
    if payload.keys().any(|key| !FIELDS.contains(&key.as_str())) || !payload.contains_key("value") {
        return None;
    }
    if payload.get("type").is_some_and(|t| t.as_str() != Some("tool_extra")) {
        return None;
    }
    for field in ["tool_call_id", "tool_name", "tool_id"] {
        let length = char_len(payload.get(field)?.as_str()?);
        if !(1..=256).contains(&length) {
            return None;
        }
    }
    let name = payload.get("name")?.as_str()?;
    valid_tool_event_name(name).then_some(name)
}

/// `^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$`, at most 256 characters.
pub(super) fn valid_tool_event_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 256 || !bytes[0].is_ascii_lowercase() {
        return false;
    }
    let mut after_separator = false;
    for &byte in &bytes[1..] {
        match byte {
            b'a'..=b'z' | b'0'..=b'9' => after_separator = false,
            b'.' | b'_' | b'-' if !after_separator => after_separator = true,
            _ => return false,
        }
    }
    !after_separator
}

pub(super) fn convert_input(item: &SourceItem, event: &SourceEvent) -> Event {
    input_event(Input {
        item: item.identity(),
        media: event.kind() == EventKind::InputMedia,
        input_id: event.raw().get("input_id").cloned().unwrap_or(Value::Null),
        source: event.str_field("source").unwrap_or_default(),
        content: event.raw().get("content").cloned().unwrap_or(Value::Null),
        metadata: event.object("metadata"),
    })
}

/// The `CUSTOM` event an input converts to: named by its source (media inputs by their kind), its metadata with
/// the model's defaults first, and a message id of its own.
pub(crate) fn input_event(input: Input<'_>) -> Event {
    let Input { item, media, input_id, source, content, metadata: raw_metadata } = input;
    // The model's booleans as Pydantic reads them (`1`, `"yes"`: true); decoding refused any it cannot read.
    let flag = |key: &str, default: bool| {
        let given = raw_metadata.and_then(|m| m.get(key));
        Value::Bool(given.and_then(lax_bool).unwrap_or(default))
    };
    let mut metadata = Object::new();
    metadata.insert(source_key::DISPLAY.into(), flag(source_key::DISPLAY, true));
    let source_id = raw_metadata.and_then(|m| m.get(source_key::SOURCE_ID)).cloned();
    metadata.insert(source_key::SOURCE_ID.into(), source_id.unwrap_or(Value::Null));
    metadata.insert(source_key::MEDIA.into(), flag(source_key::MEDIA, media));
    if let Some(raw_metadata) = raw_metadata {
        for (key, value) in raw_metadata {
            if !metadata.contains_key(key) {
                metadata.insert(key.clone(), value.clone());
            }
        }
    }
    let mut value = Object::with_capacity(5);
    value.insert("input_id".into(), input_id);
    value.insert("source".into(), source.into());
    value.insert("content".into(), content);
    value.insert("message_id".into(), format!("{}:input:{}", item.run_id, item.sequence).into());
    let role = if source_key::AUTHORED_SOURCES.contains(&source) { "user" } else { "system" };
    value.insert("role".into(), role.into());
    Event::Custom(CustomEvent {
        timestamp: Some(item.occurred_at.timestamp_ms()),
        metadata: Some(metadata),
        name: if media { names::INPUT_MEDIA.into() } else { format!("{}{source}", names::INPUT_PREFIX) },
        value: item.source_value(Value::Object(value)),
        ..CustomEvent::default()
    })
}
