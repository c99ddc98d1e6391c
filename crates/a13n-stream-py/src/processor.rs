//! A Python host processor: `processor(source: dict, event: dict) -> dict | None`, called for every converted
//! event as the reference calls its processor. What it returns is checked by the core as the reference checks
//! it (same type, structural fields unchanged); an exception it raises rejects the item, and the exception is
//! raised again once the core has rolled the item back.

use std::sync::{Arc, Mutex};

use a13n_stream_protocol::{AguiEventProcessor, Event, ProcessorRefusal};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{from_python, to_python};
use crate::errors::FailureSlot;

/// The core processor that calls `callable`, and the slot its exceptions are kept in.
pub(crate) fn python_processor(callable: Py<PyAny>) -> (AguiEventProcessor, FailureSlot) {
    let slot: FailureSlot = Arc::new(Mutex::new(None));
    let kept = Arc::clone(&slot);
    let processor: AguiEventProcessor = Box::new(move |source, event| {
        Python::attach(|py| {
            let call = || -> PyResult<Option<Bound<'_, PyAny>>> {
                let source = to_python(py, &source.to_value())?;
                let event = to_python(py, &event.to_value())?;
                let result = callable.bind(py).call1((source, event))?;
                Ok((!result.is_none()).then_some(result))
            };
            match call() {
                Ok(None) => Ok(None),
                Ok(Some(result)) => replacement(&result),
                Err(error) => {
                    if let Ok(mut held) = kept.lock() {
                        *held = Some(error);
                    }
                    Err(ProcessorRefusal::Failed)
                }
            }
        })
    });
    (processor, slot)
}

/// An optional Python processor as the core's optional processor and the slot its exceptions wait in.
pub(crate) fn optional_processor(callable: Option<Py<PyAny>>) -> (Option<AguiEventProcessor>, Option<FailureSlot>) {
    match callable.map(python_processor) {
        Some((processor, slot)) => (Some(processor), Some(slot)),
        None => (None, None),
    }
}

/// The event a processor returned: a `dict` that decodes as an AG-UI event.
fn replacement(result: &Bound<'_, PyAny>) -> Result<Option<Event>, ProcessorRefusal> {
    if !result.is_instance_of::<PyDict>() {
        return Err(ProcessorRefusal::NotAnEvent);
    }
    let value = from_python(result, "").map_err(|_| ProcessorRefusal::InvalidEvent)?;
    serde_json::from_value::<Event>(value).map(Some).map_err(|_| ProcessorRefusal::InvalidEvent)
}
