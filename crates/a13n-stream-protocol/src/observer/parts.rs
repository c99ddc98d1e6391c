//! Parts: text, thinking and tool-call parts opened, extended and closed, each with its cursor. The rules read a
//! run's cursors and say what changes ([`RunChange`]); the general path and the lanes both convert through them.

use std::borrow::Cow;

use serde_json::Value;

use super::plan::RunChange;
use super::{
    ObserverState, PartCursor, ReasoningEncryptedValueEvent, ReasoningMessageContentEvent, ReasoningMessageEndEvent,
    ReasoningMessageStartEvent, RequestIndex, TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent,
    ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent,
};
use crate::json::Object;
use crate::json::PyDumps;
use crate::part_kind::{Boundary, PartBody, PartKind};
use crate::{Event, ObservationKind, ObserveError, PartIndex, SourceEvent, SourceItem};

/// Settle open text and reasoning parts at an authoritative execution boundary: their end events; the parts are
/// cleared.
pub(super) fn close_parts(item: &SourceItem, run: &ObserverState, changes: &mut Vec<RunChange>) -> Vec<Event> {
    changes.push(RunChange::ClearParts);
    closing_events(Some(item.occurred_at.timestamp_ms()), run)
}

/// The end events of a run's open text and reasoning parts (tool calls end silently), in opening order.
pub(super) fn closing_events(timestamp: Option<i64>, run: &ObserverState) -> Vec<Event> {
    run.parts
        .values()
        .filter_map(|cursor| match cursor.kind {
            PartKind::Text => Some(text_end(timestamp, cursor.part_id.clone())),
            PartKind::Reasoning => Some(reasoning_end(timestamp, cursor.part_id.clone())),
            PartKind::ToolCall => None,
        })
        .collect()
}

pub(super) fn part_id(run_id: &str, request_index: &RequestIndex, part_index: &PartIndex, kind: &str) -> String {
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

/// A part's start or end on the general path: its `part` read as the lanes read it, then the same rules.
pub(super) fn convert_part_boundary(
    item: &SourceItem,
    event: &SourceEvent,
    run: &ObserverState,
    boundary: Boundary,
    changes: &mut Vec<RunChange>,
) -> Result<Vec<Event>, ObserveError> {
    let index = event.index();
    let Some(body) = event.object("part").and_then(|part| part_body(part, boundary)) else {
        // A part of a kind not presented: its end still closes the part's cursor.
        if boundary == Boundary::End {
            changes.push(RunChange::ClosePart(index));
        }
        return Ok(Vec::new());
    };
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let (events, change) = part_boundary(&item.run_id, run, index, boundary, &body, timestamp)?;
    changes.push(change);
    Ok(events)
}

/// A decoded part as the rules read it; `None` for a kind they do not present.
fn part_body(part: &Object, boundary: Boundary) -> Option<PartBody<'_>> {
    let text = |key: &str| part.get(key).and_then(Value::as_str).map(Cow::Borrowed);
    Some(match part.get("part_kind").and_then(Value::as_str)? {
        "text" => PartBody::Text { content: text("content").unwrap_or_default(), id: text("id") },
        "thinking" => PartBody::Thinking { content: text("content").unwrap_or_default(), signature: text("signature") },
        kind @ ("tool-call" | "builtin-tool-call") => {
            let builtin = kind == "builtin-tool-call";
            // Arguments are presented at a (non-builtin) tool call's end alone.
            let args = part.get("args").filter(|args| !args.is_null() && !builtin && boundary == Boundary::End);
            PartBody::ToolCall {
                tool_call_id: text("tool_call_id").unwrap_or_default(),
                tool_name: text("tool_name"),
                args: args.map(tool_args_text),
                builtin,
            }
        }
        _ => return None,
    })
}

/// What a part's start or end converts to in run `run_id` (whose cursors are `run`): its events and the change
/// to the part's cursor (a start opens or replaces it, an end closes it).
pub(super) fn part_boundary(
    run_id: &str,
    run: &ObserverState,
    index: PartIndex,
    boundary: Boundary,
    body: &PartBody<'_>,
    timestamp: Option<i64>,
) -> Result<(Vec<Event>, RunChange), ObserveError> {
    match boundary {
        Boundary::Start => Ok(part_start(run_id, &run.request_index, index, body, timestamp)),
        Boundary::End => Ok((part_end(run_id, run, &index, body, timestamp)?, RunChange::ClosePart(index))),
    }
}

/// What a part's start converts to (it cannot fail): its events and its cursor, opened or replacing the one at
/// `index`.
pub(super) fn part_start(
    run_id: &str,
    request_index: &RequestIndex,
    index: PartIndex,
    body: &PartBody<'_>,
    timestamp: Option<i64>,
) -> (Vec<Event>, RunChange) {
    let mut events = Vec::with_capacity(3);
    let cursor = match body {
        PartBody::Text { content, id } => {
            let message_id =
                filled(id.as_deref()).map_or_else(|| part_id(run_id, request_index, &index, "text"), str::to_owned);
            let content = filled(Some(content));
            events.push(text_start(timestamp, &message_id));
            events.extend(content.map(|content| text_content(timestamp, &message_id, content)));
            PartCursor { emitted_content: content.is_some(), ..opened(PartKind::Text, message_id) }
        }
        PartBody::Thinking { content, signature } => {
            // A provider reasoning item can hold several summary parts with one id: identity is positional.
            let message_id = part_id(run_id, request_index, &index, "reasoning");
            let (content, signature) = (filled(Some(content)), filled(signature.as_deref()));
            events.push(reasoning_start(timestamp, &message_id));
            events.extend(content.map(|content| reasoning_content(timestamp, &message_id, content)));
            events.extend(signature.map(|signature| encrypted(timestamp, &message_id, signature)));
            PartCursor {
                emitted_content: content.is_some(),
                emitted_signature: signature.is_some(),
                ..opened(PartKind::Reasoning, message_id)
            }
        }
        // Both kinds stream tool-call deltas; a native start replaces a previous request's cursor too, although its
        // own events stay CUSTOM.
        PartBody::ToolCall { tool_call_id, tool_name, .. } => PartCursor {
            tool_name: tool_name.as_deref().map(str::to_owned),
            ..opened(PartKind::ToolCall, tool_call_id.to_string())
        },
    };
    (events, RunChange::PutPart(index, cursor))
}

fn part_end(
    run_id: &str,
    run: &ObserverState,
    index: &PartIndex,
    body: &PartBody<'_>,
    timestamp: Option<i64>,
) -> Result<Vec<Event>, ObserveError> {
    let existing = run.parts.get(index);
    let positional = |suffix| part_id(run_id, &run.request_index, index, suffix);
    let mut events = Vec::with_capacity(3);
    match body {
        PartBody::Text { content, id } => {
            let message_id = filled(id.as_deref())
                .map(str::to_owned)
                .or_else(|| existing.map(|cursor| cursor.part_id.clone()).filter(|id| !id.is_empty()))
                .unwrap_or_else(|| positional("text"));
            let cursor = ending_cursor(existing, PartKind::Text, &message_id)?;
            if cursor.is_none() {
                events.push(text_start(timestamp, &message_id));
            }
            if let Some(content) = filled(Some(content)).filter(|_| !cursor.is_some_and(|c| c.emitted_content)) {
                events.push(text_content(timestamp, &message_id, content));
            }
            events.push(text_end(timestamp, message_id));
        }
        PartBody::Thinking { content, signature } => {
            let message_id = existing.map_or_else(|| positional("reasoning"), |cursor| cursor.part_id.clone());
            let cursor = ending_cursor(existing, PartKind::Reasoning, &message_id)?;
            if cursor.is_none() {
                events.push(reasoning_start(timestamp, &message_id));
            }
            if let Some(content) = filled(Some(content)).filter(|_| !cursor.is_some_and(|c| c.emitted_content)) {
                events.push(reasoning_content(timestamp, &message_id, content));
            }
            if let Some(signature) =
                filled(signature.as_deref()).filter(|_| !cursor.is_some_and(|c| c.emitted_signature))
            {
                events.push(encrypted(timestamp, &message_id, signature));
            }
            events.push(reasoning_end(timestamp, message_id));
        }
        // A provider's own tool call ends silently.
        PartBody::ToolCall { builtin: true, .. } => {}
        PartBody::ToolCall { tool_call_id, tool_name, args, .. } => {
            let tool_call_id = existing.map_or_else(|| tool_call_id.to_string(), |cursor| cursor.part_id.clone());
            ending_cursor(existing, PartKind::ToolCall, &tool_call_id)?;
            let tool_name = tool_name.as_deref().unwrap_or_default();
            events.extend(tool_call_events(timestamp, tool_call_id, tool_name, args.as_deref().map(str::to_owned)));
        }
    }
    Ok(events)
}

/// The cursor a part's end settles: the open one, which must match (`None`: the part had none).
fn ending_cursor<'a>(
    existing: Option<&'a PartCursor>,
    kind: PartKind,
    part_id: &str,
) -> Result<Option<&'a PartCursor>, ObserveError> {
    match existing {
        Some(cursor) if cursor.kind != kind => Err(kind_changed()),
        Some(cursor) if cursor.part_id != part_id => Err(ObserveError::rejected(
            ObservationKind::PartIdentityChanged,
            "Pydantic part identity changed before its end event",
        )),
        existing => Ok(existing),
    }
}

/// A part delta on the general path.
pub(super) fn convert_part_delta(
    item: &SourceItem,
    event: &SourceEvent,
    run: &ObserverState,
    changes: &mut Vec<RunChange>,
) -> Result<Vec<Event>, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let Some(delta) = event.object("delta") else {
        return Ok(Vec::new());
    };
    let (events, change) = match delta.get("part_delta_kind").and_then(Value::as_str) {
        Some("text") => {
            let Some(text) = non_empty(delta, "content_delta") else {
                return Ok(Vec::new());
            };
            content_delta(&item.run_id, run, index, PartKind::Text, Some(text), None, timestamp)?
        }
        Some("thinking") => {
            let (text, signature) = (non_empty(delta, "content_delta"), non_empty(delta, "signature_delta"));
            content_delta(&item.run_id, run, index, PartKind::Reasoning, text, signature, timestamp)?
        }
        Some("tool_call") => {
            let (call_id, name) = (non_empty(delta, "tool_call_id"), non_empty(delta, "tool_name_delta"));
            (Vec::new(), tool_call_delta(&item.run_id, run, index, call_id, name)?)
        }
        _ => return Ok(Vec::new()),
    };
    changes.extend(change);
    Ok(events)
}

/// What a text or thinking part's delta (its text and signature, each non-empty if given) converts to: a part with
/// no cursor yet opens (its start event first), then its content and signature events.
pub(super) fn content_delta(
    run_id: &str,
    run: &ObserverState,
    index: PartIndex,
    kind: PartKind,
    text: Option<&str>,
    signature: Option<&str>,
    timestamp: Option<i64>,
) -> Result<(Vec<Event>, Option<RunChange>), ObserveError> {
    let (message_id, opening) = match run.parts.get(&index) {
        Some(cursor) if cursor.kind != kind => return Err(kind_changed()),
        Some(cursor) => (Cow::Borrowed(cursor.part_id.as_str()), false),
        None => (Cow::Owned(part_id(run_id, &run.request_index, &index, message_suffix(kind))), true),
    };
    let mut events = Vec::with_capacity(3);
    let (emitted_content, emitted_signature) = (text.is_some(), signature.is_some());
    match kind {
        PartKind::Text => {
            events.extend(opening.then(|| text_start(timestamp, &message_id)));
            events.extend(text.map(|text| text_content(timestamp, &message_id, text)));
        }
        _ => {
            events.extend(opening.then(|| reasoning_start(timestamp, &message_id)));
            events.extend(text.map(|text| reasoning_content(timestamp, &message_id, text)));
        }
    }
    events.extend(signature.map(|signature| encrypted(timestamp, &message_id, signature)));
    let change = if opening {
        let cursor = PartCursor { emitted_content, emitted_signature, ..opened(kind, message_id.into_owned()) };
        Some(RunChange::PutPart(index, cursor))
    } else {
        let emitted = RunChange::Emitted { index, content: emitted_content, signature: emitted_signature };
        (emitted_content || emitted_signature).then_some(emitted)
    };
    Ok((events, change))
}

/// What a tool call's delta naming `call_id` (if any) with a tool-name delta `name` (if any; each non-empty if
/// given) changes: the part opens if it had no cursor, and a name delta extends the name (`None`: nothing). Its
/// event is the source event carried through.
pub(super) fn tool_call_delta(
    run_id: &str,
    run: &ObserverState,
    index: PartIndex,
    call_id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<RunChange>, ObserveError> {
    let cursor = match run.parts.get(&index) {
        None => {
            let part_id = call_id.map_or_else(|| part_id(run_id, &run.request_index, &index, "tool"), str::to_owned);
            opened(PartKind::ToolCall, part_id)
        }
        Some(cursor) if cursor.kind != PartKind::ToolCall => return Err(kind_changed()),
        Some(cursor) if call_id.is_some_and(|id| id != cursor.part_id) => {
            return Err(ObserveError::rejected(
                ObservationKind::PartIdentityChanged,
                "Pydantic tool-call identity changed before its end event",
            ));
        }
        Some(_) if name.is_none() => return Ok(None),
        Some(cursor) => cursor.clone(),
    };
    let mut cursor = cursor;
    if let Some(name) = name {
        cursor.tool_name.get_or_insert_with(String::new).push_str(name);
    }
    Ok(Some(RunChange::PutPart(index, cursor)))
}

/// A fresh cursor of a part presented as `kind` under `part_id`.
fn opened(kind: PartKind, part_id: String) -> PartCursor {
    PartCursor { kind, part_id, tool_name: None, emitted_content: false, emitted_signature: false }
}

/// The name a text or reasoning part's positional id ends with.
fn message_suffix(kind: PartKind) -> &'static str {
    if kind == PartKind::Text {
        "text"
    } else {
        "reasoning"
    }
}

/// `text` when it is given and not empty.
fn filled(text: Option<&str>) -> Option<&str> {
    text.filter(|text| !text.is_empty())
}

fn kind_changed() -> ObserveError {
    ObserveError::rejected(ObservationKind::PartKindChanged, "Pydantic part kind changed before its end event")
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

/// A tool call's argument text: given as text, or written sorted as the reference writes an object once dumped in
/// JSON mode (a number Python reads as infinite, `1e400`, is `null` there).
fn tool_args_text(args: &Value) -> Cow<'_, str> {
    match args {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(PyDumps::SORTED_TEXT.dumps_of_dump(other)),
    }
}
