//! The conversion of one source item: routed by run (root or inline child) and by event kind.

use serde_json::Value;

use super::custom::{convert_input, custom_harness_event, custom_pydantic_event};
use super::delegation::{attribute, convert_delegation, inline_delegation};
use super::parts::{close_parts, convert_part_delta, convert_part_end, convert_part_start};
use super::terminal::{convert_terminal, convert_tool_result};
use super::{custom, ObserverState, RunStartedEvent};
use crate::json::Object;
use crate::source::EventKind;
use crate::{names, Event, ObserveError, SourceBody, SourceItem};

pub(super) fn convert_stream(
    item: &SourceItem,
    state: &mut ObserverState,
    root_run_id: &str,
) -> Result<Vec<Event>, ObserveError> {
    state.threads.insert(item.run_id.clone(), item.thread_id.clone());
    let is_child = item.run_id != root_run_id;
    if is_child {
        state.children.entry(item.run_id.clone()).or_default();
    }
    if let Some(event) = item.event() {
        if let Some(payload) = inline_delegation(event) {
            return convert_delegation(item, event, payload, state, root_run_id, is_child);
        }
    }
    let cursor = if is_child { state.children.entry(item.run_id.clone()).or_default() } else { state };
    let events = convert(item, cursor)?;
    if !is_child {
        return Ok(events);
    }
    Ok(attribute(
        events
            .into_iter()
            .filter(|e| !matches!(e, Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_)))
            .collect(),
        &item.run_id,
    ))
}

pub(super) fn convert(item: &SourceItem, state: &mut ObserverState) -> Result<Vec<Event>, ObserveError> {
    let event = match &item.body {
        SourceBody::Result(result) => {
            let mut events = close_parts(item, state);
            events.push(convert_terminal(item, result));
            return Ok(events);
        }
        SourceBody::Event(event) => event,
    };
    let events = match event.kind() {
        EventKind::Extension => {
            let payload = event.raw().get("payload").and_then(Value::as_object);
            let payload_type = payload.and_then(|p| p.get("type")).and_then(Value::as_str);
            if event.str_field("kind") == Some("lifecycle") && payload_type == Some("run_started") {
                return Ok(vec![Event::RunStarted(RunStartedEvent {
                    timestamp: Some(item.occurred_at.timestamp_ms()),
                    thread_id: item.thread_id.clone(),
                    run_id: item.run_id.clone(),
                    protocol_version: Some("1.0".into()),
                    ..RunStartedEvent::default()
                })]);
            }
            if event.str_field("kind") == Some("lifecycle") && payload_type == Some("model_request_started") {
                // Steering can announce the next request before the previous stream ends its parts: open parts
                // keep their identity until their own end or a replacing start.
                if let Some(index) = payload.and_then(|p| p.get("request_index")).and_then(Value::as_i64) {
                    if index >= 0 {
                        state.request_index = index;
                    }
                }
            }
            return Ok(vec![custom_harness_event(item, event)]);
        }
        EventKind::InputText | EventKind::InputMedia => return Ok(vec![convert_input(item, event)]),
        EventKind::EnqueuedMessages => {
            // Delivered messages may hold binary payloads: carry only the delivery's identity.
            let mut value = Object::new();
            value.insert("event_kind".into(), event.raw().get("event_kind").cloned().unwrap_or(Value::Null));
            value.insert("enqueue_id".into(), event.raw().get("enqueue_id").cloned().unwrap_or(Value::Null));
            return Ok(vec![custom(item, names::ENQUEUED_MESSAGES.into(), Value::Object(value))]);
        }
        EventKind::DeferredToolResults => {
            // Each resolved value arrives later as its own tool result; the batch carries identities only.
            let results = event.object("results");
            let ids = |key: &str| -> Value {
                let keys = results.and_then(|r| r.get(key)).and_then(Value::as_object);
                Value::Array(keys.map(|m| m.keys().map(|k| Value::String(k.clone())).collect()).unwrap_or_default())
            };
            let mut value = Object::new();
            value.insert("event_kind".into(), event.raw().get("event_kind").cloned().unwrap_or(Value::Null));
            value.insert("call_ids".into(), ids("calls"));
            value.insert("approval_ids".into(), ids("approvals"));
            return Ok(vec![custom(item, names::DEFERRED_TOOL_RESULTS.into(), Value::Object(value))]);
        }
        EventKind::Capability => {
            let name = event.str_field("kind").unwrap_or_default().to_owned();
            return Ok(vec![custom(item, name, Value::Object(event.raw().clone()))]);
        }
        EventKind::PartStart => convert_part_start(item, event, state),
        EventKind::PartDelta => convert_part_delta(item, event, state)?,
        EventKind::PartEnd => convert_part_end(item, event, state)?,
        EventKind::FunctionToolResult | EventKind::OutputToolResult => return convert_tool_result(item, event),
        EventKind::Other => Vec::new(),
    };
    if events.is_empty() {
        return Ok(vec![custom_pydantic_event(item, event.raw().clone())]);
    }
    Ok(events)
}
