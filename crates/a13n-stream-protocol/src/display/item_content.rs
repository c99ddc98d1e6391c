//! An item's content as the fold holds it: its fields in the order they were first set, each named by a typed
//! [`Field`] (any other key a restored checkpoint carried is kept by name) and holding a typed [`FieldValue`], so
//! the fold never looks a field up by its spelling nor a value up by its JSON shape. The order is the reference's
//! (a dict keeps first-insertion order, and replacing a value keeps its place), so the content writes the same
//! JSON bytes as the object it stands for.

use serde_json::Value;

use super::field::{Field, FieldInput, FieldValue, Shape};
use super::item::ItemKind;
use crate::json::{write_pydantic_str, Object};

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

    fn field(&self) -> Option<Field> {
        match self {
            Key::Known(field) => Some(*field),
            Key::Other(_) => None,
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Key::Known(field) => field.as_str(),
            Key::Other(name) => name,
        }
    }
}

/// An item's content: fields in first-insertion order, at most one value per key. Two contents are equal when
/// their entries are.
#[derive(Clone, Debug, Default)]
pub(crate) struct ItemContent {
    /// The kind of the item the fold is writing (`None` until the store hands the content to an edit): the fold
    /// sets only that kind's fields ([`Field::of_kind`]). Debug builds only, where it is checked.
    #[cfg(debug_assertions)]
    kind: Option<ItemKind>,
    entries: Vec<(Key, FieldValue)>,
}

impl PartialEq for ItemContent {
    fn eq(&self, other: &ItemContent) -> bool {
        self.entries == other.entries
    }
}

impl ItemContent {
    /// Empty content for an item of `kind`.
    pub(crate) fn new(kind: ItemKind) -> ItemContent {
        let mut content = ItemContent::default();
        content.edited_as(kind);
        content
    }

    /// Mark the content as an item of `kind`'s, which the fold is about to edit.
    #[cfg_attr(not(debug_assertions), allow(unused_variables))]
    pub(crate) fn edited_as(&mut self, kind: ItemKind) {
        #[cfg(debug_assertions)]
        {
            self.kind = Some(kind);
        }
    }

    /// The fold sets only fields of its item's kind.
    #[cfg_attr(not(debug_assertions), allow(unused_variables))]
    fn check_kind(&self, field: Field) {
        #[cfg(debug_assertions)]
        if let Some(kind) = self.kind {
            assert!(Field::of_kind(kind).contains(&field), "{kind:?} items hold no {field:?}");
        }
    }

    fn position(&self, field: Field) -> Option<usize> {
        self.entries.iter().position(|(key, _)| *key == Key::Known(field))
    }

    pub(crate) fn get(&self, field: Field) -> Option<&FieldValue> {
        self.position(field).map(|at| &self.entries[at].1)
    }

    /// The field's text, when it holds text.
    pub(crate) fn text(&self, field: Field) -> Option<&str> {
        self.get(field).and_then(FieldValue::as_text)
    }

    /// The field's JSON value, when it holds one (not text or a flag).
    pub(crate) fn json(&self, field: Field) -> Option<&Value> {
        match self.get(field)? {
            FieldValue::Json(value) => Some(value),
            _ => None,
        }
    }

    /// The field's JSON value to edit in place, when it holds one.
    pub(crate) fn json_mut(&mut self, field: Field) -> Option<&mut Value> {
        match self.position(field).map(|at| &mut self.entries[at].1)? {
            FieldValue::Json(value) => Some(value),
            _ => None,
        }
    }

    pub(crate) fn contains(&self, field: Field) -> bool {
        self.position(field).is_some()
    }

    /// Whether the field holds `value` (`None`: the field is absent).
    pub(crate) fn holds(&self, field: Field, value: Option<&Value>) -> bool {
        match (self.get(field), value) {
            (None, None) => true,
            (Some(own), Some(value)) => own.is(value),
            _ => false,
        }
    }

    /// Set a field: a new one goes last, an existing one keeps its place.
    fn set(&mut self, field: Field, value: FieldValue) {
        self.check_kind(field);
        match self.position(field) {
            Some(at) => self.entries[at].1 = value,
            None => self.entries.push((Key::Known(field), value)),
        }
    }

    /// Set a text field.
    pub(crate) fn set_text(&mut self, field: Field, text: impl Into<String>) {
        debug_assert_eq!(field.shape(), Shape::Text, "{field:?}");
        self.set(field, FieldValue::Text(text.into()));
    }

    /// Set a flag field.
    pub(crate) fn set_flag(&mut self, field: Field, flag: bool) {
        debug_assert_eq!(field.shape(), Shape::Flag, "{field:?}");
        self.set(field, FieldValue::Flag(flag));
    }

    /// Set a field to a JSON value, held typed when it has the field's shape.
    pub(crate) fn set_json(&mut self, field: Field, value: Value) {
        self.set(field, FieldValue::of(Some(field), value));
    }

    /// Set a field to what an event gives it.
    pub(crate) fn set_input(&mut self, field: Field, input: FieldInput<'_>) {
        match input {
            FieldInput::Text(text) => self.set_json(field, Value::String(text.into())),
            FieldInput::Object(object) => self.set_json(field, Value::Object(object.clone())),
            FieldInput::Json(value) => self.set_json(field, value.clone()),
        }
    }

    /// Set a text field unless it is already set.
    pub(crate) fn set_text_once(&mut self, field: Field, text: impl FnOnce() -> String) {
        if !self.contains(field) {
            self.set_text(field, text());
        }
    }

    /// The text of a text field to append to: set empty first when absent, and a value of another shape becomes
    /// its Python `str()` first (the reference concatenates to `str(value)`). Always `Some`.
    pub(crate) fn text_to_append(&mut self, field: Field) -> Option<&mut String> {
        debug_assert_eq!(field.shape(), Shape::Text, "{field:?}");
        self.check_kind(field);
        let at = match self.position(field) {
            Some(at) => at,
            None => {
                self.entries.push((Key::Known(field), FieldValue::Text(String::new())));
                self.entries.len() - 1
            }
        };
        let slot = &mut self.entries[at].1;
        if !matches!(slot, FieldValue::Text(_)) {
            *slot = FieldValue::Text(slot.py_str());
        }
        match slot {
            FieldValue::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The content of a JSON object, keys in its order.
    pub(crate) fn from_object(object: Object) -> ItemContent {
        let entries = object.into_iter().map(|(name, value)| {
            let key = Key::named(name);
            let value = FieldValue::of(key.field(), value);
            (key, value)
        });
        ItemContent {
            #[cfg(debug_assertions)]
            kind: None,
            entries: entries.collect(),
        }
    }

    /// The JSON object the content stands for.
    pub(crate) fn to_object(&self) -> Object {
        self.entries.iter().map(|(key, value)| (key.as_str().to_owned(), value.to_value())).collect()
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
            value.write(out);
        }
        out.push(b'}');
    }

    /// About the size of the content's JSON: exact for plain keys, text and flags, a guess for other values.
    pub(crate) fn size_hint(&self) -> usize {
        self.entries.iter().map(|(key, value)| key.as_str().len() + 4 + value.size_hint()).sum::<usize>() + 2
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
    /// keys the fold does not know or values of another shape than their field's.
    #[test]
    fn the_content_is_written_as_its_object() {
        let text = r#"{"zeta":1,"text":"a\"b\n","messageId":"m","role":5,"x":{"b":1.5e-7,"a":[null,true]},"truncated":"yes","arguments_complete":false,"metadata":"s","responseGroup":"g","k\"\u0001":"\u0001\u001f\\é東🚀\u2028\t"}"#;
        let object: Object = serde_json::from_str(text).unwrap();
        let content = ItemContent::from_object(object.clone());
        assert_eq!(content.to_json(), crate::json::to_pydantic_json(&object).unwrap());
        assert_eq!(content.to_object(), object);
        assert_eq!(content.get(Field::Text), Some(&FieldValue::Text("a\"b\n".into())));
        assert_eq!(content.get(Field::Role), Some(&FieldValue::Json(5.into())));
        assert_eq!(content.get(Field::Truncated), Some(&FieldValue::Json("yes".into())));
        assert_eq!(content.get(Field::ArgumentsComplete), Some(&FieldValue::Flag(false)));
        assert_eq!(content.get(Field::Metadata), Some(&FieldValue::Json("s".into())));
        assert_eq!(ItemContent::parse(&content.to_json()), content);
    }

    #[test]
    fn replacing_a_field_keeps_its_place_and_new_fields_go_last() {
        let mut content = ItemContent::new(ItemKind::TextMessage);
        content.set_text(Field::MessageId, "m");
        content.set_text(Field::Text, "a");
        content.set_text(Field::MessageId, "n");
        content.set_flag(Field::Truncated, true);
        content.set_text_once(Field::Text, || "b".into());
        content.set_input(Field::Role, FieldInput::Json(&Value::from(1)));
        assert_eq!(content.to_json(), r#"{"messageId":"n","text":"a","truncated":true,"role":1}"#);
        assert!(content.contains(Field::Truncated) && !content.contains(Field::Metadata));
        assert!(content.holds(Field::Role, Some(&1.into())) && content.holds(Field::Metadata, None));
        assert!(!content.holds(Field::MessageId, Some(&"m".into())) && !content.holds(Field::Role, None));
    }

    /// Appending to a value of another shape appends to its Python `str()`, as the reference concatenates.
    #[test]
    fn appending_to_another_shape_appends_to_its_python_str() {
        let object: Object = serde_json::from_str(r#"{"text":null,"arguments":true,"result":[1,"a"]}"#).unwrap();
        let mut content = ItemContent::from_object(object);
        content.text_to_append(Field::Text).unwrap().push('x');
        content.text_to_append(Field::Arguments).unwrap().push('x');
        content.text_to_append(Field::Result).unwrap().push('x');
        content.text_to_append(Field::Provider).unwrap().push('x');
        assert_eq!(content.to_json(), r#"{"text":"Nonex","arguments":"Truex","result":"[1, 'a']x","provider":"x"}"#);
    }

    /// In debug builds, the fold cannot set a field its item's kind does not hold.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "TextMessage items hold no Arguments")]
    fn a_field_of_another_kind_is_refused() {
        ItemContent::new(ItemKind::TextMessage).set_text(Field::Arguments, "{}");
    }
}
