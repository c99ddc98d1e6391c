//! Conversion of public Harness source items into AG-UI events.
//!
//! [`Observer`] is a sans-IO state machine: [`Observer::observe`] takes one source item and returns the AG-UI
//! events it converts to, committing the conversion state only when the whole item converts. Call order:
//!
//! 1. create an observer ([`Observer::new`]), optionally with a host processor ([`Observer::with_processor`]);
//! 2. either [`Observer::resume`] once from retained source history, or [`Observer::restore`] an exported
//!    continuation, or neither (a fresh stream);
//! 3. [`Observer::observe`] each live item in order; [`Observer::export`] between items to checkpoint.
//!
//! [`HarnessAguiObserver`] observes one Run. [`HarnessAguiStreamObserver`] observes a root Run together with its
//! forwarded inline children: each Run keeps its own part cursors, child events carry `subagentRunId`, inline
//! delegation observations produce the child lifecycle, and only the root emits `RUN_*` events.

use std::borrow::Borrow;
use std::marker::PhantomData;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agui::{
    CustomEvent, Event, Interrupt, ReasoningEncryptedValueEvent, ReasoningMessageContentEvent,
    ReasoningMessageEndEvent, ReasoningMessageStartEvent, RunErrorEvent, RunFinishedEvent, RunFinishedOutcome,
    RunStartedEvent, SubagentErrorEvent, SubagentFinishedEvent, SubagentStartedEvent, TextMessageContentEvent,
    TextMessageEndEvent, TextMessageStartEvent, TokenUsage, ToolCallArgsEvent, ToolCallEndEvent, ToolCallResultEvent,
    ToolCallStartEvent,
};
use crate::content::{public_tool_value, tool_execution_value, tool_result_content};
use crate::error::{InputError, ObserveError};
use crate::fragments::fragment_lazily;
use crate::json::{char_len, Object, PyDumps};
use crate::names;
use crate::pydantic::Validation;
use crate::source::{EventKind, RunResult, RunStatus, SourceBody, SourceEvent, SourceItem};

/// A host processor: sees each converted event with its source item and returns it, a replacement, or `None` to
/// drop it. A replacement may change only the event type's mutable fields (text and argument deltas, encrypted
/// values, tool-result content, a run's result, an error message); anything else is rejected.
pub type AguiEventProcessor = Box<dyn FnMut(&SourceItem, Event) -> Option<Event> + Send>;

/// The kind of an open model response part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// A text part, presented as a text message.
    Text,
    /// A thinking part, presented as a reasoning message.
    Reasoning,
    /// A tool-call part, presented at its end.
    ToolCall,
}

/// The presentation state of one open model response part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartCursor {
    /// What the part presents as.
    pub kind: PartKind,
    /// The message or tool-call identity the part presents under.
    pub part_id: String,
    /// The tool name streamed so far (tool-call parts).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Whether content was already emitted (so the part's end does not repeat it).
    #[serde(default)]
    pub emitted_content: bool,
    /// Whether a signature was already emitted.
    #[serde(default)]
    pub emitted_signature: bool,
}

/// The conversion cursors of one Run and, for the root of a stream, of its inline children.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserverState {
    /// The index of the model request in progress.
    #[serde(default)]
    pub request_index: i64,
    /// Open parts by part index, in the order they opened.
    #[serde(default)]
    pub parts: IndexMap<i64, PartCursor>,
    /// Inline children's cursors by Run.
    #[serde(default)]
    pub children: IndexMap<String, ObserverState>,
    /// The Thread each observed Run is bound to.
    #[serde(default)]
    pub threads: IndexMap<String, String>,
}

/// The conversion state needed to continue mid-part without replaying history (no event journal).
///
/// Its JSON is the reference's `ObserverContinuation` JSON, so it moves between Python and Rust hosts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserverContinuation {
    /// The bound Thread, once observation began.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The bound (root) Run, once observation began.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The conversion cursors.
    #[serde(default)]
    pub state: ObserverState,
}

impl ObserverContinuation {
    /// The continuation as the reference writes it (`model_dump_json`).
    pub fn to_json(&self) -> String {
        crate::json::to_pydantic_json(self).unwrap_or_default()
    }

    /// Read a continuation written by this library or the reference.
    pub fn from_json(text: &str) -> Result<ObserverContinuation, InputError> {
        serde_json::from_str(text).map_err(|error| InputError::new("observer continuation", error.to_string()))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Which observer: one Run, or a root Run with its inline children.
pub trait Mode: sealed::Sealed + Send + 'static {
    #[doc(hidden)]
    const STREAM: bool;
}

/// Observe exactly one Harness Run.
#[derive(Debug)]
pub enum SingleRun {}
/// Observe a root Run and its forwarded inline children.
#[derive(Debug)]
pub enum RootStream {}
impl sealed::Sealed for SingleRun {}
impl sealed::Sealed for RootStream {}
impl Mode for SingleRun {
    const STREAM: bool = false;
}
impl Mode for RootStream {
    const STREAM: bool = true;
}

/// Converts and accumulates one public Harness Run as AG-UI events.
pub type HarnessAguiObserver = Observer<SingleRun>;
/// Converts a Host's root stream and its forwarded inline children, in source order.
pub type HarnessAguiStreamObserver = Observer<RootStream>;

/// Everything an observation commits.
#[derive(Clone, Debug, Default)]
struct Core {
    thread_id: Option<String>,
    run_id: Option<String>,
    state: ObserverState,
    events: Vec<Event>,
}

/// The AG-UI observer state machine; see the [module documentation](self) for the call order.
pub struct Observer<M: Mode> {
    processor: Option<AguiEventProcessor>,
    /// A library-internal step after the processor (the display fold's payload bounds); it changes only mutable
    /// fields by construction, so it needs no validation.
    finish: Option<fn(Event) -> Event>,
    retain_events: bool,
    core: Core,
    resume_completed: bool,
    mode: PhantomData<M>,
}

impl<M: Mode> std::fmt::Debug for Observer<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("stream", &M::STREAM)
            .field("processor", &self.processor.is_some())
            .field("retain_events", &self.retain_events)
            .field("thread_id", &self.core.thread_id)
            .field("run_id", &self.core.run_id)
            .field("event_count", &self.core.events.len())
            .finish()
    }
}

impl<M: Mode> Default for Observer<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Mode> Observer<M> {
    /// A fresh observer that retains the events it emits (see [`Observer::retain_events`]).
    pub fn new() -> Self {
        Observer {
            processor: None,
            finish: None,
            retain_events: true,
            core: Core::default(),
            resume_completed: false,
            mode: PhantomData,
        }
    }

    /// Use a host processor for every converted event.
    #[must_use]
    pub fn with_processor(mut self, processor: AguiEventProcessor) -> Self {
        self.processor = Some(processor);
        self
    }

    /// Apply `finish` to every kept event after the processor.
    #[must_use]
    pub(crate) fn with_finish(mut self, finish: fn(Event) -> Event) -> Self {
        self.finish = Some(finish);
        self
    }

    /// Whether to keep every emitted event for [`Observer::snapshot`] (default `true`). A live-only host turns
    /// this off so memory does not grow with the stream.
    #[must_use]
    pub fn retain_events(mut self, retain: bool) -> Self {
        self.retain_events = retain;
        self
    }

    /// Continue conversion from an exported continuation, without the old event journal. Supply the same
    /// processor policy the exporting observer had.
    pub fn restore(continuation: ObserverContinuation, processor: Option<AguiEventProcessor>) -> Self {
        Observer {
            processor,
            finish: None,
            retain_events: false,
            core: Core {
                thread_id: continuation.thread_id,
                run_id: continuation.run_id,
                state: continuation.state,
                events: Vec::new(),
            },
            resume_completed: true,
            mode: PhantomData,
        }
    }

    /// A detached copy of the conversion state (the emitted events are deliberately excluded).
    pub fn export(&self) -> ObserverContinuation {
        ObserverContinuation {
            thread_id: self.core.thread_id.clone(),
            run_id: self.core.run_id.clone(),
            state: self.core.state.clone(),
        }
    }

    /// The bound Thread, once observation has begun.
    pub fn thread_id(&self) -> Option<&str> {
        self.core.thread_id.as_deref()
    }

    /// The bound (root) Run, once observation has begun.
    pub fn run_id(&self) -> Option<&str> {
        self.core.run_id.as_deref()
    }

    /// How many events have been retained: a stable boundary for [`Observer::snapshot`].
    pub fn event_count(&self) -> usize {
        self.core.events.len()
    }

    /// Retained events in `start..stop` (`stop = None` for all). Requires `retain_events`.
    pub fn snapshot(&self, start: usize, stop: Option<usize>) -> Result<Vec<Event>, ObserveError> {
        if !self.retain_events {
            return Err(ObserveError::observation("Snapshots require retain_events=True"));
        }
        let end = stop.unwrap_or(self.core.events.len());
        if end < start || end > self.core.events.len() {
            return Err(ObserveError::Usage(format!(
                "snapshot range {start}..{end} is outside the {} accumulated events",
                self.core.events.len()
            )));
        }
        Ok(self.core.events[start..end].to_vec())
    }

    /// Convert one source item and commit it atomically; on error nothing changes.
    pub fn observe(&mut self, item: &SourceItem) -> Result<Vec<Event>, ObserveError> {
        observe_into::<M>(&mut self.core, self.processor.as_mut(), self.finish, self.retain_events, item)
    }

    fn check_fresh(&self) -> Result<(), ObserveError> {
        if self.resume_completed || self.core.thread_id.is_some() || self.core.run_id.is_some() {
            return Err(ObserveError::observation("Observer resumption requires a fresh observer"));
        }
        Ok(())
    }

    /// Rebuild this fresh observer atomically from the exact, finite, ordered source history of one root stream.
    ///
    /// Historical events are accumulated (when retained) but not returned. On error the observer stays fresh;
    /// retry with complete history. After success use [`Observer::observe`], never a second resume.
    pub fn resume<I>(&mut self, history: I) -> Result<(), ObserveError>
    where
        I: IntoIterator,
        I::Item: Borrow<SourceItem>,
    {
        self.check_fresh()?;
        let mut staged = Core::default();
        for item in history {
            observe_into::<M>(&mut staged, self.processor.as_mut(), self.finish, self.retain_events, item.borrow())?;
        }
        self.core = staged;
        self.resume_completed = true;
        Ok(())
    }

    /// [`Observer::resume`] from an asynchronous stream of history. Dropping the future leaves the observer fresh.
    #[cfg(feature = "async")]
    pub async fn resume_stream<S>(&mut self, history: S) -> Result<(), ObserveError>
    where
        S: futures_core::Stream,
        S::Item: Borrow<SourceItem>,
    {
        self.check_fresh()?;
        let mut history = std::pin::pin!(history);
        let mut staged = Core::default();
        while let Some(item) = std::future::poll_fn(|cx| history.as_mut().poll_next(cx)).await {
            observe_into::<M>(&mut staged, self.processor.as_mut(), self.finish, self.retain_events, item.borrow())?;
        }
        self.core = staged;
        self.resume_completed = true;
        Ok(())
    }
}

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
        if self.processor.is_some() || self.retain_events {
            return None;
        }
        let root = self.core.run_id.as_deref()?;
        if self.core.state.threads.get(run_id).map(String::as_str) != Some(thread_id) {
            return None;
        }
        let child = run_id != root;
        let state = if child { self.core.state.children.get(run_id)? } else { &self.core.state };
        let cursor = state.parts.get(&index).filter(|cursor| cursor.kind == kind)?;
        Some((&cursor.part_id, child))
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
}

fn observe_into<M: Mode>(
    core: &mut Core,
    processor: Option<&mut AguiEventProcessor>,
    finish: Option<fn(Event) -> Event>,
    retain: bool,
    item: &SourceItem,
) -> Result<Vec<Event>, ObserveError> {
    validate_correlation::<M>(core, item)?;
    let root_run_id = core.run_id.as_deref().unwrap_or(&item.run_id).to_owned();
    // Convert in place, keeping copies of exactly the entries this item can touch; a failure puts them back.
    let undo = Undo::capture::<M>(&core.state, item, &root_run_id);
    let converted =
        if M::STREAM { convert_stream(item, &mut core.state, &root_run_id) } else { convert(item, &mut core.state) };
    let processed = converted.and_then(|converted| match processor {
        None => Ok(converted),
        Some(processor) => {
            let mut kept = Vec::with_capacity(converted.len());
            for event in converted {
                if let Some(candidate) = processor(item, event.clone()) {
                    kept.push(validate_processor_result(&event, candidate)?);
                }
            }
            Ok(kept)
        }
    });
    let processed = match processed {
        Ok(processed) if finish.is_some() => {
            processed.into_iter().map(finish.unwrap_or(std::convert::identity)).collect()
        }
        Ok(processed) => processed,
        Err(error) => {
            undo.apply(&mut core.state);
            return Err(error);
        }
    };
    // Visibility decisions operate on whole events; only transport is split.
    let mut framed = Vec::with_capacity(processed.len());
    for (index, event) in processed.into_iter().enumerate() {
        match event {
            Event::Custom(custom) => frame_custom(custom, item, index, &mut framed),
            other => framed.push(other),
        }
    }
    if core.thread_id.is_none() {
        core.thread_id = Some(item.thread_id.clone());
    }
    if core.run_id.is_none() {
        core.run_id = Some(item.run_id.clone());
    }
    if retain {
        core.events.extend(framed.iter().cloned());
    }
    Ok(framed)
}

/// Copies of the state entries one item's conversion can change, to put back if the item is rejected.
///
/// A conversion touches the cursors of its own Run (the root's parts and request index, or one child entry), the
/// Run's thread binding, and for an inline delegation the delegated child's entry. Copying those alone keeps
/// atomicity without cloning the state of every Run ever seen.
struct Undo {
    request_index: i64,
    root_parts: Option<IndexMap<i64, PartCursor>>,
    /// Child entries by key: their position and value before the item, or `None` when absent.
    children: Vec<(String, Option<(usize, ObserverState)>)>,
    thread: Option<(String, Option<(usize, String)>)>,
}

impl Undo {
    fn capture<M: Mode>(state: &ObserverState, item: &SourceItem, root_run_id: &str) -> Undo {
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

    fn apply(self, state: &mut ObserverState) {
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

fn restore_entry<V>(map: &mut IndexMap<String, V>, key: String, previous: Option<(usize, V)>) {
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

fn frame_custom(event: CustomEvent, item: &SourceItem, index: usize, out: &mut Vec<Event>) {
    let identity = || format!("{}:{}:{}:{index}", item.thread_id, item.run_id, item.sequence);
    out.extend(fragment_lazily(event, identity));
}

fn validate_correlation<M: Mode>(core: &Core, item: &SourceItem) -> Result<(), ObserveError> {
    if M::STREAM {
        if let Some(expected) = core.state.threads.get(&item.run_id) {
            if *expected != item.thread_id {
                return Err(ObserveError::observation("Harness Thread correlation changed for a Run"));
            }
        }
        return Ok(());
    }
    if core.thread_id.as_ref().is_some_and(|thread| *thread != item.thread_id) {
        return Err(ObserveError::observation("Harness Thread correlation changed within one observer"));
    }
    if core.run_id.as_ref().is_some_and(|run| *run != item.run_id) {
        return Err(ObserveError::observation("Harness Run correlation changed within one observer"));
    }
    Ok(())
}

fn validate_processor_result(original: &Event, candidate: Event) -> Result<Event, ObserveError> {
    if candidate == *original {
        return Ok(candidate);
    }
    if candidate.event_type() != original.event_type() {
        return Err(ObserveError::observation("The event processor changed the AG-UI event type"));
    }
    if candidate.timestamp().is_some_and(|t| t.abs() > (1 << 53) - 1) {
        return Err(ObserveError::observation("The event processor returned an invalid AG-UI event"));
    }
    let (Value::Object(before), Value::Object(after)) = (original.to_value(), candidate.to_value()) else {
        return Err(ObserveError::observation("The event processor returned a non-AG-UI value"));
    };
    let mutable = original.mutable_fields();
    for key in before.keys().chain(after.keys()) {
        if !mutable.contains(&key.as_str()) && before.get(key) != after.get(key) {
            return Err(ObserveError::observation(format!(
                "The event processor changed structural field {}",
                snake_case(key)
            )));
        }
    }
    Ok(candidate)
}

fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for ch in camel.chars() {
        if ch.is_ascii_uppercase() {
            out.push('_');
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

// ------------------------------------------------------------------------------------------ conversion rules

fn convert_stream(item: &SourceItem, state: &mut ObserverState, root_run_id: &str) -> Result<Vec<Event>, ObserveError> {
    state.threads.insert(item.run_id.clone(), item.thread_id.clone());
    let is_child = item.run_id != root_run_id;
    if is_child {
        state.children.entry(item.run_id.clone()).or_default();
    }
    if let Some(event) = item.event() {
        if let Some(payload) = inline_delegation(event) {
            return convert_delegation(item, event, payload, state, root_run_id, is_child);
        }
    }
    let cursor = if is_child { state.children.entry(item.run_id.clone()).or_default() } else { state };
    let events = convert(item, cursor)?;
    if !is_child {
        return Ok(events);
    }
    Ok(attribute(
        events
            .into_iter()
            .filter(|e| !matches!(e, Event::RunStarted(_) | Event::RunFinished(_) | Event::RunError(_)))
            .collect(),
        &item.run_id,
    ))
}

fn inline_delegation(event: &SourceEvent) -> Option<&Object> {
    if event.kind() != EventKind::Extension || event.str_field("kind") != Some("delegation") {
        return None;
    }
    let payload = event.object("payload")?;
    (payload.get("type").and_then(Value::as_str) == Some("inline_delegation")).then_some(payload)
}

/// The fields of a validated inline delegation observation.
struct Delegation<'a> {
    action: &'a str,
    subagent: &'a str,
    status: &'a str,
    parent_run_id: &'a str,
    parent_tool_call_id: Option<&'a str>,
    child_run_id: Option<&'a str>,
}

/// Validate an inline delegation payload as the reference's `InlineDelegationPayload` model does, failing with
/// Pydantic's own `ValidationError` text (every field error in declaration order, then extra fields, then the
/// model validator).
fn validate_delegation(payload: &Object) -> Result<Delegation<'_>, ObserveError> {
    const FIELDS: [&str; 10] = [
        "type",
        "invocation_id",
        "action",
        "child_instance_id",
        "subagent",
        "status",
        "parent_run_id",
        "parent_agent_instance_id",
        "parent_tool_call_id",
        "child_run_id",
    ];
    fn invocation_pattern(text: &str) -> bool {
        text.strip_prefix("delegation-").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    }
    let whole = Value::Object(payload.clone());
    let mut check = Validation::new("InlineDelegationPayload");
    let text = |check: &mut Validation, field: &str, max: usize, required: bool| -> Option<&str> {
        match payload.get(field) {
            None if required => {
                check.missing(field, &whole);
                None
            }
            None | Some(Value::Null) if !required => None,
            Some(value) => {
                let pattern = (field == "invocation_id")
                    .then_some(("^delegation-[A-Za-z0-9_-]+$", invocation_pattern as fn(&str) -> bool));
                let min = if field == "invocation_id" { 0 } else { 1 };
                check.string(field, value, min, max, pattern).then(|| value.as_str()).flatten()
            }
            None => None,
        }
    };
    if let Some(value) = payload.get("type") {
        check.literal("type", value, &["inline_delegation"]);
    }
    text(&mut check, "invocation_id", 128, true);
    let action = match payload.get("action") {
        None => {
            check.missing("action", &whole);
            None
        }
        Some(value) => {
            check.literal("action", value, &["started", "completed", "failed"]).then(|| value.as_str()).flatten()
        }
    };
    text(&mut check, "child_instance_id", 128, true);
    let subagent = text(&mut check, "subagent", 128, true);
    let status = text(&mut check, "status", 128, true);
    let parent_run_id = text(&mut check, "parent_run_id", 256, true);
    text(&mut check, "parent_agent_instance_id", 256, true);
    let parent_tool_call_id = text(&mut check, "parent_tool_call_id", 256, false);
    let child_run_id = text(&mut check, "child_run_id", 256, false);
    for (key, value) in payload.iter().filter(|(key, _)| !FIELDS.contains(&key.as_str())) {
        check.extra(key, value);
    }
    if check.is_empty() && matches!(action, Some("started" | "completed")) && child_run_id.is_none() {
        check.value_error("started and completed inline delegation events require child_run_id", &whole);
    }
    match (action, subagent, status, parent_run_id) {
        (Some(action), Some(subagent), Some(status), Some(parent_run_id)) if check.is_empty() => {
            Ok(Delegation { action, subagent, status, parent_run_id, parent_tool_call_id, child_run_id })
        }
        _ => Err(ObserveError::Validation(check.message())),
    }
}

fn convert_delegation(
    item: &SourceItem,
    event: &SourceEvent,
    payload: &Object,
    state: &mut ObserverState,
    root_run_id: &str,
    is_child: bool,
) -> Result<Vec<Event>, ObserveError> {
    let delegation = validate_delegation(payload)?;
    let timestamp = Some(item.occurred_at.timestamp_ms());
    // Preparation may fail before a child Run exists: keep the observation, fabricate no child identity.
    let Some(child_id) = delegation.child_run_id else {
        return Ok(vec![custom_harness_event(item, event)]);
    };
    let child = state.children.entry(child_id.to_owned()).or_default();
    let mut events = Vec::new();
    if delegation.action == "started" {
        events.push(Event::SubagentStarted(SubagentStartedEvent {
            timestamp,
            subagent_run_id: Some(child_id.to_owned()),
            name: delegation.subagent.to_owned(),
            parent_tool_call_id: delegation.parent_tool_call_id.map(str::to_owned),
            parent_subagent_run_id: (delegation.parent_run_id != root_run_id)
                .then(|| delegation.parent_run_id.to_owned()),
            ..SubagentStartedEvent::default()
        }));
    } else {
        events.extend(attribute(close_parts(item, child), child_id));
        if delegation.action == "completed" {
            events.push(Event::SubagentFinished(SubagentFinishedEvent {
                timestamp,
                subagent_run_id: Some(child_id.to_owned()),
                outcome: Some(serde_json::json!({"type": "success"})),
                ..SubagentFinishedEvent::default()
            }));
        } else {
            events.push(Event::SubagentError(SubagentErrorEvent {
                timestamp,
                subagent_run_id: Some(child_id.to_owned()),
                message: format!("Inline delegation {}.", delegation.status),
                code: Some(delegation.status.to_owned()),
                ..SubagentErrorEvent::default()
            }));
        }
        // The parent reports completion only after accepting the child outcome: release its cursors.
        state.children.shift_remove(child_id);
    }
    let custom = custom_harness_event(item, event);
    if is_child {
        events.extend(attribute(vec![custom], &item.run_id));
    } else {
        events.push(custom);
    }
    Ok(events)
}

fn attribute(mut events: Vec<Event>, run_id: &str) -> Vec<Event> {
    for event in &mut events {
        event.set_subagent_run_id(run_id);
    }
    events
}

/// Settle open text and reasoning parts at an authoritative execution boundary.
fn close_parts(item: &SourceItem, state: &mut ObserverState) -> Vec<Event> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let events = state
        .parts
        .values()
        .filter_map(|cursor| match cursor.kind {
            PartKind::Text => Some(Event::TextMessageEnd(TextMessageEndEvent {
                timestamp,
                message_id: cursor.part_id.clone(),
                ..TextMessageEndEvent::default()
            })),
            PartKind::Reasoning => Some(Event::ReasoningMessageEnd(ReasoningMessageEndEvent {
                timestamp,
                message_id: cursor.part_id.clone(),
                ..ReasoningMessageEndEvent::default()
            })),
            PartKind::ToolCall => None,
        })
        .collect();
    state.parts.clear();
    events
}

fn convert(item: &SourceItem, state: &mut ObserverState) -> Result<Vec<Event>, ObserveError> {
    let event = match &item.body {
        SourceBody::Result(result) => {
            let mut events = close_parts(item, state);
            events.push(convert_terminal(item, result));
            return Ok(events);
        }
        SourceBody::Event(event) => event,
    };
    let events = match event.kind() {
        EventKind::Extension => {
            let payload = event.raw().get("payload").and_then(Value::as_object);
            let payload_type = payload.and_then(|p| p.get("type")).and_then(Value::as_str);
            if event.str_field("kind") == Some("lifecycle") && payload_type == Some("run_started") {
                return Ok(vec![Event::RunStarted(RunStartedEvent {
                    timestamp: Some(item.occurred_at.timestamp_ms()),
                    thread_id: item.thread_id.clone(),
                    run_id: item.run_id.clone(),
                    protocol_version: Some("1.0".into()),
                    ..RunStartedEvent::default()
                })]);
            }
            if event.str_field("kind") == Some("lifecycle") && payload_type == Some("model_request_started") {
                // Steering can announce the next request before the previous stream ends its parts: open parts
                // keep their identity until their own end or a replacing start.
                if let Some(index) = payload.and_then(|p| p.get("request_index")).and_then(Value::as_i64) {
                    if index >= 0 {
                        state.request_index = index;
                    }
                }
            }
            return Ok(vec![custom_harness_event(item, event)]);
        }
        EventKind::InputText | EventKind::InputMedia => return Ok(vec![convert_input(item, event)]),
        EventKind::EnqueuedMessages => {
            // Delivered messages may hold binary payloads: carry only the delivery's identity.
            let mut value = Object::new();
            value.insert("event_kind".into(), event.raw().get("event_kind").cloned().unwrap_or(Value::Null));
            value.insert("enqueue_id".into(), event.raw().get("enqueue_id").cloned().unwrap_or(Value::Null));
            return Ok(vec![custom(item, names::ENQUEUED_MESSAGES.into(), Value::Object(value))]);
        }
        EventKind::DeferredToolResults => {
            // Each resolved value arrives later as its own tool result; the batch carries identities only.
            let results = event.object("results");
            let ids = |key: &str| -> Value {
                let keys = results.and_then(|r| r.get(key)).and_then(Value::as_object);
                Value::Array(keys.map(|m| m.keys().map(|k| Value::String(k.clone())).collect()).unwrap_or_default())
            };
            let mut value = Object::new();
            value.insert("event_kind".into(), event.raw().get("event_kind").cloned().unwrap_or(Value::Null));
            value.insert("call_ids".into(), ids("calls"));
            value.insert("approval_ids".into(), ids("approvals"));
            return Ok(vec![custom(item, names::DEFERRED_TOOL_RESULTS.into(), Value::Object(value))]);
        }
        EventKind::Capability => {
            let name = event.str_field("kind").unwrap_or_default().to_owned();
            return Ok(vec![custom(item, name, Value::Object(event.raw().clone()))]);
        }
        EventKind::PartStart => convert_part_start(item, event, state),
        EventKind::PartDelta => convert_part_delta(item, event, state)?,
        EventKind::PartEnd => convert_part_end(item, event, state)?,
        EventKind::FunctionToolResult | EventKind::OutputToolResult => return convert_tool_result(item, event),
        EventKind::Other => Vec::new(),
    };
    if events.is_empty() {
        return Ok(vec![custom_pydantic_event(item, event.raw().clone())]);
    }
    Ok(events)
}

fn custom(item: &SourceItem, name: String, event: Value) -> Event {
    Event::Custom(CustomEvent {
        timestamp: Some(item.occurred_at.timestamp_ms()),
        name,
        value: item.source_value(event),
        ..CustomEvent::default()
    })
}

fn custom_pydantic_event(item: &SourceItem, raw: Object) -> Event {
    let kind = raw.get("event_kind").and_then(Value::as_str).unwrap_or_default();
    custom(item, format!("{}{kind}", names::PYDANTIC_AI_PREFIX), Value::Object(raw))
}

fn custom_harness_event(item: &SourceItem, event: &SourceEvent) -> Event {
    let kind = event.str_field("kind").unwrap_or_default();
    let raw = event.raw();
    let mut name = format!("{}{kind}", names::HARNESS_PREFIX);
    if kind == "tool" {
        if let Some(tool) = raw.get("payload").and_then(Value::as_object).and_then(tool_extra_name) {
            name.push('.');
            name.push_str(tool);
        }
    }
    // The extension event's own dump: schema_version, kind, payload.
    let mut value = Object::with_capacity(3);
    value.insert("schema_version".into(), raw.get("schema_version").cloned().unwrap_or_else(|| "1".into()));
    value.insert("kind".into(), kind.into());
    value.insert("payload".into(), raw.get("payload").cloned().unwrap_or(Value::Null));
    custom(item, name, Value::Object(value))
}

/// The `name` of a valid Tool extra payload (`ToolExtraEventPayload`), which names the observation.
fn tool_extra_name(payload: &Object) -> Option<&str> {
    const FIELDS: [&str; 6] = ["type", "tool_call_id", "tool_name", "tool_id", "name", "value"];
    if payload.keys().any(|key| !FIELDS.contains(&key.as_str())) || !payload.contains_key("value") {
        return None;
    }
    if payload.get("type").is_some_and(|t| t.as_str() != Some("tool_extra")) {
        return None;
    }
    for field in ["tool_call_id", "tool_name", "tool_id"] {
        let length = char_len(payload.get(field)?.as_str()?);
        if !(1..=256).contains(&length) {
            return None;
        }
    }
    let name = payload.get("name")?.as_str()?;
    valid_tool_event_name(name).then_some(name)
}

/// `^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$`, at most 256 characters.
fn valid_tool_event_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 256 || !bytes[0].is_ascii_lowercase() {
        return false;
    }
    let mut after_separator = false;
    for &byte in &bytes[1..] {
        match byte {
            b'a'..=b'z' | b'0'..=b'9' => after_separator = false,
            b'.' | b'_' | b'-' if !after_separator => after_separator = true,
            _ => return false,
        }
    }
    !after_separator
}

fn convert_input(item: &SourceItem, event: &SourceEvent) -> Event {
    let media = event.kind() == EventKind::InputMedia;
    let source = event.str_field("source").unwrap_or_default();
    let mut metadata = Object::new();
    let raw_metadata = event.object("metadata");
    metadata.insert("display".into(), raw_metadata.and_then(|m| m.get("display")).cloned().unwrap_or(true.into()));
    metadata.insert("source_id".into(), raw_metadata.and_then(|m| m.get("source_id")).cloned().unwrap_or(Value::Null));
    metadata.insert("media".into(), raw_metadata.and_then(|m| m.get("media")).cloned().unwrap_or(media.into()));
    if let Some(raw_metadata) = raw_metadata {
        for (key, value) in raw_metadata {
            if !metadata.contains_key(key) {
                metadata.insert(key.clone(), value.clone());
            }
        }
    }
    let mut value = Object::with_capacity(5);
    value.insert("input_id".into(), event.raw().get("input_id").cloned().unwrap_or(Value::Null));
    value.insert("source".into(), source.into());
    value.insert("content".into(), event.raw().get("content").cloned().unwrap_or(Value::Null));
    value.insert("message_id".into(), format!("{}:input:{}", item.run_id, item.sequence).into());
    value.insert("role".into(), (if matches!(source, "user" | "steering") { "user" } else { "system" }).into());
    Event::Custom(CustomEvent {
        timestamp: Some(item.occurred_at.timestamp_ms()),
        metadata: Some(metadata),
        name: if media { names::INPUT_MEDIA.into() } else { format!("{}{source}", names::INPUT_PREFIX) },
        value: item.source_value(Value::Object(value)),
        ..CustomEvent::default()
    })
}

fn part_id(run_id: &str, request_index: i64, part_index: i64, kind: &str) -> String {
    format!("{run_id}:request-{request_index}:part-{part_index}:{kind}")
}

fn non_empty<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).filter(|text| !text.is_empty())
}

fn text_start(timestamp: Option<i64>, message_id: &str) -> Event {
    Event::TextMessageStart(TextMessageStartEvent {
        timestamp,
        message_id: message_id.to_owned(),
        role: Some("assistant".into()),
        ..TextMessageStartEvent::default()
    })
}

fn text_content(timestamp: Option<i64>, message_id: &str, delta: &str) -> Event {
    Event::TextMessageContent(TextMessageContentEvent {
        timestamp,
        message_id: message_id.to_owned(),
        delta: delta.to_owned(),
        ..TextMessageContentEvent::default()
    })
}

fn reasoning_start(timestamp: Option<i64>, message_id: &str) -> Event {
    Event::ReasoningMessageStart(ReasoningMessageStartEvent {
        timestamp,
        message_id: message_id.to_owned(),
        role: "reasoning".into(),
        ..ReasoningMessageStartEvent::default()
    })
}

fn reasoning_content(timestamp: Option<i64>, message_id: &str, delta: &str) -> Event {
    Event::ReasoningMessageContent(ReasoningMessageContentEvent {
        timestamp,
        message_id: message_id.to_owned(),
        delta: delta.to_owned(),
        ..ReasoningMessageContentEvent::default()
    })
}

fn encrypted(timestamp: Option<i64>, message_id: &str, value: &str) -> Event {
    Event::ReasoningEncryptedValue(ReasoningEncryptedValueEvent {
        timestamp,
        subtype: "message".into(),
        entity_id: message_id.to_owned(),
        encrypted_value: value.to_owned(),
        ..ReasoningEncryptedValueEvent::default()
    })
}

fn convert_part_start(item: &SourceItem, event: &SourceEvent, state: &mut ObserverState) -> Vec<Event> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let Some(part) = event.object("part") else {
        return Vec::new();
    };
    match part.get("part_kind").and_then(Value::as_str) {
        Some("text") => {
            let message_id = non_empty(part, "id")
                .map_or_else(|| part_id(&item.run_id, state.request_index, index, "text"), str::to_owned);
            let content = non_empty(part, "content");
            let mut events = vec![text_start(timestamp, &message_id)];
            if let Some(content) = content {
                events.push(text_content(timestamp, &message_id, content));
            }
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::Text,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content: content.is_some(),
                    emitted_signature: false,
                },
            );
            events
        }
        Some("thinking") => {
            // A provider reasoning item can hold several summary parts with one id: identity is positional.
            let message_id = part_id(&item.run_id, state.request_index, index, "reasoning");
            let content = non_empty(part, "content");
            let signature = non_empty(part, "signature");
            let mut events = vec![reasoning_start(timestamp, &message_id)];
            if let Some(content) = content {
                events.push(reasoning_content(timestamp, &message_id, content));
            }
            if let Some(signature) = signature {
                events.push(encrypted(timestamp, &message_id, signature));
            }
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::Reasoning,
                    part_id: message_id,
                    tool_name: None,
                    emitted_content: content.is_some(),
                    emitted_signature: signature.is_some(),
                },
            );
            events
        }
        Some("tool-call" | "builtin-tool-call") => {
            // Both stream tool-call deltas; a native start replaces a previous request's cursor too, although
            // its own events stay CUSTOM.
            state.parts.insert(
                index,
                PartCursor {
                    kind: PartKind::ToolCall,
                    part_id: part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    tool_name: part.get("tool_name").and_then(Value::as_str).map(str::to_owned),
                    emitted_content: false,
                    emitted_signature: false,
                },
            );
            Vec::new()
        }
        _ => Vec::new(),
    }
}

const KIND_CHANGED: &str = "Pydantic part kind changed before its end event";

/// The cursor of a text or reasoning part, opening one when the part had no start; `true` when opened.
fn ensure_part_cursor<'a>(
    item: &SourceItem,
    state: &'a mut ObserverState,
    index: i64,
    kind: PartKind,
) -> Result<(&'a mut PartCursor, bool), ObserveError> {
    let request_index = state.request_index;
    let mut opened = false;
    let cursor = state.parts.entry(index).or_insert_with(|| {
        opened = true;
        let suffix = if kind == PartKind::Text { "text" } else { "reasoning" };
        PartCursor {
            kind,
            part_id: part_id(&item.run_id, request_index, index, suffix),
            tool_name: None,
            emitted_content: false,
            emitted_signature: false,
        }
    });
    if cursor.kind != kind {
        return Err(ObserveError::observation(KIND_CHANGED));
    }
    Ok((cursor, opened))
}

fn convert_part_delta(
    item: &SourceItem,
    event: &SourceEvent,
    state: &mut ObserverState,
) -> Result<Vec<Event>, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let Some(delta) = event.object("delta") else {
        return Ok(Vec::new());
    };
    let mut events = Vec::new();
    match delta.get("part_delta_kind").and_then(Value::as_str) {
        Some("text") => {
            let Some(text) = non_empty(delta, "content_delta") else {
                return Ok(events);
            };
            let (cursor, opened) = ensure_part_cursor(item, state, index, PartKind::Text)?;
            if opened {
                events.push(text_start(timestamp, &cursor.part_id));
            }
            events.push(text_content(timestamp, &cursor.part_id, text));
            cursor.emitted_content = true;
        }
        Some("thinking") => {
            let (cursor, opened) = ensure_part_cursor(item, state, index, PartKind::Reasoning)?;
            if opened {
                events.push(reasoning_start(timestamp, &cursor.part_id));
            }
            if let Some(text) = non_empty(delta, "content_delta") {
                events.push(reasoning_content(timestamp, &cursor.part_id, text));
                cursor.emitted_content = true;
            }
            if let Some(signature) = non_empty(delta, "signature_delta") {
                events.push(encrypted(timestamp, &cursor.part_id, signature));
                cursor.emitted_signature = true;
            }
        }
        Some("tool_call") => {
            let call_id = non_empty(delta, "tool_call_id");
            let request_index = state.request_index;
            let cursor = state.parts.entry(index).or_insert_with(|| PartCursor {
                kind: PartKind::ToolCall,
                part_id: call_id.map_or_else(|| part_id(&item.run_id, request_index, index, "tool"), str::to_owned),
                tool_name: None,
                emitted_content: false,
                emitted_signature: false,
            });
            if cursor.kind != PartKind::ToolCall {
                return Err(ObserveError::observation(KIND_CHANGED));
            }
            if call_id.is_some_and(|id| id != cursor.part_id) {
                return Err(ObserveError::observation("Pydantic tool-call identity changed before its end event"));
            }
            if let Some(name) = non_empty(delta, "tool_name_delta") {
                cursor.tool_name.get_or_insert_with(String::new).push_str(name);
            }
        }
        _ => {}
    }
    Ok(events)
}

/// The cursor a part's end settles: the open one (which must match), or a fresh one; `true` when fresh.
fn ending_cursor(
    existing: Option<PartCursor>,
    kind: PartKind,
    part_id: &str,
) -> Result<(PartCursor, bool), ObserveError> {
    match existing {
        None => Ok((
            PartCursor {
                kind,
                part_id: part_id.to_owned(),
                tool_name: None,
                emitted_content: false,
                emitted_signature: false,
            },
            true,
        )),
        Some(cursor) if cursor.kind != kind => Err(ObserveError::observation(KIND_CHANGED)),
        Some(cursor) if cursor.part_id != part_id => {
            Err(ObserveError::observation("Pydantic part identity changed before its end event"))
        }
        Some(cursor) => Ok((cursor, false)),
    }
}

fn convert_part_end(
    item: &SourceItem,
    event: &SourceEvent,
    state: &mut ObserverState,
) -> Result<Vec<Event>, ObserveError> {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let index = event.index();
    let existing = state.parts.shift_remove(&index);
    let Some(part) = event.object("part") else {
        return Ok(Vec::new());
    };
    let mut events = Vec::new();
    match part.get("part_kind").and_then(Value::as_str) {
        Some("text") => {
            let message_id = non_empty(part, "id")
                .map(str::to_owned)
                .or_else(|| existing.as_ref().map(|cursor| cursor.part_id.clone()).filter(|id| !id.is_empty()))
                .unwrap_or_else(|| part_id(&item.run_id, state.request_index, index, "text"));
            let (cursor, opened) = ending_cursor(existing, PartKind::Text, &message_id)?;
            if opened {
                events.push(text_start(timestamp, &message_id));
            }
            if let Some(content) = non_empty(part, "content").filter(|_| !cursor.emitted_content) {
                events.push(text_content(timestamp, &message_id, content));
            }
            events.push(Event::TextMessageEnd(TextMessageEndEvent {
                timestamp,
                message_id,
                ..TextMessageEndEvent::default()
            }));
        }
        Some("thinking") => {
            let message_id = existing
                .as_ref()
                .map_or_else(|| part_id(&item.run_id, state.request_index, index, "reasoning"), |c| c.part_id.clone());
            let (cursor, opened) = ending_cursor(existing, PartKind::Reasoning, &message_id)?;
            if opened {
                events.push(reasoning_start(timestamp, &message_id));
            }
            if let Some(content) = non_empty(part, "content").filter(|_| !cursor.emitted_content) {
                events.push(reasoning_content(timestamp, &message_id, content));
            }
            if let Some(signature) = non_empty(part, "signature").filter(|_| !cursor.emitted_signature) {
                events.push(encrypted(timestamp, &message_id, signature));
            }
            events.push(Event::ReasoningMessageEnd(ReasoningMessageEndEvent {
                timestamp,
                message_id,
                ..ReasoningMessageEndEvent::default()
            }));
        }
        Some("tool-call") => {
            let tool_call_id = existing.as_ref().map_or_else(
                || part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                |cursor| cursor.part_id.clone(),
            );
            ending_cursor(existing, PartKind::ToolCall, &tool_call_id)?;
            events.push(Event::ToolCallStart(ToolCallStartEvent {
                timestamp,
                tool_call_id: tool_call_id.clone(),
                tool_call_name: part.get("tool_name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                ..ToolCallStartEvent::default()
            }));
            match part.get("args") {
                None | Some(Value::Null) => {}
                Some(args) => events.push(Event::ToolCallArgs(ToolCallArgsEvent {
                    timestamp,
                    tool_call_id: tool_call_id.clone(),
                    delta: tool_args_text(args),
                    ..ToolCallArgsEvent::default()
                })),
            }
            events.push(Event::ToolCallEnd(ToolCallEndEvent {
                timestamp,
                tool_call_id,
                ..ToolCallEndEvent::default()
            }));
        }
        _ => {}
    }
    Ok(events)
}

fn tool_args_text(args: &Value) -> String {
    match args {
        Value::String(text) => text.clone(),
        other => PyDumps::SORTED_TEXT.dumps(other),
    }
}

fn convert_tool_result(item: &SourceItem, event: &SourceEvent) -> Result<Vec<Event>, ObserveError> {
    let Some(part) = event.object("part") else {
        return Ok(Vec::new());
    };
    let is_return = part.get("part_kind").and_then(Value::as_str) == Some("tool-return");
    let outcome = part.get("outcome").and_then(Value::as_str).unwrap_or("success");
    let content = part.get("content").unwrap_or(&Value::Null);
    let metadata = part.get("metadata").and_then(Value::as_object);
    if !is_return || outcome != "success" {
        // Keep the native failure or retry correlation, never model-only media.
        let mut projected = event.raw().clone();
        if is_return {
            let public = public_tool_value(tool_execution_value(content, metadata).map_err(|e| e.nested("event"))?);
            if let Some(Value::Object(part)) = projected.get_mut("part") {
                part.insert("content".into(), public);
            }
        }
        if event.kind() == EventKind::FunctionToolResult {
            projected.insert("content".into(), Value::Null);
        }
        return Ok(vec![custom_pydantic_event(item, projected)]);
    }
    let tool_call_id = part.get("tool_call_id").and_then(Value::as_str).unwrap_or_default();
    let value = tool_execution_value(content, metadata).map_err(|e| e.nested("event"))?;
    Ok(vec![Event::ToolCallResult(ToolCallResultEvent {
        timestamp: Some(item.occurred_at.timestamp_ms()),
        message_id: format!("{tool_call_id}:result"),
        tool_call_id: tool_call_id.to_owned(),
        content: tool_result_content(value),
        role: Some("tool".into()),
        ..ToolCallResultEvent::default()
    })])
}

fn agui_usage(result: &RunResult) -> Option<Vec<TokenUsage>> {
    let usage = result.usage();
    let total = usage.input_tokens + usage.output_tokens;
    if total == 0 && usage.cache_read_tokens == 0 && usage.cache_write_tokens == 0 {
        return None;
    }
    Some(vec![TokenUsage {
        input_tokens: Some(usage.input_tokens),
        output_tokens: Some(usage.output_tokens),
        total_tokens: Some(total),
        reasoning_tokens: usage.reasoning_tokens,
        cached_input_tokens: Some(usage.cache_read_tokens),
        cache_write_input_tokens: Some(usage.cache_write_tokens),
        ..TokenUsage::default()
    }])
}

fn convert_terminal(item: &SourceItem, result: &RunResult) -> Event {
    let timestamp = Some(item.occurred_at.timestamp_ms());
    let usage = agui_usage(result);
    let mut raw = Object::new();
    raw.insert("thread_id".into(), item.thread_id.clone().into());
    raw.insert("run_id".into(), item.run_id.clone().into());
    raw.insert("sequence".into(), item.sequence.into());
    raw.insert("occurred_at".into(), item.occurred_at.isoformat().into());
    raw.insert("status".into(), result.status.as_str().into());
    let finished = |raw: Object, result: Option<Value>, outcome: RunFinishedOutcome, usage| {
        Event::RunFinished(RunFinishedEvent {
            timestamp,
            raw_event: Some(Value::Object(raw)),
            thread_id: item.thread_id.clone(),
            run_id: item.run_id.clone(),
            result,
            outcome: Some(outcome),
            usage,
            ..RunFinishedEvent::default()
        })
    };
    match result.status {
        RunStatus::Completed => {
            let omitted = result.field("output_omitted").and_then(Value::as_bool) == Some(true);
            if omitted {
                raw.insert("result_omitted".into(), true.into());
            }
            let output = if omitted { None } else { result.field("output").cloned().filter(|v| !v.is_null()) };
            finished(raw, output, RunFinishedOutcome::Success { pending_tool_call_ids: None }, usage)
        }
        RunStatus::Suspended => {
            let deferred = result.field("deferred").and_then(Value::as_object);
            let metadata = deferred.and_then(|d| d.get("metadata")).and_then(Value::as_object);
            let mut interrupts = Vec::new();
            for (reason, key) in [("approval", "approvals"), ("external", "calls")] {
                let entries = deferred.and_then(|d| d.get(key)).and_then(Value::as_array);
                for entry in entries.into_iter().flatten() {
                    let target = entry.get("target_call").and_then(Value::as_object);
                    let target_field = |name: &str| target.and_then(|t| t.get(name)).cloned().unwrap_or(Value::Null);
                    let target_id = target_field("tool_call_id").as_str().unwrap_or_default().to_owned();
                    let tool_metadata = metadata.and_then(|m| m.get(&target_id)).cloned();
                    let mut tool_name = target_field("tool_name");
                    if reason == "external" {
                        let declared = tool_metadata
                            .as_ref()
                            .and_then(|m| m.get(names::HARNESS_CLIENT_TOOL))
                            .and_then(|marker| marker.get("declared_name"))
                            .and_then(Value::as_str)
                            .filter(|name| !name.is_empty());
                        if let Some(declared) = declared {
                            tool_name = declared.into();
                        }
                    }
                    let mut interrupt_metadata = Object::new();
                    interrupt_metadata.insert("tool_name".into(), tool_name);
                    interrupt_metadata.insert("args".into(), target_field("args"));
                    interrupt_metadata.insert("tool_metadata".into(), tool_metadata.unwrap_or(Value::Null));
                    interrupts.push(Interrupt {
                        subagent_run_id: None,
                        id: target_id,
                        reason: reason.into(),
                        message: None,
                        tool_call_id: entry
                            .get("model_call")
                            .and_then(|call| call.get("tool_call_id"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        response_schema: None,
                        expires_at: None,
                        metadata: Some(interrupt_metadata),
                    });
                }
            }
            finished(raw, None, RunFinishedOutcome::Interrupt { interrupts }, usage)
        }
        RunStatus::Failed => {
            let failure = result.field("failure").cloned().unwrap_or(Value::Null);
            let message = failure.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
            let code = failure.get("code").and_then(Value::as_str).map(str::to_owned);
            raw.insert("failure".into(), failure);
            Event::RunError(RunErrorEvent {
                timestamp,
                raw_event: Some(Value::Object(raw)),
                message,
                code,
                usage,
                ..RunErrorEvent::default()
            })
        }
        RunStatus::Cancelled => finished(raw, None, RunFinishedOutcome::Cancelled, usage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_event_names() {
        assert!(valid_tool_event_name("filesystem.changed"));
        assert!(valid_tool_event_name("a1.b-c_d"));
        assert!(!valid_tool_event_name("a..b"));
        assert!(!valid_tool_event_name("a."));
        assert!(!valid_tool_event_name("A"));
    }

    #[test]
    fn continuation_json_matches_the_reference_layout() {
        let mut state = ObserverState::default();
        state.parts.insert(
            0,
            PartCursor {
                kind: PartKind::ToolCall,
                part_id: "c".into(),
                tool_name: None,
                emitted_content: false,
                emitted_signature: false,
            },
        );
        let continuation = ObserverContinuation { thread_id: None, run_id: Some("r".into()), state };
        let text = continuation.to_json();
        assert_eq!(
            text,
            r#"{"thread_id":null,"run_id":"r","state":{"request_index":0,"parts":{"0":{"kind":"tool_call","part_id":"c","tool_name":null,"emitted_content":false,"emitted_signature":false}},"children":{},"threads":{}}}"#
        );
        assert_eq!(ObserverContinuation::from_json(&text).unwrap(), continuation);
    }
}
