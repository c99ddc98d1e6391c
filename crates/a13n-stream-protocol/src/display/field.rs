//! The fields of an item's content: each named by a typed [`Field`] with one [`Shape`] (text, a flag or any
//! JSON), each item kind with its own set of them ([`Field::of_kind`]), and the typed [`FieldValue`] a field holds.
//! A value of another shape than its field's (an AG-UI event object or a restored checkpoint may carry any JSON in
//! any field) is kept as the JSON it came as, not dropped, and written back as it came.

use serde_json::Value;

use super::item::ItemKind;
use super::py::{py_str, truthy};
use crate::fields::{agui_key, item_key};
use crate::json::{to_pydantic_writer, write_pydantic_str, Object};

/// What a field holds when its value has the field's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A string: ids, roles, groups, accumulated text.
    Text,
    /// A boolean.
    Flag,
    /// Any JSON: metadata, result values, media.
    Json,
}

macro_rules! fields {
    ($($(#[$doc:meta])* $variant:ident = $name:path => $shape:ident,)*) => {
        /// A content field the fold reads or writes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Field {
            $($(#[$doc])* $variant,)*
        }

        impl Field {
            /// Every field.
            #[cfg(test)]
            pub(super) const ALL: &'static [Field] = &[$(Field::$variant,)*];

            /// The field's JSON name.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(Field::$variant => $name,)*
                }
            }

            /// The shape of the field's value.
            pub(crate) fn shape(self) -> Shape {
                match self {
                    $(Field::$variant => Shape::$shape,)*
                }
            }

            /// The field a JSON name names, if the fold knows it.
            pub(super) fn parse(name: &str) -> Option<Field> {
                match name {
                    $($name => Some(Field::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

fields! {
    MessageId = agui_key::MESSAGE_ID => Text,
    Role = agui_key::ROLE => Text,
    ToolCallId = agui_key::TOOL_CALL_ID => Text,
    ToolCallName = agui_key::TOOL_CALL_NAME => Text,
    ParentMessageId = agui_key::PARENT_MESSAGE_ID => Text,
    Metadata = agui_key::METADATA => Json,
    SubagentRunId = agui_key::SUBAGENT_RUN_ID => Text,
    /// An observation's name.
    Name = agui_key::NAME => Text,
    /// An observation's value, or a tool call's result value.
    Value = agui_key::VALUE => Json,
    ResponseGroup = item_key::RESPONSE_GROUP => Text,
    Text = item_key::TEXT => Text,
    Arguments = item_key::ARGUMENTS => Text,
    ArgumentsComplete = item_key::ARGUMENTS_COMPLETE => Flag,
    Result = item_key::RESULT => Text,
    ResultParts = item_key::RESULT_PARTS => Json,
    EncryptedValue = item_key::ENCRYPTED_VALUE => Text,
    MemorySources = item_key::MEMORY_SOURCES => Json,
    Truncated = item_key::TRUNCATED => Flag,
    Failure = item_key::FAILURE => Json,
    InputMedia = item_key::INPUT_MEDIA => Json,
    InputSource = item_key::INPUT_SOURCE => Json,
    InputGroup = item_key::INPUT_GROUP => Json,
    Provider = item_key::PROVIDER => Text,
    Outcome = item_key::OUTCOME => Json,
    Retry = item_key::RETRY => Flag,
    AppliedEdit = item_key::APPLIED_EDIT => Json,
    ToolImages = item_key::TOOL_IMAGES => Json,
    ToolImageUnavailable = item_key::TOOL_IMAGE_UNAVAILABLE => Json,
    McpApps = item_key::MCP_APPS => Json,
}

/// The event fields a message item's content copies from every event folded into it, in this order.
pub(crate) const COPIED: [Field; 8] = [
    Field::MessageId,
    Field::Role,
    Field::ToolCallId,
    Field::ToolCallName,
    Field::ParentMessageId,
    Field::Metadata,
    Field::SubagentRunId,
    Field::ResponseGroup,
];

impl Field {
    /// The fields the fold writes into an item of `kind` (an observation of a whole event also holds that
    /// event's own keys).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(crate) fn of_kind(kind: ItemKind) -> &'static [Field] {
        use Field as F;
        /// A message kind's fields: [`COPIED`] first, then its own.
        macro_rules! message {
            ($($own:ident),*) => {
                &[F::MessageId, F::Role, F::ToolCallId, F::ToolCallName, F::ParentMessageId, F::Metadata,
                  F::SubagentRunId, F::ResponseGroup, $(F::$own),*]
            };
        }
        const TEXT: &[Field] = message!(Text, Truncated, MemorySources, InputMedia, InputSource, InputGroup);
        const REASONING: &[Field] = message!(Text, Truncated, EncryptedValue);
        const TOOL_CALL: &[Field] = message!(
            Arguments,
            ArgumentsComplete,
            Result,
            ResultParts,
            Value,
            Truncated,
            Outcome,
            Retry,
            Provider,
            AppliedEdit,
            ToolImages,
            ToolImageUnavailable,
            McpApps,
            Failure
        );
        const OBSERVATION: &[Field] = &[F::Name, F::Value, F::Metadata, F::SubagentRunId];
        match kind {
            ItemKind::TextMessage => TEXT,
            ItemKind::ReasoningMessage => REASONING,
            ItemKind::ToolCall => TOOL_CALL,
            ItemKind::Observation => OBSERVATION,
        }
    }
}

/// A content value: typed by its field's [`Shape`], or the JSON it came as when it has another shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FieldValue {
    Text(String),
    Flag(bool),
    Json(Value),
}

impl FieldValue {
    /// `value` as `field` holds it.
    pub(super) fn of(field: Option<Field>, value: Value) -> FieldValue {
        match (field.map(Field::shape), value) {
            (Some(Shape::Text), Value::String(text)) => FieldValue::Text(text),
            (Some(Shape::Flag), Value::Bool(flag)) => FieldValue::Flag(flag),
            (_, value) => FieldValue::Json(value),
        }
    }

    /// The text, when the value is text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self {
            FieldValue::Text(text) => Some(text),
            FieldValue::Json(Value::String(text)) => Some(text),
            _ => None,
        }
    }

    /// Python truthiness of the value.
    pub(crate) fn truthy(&self) -> bool {
        match self {
            FieldValue::Text(text) => !text.is_empty(),
            FieldValue::Flag(flag) => *flag,
            FieldValue::Json(value) => truthy(value),
        }
    }

    /// Python's `str()` of the value.
    pub(crate) fn py_str(&self) -> String {
        match self {
            FieldValue::Text(text) => text.clone(),
            FieldValue::Flag(flag) => py_str(&Value::Bool(*flag)),
            FieldValue::Json(value) => py_str(value),
        }
    }

    /// The value as JSON.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            FieldValue::Text(text) => Value::String(text.clone()),
            FieldValue::Flag(flag) => Value::Bool(*flag),
            FieldValue::Json(value) => value.clone(),
        }
    }

    /// Whether the value is the JSON `value`.
    pub(super) fn is(&self, value: &Value) -> bool {
        match (self, value) {
            (FieldValue::Text(text), Value::String(other)) => text == other,
            (FieldValue::Flag(flag), Value::Bool(other)) => flag == other,
            (FieldValue::Json(own), other) => own == other,
            _ => false,
        }
    }

    /// Append the value's JSON (Pydantic's layout).
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        match self {
            // Most values are text (a message, arguments, a result): written by the string writer, which scans
            // eight bytes at a time.
            FieldValue::Text(text) | FieldValue::Json(Value::String(text)) => write_pydantic_str(out, text),
            FieldValue::Flag(true) => out.extend_from_slice(b"true"),
            FieldValue::Flag(false) => out.extend_from_slice(b"false"),
            // Writing a value into memory cannot fail.
            FieldValue::Json(value) => drop(to_pydantic_writer(out, value)),
        }
    }

    /// About the size of the value's JSON: exact for text and flags, a guess for other values.
    pub(super) fn size_hint(&self) -> usize {
        match self {
            FieldValue::Text(text) | FieldValue::Json(Value::String(text)) => text.len() + 2,
            FieldValue::Flag(_) => 5,
            FieldValue::Json(_) => 16,
        }
    }
}

/// A value an event gives a field: text or an object of a typed event, or a value of an AG-UI event object.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FieldInput<'a> {
    Text(&'a str),
    Object(&'a Object),
    Json(&'a Value),
}

impl FieldInput<'_> {
    /// Python truthiness of the value.
    pub(crate) fn truthy(self) -> bool {
        match self {
            FieldInput::Text(text) => !text.is_empty(),
            FieldInput::Object(object) => !object.is_empty(),
            FieldInput::Json(value) => truthy(value),
        }
    }

    /// Python's `str()` of the value.
    pub(crate) fn py_str(self) -> String {
        match self {
            FieldInput::Text(text) => text.to_owned(),
            FieldInput::Object(object) => py_str(&Value::Object(object.clone())),
            FieldInput::Json(value) => py_str(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_named_once_and_parses_back() {
        let mut names = std::collections::HashSet::new();
        for &field in Field::ALL {
            assert!(names.insert(field.as_str()), "{field:?}");
            assert_eq!(Field::parse(field.as_str()), Some(field));
            // Written without escaping.
            assert!(field.as_str().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{field:?}");
        }
        assert_eq!(names.len(), 29);
    }

    /// Every field belongs to some kind, and no kind lists a field twice.
    #[test]
    fn every_field_belongs_to_a_kind() {
        let mut seen = std::collections::HashSet::new();
        for kind in ItemKind::ALL {
            let fields = Field::of_kind(kind);
            if kind != ItemKind::Observation {
                assert_eq!(fields[..COPIED.len()], COPIED, "{kind:?}");
            }
            let unique: std::collections::HashSet<_> = fields.iter().collect();
            assert_eq!(unique.len(), fields.len(), "{kind:?}");
            seen.extend(fields.iter().copied());
        }
        assert_eq!(seen.len(), Field::ALL.len());
    }
}
