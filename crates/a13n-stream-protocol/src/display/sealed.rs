//! An item's content as the store holds it: live fields the fold still edits, or sealed canonical JSON text.
//!
//! Sealed text is this library's own writing, or text of the checkpoint the store was restored from that the
//! canonical recogniser accepted; either way it is written back verbatim and parses whenever it is read. A
//! restored item's text stays where the checkpoint has it (the store keeps one copy of that checkpoint), so
//! restoring neither allocates nor copies per item.

use std::ops::Range;

use super::item_content::ItemContent;
use crate::json::Object;

/// Where a sealed content's text is.
#[derive(Clone, Debug)]
enum Sealed {
    /// Written by this fold.
    Own(Box<str>),
    /// This range of the checkpoint text the store was restored from.
    Restored(Range<usize>),
}

/// Item content: live fields, or (when `sealed` is set) the canonical JSON text of them, `fields` then empty.
/// Every method that reads sealed text takes the store's restored checkpoint text (`restored`).
#[derive(Clone, Debug, Default)]
pub(super) struct Content {
    fields: ItemContent,
    sealed: Option<Sealed>,
}

impl Content {
    pub(super) fn live(fields: ItemContent) -> Content {
        Content { fields, sealed: None }
    }

    /// Content sealed as `text`, canonical JSON this fold wrote.
    pub(super) fn sealed(text: Box<str>) -> Content {
        Content { fields: ItemContent::new(), sealed: Some(Sealed::Own(text)) }
    }

    /// Content sealed as `range` of the restored checkpoint text, which must be canonical JSON there.
    pub(super) fn restored(range: Range<usize>) -> Content {
        Content { fields: ItemContent::new(), sealed: Some(Sealed::Restored(range)) }
    }

    /// The sealed text, or `None` for live content.
    fn text<'s>(&'s self, restored: &'s str) -> Option<&'s str> {
        match &self.sealed {
            None => None,
            Some(Sealed::Own(text)) => Some(text),
            Some(Sealed::Restored(range)) => Some(&restored[range.clone()]),
        }
    }

    pub(super) fn to_object(&self, restored: &str) -> Object {
        match self.text(restored) {
            None => self.fields.to_object(),
            Some(text) => serde_json::from_str(text).unwrap_or_default(),
        }
    }

    pub(super) fn seal(&mut self) {
        if self.sealed.is_none() {
            self.sealed = Some(Sealed::Own(self.fields.to_json().into_boxed_str()));
            self.fields = ItemContent::new();
        }
    }

    /// The fields to edit, reading sealed text back first.
    pub(super) fn edit(&mut self, restored: &str) -> &mut ItemContent {
        if let Some(text) = self.text(restored) {
            self.fields = ItemContent::parse(text);
            self.sealed = None;
        }
        &mut self.fields
    }

    /// The live fields, or `None` when sealed.
    pub(super) fn get(&self) -> Option<&ItemContent> {
        self.sealed.is_none().then_some(&self.fields)
    }

    /// Append the content's JSON: sealed text as it is, live fields through their writer.
    pub(super) fn write(&self, out: &mut Vec<u8>, restored: &str) {
        match self.text(restored) {
            None => self.fields.write(out),
            Some(text) => out.extend_from_slice(text.as_bytes()),
        }
    }

    /// About the size of the content's JSON: exactly, when sealed.
    pub(super) fn size_hint(&self) -> usize {
        match &self.sealed {
            None => self.fields.size_hint(),
            Some(Sealed::Own(text)) => text.len(),
            Some(Sealed::Restored(range)) => range.len(),
        }
    }
}
