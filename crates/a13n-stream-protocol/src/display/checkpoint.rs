//! Checkpoints: the continuation a fold restores from and the snapshot (items and continuation) it exports.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ItemKind;
use crate::fragments::FragmentState;
use crate::json::Object;
use crate::{InputError, Item, MemorySource, ObserverContinuation, StreamPosition, UtcTime};

/// A tool-call part's streamed arguments so far and the one observation item that holds them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamedArguments {
    /// What identifies the stream: name, thread, run and the source event without its argument text.
    pub stream: Value,
    /// The observation item's id.
    pub key: String,
    /// When the first delta occurred.
    pub at: UtcTime,
    /// The sequence of the last delta folded in: only the next event continues the item.
    pub sequence: u64,
    /// The whole observation, until its value outgrows the observation limit.
    pub event: Option<Object>,
    /// The observation value's size (ASCII-escaped JSON bytes).
    pub size: u64,
}

/// Parsing state at a cut; host paging may retire only immutable items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplayContinuation {
    /// The run the display belongs to.
    pub run_id: String,
    /// The last folded position.
    pub position: StreamPosition,
    /// The ordinal the next new item takes.
    pub next_ordinal: u64,
    /// Whether the fold keeps full content (and skips native part observations).
    #[serde(default)]
    pub full_content: bool,
    /// The current response group per scope (`root` or a subagent run).
    #[serde(default)]
    pub response_groups: IndexMap<String, String>,
    /// Memory evidence per scope, attached to the next assistant message's end.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub memory_sources: IndexMap<String, Vec<MemorySource>>,
    /// The streamed tool arguments being coalesced.
    #[serde(default)]
    pub arguments: Option<StreamedArguments>,
    /// Incomplete fragment frames.
    #[serde(default)]
    pub fragments: FragmentState,
    /// The conversion state of the fold's observer.
    #[serde(default, deserialize_with = "observer_state")]
    pub observer: ObserverContinuation,
}

/// Completed blocks and active accumulations, with enough state for an intact suffix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplaySnapshot {
    /// The items, in order of creation.
    pub items: Vec<Item>,
    /// The state to continue from.
    pub continuation: DisplayContinuation,
}

impl DisplaySnapshot {
    /// The checkpoint JSON, byte for byte as the reference writes it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }

    /// Read a checkpoint written by this library or the reference.
    pub fn from_json(text: &str) -> Result<DisplaySnapshot, InputError> {
        let snapshot: DisplaySnapshot = serde_json::from_str(text).map_err(checkpoint_error)?;
        snapshot.validate()?;
        Ok(snapshot)
    }

    /// Whether no later event can change `item`, so a host may page it out before restoring: an observation
    /// other than the one still collecting streamed tool arguments. Messages and tool calls stay changeable
    /// (a failed tool result can still arrive for a completed call).
    pub fn is_immutable(&self, item: &Item) -> bool {
        item.kind == ItemKind::Observation
            && self.continuation.arguments.as_ref().is_none_or(|held| held.key != item.id)
    }

    /// Page out every immutable item (see [`DisplaySnapshot::is_immutable`]), returning them in order. The
    /// continuation keeps the next ordinal, so items created later keep dense, increasing ordinals.
    pub fn retire_immutable(&mut self) -> Vec<Item> {
        let (retired, kept) = std::mem::take(&mut self.items).into_iter().partition(|item| self.is_immutable(item));
        self.items = kept;
        retired
    }

    pub(super) fn validate(&self) -> Result<(), InputError> {
        if self.continuation.next_ordinal < 1 {
            return Err(InputError::new("continuation.next_ordinal", "must be at least 1"));
        }
        for (index, item) in self.items.iter().enumerate() {
            if item.ordinal < 1 {
                return Err(InputError::new(format!("items.{index}.ordinal"), "must be at least 1"));
            }
        }
        Ok(())
    }
}

impl DisplayContinuation {
    /// The continuation's JSON as a checkpoint carries it.
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }
}

/// The observer's state; `null`, as the browser package's export writes it after an entry, said as what it is.
fn observer_state<'de, D: serde::Deserializer<'de>>(decoder: D) -> Result<ObserverContinuation, D::Error> {
    Option::<ObserverContinuation>::deserialize(decoder)?.ok_or_else(|| {
        serde::de::Error::custom(
            "continuation.observer is null: a browser's checkpoint (js/display's export after an entry) holds no \
             conversion state to continue from; restore the host's own checkpoint",
        )
    })
}

/// A checkpoint that does not decode: what serde found, and where.
pub(super) fn checkpoint_error(error: serde_json::Error) -> InputError {
    let message = format!("{error} (a DisplaySnapshot: items and continuation)");
    InputError::decoding("checkpoint", message, error)
}
