//! What the fast lanes read of the observer and commit to it: whether a run's line may skip the general path,
//! the open part a delta extends, and the one change each lane's line makes (a cursor's flag, a new or closed
//! cursor, a request index). Every check here is one under which [`observe`](Observer::observe) would do exactly
//! what the lane does.

#[allow(unused_imports)]
use super::*;

use crate::carried_line::Carried;
use crate::part_line::{Boundary, PartLine};

impl Observer<RootStream> {
    /// The part id of the open part `index` of `kind` in the root run or one of its inline children, when a
    /// content delta of it would change nothing but the part's `emitted_content` and produce one content event:
    /// no processor, no event journal, the run bound to `thread_id`. Also whether the run is a child (its events
    /// then carry `subagentRunId`).
    pub(crate) fn open_part_in_any_run(
        &self,
        thread_id: &str,
        run_id: &str,
        index: i64,
        kind: PartKind,
    ) -> Option<(&str, bool)> {
        let (state, child) = self.lane_run(thread_id, run_id)?;
        let cursor = state.parts.get(&index).filter(|cursor| cursor.kind == kind)?;
        Some((&cursor.part_id, child))
    }

    /// The cursors of `run_id` (the root run or an inline child with cursors of its own) when a lane may convert
    /// its line without the general path: no processor, no event journal, the run bound to `thread_id`. Also
    /// whether the run is a child.
    fn lane_run(&self, thread_id: &str, run_id: &str) -> Option<(&ObserverState, bool)> {
        if self.processor.is_some() || self.retain_events {
            return None;
        }
        let root = self.core.run_id.as_deref()?;
        if self.core.state.threads.get(run_id).map(String::as_str) != Some(thread_id) {
            return None;
        }
        let child = run_id != root;
        let state = if child { self.core.state.children.get(run_id)? } else { &self.core.state };
        Some((state, child))
    }

    /// Whether a line of `run_id` that the observer carries through as one `CUSTOM` event
    /// ([`CarriedLine`](crate::carried_line::CarriedLine)) may take a lane; `Some(child)` when it may.
    pub(crate) fn carries_in_any_run(&self, thread_id: &str, run_id: &str) -> Option<bool> {
        self.lane_run(thread_id, run_id).map(|(_, child)| child)
    }

    /// Commit what [`Observer::observe`] commits for a carried line [`Observer::carries_in_any_run`] accepted: a
    /// model request's index, or a tool-call part's cursor.
    pub(crate) fn commit_carried_in(&mut self, run_id: &str, child: bool, carried: &Carried<'_>) {
        let state = if child { self.core.state.children.get_mut(run_id) } else { Some(&mut self.core.state) };
        let Some(state) = state else { return };
        match carried {
            Carried::Lifecycle { request_index: Some(index), .. } => state.request_index = *index,
            Carried::ToolCallStart { index, tool_call_id, tool_name } => {
                let cursor = PartCursor {
                    kind: PartKind::ToolCall,
                    part_id: tool_call_id.to_string(),
                    tool_name: Some(tool_name.to_string()),
                    emitted_content: false,
                    emitted_signature: false,
                };
                state.parts.insert(*index, cursor);
            }
            Carried::Lifecycle { request_index: None, .. } | Carried::ToolCall => {}
        }
    }

    /// Whether the open tool-call part `index` of `run_id` (the root run or an inline child) takes an argument
    /// delta naming `call_id` without any change to the conversion state, carried through as one `CUSTOM` event:
    /// the conditions of [`Observer::open_part_in_any_run`], and the part's call is the one named (if any).
    /// `Some(child)` when it does.
    pub(crate) fn open_tool_call_in_any_run(
        &self,
        thread_id: &str,
        run_id: &str,
        index: i64,
        call_id: Option<&str>,
    ) -> Option<bool> {
        let (part_id, child) = self.open_part_in_any_run(thread_id, run_id, index, PartKind::ToolCall)?;
        call_id.is_none_or(|id| id == part_id).then_some(child)
    }

    /// Commit what [`Observer::observe`] commits for the content delta [`Observer::open_part_in_any_run`] accepted.
    pub(crate) fn commit_open_part_content_in(&mut self, run_id: &str, child: bool, index: i64) {
        let state = if child { self.core.state.children.get_mut(run_id) } else { Some(&mut self.core.state) };
        if let Some(cursor) = state.and_then(|state| state.parts.get_mut(&index)) {
            cursor.emitted_content = true;
        }
    }

    /// Whether kept events pass through a finishing step (a display fold's bounds).
    pub(crate) fn has_finish(&self) -> bool {
        self.finish.is_some()
    }

    /// The text part events a part line converts to in `run_id` (the root run or an inline child), when the
    /// lanes may take it: its message id, whether a content event comes first or after the start, and whether
    /// the run is a child. A start always opens; an end must close the open text part under the same id.
    pub(crate) fn text_part_in_any_run(&self, line: &PartLine<'_>) -> Option<TextPartEvents> {
        let (state, child) = self.lane_run(&line.thread_id, &line.run_id)?;
        let content = !line.content.is_empty();
        match line.boundary {
            Boundary::Start => {
                let message_id = match line.own_id() {
                    Some(id) => id.to_owned(),
                    None => part_id(&line.run_id, state.request_index, line.index, "text"),
                };
                Some(TextPartEvents { message_id, content, child })
            }
            Boundary::End => {
                let cursor = state.parts.get(&line.index).filter(|cursor| cursor.kind == PartKind::Text)?;
                let own = line.own_id().or(Some(cursor.part_id.as_str()).filter(|id| !id.is_empty()));
                // The id the general path would close under must be the open part's (else it fails or reopens).
                (own? == cursor.part_id).then_some(())?;
                let content = content && !cursor.emitted_content;
                Some(TextPartEvents { message_id: cursor.part_id.clone(), content, child })
            }
        }
    }

    /// Commit what [`Observer::observe`] commits for a text part line [`Observer::text_part_in_any_run`] accepted:
    /// the part's cursor opened, or closed.
    pub(crate) fn commit_text_part_in(&mut self, line: &PartLine<'_>, events: &TextPartEvents) {
        let state = if events.child {
            self.core.state.children.get_mut(line.run_id.as_ref())
        } else {
            Some(&mut self.core.state)
        };
        let Some(state) = state else { return };
        match line.boundary {
            Boundary::Start => {
                let cursor = PartCursor {
                    kind: PartKind::Text,
                    part_id: events.message_id.clone(),
                    tool_name: None,
                    emitted_content: events.content,
                    emitted_signature: false,
                };
                state.parts.insert(line.index, cursor);
            }
            Boundary::End => {
                state.parts.shift_remove(&line.index);
            }
        }
    }
}

/// What a text part line converts to: `TEXT_MESSAGE_START` (a start) or `TEXT_MESSAGE_END` (an end) under
/// `message_id`, with a `TEXT_MESSAGE_CONTENT` of the part's text after the start or before the end when
/// `content`; every event attributed to the run when it is a `child`.
#[derive(Debug)]
pub(crate) struct TextPartEvents {
    pub(crate) message_id: String,
    pub(crate) content: bool,
    pub(crate) child: bool,
}

impl TextPartEvents {
    /// The events, as the general path converts them.
    pub(crate) fn events(&self, line: &PartLine<'_>) -> Vec<Event> {
        let timestamp = Some(line.timestamp);
        let id = &self.message_id;
        let mut events = Vec::with_capacity(2);
        match line.boundary {
            Boundary::Start => {
                events.push(text_start(timestamp, id));
                if self.content {
                    events.push(text_content(timestamp, id, &line.content));
                }
            }
            Boundary::End => {
                if self.content {
                    events.push(text_content(timestamp, id, &line.content));
                }
                let end = TextMessageEndEvent { timestamp, message_id: id.clone(), ..TextMessageEndEvent::default() };
                events.push(Event::TextMessageEnd(end));
            }
        }
        if self.child {
            events = attribute(events, &line.run_id);
        }
        events
    }
}
