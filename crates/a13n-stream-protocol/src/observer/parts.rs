//! Parts: text, thinking and tool-call parts opened, extended and closed, each with its cursor.

use serde_json::Value;

use super::{
    ObserverState, PartCursor, ReasoningEncryptedValueEvent, ReasoningMessageContentEvent, ReasoningMessageEndEvent,
    ReasoningMessageStartEvent, TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent, ToolCallArgsEvent,
    ToolCallEndEvent, ToolCallStartEvent,
};
use crate::json::Object;
use crate::json::PyDumps;
use crate::part_kind::PartKind;
use crate::{Event, ObservationKind, ObserveError, SourceEvent, SourceItem};

/// Settle open text and reasoning parts at an authoritative execution boundary.
pub(super) fn close_parts(item: &SourceItem, state: &mut ObserverState) -> Vec<Event> {
    let events = closing_events(Some(item.occurred_at.timestamp_ms()), state);
    state.parts.clear();
    events
}

/// The end events of a run's open text and reasoning parts (tool calls end silently), in opening order.
pub(super) fn closing_events(timestamp: Option<i64>, state: &ObserverState) -> Vec<Event> {
    state
        .parts
        .values()
        .filter_map(|cursor| match cursor.kind {
            PartKind::Text => Some(text_end(timestamp, cursor.part_id.clone())),
            PartKind::Reasoning => Some(reasoning_end(timestamp, cursor.part_id.clone())),
            PartKind::ToolCall => None,
        })
        .collect()
}

pub(super) fn part_id(run_id: &str, request_index: i64, part_index: i64, kind: &str) -> String {
    format!("{run_id}:request-{request_index}:part-{part_index}:{kind}")
}

pub(super) fn non_empty<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).filter(|text| !text.is_empty())
}

pub(super) fn text_start(timestamp: Option<i64>, message_id: &str) -> Event {
    Event::TextMessageStart(TextMessageStartEvent {
        timestamp,
        message_id: message_id.to_owned(),
        role: Some("assistant".into()),
        ..TextMessageStartEvent::default()
    })
}

pub(super) fn text_content(timestamp: Option<i64>, message_id: &str, delta: &str) -> Event {
    Event::TextMessageContent(TextMessageContentEvent {
        timestamp,
        message_id: message_id.to_owned(),
        delta: delta.to_owned(),
        ..TextMessageContentEvent::default()
    })
}

pub(super) fn reasoning_start(timestamp: Option<i64>, message_id: &str) -> Event {
    Event::ReasoningMessageStart(ReasoningMessageStartEvent {
        timestamp,
        message_id: message_id.to_owned(),
        role: "reasoning".into(),
        ..ReasoningMessageStartEvent::default()
    })
}

pub(super) fn reasoning_content(timestamp: Option<i64>, message_id: &str, delta: &str) -> Event {
    Event::ReasoningMessageContent(ReasoningMessageContentEvent {
        timestamp,
        message_id: message_id.to_owned(),
        delta: delta.to_owned(),
        ..ReasoningMessageContentEvent::default()
    })
}

pub(super) fn encrypted(timestamp: Option<i64>, message_id: &str, value: &str) -> Event {
    Event::ReasoningEncryptedValue(ReasoningEncryptedValueEvent {
        timestamp,
        subtype: "message".into(),
        entity_id: message_id.to_owned(),
        encrypted_value: value.to_owned(),
        ..ReasoningEncryptedValueEvent::default()
    })
}

pub(super) fn convert_part_start(item: &SourceItem, event: &SourceEvent, state: &mut ObserverState) -> Vec<Event> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let Some(part) = event.object("part") else {
        return Vec::new();
    };
    match part.get("part_kind").and_then(Value::as_str) {
        Some("text") => {
            let message_id = non_empty(part, "id")
                .map_or_else(|| part_id(&item.run_id, state.request_index, index, "text"), str::to_owned);
            let content = non_empty(part, "content");
            let mut events = vec![text_start(timestamp, &message_id)];
            if let Some(content) = content {
                events.push(text_content(timestamp, &message_id, content));
            }
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::Text,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content: content.is_some(),
                    emitted_signature: false,
                },
            );
            events
        }
        Some("thinking") => {
            // A provider reasoning item can hold several summary parts with one id: identity is positional.
            let message_id = part_id(&item.run_id, state.request_index, index, "reasoning");
            let content = non_empty(part, "content");
            let signature = non_empty(part, "signature");
            let mut events = vec![reasoning_start(timestamp, &message_id)];
            if let Some(content) = content {
                events.push(reasoning_content(timestamp, &message_id, content));
            }
            if let Some(signature) = signature {
                events.push(encrypted(timestamp, &message_id, signature));
            }
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::Reasoning,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content: content.is_some(),
                    emitted_signature: signature.is_some(),
                },
            );
            events
        }
        Some("tool-call" | "builtin-tool-call") => {
            // Both stream tool-call deltas; a native start replaces a previous request's cursor too, although
            // its own events stay CUSTOM.
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::ToolCall,
                    part_id: part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    tool_name: part.get("tool_name").and_then(Value::as_str).map(str::to_owned),
                    emitted_content: false,
                    emitted_signature: false,
                },
            );
            Vec::new()
        }
        _ => Vec::new(),
    }
}

pub(super) const KIND_CHANGED: &str = "Pydantic part kind changed before its end event";

/// The cursor of a text or reasoning part, opening one when the part had no start; `true` when opened.
pub(super) fn ensure_part_cursor<'a>(
    item: &SourceItem,
    state: &'a mut ObserverState,
    index: i64,
    kind: PartKind,
) -> Result<(&'a mut PartCursor, bool), ObserveError> {
    let request_index = state.request_index;
    let mut opened = false;
    let cursor = state.parts.entry(index).or_insert_with(|| {
        opened = true;
        let suffix = if kind == PartKind::Text { "text" } else { "reasoning" };
        PartCursor {
            kind,
            part_id: part_id(&item.run_id, request_index, index, suffix),
            tool_name: None,
            emitted_content: false,
            emitted_signature: false,
        }
    });
    if cursor.kind != kind {
        return Err(ObserveError::rejected(ObservationKind::PartKindChanged, KIND_CHANGED));
    }
    Ok((cursor, opened))
}

pub(super) fn convert_part_delta(
    item: &SourceItem,
    event: &SourceEvent,
    state: &mut ObserverState,
) -> Result<Vec<Event>, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let Some(delta) = event.object("delta") else {
        return Ok(Vec::new());
    };
    let mut events = Vec::new();
    match delta.get("part_delta_kind").and_then(Value::as_str) {
        Some("text") => {
            let Some(text) = non_empty(delta, "content_delta") else {
                return Ok(events);
            };
            let (cursor, opened) = ensure_part_cursor(item, state, index, PartKind::Text)?;
            if opened {
                events.push(text_start(timestamp, &cursor.part_id));
            }
            events.push(text_content(timestamp, &cursor.part_id, text));
            cursor.emitted_content = true;
        }
        Some("thinking") => {
            let (cursor, opened) = ensure_part_cursor(item, state, index, PartKind::Reasoning)?;
            if opened {
                events.push(reasoning_start(timestamp, &cursor.part_id));
            }
            if let Some(text) = non_empty(delta, "content_delta") {
                events.push(reasoning_content(timestamp, &cursor.part_id, text));
                cursor.emitted_content = true;
            }
            if let Some(signature) = non_empty(delta, "signature_delta") {
                events.push(encrypted(timestamp, &cursor.part_id, signature));
                cursor.emitted_signature = true;
            }
        }
        Some("tool_call") => {
            let call_id = non_empty(delta, "tool_call_id");
            let request_index = state.request_index;
            let cursor = state.parts.entry(index).or_insert_with(|| PartCursor {
                kind: PartKind::ToolCall,
                part_id: call_id.map_or_else(|| part_id(&item.run_id, request_index, index, "tool"), str::to_owned),
                tool_name: None,
                emitted_content: false,
                emitted_signature: false,
            });
            if cursor.kind != PartKind::ToolCall {
                return Err(ObserveError::rejected(ObservationKind::PartKindChanged, KIND_CHANGED));
            }
            if call_id.is_some_and(|id| id != cursor.part_id) {
                return Err(ObserveError::rejected(
                    ObservationKind::PartIdentityChanged,
                    "Pydantic tool-call identity changed before its end event",
                ));
            }
            if let Some(name) = non_empty(delta, "tool_name_delta") {
                cursor.tool_name.get_or_insert_with(String::new).push_str(name);
            }
        }
        _ => {}
    }
    Ok(events)
}

/// The cursor a part's end settles: the open one (which must match), or a fresh one; `true` when fresh.
pub(super) fn ending_cursor(
    existing: Option<PartCursor>,
    kind: PartKind,
    part_id: &str,
) -> Result<(PartCursor, bool), ObserveError> {
    match existing {
        None => Ok((
            PartCursor {
                kind,
                part_id: part_id.to_owned(),
                tool_name: None,
                emitted_content: false,
                emitted_signature: false,
            },
            true,
        )),
        Some(cursor) if cursor.kind != kind => {
            Err(ObserveError::rejected(ObservationKind::PartKindChanged, KIND_CHANGED))
        }
        Some(cursor) if cursor.part_id != part_id => Err(ObserveError::rejected(
            ObservationKind::PartIdentityChanged,
            "Pydantic part identity changed before its end event",
        )),
        Some(cursor) => Ok((cursor, false)),
    }
}

pub(super) fn convert_part_end(
    item: &SourceItem,
    event: &SourceEvent,
    state: &mut ObserverState,
) -> Result<Vec<Event>, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let existing = state.parts.shift_remove(&index);
    let Some(part) = event.object("part") else {
        return Ok(Vec::new());
    };
    let mut events = Vec::new();
    match part.get("part_kind").and_then(Value::as_str) {
        Some("text") => {
            let message_id = non_empty(part, "id")
                .map(str::to_owned)
                .or_else(|| existing.as_ref().map(|cursor| cursor.part_id.clone()).filter(|id| !id.is_empty()))
                .unwrap_or_else(|| part_id(&item.run_id, state.request_index, index, "text"));
            let (cursor, opened) = ending_cursor(existing, PartKind::Text, &message_id)?;
            if opened {
                events.push(text_start(timestamp, &message_id));
            }
            if let Some(content) = non_empty(part, "content").filter(|_| !cursor.emitted_content) {
                events.push(text_content(timestamp, &message_id, content));
            }
            events.push(text_end(timestamp, message_id));
        }
        Some("thinking") => {
            let message_id = existing
                .as_ref()
                .map_or_else(|| part_id(&item.run_id, state.request_index, index, "reasoning"), |c| c.part_id.clone());
            let (cursor, opened) = ending_cursor(existing, PartKind::Reasoning, &message_id)?;
            if opened {
                events.push(reasoning_start(timestamp, &message_id));
            }
            if let Some(content) = non_empty(part, "content").filter(|_| !cursor.emitted_content) {
                events.push(reasoning_content(timestamp, &message_id, content));
            }
            if let Some(signature) = non_empty(part, "signature").filter(|_| !cursor.emitted_signature) {
                events.push(encrypted(timestamp, &message_id, signature));
            }
            events.push(reasoning_end(timestamp, message_id));
        }
        Some("tool-call") => {
            let tool_call_id = existing.as_ref().map_or_else(
                || part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                |cursor| cursor.part_id.clone(),
            );
            ending_cursor(existing, PartKind::ToolCall, &tool_call_id)?;
            let tool_name = part.get("tool_name").and_then(Value::as_str).unwrap_or_default();
            let args = part.get("args").filter(|args| !args.is_null()).map(tool_args_text);
            events.extend(tool_call_events(timestamp, tool_call_id, tool_name, args));
        }
        _ => {}
    }
    Ok(events)
}

/// A reasoning message's end.
pub(super) fn reasoning_end(timestamp: Option<i64>, message_id: String) -> Event {
    Event::ReasoningMessageEnd(ReasoningMessageEndEvent {
        timestamp,
        message_id,
        ..ReasoningMessageEndEvent::default()
    })
}

/// A text message's end.
pub(super) fn text_end(timestamp: Option<i64>, message_id: String) -> Event {
    Event::TextMessageEnd(TextMessageEndEvent { timestamp, message_id, ..TextMessageEndEvent::default() })
}

/// A finished tool call's presentation: its start, its argument text (when it has some) and its end.
pub(super) fn tool_call_events(
    timestamp: Option<i64>,
    tool_call_id: String,
    tool_name: &str,
    args: Option<String>,
) -> Vec<Event> {
    let mut events = Vec::with_capacity(3);
    events.push(Event::ToolCallStart(ToolCallStartEvent {
        timestamp,
        tool_call_id: tool_call_id.clone(),
        tool_call_name: tool_name.to_owned(),
        ..ToolCallStartEvent::default()
    }));
    if let Some(delta) = args {
        events.push(Event::ToolCallArgs(ToolCallArgsEvent {
            timestamp,
            tool_call_id: tool_call_id.clone(),
            delta,
            ..ToolCallArgsEvent::default()
        }));
    }
    events.push(Event::ToolCallEnd(ToolCallEndEvent { timestamp, tool_call_id, ..ToolCallEndEvent::default() }));
    events
}

pub(super) fn tool_args_text(args: &Value) -> String {
    match args {
        Value::String(text) => text.clone(),
        other => PyDumps::SORTED_TEXT.dumps(other),
    }
}
