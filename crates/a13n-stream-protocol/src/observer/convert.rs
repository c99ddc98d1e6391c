//! The conversion of one source item, planned: routed by run (root or inline child) and by event kind, it reads
//! the state and says what the item changes ([`Plan`]).

use std::borrow::Cow;

use serde_json::Value;

use super::custom::{convert_input, custom_harness_event, custom_pydantic_event};
use super::delegation::{attribute, convert_delegation, inline_delegation};
use super::parts::{close_parts, convert_part_boundary, convert_part_delta};
use super::plan::{Change, Plan, RunChange};
use super::terminal::{convert_terminal, convert_tool_result};
use super::{custom, ObserverState, RequestIndex, RunStartedEvent};
use crate::extension::Extension;
use crate::fields::source_key;
use crate::json::Object;
use crate::part_kind::Boundary;
use crate::source::EventKind;
use crate::{names, Event, ObserveError, SourceBody, SourceItem};

/// What an item of a root stream does: its run bound to its thread, an inline child's cursors opened, then the
/// item converted in its run (or, for an inline delegation, in the delegated child).
pub(super) fn plan_stream<'a>(
    item: &'a SourceItem,
    state: &ObserverState,
    root_run_id: &str,
) -> Result<Plan<'a>, ObserveError> {
    let mut changes = vec![Change::BindThread { run_id: &item.run_id, thread_id: &item.thread_id }];
    let is_child = item.run_id != root_run_id;
    if is_child {
        changes.push(Change::OpenChild(Cow::Borrowed(&item.run_id)));
    }
    if let Some(event) = item.event() {
        if let Some(payload) = inline_delegation(event) {
            let (events, change) = convert_delegation(item, event, payload, state, root_run_id, is_child)?;
            changes.extend(change);
            return Ok(Plan { events, changes });
        }
    }
    let fresh;
    let run = match state.children.get(&item.run_id) {
        _ if !is_child => state,
        Some(child) => child,
        None => {
            fresh = ObserverState::default();
            &fresh
        }
    };
    let mut run_changes = Vec::new();
    let events = convert(item, run, &mut run_changes)?;
    let target = is_child.then_some(item.run_id.as_str());
    changes.extend(run_changes.into_iter().map(|change| Change::Run(target, change)));
    if !is_child {
        return Ok(Plan { events, changes });
    }
    let events = events
        .into_iter()
        .filter(|e| !matches!(e, Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_)))
        .collect();
    Ok(Plan { events: attribute(events, &item.run_id), changes })
}

/// What an item of one run does: its events, and the changes to the run's cursors (`run`) in `changes`.
pub(super) fn convert(
    item: &SourceItem,
    run: &ObserverState,
    changes: &mut Vec<RunChange>,
) -> Result<Vec<Event>, ObserveError> {
    let event = match &item.body {
        SourceBody::Result(result) => {
            let mut events = close_parts(item, run, changes);
            events.push(convert_terminal(item, result)?);
            return Ok(events);
        }
        SourceBody::Event(event) => event,
    };
    let events = match event.kind() {
        EventKind::Extension => {
            let payload = event.raw().get("payload").and_then(Value::as_object);
            let payload_type = payload.and_then(|p| p.get("type")).and_then(Value::as_str);
            let request_index =
                payload.and_then(|p| p.get(source_key::REQUEST_INDEX)).and_then(RequestIndex::of_payload);
            match Extension::of(event.str_field("kind"), payload_type, request_index) {
                Extension::RunStarted => {
                    return Ok(vec![Event::RunStarted(RunStartedEvent {
                        timestamp: Some(item.occurred_at.timestamp_ms()),
                        thread_id: item.thread_id.clone(),
                        run_id: item.run_id.clone(),
                        protocol_version: Some("1.0".into()),
                        ..RunStartedEvent::default()
                    })]);
                }
                // Steering can announce the next request before the previous stream ends its parts: open parts
                // keep their identity until their own end or a replacing start.
                Extension::ModelRequestStarted { request_index: Some(index) } => {
                    changes.push(RunChange::RequestIndex(index));
                }
                _ => {}
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
        EventKind::PartStart => convert_part_boundary(item, event, run, Boundary::Start, changes)?,
        EventKind::PartDelta => convert_part_delta(item, event, run, changes)?,
        EventKind::PartEnd => convert_part_boundary(item, event, run, Boundary::End, changes)?,
        EventKind::FunctionToolResult | EventKind::OutputToolResult => return convert_tool_result(item, event),
        EventKind::Other => Vec::new(),
    };
    if events.is_empty() {
        return Ok(vec![custom_pydantic_event(item, event.raw().clone())]);
    }
    Ok(events)
}
