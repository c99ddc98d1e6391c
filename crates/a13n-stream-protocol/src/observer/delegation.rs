//! Inline delegation: a root stream's subagent runs started, completed or failed, and their events attributed
//! to them.

use std::borrow::Cow;

use serde_json::Value;

use super::custom::custom_harness_event;
use super::parts::closing_events;
use super::plan::Change;
use super::{ObserverState, SubagentErrorEvent, SubagentFinishedEvent, SubagentStartedEvent};
use crate::extension::Extension;
use crate::json::Object;
use crate::pydantic::Validation;
use crate::source::EventKind;
use crate::{Event, ObserveError, SourceEvent, SourceItem};

/// The payload of an inline delegation event (see [`Extension::InlineDelegation`]).
pub(super) fn inline_delegation(event: &SourceEvent) -> Option<&Object> {
    if event.kind() != EventKind::Extension {
        return None;
    }
    let payload = event.object("payload")?;
    let payload_type = payload.get("type").and_then(Value::as_str);
    (Extension::of(event.str_field("kind"), payload_type, None) == Extension::InlineDelegation).then_some(payload)
}

/// The fields of a validated inline delegation observation.
pub(super) struct Delegation<'a> {
    pub(super) action: &'a str,
    subagent: &'a str,
    status: &'a str,
    parent_run_id: &'a str,
    parent_tool_call_id: Option<&'a str>,
    pub(super) child_run_id: Option<&'a str>,
}

/// Validate an inline delegation payload as the reference's `InlineDelegationPayload` model does, failing with
/// Pydantic's own `ValidationError` text (every field error in declaration order, then extra fields, then the
/// model validator).
pub(super) fn validate_delegation(payload: &Object) -> Result<Delegation<'_>, ObserveError> {
    const FIELDS: [&str; 10] = [
        "type",
        "invocation_id",
        "action",
        "child_instance_id",
        "subagent",
        "status",
        "parent_run_id",
        "parent_agent_instance_id",
        "parent_tool_call_id",
        "child_run_id",
    ];
    fn invocation_pattern(text: &str) -> bool {
        text.strip_prefix("delegation-").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    }
    // The whole payload, which an error quotes: built only for one.
    let whole = || Value::Object(payload.clone());
    let mut check = Validation::new("InlineDelegationPayload");
    let text = |check: &mut Validation, field: &str, max: usize, required: bool| -> Option<&str> {
        match payload.get(field) {
            None if required => {
                check.missing(field, &whole());
                None
            }
            None | Some(Value::Null) if !required => None,
            Some(value) => {
                let pattern = (field == "invocation_id")
                    .then_some(("^delegation-[A-Za-z0-9_-]+$", invocation_pattern as fn(&str) -> bool));
                let min = if field == "invocation_id" { 0 } else { 1 };
                check.string(field, value, min, max, pattern).then(|| value.as_str()).flatten()
            }
            None => None,
        }
    };
    if let Some(value) = payload.get("type") {
        check.literal("type", value, &["inline_delegation"]);
    }
    text(&mut check, "invocation_id", 128, true);
    let action = match payload.get("action") {
        None => {
            check.missing("action", &whole());
            None
        }
        Some(value) => {
            check.literal("action", value, &["started", "completed", "failed"]).then(|| value.as_str()).flatten()
        }
    };
    text(&mut check, "child_instance_id", 128, true);
    let subagent = text(&mut check, "subagent", 128, true);
    let status = text(&mut check, "status", 128, true);
    let parent_run_id = text(&mut check, "parent_run_id", 256, true);
    text(&mut check, "parent_agent_instance_id", 256, true);
    let parent_tool_call_id = text(&mut check, "parent_tool_call_id", 256, false);
    let child_run_id = text(&mut check, "child_run_id", 256, false);
    for (key, value) in payload.iter().filter(|(key, _)| !FIELDS.contains(&key.as_str())) {
        check.extra(key, value);
    }
    if check.is_empty() && matches!(action, Some("started" | "completed")) && child_run_id.is_none() {
        check.value_error("started and completed inline delegation events require child_run_id", &whole());
    }
    match (action, subagent, status, parent_run_id) {
        (Some(action), Some(subagent), Some(status), Some(parent_run_id)) if check.is_empty() => {
            Ok(Delegation { action, subagent, status, parent_run_id, parent_tool_call_id, child_run_id })
        }
        _ => Err(ObserveError::Validation(check.message())),
    }
}

/// What an inline delegation converts to: a completed or failed child's closing events and its release, or a
/// started child's cursors opened; the `SUBAGENT_*` event, then the observation.
pub(super) fn convert_delegation<'a>(
    item: &SourceItem,
    event: &SourceEvent,
    payload: &'a Object,
    state: &ObserverState,
    root_run_id: &str,
    is_child: bool,
) -> Result<(Vec<Event>, Option<Change<'a>>), ObserveError> {
    let delegation = validate_delegation(payload)?;
    let timestamp = Some(item.occurred_at.timestamp_ms());
    // Preparation may fail before a child Run exists: keep the observation, fabricate no child identity.
    let Some(child_id) = delegation.child_run_id else {
        return Ok((vec![custom_harness_event(item, event)], None));
    };
    let (mut events, subagent, change) = delegation_steps(&delegation, child_id, state, root_run_id, timestamp);
    events.push(subagent);
    let custom = custom_harness_event(item, event);
    if is_child {
        events.extend(attribute(vec![custom], &item.run_id));
    } else {
        events.push(custom);
    }
    Ok((events, Some(change)))
}

/// What a validated delegation of child run `child_id` does before its observation, for the general path and the
/// carried lane alike: a completed or failed child's closing events (attributed to it), its `SUBAGENT_*` event,
/// and the change to the child's cursors (a started child's opened, another's released: the parent reports
/// completion only after accepting the child's outcome).
pub(super) fn delegation_steps<'a>(
    delegation: &Delegation<'_>,
    child_id: &'a str,
    state: &ObserverState,
    root_run_id: &str,
    timestamp: Option<i64>,
) -> (Vec<Event>, Event, Change<'a>) {
    let subagent = subagent_event(delegation, timestamp, root_run_id, child_id);
    if delegation.action == "started" {
        return (Vec::new(), subagent, Change::OpenChild(Cow::Borrowed(child_id)));
    }
    let closing = state.children.get(child_id).map(|child| closing_events(timestamp, child)).unwrap_or_default();
    (attribute(closing, child_id), subagent, Change::ReleaseChild(Cow::Borrowed(child_id)))
}

/// The `SUBAGENT_*` event of a validated delegation of child run `child_id`: started, finished (completed) or
/// failed.
fn subagent_event(delegation: &Delegation<'_>, timestamp: Option<i64>, root_run_id: &str, child_id: &str) -> Event {
    match delegation.action {
        "started" => Event::SubagentStarted(SubagentStartedEvent {
            timestamp,
            subagent_run_id: Some(child_id.to_owned()),
            name: delegation.subagent.to_owned(),
            parent_tool_call_id: delegation.parent_tool_call_id.map(str::to_owned),
            parent_subagent_run_id: (delegation.parent_run_id != root_run_id)
                .then(|| delegation.parent_run_id.to_owned()),
            ..SubagentStartedEvent::default()
        }),
        "completed" => Event::SubagentFinished(SubagentFinishedEvent {
            timestamp,
            subagent_run_id: Some(child_id.to_owned()),
            outcome: Some(serde_json::json!({"type": "success"})),
            ..SubagentFinishedEvent::default()
        }),
        _ => Event::SubagentError(SubagentErrorEvent {
            timestamp,
            subagent_run_id: Some(child_id.to_owned()),
            message: format!("Inline delegation {}.", delegation.status),
            code: Some(delegation.status.to_owned()),
            ..SubagentErrorEvent::default()
        }),
    }
}

pub(super) fn attribute(mut events: Vec<Event>, run_id: &str) -> Vec<Event> {
    for event in &mut events {
        event.set_subagent_run_id(run_id);
    }
    events
}
