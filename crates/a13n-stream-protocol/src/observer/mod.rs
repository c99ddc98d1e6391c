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

mod convert;
mod custom;
mod delegation;
mod lanes;
mod line;
mod parts;
mod plan;
mod terminal;

use convert::convert;
use convert::plan_stream;
use custom::custom;
use custom::frame_custom;
use custom::snake_case;
use plan::Plan;

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
use crate::content::{public_tool_value, tool_execution_value};
use crate::error::{InputError, ObservationKind, ObserveError};
use crate::fragments::fragment_lazily;
use crate::lanes::args_event::EventTemplate;
use crate::lanes::lane_hint::LaneMemos;
use crate::source::SourceItem;
use crate::PartIndex;

/// A host processor: sees each converted event with its source item and returns it, a replacement, or `None` to
/// drop it. A replacement may change only the event type's mutable fields (text and argument deltas, encrypted
/// values, tool-result content, a run's result, an error message); anything else is rejected. A processor that
/// cannot decide (a host callback that failed, a value that is no event) refuses, and the whole item is rejected
/// with nothing committed. [`infallible`] makes one from a function that never refuses.
pub type AguiEventProcessor = Box<dyn FnMut(&SourceItem, Event) -> Result<Option<Event>, ProcessorRefusal> + Send>;

/// A processor that never refuses: `keep` returns the event, a replacement or `None`.
pub fn infallible(mut keep: impl FnMut(&SourceItem, Event) -> Option<Event> + Send + 'static) -> AguiEventProcessor {
    Box::new(move |source, event| Ok(keep(source, event)))
}

/// Why a host processor refused an event; the observation is rejected and nothing is committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessorRefusal {
    /// The processor itself failed (a host binding keeps the failure to report it): [`ObserveError::Processor`].
    Failed,
    /// It returned a value that is not an AG-UI event: the reference's observation error.
    NotAnEvent,
    /// It returned an AG-UI event that does not validate: the reference's observation error.
    InvalidEvent,
}

impl From<ProcessorRefusal> for ObserveError {
    fn from(refusal: ProcessorRefusal) -> ObserveError {
        match refusal {
            ProcessorRefusal::Failed => ObserveError::Processor,
            ProcessorRefusal::NotAnEvent => {
                ObserveError::rejected(ObservationKind::ProcessorChangedStructure, NOT_AN_EVENT)
            }
            ProcessorRefusal::InvalidEvent => {
                ObserveError::rejected(ObservationKind::ProcessorChangedStructure, INVALID_EVENT)
            }
        }
    }
}

const NOT_AN_EVENT: &str = "The event processor returned a non-AG-UI value";
const INVALID_EVENT: &str = "The event processor returned an invalid AG-UI event";

pub use crate::part_kind::PartKind;
pub use crate::request_index::RequestIndex;

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
    pub request_index: RequestIndex,
    /// Open parts by part index, in the order they opened.
    #[serde(default)]
    pub parts: IndexMap<PartIndex, PartCursor>,
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
        serde_json::from_str(text)
            .map_err(|error| InputError::decoding("observer continuation", error.to_string(), error))
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
    /// What [`Observer::observe_line`]'s lanes read lines by (see `lane_hint.rs`).
    pub(crate) memos: LaneMemos,
    /// The last argument-delta event the lanes wrote, to write the next ones by (see `args_event.rs`).
    pub(crate) args_event: EventTemplate,
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
            memos: LaneMemos::default(),
            args_event: EventTemplate::default(),
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
            retain_events: false,
            core: Core {
                thread_id: continuation.thread_id,
                run_id: continuation.run_id,
                state: continuation.state,
                events: Vec::new(),
            },
            resume_completed: true,
            ..Self::new()
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

    /// Whether the observer retains the events it emits (see [`Observer::retain_events`]).
    pub fn retains_events(&self) -> bool {
        self.retain_events
    }

    /// How many events have been retained: a stable boundary for [`Observer::snapshot`].
    pub fn event_count(&self) -> usize {
        self.core.events.len()
    }

    /// Retained events in `start..stop` (`stop = None` for all). Requires `retain_events`.
    pub fn snapshot(&self, start: usize, stop: Option<usize>) -> Result<Vec<Event>, ObserveError> {
        if !self.retain_events {
            return Err(ObserveError::rejected(
                ObservationKind::EventsNotRetained,
                "Snapshots require retain_events=True",
            ));
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
            return Err(ObserveError::rejected(
                ObservationKind::NotFresh,
                "Observer resumption requires a fresh observer",
            ));
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
        let mut staged = self.begin_resume()?;
        for item in history {
            self.resume_item(&mut staged, item.borrow())?;
        }
        self.finish_resume(staged)
    }

    /// [`Observer::resume`] from an asynchronous stream of history. Dropping the future leaves the observer fresh.
    #[cfg(feature = "async")]
    pub async fn resume_stream<S>(&mut self, history: S) -> Result<(), ObserveError>
    where
        S: futures_core::Stream,
        S::Item: Borrow<SourceItem>,
    {
        let mut history = std::pin::pin!(history);
        let mut staged = self.begin_resume()?;
        while let Some(item) = std::future::poll_fn(|cx| history.as_mut().poll_next(cx)).await {
            self.resume_item(&mut staged, item.borrow())?;
        }
        self.finish_resume(staged)
    }

    /// The first step of a resumption driven one item at a time (a host whose history arrives from a source it
    /// awaits): a staged state, checked to start from a fresh observer. Feed each history item to
    /// [`Observer::resume_item`], then commit with [`Observer::finish_resume`]; dropping the [`Resumption`]
    /// instead leaves this observer exactly as it was.
    pub fn begin_resume(&self) -> Result<Resumption, ObserveError> {
        self.check_fresh()?;
        Ok(Resumption { core: Core::default() })
    }

    /// Observe one history item into `staged` with this observer's processor and policy. On error the staged
    /// state is no longer a valid prefix: drop it (this observer is unchanged).
    pub fn resume_item(&mut self, staged: &mut Resumption, item: &SourceItem) -> Result<(), ObserveError> {
        observe_into::<M>(&mut staged.core, self.processor.as_mut(), self.finish, self.retain_events, item).map(drop)
    }

    /// What this observer observed (its state and retained events), as a resumption another fresh observer
    /// commits with [`Observer::finish_resume`]; this one is left as a fresh observer. A host that resumes
    /// through observers of its own (the reference's `resume` observes history with a new observer of the same
    /// class) hands the result over this way.
    pub fn take_resumption(&mut self) -> Resumption {
        self.resume_completed = false;
        Resumption { core: std::mem::take(&mut self.core) }
    }

    /// Commit a staged resumption: this observer takes its state (and retained events) and is no longer fresh.
    pub fn finish_resume(&mut self, staged: Resumption) -> Result<(), ObserveError> {
        self.check_fresh()?;
        self.core = staged.core;
        self.resume_completed = true;
        Ok(())
    }
}

/// A resumption in progress (see [`Observer::begin_resume`]): the state the history builds, apart from the
/// observer it will replace.
#[derive(Debug, Default)]
pub struct Resumption {
    core: Core,
}

fn observe_into<M: Mode>(
    core: &mut Core,
    processor: Option<&mut AguiEventProcessor>,
    finish: Option<fn(Event) -> Event>,
    retain: bool,
    item: &SourceItem,
) -> Result<Vec<Event>, ObserveError> {
    validate_correlation::<M>(core, item)?;
    let root_run_id = core.run_id.as_deref().unwrap_or(&item.run_id);
    // Plan without changing anything; the changes are applied once the processor has accepted every event.
    let Plan { events, changes } = if M::STREAM {
        plan_stream(item, &core.state, root_run_id)?
    } else {
        let mut changes = Vec::new();
        let events = convert(item, &core.state, &mut changes)?;
        Plan { events, changes: changes.into_iter().map(|change| plan::Change::Run(None, change)).collect() }
    };
    let processed = match processor {
        None => events,
        Some(processor) => {
            let mut kept = Vec::with_capacity(events.len());
            for event in events {
                if let Some(candidate) = processor(item, event.clone())? {
                    kept.push(validate_processor_result(&event, candidate)?);
                }
            }
            kept
        }
    };
    let processed: Vec<Event> = match finish {
        Some(finish) => processed.into_iter().map(finish).collect(),
        None => processed,
    };
    core.state.apply_all(changes);
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

fn validate_correlation<M: Mode>(core: &Core, item: &SourceItem) -> Result<(), ObserveError> {
    if M::STREAM {
        if let Some(expected) = core.state.threads.get(&item.run_id) {
            if *expected != item.thread_id {
                return Err(ObserveError::rejected(
                    ObservationKind::ThreadChanged,
                    "Harness Thread correlation changed for a Run",
                ));
            }
        }
        return Ok(());
    }
    if core.thread_id.as_ref().is_some_and(|thread| *thread != item.thread_id) {
        return Err(ObserveError::rejected(
            ObservationKind::ThreadChanged,
            "Harness Thread correlation changed within one observer",
        ));
    }
    if core.run_id.as_ref().is_some_and(|run| *run != item.run_id) {
        return Err(ObserveError::rejected(
            ObservationKind::RunChanged,
            "Harness Run correlation changed within one observer",
        ));
    }
    Ok(())
}

fn validate_processor_result(original: &Event, candidate: Event) -> Result<Event, ObserveError> {
    if candidate == *original {
        return Ok(candidate);
    }
    if candidate.event_type() != original.event_type() {
        return Err(ObserveError::rejected(
            ObservationKind::ProcessorChangedStructure,
            "The event processor changed the AG-UI event type",
        ));
    }
    if candidate.timestamp().is_some_and(|t| t.abs() > (1 << 53) - 1) {
        return Err(ObserveError::rejected(ObservationKind::ProcessorChangedStructure, INVALID_EVENT));
    }
    let (Value::Object(before), Value::Object(after)) = (original.to_value(), candidate.to_value()) else {
        return Err(ObserveError::rejected(ObservationKind::ProcessorChangedStructure, NOT_AN_EVENT));
    };
    let mutable = original.mutable_fields();
    for key in before.keys().chain(after.keys()) {
        let same = match (before.get(key), after.get(key)) {
            (Some(before), Some(after)) => crate::json::py_equal(before, after),
            (before, after) => before == after,
        };
        if !mutable.contains(&key.as_str()) && !same {
            return Err(ObserveError::rejected(
                ObservationKind::ProcessorChangedStructure,
                format!("The event processor changed structural field {}", snake_case(key)),
            ));
        }
    }
    Ok(candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::custom::valid_tool_event_name;

    /// A processor's event is compared with the original as Python compares them: numbers by value, so one that
    /// comes back through Python (`1.50` as `1.5`, `-0` as `0`) changes nothing.
    #[test]
    fn a_processor_event_with_numbers_spelled_otherwise_is_unchanged() {
        let event = |value: &str| {
            serde_json::from_str::<Event>(&format!(r#"{{"type":"CUSTOM","timestamp":1,"name":"n","value":{value}}}"#))
                .unwrap()
        };
        let original = event(r#"{"a":1.50,"b":1E2,"c":-0,"d":18446744073709551616}"#);
        let returned = event(r#"{"a":1.5,"b":100.0,"c":0,"d":18446744073709551616}"#);
        assert!(validate_processor_result(&original, returned).is_ok());
        let changed = event(r#"{"a":1.51,"b":100.0,"c":0,"d":18446744073709551616}"#);
        assert!(validate_processor_result(&original, changed).is_err());
    }

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
            PartIndex::from(0),
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
