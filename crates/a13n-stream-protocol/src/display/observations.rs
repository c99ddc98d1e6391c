//! Observation items: every event that is not a message or tool-call event becomes one, sealed as soon as no
//! event can change it; streamed tool-call arguments coalesce into one, a tool's execution observation names its
//! call, and a failed tool result fails the call's item.

use serde_json::{json, Value};

use super::bounds::{omitted, set_bounded};
use super::item::{observation_id, ObservationContent};
use super::py::{py_str, truthy, PY_NONE};
use super::rules::streamed_arguments;
use super::{
    item_id, Change, CharCounts, Field, FieldInput, ItemContent, ItemKind, ItemState, MAX_FIELD_CHARS,
    MAX_OBSERVATION_BYTES,
};
use crate::fields::{agui_key, item_key, source_key};
use crate::fragments::Accepted;
use crate::json::{json_size, Object, PyDumps};
use crate::memory::memory_sources;
use crate::{names, DisplayFold, ItemRef, MemorySource, UtcTime};
use std::collections::HashSet;

impl DisplayFold {
    pub(super) fn observation(&mut self, payload: &Object) -> Option<ItemRef> {
        if let Some(delta) = streamed_arguments(payload) {
            if self.content.full_content() {
                return None;
            }
            return Some(self.arguments(payload, delta));
        }
        let assembled = match self.assembler.accept(payload) {
            Accepted::Pending => return None,
            Accepted::Passed(event) => std::borrow::Cow::Borrowed(event),
            Accepted::Assembled(event) => std::borrow::Cow::Owned(event),
        };
        let name = assembled.get(agui_key::NAME).map(py_str).unwrap_or_else(|| PY_NONE.into());
        let value = assembled.get(agui_key::VALUE).unwrap_or(&Value::Null);
        let input_event = value.get(source_key::EVENT).and_then(Value::as_object);
        let lifecycle = input_event.and_then(|e| e.get(source_key::PAYLOAD)).and_then(Value::as_object);
        let scope_key = || {
            assembled
                .get(agui_key::SUBAGENT_RUN_ID)
                .filter(|s| truthy(s))
                .map_or_else(|| item_key::ROOT_SCOPE.to_owned(), py_str)
        };
        if name == names::HARNESS_LIFECYCLE
            && lifecycle.and_then(|l| l.get(source_key::TYPE)).and_then(Value::as_str)
                == Some(source_key::MODEL_REQUEST_STARTED)
        {
            let group = format!("{}:{}:{}", self.run_id, self.attempt, self.sequence);
            self.response_groups.insert(scope_key(), group);
        }
        if name == names::HARNESS_CONTEXT {
            if let Some(sources) = lifecycle.and_then(memory_sources) {
                let scope = scope_key();
                let kinds: HashSet<&str> = sources.iter().map(|s| s.kind.as_str()).collect();
                let mut merged: Vec<MemorySource> = self
                    .memory_sources
                    .get(&scope)
                    .map(|existing| existing.iter().filter(|s| !kinds.contains(s.kind.as_str())).cloned().collect())
                    .unwrap_or_default();
                merged.extend(sources);
                self.memory_sources.insert(scope, merged);
            }
        }
        let position = self.stream_id();
        let media_input = name == names::INPUT_MEDIA
            && input_event
                .and_then(|e| e.get(source_key::SOURCE))
                .and_then(Value::as_str)
                .is_some_and(|s| source_key::AUTHORED_SOURCES.contains(&s));
        let authored = name == names::INPUT_USER || name == names::INPUT_STEERING || media_input;
        if let (true, Some(input)) = (authored, input_event.filter(|e| e.contains_key(source_key::MESSAGE_ID))) {
            let message_id = input.get(source_key::MESSAGE_ID).map(py_str).unwrap_or_default();
            let mut content = ItemContent::new(ItemKind::TextMessage);
            content.set_text(Field::MessageId, message_id.clone());
            content.set_text(Field::Role, agui_key::ROLE_USER);
            if let Some(scope) = assembled.get(agui_key::SUBAGENT_RUN_ID) {
                content.set_json(Field::SubagentRunId, scope.clone());
            }
            if let Some(metadata) = assembled.get(agui_key::METADATA) {
                content.set_json(Field::Metadata, metadata.clone());
            }
            if media_input {
                content.set_json(Field::InputMedia, input.get(source_key::CONTENT).cloned().unwrap_or(Value::Null));
            } else {
                let text = input.get(source_key::CONTENT).map(py_str).unwrap_or_else(|| PY_NONE.into());
                set_bounded(&mut content, Field::Text, text, self.content.whole_fields());
            }
            content.set_json(
                Field::InputSource,
                input.get(source_key::SOURCE).cloned().unwrap_or_else(|| source_key::DEFAULT_INPUT_SOURCE.into()),
            );
            content.set_json(Field::InputGroup, input.get(source_key::INPUT_ID).cloned().unwrap_or(Value::Null));
            let key = self.scoped(
                ItemKind::TextMessage,
                assembled.get(agui_key::SUBAGENT_RUN_ID).map(FieldInput::Json),
                &message_id,
            );
            let at = self.occurred(&assembled);
            let kind = ItemKind::TextMessage;
            let change = Change { kind, state: ItemState::Completed, position, at };
            return Some(self.store.replace(key, change, content, false));
        }
        if let Some(input) = input_event {
            if let Some(reference) = self.tool_observation(&assembled, &name, input) {
                return Some(reference);
            }
        }
        if self.content.full_content()
            && matches!(name.as_str(), names::PART_START | names::PART_END | names::PART_DELTA)
        {
            return None;
        }
        let summary = matches!(name.as_str(), names::HANDOFF_SUMMARY | names::COMPACTION_SUMMARY);
        let keep_whole = self.content.whole_observation(summary);
        let omitted = omitted();
        let value = if !keep_whole && json_size(value) > MAX_OBSERVATION_BYTES { &omitted } else { value };
        let key = observation_id(&self.run_id, self.attempt, self.sequence);
        let content = ObservationContent {
            name: &name,
            value,
            metadata: assembled.get(agui_key::METADATA),
            subagent_run_id: assembled.get(agui_key::SUBAGENT_RUN_ID),
        };
        let at = self.occurred(payload);
        let kind = ItemKind::Observation;
        Some(self.store.put_sealed(key, Change { kind, state: ItemState::Completed, position, at }, content.sealed()))
    }

    fn tool_observation(&mut self, event: &Object, name: &str, value: &Object) -> Option<ItemRef> {
        let part = value.get(source_key::PART).and_then(Value::as_object);
        let part_kind = |source: &Object| source.get(source_key::PART_KIND).and_then(Value::as_str).map(str::to_owned);
        let native = part
            .and_then(|p| p.get(source_key::PART_KIND))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == source_key::BUILTIN_TOOL_CALL || kind == source_key::BUILTIN_TOOL_RETURN);
        let result = matches!(name, names::FUNCTION_TOOL_RESULT | names::OUTPUT_TOOL_RESULT);
        let supplement = matches!(
            name,
            names::FILESYSTEM_EDIT_APPLIED
                | names::TOOL_IMAGES
                | names::HARNESS_UI_TOOL_IMAGES
                | names::HARNESS_UI_MCP_APPS
                | names::MCP_APPS
        );
        let source = if native || result {
            part?
        } else if supplement {
            value
        } else {
            return None;
        };
        let call_id = source.get(source_key::TOOL_CALL_ID)?.as_str()?.to_owned();
        let scope = event.get(agui_key::SUBAGENT_RUN_ID);
        let provider = native.then(|| {
            source
                .get(source_key::PROVIDER_NAME)
                .filter(|p| truthy(p))
                .map_or_else(|| item_key::DEFAULT_PROVIDER.to_owned(), py_str)
        });
        let identity = match &provider {
            Some(provider) => format!("native:{provider}:{call_id}"),
            None => call_id.clone(),
        };
        let key = self.scoped(ItemKind::ToolCall, scope.map(FieldInput::Json), &identity);
        let full = self.content.whole_fields();
        let scope_key = scope.filter(|s| truthy(s)).map_or_else(|| item_key::ROOT_SCOPE.to_owned(), py_str);
        let group = self.response_groups.get(&scope_key).cloned();
        // A result settles the call; arguments and supplements keep its state.
        let is_arguments = !supplement && part_kind(source).as_deref() == Some(source_key::BUILTIN_TOOL_CALL);
        let state = if supplement || is_arguments {
            self.store.state(&key).unwrap_or(ItemState::InProgress)
        } else {
            let outcome = source.get(source_key::OUTCOME).and_then(Value::as_str);
            let retry =
                part_kind(source).as_deref() == Some(source_key::RETRY_PROMPT) || outcome == Some(source_key::RETRIED);
            if retry || outcome.is_some_and(|outcome| source_key::FAILING_OUTCOMES.contains(&outcome)) {
                ItemState::Failed
            } else {
                ItemState::Completed
            }
        };
        let at = self.occurred(event);
        let position = self.stream_id();
        let update = |content: &mut ItemContent, counts: &mut CharCounts, key: usize| {
            content.set_text(Field::ToolCallId, call_id.clone());
            if let Some(Value::String(scope)) = scope {
                content.set_text(Field::SubagentRunId, scope.clone());
            }
            if let Some(provider) = &provider {
                content.set_text(Field::Provider, provider.clone());
            }
            if let Some(tool_name) = source.get(source_key::TOOL_NAME) {
                content.set_json(Field::ToolCallName, tool_name.clone());
            }
            if let Some(group) = group {
                content.set_text_once(Field::ResponseGroup, || group);
            }
            if supplement {
                if name == names::FILESYSTEM_EDIT_APPLIED {
                    let mut edit = Object::new();
                    for field in source_key::EDIT_FIELDS {
                        edit.insert(field.into(), source.get(field).cloned().unwrap_or(Value::Null));
                    }
                    content.set_json(Field::AppliedEdit, Value::Object(edit));
                } else if name == names::TOOL_IMAGES || name == names::HARNESS_UI_TOOL_IMAGES {
                    content.set_json(
                        Field::ToolImages,
                        source.get(source_key::IMAGES).cloned().unwrap_or_else(|| json!([])),
                    );
                    let unavailable = source.get(source_key::UNAVAILABLE).cloned().unwrap_or(false.into());
                    content.set_json(Field::ToolImageUnavailable, unavailable);
                } else {
                    content
                        .set_json(Field::McpApps, source.get(source_key::APPS).cloned().unwrap_or_else(|| json!([])));
                }
            } else if is_arguments {
                let arguments = match source.get(source_key::ARGS) {
                    Some(Value::String(text)) => text.clone(),
                    other => PyDumps::TEXT.dumps(other.unwrap_or(&Value::Null)),
                };
                counts.remove(&(key, Field::Arguments));
                set_bounded(content, Field::Arguments, arguments, full);
                content.set_flag(Field::ArgumentsComplete, true);
            } else {
                let result_value = source.get(source_key::CONTENT).cloned().unwrap_or(Value::Null);
                if full || json_size(&result_value) <= MAX_FIELD_CHARS {
                    content.set_json(Field::Value, result_value);
                } else {
                    content.set_flag(Field::Truncated, true);
                }
                let outcome = source.get(source_key::OUTCOME).cloned().unwrap_or(Value::Null);
                let retry = part_kind(source).as_deref() == Some(source_key::RETRY_PROMPT)
                    || outcome.as_str() == Some(source_key::RETRIED);
                content.set_json(Field::Outcome, outcome);
                content.set_flag(Field::Retry, retry);
            }
        };
        Some(self.store.update(key, Change { kind: ItemKind::ToolCall, state, position, at }, update))
    }

    pub(super) fn fail_tool_call(
        &mut self,
        call_id: &str,
        message: String,
        at: UtcTime,
        subagent: Option<&str>,
    ) -> Option<ItemRef> {
        let key = match subagent {
            Some(scope) => item_id(&self.run_id, ItemKind::ToolCall, &format!("{scope}:{call_id}")),
            None => item_id(&self.run_id, ItemKind::ToolCall, call_id),
        };
        self.store.state(&key)?;
        let position = self.stream_id();
        let failure = Value::Object(Object::from_iter([
            (item_key::FAILURE_CODE.to_owned(), Value::from(item_key::TOOL_FAILED)),
            (item_key::FAILURE_MESSAGE.to_owned(), Value::from(message)),
        ]));
        let change = Change { kind: ItemKind::ToolCall, state: ItemState::Failed, position, at };
        Some(self.store.update(key, change, move |content, _, _| content.set_json(Field::Failure, failure)))
    }
}
