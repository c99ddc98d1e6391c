//! The memory sources a Harness memory payload reports, as the reference's `memory.memory_sources` reads them.

use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_python, to_python};

/// The sources a `memory_recall` / `memory_context` payload reports, as JSON objects (the Python side validates
/// them into `MemorySource` models), or `None` when it reports none or they do not validate.
#[pyfunction]
pub(crate) fn memory_sources<'py>(py: Python<'py>, payload: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Value::Object(payload) = from_python(payload, "payload")? else {
        return Ok(None);
    };
    let Some(sources) = a13n_stream_protocol::memory_sources(&payload) else {
        return Ok(None);
    };
    let sources = serde_json::to_value(sources)
        .map_err(|error| PyErr::new::<pyo3::exceptions::PyValueError, _>(error.to_string()))?;
    to_python(py, &sources).map(Some)
}
