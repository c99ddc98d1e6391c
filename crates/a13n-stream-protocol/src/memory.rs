//! Payload-free evidence of automatic memory delivery, attached to the assistant message that followed it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Object;
use crate::lax::{lax_bool, lax_int};

/// A recalled record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSource {
    /// The record's identity.
    pub id: String,
    /// The record content's SHA-256.
    pub sha256: String,
}

/// A file delivered as context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSource {
    /// The file's path.
    pub path: String,
    /// The delivered content's SHA-256.
    pub sha256: String,
    /// The delivered size.
    pub bytes: u64,
    /// Whether the delivery was truncated.
    #[serde(default)]
    pub truncated: bool,
}

/// One automatic delivery in this Run; the content stays in the memory or execution archive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySource {
    /// `record` (recall) or `file` (context).
    pub kind: String,
    /// The memory's name.
    pub memory: String,
    /// Set by a managed Host from its mounts, never by the model.
    #[serde(default)]
    pub memory_id: Option<String>,
    /// `recalled`, `failed`, `timeout`, `full`, `changes`, `unchanged`, `omitted` or `unavailable`.
    pub status: String,
    /// Recalled records.
    #[serde(default)]
    pub records: Vec<RecordSource>,
    /// Delivered files.
    #[serde(default)]
    pub files: Vec<FileSource>,
    /// A change-feed position.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Whether the source list was truncated.
    #[serde(default)]
    pub sources_truncated: bool,
}

const STATUSES: [&str; 8] = ["recalled", "failed", "timeout", "full", "changes", "unchanged", "omitted", "unavailable"];
const NEED_SOURCES: [&str; 5] = ["recalled", "full", "changes", "unchanged", "omitted"];

/// The sources a `memory_recall` / `memory_context` payload reports, or `None` when the payload lacks evidence
/// or does not validate (missing evidence never becomes an empty result).
pub fn memory_sources(payload: &Object) -> Option<Vec<MemorySource>> {
    let kind = match payload.get("type").and_then(Value::as_str)? {
        "memory_recall" => "record",
        "memory_context" => "file",
        _ => return None,
    };
    let (status_key, list_key) = if kind == "record" { ("recall", "records") } else { ("context", "files") };
    let memories = payload.get("memories")?.as_array()?;
    let mut sources = Vec::with_capacity(memories.len());
    for memory in memories {
        let memory = memory.as_object()?;
        let status = memory.get(status_key)?.as_str()?;
        if NEED_SOURCES.contains(&status) && !memory.contains_key(list_key) {
            return None;
        }
        if !STATUSES.contains(&status) {
            return None;
        }
        sources.push(MemorySource {
            kind: kind.into(),
            memory: memory.get("memory")?.as_str()?.to_owned(),
            memory_id: optional_string(memory.get("memory_id"))?,
            status: status.into(),
            records: list(memory.get("records"), record)?,
            files: list(memory.get("files"), file)?,
            cursor: optional_string(memory.get("cursor"))?,
            sources_truncated: boolean(memory.get("sources_truncated"))?,
        });
    }
    Some(sources)
}

fn optional_string(value: Option<&Value>) -> Option<Option<String>> {
    match value {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(text)) => Some(Some(text.clone())),
        Some(_) => None,
    }
}

/// A flag as the model's lax `bool` reads it; `false` when absent.
fn boolean(value: Option<&Value>) -> Option<bool> {
    value.map_or(Some(false), lax_bool)
}

fn list<T>(value: Option<&Value>, item: fn(&Object) -> Option<T>) -> Option<Vec<T>> {
    match value {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(|v| v.as_object().and_then(item)).collect(),
        Some(_) => None,
    }
}

fn only_keys(object: &Object, keys: &[&str]) -> bool {
    object.keys().all(|key| keys.contains(&key.as_str()))
}

fn record(object: &Object) -> Option<RecordSource> {
    if !only_keys(object, &["id", "sha256"]) {
        return None;
    }
    Some(RecordSource {
        id: object.get("id")?.as_str()?.to_owned(),
        sha256: object.get("sha256")?.as_str()?.to_owned(),
    })
}

fn file(object: &Object) -> Option<FileSource> {
    if !only_keys(object, &["path", "sha256", "bytes", "truncated"]) {
        return None;
    }
    Some(FileSource {
        path: object.get("path")?.as_str()?.to_owned(),
        sha256: object.get("sha256")?.as_str()?.to_owned(),
        // The model's `int` at least 0, read in its lax mode (`"10"` and `10.0` are 10).
        bytes: u64::try_from(lax_int(object.get("bytes")?)?).ok()?,
        truncated: boolean(object.get("truncated"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_evidence_is_not_an_empty_result() {
        let payload = json!({"type": "memory_recall", "memories": [{"memory": "m", "recall": "recalled"}]});
        assert_eq!(memory_sources(payload.as_object().unwrap()), None);
        let payload = json!({"type": "memory_recall", "memories": [{"memory": "m", "recall": "failed"}]});
        assert_eq!(memory_sources(payload.as_object().unwrap()).unwrap()[0].status, "failed");
        let payload = json!({"type": "memory_context", "memories": [{"memory": "f", "context": "full",
            "files": [{"path": "a", "sha256": "b", "bytes": -1}]}]});
        assert_eq!(memory_sources(payload.as_object().unwrap()), None);
    }

    /// Found by helper-54: the model validates a file's `bytes` and flags in Pydantic's lax mode, so `"10"` and
    /// `10.0` are 10 and `"yes"` is true; the sources were dropped.
    #[test]
    fn sizes_and_flags_are_read_as_the_models_lax_mode_reads_them() {
        for (bytes, truncated) in
            [(json!("10"), json!("yes")), (json!(10.0), json!(1.0)), (json!(" +1_0 "), json!(true))]
        {
            let payload = json!({"type": "memory_context", "memories": [{"memory": "f", "context": "full",
                "files": [{"path": "a", "sha256": "b", "bytes": bytes, "truncated": truncated}]}]});
            let sources = memory_sources(payload.as_object().unwrap()).expect("sources");
            assert_eq!((sources[0].files[0].bytes, sources[0].files[0].truncated), (10, true));
        }
        for bytes in [json!(10.5), json!("1e1"), json!(-1), json!("-1"), json!(null)] {
            let payload = json!({"type": "memory_context", "memories": [{"memory": "f", "context": "full",
                "files": [{"path": "a", "sha256": "b", "bytes": bytes}]}]});
            assert_eq!(memory_sources(payload.as_object().unwrap()), None, "{bytes}");
        }
    }
}
