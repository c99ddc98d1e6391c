//! The general path for a Harness source item: the observer's typed events fold as they are. Message events are
//! read straight from their fields ([`MessageEvent::from_event`](super::messages::MessageEvent::from_event)); an event whose item is its JSON (a `CUSTOM`
//! observation, a run or subagent boundary) becomes that object once, which the observation fold reads and the
//! observed line writes. Nothing is converted to JSON and read back.

use super::item::{write_observed_line, ObservedItem};
use super::rules::check_timestamp;
use super::{integer_timestamp, observed_whole, validate_event};
use crate::agui::EventType;
use crate::json::Object;
use crate::{DisplayFold, Event, FoldError, InputError, ItemRef, Observed, SourceItem};

/// A source item's event as the fold holds it: typed, or the object its item was made of.
// Most entries are typed events, held inline as the observer's `Vec<Event>` holds them; boxing them would allocate
// once per event.
#[allow(clippy::large_enum_variant)]
pub(super) enum FoldedEvent {
    Typed(Event),
    Object(Object),
}

impl FoldedEvent {
    /// The event as the stream carries it.
    fn into_object(self) -> Object {
        match self {
            FoldedEvent::Typed(event) => event.into_object(),
            FoldedEvent::Object(object) => object,
        }
    }

    /// Append the event's JSON as an observed line carries it.
    fn write(&self, out: &mut Vec<u8>) {
        // Writing into memory cannot fail.
        match self {
            FoldedEvent::Typed(event) => drop(crate::json::to_python_writer(out, event)),
            FoldedEvent::Object(object) => drop(crate::json::to_python_writer(out, object)),
        }
    }

    fn timestamp(&self) -> Option<i64> {
        match self {
            FoldedEvent::Typed(event) => event.timestamp(),
            FoldedEvent::Object(object) => integer_timestamp(object),
        }
    }

    /// Check what folding the event indexes, so that folding itself cannot fail half-way.
    fn validate(&self) -> Result<(), InputError> {
        match self {
            FoldedEvent::Typed(event) => check_timestamp(event.timestamp()),
            FoldedEvent::Object(object) => validate_event(object),
        }
    }
}

/// One folded event of a source item.
pub(super) struct Folded {
    pub(super) sequence: u64,
    pub(super) event: FoldedEvent,
    pub(super) item: Option<ItemRef>,
}

impl Folded {
    pub(super) fn into_observed(self) -> Observed {
        Observed { sequence: self.sequence, event: self.event.into_object(), item: self.item }
    }

    pub(super) fn write_line(&self, out: &mut Vec<u8>) {
        write_observed_line(
            out,
            self.sequence,
            |out| self.event.write(out),
            self.item.as_ref().map(ObservedItem::from),
        );
    }
}

impl DisplayFold {
    /// Convert one source item and fold its typed events. Atomic as [`DisplayFold::fold`]: an event the display
    /// cannot hold rejects the item before any item changes.
    pub(super) fn fold_source_typed(&mut self, source: &SourceItem) -> Result<Vec<Folded>, FoldError> {
        self.fast.forget();
        let events = self.observer.observe(source)?;
        self.fold_observed(events, Some(source))
    }

    /// Fold the events the observer converted a source item to (`source`, when it was decoded): each as the fold
    /// holds it ([`FoldedEvent`]), through [`DisplayFold::fold_events_of`].
    pub(super) fn fold_observed(
        &mut self,
        events: Vec<Event>,
        source: Option<&SourceItem>,
    ) -> Result<Vec<Folded>, FoldError> {
        let events: Vec<FoldedEvent> = events
            .into_iter()
            .map(|event| match event.kind() {
                kind if kind == EventType::Custom || observed_whole(kind) => FoldedEvent::Object(event.into_object()),
                _ => FoldedEvent::Typed(event),
            })
            .collect();
        self.fold_events_of(events, source)
    }

    /// Append the observed lines of `folded`, unless the fold writes none ([`DisplayFold::replay_line`]).
    pub(super) fn write_folded(&self, folded: &[Folded], out: &mut Vec<u8>) {
        if self.writes_observed {
            for event in folded {
                event.write_line(out);
            }
        }
    }

    /// Give each event the next sequence and fold it, as [`DisplayFold::fold`] does: atomic, every event checked
    /// before any item changes; the last reports the failure of a tool call `source` does not present.
    pub(super) fn fold_events_of(
        &mut self,
        events: Vec<FoldedEvent>,
        source: Option<&SourceItem>,
    ) -> Result<Vec<Folded>, FoldError> {
        for (index, event) in events.iter().enumerate() {
            event.validate().map_err(|error| error.nested(&format!("events.{index}")))?;
        }
        let mut folded = Vec::with_capacity(events.len());
        for event in events {
            let sequence = self.next_sequence();
            let item = match &event {
                FoldedEvent::Typed(typed) => self.fold_typed_message(typed),
                FoldedEvent::Object(object) => self.fold_object(object),
            };
            folded.push(Folded { sequence, event, item });
        }
        if let (Some(last), Some(source)) = (folded.last_mut(), source) {
            if let Some(reference) = self.fail_unpresented_result(source, last.event.timestamp()) {
                last.item = Some(reference);
            }
        }
        Ok(folded)
    }
}
