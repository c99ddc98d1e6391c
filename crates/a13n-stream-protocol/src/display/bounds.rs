//! The display's size bounds: bounded fields, appends that keep within them, and events cut to fit.

use serde_json::Value;

use super::{CharCounts, Field, ItemContent, ToolResultContent};
use crate::fields::{agui_key, item_key, source_key};
use crate::json::{char_boundary, char_len, Object};
use crate::Event;

/// Observations larger than this (bytes of ASCII-escaped JSON) keep only their name.
pub const MAX_OBSERVATION_BYTES: usize = 32_768;
/// A message text, tool arguments or tool result keeps this many characters (code points).
pub const MAX_FIELD_CHARS: usize = 262_144;
pub(super) const TRUNCATED_PARTS_NOTICE: &str = "Result parts omitted: display size limit exceeded.";

/// What an observation keeps of a value too large to show: `{"omitted": true}`.
pub(super) fn omitted() -> Value {
    Value::Object(Object::from_iter([(item_key::OMITTED.to_owned(), Value::Bool(true))]))
}

/// A tool result's text content part: `{"type": "text", "text": text}`.
fn text_part(text: &str) -> Value {
    Value::Object(Object::from_iter([
        (agui_key::TYPE.to_owned(), Value::from(agui_key::TEXT_PART)),
        (agui_key::TEXT.to_owned(), Value::from(text)),
    ]))
}

/// Cap the payloads the observer hands on; one character over the bound survives so the fold sees truncation.
pub(super) fn bound_event(event: Event) -> Event {
    match event {
        Event::ToolCallResult(mut result) => {
            match &mut result.content {
                ToolResultContent::Text(text) => {
                    if text.len() > MAX_FIELD_CHARS && char_len(text) > MAX_FIELD_CHARS {
                        let end = char_boundary(text, MAX_FIELD_CHARS + 1);
                        text.truncate(end);
                    }
                }
                ToolResultContent::Parts(_) => {
                    let encoded = Event::ToolCallResult(result.clone()).to_json();
                    if char_len(&encoded) > MAX_FIELD_CHARS {
                        result.content = ToolResultContent::Parts(vec![text_part(TRUNCATED_PARTS_NOTICE)]);
                    }
                }
            }
            Event::ToolCallResult(result)
        }
        Event::ToolCallArgs(mut args) => {
            if args.delta.len() > MAX_FIELD_CHARS && char_len(&args.delta) > MAX_FIELD_CHARS {
                let end = char_boundary(&args.delta, MAX_FIELD_CHARS + 1);
                args.delta.truncate(end);
            }
            Event::ToolCallArgs(args)
        }
        other => other,
    }
}

/// `content[field] = value[:MAX]` (and `truncated` when cut), or the whole value for a full-content fold.
pub(super) fn set_bounded(content: &mut ItemContent, field: Field, mut value: String, full: bool) {
    if !full && value.len() > MAX_FIELD_CHARS && char_len(&value) > MAX_FIELD_CHARS {
        value.truncate(char_boundary(&value, MAX_FIELD_CHARS));
        content.set_text(field, value);
        content.set_flag(Field::Truncated, true);
        return;
    }
    content.set_text(field, value);
}

/// Append a delta to an accumulated field with the same result as bounding the concatenation, in time
/// proportional to the delta (the field's code point count is cached per item).
pub(super) fn append_bounded(
    content: &mut ItemContent,
    field: Field,
    delta: &str,
    full: bool,
    counts: &mut CharCounts,
    key: usize,
) {
    let Some(text) = content.text_to_append(field) else { return };
    if full {
        text.push_str(delta);
        return;
    }
    if text.len() + delta.len() <= MAX_FIELD_CHARS {
        // Bytes bound code points: nothing can be cut.
        text.push_str(delta);
        return;
    }
    let count_key = (key, field);
    let current = *counts.entry(count_key).or_insert_with(|| char_len(text));
    let delta_chars = char_len(delta);
    let total = current + delta_chars;
    if total <= MAX_FIELD_CHARS {
        text.push_str(delta);
        counts.insert(count_key, total);
        return;
    }
    let room = MAX_FIELD_CHARS.saturating_sub(current);
    text.push_str(&delta[..char_boundary(delta, room)]);
    counts.insert(count_key, current + room.min(delta_chars));
    content.set_flag(Field::Truncated, true);
}

/// Append argument text to a held part-delta observation event (`value.event.delta.args_delta`).
pub(super) fn append_args_delta(event: &mut Object, text: &str) {
    if let Some(Value::Object(value)) = small_field_mut(event, agui_key::VALUE) {
        append_value_args_delta(value, text);
    }
}

/// Append argument text to a part-delta observation's value (`event.delta.args_delta`).
pub(super) fn append_value_args_delta(value: &mut Object, text: &str) {
    let slot = small_field_mut(value, source_key::EVENT)
        .and_then(Value::as_object_mut)
        .and_then(|event| small_field_mut(event, source_key::DELTA))
        .and_then(Value::as_object_mut)
        .and_then(|delta| small_field_mut(delta, source_key::ARGS_DELTA));
    if let Some(Value::String(args)) = slot {
        args.push_str(text);
    }
}

/// A field of an object with few keys (a source event's), found by comparing keys in order: cheaper than
/// hashing the key for the handful a source event has, and the same field.
fn small_field_mut<'a>(object: &'a mut Object, key: &str) -> Option<&'a mut Value> {
    const SMALL: usize = 16;
    if object.len() > SMALL {
        return object.get_mut(key);
    }
    object.iter_mut().find_map(|(name, value)| (name == key).then_some(value))
}
