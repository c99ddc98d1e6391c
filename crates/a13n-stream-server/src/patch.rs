//! What a live `/display` frame sends of an item the subscriber already holds: the item's new state and
//! position, the text its content fields grew by, and the fields that changed otherwise, so that a frame costs
//! what the batch added, not what the item already held.
//!
//! A patch is `{"id", "state", "last_stream_id", "ended_at", "append"?: {field: suffix}, "set"?: {field: value}}`.
//! Applied to the previous version of the item (the one the subscriber holds at the batch's start), it gives the
//! new version exactly: `append` extends string fields in place, `set` replaces fields or adds them at the end,
//! in the new item's key order. Anything else (a field removed, host content references) sends the whole item.

use a13n_stream_protocol::display::event_json;
use serde_json::{Map, Value};

/// The item fields a patch carries whole, besides `id`.
const CARRIED: [&str; 3] = ["state", "last_stream_id", "ended_at"];
/// The item fields that never change once the item exists.
const FIXED: [&str; 5] = ["id", "ordinal", "kind", "first_stream_id", "started_at"];

/// The patch that turns item JSON `old` into `new`, or `None` when `new` must be sent whole.
pub(crate) fn item_patch(old: &str, new: &str) -> Option<String> {
    let (Value::Object(old), Value::Object(new)) =
        (serde_json::from_str::<Value>(old).ok()?, serde_json::from_str::<Value>(new).ok()?)
    else {
        return None;
    };
    let expected_keys = FIXED.iter().chain(&CARRIED).chain(["content"].iter());
    let unexpected = |item: &Map<String, Value>| item.keys().any(|key| !expected_keys.clone().any(|k| k == key));
    if unexpected(&old) || unexpected(&new) || FIXED.iter().any(|k| old.get(*k) != new.get(*k)) {
        return None;
    }
    let (Some(Value::Object(before)), Some(Value::Object(after))) = (old.get("content"), new.get("content")) else {
        return None;
    };
    // Every key is kept, in its place; new keys come after them.
    if after.len() < before.len() || !before.keys().eq(after.keys().take(before.len())) {
        return None;
    }
    let (mut append, mut set) = (Map::new(), Map::new());
    for (key, value) in after {
        match (before.get(key), value) {
            (Some(previous), _) if previous == value => {}
            (Some(Value::String(previous)), Value::String(text)) if text.starts_with(previous.as_str()) => {
                append.insert(key.clone(), Value::String(text[previous.len()..].to_owned()));
            }
            _ => {
                set.insert(key.clone(), value.clone());
            }
        }
    }
    let mut patch = Map::new();
    patch.insert("id".into(), new.get("id")?.clone());
    for key in CARRIED {
        patch.insert(key.into(), new.get(key).cloned().unwrap_or(Value::Null));
    }
    if !append.is_empty() {
        patch.insert("append".into(), Value::Object(append));
    }
    if !set.is_empty() {
        patch.insert("set".into(), Value::Object(set));
    }
    Some(event_json(&patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(state: &str, last: &str, content: &str) -> String {
        format!(
            r#"{{"id":"i","ordinal":1,"kind":"text_message","state":"{state}","first_stream_id":"0-1","last_stream_id":"{last}","started_at":"2026-11-29T12:00:00Z","ended_at":null,"content":{content}}}"#
        )
    }

    #[test]
    fn a_growing_text_is_sent_as_what_it_grew_by() {
        let old = item("in_progress", "0-2", r#"{"messageId":"m","text":"Hel"}"#);
        let new = item("in_progress", "0-3", r#"{"messageId":"m","text":"Hello","arguments_complete":true}"#);
        assert_eq!(
            item_patch(&old, &new).unwrap(),
            r#"{"id":"i","state":"in_progress","last_stream_id":"0-3","ended_at":null,"append":{"text":"lo"},"set":{"arguments_complete":true}}"#
        );
    }

    #[test]
    fn reordered_or_removed_fields_and_host_references_send_the_whole_item() {
        let old = item("in_progress", "0-2", r#"{"a":"x","b":"y"}"#);
        assert_eq!(item_patch(&old, &item("in_progress", "0-3", r#"{"b":"y","a":"x"}"#)), None);
        assert_eq!(item_patch(&old, &item("in_progress", "0-3", r#"{"a":"x"}"#)), None);
        // A new key before kept ones, and host references on the old version only, send the whole item.
        assert_eq!(item_patch(&old, &item("in_progress", "0-3", r#"{"n":1,"a":"x","b":"y"}"#)), None);
        let old_refs = old.replace(r#""content""#, r#""content_refs":{},"content""#);
        assert_eq!(item_patch(&old_refs, &item("in_progress", "0-3", r#"{"a":"x","b":"y"}"#)), None);
        let with_refs = item("in_progress", "0-3", r#"{"a":"x","b":"y"}"#)
            .replace(r#""content""#, r#""content_refs":{},"content""#);
        assert_eq!(item_patch(&old, &with_refs), None);
        // A string that is not extended is set.
        let patch = item_patch(&old, &item("completed", "0-3", r#"{"a":"z","b":"y"}"#)).unwrap();
        assert!(patch.ends_with(r#""set":{"a":"z"}}"#), "{patch}");
    }
}
