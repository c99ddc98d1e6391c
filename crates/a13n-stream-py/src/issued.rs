//! The event dicts `DisplayFold.events` handed out last, kept beside the objects they were made from, so that the
//! live loop's `fold(fold.events(source), source)` does not read back dicts it has only just written.
//!
//! A dict is taken as its object only when it is the very dict handed out, every value is the `str`, `int`,
//! `float`, `bool` or `None` object put in it (held here, so none can be freed and its address reused), in the
//! same order, and none was added or removed: then it holds exactly the object's JSON. A dict with a list or dict
//! in it (which could have changed inside) and any dict the host changed is read as any other dict is.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value};

use crate::convert::object_to_python;

/// One dict handed out, with what it held and the object it was made from.
pub(crate) struct Issued {
    dict: Py<PyDict>,
    items: Vec<(Py<PyAny>, Py<PyAny>)>,
    object: Option<Map<String, Value>>,
}

/// The dict of `object`, and its record when every value is a scalar (else `None`: it is read back when folded).
pub(crate) fn issue<'py>(
    py: Python<'py>,
    object: Map<String, Value>,
) -> PyResult<(Bound<'py, PyDict>, Option<Issued>)> {
    let dict = object_to_python(py, &object)?;
    if object.values().any(|value| matches!(value, Value::Array(_) | Value::Object(_))) {
        return Ok((dict, None));
    }
    let items = dict.iter().map(|(key, value)| (key.unbind(), value.unbind())).collect();
    let issued = Issued { dict: dict.clone().unbind(), items, object: Some(object) };
    Ok((dict, Some(issued)))
}

impl Issued {
    /// The object `dict` was made from, when `dict` is this one, unchanged; at most once.
    pub(crate) fn take_if_unchanged(&mut self, dict: &Bound<'_, PyDict>) -> Option<Map<String, Value>> {
        if !dict.is(self.dict.bind(dict.py())) || dict.len() != self.items.len() {
            return None;
        }
        let unchanged = dict.iter().zip(&self.items).all(|((key, value), (held_key, held_value))| {
            key.is(held_key.bind(dict.py())) && value.is(held_value.bind(dict.py()))
        });
        if unchanged {
            self.object.take()
        } else {
            None
        }
    }
}
