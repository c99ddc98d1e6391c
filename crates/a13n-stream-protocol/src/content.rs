//! Payload-free tool results.
//!
//! A tool result is presented as text, unless it holds native content (image, audio, video or document URLs,
//! binary data, uploaded files, text content), which becomes ordered AG-UI content parts. Binary payloads are
//! described (media type, size) and never carried. In the JSON source form native content is recognised by the
//! shape its dump has: a `kind` discriminator together with that kind's defining field.

use std::borrow::Cow;

use serde_json::{json, Value};

use crate::agui::ToolResultContent;
use crate::error::InputError;
use crate::fields::source_key;
use crate::json::{finite_numbers, Object, PyDumps, PyNumber};
use crate::names;
use crate::pydantic::python_type;

/// The metadata key under which a lowered tool result marks its execution value.
const TOOL_CONTENT_METADATA_KEY: &str = names::TOOL_CONTENT_METADATA;

/// A native content value as dumped, and the presentation metadata it carries.
struct Native<'a> {
    value: &'a Object,
    kind: &'a str,
    /// `ContentMetadata.display` (annotated content items and text content may hide themselves).
    display: bool,
}

/// Recognise a dumped native content value (possibly wrapped in an annotated content item).
fn native(value: &Value) -> Option<Native<'_>> {
    let object = value.as_object()?;
    if object.len() == 2 {
        if let (Some(inner), Some(Value::Object(metadata))) = (object.get("value"), object.get("metadata")) {
            if metadata.contains_key("display") {
                if let Some(item) = native_value(inner) {
                    let display = metadata.get("display").and_then(Value::as_bool).unwrap_or(true);
                    return Some(Native { display, ..item });
                }
                if inner.is_string() {
                    return None;
                }
            }
        }
    }
    native_value(value)
}

fn native_value(value: &Value) -> Option<Native<'_>> {
    let object = value.as_object()?;
    let kind = object.get("kind")?.as_str()?;
    let defining = match kind {
        "image-url" | "audio-url" | "video-url" | "document-url" => "url",
        "binary" => "data",
        "uploaded-file" => "file_id",
        "text-content" => "content",
        "cache-point" => "kind",
        _ => return None,
    };
    if !object.contains_key(defining) {
        return None;
    }
    let display = if kind == "text-content" {
        object.get("metadata").and_then(|m| m.get("display")).and_then(Value::as_bool).unwrap_or(true)
    } else {
        true
    };
    Some(Native { value: object, kind, display })
}

/// What an input projection yields: text, or a payload-free media description.
enum Projection {
    Text(String),
    Media(Object),
}

/// Describe one native value without its payload; `None` for values that present nothing (cache points).
fn project(item: &Native<'_>) -> Option<Projection> {
    let object = item.value;
    let mut media = Object::new();
    match item.kind {
        "text-content" => {
            return Some(Projection::Text(object.get("content").and_then(Value::as_str).unwrap_or("").to_owned()))
        }
        "cache-point" => return None,
        "binary" => {
            media.insert("kind".into(), item.kind.into());
            media.insert("media_type".into(), object.get("media_type").cloned().unwrap_or(Value::Null));
            let size = object.get("data").and_then(Value::as_str).map_or(0, base64_decoded_len);
            media.insert("size_bytes".into(), size.into());
            media.insert("payload_omitted".into(), true.into());
        }
        "uploaded-file" => {
            media.insert("kind".into(), item.kind.into());
            media.insert("file_id".into(), object.get("file_id").cloned().unwrap_or(Value::Null));
            media.insert("provider_name".into(), object.get("provider_name").cloned().unwrap_or(Value::Null));
            media.insert("media_type".into(), object.get("media_type").cloned().unwrap_or(Value::Null));
        }
        _ => {
            media.insert("kind".into(), item.kind.into());
            let url = object.get("url").and_then(Value::as_str).unwrap_or("");
            if url.starts_with("https://") || url.starts_with("http://") {
                media.insert("url".into(), url.into());
            } else {
                media.insert("payload_omitted".into(), true.into());
            }
            if let Some(Value::String(media_type)) = object.get("media_type") {
                media.insert("media_type".into(), media_type.clone().into());
            }
        }
    }
    Some(Projection::Media(media))
}

/// The length of the bytes a standard base64 text decodes to.
fn base64_decoded_len(text: &str) -> usize {
    let body = text.trim_end_matches('=');
    let symbols = body.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    symbols * 3 / 4
}

/// Whether a tool result's part presents as a `TOOL_CALL_RESULT`: a `tool-return` whose outcome, when given as
/// text, is `success`. Every other result (a retry prompt, a failure, a denial) is carried through as it is and
/// fails its call. The general path, the fold's rules and the tool-return lane all ask this.
pub(crate) fn presents_tool_result(part_kind: Option<&str>, outcome: Option<&str>) -> bool {
    part_kind == Some(source_key::TOOL_RETURN) && outcome.unwrap_or(source_key::SUCCESS) == source_key::SUCCESS
}

/// The value a settled tool call presents: the content, or for a lowered result (its metadata marks where its
/// execution value is) `content[result_index]` as Python indexes the native content: a list or a string by an
/// integer (a boolean is one; a negative one counts from the end; a string's item is its code point at that
/// place), a dict by its key (an integer key is a string in JSON, so an integer index reads the key it is written
/// as). An index Python would refuse or not find is an input error. The metadata may be any JSON value (the part's
/// field is `Any`): the marker is looked for with Python's `in`, so other metadata is no lowered result unless `in`
/// finds the key in it (a string holding it, a list holding it) or refuses to look (a number), which Python
/// refuses with a `TypeError`, an input error here.
pub(crate) fn tool_execution_value<'a>(
    content: &'a Value,
    metadata: Option<&Value>,
) -> Result<Cow<'a, Value>, InputError> {
    let refused = |message: String| Err(InputError::new("part.metadata", message));
    let marker = match metadata {
        None | Some(Value::Null) => None,
        Some(Value::Object(metadata)) => metadata.get(TOOL_CONTENT_METADATA_KEY),
        Some(Value::String(text)) if text.contains(TOOL_CONTENT_METADATA_KEY) => {
            return refused("string indices must be integers, not 'str'".into());
        }
        Some(Value::Array(items)) if items.iter().any(|item| item.as_str() == Some(TOOL_CONTENT_METADATA_KEY)) => {
            return refused("list indices must be integers or slices, not str".into());
        }
        Some(Value::String(_) | Value::Array(_)) => None,
        Some(other) => return refused(format!("argument of type '{}' is not iterable", python_type(other))),
    };
    let Some(marker) = marker else {
        return Ok(Cow::Borrowed(content));
    };
    let index = marker.get("result_index").unwrap_or(&Value::Null);
    let missing = || InputError::new("part.content", format!("no execution value at result_index {index}"));
    if let Value::Object(entries) = content {
        let key = match index {
            Value::String(key) => Cow::Borrowed(key.as_str()),
            Value::Number(number) => match PyNumber::of_number(number) {
                PyNumber::Int(digits) => Cow::Owned(digits.to_owned()),
                PyNumber::Float(_) => return Err(missing()),
            },
            _ => return Err(missing()),
        };
        return entries.get(&*key).map(Cow::Borrowed).ok_or_else(missing);
    }
    let position = match index {
        Value::Bool(flag) => Some(i64::from(*flag)),
        // An integer past 64 bits is past the end of any list.
        Value::Number(number) => match PyNumber::of_number(number) {
            PyNumber::Int(digits) => digits.parse().ok(),
            PyNumber::Float(_) => return Err(not_an_index()),
        },
        _ => return Err(not_an_index()),
    };
    let at = |length: usize| {
        let position = position?;
        let length = i64::try_from(length).ok()?;
        let at = if position < 0 { length + position } else { position };
        (0..length).contains(&at).then_some(at as usize)
    };
    match content {
        Value::Array(items) => at(items.len()).map(|at| Cow::Borrowed(&items[at])),
        Value::String(text) => {
            at(text.chars().count()).and_then(|at| text.chars().nth(at)).map(|c| Cow::Owned(c.to_string().into()))
        }
        _ => None,
    }
    .ok_or_else(missing)
}

/// A `result_index` Python cannot index a list or a string by (the reference raises `TypeError`).
fn not_an_index() -> InputError {
    InputError::wrong_type("part.metadata.a13n.tool-content.result_index", "expected an integer")
}

/// Replace native content inside a JSON value by its payload-free description.
pub(crate) fn public_tool_value(value: &Value) -> Value {
    if let Some(item) = native(value) {
        return match project(&item) {
            Some(Projection::Text(text)) if item.display => Value::String(text),
            Some(Projection::Media(media)) if item.display => Value::Object(media),
            _ => json!({"payload_omitted": true}),
        };
    }
    match value {
        Value::Object(object) => {
            Value::Object(object.iter().map(|(key, item)| (key.clone(), public_tool_value(item))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(public_tool_value).collect()),
        other => other.clone(),
    }
}

/// Text for a non-native value: strings as they are, anything else as sorted compact JSON.
fn text_of(value: &Value) -> Result<String, InputError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        other => sorted_text(&public_tool_value(other)),
    }
}

/// `value` as sorted compact JSON, which the Harness's JSON projection refuses to write with a number Python reads
/// as infinite (`1e400`): the reference raises `ValueError`.
fn sorted_text(value: &Value) -> Result<String, InputError> {
    if !finite_numbers(value) {
        return Err(InputError::new("part.content", "JSON numbers must be finite"));
    }
    Ok(PyDumps::SORTED_TEXT.dumps(value))
}

fn text_part(text: String) -> Value {
    json!({"type": "text", "text": text})
}

/// Project a tool's execution value as AG-UI tool-result content; an error (at `part.content`) where a value
/// written as JSON text holds a number Python reads as infinite, which the reference refuses.
pub fn tool_result_content(value: &Value) -> Result<ToolResultContent, InputError> {
    let single = std::slice::from_ref(value);
    let values = value.as_array().map_or(single, Vec::as_slice);
    if !values.iter().any(|item| native(item).is_some()) {
        return Ok(ToolResultContent::Text(text_of(value)?));
    }
    let mut parts = Vec::with_capacity(values.len());
    for item in values {
        let Some(native) = native(item) else {
            match item {
                Value::String(text) => parts.push(text_part(text.clone())),
                other => parts.push(text_part(text_of(other)?)),
            }
            continue;
        };
        if !native.display {
            continue;
        }
        let media = match project(&native) {
            None => continue,
            Some(Projection::Text(text)) => {
                parts.push(text_part(text));
                continue;
            }
            Some(Projection::Media(media)) => media,
        };
        let mime = media.get("media_type").and_then(Value::as_str);
        let source = if let Some(url) = media.get("url").and_then(Value::as_str) {
            let mut source = json!({"type": "url", "value": url});
            if let Some(mime) = mime {
                source["mimeType"] = mime.into();
            }
            source
        } else if let Some(file_id) = media.get("file_id").and_then(Value::as_str) {
            let mut source = json!({"type": "file", "value": file_id});
            if let Some(provider) = media.get("provider_name").and_then(Value::as_str) {
                source["provider"] = provider.into();
            }
            if let Some(mime) = mime {
                source["mimeType"] = mime.into();
            }
            source
        } else {
            parts.push(text_part(sorted_text(&Value::Object(media))?));
            continue;
        };
        let kind = media.get("kind").and_then(Value::as_str).unwrap_or("");
        let mime = mime.unwrap_or("");
        let part_type = if kind == "image-url" || mime.starts_with("image/") {
            "image"
        } else if kind == "audio-url" || mime.starts_with("audio/") {
            "audio"
        } else if kind == "video-url" || mime.starts_with("video/") {
            "video"
        } else {
            "document"
        };
        parts.push(json!({"type": part_type, "source": source}));
    }
    Ok(ToolResultContent::Parts(parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `content[result_index]` as Python reads it (a sweep against the reference found strings, negative indexes
    /// and dicts refused); what Python cannot index is refused.
    #[test]
    fn a_lowered_results_value_is_indexed_as_python_indexes() {
        let read = |content: Value, index: Value| {
            let metadata = json!({ TOOL_CONTENT_METADATA_KEY: { "result_index": index } });
            tool_execution_value(&content, Some(&metadata)).map(Cow::into_owned)
        };
        let found = [
            (json!("héllo😀"), json!(-1), json!("😀")),
            (json!("ab"), json!(true), json!("b")),
            (json!(["a", "b", "c"]), json!(-3), json!("a")),
            (json!(["a", "b"]), json!(false), json!("a")),
            (json!({"k": 1, "2": 3}), json!("k"), json!(1)),
            (json!({"k": 1, "2": 3}), json!(2), json!(3)),
        ];
        for (content, index, value) in found {
            assert_eq!(read(content.clone(), index.clone()).unwrap(), value, "{content}[{index}]");
        }
        let refused = [
            (json!("ab"), json!(2)),
            (json!(["a"]), json!(-2)),
            (json!(["a"]), json!(0.0)),
            (json!(["a"]), serde_json::from_str("18446744073709551616").unwrap()),
            (json!(["a"]), json!("0")),
            (json!({"k": 1}), json!("j")),
            (json!(7), json!(0)),
            (json!(null), json!(0)),
        ];
        for (content, index) in refused {
            assert!(read(content.clone(), index.clone()).is_err(), "{content}[{index}]");
        }
    }

    #[test]
    fn plain_values_become_sorted_text() {
        let value = json!({"city": "東京", "a": [1, 2.0]});
        assert_eq!(
            tool_result_content(&value).unwrap(),
            ToolResultContent::Text(r#"{"a":[1,2.0],"city":"東京"}"#.into())
        );
        assert_eq!(tool_result_content(&json!("done")).unwrap(), ToolResultContent::Text("done".into()));
        assert_eq!(tool_result_content(&Value::Null).unwrap(), ToolResultContent::Text("null".into()));
    }

    #[test]
    fn native_media_becomes_parts_without_payloads() {
        let value = json!(["A chart:",
            {"url": "https://example.com/chart.png", "force_download": false, "vendor_metadata": null,
             "kind": "image-url", "media_type": "image/png", "identifier": "c198f8"},
            {"data": "iVBORy4uLi4=", "media_type": "image/png", "vendor_metadata": null, "kind": "binary",
             "identifier": "a7ae49"}]);
        let ToolResultContent::Parts(parts) = tool_result_content(&value).unwrap() else { panic!("expected parts") };
        assert_eq!(parts[0], json!({"type": "text", "text": "A chart:"}));
        assert_eq!(
            parts[1],
            json!({"type": "image", "source": {"type": "url", "value": "https://example.com/chart.png", "mimeType": "image/png"}})
        );
        assert_eq!(
            parts[2],
            json!({"type": "text", "text": r#"{"kind":"binary","media_type":"image/png","payload_omitted":true,"size_bytes":8}"#})
        );
    }

    /// Found by helper-54: the Harness's JSON projection refuses a number Python reads as infinite where a value is
    /// written as text (the reference raises `ValueError: JSON numbers must be finite`); this wrote `Infinity`.
    #[test]
    fn a_value_written_as_text_holds_only_finite_numbers() {
        let number = |literal: &str| serde_json::from_str::<Value>(literal).unwrap();
        let media = r#"{"kind":"image-url","url":"https://example.com/a.png","media_type":"image/png"}"#;
        for refused in [r#"{"a":1e400}"#.to_owned(), "[1e400]".into(), format!(r#"[{media},{{"x":-1e400}}]"#)] {
            let error = tool_result_content(&number(&refused)).unwrap_err();
            assert_eq!(error.to_string(), "part.content: JSON numbers must be finite", "{refused}");
        }
        for kept in [r#""1e400""#.to_owned(), r#"{"a":1e300}"#.into(), format!("[{media}]")] {
            assert!(tool_result_content(&number(&kept)).is_ok(), "{kept}");
        }
    }
}
