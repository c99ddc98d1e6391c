//! An item's content as the store holds it: live fields the fold still edits, or sealed canonical JSON text.
//!
//! Sealed text is this library's own writing, or text of the checkpoint the store was restored from that the
//! canonical recogniser accepted; either way it is written back verbatim and parses whenever it is read. The
//! store keeps the restored items' text in one buffer, each item's copied there once, one after another (the rest
//! of the checkpoint is not kept), so restoring allocates nothing per item.

use std::ops::Range;

use super::item_content::ItemContent;
use crate::json::Object;

/// Item content: live fields the fold still edits, or the canonical JSON text of them (sealed). Every method
/// that reads sealed text takes the store's restored content text (`restored`).
#[derive(Clone, Debug)]
pub(super) enum Content {
    Live(ItemContent),
    /// Sealed as text this fold wrote.
    Own(Box<str>),
    /// Sealed as this range of the store's restored content text.
    Restored(Range<usize>),
}

impl Default for Content {
    fn default() -> Content {
        Content::Live(ItemContent::default())
    }
}

impl Content {
    /// The sealed text, or `None` for live content.
    fn text<'s>(&'s self, restored: &'s str) -> Option<&'s str> {
        match self {
            Content::Live(_) => None,
            Content::Own(text) => Some(text),
            Content::Restored(range) => Some(&restored[range.clone()]),
        }
    }

    pub(super) fn to_object(&self, restored: &str) -> Object {
        match self {
            Content::Live(fields) => fields.to_object(),
            sealed => sealed.text(restored).and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default(),
        }
    }

    pub(super) fn seal(&mut self) {
        if let Content::Live(fields) = self {
            *self = Content::Own(fields.to_json().into_boxed_str());
        }
    }

    /// The fields to edit, reading sealed text back first.
    pub(super) fn edit(&mut self, restored: &str) -> &mut ItemContent {
        if let Some(text) = self.text(restored) {
            *self = Content::Live(ItemContent::parse(text));
        }
        match self {
            Content::Live(fields) => fields,
            // Sealed text always has a reading (an empty one, were it ever unreadable).
            Content::Own(_) | Content::Restored(_) => {
                *self = Content::default();
                self.edit(restored)
            }
        }
    }

    /// The live fields, or `None` when sealed.
    pub(super) fn get(&self) -> Option<&ItemContent> {
        match self {
            Content::Live(fields) => Some(fields),
            _ => None,
        }
    }

    /// Append the content's JSON: sealed text as it is, live fields through their writer.
    pub(super) fn write(&self, out: &mut Vec<u8>, restored: &str) {
        match self {
            Content::Live(fields) => fields.write(out),
            sealed => out.extend_from_slice(sealed.text(restored).unwrap_or_default().as_bytes()),
        }
    }

    /// About the size of the content's JSON: exactly, when sealed.
    pub(super) fn size_hint(&self) -> usize {
        match self {
            Content::Live(fields) => fields.size_hint(),
            Content::Own(text) => text.len(),
            Content::Restored(range) => range.len(),
        }
    }
}
