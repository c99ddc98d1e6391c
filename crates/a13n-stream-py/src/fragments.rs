//! Fragmented `CUSTOM` events: splitting one that is too large to send whole, and reassembling the frames.

use a13n_stream_protocol::agui::CustomEvent;
use a13n_stream_protocol::fragments::{Accepted, FragmentState};
use a13n_stream_protocol::{CustomEventAssembler, Event};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

use crate::convert::{from_python, integer_argument, json_text, to_python};
use crate::errors::input_error;
use crate::models::models;
use crate::subclass;

/// Reassembles bounded, ordered fragment frames; a lost frame never yields a partial event (it sets `gap`).
#[pyclass(name = "CustomEventAssembler", module = "a13n_stream_rs", subclass, dict, weakref)]
pub(crate) struct PyAssembler(CustomEventAssembler);

impl PyAssembler {
    /// A subclass's instance before its `__init__` made it: an assembler with the default bounds.
    fn placeholder() -> Self {
        PyAssembler(CustomEventAssembler::default())
    }

    /// Set both bounds; `ValueError` (the reference's message) unless both are positive. A bound past 64 bits
    /// holds as many as 64 bits can.
    fn bounds(&mut self, max_bytes: i128, max_pending: i128) -> PyResult<()> {
        let bound = |value: i128| u64::try_from(value.max(0)).unwrap_or(u64::MAX);
        self.0
            .set_bounds(bound(max_bytes), bound(max_pending))
            .map_err(|error| PyValueError::new_err(error.message().to_owned()))
    }
}

#[pymethods]
impl PyAssembler {
    /// An assembler holding at most `max_bytes` of frame data in at most `max_pending` events.
    #[new]
    #[classmethod]
    #[pyo3(signature = (*args, **kwargs), text_signature = "(*, max_bytes=67108864, max_pending=8)")]
    fn new(cls: &Bound<'_, PyType>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        subclass::new(cls, args, kwargs, PyAssembler::placeholder)
    }

    /// Make the assembler of these constructor arguments. `__new__` does it for this class; for a subclass,
    /// whose constructor may take other arguments, `super().__init__(...)` does.
    #[pyo3(signature = (*args, **kwargs))]
    fn __init__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        subclass::init(slf, args, kwargs, PyAssembler::placeholder)
    }

    /// The constructor proper (see `__new__`).
    #[staticmethod]
    #[pyo3(signature = (*, max_bytes=None, max_pending=None))]
    fn _make(max_bytes: Option<&Bound<'_, PyAny>>, max_pending: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let max_bytes = max_bytes.map_or(Ok(67_108_864), |value| integer_argument(value, "max_bytes"))?;
        let max_pending = max_pending.map_or(Ok(8), |value| integer_argument(value, "max_pending"))?;
        let mut made = PyAssembler::placeholder();
        made.bounds(max_bytes, max_pending)?;
        Ok(made)
    }

    /// Take one `CUSTOM` event payload (a dict): the event itself when it is no fragment, the reassembled event
    /// on its last frame, otherwise `None`.
    fn accept<'py>(&mut self, py: Python<'py>, payload: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Anything but a fragment passes as it is, whatever it holds (any mapping, values with no JSON form).
        let name = payload.call_method1(pyo3::intern!(py, "get"), (pyo3::intern!(py, "name"),))?;
        if !name.eq(a13n_stream_protocol::names::STREAM_FRAGMENT)? {
            return Ok(Some(payload.clone()));
        }
        let serde_json::Value::Object(object) = from_python(payload, "payload")? else {
            return Err(input_error("payload", "a CUSTOM event payload is a dict"));
        };
        match self.0.accept(&object) {
            Accepted::Passed(_) => Ok(Some(payload.clone())),
            Accepted::Assembled(event) => Ok(Some(to_python(py, &serde_json::Value::Object(event))?)),
            Accepted::Pending => Ok(None),
        }
    }

    /// Whether a frame was lost (a caller may show an observation-gap notice, then clear it).
    #[getter]
    fn gap(&self) -> bool {
        self.0.gap()
    }

    #[setter]
    fn set_gap(&mut self, gap: bool) {
        self.0.set_gap(gap);
    }

    /// The byte budget over all pending events.
    #[getter]
    fn max_bytes(&self) -> u64 {
        self.0.max_bytes()
    }

    #[setter]
    fn set_max_bytes(&mut self, max_bytes: &Bound<'_, PyAny>) -> PyResult<()> {
        self.bounds(integer_argument(max_bytes, "max_bytes")?, self.0.max_pending().into())
    }

    /// How many events may be pending at once.
    #[getter]
    fn max_pending(&self) -> u64 {
        self.0.max_pending()
    }

    #[setter]
    fn set_max_pending(&mut self, max_pending: &Bound<'_, PyAny>) -> PyResult<()> {
        self.bounds(self.0.max_bytes().into(), integer_argument(max_pending, "max_pending")?)
    }

    /// The state, as a `FragmentState` model (the reference's).
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let models = models(py)?;
        models.validated_json(py, &models.fragment_state, &self.export_json()?)
    }

    /// `export` as the `FragmentState` JSON.
    fn export_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.0.export()).map_err(|error| PyValueError::new_err(error.to_string()))
    }

    /// Continue from exported state (`str`, `bytes` or a reference `FragmentState`).
    #[classmethod]
    fn restore(_cls: &Bound<'_, PyType>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = json_text(state, "state")?;
        let state: FragmentState = serde_json::from_str(&text).map_err(|error| input_error("state", error))?;
        CustomEventAssembler::restore(state).map(PyAssembler).map_err(|error| input_error("", error))
    }
}

/// Split a `CUSTOM` event (an `ag_ui` `CustomEvent`, or its dict) into fragment frames when its JSON is too large
/// to send whole; a smaller one comes back as the only element, each of the kind given (models or dicts).
/// `identity` names the frames of this event.
#[pyfunction]
#[pyo3(signature = (event, *, identity))]
pub(crate) fn fragment_custom_event<'py>(
    py: Python<'py>,
    event: &Bound<'py, PyAny>,
    identity: &str,
) -> PyResult<Bound<'py, PyList>> {
    let model = event.hasattr("model_dump")?;
    let value = if model {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("mode", "json")?;
        kwargs.set_item("by_alias", true)?;
        from_python(&event.call_method("model_dump", (), Some(&kwargs))?, "event")?
    } else {
        from_python(event, "event")?
    };
    // Decoded from text: a tagged enum buffers its fields, and a buffered number beyond 64 bits would not decode.
    let text = value.to_string();
    let custom: CustomEvent = match serde_json::from_str::<Event>(&text) {
        Ok(Event::Custom(custom)) => custom,
        // As the reference, which measures any event: one that travels whole comes back as it is (a larger one of
        // another type, which the reference would split as it splits a CUSTOM one, is refused).
        Ok(_) if whole_event_bytes(event, model, &text)? <= WHOLE_EVENT_BYTES => return PyList::new(py, [event]),
        Ok(_) => return Err(input_error("event.type", "only a CUSTOM event is split into fragments")),
        Err(error) => return Err(input_error("event", error)),
    };
    let frames = a13n_stream_protocol::fragment_custom_event(custom, identity);
    if frames.len() == 1 {
        // Small enough to travel whole: the event itself, as the reference returns it.
        return PyList::new(py, [event]);
    }
    let list = PyList::empty(py);
    for frame in frames {
        match model {
            true => list.append(models(py)?.event(py, &frame.to_value())?)?,
            false => list.append(to_python(py, &frame.to_value())?)?,
        }
    }
    Ok(list)
}

/// Events up to this many bytes of JSON travel whole (the reference's limit).
const WHOLE_EVENT_BYTES: usize = 48 * 1024;

/// The UTF-8 length of an event's JSON as the reference measures it (`model_dump_json(by_alias=True)`); a dict's
/// is its JSON `text`, already written.
fn whole_event_bytes(event: &Bound<'_, PyAny>, model: bool, text: &str) -> PyResult<usize> {
    if !model {
        return Ok(text.len());
    }
    let kwargs = pyo3::types::PyDict::new(event.py());
    kwargs.set_item("by_alias", true)?;
    let text: String = event.call_method("model_dump_json", (), Some(&kwargs))?.extract()?;
    Ok(text.len())
}

/// A tool's return value as AG-UI `TOOL_CALL_RESULT` content: text, or a list of content parts.
#[pyfunction]
pub(crate) fn tool_result_content<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let value = from_python(value, "value")?;
    // The reference raises `ValueError` for a value it cannot write as JSON text.
    let content =
        a13n_stream_protocol::tool_result_content(&value).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let json = serde_json::to_value(&content).map_err(|error| PyValueError::new_err(error.to_string()))?;
    to_python(py, &json)
}
