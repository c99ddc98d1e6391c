//! What the fold reads from an AG-UI event: which item kind it folds into, the fields it copies, the checks
//! that make folding unable to fail half-way, and the events that need special handling.

use std::borrow::Cow;

use serde_json::Value;

use super::py::truthy;
use super::{tool_execution_value, ItemKind, ToolResultContent};
use crate::agui::EventType;
use crate::content::presents_tool_result;
use crate::fields::{agui_key, source_key};
use crate::json::{char_boundary, Object, PyDumps};
use crate::source::EventKind;
use crate::{names, tool_result_content, InputError, InputKind, SourceItem, UtcTime};

/// The message kinds and the item kind each folds into.
pub(super) fn message_kind(event_type: EventType) -> Option<ItemKind> {
    use crate::agui::EventType as T;
    match event_type {
        T::TextMessageStart | T::TextMessageContent | T::TextMessageEnd => Some(ItemKind::TextMessage),
        T::ReasoningMessageStart | T::ReasoningMessageContent | T::ReasoningMessageEnd | T::ReasoningEncryptedValue => {
            Some(ItemKind::ReasoningMessage)
        }
        T::ToolCallStart | T::ToolCallArgs | T::ToolCallEnd | T::ToolCallResult => Some(ItemKind::ToolCall),
        _ => None,
    }
}

/// The events whose item is the whole event: the run's and a subagent's boundaries, each one completed
/// observation.
pub(super) fn observed_whole(event_type: EventType) -> bool {
    use crate::agui::EventType as T;
    matches!(
        event_type,
        T::RunStarted | T::RunFinished | T::RunError | T::SubagentStarted | T::SubagentFinished | T::SubagentError
    )
}

/// Python's `isinstance(timestamp, int)`, as epoch milliseconds.
pub(super) fn integer_timestamp(payload: &Object) -> Option<i64> {
    match payload.get(agui_key::TIMESTAMP)? {
        Value::Bool(flag) => Some(i64::from(*flag)),
        Value::Number(number) => match crate::json::PyNumber::of_number(number) {
            // An integer beyond 64 bits is still an `int`: a time no item can hold.
            crate::json::PyNumber::Int(_) => number.as_i64().or(Some(i64::MAX)),
            crate::json::PyNumber::Float(_) => None,
        },
        _ => None,
    }
}

/// An event's `timestamp` (epoch milliseconds) must be a time an item can hold.
pub(super) fn check_timestamp(timestamp: Option<i64>) -> Result<(), InputError> {
    match timestamp {
        Some(ms) if UtcTime::from_epoch_ms(ms).is_none() => {
            Err(InputError::new(agui_key::TIMESTAMP, format!("{ms} ms is outside the representable datetimes")))
        }
        _ => Ok(()),
    }
}

/// Check everything folding an event indexes, so that folding itself cannot fail half-way.
pub(super) fn validate_event(payload: &Object) -> Result<(), InputError> {
    let event_type = match payload.get(agui_key::TYPE) {
        None => return Err(InputError::missing(agui_key::TYPE)),
        Some(Value::String(event_type)) => event_type.as_str(),
        Some(_) => return Ok(()),
    };
    check_timestamp(integer_timestamp(payload))?;
    let require_str = |key: &str| -> Result<(), InputError> {
        match payload.get(key) {
            Some(Value::String(_)) => Ok(()),
            Some(other) => Err(InputError::wrong_type(key, format!("expected a string, found {other}"))),
            None => Err(InputError::of(InputKind::Missing, key, format!("missing field for {event_type}"))),
        }
    };
    use crate::agui::EventType as T;
    let Some(known) = EventType::parse(event_type) else { return Ok(()) };
    match known {
        T::ReasoningEncryptedValue => require_str(agui_key::ENTITY_ID)?,
        T::ToolCallStart | T::ToolCallEnd | T::ToolCallResult => require_str(agui_key::TOOL_CALL_ID)?,
        T::ToolCallArgs => {
            require_str(agui_key::TOOL_CALL_ID)?;
            require_str(agui_key::DELTA)?;
        }
        T::TextMessageContent | T::ReasoningMessageContent => {
            require_str(agui_key::MESSAGE_ID)?;
            require_str(agui_key::DELTA)?;
        }
        t if message_kind(t).is_some() => require_str(agui_key::MESSAGE_ID)?,
        T::Custom if payload.get(agui_key::NAME).and_then(Value::as_str) == Some(names::PART_DELTA) => {
            let delta = payload
                .get(agui_key::VALUE)
                .and_then(|v| v.get(source_key::EVENT))
                .and_then(|e| e.get(source_key::DELTA));
            if !delta.is_some_and(Value::is_object) {
                return Err(InputError::of(
                    InputKind::Missing,
                    "value.event.delta",
                    "a part_delta observation needs its source delta",
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The delta of a streamed tool-call argument observation, when the event is one.
pub(super) fn streamed_arguments(payload: &Object) -> Option<&Object> {
    if payload.get(agui_key::NAME).and_then(Value::as_str) != Some(names::PART_DELTA) {
        return None;
    }
    let delta = payload.get(agui_key::VALUE)?.get(source_key::EVENT)?.get(source_key::DELTA)?.as_object()?;
    let arguments = delta.get(source_key::PART_DELTA_KIND).and_then(Value::as_str) == Some(source_key::TOOL_CALL_DELTA)
        && delta.get(source_key::ARGS_DELTA).is_some_and(Value::is_string);
    (arguments && !delta.get(source_key::TOOL_NAME_DELTA).is_some_and(truthy)).then_some(delta)
}

/// A tool result the observer does not present (retry prompts, failures, denials): its call and message. None when
/// its content has no message: the reference folds the result's event and then raises making the message (a
/// number Python reads as infinite), so its display holds the call as the event left it, with no failure.
pub(super) fn failed_tool_call(source: &SourceItem) -> Option<(String, String)> {
    let event = source.event()?;
    if !matches!(event.kind(), EventKind::FunctionToolResult | EventKind::OutputToolResult) {
        return None;
    }
    failed_result(event.object(source_key::PART)?)
}

/// [`failed_tool_call`] of a tool result event's `part`.
pub(super) fn failed_result(part: &Object) -> Option<(String, String)> {
    let part_kind = part.get(source_key::PART_KIND).and_then(Value::as_str);
    if presents_tool_result(part_kind, part.get(source_key::OUTCOME).and_then(Value::as_str)) {
        return None;
    }
    let is_return = part_kind == Some(source_key::TOOL_RETURN);
    let content = part.get(source_key::CONTENT).unwrap_or(&Value::Null);
    let value = if is_return {
        tool_execution_value(content, part.get(source_key::METADATA)).ok()?
    } else {
        Cow::Borrowed(content)
    };
    let message = match tool_result_content(&value).ok()? {
        ToolResultContent::Text(text) => text,
        ToolResultContent::Parts(parts) => PyDumps::DEFAULT.dumps(&Value::Array(parts)),
    };
    let end = char_boundary(&message, 4096);
    Some((part.get(source_key::TOOL_CALL_ID)?.as_str()?.to_owned(), message[..end].to_owned()))
}
