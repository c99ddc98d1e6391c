//! What the fast lanes read of the observer and commit to it: whether a run's line may skip the general path,
//! the open part a delta extends, and the one change each lane's line makes (a cursor's flag, a new or closed
//! cursor, a request index). Every check here is one under which [`observe`](Observer::observe) would do exactly
//! what the lane does.

use super::delegation::{attribute, subagent_event, validate_delegation};
use super::parts::{
    closing_events, encrypted, part_id, reasoning_content, reasoning_end, reasoning_start, text_content, text_end,
    text_start, tool_call_events,
};
use super::terminal::tool_result;
use super::{ObserverState, PartCursor, RootStream};
use crate::json::Object;
use crate::part_kind::PartKind;
use crate::{Event, Observer};

use crate::lanes::carried_line::{Carried, CarriedLine};
use crate::lanes::delta_line::ContentDelta;
use crate::lanes::part_line::{Boundary, PartBody, PartLine, ToolReturnLine};

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
        let (state, child, bound) = self.lane_run_or_unbound(thread_id, run_id)?;
        bound.then_some((state, child))
    }

    /// [`Observer::lane_run`], also for a run not yet bound to any thread (an inline child's first line), and
    /// whether the run is bound; a lane taking an unbound run's line binds it to `thread_id` in its commit, as the
    /// general path does.
    fn lane_run_or_unbound(&self, thread_id: &str, run_id: &str) -> Option<(&ObserverState, bool, bool)> {
        if self.processor.is_some() || self.retain_events {
            return None;
        }
        let root = self.core.run_id.as_deref()?;
        let bound = match self.core.state.threads.get(run_id) {
            Some(bound) if bound != thread_id => return None,
            found => found.is_some(),
        };
        let child = run_id != root;
        let state = if child { self.core.state.children.get(run_id)? } else { &self.core.state };
        Some((state, child, bound))
    }

    /// Whether a line of `run_id` that the observer carries through as one `CUSTOM` event
    /// ([`CarriedLine`]) may take a lane; `Some(child)` when it may.
    pub(crate) fn carries_in_any_run(&self, thread_id: &str, run_id: &str) -> Option<bool> {
        self.lane_run(thread_id, run_id).map(|(_, child)| child)
    }

    /// Commit what [`Observer::observe`] commits for a carried line [`Observer::carries_in_any_run`] accepted: a
    /// model request's index, a tool-call part's cursor, or (with its plan) a delegation's child run opened or
    /// released.
    pub(crate) fn commit_carried_in(
        &mut self,
        run_id: &str,
        child: bool,
        carried: &Carried<'_>,
        delegation: Option<&DelegationPlan>,
    ) {
        if let Some(plan) = delegation {
            self.commit_delegation(plan);
        }
        let state = if child { self.core.state.children.get_mut(run_id) } else { Some(&mut self.core.state) };
        let Some(state) = state else { return };
        match carried {
            Carried::Harness { request_index: Some(index), .. } => state.request_index = *index,
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
            // A delegation's change is its plan's, committed above.
            Carried::Harness { request_index: None, .. } | Carried::ToolCall | Carried::Delegation { .. } => {}
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

    /// What a part line converts to in its run (the root run or an inline child), when the lanes may take it:
    /// its events, typed and finished as [`Observer::observe`] would hand them on, and the cursor change to commit.
    /// A text start always opens; a text end must close the open text part under the same id; a tool call's end
    /// must close the open tool-call part.
    pub(crate) fn part_in_any_run(&self, line: &PartLine<'_>) -> Option<PartPlan> {
        let (state, child) = self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        let timestamp = Some(line.head.timestamp);
        let mut events = Vec::with_capacity(3);
        let opened = match (&line.body, line.boundary) {
            (PartBody::Text { content, .. }, Boundary::Start) => {
                let message_id = match line.own_id() {
                    Some(id) => id.to_owned(),
                    None => part_id(&line.head.run_id, state.request_index, line.index, "text"),
                };
                events.push(text_start(timestamp, &message_id));
                if !content.is_empty() {
                    events.push(text_content(timestamp, &message_id, content));
                }
                let emitted_content = !content.is_empty();
                Some(PartCursor {
                    kind: PartKind::Text,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content,
                    emitted_signature: false,
                })
            }
            (PartBody::Text { content, .. }, Boundary::End) => {
                let cursor = state.parts.get(&line.index).filter(|cursor| cursor.kind == PartKind::Text)?;
                let own = line.own_id().or(Some(cursor.part_id.as_str()).filter(|id| !id.is_empty()));
                // The id the general path would close under must be the open part's (else it fails or reopens).
                (own? == cursor.part_id).then_some(())?;
                let message_id = &cursor.part_id;
                if !content.is_empty() && !cursor.emitted_content {
                    events.push(text_content(timestamp, message_id, content));
                }
                events.push(text_end(timestamp, message_id.clone()));
                None
            }
            (PartBody::Thinking { content, signature }, Boundary::Start) => {
                // Positional, as the general path names it: a reasoning item can hold several parts with one id.
                let message_id = part_id(&line.head.run_id, state.request_index, line.index, "reasoning");
                let signature = signature.as_deref().filter(|signature| !signature.is_empty());
                events.push(reasoning_start(timestamp, &message_id));
                if !content.is_empty() {
                    events.push(reasoning_content(timestamp, &message_id, content));
                }
                if let Some(signature) = signature {
                    events.push(encrypted(timestamp, &message_id, signature));
                }
                Some(PartCursor {
                    kind: PartKind::Reasoning,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content: !content.is_empty(),
                    emitted_signature: signature.is_some(),
                })
            }
            (PartBody::Thinking { content, signature }, Boundary::End) => {
                let cursor = state.parts.get(&line.index).filter(|cursor| cursor.kind == PartKind::Reasoning)?;
                let message_id = &cursor.part_id;
                if !content.is_empty() && !cursor.emitted_content {
                    events.push(reasoning_content(timestamp, message_id, content));
                }
                let signature = signature.as_deref().filter(|signature| !signature.is_empty());
                if let Some(signature) = signature.filter(|_| !cursor.emitted_signature) {
                    events.push(encrypted(timestamp, message_id, signature));
                }
                events.push(reasoning_end(timestamp, message_id.clone()));
                None
            }
            (PartBody::ToolCall { tool_name, args }, Boundary::End) => {
                let cursor = state.parts.get(&line.index).filter(|cursor| cursor.kind == PartKind::ToolCall)?;
                let args = args.as_deref().map(str::to_owned);
                events.extend(tool_call_events(timestamp, cursor.part_id.clone(), tool_name, args));
                None
            }
            (PartBody::ToolCall { .. }, Boundary::Start) => return None,
        };
        let events = self.as_observed(events, &line.head.run_id, child);
        Some(PartPlan { events, child, opened })
    }

    /// What a content delta converts to when its part has no cursor yet (no start came first) in its run (the
    /// root run or an inline child): the part's start and content events, finished as [`Observer::observe`] hands
    /// them on, and the cursor it opens.
    pub(crate) fn opening_delta_in_any_run(&self, delta: &ContentDelta<'_>) -> Option<PartPlan> {
        let head = &delta.line.head;
        let (state, child, _) = self.lane_run_or_unbound(&head.thread_id, &head.run_id)?;
        let index = delta.line.index;
        if state.parts.contains_key(&index) {
            return None;
        }
        let timestamp = Some(head.timestamp);
        let text = delta.text();
        let (events, part_id) = match delta.part_kind {
            PartKind::Text => {
                let id = part_id(&head.run_id, state.request_index, index, "text");
                (vec![text_start(timestamp, &id), text_content(timestamp, &id, text)], id)
            }
            PartKind::Reasoning => {
                let id = part_id(&head.run_id, state.request_index, index, "reasoning");
                (vec![reasoning_start(timestamp, &id), reasoning_content(timestamp, &id, text)], id)
            }
            PartKind::ToolCall => return None,
        };
        let cursor = PartCursor {
            kind: delta.part_kind,
            part_id,
            tool_name: None,
            emitted_content: true,
            emitted_signature: false,
        };
        Some(PartPlan { events: self.as_observed(events, &head.run_id, child), child, opened: Some(cursor) })
    }

    /// Commit what [`Observer::observe`] commits for a content delta [`Observer::opening_delta_in_any_run`]
    /// planned: the run bound to its thread (if it was not), the part's cursor opened.
    pub(crate) fn commit_opening_delta_in(&mut self, delta: &ContentDelta<'_>, plan: PartPlan) -> Vec<Event> {
        let head = &delta.line.head;
        if !self.core.state.threads.contains_key(head.run_id.as_ref()) {
            self.core.state.threads.insert(head.run_id.to_string(), head.thread_id.to_string());
        }
        self.commit_part(&head.run_id, delta.line.index, plan)
    }

    /// A lane's converted events as [`Observer::observe`] hands them on: attributed to a child run, then
    /// finished (the display fold's bounds).
    fn as_observed(&self, mut events: Vec<Event>, run_id: &str, child: bool) -> Vec<Event> {
        if child {
            events = attribute(events, run_id);
        }
        match self.finish {
            Some(finish) => events.into_iter().map(finish).collect(),
            None => events,
        }
    }

    /// Commit what [`Observer::observe`] commits for a part line [`Observer::part_in_any_run`] accepted: the
    /// part's cursor opened (a start), or closed (an end).
    pub(crate) fn commit_part_in(&mut self, line: &PartLine<'_>, plan: PartPlan) -> Vec<Event> {
        self.commit_part(&line.head.run_id, line.index, plan)
    }

    /// Open (or, without a cursor in the plan, close) part `index` of `run_id` as `plan` says.
    fn commit_part(&mut self, run_id: &str, index: i64, plan: PartPlan) -> Vec<Event> {
        let state = if plan.child { self.core.state.children.get_mut(run_id) } else { Some(&mut self.core.state) };
        if let Some(state) = state {
            match plan.opened {
                Some(cursor) => drop(state.parts.insert(index, cursor)),
                None => drop(state.parts.shift_remove(&index)),
            }
        }
        plan.events
    }
}

impl Observer<RootStream> {
    /// The `TOOL_CALL_RESULT` a tool's successful return converts to in its run, finished as
    /// [`Observer::observe`] hands it on, when the lanes may take it; the return changes no conversion state.
    pub(crate) fn tool_return_in_any_run(&self, line: &ToolReturnLine<'_>) -> Option<Vec<Event>> {
        let (_, child) = self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        let result = tool_result(Some(line.head.timestamp), &line.tool_call_id, &line.content);
        Some(self.as_observed(vec![result], &line.head.run_id, child))
    }
}

impl Observer<RootStream> {
    /// What an inline delegation line converts to when the lanes may take it: a completed child's closing
    /// events, its `SUBAGENT_*` event (all before the observation the carried lane writes), and the child run it
    /// opens or releases. The payload is read and validated as the general path validates it; a failed
    /// delegation and one without a child run take the general path.
    pub(crate) fn delegation_in_any_run(&self, line: &CarriedLine<'_>) -> Option<DelegationPlan> {
        let Carried::Delegation { payload } = line.carried else { return None };
        self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        let root = self.core.run_id.as_deref()?;
        let payload: Object = serde_json::from_str(payload).ok()?;
        let delegation = validate_delegation(&payload).ok()?;
        let child_run_id = delegation.child_run_id?;
        let started = match delegation.action {
            "started" => true,
            "completed" => false,
            _ => return None,
        };
        let timestamp = Some(line.head.timestamp);
        let child = self.core.state.children.get(child_run_id).filter(|_| !started);
        let closing = child.map(|child| closing_events(timestamp, child)).unwrap_or_default();
        let closing = self.as_observed(closing, child_run_id, true);
        let event = subagent_event(&delegation, timestamp, root, child_run_id);
        let event = self.as_observed(vec![event], child_run_id, false).pop()?;
        Some(DelegationPlan { closing, event, child_run_id: child_run_id.to_owned(), started })
    }

    /// Commit what [`Observer::observe`] commits for a delegation [`Observer::delegation_in_any_run`] planned:
    /// a started child run gets its cursors, a completed one's are released.
    fn commit_delegation(&mut self, plan: &DelegationPlan) {
        let children = &mut self.core.state.children;
        if plan.started {
            children.entry(plan.child_run_id.clone()).or_default();
        } else {
            children.shift_remove(&plan.child_run_id);
        }
    }
}

/// What an inline delegation line converts to besides its observation.
#[derive(Debug)]
pub(crate) struct DelegationPlan {
    /// A completed child's open text and reasoning parts' end events, attributed to it.
    pub(crate) closing: Vec<Event>,
    /// The `SUBAGENT_STARTED` or `SUBAGENT_FINISHED` event. Like every event here, finished as
    /// [`Observer::observe`] hands it on.
    pub(crate) event: Event,
    child_run_id: String,
    started: bool,
}

/// What a part line converts to: its events, whether its run is a child, and the cursor a start opens (an end
/// closes the part's cursor).
#[derive(Debug)]
pub(crate) struct PartPlan {
    pub(crate) events: Vec<Event>,
    pub(crate) child: bool,
    opened: Option<PartCursor>,
}
