//! Atomicity: copies of exactly the state entries one item's conversion can touch, put back if it is rejected.

use indexmap::IndexMap;

use super::delegation::inline_delegation;
use super::{Mode, ObserverState, PartCursor};
use crate::SourceItem;

/// Copies of the state entries one item's conversion can change, to put back if the item is rejected.
///
/// A conversion touches the cursors of its own Run (the root's parts and request index, or one child entry), the
/// Run's thread binding, and for an inline delegation the delegated child's entry. Copying those alone keeps
/// atomicity without cloning the state of every Run ever seen.
pub(super) struct Undo {
    request_index: i64,
    root_parts: Option<IndexMap<i64, PartCursor>>,
    /// Child entries by key: their position and value before the item, or `None` when absent.
    children: Vec<(String, Option<(usize, ObserverState)>)>,
    thread: Option<(String, Option<(usize, String)>)>,
}

impl Undo {
    pub(super) fn capture<M: Mode>(state: &ObserverState, item: &SourceItem, root_run_id: &str) -> Undo {
        let child_entry = |key: &str| {
            let previous = state.children.get_full(key).map(|(index, _, value)| (index, value.clone()));
            (key.to_owned(), previous)
        };
        let mut children = Vec::new();
        let mut root_parts = None;
        if M::STREAM && item.run_id != root_run_id {
            children.push(child_entry(&item.run_id));
        } else {
            root_parts = Some(state.parts.clone());
        }
        if M::STREAM {
            let delegated = item.event().and_then(inline_delegation).and_then(|p| p.get("child_run_id")?.as_str());
            if let Some(child) = delegated {
                children.push(child_entry(child));
            }
        }
        let thread = M::STREAM.then(|| {
            let previous = state.threads.get_full(&item.run_id).map(|(index, _, value)| (index, value.clone()));
            (item.run_id.clone(), previous)
        });
        Undo { request_index: state.request_index, root_parts, children, thread }
    }

    pub(super) fn apply(self, state: &mut ObserverState) {
        state.request_index = self.request_index;
        if let Some(parts) = self.root_parts {
            state.parts = parts;
        }
        // Newly appended entries are removed last-first, so earlier positions stay exact.
        for (key, previous) in self.children.into_iter().rev() {
            restore_entry(&mut state.children, key, previous);
        }
        if let Some((key, previous)) = self.thread {
            restore_entry(&mut state.threads, key, previous);
        }
    }
}

pub(super) fn restore_entry<V>(map: &mut IndexMap<String, V>, key: String, previous: Option<(usize, V)>) {
    match previous {
        None => {
            map.shift_remove(&key);
        }
        Some((index, value)) => match map.get_mut(&key) {
            Some(slot) => *slot = value,
            None => {
                let index = index.min(map.len());
                map.shift_insert(index, key, value);
            }
        },
    }
}
