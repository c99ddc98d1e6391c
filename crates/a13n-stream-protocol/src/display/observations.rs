//! Observation items: every event that is not a message or tool-call event becomes one, sealed as soon as no
//! event can change it; streamed tool-call arguments coalesce into one, a tool's execution observation names its
//! call, and a failed tool result fails the call's item.

use super::*;

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
        let name = assembled.get("name").map(py_str).unwrap_or_else(|| "None".into());
        let value = assembled.get("value").unwrap_or(&Value::Null);
        let input_event = value.get("event").and_then(Value::as_object);
        let lifecycle = input_event.and_then(|e| e.get("payload")).and_then(Value::as_object);
        let scope_key =
            || assembled.get("subagentRunId").filter(|s| truthy(s)).map_or_else(|| "root".to_owned(), py_str);
        if name == names::HARNESS_LIFECYCLE
            && lifecycle.and_then(|l| l.get("type")).and_then(Value::as_str) == Some("model_request_started")
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
                .and_then(|e| e.get("source"))
                .and_then(Value::as_str)
                .is_some_and(|s| s == "user" || s == "steering");
        let authored = name == names::INPUT_USER || name == names::INPUT_STEERING || media_input;
        if let (true, Some(input)) = (authored, input_event.filter(|e| e.contains_key("message_id"))) {
            let message_id = input.get("message_id").map(py_str).unwrap_or_default();
            let mut content = Object::new();
            content.insert("messageId".into(), message_id.clone().into());
            content.insert("role".into(), "user".into());
            if let Some(scope) = assembled.get("subagentRunId") {
                content.insert("subagentRunId".into(), scope.clone());
            }
            if let Some(metadata) = assembled.get("metadata") {
                content.insert("metadata".into(), metadata.clone());
            }
            if media_input {
                content.insert("input_media".into(), input.get("content").cloned().unwrap_or(Value::Null));
            } else {
                let text = input.get("content").map(py_str).unwrap_or_else(|| "None".into());
                set_bounded(&mut content, "text", text, self.content.whole_fields());
            }
            content.insert("input_source".into(), input.get("source").cloned().unwrap_or_else(|| "user".into()));
            content.insert("input_group".into(), input.get("input_id").cloned().unwrap_or(Value::Null));
            let key = self.scoped(ItemKind::TextMessage, assembled.get("subagentRunId"), &message_id);
            let at = self.occurred(&assembled);
            let kind = ItemKind::TextMessage;
            return Some(self.store.put(
                key,
                kind,
                ItemState::Completed,
                Some(content),
                position,
                at,
                false,
                |_, _, _| {},
            ));
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
        let omitted = json!({"omitted": true});
        let value = if !keep_whole && json_size(value) > MAX_OBSERVATION_BYTES { &omitted } else { value };
        let key = item_id(&self.run_id, ItemKind::Observation, &format!("{}:{}", self.attempt, self.sequence));
        let content = ObservationContent {
            name: &name,
            value,
            metadata: assembled.get("metadata"),
            subagent_run_id: assembled.get("subagentRunId"),
        };
        let at = self.occurred(payload);
        let kind = ItemKind::Observation;
        Some(self.store.put_sealed(key, kind, ItemState::Completed, content.sealed(), position, at))
    }

    fn tool_observation(&mut self, event: &Object, name: &str, value: &Object) -> Option<ItemRef> {
        let part = value.get("part").and_then(Value::as_object);
        let part_kind = |source: &Object| source.get("part_kind").and_then(Value::as_str).map(str::to_owned);
        let native = part
            .and_then(|p| p.get("part_kind"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == "builtin-tool-call" || kind == "builtin-tool-return");
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
        let call_id = source.get("tool_call_id")?.as_str()?.to_owned();
        let scope = event.get("subagentRunId");
        let provider = native
            .then(|| source.get("provider_name").filter(|p| truthy(p)).map_or_else(|| "provider".to_owned(), py_str));
        let identity = match &provider {
            Some(provider) => format!("native:{provider}:{call_id}"),
            None => call_id.clone(),
        };
        let key = self.scoped(ItemKind::ToolCall, scope, &identity);
        let full = self.content.whole_fields();
        let scope_key = scope.filter(|s| truthy(s)).map_or_else(|| "root".to_owned(), py_str);
        let group = self.response_groups.get(&scope_key).cloned();
        // A result settles the call; arguments and supplements keep its state.
        let is_arguments = !supplement && part_kind(source).as_deref() == Some("builtin-tool-call");
        let state = if supplement || is_arguments {
            self.store.state(&key).unwrap_or(ItemState::InProgress)
        } else {
            let outcome = source.get("outcome").and_then(Value::as_str);
            let retry = part_kind(source).as_deref() == Some("retry-prompt") || outcome == Some("retried");
            if retry || matches!(outcome, Some("failed" | "denied" | "interrupted")) {
                ItemState::Failed
            } else {
                ItemState::Completed
            }
        };
        let at = self.occurred(event);
        let position = self.stream_id();
        let update = |content: &mut Object, counts: &mut CharCounts, key: usize| {
            content.insert("toolCallId".into(), call_id.clone().into());
            if let Some(Value::String(scope)) = scope {
                content.insert("subagentRunId".into(), scope.clone().into());
            }
            if let Some(provider) = &provider {
                content.insert("provider".into(), provider.clone().into());
            }
            if let Some(tool_name) = source.get("tool_name") {
                content.insert("toolCallName".into(), tool_name.clone());
            }
            if let Some(group) = group {
                content.entry("responseGroup").or_insert(group.into());
            }
            if supplement {
                if name == names::FILESYSTEM_EDIT_APPLIED {
                    let mut edit = Object::new();
                    for field in ["file_path", "before", "after"] {
                        edit.insert(field.into(), source.get(field).cloned().unwrap_or(Value::Null));
                    }
                    content.insert("applied_edit".into(), Value::Object(edit));
                } else if name == names::TOOL_IMAGES || name == names::HARNESS_UI_TOOL_IMAGES {
                    content.insert("tool_images".into(), source.get("images").cloned().unwrap_or_else(|| json!([])));
                    let unavailable = source.get("unavailable").cloned().unwrap_or(false.into());
                    content.insert("tool_image_unavailable".into(), unavailable);
                } else {
                    content.insert("mcp_apps".into(), source.get("apps").cloned().unwrap_or_else(|| json!([])));
                }
            } else if is_arguments {
                let arguments = match source.get("args") {
                    Some(Value::String(text)) => text.clone(),
                    other => PyDumps::TEXT.dumps(other.unwrap_or(&Value::Null)),
                };
                counts.remove(&(key, "arguments"));
                set_bounded(content, "arguments", arguments, full);
                content.insert("arguments_complete".into(), true.into());
            } else {
                let result_value = source.get("content").cloned().unwrap_or(Value::Null);
                if full || json_size(&result_value) <= MAX_FIELD_CHARS {
                    content.insert("value".into(), result_value);
                } else {
                    content.insert("truncated".into(), true.into());
                }
                let outcome = source.get("outcome").cloned().unwrap_or(Value::Null);
                let retry = part_kind(source).as_deref() == Some("retry-prompt") || outcome.as_str() == Some("retried");
                content.insert("outcome".into(), outcome);
                content.insert("retry".into(), retry.into());
            }
        };
        Some(self.store.put(key, ItemKind::ToolCall, state, None, position, at, false, update))
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
        let failure = json!({"code": "tool_failed", "message": message});
        Some(self.store.put(
            key,
            ItemKind::ToolCall,
            ItemState::Failed,
            None,
            position,
            at,
            false,
            move |content, _, _| {
                content.insert("failure".into(), failure);
            },
        ))
    }
}
