//! The exceptions the package raises, and how the core's errors become them.
//!
//! Every exception of the package carries `kind` (a stable name a host matches on), `line` (the 1-based
//! position in a batch or history, when the error came from one) and `path` (the dotted field, when known):
//!
//! - `AguiObservationError(ValueError)`: well-formed input the protocol rejects, with the reference's message;
//!   `kind` is `thread_changed`, `run_changed`, `part_kind_changed`, `part_identity_changed`,
//!   `processor_changed_structure`, `events_not_retained`, `not_fresh` or `resuming`;
//! - Pydantic's `ValidationError` for a first-party payload that fails the reference's model, raised by that
//!   model itself when `a13n-harness` is installed; otherwise this package's `ValidationError(ValueError)` with
//!   Pydantic's message (`kind` `validation`);
//! - `InputError(ValueError)`: malformed input; `kind` is `json`, `too_large`, `missing`, `wrong_type`,
//!   `invalid` or `shape`;
//! - `SourceLineError(InputError, TypeError)` (defined in the package's `__init__.py`) for a journal line given
//!   where a source item goes that is not one: the reference raises `TypeError` for any non-native value;
//! - `TypeError` for a value of another Python type than the call takes (a source item that is no line and no
//!   native item);
//! - a host processor's own exception, raised again as it was;
//! - `ValueError` for calls out of range and checkpoints that cannot continue a fold (`kind` `usage` and
//!   `continuation`).

use std::sync::{Arc, Mutex};

use a13n_stream_protocol::{FoldError, InputError as CoreInputError, InputKind, ObservationKind, ObserveError};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    a13n_stream_rs,
    AguiObservationError,
    PyValueError,
    "A public Harness item the protocol cannot observe without changing its meaning; nothing was committed."
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

/// Where an error was found: the batch line and the field, when known.
#[derive(Clone, Debug, Default)]
pub(crate) struct At {
    pub(crate) line: Option<u64>,
    pub(crate) path: Option<String>,
}

/// `error` with `kind`, `line` and `path` set (attributes a host reads without parsing the message).
fn annotated(py: Python<'_>, error: PyErr, kind: &str, at: &At) -> PyErr {
    let value = error.value(py);
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("line", at.line);
    let _ = value.setattr("path", at.path.as_deref());
    error
}

fn input_kind(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Json => "json",
        InputKind::TooLarge => "too_large",
        InputKind::Missing => "missing",
        InputKind::WrongType => "wrong_type",
        InputKind::Shape => "shape",
        _ => "invalid",
    }
}

pub(crate) fn observation_kind(kind: ObservationKind) -> &'static str {
    match kind {
        ObservationKind::ThreadChanged => "thread_changed",
        ObservationKind::RunChanged => "run_changed",
        ObservationKind::PartKindChanged => "part_kind_changed",
        ObservationKind::PartIdentityChanged => "part_identity_changed",
        ObservationKind::ProcessorChangedStructure => "processor_changed_structure",
        ObservationKind::EventsNotRetained => "events_not_retained",
        ObservationKind::NotFresh => "not_fresh",
        _ => "rejected",
    }
}

/// An `AguiObservationError` of `kind` (the reference's message).
pub(crate) fn observation_error(py: Python<'_>, kind: &str, message: impl Into<String>) -> PyErr {
    annotated(py, AguiObservationError::new_err(message.into()), kind, &At::default())
}

/// An `InputError` at a dotted field path (empty for the whole value).
pub(crate) fn input_error(path: &str, message: impl std::fmt::Display) -> PyErr {
    let text = if path.is_empty() { message.to_string() } else { format!("{path}: {message}") };
    Python::attach(|py| {
        let at = At { line: None, path: (!path.is_empty()).then(|| path.to_owned()) };
        annotated(py, InputError::new_err(text), "invalid", &at)
    })
}

/// The core's input error as this package's, with its kind, line and path.
pub(crate) fn core_input_error(py: Python<'_>, error: &CoreInputError) -> PyErr {
    let path = error.path();
    let at = At { line: error.line(), path: (!path.is_empty()).then(|| path.to_owned()) };
    annotated(py, InputError::new_err(error.to_string()), input_kind(error.kind()), &at)
}

/// An `InputError` about a journal line given in place of a native item, raised again as the package's
/// `SourceLineError` (an `InputError` and a `TypeError`), with the same message, kind, line and path.
pub(crate) fn as_source_line_error(py: Python<'_>, error: PyErr) -> PyErr {
    if !error.is_instance_of::<InputError>(py) {
        return error;
    }
    let value = error.value(py);
    let made = py.import("a13n_stream_rs").and_then(|module| module.getattr("SourceLineError")).and_then(|class| {
        let line_error = class.call1((value.str()?,))?;
        for attribute in ["kind", "line", "path"] {
            line_error.setattr(attribute, value.getattr(attribute)?)?;
        }
        Ok(PyErr::from_value(line_error))
    });
    made.unwrap_or(error)
}

/// Where a processor's exception waits while the core rolls the item back.
pub(crate) type FailureSlot = Arc<Mutex<Option<PyErr>>>;

/// The exception of a processor that failed, or a stand-in when none was kept.
fn processor_failure(slot: Option<&FailureSlot>) -> PyErr {
    let kept = slot.and_then(|slot| slot.lock().ok().and_then(|mut held| held.take()));
    kept.unwrap_or_else(|| PyRuntimeError::new_err("the event processor failed"))
}

/// A validation failure: for a native source item, the model's own `ValidationError` (the model validates the
/// item's payload again); else this package's, with Pydantic's message.
pub(crate) fn validation_error(py: Python<'_>, message: String, native: Option<&Bound<'_, PyAny>>) -> PyErr {
    // A journal line is no native item: only Pydantic's message is known for it.
    let native = native.filter(|item| {
        !(item.is_instance_of::<pyo3::types::PyString>()
            || item.is_instance_of::<pyo3::types::PyBytes>()
            || item.is_instance_of::<pyo3::types::PyDict>())
    });
    let genuine = native.and_then(|item| {
        let helper = py.import("a13n_stream_rs._native").and_then(|module| module.getattr("validation_error"));
        helper.and_then(|helper| helper.call1((item,))).ok().filter(|found| !found.is_none())
    });
    match genuine {
        Some(exception) => PyErr::from_value(exception),
        None => annotated(py, ValidationError::new_err(message), "validation", &At::default()),
    }
}

/// The exception for an observer's error.
pub(crate) fn observe_error(
    py: Python<'_>,
    error: ObserveError,
    slot: Option<&FailureSlot>,
    native: Option<&Bound<'_, PyAny>>,
) -> PyErr {
    match error {
        ObserveError::Observation(rejection) => {
            observation_error(py, observation_kind(rejection.kind()), rejection.message().to_owned())
        }
        ObserveError::Validation(message) => validation_error(py, message, native),
        ObserveError::Input(input) => core_input_error(py, &input),
        ObserveError::Usage(message) => annotated(py, PyValueError::new_err(message), "usage", &At::default()),
        ObserveError::Processor => processor_failure(slot),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The exception for a fold's error.
pub(crate) fn fold_error(
    py: Python<'_>,
    error: FoldError,
    slot: Option<&FailureSlot>,
    native: Option<&Bound<'_, PyAny>>,
) -> PyErr {
    match error {
        FoldError::Observation(rejection) => {
            observation_error(py, observation_kind(rejection.kind()), rejection.message().to_owned())
        }
        FoldError::Usage(message) => annotated(py, PyValueError::new_err(message), "usage", &At::default()),
        FoldError::Validation(message) => validation_error(py, message, native),
        FoldError::Input(input) => core_input_error(py, &input),
        FoldError::Continuation(message) => {
            annotated(py, PyValueError::new_err(message), "continuation", &At::default())
        }
        FoldError::Processor => processor_failure(slot),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The same exception attributed to the 1-based `line` of a batch: `line N: ` before its message and `line` set;
/// its other attributes are kept.
pub(crate) fn at_line(py: Python<'_>, error: PyErr, line: usize) -> PyErr {
    let value = error.value(py);
    let message = value.str().map(|text| text.to_string()).unwrap_or_default();
    let Ok(renamed) = value.get_type().call1((format!("line {line}: {message}"),)) else {
        return error;
    };
    for name in ["kind", "path"] {
        if let Ok(attribute) = value.getattr(name) {
            let _ = renamed.setattr(name, attribute);
        }
    }
    let _ = renamed.setattr("line", line);
    let _ = renamed.setattr("__cause__", value.getattr("__cause__").ok());
    PyErr::from_value(renamed)
}
