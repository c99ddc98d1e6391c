//! Streamed tool-call arguments: consecutive argument deltas of one tool-call part fold into one observation,
//! the first delta's, holding the argument text of all of them and the first one's time. Both lanes of
//! [`DisplayFold::fold_line`] extend a held stream through the same two steps ([`DisplayFold::grow_arguments`]
//! and [`DisplayFold::put_arguments`]), so they change the held stream and its item identically.

use serde_json::{json, Value};

use super::bounds::{append_args_delta, append_value_args_delta, omitted};
use super::held::unset;
use super::item::{observation_id, ObservedItem};
use super::{
    Change, CharCounts, Field, Held, ItemContent, ItemKind, ItemState, StreamedArguments, MAX_OBSERVATION_BYTES,
};
use crate::fields::{agui_key, source_key};
use crate::json::{escaped_str_size, json_size, py_equal, Object};
use crate::lanes::delta_line::stream_of_identity;
use crate::{names, DisplayFold, ItemRef};

/// The argument stream a fold holds: the observation its deltas fold into, and whether that observation is still
/// live (unsealed) in the store.
#[derive(Debug, Default)]
pub(super) struct ArgumentStream {
    pub(super) held: Option<Held>,
    pub(super) open: bool,
}

impl DisplayFold {
    /// Seal the observation of a finished argument stream: no later event can extend it.
    pub(super) fn seal_arguments(&mut self) {
        if let (Some(held), true) = (&self.arguments.held, self.arguments.open) {
            self.store.seal(held.key());
            self.arguments.open = false;
        }
    }

    /// Fold a part-delta observation carrying argument text (`delta` is its source delta).
    pub(super) fn arguments(&mut self, payload: &Object, delta: &Object) -> ItemRef {
        let text = delta.get(source_key::ARGS_DELTA).and_then(Value::as_str).unwrap_or_default();
        let value = payload.get(agui_key::VALUE);
        let mut source = value.and_then(|v| v.get(source_key::EVENT)).cloned().unwrap_or(Value::Null);
        let mut stripped = delta.clone();
        stripped.insert(source_key::ARGS_DELTA.into(), Value::Null);
        if let Value::Object(source) = &mut source {
            source.insert(source_key::DELTA.into(), Value::Object(stripped));
        }
        let stream = json!([
            names::PART_DELTA,
            value.and_then(|v| v.get(source_key::THREAD_ID)).cloned().unwrap_or(Value::Null),
            value.and_then(|v| v.get(source_key::RUN_ID)).cloned().unwrap_or(Value::Null),
            source
        ]);
        let continued = self.continues_arguments(&stream);
        if continued {
            self.grow_arguments(text);
        } else {
            self.open_arguments(payload.clone(), stream);
        }
        let subagent = payload.get(agui_key::SUBAGENT_RUN_ID).cloned();
        self.put_arguments(continued, text, subagent, |item| item.to_item_ref())
    }

    /// Whether an argument delta of `stream` folded as the current sequence continues the held stream: the same
    /// stream as Python's `==` finds it (numbers by value, however spelled: `-0` and `0`, `1.0` and `1`, `true` and
    /// `1`), and its last delta was the event just before.
    pub(super) fn continues_arguments(&mut self, stream: &Value) -> bool {
        let sequence = self.sequence;
        self.arguments
            .held
            .as_mut()
            .is_some_and(|held| held.sequence() + 1 == sequence && py_equal(&held.decoded().stream, stream))
    }

    /// Hold a new argument stream whose first delta is `event` (the part-delta observation folded as the current
    /// sequence), sealing the one held before.
    pub(super) fn open_arguments(&mut self, event: Object, stream: Value) {
        self.hold_new_arguments(event, |fields| Held::Decoded(StreamedArguments { stream, ..fields }));
    }

    /// [`DisplayFold::open_arguments`] for the argument lane, with the stream's identity as the lane writes it
    /// ([`ArgsDelta::write_identity`](crate::lanes::delta_line::ArgsDelta::write_identity)): kept as that text.
    pub(super) fn open_lane_arguments(&mut self, event: Object, identity: &[u8]) {
        self.hold_new_arguments(event, |fields| Held::Lane { identity: identity.into(), fields });
    }

    fn hold_new_arguments(&mut self, event: Object, hold: impl FnOnce(StreamedArguments) -> Held) {
        self.seal_arguments();
        self.arguments.open = true;
        let key = observation_id(&self.run_id, self.attempt, self.sequence);
        let size = json_size(event.get(agui_key::VALUE).unwrap_or(&Value::Null)) as u64;
        let at = self.occurred(&event);
        let fields = StreamedArguments { key, at, event: Some(event), size, ..unset() };
        self.arguments.held = Some(hold(fields));
    }

    /// Whether the held stream's last delta was the event just folded and, given an argument lane's delta's
    /// `identity`, its stream is that delta's: the next delta continues it. A held stream the lane did not open is
    /// compared by value, with the value the identity reads as.
    pub(super) fn holds_adjacent(&mut self, identity: Option<&[u8]>) -> bool {
        let sequence = self.sequence;
        self.arguments.held.as_mut().is_some_and(|held| {
            held.sequence() == sequence
                && identity.is_none_or(|identity| {
                    held.has_identity(identity)
                        .unwrap_or_else(|| py_equal(&held.decoded().stream, &stream_of_identity(identity)))
                })
        })
    }

    /// Append a continuing delta's text to the held observation.
    pub(super) fn grow_arguments(&mut self, text: &str) {
        if let Some(held) = self.arguments.held.as_mut().map(Held::fields) {
            if let Some(event) = held.event.as_mut() {
                append_args_delta(event, text);
                held.size = held.size.saturating_add((escaped_str_size(text) - 2) as u64);
            }
        }
    }

    /// Record the delta folded as the current sequence in the held stream and put its observation item: grown by
    /// the delta alone when the stream `continued` and the item is still there, else written whole. `report` is
    /// handed what the event changed (the general path keeps it, a lane writes it).
    pub(super) fn put_arguments<R>(
        &mut self,
        continued: bool,
        text: &str,
        subagent: Option<Value>,
        report: impl FnOnce(ObservedItem<'_>) -> R,
    ) -> R {
        let position = self.stream_id();
        let sequence = self.sequence;
        let retain = self.content.retain_content();
        // Set by the caller (a new stream) or held (a continued one); the default is never built.
        let held = self.arguments.held.get_or_insert_with(|| Held::Decoded(unset())).fields();
        held.sequence = sequence;
        if !retain && held.size > MAX_OBSERVATION_BYTES as u64 {
            held.event = None;
        }
        let (key, at, whole) = (held.key.as_str(), held.at, held.event.is_some());
        let (kind, state) = (ItemKind::Observation, ItemState::Completed);
        if continued {
            // The item's copy grows by the delta alone, like the held event (unless the item is gone).
            let update = |content: &mut ItemContent, _: &mut CharCounts, _: usize| {
                if !whole {
                    content.set_json(Field::Value, omitted());
                } else if let Some(Value::Object(value)) = content.json_mut(Field::Value) {
                    append_value_args_delta(value, text);
                }
                if let Some(subagent) = &subagent {
                    content.set_json(Field::SubagentRunId, subagent.clone());
                }
            };
            if let Some(touched) = self.store.touch(key, kind, Some(state), position.clone(), at, update) {
                return report(ObservedItem {
                    id: key,
                    kind,
                    state: touched.state,
                    ordinal: Some(touched.ordinal),
                    response_group: touched.response_group,
                    failure: touched.failure,
                    memory_sources: None,
                });
            }
        }
        let held_value = held.event.as_ref().and_then(|event| event.get(agui_key::VALUE)).cloned();
        let mut content = ItemContent::new(ItemKind::Observation);
        content.set_text(Field::Name, names::PART_DELTA);
        content.set_json(Field::Value, held_value.unwrap_or_else(omitted));
        if let Some(subagent) = subagent {
            content.set_json(Field::SubagentRunId, subagent);
        }
        let key = held.key.clone();
        let item = self.store.replace(key, Change { kind, state, position, at }, content, false);
        report(ObservedItem::from(&item))
    }
}
