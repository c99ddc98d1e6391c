//! Folding message events (text, reasoning and tool-call messages) into their items. What the fold reads of an
//! event is gathered into a [`MessageEvent`] first: borrowed from an AG-UI event object when events arrive as JSON
//! ([`DisplayFold::fold`]), or taken from a typed event when they come from the fold's own observer (a source
//! item's events, on the general path and in every lane). The folding itself ([`DisplayFold::fold_message`]) is
//! written once.

use std::borrow::Cow;

use serde_json::Value;

use super::bounds::{append_bounded, set_bounded};
use super::field::COPIED;
use super::item::{write_observed_line, ObservedItem};
use super::py::py_str;
use super::rules::check_timestamp;
use super::{
    integer_timestamp, message_kind, Change, CharCounts, Field, FieldInput, FieldValue, ItemContent, ItemKind,
    ItemState, ToolResultContent, MAX_FIELD_CHARS,
};
use crate::agui::EventType;
use crate::fields::{agui_key, item_key};
use crate::json::{json_size, Object};
use crate::{DisplayFold, Event, ItemRef};

/// What folding a message event reads of it.
pub(super) struct MessageEvent<'a> {
    pub(super) event_type: EventType,
    /// The event's time in epoch milliseconds, when it has an integer one.
    pub(super) timestamp: Option<i64>,
    /// The id the item is keyed by (`messageId`, `toolCallId`, or `entityId` for an encrypted value).
    pub(super) source_id: Cow<'a, str>,
    /// The [`COPIED`] fields the event has, in that order.
    pub(super) copied: [Option<FieldInput<'a>>; COPIED.len()],
    /// Appended text (`delta`).
    pub(super) delta: Option<&'a str>,
    /// An encrypted value.
    pub(super) encrypted_value: Option<FieldInput<'a>>,
    /// A tool result's content.
    pub(super) content: Option<Cow<'a, Value>>,
}

impl<'a> MessageEvent<'a> {
    /// Read an AG-UI event object of a message type.
    pub(super) fn from_object(event_type: EventType, payload: &'a Object, kind: ItemKind) -> MessageEvent<'a> {
        let id_field = match event_type {
            EventType::ReasoningEncryptedValue => agui_key::ENTITY_ID,
            _ if kind == ItemKind::ToolCall => agui_key::TOOL_CALL_ID,
            _ => agui_key::MESSAGE_ID,
        };
        MessageEvent {
            event_type,
            timestamp: integer_timestamp(payload),
            source_id: Cow::Borrowed(payload.get(id_field).and_then(Value::as_str).unwrap_or_default()),
            copied: COPIED.map(|field| payload.get(field.as_str()).map(FieldInput::Json)),
            delta: payload.get(agui_key::DELTA).and_then(Value::as_str),
            encrypted_value: payload.get(agui_key::ENCRYPTED_VALUE).map(FieldInput::Json),
            content: payload.get(agui_key::CONTENT).map(Cow::Borrowed),
        }
    }

    /// Read a typed event of a message type: exactly what [`MessageEvent::from_object`] reads of its object.
    /// `None` for any other event.
    pub(super) fn from_event(event: &'a Event) -> Option<MessageEvent<'a>> {
        let text = |value: &'a str| Some(FieldInput::Text(value));
        let optional = |value: &'a Option<String>| value.as_deref().and_then(text);
        // COPIED: messageId, role, toolCallId, toolCallName, parentMessageId, metadata, subagentRunId, responseGroup.
        let mut copied: [Option<FieldInput<'a>>; COPIED.len()] = Default::default();
        let [message_id, role, tool_call_id, tool_call_name, parent_message_id, ..] = &mut copied;
        let mut delta = None;
        let mut encrypted_value = None;
        let mut content = None;
        let source_id: &str = match event {
            Event::TextMessageStart(e) => {
                (*message_id, *role) = (text(&e.message_id), optional(&e.role));
                &e.message_id
            }
            Event::TextMessageContent(e) => {
                (*message_id, delta) = (text(&e.message_id), Some(e.delta.as_str()));
                &e.message_id
            }
            Event::TextMessageEnd(e) => {
                *message_id = text(&e.message_id);
                &e.message_id
            }
            Event::ReasoningMessageStart(e) => {
                (*message_id, *role) = (text(&e.message_id), text(&e.role));
                &e.message_id
            }
            Event::ReasoningMessageContent(e) => {
                (*message_id, delta) = (text(&e.message_id), Some(e.delta.as_str()));
                &e.message_id
            }
            Event::ReasoningMessageEnd(e) => {
                *message_id = text(&e.message_id);
                &e.message_id
            }
            Event::ReasoningEncryptedValue(e) => {
                encrypted_value = text(&e.encrypted_value);
                &e.entity_id
            }
            Event::ToolCallStart(e) => {
                (*tool_call_id, *tool_call_name) = (text(&e.tool_call_id), text(&e.tool_call_name));
                *parent_message_id = optional(&e.parent_message_id);
                &e.tool_call_id
            }
            Event::ToolCallArgs(e) => {
                (*tool_call_id, delta) = (text(&e.tool_call_id), Some(e.delta.as_str()));
                &e.tool_call_id
            }
            Event::ToolCallEnd(e) => {
                *tool_call_id = text(&e.tool_call_id);
                &e.tool_call_id
            }
            Event::ToolCallResult(e) => {
                (*message_id, *role, *tool_call_id) = (text(&e.message_id), optional(&e.role), text(&e.tool_call_id));
                content = Some(Cow::Owned(match &e.content {
                    ToolResultContent::Text(text) => Value::String(text.clone()),
                    ToolResultContent::Parts(parts) => Value::Array(parts.clone()),
                }));
                &e.tool_call_id
            }
            _ => return None,
        };
        copied[5] = event.metadata().map(FieldInput::Object);
        copied[6] = event.subagent_run_id().and_then(text);
        Some(MessageEvent {
            event_type: event.kind(),
            timestamp: event.timestamp(),
            source_id: Cow::Borrowed(source_id),
            copied,
            delta,
            encrypted_value,
            content,
        })
    }

    fn subagent(&self) -> Option<FieldInput<'a>> {
        self.copied[6]
    }
}

impl DisplayFold {
    /// Fold typed message events (a lane's) exactly as [`DisplayFold::fold`] folds their objects, appending each
    /// observed line to `out`; how many. `None`, with nothing changed, when an event is not one
    /// [`MessageEvent::from_event`] reads or its time is one the display cannot hold (the general path names
    /// that error).
    pub(super) fn fold_events(&mut self, events: &[Event], out: &mut Vec<u8>) -> Option<usize> {
        for event in events {
            message_kind(event.kind())?;
            check_timestamp(event.timestamp()).ok()?;
        }
        self.fast.forget();
        for event in events {
            self.next_sequence();
            let reference = self.fold_typed_message(event);
            if self.writes_observed {
                let item = reference.as_ref().map(ObservedItem::from);
                write_observed_line(out, self.sequence, |out| drop(crate::json::to_python_writer(out, event)), item);
            }
        }
        Some(events.len())
    }

    /// Fold a typed event: a message event into its item (a text message's end reports its memory evidence); any
    /// other typed event changes no item.
    pub(super) fn fold_typed_message(&mut self, event: &Event) -> Option<ItemRef> {
        let kind = message_kind(event.kind())?;
        let mut reference = self.fold_message(kind, MessageEvent::from_event(event)?);
        if event.kind() == EventType::TextMessageEnd {
            self.attach_memory_sources(&mut reference);
        }
        Some(reference)
    }

    /// Fold one message event into its item (`kind`, keyed by the run, the event's scope and its source id).
    pub(super) fn fold_message(&mut self, kind: ItemKind, event: MessageEvent<'_>) -> ItemRef {
        use crate::agui::EventType as T;
        let event_type = event.event_type;
        let position = self.stream_id();
        let key = self.scoped(kind, event.subagent(), &event.source_id);
        let state = if matches!(event_type, T::TextMessageEnd | T::ReasoningMessageEnd | T::ToolCallResult) {
            ItemState::Completed
        } else {
            self.store.state(&key).unwrap_or(ItemState::InProgress)
        };
        let at = self.occurred_at(event.timestamp);
        let full = self.content.whole_fields();
        let response_groups = &self.response_groups;
        let memory_sources = &self.memory_sources;
        let MessageEvent { copied, delta, encrypted_value, content: result, .. } = event;
        let update = move |content: &mut ItemContent, counts: &mut CharCounts, key: usize| {
            for (field, value) in COPIED.into_iter().zip(copied) {
                if let Some(value) = value {
                    content.set_input(field, value);
                }
            }
            let scope = content
                .get(Field::SubagentRunId)
                .filter(|s| s.truthy())
                .map_or_else(|| item_key::ROOT_SCOPE.to_owned(), FieldValue::py_str);
            if let Some(group) = response_groups.get(&scope) {
                content.set_text_once(Field::ResponseGroup, || group.clone());
            }
            if event_type == T::TextMessageEnd && content.text(Field::Role) == Some(agui_key::ROLE_ASSISTANT) {
                if let Some(sources) = memory_sources.get(&scope) {
                    content.set_json(Field::MemorySources, serde_json::to_value(sources).unwrap_or(Value::Null));
                }
            }
            if event_type == T::ToolCallEnd {
                content.set_flag(Field::ArgumentsComplete, true);
            }
            let accumulated = match event_type {
                T::TextMessageContent | T::ReasoningMessageContent => Some(Field::Text),
                T::ToolCallArgs => Some(Field::Arguments),
                _ => None,
            };
            if let Some(field) = accumulated {
                append_bounded(content, field, delta.unwrap_or_default(), full, counts, key);
            }
            if event_type == T::ReasoningEncryptedValue {
                match encrypted_value {
                    Some(value) => content.set_input(Field::EncryptedValue, value),
                    None => content.set_json(Field::EncryptedValue, Value::Null),
                }
            }
            if event_type == T::ToolCallResult {
                match result.as_deref() {
                    Some(whole @ Value::Array(parts)) => {
                        let keep = full || json_size(whole) <= MAX_FIELD_CHARS;
                        let kept = if keep { parts.clone() } else { Vec::new() };
                        let empty = kept.is_empty();
                        content.set_json(Field::ResultParts, Value::Array(kept));
                        if empty {
                            content.set_flag(Field::Truncated, true);
                        }
                    }
                    other => {
                        counts.remove(&(key, Field::Result));
                        let text = other.map_or_else(String::new, py_str);
                        set_bounded(content, Field::Result, text, full);
                    }
                }
            }
        };
        self.store.update(key, Change { kind, state, position, at }, update)
    }
}
