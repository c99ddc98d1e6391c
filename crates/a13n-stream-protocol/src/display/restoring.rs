//! Building a store from a checkpoint's items as they are read, whichever way they are read (scanned in one pass,
//! decoded by serde, or given one by one as a host stores them).
//!
//! Canonical object text is kept as it is: exported verbatim, and read back into fields only if a later event
//! changes the item (most restored items never change again). Other content is decoded into fields, and whether
//! it is sealed depends on the item the continuation leaves open, which a checkpoint names after its items: so
//! that content waits for [`Restoring::finish`].

use std::ops::Range;

use indexmap::IndexMap;

use super::sealed::Content;
use super::store::{committed_content, Header, Store};
use super::ContentRef;
use crate::error::InputError;
use crate::json::Object;

/// An item's content as a checkpoint reader found it.
#[derive(Debug)]
pub(super) enum RawContent<'a> {
    /// Canonical object text at this range of the checkpoint text given to [`Restoring::new`].
    InCheckpoint(Range<usize>),
    /// Canonical object text from elsewhere.
    Canonical(&'a str),
    /// Any other text (still to be decoded).
    Other(&'a str),
}

impl<'a> RawContent<'a> {
    /// Content text as a reader found it: canonical object text is kept (as a range of the checkpoint when it
    /// starts at `at` of it), anything else decoded.
    pub(super) fn read(text: &'a str, canonical: bool, at: Option<usize>) -> RawContent<'a> {
        match (canonical && text.starts_with('{'), at) {
            (true, Some(at)) => RawContent::InCheckpoint(at..at + text.len()),
            (true, None) => RawContent::Canonical(text),
            (false, _) => RawContent::Other(text),
        }
    }
}

/// Content still to be decoded: the item's place in the checkpoint and in the store, its text, and whether a later
/// item with the same id replaced it.
#[derive(Debug)]
struct Undecoded<'a> {
    position: usize,
    index: usize,
    text: &'a str,
    replaced: bool,
}

/// A store being built from a checkpoint's items, in checkpoint order.
#[derive(Debug)]
pub(super) struct Restoring<'a> {
    store: Store,
    checkpoint: &'a str,
    /// The canonical content text of the items whose content is in `checkpoint`, copied one after another: the
    /// text the store keeps for them, without the rest of the checkpoint.
    kept: String,
    /// Items pushed so far.
    pushed: usize,
    /// The position of the first item with an ordinal below 1.
    bad_ordinal: Option<usize>,
    undecoded: Vec<Undecoded<'a>>,
}

impl<'a> Restoring<'a> {
    /// A store for about `capacity` items, whose [`RawContent::InCheckpoint`] ranges are of `checkpoint`.
    pub(super) fn new(checkpoint: &'a str, capacity: usize) -> Restoring<'a> {
        Restoring {
            store: Store::with_capacity(capacity),
            checkpoint,
            kept: String::new(),
            pushed: 0,
            bad_ordinal: None,
            undecoded: Vec::new(),
        }
    }

    /// Add the next item of the checkpoint.
    pub(super) fn push(
        &mut self,
        id: String,
        header: Header,
        content: RawContent<'a>,
        content_refs: Option<IndexMap<String, ContentRef>>,
    ) {
        let position = self.pushed;
        self.pushed += 1;
        if header.ordinal < 1 && self.bad_ordinal.is_none() {
            self.bad_ordinal = Some(position);
        }
        let (content, text) = match content {
            RawContent::InCheckpoint(range) => {
                let text = self.checkpoint.get(range).unwrap_or("{}");
                if self.kept.capacity() == 0 {
                    // Enough for every content still to come: one allocation, never moved.
                    self.kept.reserve(self.checkpoint.len());
                }
                let start = self.kept.len();
                self.kept.push_str(text);
                (Content::Restored(start..self.kept.len()), None)
            }
            RawContent::Canonical(text) => (Content::Own(text.into()), None),
            RawContent::Other(text) => (Content::default(), Some(text)),
        };
        let (index, replaced) = self.store.push_committed(id, header, content, content_refs);
        if replaced {
            self.undecoded.iter_mut().filter(|item| item.index == index).for_each(|item| item.replaced = true);
        }
        if let Some(text) = text {
            self.undecoded.push(Undecoded { position, index, text, replaced: false });
        }
    }

    /// The store, its next new item taking ordinal `next`; `open` names the item the continuation leaves open
    /// (its content stays live). Errors name the first field at fault, as a full decode would.
    pub(super) fn finish(mut self, next: u64, open: Option<&str>) -> Result<Store, InputError> {
        if next < 1 {
            return Err(InputError::new("continuation.next_ordinal", "must be at least 1"));
        }
        if let Some(position) = self.bad_ordinal {
            return Err(InputError::new(format!("items.{position}.ordinal"), "must be at least 1"));
        }
        for item in &self.undecoded {
            let object: Object = serde_json::from_str(item.text).map_err(|e| {
                InputError::decoding(format!("items.{}.content", item.position), format!("expected an object: {e}"), e)
            })?;
            if item.replaced {
                continue;
            }
            let Some((id, kind)) = self.store.id_and_kind(item.index) else { continue };
            let content = committed_content(object, kind, id, open);
            self.store.set_content(item.index, content);
        }
        Ok(self.store.committed_from(next, self.kept))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::display::DisplayFold;

    fn item(id: &str, ordinal: u64, content: &str) -> String {
        format!(
            r#"{{"id":"{id}","ordinal":{ordinal},"kind":"observation","state":"completed","first_stream_id":"0-1","last_stream_id":"0-1","started_at":"2026-11-29T12:00:00Z","ended_at":null,"content":{content}}}"#
        )
    }

    fn contents(items: &[String], layout_kept: bool) -> Result<Vec<Value>, String> {
        let continuation = r#"{"run_id":"r","position":{"attempt":0,"sequence":1},"next_ordinal":3}"#;
        let mut text = format!(r#"{{"items":[{}],"continuation":{continuation}}}"#, items.join(","));
        if !layout_kept {
            text = text.replacen(r#"{"items""#, r#"{ "items""#, 1);
        }
        let fold = DisplayFold::restore_json(&text, false, None).map_err(|error| error.to_string())?;
        Ok(fold.export().items.into_iter().map(|item| Value::Object(item.content)).collect())
    }

    /// A later item with an earlier one's id takes its place, whatever either's content is, and content that does
    /// not decode is an error even when a later item replaces it.
    #[test]
    fn a_repeated_id_keeps_the_last_content() {
        for layout_kept in [true, false] {
            let replaced = [item("itm_1", 1, r#"{"x":1.5}"#), item("itm_1", 2, r#"{"y":1}"#)];
            assert_eq!(contents(&replaced, layout_kept).unwrap(), [json!({"y": 1})]);
            let undecodable = [item("itm_1", 1, "[1]"), item("itm_1", 2, r#"{"y":1}"#)];
            let error = contents(&undecodable, layout_kept).unwrap_err();
            assert!(error.contains("items.0.content") && error.contains("expected an object"), "{error}");
            let ordinal = [item("itm_1", 1, "[1]"), item("itm_2", 0, r#"{"y":1}"#)];
            let error = contents(&ordinal, layout_kept).unwrap_err();
            assert!(error.contains("items.1.ordinal"), "{error}");
        }
    }
}
