//! An item's content as the fold holds it: its fields in the order they were first set, each named by a typed
//! [`Field`] (any other key a restored checkpoint carried is kept by name), so the fold never looks a field up
//! by its spelling. The order is the reference's (a dict keeps first-insertion order, and replacing a value
//! keeps its place), so the content writes the same JSON bytes as the object it stands for.

use serde_json::Value;

use crate::fields::{agui_key, item_key};
use crate::json::{to_pydantic_writer, write_pydantic_str, Object};

macro_rules! fields {
    ($($(#[$doc:meta])* $variant:ident = $name:path,)*) => {
        /// A content field the fold reads or writes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Field {
            $($(#[$doc])* $variant,)*
        }

        impl Field {
            /// Every field.
            #[cfg(test)]
            const ALL: &'static [Field] = &[$(Field::$variant,)*];

            /// The field's JSON name.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(Field::$variant => $name,)*
                }
            }

            /// The field a JSON name names, if the fold knows it.
            fn parse(name: &str) -> Option<Field> {
                match name {
                    $($name => Some(Field::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

fields! {
    MessageId = agui_key::MESSAGE_ID,
    Role = agui_key::ROLE,
    ToolCallId = agui_key::TOOL_CALL_ID,
    ToolCallName = agui_key::TOOL_CALL_NAME,
    ParentMessageId = agui_key::PARENT_MESSAGE_ID,
    Metadata = agui_key::METADATA,
    SubagentRunId = agui_key::SUBAGENT_RUN_ID,
    /// An observation's name.
    Name = agui_key::NAME,
    /// An observation's value, or a tool call's result value.
    Value = agui_key::VALUE,
    ResponseGroup = item_key::RESPONSE_GROUP,
    Text = item_key::TEXT,
    Arguments = item_key::ARGUMENTS,
    ArgumentsComplete = item_key::ARGUMENTS_COMPLETE,
    Result = item_key::RESULT,
    ResultParts = item_key::RESULT_PARTS,
    EncryptedValue = item_key::ENCRYPTED_VALUE,
    MemorySources = item_key::MEMORY_SOURCES,
    Truncated = item_key::TRUNCATED,
    Failure = item_key::FAILURE,
    InputMedia = item_key::INPUT_MEDIA,
    InputSource = item_key::INPUT_SOURCE,
    InputGroup = item_key::INPUT_GROUP,
    Provider = item_key::PROVIDER,
    Outcome = item_key::OUTCOME,
    Retry = item_key::RETRY,
    AppliedEdit = item_key::APPLIED_EDIT,
    ToolImages = item_key::TOOL_IMAGES,
    ToolImageUnavailable = item_key::TOOL_IMAGE_UNAVAILABLE,
    McpApps = item_key::MCP_APPS,
}

/// A content key: a field the fold knows, or any other name a checkpoint carried.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Known(Field),
    Other(Box<str>),
}

impl Key {
    fn named(name: String) -> Key {
        Field::parse(&name).map_or_else(|| Key::Other(name.into_boxed_str()), Key::Known)
    }

    fn as_str(&self) -> &str {
        match self {
            Key::Known(field) => field.as_str(),
            Key::Other(name) => name,
        }
    }
}

/// An item's content: fields in first-insertion order, at most one value per key.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ItemContent {
    entries: Vec<(Key, Value)>,
}

impl ItemContent {
    pub(crate) fn new() -> ItemContent {
        ItemContent::default()
    }

    fn position(&self, field: Field) -> Option<usize> {
        self.entries.iter().position(|(key, _)| *key == Key::Known(field))
    }

    pub(crate) fn get(&self, field: Field) -> Option<&Value> {
        self.position(field).map(|at| &self.entries[at].1)
    }

    pub(crate) fn get_mut(&mut self, field: Field) -> Option<&mut Value> {
        self.position(field).map(|at| &mut self.entries[at].1)
    }

    pub(crate) fn contains(&self, field: Field) -> bool {
        self.position(field).is_some()
    }

    /// Set a field: a new one goes last, an existing one keeps its place.
    pub(crate) fn insert(&mut self, field: Field, value: Value) {
        match self.position(field) {
            Some(at) => self.entries[at].1 = value,
            None => self.entries.push((Key::Known(field), value)),
        }
    }

    /// The field's value, set to `value()` first when absent.
    pub(crate) fn get_or_insert_with(&mut self, field: Field, value: impl FnOnce() -> Value) -> &mut Value {
        let at = match self.position(field) {
            Some(at) => at,
            None => {
                self.entries.push((Key::Known(field), value()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[at].1
    }

    /// The content of a JSON object, keys in its order.
    pub(crate) fn from_object(object: Object) -> ItemContent {
        ItemContent { entries: object.into_iter().map(|(name, value)| (Key::named(name), value)).collect() }
    }

    /// The JSON object the content stands for.
    pub(crate) fn to_object(&self) -> Object {
        self.entries.iter().map(|(key, value)| (key.as_str().to_owned(), value.clone())).collect()
    }

    /// The content of canonical JSON object text (what a sealed item holds); empty if it is not an object.
    pub(crate) fn parse(text: &str) -> ItemContent {
        serde_json::from_str(text).map(ItemContent::from_object).unwrap_or_default()
    }

    /// Append the content's JSON exactly as the object it stands for is written (Pydantic's layout).
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (index, (key, value)) in self.entries.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            match key {
                // A known field's name is plain ASCII: nothing to escape.
                Key::Known(field) => {
                    out.push(b'"');
                    out.extend_from_slice(field.as_str().as_bytes());
                    out.push(b'"');
                }
                Key::Other(name) => write_pydantic_str(out, name),
            }
            out.push(b':');
            match value {
                // Most values are text (a message, arguments, a result): written by the string writer, which
                // scans eight bytes at a time.
                Value::String(text) => write_pydantic_str(out, text),
                // Writing a value into memory cannot fail.
                other => drop(to_pydantic_writer(out, other)),
            }
        }
        out.push(b'}');
    }

    /// About the size of the content's JSON: exact for plain keys and strings, a guess for other values.
    pub(crate) fn size_hint(&self) -> usize {
        let value = |value: &Value| match value {
            Value::String(text) => text.len() + 2,
            _ => 16,
        };
        self.entries.iter().map(|(key, entry)| key.as_str().len() + 4 + value(entry)).sum::<usize>() + 2
    }

    /// The content's JSON text.
    pub(crate) fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256);
        self.write(&mut out);
        // The writer writes UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content writes the bytes of the object it stands for, in every order a checkpoint may carry and with
    /// keys the fold does not know.
    #[test]
    fn the_content_is_written_as_its_object() {
        let text = r#"{"zeta":1,"text":"a\"b\n","messageId":"m","role":"assistant","x":{"b":1.5e-7,"a":[null,true]},"responseGroup":"g","k\"\u0001":"\u0001\u001f\\é東🚀\u2028\t"}"#;
        let object: Object = serde_json::from_str(text).unwrap();
        let content = ItemContent::from_object(object.clone());
        assert_eq!(content.to_json(), crate::json::to_pydantic_json(&object).unwrap());
        assert_eq!(content.to_object(), object);
        assert_eq!(content.get(Field::Role), Some(&Value::from("assistant")));
        assert_eq!(ItemContent::parse(&content.to_json()), content);
    }

    #[test]
    fn replacing_a_field_keeps_its_place_and_new_fields_go_last() {
        let mut content = ItemContent::new();
        content.insert(Field::MessageId, "m".into());
        content.insert(Field::Text, "a".into());
        content.insert(Field::MessageId, "n".into());
        content.get_or_insert_with(Field::Truncated, || true.into());
        content.get_or_insert_with(Field::Text, || Value::Null);
        assert_eq!(content.to_json(), r#"{"messageId":"n","text":"a","truncated":true}"#);
        assert!(content.contains(Field::Truncated) && !content.contains(Field::Role));
    }

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
}
