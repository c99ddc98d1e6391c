//! Compact display items folded from AG-UI events, and checkpoints that continue exactly.
//!
//! [`DisplayFold`] gives every AG-UI event the next stream sequence and folds it into at most one display item:
//! a text message, a reasoning message, a tool call or an observation. Items have stable ids (a hash of run, kind
//! and source identity), dense ordinals from 1 and bounded content. [`DisplayFold::export`] detaches a
//! [`DisplaySnapshot`] at any point, open messages and tool calls included; [`DisplayFold::restore`] continues
//! from it with the next event exactly as the uninterrupted fold would. The snapshot's JSON is the reference's
//! checkpoint JSON byte for byte.
//!
//! Call order: [`DisplayFold::new`] (or [`DisplayFold::restore`]), then for each Harness source item
//! [`DisplayFold::fold_source`] (or [`DisplayFold::events`] followed by [`DisplayFold::fold`]); AG-UI events from
//! elsewhere go to [`DisplayFold::fold`] directly. Export whenever a checkpoint is due.

mod arguments;
mod bounds;
mod carried;
mod changes;
mod checkpoint;
mod checkpoint_text;
mod continuation_parts;
mod field;
mod held;
mod item;
mod item_content;
mod lane;
mod messages;
mod observations;
mod observed_line;
mod policy;
mod py;
mod read_ahead;
mod restore;
mod restoring;
mod rules;
mod sealed;
mod source_fold;
mod store;
mod stream_id;

pub use crate::lanes::lane_counts::{FastLane, LaneCounts, LaneFor, LanePath};
pub use crate::read_ahead::{ReadAhead, ScannedLine};
use bounds::bound_event;
pub use bounds::{MAX_FIELD_CHARS, MAX_OBSERVATION_BYTES};
pub use checkpoint::{DisplayContinuation, DisplaySnapshot, StreamedArguments};
pub use item::{
    event_json, item_id, ContentRef, Item, ItemKind, ItemRef, ItemState, Observed, PositionError, StreamPosition,
};
pub use observed_line::ObservedLine;
pub use policy::ContentPolicy;
use rules::failed_tool_call;
use rules::integer_timestamp;
use rules::message_kind;
use rules::observed_whole;
use rules::validate_event;

use arguments::ArgumentStream;
use checkpoint_text::DecodedItem;
use continuation_parts::ContinuationParts;
use field::{Field, FieldInput, FieldValue};
use held::Held;
use item_content::ItemContent;
use messages::MessageEvent;
use restoring::Restoring;
use source_fold::{Folded, FoldedEvent};
use store::{Change, CharCounts, Store};
use stream_id::StreamId;

use indexmap::IndexMap;
use serde_json::Value;

use crate::agui::{Event, EventType, ToolResultContent};
use crate::content::tool_execution_value;
use crate::error::FoldError;
use crate::fields::agui_key;
use crate::fragments::CustomEventAssembler;
use crate::json::Object;
use crate::memory::MemorySource;
use crate::observer::{AguiEventProcessor, HarnessAguiStreamObserver};
use crate::source::SourceItem;
use crate::time::UtcTime;

/// Options of a new [`DisplayFold`].
pub struct DisplayOptions {
    /// The delivery attempt (default 0).
    pub attempt: u64,
    /// The first ordinal (default 1).
    pub first: u64,
    /// Items already committed (their ordinals continue from `first`).
    pub items: Vec<Item>,
    /// How much content to keep, and which observations to show (default: bounded).
    pub content: ContentPolicy,
    /// A host processor for every converted event.
    pub processor: Option<AguiEventProcessor>,
    /// The time of an event without an integer `timestamp` (default: the Unix epoch). The library reads no
    /// clock of its own; a host that wants wall-clock time supplies it here.
    pub clock: Option<Box<dyn Fn() -> UtcTime + Send>>,
}

impl Default for DisplayOptions {
    fn default() -> Self {
        DisplayOptions {
            attempt: 0,
            first: 1,
            items: Vec::new(),
            content: ContentPolicy::Bounded,
            processor: None,
            clock: None,
        }
    }
}

/// Folds AG-UI events once into compact display items, independently of host storage.
pub struct DisplayFold {
    run_id: String,
    attempt: u64,
    store: Store,
    sequence: u64,
    content: ContentPolicy,
    response_groups: IndexMap<String, String>,
    memory_sources: IndexMap<String, Vec<MemorySource>>,
    /// The argument stream the fold holds (see `arguments.rs`).
    arguments: ArgumentStream,
    assembler: CustomEventAssembler,
    observer: HarnessAguiStreamObserver,
    clock: Option<Box<dyn Fn() -> UtcTime + Send>>,
    /// The last item id computed: consecutive events of one message or call hash their source identity once.
    last_id: Option<(ItemKind, String, String)>,
    /// Whether folding a line writes its observed lines; off only inside [`DisplayFold::replay_line`].
    writes_observed: bool,
    /// What the fast lanes keep between lines (see `lane.rs`).
    fast: lane::FastPath,
}

impl std::fmt::Debug for DisplayFold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisplayFold")
            .field("run_id", &self.run_id)
            .field("position", &self.position())
            .field("items", &self.store.len())
            .field("next_ordinal", &self.store.next)
            .finish()
    }
}

impl DisplayFold {
    /// A fold for `run_id` with default options.
    pub fn new(run_id: impl Into<String>) -> DisplayFold {
        DisplayFold::with_options(run_id, DisplayOptions::default())
    }

    /// A fold with explicit options.
    pub fn with_options(run_id: impl Into<String>, options: DisplayOptions) -> DisplayFold {
        let bounded = !options.content.whole_fields();
        let next = options.first + options.items.len() as u64;
        DisplayFold {
            run_id: run_id.into(),
            attempt: options.attempt,
            store: Store::new(options.items, next, None),
            sequence: 0,
            content: options.content,
            response_groups: IndexMap::new(),
            memory_sources: IndexMap::new(),
            arguments: ArgumentStream::default(),
            assembler: CustomEventAssembler::default(),
            observer: observer_with(options.processor, bounded),
            clock: options.clock,
            last_id: None,
            writes_observed: true,
            fast: lane::FastPath::default(),
        }
    }

    /// Which path each source line folded by [`DisplayFold::fold_line`], [`DisplayFold::replay_line`] or
    /// [`DisplayFold::replay_scanned`] took since this fold was made or restored: a fast lane, or the general
    /// path and why. What a benchmark reports to say where a stream's lines go.
    ///
    /// ```
    /// use a13n_stream_protocol::display::{FastLane, LanePath};
    /// use a13n_stream_protocol::DisplayFold;
    ///
    /// let mut fold = DisplayFold::new("r");
    /// let lines = [
    ///     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"part":{"content":"Hel","id":null,"provider_name":null,"provider_details":null,"citations":null,"part_kind":"text"},"previous_part_kind":null,"event_kind":"part_start"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":2,"occurred_at":"2026-11-29T12:00:02Z","event":{"index":0,"delta":{"content_delta":"lo","provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
    ///     r#"{"thread_id":"t","run_id":"r","sequence":3,"occurred_at":"2026-11-29T12:00:03Z","event":{"event_kind":"part_delta","index":0,"delta":{"part_delta_kind":"text","content_delta":"!"}}}"#,
    /// ];
    /// for line in lines {
    ///     fold.replay_line(line)?;
    /// }
    /// let counts = fold.lane_counts();
    /// assert_eq!(counts.get(LanePath::Taken(FastLane::Content)), 1);
    /// // Keys in another order and defaults left out: taken written in its model's layout.
    /// assert_eq!(counts.get(LanePath::LaidOut(FastLane::Content)), 1);
    /// assert_eq!(counts.total(), 4);
    /// for (path, count) in counts.iter() {
    ///     println!("{path}: {count}");
    /// }
    /// # Ok::<(), a13n_stream_protocol::FoldError>(())
    /// ```
    pub fn lane_counts(&self) -> &LaneCounts {
        &self.fast.counts
    }

    /// The run this display belongs to.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The Harness thread and run of the root stream, fixed by the first source item folded (`None` before).
    pub fn source_identity(&self) -> Option<(&str, &str)> {
        Some((self.observer.thread_id()?, self.observer.run_id()?))
    }

    /// The last folded position.
    pub fn position(&self) -> StreamPosition {
        StreamPosition { attempt: self.attempt, sequence: self.sequence }
    }

    /// The ordinal the next new item takes (the continuation's `next_ordinal`), without exporting the continuation.
    pub fn next_ordinal(&self) -> u64 {
        self.store.next
    }

    /// Whether whole values are kept (the continuation's `full_content`).
    pub fn full_content(&self) -> bool {
        self.content.full_content()
    }

    /// How the fold keeps content (the reference's `full_content` and `retain_content`).
    pub fn content_policy(&self) -> ContentPolicy {
        self.content
    }

    /// How the fold keeps content from the next event on: what assigning the reference's `full_content` or
    /// `retain_content` after construction changes. The fold's items and observations follow the new policy, and
    /// a checkpoint records its `full_content`; the events its observer hands on stay bounded or whole as they were
    /// made (the reference's observer keeps the flags it was built with), and items folded before keep their
    /// content.
    pub fn set_content_policy(&mut self, content: ContentPolicy) {
        self.content = content;
        self.fast.forget();
    }

    /// The current response group of each scope (the continuation's `response_groups`), in order of first use.
    pub fn response_groups(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.response_groups.iter().map(|(scope, group)| (scope.as_str(), group.as_str()))
    }

    fn stream_id(&self) -> StreamId {
        StreamId::At { attempt: self.attempt, sequence: self.sequence }
    }

    /// The items, in order of creation (materialized: sealed items are read back from their text).
    pub fn items(&self) -> impl Iterator<Item = Item> + '_ {
        self.store.items()
    }

    /// How many items the display holds.
    pub fn item_count(&self) -> usize {
        self.store.len()
    }

    /// One item by id.
    pub fn item(&self, id: &str) -> Option<Item> {
        self.store.item(id)
    }

    /// Retire an item: take it out of the display and return it (`None` when there is no such item), as a host
    /// paging out old items deletes them from the reference's `items`. The other items keep their ordinals and
    /// the next new item still takes [`DisplayFold::next_ordinal`]; an event that later changes the retired
    /// item makes it anew, as the reference does, so retire only items no later event changes (a checkpoint
    /// exported after the retirement leaves it out).
    pub fn retire(&mut self, id: &str) -> Option<Item> {
        let item = self.store.item(id)?;
        self.retire_all([id]);
        Some(item)
    }

    /// Retire every item of `ids` the display holds, in one pass however many there are (ids it does not hold
    /// are passed over): how many it retired. See [`DisplayFold::retire`].
    pub fn retire_all<'k>(&mut self, ids: impl IntoIterator<Item = &'k str>) -> usize {
        self.fast.forget();
        self.store.remove(ids)
    }

    /// Whether the display holds an item of this id (without reading it).
    pub fn contains(&self, id: &str) -> bool {
        self.store.contains(id)
    }

    /// Ids of items changed since [`DisplayFold::clear_changed`] (live publication), in order of creation.
    pub fn changed(&self) -> Vec<String> {
        self.store.changed_ids()
    }

    /// Forget live changes; checkpoint deltas ([`DisplayFold::capture_delta`]) are unaffected.
    pub fn clear_changed(&mut self) {
        self.store.clear_changed();
    }

    /// Read the time of events without an integer `timestamp` from `clock` (see [`DisplayOptions::clock`]); a
    /// restored fold starts without one.
    #[must_use]
    pub fn with_clock(mut self, clock: Box<dyn Fn() -> UtcTime + Send>) -> DisplayFold {
        self.clock = Some(clock);
        self
    }

    /// Mark one item as changed for live publication (`changed` true) or forget its change; checkpoint deltas are
    /// unaffected. Returns whether the fold holds an item `id`.
    pub fn set_changed(&mut self, id: &str, changed: bool) -> bool {
        self.store.set_changed(id, changed)
    }

    /// A detached checkpoint. Export never ends, interrupts or pages active content.
    pub fn export(&self) -> DisplaySnapshot {
        DisplaySnapshot { items: self.store.items().collect(), continuation: self.export_continuation() }
    }

    /// The checkpoint JSON of [`DisplayFold::export`], written straight from the fold's state (no copy of the
    /// items; sealed items are copied as text).
    pub fn export_json(&self) -> String {
        let mut out = Vec::with_capacity(self.store.export_size_hint() + 4096);
        // Writing into memory cannot fail.
        let _ = self.write_checkpoint(&mut out, |_| Ok(()));
        String::from_utf8(out).unwrap_or_default()
    }

    /// Write the checkpoint JSON of [`DisplayFold::export`] to `writer` as it is produced, holding no copy of it.
    pub fn write_export<W: std::io::Write>(&self, mut writer: W) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(1 << 17);
        self.write_checkpoint(&mut out, |out| {
            writer.write_all(out)?;
            out.clear();
            Ok(())
        })?;
        writer.write_all(&out)
    }

    /// The checkpoint JSON into `out`, which `flush` may empty whenever it holds a chunk.
    fn write_checkpoint(
        &self,
        out: &mut Vec<u8>,
        flush: impl FnMut(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        out.extend_from_slice(br#"{"items":"#);
        self.store.write_items(out, flush)?;
        out.extend_from_slice(br#","continuation":"#);
        crate::json::to_pydantic_writer(out, &self.export_continuation()).map_err(std::io::Error::other)?;
        out.push(b'}');
        Ok(())
    }

    /// The items changed since the last capture (by ordinal) and the parser state, independently of live
    /// publication.
    pub fn capture_delta(&mut self) -> DisplaySnapshot {
        self.fast.forget();
        let items = self.store.take_checkpoint_changed();
        DisplaySnapshot { items, continuation: self.export_continuation() }
    }

    /// The parser state alone, without the accumulated display.
    pub fn export_continuation(&self) -> DisplayContinuation {
        DisplayContinuation {
            run_id: self.run_id.clone(),
            position: self.position(),
            next_ordinal: self.store.next,
            full_content: self.content.full_content(),
            response_groups: self.response_groups.clone(),
            memory_sources: self.memory_sources.clone(),
            arguments: self.arguments.held.as_ref().map(Held::to_decoded),
            fragments: self.assembler.export(),
            observer: self.observer.export(),
        }
    }

    /// The AG-UI events of one Harness source item, as the JSON the stream carries. Atomic: a rejected item
    /// leaves the fold's observer unchanged.
    pub fn events(&mut self, source: &SourceItem) -> Result<Vec<Object>, FoldError> {
        self.fast.forget();
        let events = self.observer.observe(source)?;
        Ok(events.into_iter().map(Event::into_object).collect())
    }

    /// Convert and fold one source item: the same as [`DisplayFold::events`] then [`DisplayFold::fold`] with the
    /// source, without turning the observer's typed events into JSON and reading them back.
    pub fn fold_source(&mut self, source: &SourceItem) -> Result<Vec<Observed>, FoldError> {
        Ok(self.fold_source_typed(source)?.into_iter().map(Folded::into_observed).collect())
    }

    /// Give each event the next sequence and fold it. When `source` is a tool result the observer does not
    /// present, its call's item fails and the last event reports it. Atomic: a malformed event rejects the whole
    /// batch before anything changes.
    pub fn fold(&mut self, events: Vec<Object>, source: Option<&SourceItem>) -> Result<Vec<Observed>, FoldError> {
        self.fast.forget();
        let events = events.into_iter().map(FoldedEvent::Object).collect();
        Ok(self.fold_events_of(events, source)?.into_iter().map(Folded::into_observed).collect())
    }

    /// When `source` is a tool result the observer does not present (a retry prompt, a failure, a denial), fail its
    /// call's item at the time of the source item's last event (`timestamp`): the call's item, when it changed.
    fn fail_unpresented_result(&mut self, source: &SourceItem, timestamp: Option<i64>) -> Option<ItemRef> {
        let (call_id, message) = failed_tool_call(source)?;
        let at = self.occurred_at(timestamp);
        let subagent = (Some(source.run_id.as_str()) != self.observer.run_id()).then_some(source.run_id.as_str());
        self.fail_tool_call(&call_id, message, at, subagent)
    }

    /// A message's end reports the memory evidence its item holds.
    fn attach_memory_sources(&self, reference: &mut ItemRef) {
        let sources = self.store.live(&reference.id).and_then(|(_, c)| c.json(Field::MemorySources));
        if let Some(Value::Array(sources)) = sources {
            reference.memory_sources =
                sources.iter().map(|s| serde_json::from_value(s.clone())).collect::<Result<_, _>>().ok();
        }
    }

    fn occurred(&self, payload: &Object) -> UtcTime {
        self.occurred_at(integer_timestamp(payload))
    }

    /// The time of an event with `timestamp` (epoch milliseconds): the fold's clock when it has none.
    fn occurred_at(&self, timestamp: Option<i64>) -> UtcTime {
        timestamp
            .and_then(UtcTime::from_epoch_ms)
            .unwrap_or_else(|| self.clock.as_ref().map_or(UtcTime::EPOCH, |clock| clock()))
    }

    fn scoped(&mut self, kind: ItemKind, scope: Option<FieldInput<'_>>, source_id: &str) -> String {
        let identity = match scope.filter(|s| s.truthy()) {
            Some(scope) => std::borrow::Cow::Owned(format!("{}:{source_id}", scope.py_str())),
            None => std::borrow::Cow::Borrowed(source_id),
        };
        if let Some((last_kind, last_identity, key)) = &self.last_id {
            if *last_kind == kind && *last_identity == *identity {
                return key.clone();
            }
        }
        let key = item_id(&self.run_id, kind, &identity);
        self.last_id = Some((kind, identity.into_owned(), key.clone()));
        key
    }

    /// Fold one AG-UI event object (its sequence taken) into its item, if it has one.
    fn fold_object(&mut self, payload: &Object) -> Option<ItemRef> {
        let event_type = EventType::parse(payload.get(agui_key::TYPE)?.as_str()?)?;
        if event_type == EventType::Custom {
            return self.observation(payload);
        }
        if observed_whole(event_type) {
            let key = item_id(&self.run_id, ItemKind::Observation, &format!("{}:{}", self.attempt, self.sequence));
            let at = self.occurred(payload);
            let content = ItemContent::from_object(payload.clone());
            let change =
                Change { kind: ItemKind::Observation, state: ItemState::Completed, position: self.stream_id(), at };
            return Some(self.store.replace(key, change, content, true));
        }
        let kind = message_kind(event_type)?;
        let mut reference = self.fold_message(kind, MessageEvent::from_object(event_type, payload, kind));
        if event_type == EventType::TextMessageEnd {
            self.attach_memory_sources(&mut reference);
        }
        Some(reference)
    }
}

/// The fold's own observer: no journal, the host's processor, then the payload bounds unless content is kept.
fn observer_with(processor: Option<AguiEventProcessor>, bounded: bool) -> HarnessAguiStreamObserver {
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    if let Some(processor) = processor {
        observer = observer.with_processor(processor);
    }
    if bounded {
        observer = observer.with_finish(bound_event);
    }
    observer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::bounds::append_bounded;
    use crate::display::py::py_str;
    use crate::json::char_len;
    use serde_json::json;

    fn event(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_seed_round_trip() {
        let prefix = vec![
            event(
                json!({"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000}),
            ),
            event(
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001}),
            ),
        ];
        let suffix = vec![
            event(
                json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002}),
            ),
            event(json!({"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003})),
        ];
        let mut fold = DisplayFold::new("run-example");
        fold.fold(prefix.clone(), None).unwrap();
        let checkpoint = fold.export().to_json();
        let mut restored = DisplayFold::restore(DisplaySnapshot::from_json(&checkpoint).unwrap(), false, None).unwrap();
        restored.fold(suffix.clone(), None).unwrap();
        let mut uninterrupted = DisplayFold::new("run-example");
        uninterrupted.fold(prefix.into_iter().chain(suffix).collect(), None).unwrap();
        assert_eq!(restored.export().to_json(), uninterrupted.export().to_json());
        let item = restored.items().next().unwrap();
        assert_eq!(item.content["text"], "Hello world");
        assert_eq!(item.state, ItemState::Completed);
    }

    #[test]
    fn bounded_append_equals_bounding_the_concatenation() {
        let mut counts = CharCounts::default();
        let mut content = ItemContent::new(ItemKind::TextMessage);
        let piece = "é".repeat(100_000);
        for _ in 0..3 {
            append_bounded(&mut content, Field::Text, &piece, false, &mut counts, 0);
        }
        let text = content.text(Field::Text).unwrap();
        assert_eq!(char_len(text), MAX_FIELD_CHARS);
        assert_eq!(content.get(Field::Truncated), Some(&FieldValue::Flag(true)));
    }

    #[test]
    fn malformed_events_reject_the_whole_batch() {
        let mut fold = DisplayFold::new("r");
        let error = fold
            .fold(
                vec![
                    event(json!({"type": "TEXT_MESSAGE_START", "messageId": "m"})),
                    event(json!({"type": "TOOL_CALL_ARGS"})),
                ],
                None,
            )
            .unwrap_err();
        assert!(error.to_string().contains("events.1.toolCallId"), "{error}");
        assert_eq!(fold.position().sequence, 0);
        assert_eq!(fold.items().count(), 0);
    }

    #[test]
    fn item_ids_are_stable_hashes() {
        assert_eq!(item_id("run-agui", ItemKind::Observation, "0:1"), "itm_a1810a2cc7d273f62ff5f1b8e94b22dd");
    }

    #[test]
    fn python_str_of_values() {
        assert_eq!(
            py_str(&json!({"a": [1, 2.5, null, true], "b": "it's"})),
            r#"{'a': [1, 2.5, None, True], 'b': "it's"}"#
        );
    }
}
