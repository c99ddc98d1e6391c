//! Compact storage of display items.
//!
//! A long run accumulates many items, most of them observations that no later event can change. Holding those as
//! JSON value trees costs about ten times their text, so an item is *sealed* into its canonical JSON text (exactly
//! the bytes a checkpoint carries) as soon as it is immutable, and written back verbatim on export. Items that can
//! still change (messages, tool calls, the observation collecting streamed arguments) stay live. Stream positions
//! are numbers, and change tracking holds item positions rather than copies of ids.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use crate::json::find_string_special;
use std::borrow::Cow;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{ContentRef, Item, ItemKind, ItemRef, ItemState};
use crate::error::InputError;
use crate::json::Object;
use crate::time::UtcTime;

/// Code point counts of accumulated fields by (item position, field), so appending never rescans a text.
pub(super) type CharCounts = FxHashMap<(usize, &'static str), usize>;

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

/// Item content: a live object, or (when `sealed` is set) the canonical JSON text of one, `object` then empty.
#[derive(Clone, Debug, Default)]
struct Content {
    object: Object,
    sealed: Option<Box<RawValue>>,
}

impl Content {
    fn live(object: Object) -> Content {
        Content { object, sealed: None }
    }

    fn sealed(raw: Box<RawValue>) -> Content {
        Content { object: Object::new(), sealed: Some(raw) }
    }

    fn to_object(&self) -> Object {
        match &self.sealed {
            None => self.object.clone(),
            Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
        }
    }

    fn seal(&mut self) {
        if self.sealed.is_none() {
            let text = crate::json::to_pydantic_json(&self.object).unwrap_or_else(|_| "{}".into());
            if let Ok(raw) = RawValue::from_string(text) {
                self.sealed = Some(raw);
                self.object = Object::new();
            }
        }
    }

    /// The content as an object to edit, reading sealed text back first.
    fn edit(&mut self) -> &mut Object {
        if let Some(raw) = self.sealed.take() {
            self.object = serde_json::from_str(raw.get()).unwrap_or_default();
        }
        &mut self.object
    }

    /// The live object, or `None` when sealed.
    fn get(&self) -> Option<&Object> {
        self.sealed.is_none().then_some(&self.object)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.sealed {
            None => self.object.serialize(serializer),
            Some(raw) => raw.serialize(serializer),
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
            let mut content = Content::live(item.content);
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

    /// The bytes of sealed content (most of a checkpoint's size).
    pub(super) fn sealed_bytes(&self) -> usize {
        self.items.values().map(|item| item.content.sealed.as_ref().map_or(0, |raw| raw.get().len())).sum()
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// Storage from a checkpoint's items read as raw JSON: immutable observations keep their text as it is
    /// (when canonical), so restoring does not rebuild and re-serialize them.
    pub(super) fn from_raw(items: Vec<RawItem<'_>>, next: u64, open: Option<&str>) -> Result<Store, InputError> {
        let mut store = Store { next, ..Store::default() };
        store.items.reserve(items.len());
        for (position, item) in items.into_iter().enumerate() {
            let text = item.content.get();
            let object_text = text.trim_start().starts_with('{');
            // Canonical text is kept as it is, whatever the item: exported verbatim, and read back into an object
            // only if a later event changes the item (most restored items never change again).
            let content = if object_text && is_canonical(text) {
                Content::sealed(item.content.to_owned())
            } else {
                let object: Object = serde_json::from_str(text).map_err(|e| {
                    InputError::new(format!("items.{position}.content"), format!("expected an object: {e}"))
                })?;
                let mut content = Content::live(object);
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
    pub(super) fn live(&self, key: &str) -> Option<(ItemKind, &Object)> {
        let item = self.items.get(key)?;
        Some((item.kind, item.content.get()?))
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.items.contains_key(key)
    }

    /// A live item's content (`None` for absent or sealed items).
    pub(super) fn live_content(&self, key: &str) -> Option<&Object> {
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

    /// Update an existing item as [`Store::put`] does without replacing its content, keeping its state, and
    /// return what an [`ItemRef`] reports of it; `None` (and nothing changed) when there is no such item.
    pub(super) fn touch(
        &mut self,
        key: &str,
        kind: ItemKind,
        position: StreamId,
        at: UtcTime,
        update: impl FnOnce(&mut Object, &mut CharCounts, usize),
    ) -> Option<Touched<'_>> {
        let index = self.items.get_index_of(key)?;
        Some(self.change(index, kind, None, position, at, update))
    }

    /// Record one change to an item at `position`: `replace` sets its whole content, then `update` edits it in
    /// place (with the field code point counts and the item's position). `seal` stores the result as text.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put(
        &mut self,
        key: String,
        kind: ItemKind,
        state: ItemState,
        replace: Option<Object>,
        position: StreamId,
        at: UtcTime,
        seal: bool,
        update: impl FnOnce(&mut Object, &mut CharCounts, usize),
    ) -> ItemRef {
        let index = self.place(&key, kind, state, replace.map(Content::live), &position, at);
        let changed = self.change(index, kind, Some(state), position, at, update);
        let (ordinal, response_group, failure) =
            (changed.ordinal, changed.response_group.map(str::to_owned), changed.failure.cloned());
        if seal {
            self.items[index].content.seal();
        }
        ItemRef { id: key, kind, state, ordinal: Some(ordinal), response_group, failure, memory_sources: None }
    }

    /// [`Store::put`] of an immutable item whose content is already its canonical JSON text (`seal` set, no
    /// update): nothing is parsed or edited. The reference reports no response group or failure, as a sealed
    /// content's are not read.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put_sealed(
        &mut self,
        key: String,
        kind: ItemKind,
        state: ItemState,
        content: Box<RawValue>,
        position: StreamId,
        at: UtcTime,
    ) -> ItemRef {
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
        update: impl FnOnce(&mut Object, &mut CharCounts, usize),
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
            response_group: content.and_then(|c| c.get("responseGroup")).and_then(Value::as_str),
            failure: content.and_then(|c| c.get("failure")).and_then(Value::as_object),
        }
    }
}

/// What an [`ItemRef`] reports of an item [`Store::touch`] updated.
pub(super) struct Touched<'a> {
    pub(super) ordinal: u64,
    pub(super) state: ItemState,
    pub(super) response_group: Option<&'a str>,
    pub(super) failure: Option<&'a Object>,
}

/// A checkpoint item whose content is still the checkpoint's JSON text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawItem<'a> {
    pub(super) id: String,
    pub(super) ordinal: u64,
    pub(super) kind: ItemKind,
    pub(super) state: ItemState,
    #[serde(borrow)]
    first_stream_id: Cow<'a, str>,
    #[serde(borrow)]
    last_stream_id: Cow<'a, str>,
    started_at: UtcTime,
    ended_at: Option<UtcTime>,
    #[serde(borrow)]
    content: &'a RawValue,
    #[serde(default)]
    content_refs: IndexMap<String, ContentRef>,
}

/// Whether JSON text is already in the canonical form this library writes (compact, raw UTF-8, escapes only
/// for quotes, backslashes and control characters), so it can be kept byte for byte.
fn is_canonical(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut index = 0;
    while index < bytes.len() {
        if in_string {
            // Jump to the string's next quote or escape (a checkpoint's strings hold no raw control characters).
            let Some(next) = find_string_special(bytes, index) else { return false };
            index = next;
        }
        let byte = bytes[index];
        if in_string {
            match byte {
                b'"' => in_string = false,
                b'\\' => {
                    match bytes.get(index + 1) {
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                        // Only control characters are written as \u00XX.
                        Some(b'u') => {
                            let hex = text.get(index + 2..index + 6).and_then(|h| u32::from_str_radix(h, 16).ok());
                            if !hex.is_some_and(|code| code < 0x20 && !matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d))
                            {
                                return false;
                            }
                            if text.get(index + 2..index + 6).is_some_and(|h| h.bytes().any(|b| b.is_ascii_uppercase()))
                            {
                                return false;
                            }
                            index += 4;
                        }
                        _ => return false,
                    }
                    index += 1;
                }
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b' ' | b'\n' | b'\r' | b'\t' => return false,
                b'-' | b'0'..=b'9' => {
                    // Numbers with an exponent or a fraction may be laid out differently: re-serialize them.
                    let end = bytes[index..]
                        .iter()
                        .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .map_or(bytes.len(), |offset| index + offset);
                    if bytes[index..end].iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
                        return false;
                    }
                    index = end;
                    continue;
                }
                _ => {}
            }
        }
        index += 1;
    }
    true
}

/// The items as a checkpoint writes them, without copying them.
pub(super) struct ItemsView<'a>(pub(super) &'a Store);

struct StoredView<'a>(&'a str, &'a Stored);

impl Serialize for ItemsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.items.len()))?;
        for (key, item) in &self.0.items {
            seq.serialize_element(&StoredView(key, item))?;
        }
        seq.end()
    }
}

impl Serialize for StoredView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let StoredView(key, item) = self;
        let fields = if item.content_refs.is_empty() { 9 } else { 10 };
        let mut map = serializer.serialize_map(Some(fields))?;
        map.serialize_entry("id", key)?;
        map.serialize_entry("ordinal", &item.ordinal)?;
        map.serialize_entry("kind", &item.kind)?;
        map.serialize_entry("state", &item.state)?;
        map.serialize_entry("first_stream_id", &item.first)?;
        map.serialize_entry("last_stream_id", &item.last)?;
        map.serialize_entry("started_at", &item.started_at)?;
        map.serialize_entry("ended_at", &item.ended_at)?;
        map.serialize_entry("content", &item.content)?;
        if !item.content_refs.is_empty() {
            map.serialize_entry("content_refs", &item.content_refs)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_is_recognised() {
        assert!(is_canonical(r#"{"a":"x y\n","b":[1,null,true],"c":"\u001f é"}"#));
        for odd in
            [r#"{"a": 1}"#, r#"{"a":"\u00e9"}"#, r#"{"a":1.5}"#, r#"{"a":1e5}"#, r#"{"a":"\/"}"#, r#"{"a":"\u001F"}"#]
        {
            assert!(!is_canonical(odd), "{odd}");
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
