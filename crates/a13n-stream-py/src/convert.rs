//! Values across the boundary: Python objects to JSON values and back, and the three forms a source line may
//! take (`str`, `bytes`, or the equivalent `dict`).

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::input_error;

/// Nesting deeper than this is refused rather than risking the stack (serde_json's own limit is 128).
const MAX_DEPTH: usize = 128;

/// A JSON value as plain Python objects: `dict` (key order kept), `list`, `str`, `int`, `float`, `bool`, `None`.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => number_to_python(py, number)?,
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(object) => object_to_python(py, object)?.into_any(),
    })
}

pub(crate) fn object_to_python<'py>(py: Python<'py>, object: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in object {
        dict.set_item(key, to_python(py, value)?)?;
    }
    Ok(dict)
}

fn number_to_python<'py>(py: Python<'py>, number: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(value) = number.as_i64() {
        return Ok(value.into_pyobject(py)?.into_any());
    }
    if let Some(value) = number.as_u64() {
        return Ok(value.into_pyobject(py)?.into_any());
    }
    Ok(PyFloat::new(py, number.as_f64().unwrap_or(f64::NAN)).into_any())
}

/// A Python object as a JSON value; `path` names the field in errors (`InputError`).
pub(crate) fn from_python(object: &Bound<'_, PyAny>, path: &str) -> PyResult<Value> {
    from_python_at(object, path, 0)
}

fn from_python_at(object: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(input_error(path, format!("nested deeper than {MAX_DEPTH} levels")));
    }
    if object.is_none() {
        return Ok(Value::Null);
    }
    // `bool` is a subclass of `int`: test it first.
    if let Ok(flag) = object.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(value) = object.extract::<i64>() {
            return Ok(value.into());
        }
        if let Ok(value) = object.extract::<u64>() {
            return Ok(value.into());
        }
        return Err(input_error(path, "an integer beyond 64 bits has no JSON form here"));
    }
    if let Ok(value) = object.cast::<PyFloat>() {
        let value = value.value();
        return Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| input_error(path, format!("{value} is not a JSON number")));
    }
    if let Ok(text) = object.cast::<PyString>() {
        return Ok(Value::String(text.to_cow()?.into_owned()));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(input_error(path, format!("object keys must be str, found {}", type_name(&key))));
            };
            let key = key.to_cow()?.into_owned();
            let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            let value = from_python_at(&value, &inner, depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (index, item) in object.try_iter()?.enumerate() {
            items.push(from_python_at(&item?, &format!("{path}.{index}"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(input_error(path, format!("{} has no JSON form", type_name(object))))
}

fn type_name(object: &Bound<'_, PyAny>) -> String {
    object.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "this value".into())
}

/// One line of input: a JSON line as `str` or `bytes` (UTF-8), or a `dict` that is written as one.
pub(crate) fn line_text<'a>(line: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(text) = line.cast::<PyString>() {
        return text.to_cow();
    }
    if let Ok(bytes) = line.cast::<PyBytes>() {
        return match std::str::from_utf8(bytes.as_bytes()) {
            Ok(text) => Ok(Cow::Owned(text.to_owned())),
            Err(error) => {
                Err(input_error("", format!("the line is not UTF-8 (invalid after byte {})", error.valid_up_to())))
            }
        };
    }
    if line.is_instance_of::<PyDict>() {
        return Ok(Cow::Owned(from_python(line, "")?.to_string()));
    }
    Err(PyTypeError::new_err(format!("a line is a str, bytes or dict, not {}", type_name(line))))
}

/// Checkpoint or continuation JSON: `str`, `bytes`, or any object with `model_dump_json()` (a reference model).
pub(crate) fn json_text(object: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(text) = object.cast::<PyString>() {
        return Ok(text.to_cow()?.into_owned());
    }
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return String::from_utf8(bytes.as_bytes().to_vec())
            .map_err(|error| input_error(what, format!("not UTF-8: {error}")));
    }
    if object.hasattr("model_dump_json")? {
        return object.call_method0("model_dump_json")?.extract::<String>();
    }
    Err(PyTypeError::new_err(format!(
        "{what} is JSON text (str or bytes) or a model with model_dump_json(), not {}",
        type_name(object)
    )))
}

/// Lines of JSON text, one event or entry a line, as a list of `str`.
pub(crate) fn split_lines(bytes: &[u8]) -> Vec<&str> {
    bytes
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| std::str::from_utf8(line).unwrap_or_default())
        .collect()
}
