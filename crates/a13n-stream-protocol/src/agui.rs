//! The AG-UI 1.0 event vocabulary.
//!
//! Every event serializes with the protocol's camelCase field names in the order of the reference SDK's
//! generated models: `type`, `timestamp`, `rawEvent`, `metadata`, then `subagentRunId` where the event can belong
//! to a subagent, then the event's own fields. Optional fields without a value are omitted, never written as
//! `null`; required fields (such as `CUSTOM.value`) keep their `null`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Object;

macro_rules! events {
    ($(
        $(#[$doc:meta])*
        $variant:ident($name:ident) = $tag:literal {
            $( @ $attr:ident; )?
            $( $(#[$fattr:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    )*) => {
        /// One AG-UI 1.0 event.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type")]
        #[non_exhaustive]
        pub enum Event {
            $(
                $(#[$doc])*
                #[serde(rename = $tag)]
                $variant($name),
            )*
        }

        /// The type of an AG-UI 1.0 event: the one place that names every wire `type`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum EventType {
            $(
                #[doc = concat!("`", $tag, "`")]
                $variant,
            )*
        }

        impl EventType {
            /// Every event type.
            pub const ALL: &'static [EventType] = &[$( EventType::$variant, )*];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $( EventType::$variant => $tag, )* }
            }

            /// The type a wire name names, if it is one.
            pub fn parse(name: &str) -> Option<EventType> {
                match name { $( $tag => Some(EventType::$variant), )* _ => None }
            }
        }

        impl Event {
            /// The wire `type` of this event.
            pub fn event_type(&self) -> &'static str {
                match self { $( Event::$variant(_) => $tag, )* }
            }

            /// The type of this event.
            pub fn kind(&self) -> EventType {
                match self { $( Event::$variant(_) => EventType::$variant, )* }
            }

            /// The event's `timestamp` in epoch milliseconds.
            pub fn timestamp(&self) -> Option<i64> {
                match self { $( Event::$variant(event) => event.timestamp, )* }
            }

            /// The event's `metadata`.
            pub fn metadata(&self) -> Option<&Object> {
                match self { $( Event::$variant(event) => event.metadata.as_ref(), )* }
            }

            /// The subagent invocation the event belongs to, for events that can carry one.
            pub fn subagent_run_id(&self) -> Option<&str> {
                match self {
                    $( Event::$variant(event) => events!(@get event $($attr)?), )*
                }
            }

            /// Attribute the event to a subagent invocation; `false` for run-scoped events that cannot carry one.
            pub fn set_subagent_run_id(&mut self, run_id: &str) -> bool {
                match self {
                    $( Event::$variant(event) => events!(@set event run_id $($attr)?), )*
                }
            }
        }

        $(
            $(#[$doc])*
            #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
            #[serde(rename_all = "camelCase")]
            pub struct $name {
                /// When the event was created, in epoch milliseconds.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub timestamp: Option<i64>,
                /// The provider-native event this one was translated from.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub raw_event: Option<Value>,
                /// Extra information attached to this event.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub metadata: Option<Object>,
                $(
                    /// The subagent invocation this event belongs to; absent for the parent agent.
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    pub $attr: Option<String>,
                )?
                $( $(#[$fattr])* pub $field: $ty, )*
            }

            impl From<$name> for Event {
                fn from(event: $name) -> Event {
                    Event::$variant(event)
                }
            }
        )*
    };
    (@get $event:ident subagent_run_id) => { $event.subagent_run_id.as_deref() };
    (@get $event:ident) => {{ let _ = $event; None }};
    (@set $event:ident $run:ident subagent_run_id) => {{ $event.subagent_run_id = Some($run.to_owned()); true }};
    (@set $event:ident $run:ident) => {{ let _ = ($event, $run); false }};
}

// The subagent-scoped events carry `subagentRunId` as a required field; the macro's optional slot is reused for
// it so that attribution is uniform, and serialization omits it only when unset.
events! {
    /// Opens a streamed text message.
    TextMessageStart(TextMessageStartEvent) = "TEXT_MESSAGE_START" {
        @subagent_run_id;
        /// The message being opened.
        message_id: String,
        /// `developer`, `system`, `assistant` or `user`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// An optional display name for the author.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    }
    /// Appends text to an open message.
    TextMessageContent(TextMessageContentEvent) = "TEXT_MESSAGE_CONTENT" {
        @subagent_run_id;
        /// The message the text belongs to.
        message_id: String,
        /// The appended text.
        delta: String,
    }
    /// Closes a streamed text message.
    TextMessageEnd(TextMessageEndEvent) = "TEXT_MESSAGE_END" {
        @subagent_run_id;
        /// The message being closed.
        message_id: String,
    }
    /// A self-describing text chunk (start, content and end in one).
    TextMessageChunk(TextMessageChunkEvent) = "TEXT_MESSAGE_CHUNK" {
        @subagent_run_id;
        /// The message, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// The role, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// The text, when any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
        /// An optional display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    }
    /// Opens a tool call.
    ToolCallStart(ToolCallStartEvent) = "TOOL_CALL_START" {
        @subagent_run_id;
        /// The tool call.
        tool_call_id: String,
        /// The tool's name.
        tool_call_name: String,
        /// The message that made the call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    }
    /// Appends argument text to an open tool call.
    ToolCallArgs(ToolCallArgsEvent) = "TOOL_CALL_ARGS" {
        @subagent_run_id;
        /// The tool call.
        tool_call_id: String,
        /// The appended argument text.
        delta: String,
    }
    /// Closes a tool call's arguments.
    ToolCallEnd(ToolCallEndEvent) = "TOOL_CALL_END" {
        @subagent_run_id;
        /// The tool call.
        tool_call_id: String,
    }
    /// A self-describing tool-call chunk.
    ToolCallChunk(ToolCallChunkEvent) = "TOOL_CALL_CHUNK" {
        @subagent_run_id;
        /// The tool call, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        /// The tool's name, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_name: Option<String>,
        /// The calling message, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
        /// Argument text, when any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    }
    /// A tool call's result.
    ToolCallResult(ToolCallResultEvent) = "TOOL_CALL_RESULT" {
        @subagent_run_id;
        /// The result message.
        message_id: String,
        /// The tool call answered.
        tool_call_id: String,
        /// Plain text or ordered content parts.
        content: ToolResultContent,
        /// Always `tool` when present.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    }
    /// A complete state snapshot.
    StateSnapshot(StateSnapshotEvent) = "STATE_SNAPSHOT" {
        @subagent_run_id;
        /// The state.
        snapshot: Value,
    }
    /// A JSON Patch to the state.
    StateDelta(StateDeltaEvent) = "STATE_DELTA" {
        @subagent_run_id;
        /// RFC 6902 operations.
        delta: Vec<Value>,
    }
    /// The conversation's messages.
    MessagesSnapshot(MessagesSnapshotEvent) = "MESSAGES_SNAPSHOT" {
        /// The messages.
        messages: Vec<Value>,
    }
    /// An activity's content.
    ActivitySnapshot(ActivitySnapshotEvent) = "ACTIVITY_SNAPSHOT" {
        @subagent_run_id;
        /// The activity message.
        message_id: String,
        /// The kind of activity.
        activity_type: String,
        /// The activity's content.
        content: Object,
        /// Whether the snapshot replaces an existing one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<bool>,
    }
    /// A JSON Patch to an activity.
    ActivityDelta(ActivityDeltaEvent) = "ACTIVITY_DELTA" {
        @subagent_run_id;
        /// The activity message.
        message_id: String,
        /// The kind of activity.
        activity_type: String,
        /// RFC 6902 operations.
        patch: Vec<Value>,
    }
    /// An event of another system, carried verbatim.
    Raw(RawEvent) = "RAW" {
        @subagent_run_id;
        /// The foreign event.
        event: Value,
        /// Where it came from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    }
    /// An application-defined event.
    Custom(CustomEvent) = "CUSTOM" {
        @subagent_run_id;
        /// The event's name.
        name: String,
        /// The event's value (required; may be `null`).
        #[serde(default)]
        value: Value,
    }
    /// A run started.
    RunStarted(RunStartedEvent) = "RUN_STARTED" {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// The protocol version spoken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
        /// The parent run, for a nested run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The run's input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    }
    /// A run finished.
    RunFinished(RunFinishedEvent) = "RUN_FINISHED" {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// The run's output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Success, interrupt or cancellation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<RunFinishedOutcome>,
        /// Token usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    }
    /// A run failed.
    RunError(RunErrorEvent) = "RUN_ERROR" {
        /// What went wrong.
        message: String,
        /// A machine-readable code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// Token usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    }
    /// A step started.
    StepStarted(StepStartedEvent) = "STEP_STARTED" {
        @subagent_run_id;
        /// The step.
        step_name: String,
    }
    /// A step finished.
    StepFinished(StepFinishedEvent) = "STEP_FINISHED" {
        @subagent_run_id;
        /// The step.
        step_name: String,
    }
    /// Reasoning started.
    ReasoningStart(ReasoningStartEvent) = "REASONING_START" {
        @subagent_run_id;
        /// The reasoning message.
        message_id: String,
    }
    /// Opens a reasoning message.
    ReasoningMessageStart(ReasoningMessageStartEvent) = "REASONING_MESSAGE_START" {
        @subagent_run_id;
        /// The reasoning message.
        message_id: String,
        /// Always `reasoning`.
        role: String,
    }
    /// Appends reasoning text.
    ReasoningMessageContent(ReasoningMessageContentEvent) = "REASONING_MESSAGE_CONTENT" {
        @subagent_run_id;
        /// The reasoning message.
        message_id: String,
        /// The appended text.
        delta: String,
    }
    /// Closes a reasoning message.
    ReasoningMessageEnd(ReasoningMessageEndEvent) = "REASONING_MESSAGE_END" {
        @subagent_run_id;
        /// The reasoning message.
        message_id: String,
    }
    /// A self-describing reasoning chunk.
    ReasoningMessageChunk(ReasoningMessageChunkEvent) = "REASONING_MESSAGE_CHUNK" {
        @subagent_run_id;
        /// The reasoning message, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// The text, when any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    }
    /// Reasoning ended.
    ReasoningEnd(ReasoningEndEvent) = "REASONING_END" {
        @subagent_run_id;
        /// The reasoning message.
        message_id: String,
    }
    /// A provider's opaque reasoning artefact (a signature).
    ReasoningEncryptedValue(ReasoningEncryptedValueEvent) = "REASONING_ENCRYPTED_VALUE" {
        @subagent_run_id;
        /// `message` or `tool-call`.
        subtype: String,
        /// The message or tool call the value belongs to.
        entity_id: String,
        /// The opaque value.
        encrypted_value: String,
    }
    /// A subagent invocation started.
    SubagentStarted(SubagentStartedEvent) = "SUBAGENT_STARTED" {
        @subagent_run_id;
        /// The subagent's name.
        name: String,
        /// A description of the subagent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The invoking subagent, for nested invocations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_subagent_run_id: Option<String>,
        /// The tool call that delegated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
        /// The message that delegated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    }
    /// A subagent invocation finished.
    SubagentFinished(SubagentFinishedEvent) = "SUBAGENT_FINISHED" {
        @subagent_run_id;
        /// The subagent's result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Success or suspension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Value>,
    }
    /// A subagent invocation failed.
    SubagentError(SubagentErrorEvent) = "SUBAGENT_ERROR" {
        @subagent_run_id;
        /// What went wrong.
        message: String,
        /// A machine-readable code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    }
}

/// What a tool returned: plain text, or ordered content parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Ordered parts (`text`, `image`, `audio`, `video`, `document`), as JSON objects.
    Parts(Vec<Value>),
}

impl Default for ToolResultContent {
    fn default() -> Self {
        ToolResultContent::Text(String::new())
    }
}

/// How a run finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RunFinishedOutcome {
    /// The run completed.
    Success {
        /// Tool calls still pending, when any.
        #[serde(rename = "pendingToolCallIds", default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// The run stopped for human input or external execution.
    Interrupt {
        /// What the run waits for.
        interrupts: Vec<Interrupt>,
    },
    /// The run was cancelled.
    Cancelled,
}

/// One thing an interrupted run waits for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// The subagent the interrupt belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_run_id: Option<String>,
    /// The interrupt's identity.
    pub id: String,
    /// Why the run waits (`approval`, `external`).
    pub reason: String,
    /// A message for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The schema of the expected answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Object>,
    /// When the interrupt expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// Token counts of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// The provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input plus output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Input tokens read from a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Input tokens written to a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
}

impl EventType {
    /// Whether an event of this type ends its run: `RUN_FINISHED` or `RUN_ERROR`.
    pub fn ends_run(self) -> bool {
        matches!(self, EventType::RunFinished | EventType::RunError)
    }

    /// The type of an event's JSON, without decoding its other fields: `None` when the text is not an object
    /// whose `type` is a string naming an AG-UI event. Text this library wrote (`type` first) is read in one
    /// step; any other layout is decoded.
    ///
    /// ```
    /// use a13n_stream_protocol::agui::EventType;
    ///
    /// assert_eq!(EventType::of_json(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#), Some(EventType::RunFinished));
    /// assert_eq!(EventType::of_json(r#"{"runId":"r", "type":"RUN_ERROR"}"#), Some(EventType::RunError));
    /// assert_eq!(EventType::of_json(r#"{"type":"NOT_AN_EVENT"}"#), None);
    /// ```
    pub fn of_json(text: &str) -> Option<EventType> {
        let mut scanner = crate::scan::Scanner::new(text);
        if scanner.literal(br#"{"type":"#).is_some() {
            if let Some(name) = scanner.string() {
                return EventType::parse(&name);
            }
        }
        #[derive(Deserialize)]
        struct Typed<'a> {
            #[serde(rename = "type", borrow)]
            name: std::borrow::Cow<'a, str>,
        }
        let typed: Typed<'_> = serde_json::from_str(text).ok()?;
        EventType::parse(&typed.name)
    }
}

impl Event {
    /// The event as a JSON value (the protocol's wire form).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The event as a JSON object, moving its values rather than copying them (the wire form, as `to_value`).
    pub fn into_object(self) -> Object {
        match self {
            Event::Custom(custom) => {
                let mut object = Object::with_capacity(7);
                object.insert("type".into(), "CUSTOM".into());
                if let Some(timestamp) = custom.timestamp {
                    object.insert("timestamp".into(), timestamp.into());
                }
                if let Some(raw) = custom.raw_event {
                    object.insert("rawEvent".into(), raw);
                }
                if let Some(metadata) = custom.metadata {
                    object.insert("metadata".into(), Value::Object(metadata));
                }
                if let Some(run) = custom.subagent_run_id {
                    object.insert("subagentRunId".into(), run.into());
                }
                object.insert("name".into(), custom.name.into());
                object.insert("value".into(), custom.value);
                object
            }
            other => match other.to_value() {
                Value::Object(object) => object,
                _ => Object::new(),
            },
        }
    }

    /// The event as compact JSON text, as Pydantic's `model_dump_json` writes it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }

    /// Append the compact JSON text to `out` (no intermediate value).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Serializing into memory cannot fail for these types.
        let _ = crate::json::to_pydantic_writer(out, self);
    }

    /// The fields a host processor may change for this event type (wire names).
    pub(crate) fn mutable_fields(&self) -> &'static [&'static str] {
        match self {
            Event::TextMessageContent(_) | Event::ReasoningMessageContent(_) | Event::ToolCallArgs(_) => &["delta"],
            Event::ReasoningEncryptedValue(_) => &["encryptedValue"],
            Event::ToolCallResult(_) => &["content"],
            Event::RunFinished(_) => &["result"],
            Event::RunError(_) => &["message"],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_order_and_omissions_follow_the_sdk() {
        let event = Event::from(CustomEvent {
            timestamp: Some(5),
            metadata: Some(Object::new()),
            subagent_run_id: Some("child".into()),
            name: "n".into(),
            value: Value::Null,
            ..CustomEvent::default()
        });
        assert_eq!(
            event.to_json(),
            r#"{"type":"CUSTOM","timestamp":5,"metadata":{},"subagentRunId":"child","name":"n","value":null}"#
        );
        let finished = Event::from(RunFinishedEvent {
            timestamp: Some(1),
            thread_id: "t".into(),
            run_id: "r".into(),
            outcome: Some(RunFinishedOutcome::Success { pending_tool_call_ids: None }),
            ..RunFinishedEvent::default()
        });
        assert_eq!(
            finished.to_json(),
            r#"{"type":"RUN_FINISHED","timestamp":1,"threadId":"t","runId":"r","outcome":{"type":"success"}}"#
        );
        let back: Event = serde_json::from_str(&finished.to_json()).unwrap();
        assert_eq!(back, finished);
        assert_eq!(Value::Object(event.clone().into_object()), event.to_value());
        assert_eq!(Value::Object(finished.clone().into_object()), finished.to_value());
    }

    #[test]
    fn attribution_only_where_the_protocol_allows_it() {
        let mut started = Event::from(RunStartedEvent::default());
        assert!(!started.set_subagent_run_id("x"));
        let mut text = Event::from(TextMessageEndEvent::default());
        assert!(text.set_subagent_run_id("x"));
        assert_eq!(text.subagent_run_id(), Some("x"));
    }
}
