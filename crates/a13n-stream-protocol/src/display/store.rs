//! Compact storage of display items.
//!
//! A long run accumulates many items, most of them observations that no later event can change. Holding those as
//! JSON value trees costs about ten times their text, so an item is *sealed* into its canonical JSON text (exactly
//! the bytes a checkpoint carries) as soon as it is immutable, and written back verbatim on export. Items that can
//! still change (messages, tool calls, the observation collecting streamed arguments) stay live. Stream positions
//! are numbers, and change tracking holds item positions rather than copies of ids.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap};

use serde_json::Value;

use super::changes::Changes;
use super::field::Field;
use super::item_content::ItemContent;
use super::sealed::Content;
use super::stream_id::StreamId;
use super::{ContentRef, Item, ItemKind, ItemRef, ItemState};
use crate::json::{write_pydantic_str, Object};
use crate::time::{TimeWriter, UtcTime};

/// Code point counts of accumulated fields by (item position, field), so appending never rescans a text.
pub(super) type CharCounts = FxHashMap<(usize, Field), usize>;

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
    /// Host-owned values, boxed: almost every item has none, and the map's empty form is larger than a box.
    content_refs: Option<Box<IndexMap<String, ContentRef>>>,
}

/// An item's fields besides its id, content and references, as a checkpoint gives them.
#[derive(Debug)]
pub(super) struct Header {
    pub(super) ordinal: u64,
    pub(super) kind: ItemKind,
    pub(super) state: ItemState,
    pub(super) first: StreamId,
    pub(super) last: StreamId,
    pub(super) started_at: UtcTime,
    pub(super) ended_at: Option<UtcTime>,
}

impl Header {
    /// A header whose stream positions are given as text (as a decoded item holds them).
    pub(super) fn from_text(
        ordinal: u64,
        kind: ItemKind,
        state: ItemState,
        (first, last): (&str, &str),
        started_at: UtcTime,
        ended_at: Option<UtcTime>,
    ) -> Header {
        let (first, last) = (StreamId::parse(first), StreamId::parse(last));
        Header { ordinal, kind, state, first, last, started_at, ended_at }
    }
}

impl Stored {
    /// An item as a checkpoint describes it.
    fn committed(header: Header, content: Content, content_refs: Option<IndexMap<String, ContentRef>>) -> Stored {
        let Header { ordinal, kind, state, first, last, started_at, ended_at } = header;
        let content_refs = content_refs.filter(|refs| !refs.is_empty()).map(Box::new);
        Stored { ordinal, kind, state, first, last, started_at, ended_at, content, content_refs }
    }
}

/// The items of a fold and their change tracking.
#[derive(Debug, Default)]
pub(super) struct Store {
    /// Boxed: a map grown by doubling moves its entries into new memory, and a box moves as a pointer where an
    /// item would move whole (a 7,059-line run holds about 3,000 items).
    items: IndexMap<String, Box<Stored>, FxBuildHasher>,
    pub(super) next: u64,
    changed: Changes,
    checkpoint_changed: Changes,
    char_counts: CharCounts,
    /// The canonical content text of the items restored from a checkpoint, which their content refers to.
    restored: String,
}

/// Whether an item can be sealed at once: observations never change after their event, except the one that
/// collects streamed tool arguments (sealed by the fold when its stream ends).
fn sealable(kind: ItemKind) -> bool {
    kind == ItemKind::Observation
}

/// A committed item's decoded content: sealed at once when no event can change it, that is when it is sealable and
/// not the item the continuation leaves `open`.
pub(super) fn committed_content(object: Object, kind: ItemKind, id: &str, open: Option<&str>) -> Content {
    let mut content = Content::Live(ItemContent::from_object(object));
    if sealable(kind) && open != Some(id) {
        content.seal();
    }
    content
}

impl Store {
    /// Storage holding committed items (all marked changed), the next new item taking ordinal `next`.
    /// `open` names an item that must stay live (the observation still collecting arguments).
    pub(super) fn new(items: Vec<Item>, next: u64, open: Option<&str>) -> Store {
        let mut store = Store { next, ..Store::default() };
        for item in items {
            let content = committed_content(item.content, item.kind, &item.id, open);
            let positions = (item.first_stream_id.as_str(), item.last_stream_id.as_str());
            let header =
                Header::from_text(item.ordinal, item.kind, item.state, positions, item.started_at, item.ended_at);
            store.items.insert(item.id, Box::new(Stored::committed(header, content, Some(item.content_refs))));
        }
        store.mark_committed();
        store
    }

    /// An empty store to restore about `capacity` committed items into ([`Store::push_committed`], then
    /// [`Store::committed_from`]).
    pub(super) fn with_capacity(capacity: usize) -> Store {
        let mut store = Store::default();
        store.items.reserve(capacity);
        store
    }

    /// Add a committed item (or replace the one with its id, keeping that one's place): its position, and
    /// whether it replaced one.
    pub(super) fn push_committed(
        &mut self,
        id: String,
        header: Header,
        content: Content,
        content_refs: Option<IndexMap<String, ContentRef>>,
    ) -> (usize, bool) {
        let (index, replaced) = self.items.insert_full(id, Box::new(Stored::committed(header, content, content_refs)));
        (index, replaced.is_some())
    }

    /// The id and kind of the item at `index`.
    pub(super) fn id_and_kind(&self, index: usize) -> Option<(&str, ItemKind)> {
        self.items.get_index(index).map(|(id, item)| (id.as_str(), item.kind))
    }

    /// Give the committed item at `index` its content.
    pub(super) fn set_content(&mut self, index: usize, content: Content) {
        self.items[index].content = content;
    }

    /// The items pushed so far as a store's committed items (all marked changed), the next new item taking
    /// ordinal `next`; `restored` is the content text restored items refer to.
    pub(super) fn committed_from(mut self, next: u64, restored: String) -> Store {
        self.next = next;
        self.restored = restored;
        self.mark_committed();
        self
    }

    /// Mark every item changed for both trackings: the items of a store just built from a checkpoint.
    fn mark_committed(&mut self) {
        self.changed.mark_first(self.items.len());
        self.checkpoint_changed.mark_first(self.items.len());
    }

    /// About the size of the checkpoint's items JSON: sealed content exactly, live content and each item's other
    /// fields estimated, so that writing the checkpoint into one buffer seldom grows it.
    pub(super) fn export_size_hint(&self) -> usize {
        /// An item's fields other than its content: id, ordinal, kind, state, positions and times.
        const HEADER: usize = 256;
        self.items.values().map(|item| HEADER + item.content.size_hint()).sum()
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    pub(super) fn state(&self, key: &str) -> Option<ItemState> {
        self.items.get(key).map(|item| item.state)
    }

    /// A live item's kind and content (`None` for absent or sealed items).
    pub(super) fn live(&self, key: &str) -> Option<(ItemKind, &ItemContent)> {
        let item = self.items.get(key)?;
        Some((item.kind, item.content.get()?))
    }

    /// Seal an item whose content no later event can change.
    pub(super) fn seal(&mut self, key: &str) {
        if let Some(item) = self.items.get_mut(key) {
            item.content.seal();
        }
    }

    fn materialize(&self, key: &str, item: &Stored) -> Item {
        Item {
            id: key.to_owned(),
            ordinal: item.ordinal,
            kind: item.kind,
            state: item.state,
            first_stream_id: item.first.to_string(),
            last_stream_id: item.last.to_string(),
            started_at: item.started_at,
            ended_at: item.ended_at,
            content: item.content.to_object(&self.restored),
            content_refs: item.content_refs.as_deref().cloned().unwrap_or_default(),
        }
    }

    /// Whether the store holds an item of this id.
    pub(super) fn contains(&self, key: &str) -> bool {
        self.items.contains_key(key)
    }

    /// Take items out of the store, as a host retiring them does (ids it does not hold are passed over): how many
    /// left. The items after them keep their ordinals, and `next` stays where it is, so a new item never reuses a
    /// retired one's ordinal. One pass over the store, however many leave.
    pub(super) fn remove<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>) -> usize {
        let mut removed: Vec<usize> = keys.into_iter().filter_map(|key| self.items.get_index_of(key)).collect();
        removed.sort_unstable();
        removed.dedup();
        if removed.is_empty() {
            return 0;
        }
        let mut index = 0;
        let mut next_removed = removed.iter().peekable();
        self.items.retain(|_, _| {
            let keep = next_removed.next_if_eq(&&index).is_none();
            index += 1;
            keep
        });
        self.changed.remove(&removed);
        self.checkpoint_changed.remove(&removed);
        self.char_counts = std::mem::take(&mut self.char_counts)
            .into_iter()
            .filter_map(|((at, field), count)| match removed.binary_search(&at) {
                Ok(_) => None,
                Err(before) => Some(((at - before, field), count)),
            })
            .collect();
        removed.len()
    }

    /// Every item, materialized, in order of creation.
    pub(super) fn items(&self) -> impl Iterator<Item = Item> + '_ {
        self.items.iter().map(|(key, item)| self.materialize(key, item))
    }

    pub(super) fn item(&self, key: &str) -> Option<Item> {
        self.items.get(key).map(|item| self.materialize(key, item))
    }

    /// Ids of items changed since the live tracking was last cleared.
    pub(super) fn changed_ids(&self) -> Vec<String> {
        let mut indices: Vec<usize> = self.changed.iter().collect();
        indices.sort_unstable();
        indices.into_iter().filter_map(|index| self.items.get_index(index).map(|(key, _)| key.clone())).collect()
    }

    pub(super) fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Mark an item changed for live publication (or unmark it): whether the item exists.
    pub(super) fn set_changed(&mut self, key: &str, changed: bool) -> bool {
        let Some(index) = self.items.get_index_of(key) else { return false };
        if changed {
            self.changed.mark(index);
        } else {
            self.changed.unmark(index);
        }
        true
    }

    /// Items changed since the last capture, by ordinal; the checkpoint tracking restarts.
    pub(super) fn take_checkpoint_changed(&mut self) -> Vec<Item> {
        let mut items: Vec<Item> = self
            .checkpoint_changed
            .iter()
            .filter_map(|index| self.items.get_index(index))
            .map(|(key, item)| self.materialize(key, item))
            .collect();
        items.sort_by_key(|item| item.ordinal);
        self.checkpoint_changed.clear();
        items
    }

    /// Update an existing item as [`Store::update`] does (`state` `None` keeps its state), and return what an
    /// [`ItemRef`] reports of it without copying its id; `None` (and nothing changed) when there is no such item.
    pub(super) fn touch(
        &mut self,
        key: &str,
        kind: ItemKind,
        state: Option<ItemState>,
        position: StreamId,
        at: UtcTime,
        update: impl FnOnce(&mut ItemContent, &mut CharCounts, usize),
    ) -> Option<Touched<'_>> {
        let index = self.items.get_index_of(key)?;
        Some(self.change(index, kind, state, position, at, update))
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
        let index = self.place(&key, kind, state, replace.map(Content::Live), &position, at);
        let changed = self.change(index, kind, Some(state), position, at, update);
        let (ordinal, response_group, failure) =
            (changed.ordinal, changed.response_group.map(str::to_owned), changed.failure.cloned());
        (index, ItemRef { id: key, kind, state, ordinal: Some(ordinal), response_group, failure, memory_sources: None })
    }

    /// Record `change` to an immutable item whose content is already its canonical JSON text: nothing is parsed
    /// or edited. The reference reports no response group or failure, as a sealed content's are not read.
    pub(super) fn put_sealed(&mut self, key: String, change: Change, content: Box<str>) -> ItemRef {
        let Change { kind, state, position, at } = change;
        let index = self.place(&key, kind, state, Some(Content::Own(content)), &position, at);
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
            content_refs: None,
        };
        self.next += 1;
        self.items.insert_full(key.to_owned(), Box::new(stored)).0
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
        let content = self.items[index].content.edit(&self.restored);
        content.edited_as(kind);
        update(content, &mut self.char_counts, index);
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
        self.changed.mark(index);
        self.checkpoint_changed.mark(index);
        let content = item.content.get();
        Touched {
            ordinal: item.ordinal,
            state,
            response_group: content.and_then(|c| c.text(Field::ResponseGroup)),
            failure: content.and_then(|c| c.json(Field::Failure)).and_then(Value::as_object),
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
        let mut times = TimeWriter::default();
        for (index, (key, item)) in self.items.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_item(out, key, item, &self.restored, &mut times);
            if out.len() >= CHUNK {
                flush(out)?;
            }
        }
        out.push(b']');
        Ok(())
    }
}

/// One item's checkpoint JSON: the fields of [`Item`] in declaration order, `content_refs` only when present.
fn write_item(out: &mut Vec<u8>, key: &str, item: &Stored, restored: &str, times: &mut TimeWriter) {
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
    times.write_json(item.started_at, out);
    let started = from..out.len();
    out.extend_from_slice(br#","ended_at":"#);
    match item.ended_at {
        // Most items end when they start (an observation): the same text again.
        Some(at) if at == item.started_at => out.extend_from_within(started),
        Some(at) => times.write_json(at, out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","content":"#);
    item.content.write(out, restored);
    if let Some(refs) = item.content_refs.as_deref().filter(|refs| !refs.is_empty()) {
        out.extend_from_slice(br#","content_refs":"#);
        // Writing into memory cannot fail.
        drop(crate::json::to_pydantic_writer(out, refs));
    }
    out.push(b'}');
}
