//! One description of a lane's carried-through value, two outputs: a lane describes the JSON it produces once,
//! as calls on a [`JsonSink`], and gets either its bytes ([`Bytes`], what the observed line carries) or its tree
//! ([`Tree`], what the display holds when it must edit the value later) without writing one and parsing it back.
//! Both outputs follow the same calls, so they cannot drift apart.

use serde_json::Value;

use crate::json::{write_pydantic_str, Object};
use crate::time::SourceTime;

/// An object key a lane writes: its name, and its JSON spelling with the colon (`"name":`), so the bytes take one
/// copy. Declared with the field names in [`fields`](crate::fields).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key {
    name: &'static str,
    quoted: &'static str,
}

impl Key {
    /// `quoted` must be `name` in quotes followed by a colon (the `fields` declarations write it so).
    pub(crate) const fn new(name: &'static str, quoted: &'static str) -> Key {
        Key { name, quoted }
    }
}

/// The calls that describe a JSON value made of objects, strings, integers and `null`s.
pub(crate) trait JsonSink {
    /// Start an object (the value of the last key, or the whole value).
    fn open(&mut self);
    /// The next key of the current object.
    fn key(&mut self, key: Key);
    /// A string, or `null` for `None`.
    fn text(&mut self, text: Option<&str>);
    /// A string that is one of this library's names (plain ASCII that JSON writes as it is, such as an event
    /// type or an `a13n.*` name).
    fn name(&mut self, name: &'static str);
    /// An integer.
    fn integer(&mut self, number: i64);
    /// A source time, as Python's `isoformat` writes it.
    fn time(&mut self, time: SourceTime);
    /// End the current object.
    fn close(&mut self);
}

/// JSON bytes, as the writers write them (compact, Pydantic's string escapes).
pub(crate) struct Bytes<'a>(pub(crate) &'a mut Vec<u8>);

impl JsonSink for Bytes<'_> {
    fn open(&mut self) {
        self.0.push(b'{');
    }

    fn key(&mut self, key: Key) {
        if self.0.last() != Some(&b'{') {
            self.0.push(b',');
        }
        self.0.extend_from_slice(key.quoted.as_bytes());
    }

    fn text(&mut self, text: Option<&str>) {
        match text {
            Some(text) => write_pydantic_str(self.0, text),
            None => self.0.extend_from_slice(b"null"),
        }
    }

    fn name(&mut self, name: &'static str) {
        debug_assert!(name.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'));
        self.0.push(b'"');
        self.0.extend_from_slice(name.as_bytes());
        self.0.push(b'"');
    }

    fn time(&mut self, time: SourceTime) {
        // The text is plain ASCII that JSON writes as it is.
        self.0.push(b'"');
        time.write_isoformat(self.0);
        self.0.push(b'"');
    }

    fn integer(&mut self, number: i64) {
        self.0.extend_from_slice(itoa::Buffer::new().format(number).as_bytes());
    }

    fn close(&mut self) {
        self.0.push(b'}');
    }
}

/// The value as a tree: what parsing the [`Bytes`] of the same calls gives. The fields of open objects wait on
/// one stack and each object is built once it closes, at its final size (growing a map key by key would rebuild
/// its index several times).
#[derive(Default)]
pub(crate) struct Tree {
    /// Open objects, innermost last: the key each goes under in its parent, and where its fields start.
    open: Vec<(Option<&'static str>, usize)>,
    /// The fields of the open objects, outermost first.
    fields: Vec<(String, Value)>,
    key: Option<&'static str>,
    done: Option<Value>,
}

impl Tree {
    /// The finished value (`null` if the calls described none).
    pub(crate) fn into_value(self) -> Value {
        self.done.unwrap_or(Value::Null)
    }

    fn put(&mut self, value: Value) {
        match (self.open.is_empty(), self.key.take()) {
            (false, Some(key)) => self.fields.push((key.to_owned(), value)),
            _ => self.done = Some(value),
        }
    }
}

impl JsonSink for Tree {
    fn open(&mut self) {
        let key = self.key.take();
        self.open.push((key, self.fields.len()));
    }

    fn key(&mut self, key: Key) {
        self.key = Some(key.name);
    }

    fn text(&mut self, text: Option<&str>) {
        self.put(text.map_or(Value::Null, |text| Value::String(text.to_owned())));
    }

    fn name(&mut self, name: &'static str) {
        self.put(Value::String(name.to_owned()));
    }

    fn integer(&mut self, number: i64) {
        self.put(Value::from(number));
    }

    fn time(&mut self, time: SourceTime) {
        self.put(Value::String(time.isoformat()));
    }

    fn close(&mut self) {
        if let Some((key, start)) = self.open.pop() {
            // A repeated key keeps its first place and takes the last value, as inserting into a map does.
            let object: Object = self.fields.drain(start..).collect();
            self.key = key;
            self.put(Value::Object(object));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(sink: &mut impl JsonSink) {
        let key = |name: &'static str| Key::new(name, Box::leak(format!("\"{name}\":").into_boxed_str()));
        sink.open();
        sink.key(key("a"));
        sink.text(Some("x\"\n\u{1}é"));
        sink.key(key("n"));
        sink.name("a13n.pydantic_ai.part_delta");
        sink.key(key("b"));
        sink.open();
        sink.key(key("c"));
        sink.integer(-7);
        sink.key(key("d"));
        sink.text(None);
        sink.key(key("e"));
        sink.open();
        sink.close();
        sink.close();
        sink.key(key("f"));
        sink.integer(i64::MAX);
        sink.key(key("t"));
        sink.time(SourceTime::parse("2026-11-29T12:00:00.0012-05:30").unwrap());
        sink.close();
    }

    /// The tree of a description is what parsing its bytes gives, keys in order.
    #[test]
    fn the_tree_is_the_parsed_bytes() {
        let mut out = Vec::new();
        describe(&mut Bytes(&mut out));
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            r#"{"a":"x\"\n\u0001é","n":"a13n.pydantic_ai.part_delta","b":{"c":-7,"d":null,"e":{}},"f":9223372036854775807,"t":"2026-11-29T12:00:00.001200-05:30"}"#
        );
        let mut tree = Tree::default();
        describe(&mut tree);
        let tree = tree.into_value();
        assert_eq!(tree, serde_json::from_str::<Value>(&text).unwrap());
        assert_eq!(crate::json::to_pydantic_json(&tree).unwrap(), text);
    }
}
