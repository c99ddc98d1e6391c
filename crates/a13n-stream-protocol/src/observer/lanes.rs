//! What the fast lanes read of the observer and apply to it: whether a run's line may skip the general path, the
//! open part a delta extends, and each lane line's plan (its events, by the general path's rules, and its changes:
//! a cursor's flag, a new or closed cursor, a request index, a run bound to its thread, a child run opened or
//! released). Every check here is one under which [`observe`](Observer::observe) would do exactly what the lane
//! does.

use std::borrow::Cow;

use super::custom::input_event;
use super::delegation::{attribute, delegation_steps, validate_delegation};
use super::parts::{content_delta, part_boundary, part_start, tool_call_delta};
use super::plan::{Change, Plan, RunChange};
use super::terminal::tool_result;
use super::{ObserverState, RootStream};
use crate::extension::Extension;
use crate::json::Object;
use crate::part_kind::{PartBody, PartKind};
use crate::{Event, Observer};

use crate::lanes::carried_line::{Carried, CarriedLine};
use crate::lanes::delta_line::ContentDelta;
use crate::lanes::input_line::InputLine;
use crate::lanes::part_line::{PartLine, ToolReturnLine};
use crate::PartIndex;

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
        let cursor = state.parts.get(&PartIndex::from(index)).filter(|cursor| cursor.kind == kind)?;
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
        // A restored observer may name its run but not its thread, which the general path then fills in.
        self.core.thread_id.as_deref()?;
        let bound = match self.core.state.threads.get(run_id) {
            Some(bound) if bound != thread_id => return None,
            found => found.is_some(),
        };
        let child = run_id != root;
        Some((self.cursors_of(run_id, child)?, child, bound))
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
        delegation: Option<DelegationPlan>,
    ) {
        if let Some(plan) = delegation {
            self.core.state.apply(plan.change);
        }
        let change = match carried {
            Carried::Harness(Extension::ModelRequestStarted { request_index: Some(index) }) => {
                RunChange::RequestIndex(index.clone())
            }
            Carried::ToolCallStart { index, tool_call_id, tool_name } => {
                let body = PartBody::ToolCall {
                    tool_call_id: Cow::Borrowed(tool_call_id),
                    tool_name: Some(Cow::Borrowed(tool_name)),
                    args: None,
                    builtin: false,
                };
                // A tool call's start opens its cursor and converts to no event of its own.
                let Some(run) = self.cursors_of(run_id, child) else { return };
                part_start(run_id, &run.request_index, PartIndex::from(*index), &body, None).1
            }
            // A delegation's change is its plan's, applied above.
            Carried::Harness(_) | Carried::ToolCall | Carried::UnpresentedResult | Carried::Delegation { .. } => return,
        };
        self.core.state.apply(Change::Run(child.then_some(run_id), change));
    }

    /// The cursors of `run_id`: the root's, or the inline child's (`None` when it has none).
    fn cursors_of(&self, run_id: &str, child: bool) -> Option<&ObserverState> {
        if child {
            self.core.state.children.get(run_id)
        } else {
            Some(&self.core.state)
        }
    }

    /// Whether an argument delta of tool-call part `index` of `run_id` (the root run or an inline child) naming
    /// `call_id` (if any), with no tool-name delta, changes nothing by the general path's rule
    /// ([`tool_call_delta`]: its part is open as a tool call under that call), so it is carried through as one
    /// `CUSTOM` event, under the conditions of [`Observer::lane_run`]. `Some(child)` when it does.
    pub(crate) fn open_tool_call_in_any_run(
        &self,
        thread_id: &str,
        run_id: &str,
        index: i64,
        call_id: Option<&str>,
    ) -> Option<bool> {
        let (state, child) = self.lane_run(thread_id, run_id)?;
        matches!(tool_call_delta(run_id, state, PartIndex::from(index), call_id, None), Ok(None)).then_some(child)
    }

    /// Commit what [`Observer::observe`] commits for the content delta [`Observer::open_part_in_any_run`] accepted.
    pub(crate) fn commit_open_part_content_in(&mut self, run_id: &str, child: bool, index: i64) {
        let emitted = RunChange::Emitted { index: PartIndex::from(index), content: true, signature: false };
        self.core.state.apply(Change::Run(child.then_some(run_id), emitted));
    }

    /// Whether kept events pass through a finishing step (a display fold's bounds).
    pub(crate) fn has_finish(&self) -> bool {
        self.finish.is_some()
    }

    /// What a part line converts to in its run (the root run or an inline child), by the general path's rules,
    /// when the lanes may take it: its events, typed and finished as [`Observer::observe`] would hand them on, and
    /// the cursor change to apply. A line the general path would reject takes the general path.
    pub(crate) fn part_in_any_run<'l>(&self, line: &'l PartLine<'_>) -> Option<Plan<'l>> {
        let (state, child) = self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        let (run_id, timestamp) = (line.head.run_id.as_ref(), Some(line.head.timestamp));
        let index = PartIndex::from(line.index);
        let (events, change) = part_boundary(run_id, state, index, line.boundary, &line.body, timestamp).ok()?;
        // A part converted to no event (a tool call's start) is carried through whole by the general path.
        (!events.is_empty()).then_some(())?;
        let changes = vec![Change::Run(child.then_some(run_id), change)];
        Some(Plan { events: self.as_observed(events, run_id, child), changes })
    }

    /// What a content delta converts to when its part has no cursor yet (no start came first) in its run (the
    /// root run or an inline child): the part's start and content events, finished as [`Observer::observe`] hands
    /// them on, the run bound to its thread (if it was not) and the part's cursor opened.
    pub(crate) fn opening_delta_in_any_run<'l>(&self, delta: &'l ContentDelta<'_>) -> Option<Plan<'l>> {
        let head = &delta.line.head;
        let (state, child, bound) = self.lane_run_or_unbound(&head.thread_id, &head.run_id)?;
        let (run_id, index, kind) = (head.run_id.as_ref(), PartIndex::from(delta.line.index), delta.part_kind);
        if state.parts.contains_key(&index) || kind == PartKind::ToolCall {
            return None;
        }
        let timestamp = Some(head.timestamp);
        let (events, change) = content_delta(run_id, state, index, kind, Some(delta.text()), None, timestamp).ok()?;
        let mut changes = Vec::with_capacity(2);
        if !bound {
            changes.push(Change::BindThread { run_id, thread_id: &head.thread_id });
        }
        changes.extend(change.map(|change| Change::Run(child.then_some(run_id), change)));
        Some(Plan { events: self.as_observed(events, run_id, child), changes })
    }

    /// Apply a lane's plan: what [`Observer::observe`] commits for its line. Its events are handed back.
    pub(crate) fn commit(&mut self, plan: Plan<'_>) -> Vec<Event> {
        self.core.state.apply_all(plan.changes);
        plan.events
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
}

impl Observer<RootStream> {
    /// The `TOOL_CALL_RESULT` a tool's successful return converts to in its run, finished as
    /// [`Observer::observe`] hands it on, when the lanes may take it; the return changes no conversion state.
    pub(crate) fn tool_return_in_any_run(&self, line: &ToolReturnLine<'_>) -> Option<Vec<Event>> {
        let (_, child) = self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        // A result the reference refuses is the general path's to refuse.
        let result = tool_result(Some(line.head.timestamp), &line.tool_call_id, &line.content).ok()?;
        Some(self.as_observed(vec![result], &line.head.run_id, child))
    }
}

impl Observer<RootStream> {
    /// The `CUSTOM` event a text input converts to in its run, finished as [`Observer::observe`] hands it on,
    /// when the lanes may take it; an input changes no conversion state.
    pub(crate) fn input_in_any_run(&self, line: &InputLine<'_>) -> Option<Vec<Event>> {
        let (_, child) = self.lane_run(&line.head.thread_id, &line.head.run_id)?;
        Some(self.as_observed(vec![input_event(line.input())], &line.head.run_id, child))
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
        // A failed delegation takes the general path.
        matches!(delegation.action, "started" | "completed").then_some(())?;
        let timestamp = Some(line.head.timestamp);
        let (closing, event, change) = delegation_steps(&delegation, child_run_id, &self.core.state, root, timestamp);
        // The closing events are already attributed to the child.
        let closing = self.as_observed(closing, child_run_id, false);
        let event = self.as_observed(vec![event], child_run_id, false).pop()?;
        Some(DelegationPlan { closing, event, change: change.owned_child()? })
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
    /// The child run opened or released.
    change: Change<'static>,
}
