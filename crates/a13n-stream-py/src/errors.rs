//! The exceptions the package raises, and how the core's errors become them.
//!
//! - `AguiObservationError(ValueError)`: well-formed input the protocol rejects, with the reference's message;
//! - `ValidationError(ValueError)`: a first-party payload that fails the reference's Pydantic model, with
//!   Pydantic's message;
//! - `InputError(ValueError)`: malformed input (bad JSON, a field of the wrong shape), naming the field;
//! - a host processor's own exception, raised again as it was;
//! - `ValueError` for calls out of range and checkpoints that cannot continue a fold.

use std::sync::{Arc, Mutex};

use a13n_stream_protocol::{FoldError, ObserveError};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    a13n_stream_rs,
    AguiObservationError,
    PyValueError,
    "Well-formed input that the protocol rejects; nothing was committed."
);
create_exception!(
    a13n_stream_rs,
    ValidationError,
    PyValueError,
    "A first-party payload that fails the reference's Pydantic model; nothing was committed."
);
create_exception!(
    a13n_stream_rs,
    InputError,
    PyValueError,
    "Malformed input: bad JSON, or a field whose value has the wrong shape; nothing was committed."
);

/// An `InputError` at a dotted field path (empty for the whole value).
pub(crate) fn input_error(path: &str, message: impl std::fmt::Display) -> PyErr {
    if path.is_empty() {
        InputError::new_err(message.to_string())
    } else {
        InputError::new_err(format!("{path}: {message}"))
    }
}

/// Where a processor's exception waits while the core rolls the item back.
pub(crate) type FailureSlot = Arc<Mutex<Option<PyErr>>>;

/// The exception of a processor that failed, or a stand-in when none was kept.
fn processor_failure(slot: Option<&FailureSlot>) -> PyErr {
    let kept = slot.and_then(|slot| slot.lock().ok().and_then(|mut held| held.take()));
    kept.unwrap_or_else(|| PyRuntimeError::new_err("the event processor failed"))
}

pub(crate) fn observe_error(error: ObserveError, slot: Option<&FailureSlot>) -> PyErr {
    match error {
        ObserveError::Observation(rejection) => AguiObservationError::new_err(rejection.message().to_owned()),
        ObserveError::Validation(message) => ValidationError::new_err(message),
        ObserveError::Input(input) => InputError::new_err(input.to_string()),
        ObserveError::Usage(message) => PyValueError::new_err(message),
        ObserveError::Processor => processor_failure(slot),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

pub(crate) fn fold_error(error: FoldError, slot: Option<&FailureSlot>) -> PyErr {
    match error {
        FoldError::Observation(rejection) => AguiObservationError::new_err(rejection.message().to_owned()),
        FoldError::Usage(message) => PyValueError::new_err(message),
        FoldError::Validation(message) => ValidationError::new_err(message),
        FoldError::Input(input) => InputError::new_err(input.to_string()),
        FoldError::Continuation(message) => PyValueError::new_err(message),
        FoldError::Processor => processor_failure(slot),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The same exception with `line N: ` before its message (batch calls name the line that failed).
pub(crate) fn at_line(py: Python<'_>, error: PyErr, line: usize) -> PyErr {
    let value = error.value(py);
    let message = value.str().map(|text| text.to_string()).unwrap_or_default();
    let renamed = value.get_type().call1((format!("line {line}: {message}"),));
    match renamed {
        Ok(exception) => PyErr::from_value(exception),
        Err(_) => error,
    }
}
