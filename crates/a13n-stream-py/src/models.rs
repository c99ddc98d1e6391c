//! The Pydantic models the package hands out: `ag_ui` event models, and the display models of
//! `a13n_stream_rs._models` (`Observed`, `ItemRef`, `StreamPosition`, checkpoints, items).
//!
//! Values the core made are already valid, so the models the hot paths return (events, observed entries, item
//! references, positions) are built without validation: a new instance of the class with its field values set,
//! as Pydantic's `model_construct` does, which equals what validation would make. Events with nested model values
//! (a run's outcome and usage, tool-result parts) or keys the model does not declare, and everything read from
//! outside (checkpoints, items), are validated by Pydantic.

use std::collections::HashMap;

use a13n_stream_protocol::fragments::FRAGMENT_EVENT_NAME;
use a13n_stream_protocol::{ItemRef, Observed, StreamPosition};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PySet, PyString, PyTuple};
use serde_json::Value;

use crate::convert::to_python;

/// One field of an event model: its name, its JSON key, its default, and whether it holds nested models.
struct TemplateField {
    name: Py<PyString>,
    key: String,
    default: Py<PyAny>,
    nested: bool,
}

/// An event type as `a13n_stream_rs._events.templates` describes it: class, `EventType` member, fields.
type Described = (Py<PyAny>, Py<PyAny>, Vec<(String, String, Py<PyAny>, bool)>);

/// How to build one event type's model.
struct EventTemplate {
    cls: Py<PyAny>,
    kind: Py<PyAny>,
    fields: Vec<TemplateField>,
}

/// The Python classes and helpers the models are built with, looked up once.
pub(crate) struct Models {
    names: [Py<PyString>; 4],
    events: HashMap<String, EventTemplate>,
    validate_event: Py<PyAny>,
    pub(crate) base_event: Py<PyAny>,
    observed: Py<PyAny>,
    item_ref: Py<PyAny>,
    position: Py<PyAny>,
    memory_source: Py<PyAny>,
    pub(crate) item: Py<PyAny>,
    pub(crate) snapshot: Py<PyAny>,
    pub(crate) continuation: Py<PyAny>,
    pub(crate) observer_continuation: Py<PyAny>,
    pub(crate) fragment_state: Py<PyAny>,
}

static MODELS: PyOnceLock<Models> = PyOnceLock::new();

/// The models, imported on first use (so the extension imports before `pydantic` and `ag_ui` are needed).
pub(crate) fn models(py: Python<'_>) -> PyResult<&'static Models> {
    MODELS.get_or_try_init(py, || load(py))
}

fn load(py: Python<'_>) -> PyResult<Models> {
    let display = py.import("a13n_stream_rs._models")?;
    let events = py.import("a13n_stream_rs._events")?;
    let mut templates = HashMap::new();
    for (name, described) in events.getattr("templates")?.call0()?.cast::<PyDict>()?.iter() {
        let (cls, kind, fields): Described = described.extract()?;
        let fields = fields
            .into_iter()
            .map(|(field, key, default, nested)| TemplateField {
                name: PyString::intern(py, &field).unbind(),
                key,
                default,
                nested,
            })
            .collect();
        templates.insert(name.extract::<String>()?, EventTemplate { cls, kind, fields });
    }
    let intern = |name: &str| PyString::intern(py, name).unbind();
    Ok(Models {
        names: [
            intern("__dict__"),
            intern("__pydantic_fields_set__"),
            intern("__pydantic_extra__"),
            intern("__pydantic_private__"),
        ],
        events: templates,
        validate_event: events.getattr("validate")?.unbind(),
        base_event: events.getattr("base_event")?.call0()?.unbind(),
        observed: display.getattr("Observed")?.unbind(),
        item_ref: display.getattr("ItemRef")?.unbind(),
        position: display.getattr("StreamPosition")?.unbind(),
        memory_source: display.getattr("MemorySource")?.unbind(),
        item: display.getattr("Item")?.unbind(),
        snapshot: display.getattr("DisplaySnapshot")?.unbind(),
        continuation: display.getattr("DisplayContinuation")?.unbind(),
        observer_continuation: display.getattr("ObserverContinuation")?.unbind(),
        fragment_state: display.getattr("FragmentState")?.unbind(),
    })
}

/// The fields the reference sets when it makes a fragment frame.
const FRAME_ARGUMENTS: [&str; 4] = ["timestamp", "subagentRunId", "name", "value"];

impl Models {
    /// An instance of `cls` with these field values, set as `model_construct` sets them.
    fn construct<'py>(
        &self,
        py: Python<'py>,
        cls: &Py<PyAny>,
        values: Bound<'py, PyDict>,
        set: Bound<'py, PySet>,
        extra: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let instance = raw::new_instance(cls.bind(py))?;
        let [dict, fields_set, extra_name, private] = &self.names;
        raw::set_attribute(&instance, dict.bind(py), values.as_any())?;
        raw::set_attribute(&instance, fields_set.bind(py), set.as_any())?;
        match extra {
            Some(extra) => raw::set_attribute(&instance, extra_name.bind(py), extra.as_any())?,
            None => raw::set_attribute(&instance, extra_name.bind(py), &py.None().into_bound(py))?,
        };
        raw::set_attribute(&instance, private.bind(py), &py.None().into_bound(py))?;
        Ok(instance)
    }

    /// The `ag_ui` model of an AG-UI event given as its JSON object (camelCase keys).
    pub(crate) fn event<'py>(&self, py: Python<'py>, event: &Value) -> PyResult<Bound<'py, PyAny>> {
        let object = event.as_object();
        let template =
            object.and_then(|object| object.get("type")).and_then(Value::as_str).and_then(|kind| self.events.get(kind));
        let (Some(object), Some(template)) = (object, template) else {
            return self.validate_event.bind(py).call1((to_python(py, event)?,));
        };
        let mut known = 0;
        for field in &template.fields {
            if let Some(value) = object.get(&field.key) {
                known += 1;
                if field.nested && !matches!(value, Value::Null | Value::String(_)) {
                    return self.validate_event.bind(py).call1((to_python(py, event)?,));
                }
            }
        }
        if known != object.len() {
            return self.validate_event.bind(py).call1((to_python(py, event)?,));
        }
        let values = PyDict::new(py);
        let set = PySet::empty(py)?;
        // The reference validates its events (their type is a field that was set), except the fragment frames,
        // which it constructs from these four arguments.
        let frame = object.get("name").and_then(Value::as_str) == Some(FRAGMENT_EVENT_NAME);
        for field in &template.fields {
            let name = field.name.bind(py);
            if frame && FRAME_ARGUMENTS.contains(&field.key.as_str()) {
                set.add(name)?;
            }
            match object.get(&field.key) {
                Some(_) if field.key == "type" => {
                    values.set_item(name, template.kind.bind(py))?;
                    if !frame {
                        set.add(name)?;
                    }
                }
                Some(value) if frame => values.set_item(name, to_python(py, value)?)?,
                Some(value) => {
                    values.set_item(name, to_python(py, value)?)?;
                    set.add(name)?;
                }
                None => values.set_item(name, field.default.bind(py))?,
            }
        }
        self.construct(py, &template.cls, values, set, Some(PyDict::new(py)))
    }

    /// A tuple of event models.
    pub(crate) fn events<'py>(&self, py: Python<'py>, events: &[Value]) -> PyResult<Bound<'py, PyTuple>> {
        let models = events.iter().map(|event| self.event(py, event)).collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, models)
    }

    /// A `StreamPosition`.
    pub(crate) fn position<'py>(&self, py: Python<'py>, position: StreamPosition) -> PyResult<Bound<'py, PyAny>> {
        let values = PyDict::new(py);
        let (attempt, sequence) = (intern!(py, "attempt"), intern!(py, "sequence"));
        values.set_item(attempt, position.attempt)?;
        values.set_item(sequence, position.sequence)?;
        let set = PySet::new(py, [attempt, sequence])?;
        self.construct(py, &self.position, values, set, None)
    }

    /// An `ItemRef`.
    fn item_ref<'py>(&self, py: Python<'py>, reference: &ItemRef) -> PyResult<Bound<'py, PyAny>> {
        let values = PyDict::new(py);
        let names = [
            intern!(py, "id"),
            intern!(py, "kind"),
            intern!(py, "state"),
            intern!(py, "ordinal"),
            intern!(py, "response_group"),
            intern!(py, "failure"),
        ];
        values.set_item(names[0], &reference.id)?;
        values.set_item(names[1], kind_name(py, reference.kind.as_str()))?;
        values.set_item(names[2], kind_name(py, reference.state.as_str()))?;
        values.set_item(names[3], reference.ordinal)?;
        values.set_item(names[4], reference.response_group.as_deref())?;
        match &reference.failure {
            Some(failure) => values.set_item(names[5], crate::convert::object_to_python(py, failure)?)?,
            None => values.set_item(names[5], py.None())?,
        }
        let set = PySet::new(py, names)?;
        match &reference.memory_sources {
            Some(sources) => {
                let validate = self.memory_source.bind(py).getattr("model_validate")?;
                let mut models = Vec::with_capacity(sources.len());
                for source in sources {
                    let value = serde_json::to_value(source).unwrap_or(Value::Null);
                    models.push(validate.call1((to_python(py, &value)?,))?);
                }
                values.set_item(intern!(py, "memory_sources"), PyTuple::new(py, models)?)?;
                set.add(intern!(py, "memory_sources"))?;
            }
            None => values.set_item(intern!(py, "memory_sources"), py.None())?,
        }
        self.construct(py, &self.item_ref, values, set, None)
    }

    /// An `Observed` entry whose event is `event` (the dict the stream carries).
    pub(crate) fn observed<'py>(
        &self,
        py: Python<'py>,
        entry: &Observed,
        event: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = PyDict::new(py);
        let names = [intern!(py, "sequence"), intern!(py, "event"), intern!(py, "item")];
        values.set_item(names[0], entry.sequence)?;
        values.set_item(names[1], event)?;
        match &entry.item {
            Some(reference) => values.set_item(names[2], self.item_ref(py, reference)?)?,
            None => values.set_item(names[2], py.None())?,
        }
        let set = PySet::new(py, names)?;
        self.construct(py, &self.observed, values, set, None)
    }

    /// A model of `cls` validated from JSON text.
    pub(crate) fn validated_json<'py>(
        &self,
        py: Python<'py>,
        cls: &Py<PyAny>,
        text: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        cls.bind(py).call_method1("model_validate_json", (text,))
    }
}

/// An item kind's or state's name as an interned Python string (there are eight of them).
fn kind_name<'py>(py: Python<'py>, name: &'static str) -> Bound<'py, PyString> {
    static NAMES: PyOnceLock<Vec<(&'static str, Py<PyString>)>> = PyOnceLock::new();
    let names = NAMES.get_or_init(py, || {
        [
            "text_message",
            "reasoning_message",
            "tool_call",
            "observation",
            "in_progress",
            "completed",
            "interrupted",
            "failed",
        ]
        .into_iter()
        .map(|name| (name, PyString::intern(py, name).unbind()))
        .collect()
    });
    match names.iter().find(|(known, _)| *known == name) {
        Some((_, interned)) => interned.bind(py).clone(),
        None => PyString::new(py, name),
    }
}

/// The two C calls `object.__new__(cls)` and `object.__setattr__(instance, name, value)` make, without the
/// Python-level wrappers around them (which check and repack their arguments and cost as much as the
/// construction itself).
#[allow(unsafe_code)]
mod raw {
    use pyo3::prelude::*;
    use pyo3::{ffi, PyTypeCheck};

    /// `object.__new__(cls)`: a new, empty instance of the class.
    pub(super) fn new_instance<'py>(cls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let cls = cls.cast::<pyo3::types::PyType>()?;
        let empty = pyo3::types::PyTuple::empty(py);
        // SAFETY: `cls` is a live type object (checked above) and `empty` a live tuple, both borrowed for the
        // call; `PyType_GenericNew` returns a new reference or NULL with an exception set, which
        // `assume_owned_or_err` takes over.
        unsafe {
            let instance =
                ffi::PyType_GenericNew(cls.as_ptr().cast::<ffi::PyTypeObject>(), empty.as_ptr(), std::ptr::null_mut());
            Bound::from_owned_ptr_or_err(py, instance)
        }
    }

    /// `object.__setattr__(instance, name, value)`.
    pub(super) fn set_attribute(
        instance: &Bound<'_, PyAny>,
        name: &Bound<'_, pyo3::types::PyString>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        debug_assert!(pyo3::types::PyString::type_check(name));
        // SAFETY: all three are live objects borrowed for the call; `PyObject_GenericSetAttr` borrows them and
        // returns -1 with an exception set on failure.
        let status = unsafe { ffi::PyObject_GenericSetAttr(instance.as_ptr(), name.as_ptr(), value.as_ptr()) };
        if status == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(instance.py()))
        }
    }
}
