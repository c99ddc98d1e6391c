//! The Pydantic models the package hands out: `ag_ui` event models, and the display models of
//! `a13n_stream_rs._models` (`Observed`, `ItemRef`, `StreamPosition`, checkpoints, items).
//!
//! Values the core made are already valid, so the models the hot paths return (events, observed entries, item
//! references, positions) are built without validation: a new instance of the class with its field values set,
//! as Pydantic's `model_construct` does, which equals what validation would make. Events with nested model values
//! (a run's outcome and usage, tool-result parts) or keys the model does not declare, and everything read from
//! outside (checkpoints, items), are validated by Pydantic.

use std::collections::HashMap;

use a13n_stream_protocol::{ItemRef, Observed, StreamPosition};
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
    new: Py<PyAny>,
    setattr: Py<PyAny>,
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
}

static MODELS: PyOnceLock<Models> = PyOnceLock::new();

/// The models, imported on first use (so the extension imports before `pydantic` and `ag_ui` are needed).
pub(crate) fn models(py: Python<'_>) -> PyResult<&'static Models> {
    MODELS.get_or_try_init(py, || load(py))
}

fn load(py: Python<'_>) -> PyResult<Models> {
    let builtins = py.import("builtins")?.getattr("object")?;
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
        new: builtins.getattr("__new__")?.unbind(),
        setattr: builtins.getattr("__setattr__")?.unbind(),
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
    })
}

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
        let instance = self.new.bind(py).call1((cls,))?;
        let setattr = self.setattr.bind(py);
        let [dict, fields_set, extra_name, private] = &self.names;
        setattr.call1((&instance, dict, values))?;
        setattr.call1((&instance, fields_set, set))?;
        match extra {
            Some(extra) => setattr.call1((&instance, extra_name, extra))?,
            None => setattr.call1((&instance, extra_name, py.None()))?,
        };
        setattr.call1((&instance, private, py.None()))?;
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
        for field in &template.fields {
            let name = field.name.bind(py);
            match object.get(&field.key) {
                Some(_) if field.key == "type" => values.set_item(name, template.kind.bind(py))?,
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
        values.set_item("attempt", position.attempt)?;
        values.set_item("sequence", position.sequence)?;
        let set = PySet::new(py, ["attempt", "sequence"])?;
        self.construct(py, &self.position, values, set, None)
    }

    /// An `ItemRef`.
    fn item_ref<'py>(&self, py: Python<'py>, reference: &ItemRef) -> PyResult<Bound<'py, PyAny>> {
        let values = PyDict::new(py);
        values.set_item("id", &reference.id)?;
        values.set_item("kind", reference.kind.as_str())?;
        values.set_item("state", reference.state.as_str())?;
        values.set_item("ordinal", reference.ordinal)?;
        values.set_item("response_group", reference.response_group.as_deref())?;
        match &reference.failure {
            Some(failure) => values.set_item("failure", crate::convert::object_to_python(py, failure)?)?,
            None => values.set_item("failure", py.None())?,
        }
        let set = PySet::new(py, ["id", "kind", "state", "ordinal", "response_group", "failure"])?;
        match &reference.memory_sources {
            Some(sources) => {
                let validate = self.memory_source.bind(py).getattr("model_validate")?;
                let mut models = Vec::with_capacity(sources.len());
                for source in sources {
                    let value = serde_json::to_value(source).unwrap_or(Value::Null);
                    models.push(validate.call1((to_python(py, &value)?,))?);
                }
                values.set_item("memory_sources", PyTuple::new(py, models)?)?;
                set.add("memory_sources")?;
            }
            None => values.set_item("memory_sources", py.None())?,
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
        values.set_item("sequence", entry.sequence)?;
        values.set_item("event", event)?;
        match &entry.item {
            Some(reference) => values.set_item("item", self.item_ref(py, reference)?)?,
            None => values.set_item("item", py.None())?,
        }
        let set = PySet::new(py, ["sequence", "event", "item"])?;
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
