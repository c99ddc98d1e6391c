//! Plan, then apply. An item's conversion only reads the state: it says what the item changes as a list of
//! [`Change`]s beside its events (a [`Plan`]). The changes are applied once the item is accepted, processor
//! included, by steps that cannot fail; a rejected item was never applied, so nothing is undone. The fast lanes
//! plan and apply through the same changes.

use std::borrow::Cow;

use super::{ObserverState, PartCursor};
use crate::{Event, PartIndex};

/// What one item converts to: its events and the changes it makes, applied in order.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub(crate) events: Vec<Event>,
    pub(crate) changes: Vec<Change<'a>>,
}

/// One change an item makes to the conversion state.
#[derive(Debug)]
pub(crate) enum Change<'a> {
    /// The run is bound to the thread (nothing changes when it already is).
    BindThread { run_id: &'a str, thread_id: &'a str },
    /// An inline child run gets cursors of its own (nothing changes when it has them).
    OpenChild(Cow<'a, str>),
    /// An inline child run's cursors are released.
    ReleaseChild(Cow<'a, str>),
    /// A change to the cursors of the root run (`None`) or of an inline child.
    Run(Option<&'a str>, RunChange),
}

/// One change to a run's cursors.
#[derive(Debug)]
pub(crate) enum RunChange {
    /// The model request in progress.
    RequestIndex(super::RequestIndex),
    /// A part's cursor opened, or replaced in its place.
    PutPart(PartIndex, PartCursor),
    /// A part's cursor closed (nothing changes when it has none).
    ClosePart(PartIndex),
    /// Every open part settled.
    ClearParts,
    /// An open part's content (`content`) or signature (`signature`) was emitted.
    Emitted { index: PartIndex, content: bool, signature: bool },
}

impl ObserverState {
    /// Apply one change; it cannot fail (a change to a child run without cursors changes nothing).
    pub(crate) fn apply(&mut self, change: Change<'_>) {
        match change {
            Change::BindThread { run_id, thread_id } => {
                if self.threads.get(run_id).is_none_or(|bound| bound != thread_id) {
                    self.threads.insert(run_id.to_owned(), thread_id.to_owned());
                }
            }
            Change::OpenChild(run_id) => {
                if !self.children.contains_key(run_id.as_ref()) {
                    self.children.insert(run_id.into_owned(), ObserverState::default());
                }
            }
            Change::ReleaseChild(run_id) => drop(self.children.shift_remove(run_id.as_ref())),
            Change::Run(None, change) => self.apply_to_run(change),
            Change::Run(Some(child), change) => {
                if let Some(run) = self.children.get_mut(child) {
                    run.apply_to_run(change);
                }
            }
        }
    }

    /// Apply every change of a plan, in order.
    pub(crate) fn apply_all(&mut self, changes: Vec<Change<'_>>) {
        for change in changes {
            self.apply(change);
        }
    }

    fn apply_to_run(&mut self, change: RunChange) {
        match change {
            RunChange::RequestIndex(index) => self.request_index = index,
            RunChange::PutPart(index, cursor) => drop(self.parts.insert(index, cursor)),
            RunChange::ClosePart(index) => drop(self.parts.shift_remove(&index)),
            RunChange::ClearParts => self.parts.clear(),
            RunChange::Emitted { index, content, signature } => {
                if let Some(cursor) = self.parts.get_mut(&index) {
                    cursor.emitted_content |= content;
                    cursor.emitted_signature |= signature;
                }
            }
        }
    }
}

impl Change<'_> {
    /// A change to a child run's entry, owning the run's id (a plan kept past the text it was read from); `None`
    /// for any other change.
    pub(crate) fn owned_child(self) -> Option<Change<'static>> {
        match self {
            Change::OpenChild(id) => Some(Change::OpenChild(Cow::Owned(id.into_owned()))),
            Change::ReleaseChild(id) => Some(Change::ReleaseChild(Cow::Owned(id.into_owned()))),
            Change::BindThread { .. } | Change::Run(..) => None,
        }
    }
}
