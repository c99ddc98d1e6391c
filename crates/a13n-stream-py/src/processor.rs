//! A Python host processor, called for every converted event as the reference calls its processor.
//!
//! - `processor(source, event)`, the reference's contract: `source` is the item being observed as the host gave
//!   it (the native `HarnessEvent` or `HarnessRunResultEvent`, or its journal line), `event` an `ag_ui` event
//!   model; it returns a model (the event, or a replacement), `None` to drop the event, or raises.
//! - `json_processor(source, event)`, opted into explicitly: the same with the source and the event as the
//!   JSON dicts of the wire form, returning a dict or `None`.
//!
//! What a processor returns is checked by the core as the reference checks it (same type, structural fields
//! unchanged, source correlation kept); an exception it raises rejects the item, and is raised again once the
//! core has rolled the item back.

use std::sync::{Arc, Mutex};

use a13n_stream_protocol::agui::EventType;
use a13n_stream_protocol::{names, AguiEventProcessor, Event, ProcessorRefusal, SourceItem};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use serde_json::Value;

use crate::convert::{from_python, source_to_python, to_python};
use crate::errors::{observation_error, FailureSlot};
use crate::models::models;

/// The source item a call observes, as the host gave it: what a model processor receives as `source`.
pub(crate) type SourceSlot = Arc<Mutex<Option<Py<PyAny>>>>;

/// A host's processor and the contract it is written to.
pub(crate) enum HostProcessor {
    /// The reference's contract: native source, `ag_ui` event models.
    Models(Py<PyAny>),
    /// JSON dicts in and out.
    Json(Py<PyAny>),
}

impl HostProcessor {
    /// The processor a constructor's `processor=` and `json_processor=` arguments name (at most one).
    pub(crate) fn chosen(processor: Option<Py<PyAny>>, json: Option<Py<PyAny>>) -> PyResult<Option<HostProcessor>> {
        match (processor, json) {
            (Some(_), Some(_)) => Err(PyValueError::new_err("pass either processor or json_processor, not both")),
            (Some(callable), None) => Ok(Some(HostProcessor::Models(callable))),
            (None, Some(callable)) => Ok(Some(HostProcessor::Json(callable))),
            (None, None) => Ok(None),
        }
    }

    /// The same processor again (for a staged resumption or a restored observer).
    pub(crate) fn clone_ref(&self, py: Python<'_>) -> HostProcessor {
        match self {
            HostProcessor::Models(callable) => HostProcessor::Models(callable.clone_ref(py)),
            HostProcessor::Json(callable) => HostProcessor::Json(callable.clone_ref(py)),
        }
    }
}

/// Everything a class holding a processor keeps: the host's processor, where its exception waits, and the slot
/// naming the source the current call observes.
///
/// The processor is held once, in a cell the core's processor shares (it holds no reference of its own), so that
/// the garbage collector sees every reference the class holds ([`Processing::traverse`]) and can break a cycle
/// through it ([`Processing::clear`]): a processor that refers back to its fold or observer (a bound method of the
/// host object holding both) is freed with it.
pub(crate) struct Processing {
    host: HostCell,
    /// Whether a processor was given (still true once `clear` has taken it).
    pub(crate) given: bool,
    pub(crate) failure: FailureSlot,
    pub(crate) source: SourceSlot,
}

/// The processor, shared by its holder and the core's processor that calls it.
type HostCell = Arc<Mutex<Option<HostProcessor>>>;

impl Processing {
    pub(crate) fn new(host: Option<HostProcessor>) -> Processing {
        let given = host.is_some();
        Processing {
            host: Arc::new(Mutex::new(host)),
            given,
            failure: Arc::new(Mutex::new(None)),
            source: Arc::new(Mutex::new(None)),
        }
    }

    /// A core processor calling the host's, or `None` without one.
    pub(crate) fn core(&self) -> Option<AguiEventProcessor> {
        self.given.then(|| core_processor(Arc::clone(&self.host), Arc::clone(&self.failure), Arc::clone(&self.source)))
    }

    /// The host's processor (another reference to it), while held.
    pub(crate) fn host(&self, py: Python<'_>) -> Option<HostProcessor> {
        self.host.lock().ok()?.as_ref().map(|host| host.clone_ref(py))
    }

    /// The failure slot, when a processor can fail.
    pub(crate) fn failure(&self) -> Option<&FailureSlot> {
        self.given.then_some(&self.failure)
    }

    /// Run `call` with `source` named as the item observed (what a model processor receives).
    pub(crate) fn with_source<T>(&self, source: &Bound<'_, PyAny>, call: impl FnOnce() -> T) -> T {
        if !self.given {
            return call();
        }
        if let Ok(mut slot) = self.source.lock() {
            *slot = Some(source.clone().unbind());
        }
        let result = call();
        if let Ok(mut slot) = self.source.lock() {
            *slot = None;
        }
        result
    }

    /// Visit the Python objects held (the garbage collector's `tp_traverse`): the processor, and the source while
    /// a call observes it. A cell another thread holds at that moment is passed over.
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(host) = self.host.try_lock() {
            match host.as_ref() {
                Some(HostProcessor::Models(callable) | HostProcessor::Json(callable)) => visit.call(callable)?,
                None => {}
            }
        }
        if let Ok(source) = self.source.try_lock() {
            visit.call(source.as_ref())?;
        }
        Ok(())
    }

    /// Let the processor go (the garbage collector's `tp_clear`, breaking a cycle through it).
    pub(crate) fn clear(&self) {
        let taken = self.host.lock().ok().and_then(|mut host| host.take());
        drop(taken);
    }
}

fn core_processor(cell: HostCell, failure: FailureSlot, slot: SourceSlot) -> AguiEventProcessor {
    Box::new(move |source, event| {
        Python::attach(|py| {
            // Taken out of the cell for the call, which may run any Python (another thread may visit the cell).
            let Some(host) = cell.lock().ok().and_then(|held| held.as_ref().map(|host| host.clone_ref(py))) else {
                // Let go by the garbage collector: the holder is being freed.
                return Ok(Some(event));
            };
            let outcome = match &host {
                HostProcessor::Models(callable) => call_models(py, callable, &slot, source, &event),
                HostProcessor::Json(callable) => call_json(py, callable, source, &event),
            };
            outcome.unwrap_or_else(|error| {
                if let Ok(mut held) = failure.lock() {
                    *held = Some(error);
                }
                Err(ProcessorRefusal::Failed)
            })
        })
    })
}

type Outcome = Result<Option<Event>, ProcessorRefusal>;

/// The event as the reference hands it to a processor: the model its converter made, which counts `type` as set
/// only for the input events it validates from a dict (`a13n.input.*`); it constructs every other with keywords,
/// a subagent's start always with both of its parents (`None` or not).
fn processor_event<'py>(py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyAny>> {
    let value = event.to_value();
    let model = models(py)?.event(py, &value)?;
    let kind = event.kind();
    let input = kind == EventType::Custom
        && value.get("name").and_then(Value::as_str).is_some_and(|name| name.starts_with(names::INPUT_PREFIX));
    let set = model.getattr(intern!(py, "__pydantic_fields_set__"))?;
    if !input {
        set.call_method1(intern!(py, "discard"), ("type",))?;
    }
    if kind == EventType::SubagentStarted {
        for parent in ["parent_tool_call_id", "parent_subagent_run_id"] {
            set.call_method1(intern!(py, "add"), (parent,))?;
        }
    }
    Ok(model)
}

/// The reference's contract: the source as the host gave it, the event as an `ag_ui` model.
fn call_models(
    py: Python<'_>,
    callable: &Py<PyAny>,
    slot: &SourceSlot,
    source: &SourceItem,
    event: &Event,
) -> PyResult<Outcome> {
    let models = models(py)?;
    let given = slot.lock().ok().and_then(|held| held.as_ref().map(|source| source.clone_ref(py)));
    let source = match given {
        Some(source) => source.into_bound(py),
        None => PyString::new(py, &source.to_line()).into_any(),
    };
    let result = callable.bind(py).call1((source, processor_event(py, event)?))?;
    if result.is_none() {
        return Ok(Ok(None));
    }
    if !result.is_instance(models.base_event.bind(py))? {
        return Ok(Err(ProcessorRefusal::NotAnEvent));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("mode", "json")?;
    kwargs.set_item("by_alias", true)?;
    kwargs.set_item("exclude_none", true)?;
    let Ok(dumped) = result.call_method("model_dump", (), Some(&kwargs)) else {
        return Ok(Err(ProcessorRefusal::InvalidEvent));
    };
    let outcome = decoded(&dumped);
    // A field the event type does not declare (an extra field of the model) is a structural change: the decoded
    // event has no place for it.
    if let (Ok(Some(event)), Ok(dumped)) = (&outcome, dumped.cast::<PyDict>()) {
        let kept = event.to_value();
        for key in dumped.keys() {
            let key: String = key.extract()?;
            if kept.get(&key).is_none() {
                let message = format!("The event processor changed structural field {key}");
                return Err(observation_error(py, "processor_changed_structure", message));
            }
        }
    }
    Ok(outcome)
}

/// The JSON contract: the source and the event as dicts.
fn call_json(py: Python<'_>, callable: &Py<PyAny>, source: &SourceItem, event: &Event) -> PyResult<Outcome> {
    let source = source_to_python(py, &source.to_value())?;
    let result = callable.bind(py).call1((source, to_python(py, &event.to_value())?))?;
    if result.is_none() {
        return Ok(Ok(None));
    }
    if !result.is_instance_of::<PyDict>() {
        return Ok(Err(ProcessorRefusal::NotAnEvent));
    }
    Ok(decoded(&result))
}

/// The event a processor's dict holds, or the refusal of one that does not decode as an AG-UI event.
fn decoded(dict: &Bound<'_, PyAny>) -> Outcome {
    let value = from_python(dict, "").map_err(|_| ProcessorRefusal::InvalidEvent)?;
    // Decoded from text: a tagged enum buffers its fields, and a buffered number beyond 64 bits would not decode.
    serde_json::from_str::<Event>(&value.to_string()).map(Some).map_err(|_| ProcessorRefusal::InvalidEvent)
}
