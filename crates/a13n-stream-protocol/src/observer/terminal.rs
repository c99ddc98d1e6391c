//! Tool results and the run's terminal result: usage, status and the events that end a run.

use serde_json::Value;

use super::custom::custom_pydantic_event;
use super::{
    public_tool_value, tool_execution_value, Interrupt, RunErrorEvent, RunFinishedEvent, RunFinishedOutcome,
    TokenUsage, ToolCallResultEvent,
};
use crate::content::presents_tool_result;
use crate::json::Object;
use crate::pydantic::Validation;
use crate::source::{EventKind, RunResult, RunStatus};
use crate::InputError;
use crate::{names, tool_result_content, Event, ObserveError, SourceEvent, SourceItem};

pub(super) fn convert_tool_result(item: &SourceItem, event: &SourceEvent) -> Result<Vec<Event>, ObserveError> {
    let Some(part) = event.object("part") else {
        return Ok(Vec::new());
    };
    let part_kind = part.get("part_kind").and_then(Value::as_str);
    let is_return = part_kind == Some("tool-return");
    let content = part.get("content").unwrap_or(&Value::Null);
    let metadata = part.get("metadata");
    if !presents_tool_result(part_kind, part.get("outcome").and_then(Value::as_str)) {
        // Keep the native failure or retry correlation, never model-only media.
        let mut projected = event.raw().clone();
        if is_return {
            let value = tool_execution_value(content, metadata).map_err(|e| e.nested("event"))?;
            let public = public_tool_value(&value);
            if let Some(Value::Object(part)) = projected.get_mut("part") {
                part.insert("content".into(), public);
            }
        }
        if event.kind() == EventKind::FunctionToolResult {
            projected.insert("content".into(), Value::Null);
        }
        return Ok(vec![custom_pydantic_event(item, projected)]);
    }
    let tool_call_id = part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default();
    let value = tool_execution_value(content, metadata).map_err(|e| e.nested("event"))?;
    let result = tool_result(Some(item.occurred_at.timestamp_ms()), tool_call_id, &value);
    Ok(vec![result.map_err(|e| e.nested("event"))?])
}

/// A tool call's successful result: the value it presents, as text or content parts (an error where the
/// reference refuses to write the value as text, at `part.content`).
pub(super) fn tool_result(timestamp: Option<i64>, tool_call_id: &str, value: &Value) -> Result<Event, InputError> {
    Ok(Event::ToolCallResult(ToolCallResultEvent {
        timestamp,
        message_id: format!("{tool_call_id}:result"),
        tool_call_id: tool_call_id.to_owned(),
        content: tool_result_content(value)?,
        role: Some("tool".into()),
        ..ToolCallResultEvent::default()
    }))
}

/// The largest count AG-UI's `TokenUsage` takes: `2**53 - 1`, the largest integer every JSON reader keeps.
const MAX_TOKEN_COUNT: u64 = (1 << 53) - 1;

/// The run's usage as AG-UI's `TokenUsage`, `None` when it counts nothing. Counts the model refuses (more than
/// [`MAX_TOKEN_COUNT`], the total of input and output included, or a reasoning count below 0) raise its
/// `ValidationError`, as in the reference.
pub(super) fn agui_usage(result: &RunResult) -> Result<Option<Vec<TokenUsage>>, ObserveError> {
    let usage = result.usage();
    let total = u128::from(usage.input_tokens) + u128::from(usage.output_tokens);
    if total == 0 && usage.cache_read_tokens == 0 && usage.cache_write_tokens == 0 {
        return Ok(None);
    }
    // The reasoning count as written: the reference hands the model any Python `int`, where `usage()` keeps only
    // those from 0 to 2**64 - 1.
    let reasoning = result.field("usage").and_then(|usage| usage.get("details")?.get("reasoning_tokens"));
    let total_value = serde_json::from_str(&total.to_string()).unwrap_or(Value::Null);
    let mut check = Validation::new("TokenUsage");
    check.count("input_tokens", &usage.input_tokens.into(), MAX_TOKEN_COUNT);
    check.count("output_tokens", &usage.output_tokens.into(), MAX_TOKEN_COUNT);
    check.count("total_tokens", &total_value, MAX_TOKEN_COUNT);
    check.count("reasoning_tokens", reasoning.unwrap_or(&Value::Null), MAX_TOKEN_COUNT);
    check.count("cached_input_tokens", &usage.cache_read_tokens.into(), MAX_TOKEN_COUNT);
    check.count("cache_write_input_tokens", &usage.cache_write_tokens.into(), MAX_TOKEN_COUNT);
    if !check.is_empty() {
        return Err(ObserveError::Validation(check.message()));
    }
    let total = total as u64;
    Ok(Some(vec![TokenUsage {
        input_tokens: Some(usage.input_tokens),
        output_tokens: Some(usage.output_tokens),
        total_tokens: Some(total),
        reasoning_tokens: usage.reasoning_tokens,
        cached_input_tokens: Some(usage.cache_read_tokens),
        cache_write_input_tokens: Some(usage.cache_write_tokens),
        ..TokenUsage::default()
    }]))
}

pub(super) fn convert_terminal(item: &SourceItem, result: &RunResult) -> Result<Event, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let usage = agui_usage(result)?;
    let mut raw = Object::new();
    raw.insert("thread_id".into(), item.thread_id.clone().into());
    raw.insert("run_id".into(), item.run_id.clone().into());
    raw.insert("sequence".into(), item.sequence.to_value());
    raw.insert("occurred_at".into(), item.occurred_at.isoformat().into());
    raw.insert("status".into(), result.status.as_str().into());
    let finished = |raw: Object, result: Option<Value>, outcome: RunFinishedOutcome, usage| {
        Event::RunFinished(RunFinishedEvent {
            timestamp,
            raw_event: Some(Value::Object(raw)),
            thread_id: item.thread_id.clone(),
            run_id: item.run_id.clone(),
            result,
            outcome: Some(outcome),
            usage,
            ..RunFinishedEvent::default()
        })
    };
    Ok(match result.status {
        RunStatus::Completed => {
            let omitted = result.field("output_omitted").and_then(Value::as_bool) == Some(true);
            if omitted {
                raw.insert("result_omitted".into(), true.into());
            }
            let output = if omitted { None } else { result.field("output").cloned().filter(|v| !v.is_null()) };
            finished(raw, output, RunFinishedOutcome::Success { pending_tool_call_ids: None }, usage)
        }
        RunStatus::Suspended => {
            let deferred = result.field("deferred").and_then(Value::as_object);
            let metadata = deferred.and_then(|d| d.get("metadata")).and_then(Value::as_object);
            let mut interrupts = Vec::new();
            for (reason, key) in [("approval", "approvals"), ("external", "calls")] {
                let entries = deferred.and_then(|d| d.get(key)).and_then(Value::as_array);
                for entry in entries.into_iter().flatten() {
                    let target = entry.get("target_call").and_then(Value::as_object);
                    let target_field = |name: &str| target.and_then(|t| t.get(name)).cloned().unwrap_or(Value::Null);
                    let target_id = target_field("tool_call_id").as_str().unwrap_or_default().to_owned();
                    let tool_metadata = metadata.and_then(|m| m.get(&target_id)).cloned();
                    let mut tool_name = target_field("tool_name");
                    if reason == "external" {
                        let declared = tool_metadata
                            .as_ref()
                            .and_then(|m| m.get(names::HARNESS_CLIENT_TOOL))
                            .and_then(|marker| marker.get("declared_name"))
                            .and_then(Value::as_str)
                            .filter(|name| !name.is_empty());
                        if let Some(declared) = declared {
                            tool_name = declared.into();
                        }
                    }
                    let mut interrupt_metadata = Object::new();
                    interrupt_metadata.insert("tool_name".into(), tool_name);
                    interrupt_metadata.insert("args".into(), target_field("args"));
                    interrupt_metadata.insert("tool_metadata".into(), tool_metadata.unwrap_or(Value::Null));
                    interrupts.push(Interrupt {
                        subagent_run_id: None,
                        id: target_id,
                        reason: reason.into(),
                        message: None,
                        tool_call_id: entry
                            .get("model_call")
                            .and_then(|call| call.get("tool_call_id"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        response_schema: None,
                        expires_at: None,
                        metadata: Some(interrupt_metadata),
                    });
                }
            }
            // The outcome's model needs an interrupt: a suspension deferring nothing is refused.
            let mut check = Validation::new("RunFinishedInterruptOutcome");
            check.non_empty("interrupts", interrupts.len());
            if !check.is_empty() {
                return Err(ObserveError::Validation(check.message()));
            }
            finished(raw, None, RunFinishedOutcome::Interrupt { interrupts }, usage)
        }
        RunStatus::Failed => {
            let failure = result.field("failure").cloned().unwrap_or(Value::Null);
            let message = failure.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
            let code = failure.get("code").and_then(Value::as_str).map(str::to_owned);
            raw.insert("failure".into(), failure);
            Event::RunError(RunErrorEvent {
                timestamp,
                raw_event: Some(Value::Object(raw)),
                message,
                code,
                usage,
                ..RunErrorEvent::default()
            })
        }
        RunStatus::Cancelled => finished(raw, None, RunFinishedOutcome::Cancelled, usage),
    })
}
