//! Compact storage of display items.
//!
//! A long run accumulates many items, most of them observations that no later event can change. Holding those as
//! JSON value trees costs about ten times their text, so an item is *sealed* into its canonical JSON text (exactly
//! the bytes a checkpoint carries) as soon as it is immutable, and written back verbatim on export. Items that can
//! still change (messages, tool calls, the observation collecting streamed arguments) stay live. Stream positions
//! are numbers, and change tracking holds item positions rather than copies of ids.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::checkpoint_text::RawItem;
use super::item_content::{Field, ItemContent};
use super::{ContentRef, Item, ItemKind, ItemRef, ItemState};
use crate::error::InputError;
use crate::json::{write_pydantic_str, Object};
use crate::time::UtcTime;

/// Code point counts of accumulated fields by (item position, field), so appending never rescans a text.
pub(super) type CharCounts = FxHashMap<(usize, Field), usize>;

/// An item's stream position as written in `first_stream_id` / `last_stream_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum StreamId {
    /// `attempt-sequence`.
    At { attempt: u64, sequence: u64 },
    /// Any other text a restored checkpoint carried.
    Text(Box<str>),
}

impl StreamId {
    fn parse(text: &str) -> StreamId {
        let parsed = text.split_once('-').and_then(|(attempt, sequence)| {
            let canonical = |digits: &str| !digits.is_empty() && (digits == "0" || !digits.starts_with('0'));
            if !canonical(attempt) || !canonical(sequence) {
                return None;
            }
            Some(StreamId::At { attempt: attempt.parse().ok()?, sequence: sequence.parse().ok()? })
        });
        parsed.unwrap_or_else(|| StreamId::Text(text.into()))
    }
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamId::At { attempt, sequence } => write!(f, "{attempt}-{sequence}"),
            StreamId::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for StreamId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            StreamId::At { attempt, sequence } => {
                let mut text = String::with_capacity(24);
                text.push_str(itoa::Buffer::new().format(*attempt));
                text.push('-');
                text.push_str(itoa::Buffer::new().format(*sequence));
                serializer.serialize_str(&text)
            }
            StreamId::Text(text) => serializer.serialize_str(text),
        }
    }
}

/// Item content: live fields, or (when `sealed` is set) the canonical JSON text of them, `fields` then empty.
/// Sealed text is only ever this library's own writing or text the scanner found canonical, so it is written
/// back verbatim and parses whenever it is read.
#[derive(Clone, Debug, Default)]
struct Content {
    fields: ItemContent,
    sealed: Option<Box<str>>,
}

impl Content {
    fn live(fields: ItemContent) -> Content {
        Content { fields, sealed: None }
    }

    fn sealed(raw: Box<str>) -> Content {
        Content { fields: ItemContent::new(), sealed: Some(raw) }
    }

    fn to_object(&self) -> Object {
        match &self.sealed {
            None => self.fields.to_object(),
            Some(raw) => serde_json::from_str(raw).unwrap_or_default(),
        }
    }

    fn seal(&mut self) {
        if self.sealed.is_none() {
            self.sealed = Some(self.fields.to_json().into_boxed_str());
            self.fields = ItemContent::new();
        }
    }

    /// The fields to edit, reading sealed text back first.
    fn edit(&mut self) -> &mut ItemContent {
        if let Some(raw) = self.sealed.take() {
            self.fields = ItemContent::parse(&raw);
        }
        &mut self.fields
    }

    /// The live fields, or `None` when sealed.
    fn get(&self) -> Option<&ItemContent> {
        self.sealed.is_none().then_some(&self.fields)
    }
}

impl Content {
    /// Append the content's JSON: sealed text as it is, live fields through their writer.
    fn write(&self, out: &mut Vec<u8>) {
        match &self.sealed {
            None => self.fields.write(out),
            Some(raw) => out.extend_from_slice(raw.as_bytes()),
        }
    }
}

/// One item as stored; its id is the map key.
#[derive(Clone, Debug)]
struct Stored {
    ordinal: u64,
    kind: ItemKind,
    state: ItemState,
    first: StreamId,
    last: StreamId,
    started_at: UtcTime,
    ended_at: Option<UtcTime>,
    content: Content,
    content_refs: IndexMap<String, ContentRef>,
}

impl Stored {
    /// An item as a checkpoint describes it: (ordinal, kind, state), (first, last) stream ids, (started, ended).
    fn committed(
        (ordinal, kind, state): (u64, ItemKind, ItemState),
        (first, last): (&str, &str),
        (started_at, ended_at): (UtcTime, Option<UtcTime>),
        content: Content,
        content_refs: IndexMap<String, ContentRef>,
    ) -> Stored {
        Stored {
            ordinal,
            kind,
            state,
            first: StreamId::parse(first),
            last: StreamId::parse(last),
            started_at,
            ended_at,
            content,
            content_refs,
        }
    }
}

/// The items of a fold and their change tracking.
#[derive(Debug, Default)]
pub(super) struct Store {
    items: IndexMap<String, Stored, FxBuildHasher>,
    pub(super) next: u64,
    changed: FxHashSet<usize>,
    checkpoint_changed: FxHashSet<usize>,
    char_counts: CharCounts,
}

/// Whether an item can be sealed at once: observations never change after their event, except the one that
/// collects streamed tool arguments (sealed by the fold when its stream ends).
fn sealable(kind: ItemKind) -> bool {
    kind == ItemKind::Observation
}

impl Store {
    /// Storage holding committed items (all marked changed), the next new item taking ordinal `next`.
    /// `open` names an item that must stay live (the observation still collecting arguments).
    pub(super) fn new(items: Vec<Item>, next: u64, open: Option<&str>) -> Store {
        let mut store = Store { next, ..Store::default() };
        for item in items {
            let mut content = Content::live(ItemContent::from_object(item.content));
            if sealable(item.kind) && open != Some(item.id.as_str()) {
                content.seal();
            }
            let stored = Stored::committed(
                (item.ordinal, item.kind, item.state),
                (&item.first_stream_id, &item.last_stream_id),
                (item.started_at, item.ended_at),
                content,
                item.content_refs,
            );
            store.insert_committed(item.id, stored);
        }
        store
    }

    /// Add an item that storage already holds (so it is marked changed for both trackings).
    fn insert_committed(&mut self, id: String, stored: Stored) {
        let (index, _) = self.items.insert_full(id, stored);
        self.changed.insert(index);
        self.checkpoint_changed.insert(index);
    }

    /// About the size of the checkpoint's items JSON: sealed content exactly, live content and each item's other
    /// fields estimated, so that writing the checkpoint into one buffer seldom grows it.
    pub(super) fn export_size_hint(&self) -> usize {
        /// An item's fields other than its content: id, ordinal, kind, state, positions and times.
        const HEADER: usize = 256;
        let content = |item: &Stored| match &item.content.sealed {
            Some(raw) => raw.len(),
            None => item.content.fields.size_hint(),
        };
        self.items.values().map(|item| HEADER + content(item)).sum()
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// Storage from a checkpoint's items read as raw JSON ([`RawItem`]): immutable observations keep their text as it is
    /// (when canonical), so restoring does not rebuild and re-serialize them.
    pub(super) fn from_raw(items: Vec<RawItem<'_>>, next: u64, open: Option<&str>) -> Result<Store, InputError> {
        let mut store = Store { next, ..Store::default() };
        store.items.reserve(items.len());
        store.changed.reserve(items.len());
        store.checkpoint_changed.reserve(items.len());
        for (position, item) in items.into_iter().enumerate() {
            let text = item.content;
            // Canonical object text is kept as it is, whatever the item: exported verbatim, and read back into an
            // object only if a later event changes the item (most restored items never change again).
            let content = if item.canonical && text.starts_with('{') {
                Content::sealed(text.into())
            } else {
                let object: Object = serde_json::from_str(text).map_err(|e| {
                    InputError::decoding(format!("items.{position}.content"), format!("expected an object: {e}"), e)
                })?;
                let mut content = Content::live(ItemContent::from_object(object));
                if sealable(item.kind) && open != Some(item.id.as_str()) {
                    content.seal();
                }
                content
            };
            let stored = Stored::committed(
                (item.ordinal, item.kind, item.state),
                (&item.first_stream_id, &item.last_stream_id),
                (item.started_at, item.ended_at),
                content,
                item.content_refs,
            );
            store.insert_committed(item.id, stored);
        }
        Ok(store)
    }

    pub(super) fn state(&self, key: &str) -> Option<ItemState> {
        self.items.get(key).map(|item| item.state)
    }

    /// A live item's kind and content (`None` for absent or sealed items).
    pub(super) fn live(&self, key: &str) -> Option<(ItemKind, &ItemContent)> {
        let item = self.items.get(key)?;
        Some((item.kind, item.content.get()?))
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.items.contains_key(key)
    }

    /// A live item's content (`None` for absent or sealed items).
    pub(super) fn live_content(&self, key: &str) -> Option<&ItemContent> {
        self.live(key).map(|(_, content)| content)
    }

    /// Seal an item whose content no later event can change.
    pub(super) fn seal(&mut self, key: &str) {
        if let Some(item) = self.items.get_mut(key) {
            item.content.seal();
        }
    }

    fn materialize(key: &str, item: &Stored) -> Item {
        Item {
            id: key.to_owned(),
            ordinal: item.ordinal,
            kind: item.kind,
            state: item.state,
            first_stream_id: item.first.to_string(),
            last_stream_id: item.last.to_string(),
            started_at: item.started_at,
            ended_at: item.ended_at,
            content: item.content.to_object(),
            content_refs: item.content_refs.clone(),
        }
    }

    /// Every item, materialized, in order of creation.
    pub(super) fn items(&self) -> impl Iterator<Item = Item> + '_ {
        self.items.iter().map(|(key, item)| Store::materialize(key, item))
    }

    pub(super) fn item(&self, key: &str) -> Option<Item> {
        self.items.get(key).map(|item| Store::materialize(key, item))
    }

    /// Ids of items changed since the live tracking was last cleared.
    pub(super) fn changed_ids(&self) -> Vec<String> {
        let mut indices: Vec<usize> = self.changed.iter().copied().collect();
        indices.sort_unstable();
        indices.into_iter().filter_map(|index| self.items.get_index(index).map(|(key, _)| key.clone())).collect()
    }

    pub(super) fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Items changed since the last capture, by ordinal; the checkpoint tracking restarts.
    pub(super) fn take_checkpoint_changed(&mut self) -> Vec<Item> {
        let mut items: Vec<Item> = self
            .checkpoint_changed
            .iter()
            .filter_map(|&index| self.items.get_index(index))
            .map(|(key, item)| Store::materialize(key, item))
            .collect();
        items.sort_by_key(|item| item.ordinal);
        self.checkpoint_changed.clear();
        items
    }

    /// Update an existing item as [`Store::update`] does but keeping its state, and return what an [`ItemRef`]
    /// reports of it; `None` (and nothing changed) when there is no such item.
    pub(super) fn touch(
        &mut self,
        key: &str,
        kind: ItemKind,
        position: StreamId,
        at: UtcTime,
        update: impl FnOnce(&mut ItemContent, &mut CharCounts, usize),
    ) -> Option<Touched<'_>> {
        let index = self.items.get_index_of(key)?;
        Some(self.change(index, kind, None, position, at, update))
    }

    /// Record `change` to `key`'s item (created empty when new), editing its content in place with `update`
    /// (handed the field code point counts and the item's position).
    pub(super) fn update(
        &mut self,
        key: String,
        change: Change,
        update: impl FnOnce(&mut ItemContent, &mut CharCounts, usize),
    ) -> ItemRef {
        self.put(key, change, None, update).1
    }

    /// Record `change` to `key`'s item, setting its whole content; `seal` stores it as text at once (no event can
    /// change it again).
    pub(super) fn replace(&mut self, key: String, change: Change, content: ItemContent, seal: bool) -> ItemRef {
        let (index, reference) = self.put(key, change, Some(content), |_, _, _| {});
        if seal {
            self.items[index].content.seal();
        }
        reference
    }

    fn put(
        &mut self,
        key: String,
        Change { kind, state, position, at }: Change,
        replace: Option<ItemContent>,
        update: impl FnOnce(&mut ItemContent, &mut CharCounts, usize),
    ) -> (usize, ItemRef) {
        let index = self.place(&key, kind, state, replace.map(Content::live), &position, at);
        let changed = self.change(index, kind, Some(state), position, at, update);
        let (ordinal, response_group, failure) =
            (changed.ordinal, changed.response_group.map(str::to_owned), changed.failure.cloned());
        (index, ItemRef { id: key, kind, state, ordinal: Some(ordinal), response_group, failure, memory_sources: None })
    }

    /// Record `change` to an immutable item whose content is already its canonical JSON text: nothing is parsed
    /// or edited. The reference reports no response group or failure, as a sealed content's are not read.
    pub(super) fn put_sealed(&mut self, key: String, change: Change, content: Box<str>) -> ItemRef {
        let Change { kind, state, position, at } = change;
        let index = self.place(&key, kind, state, Some(Content::sealed(content)), &position, at);
        let ordinal = self.settle(index, kind, Some(state), position, at).ordinal;
        ItemRef {
            id: key,
            kind,
            state,
            ordinal: Some(ordinal),
            response_group: None,
            failure: None,
            memory_sources: None,
        }
    }

    /// The position of `key`'s item: an existing one takes `content` when given (its code point counts start
    /// over); a new one is created with it (or empty) at the next ordinal.
    fn place(
        &mut self,
        key: &str,
        kind: ItemKind,
        state: ItemState,
        content: Option<Content>,
        position: &StreamId,
        at: UtcTime,
    ) -> usize {
        if let Some(index) = self.items.get_index_of(key) {
            if let Some(content) = content {
                self.items[index].content = content;
                self.char_counts.retain(|(position, _), _| *position != index);
            }
            return index;
        }
        let stored = Stored {
            ordinal: self.next,
            kind,
            state,
            first: position.clone(),
            last: position.clone(),
            started_at: at,
            ended_at: None,
            content: content.unwrap_or_default(),
            content_refs: IndexMap::new(),
        };
        self.next += 1;
        self.items.insert_full(key.to_owned(), stored).0
    }

    /// Apply one change to the item at `index`: edit its content, set its kind, state (`None` keeps it) and
    /// latest position, and mark it changed.
    fn change(
        &mut self,
        index: usize,
        kind: ItemKind,
        state: Option<ItemState>,
        position: StreamId,
        at: UtcTime,
        update: impl FnOnce(&mut ItemContent, &mut CharCounts, usize),
    ) -> Touched<'_> {
        update(self.items[index].content.edit(), &mut self.char_counts, index);
        self.settle(index, kind, state, position, at)
    }

    /// Set the item's kind, state (`None` keeps it) and latest position, and mark it changed.
    fn settle(
        &mut self,
        index: usize,
        kind: ItemKind,
        state: Option<ItemState>,
        position: StreamId,
        at: UtcTime,
    ) -> Touched<'_> {
        let item = &mut self.items[index];
        let state = state.unwrap_or(item.state);
        item.kind = kind;
        item.state = state;
        item.last = position;
        item.ended_at = matches!(state, ItemState::Completed | ItemState::Failed).then_some(at);
        self.changed.insert(index);
        self.checkpoint_changed.insert(index);
        let content = item.content.get();
        Touched {
            ordinal: item.ordinal,
            state,
            response_group: content.and_then(|c| c.get(Field::ResponseGroup)).and_then(Value::as_str),
            failure: content.and_then(|c| c.get(Field::Failure)).and_then(Value::as_object),
        }
    }
}

/// One change to an item: what it becomes (its kind and state) and the event that changes it (that event's
/// position and time).
pub(super) struct Change {
    pub(super) kind: ItemKind,
    pub(super) state: ItemState,
    pub(super) position: StreamId,
    pub(super) at: UtcTime,
}

/// What an [`ItemRef`] reports of an item [`Store::touch`] updated.
pub(super) struct Touched<'a> {
    pub(super) ordinal: u64,
    pub(super) state: ItemState,
    pub(super) response_group: Option<&'a str>,
    pub(super) failure: Option<&'a Object>,
}

impl StreamId {
    /// Append the JSON string of the position.
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            StreamId::At { attempt, sequence } => {
                // The first attempt (every host's, and most folds') is written as one constant.
                match attempt {
                    0 => out.extend_from_slice(b"\"0-"),
                    _ => {
                        out.push(b'"');
                        out.extend_from_slice(itoa::Buffer::new().format(*attempt).as_bytes());
                        out.push(b'-');
                    }
                }
                out.extend_from_slice(itoa::Buffer::new().format(*sequence).as_bytes());
                out.push(b'"');
            }
            StreamId::Text(text) => write_pydantic_str(out, text),
        }
    }
}

impl Store {
    /// Append the checkpoint's `items` array, handing `out` to `flush` whenever it holds more than a chunk (so a
    /// writer never needs a copy of the whole checkpoint).
    pub(super) fn write_items(
        &self,
        out: &mut Vec<u8>,
        mut flush: impl FnMut(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        const CHUNK: usize = 1 << 16;
        out.push(b'[');
        for (index, (key, item)) in self.items.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_item(out, key, item);
            if out.len() >= CHUNK {
                flush(out)?;
            }
        }
        out.push(b']');
        Ok(())
    }
}

/// One item's checkpoint JSON: the fields of [`Item`] in declaration order, `content_refs` only when present.
fn write_item(out: &mut Vec<u8>, key: &str, item: &Stored) {
    out.extend_from_slice(br#"{"id":"#);
    write_pydantic_str(out, key);
    out.extend_from_slice(br#","ordinal":"#);
    out.extend_from_slice(itoa::Buffer::new().format(item.ordinal).as_bytes());
    for (name, text) in [(&br#","kind":""#[..], item.kind.as_str()), (br#"","state":""#, item.state.as_str())] {
        out.extend_from_slice(name);
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(br#"","first_stream_id":"#);
    item.first.write_json(out);
    out.extend_from_slice(br#","last_stream_id":"#);
    item.last.write_json(out);
    out.extend_from_slice(br#","started_at":"#);
    let from = out.len();
    item.started_at.write_json(out);
    let started = from..out.len();
    out.extend_from_slice(br#","ended_at":"#);
    match item.ended_at {
        // Most items end when they start (an observation): the same text again.
        Some(at) if at == item.started_at => out.extend_from_within(started),
        Some(at) => at.write_json(out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","content":"#);
    item.content.write(out);
    if !item.content_refs.is_empty() {
        out.extend_from_slice(br#","content_refs":"#);
        // Writing into memory cannot fail.
        drop(crate::json::to_pydantic_writer(out, &item.content_refs));
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_are_written_as_json_strings() {
        for (id, text) in [
            (StreamId::At { attempt: 0, sequence: 15 }, r#""0-15""#),
            (StreamId::At { attempt: 0, sequence: 0 }, r#""0-0""#),
            (StreamId::At { attempt: 3, sequence: 18_446_744_073_709_551_615 }, r#""3-18446744073709551615""#),
            (StreamId::parse("01-\"2"), r#""01-\"2""#),
        ] {
            let mut out = Vec::new();
            id.write_json(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }

    #[test]
    fn stream_ids_parse_only_canonical_positions() {
        assert_eq!(StreamId::parse("0-15"), StreamId::At { attempt: 0, sequence: 15 });
        for odd in ["01-2", "1-", "-1", "a-b", "1-2-3", ""] {
            assert_eq!(StreamId::parse(odd).to_string(), odd);
            assert!(matches!(StreamId::parse(odd), StreamId::Text(_)), "{odd}");
        }
    }
}
