//! Values across the boundary: Python objects to JSON values and back, and checkpoint text from a model.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;
use serde_json::{Map, Number, Value};

use crate::errors::input_error;

/// Nesting deeper than this is refused rather than risking the stack (serde_json's own limit is 128).
const MAX_DEPTH: usize = 128;

/// A JSON value as plain Python objects, as the reference's JSON-mode dumps hold it (its events, and what its
/// helpers return): `dict` (key order kept), `list`, `str`, `int`, `float`, `bool`, `None`; a number too large for
/// a float (`1e400`), which such a dump has made `None`, is `None`.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    convert(py, value, Numbers::Dumped)
}

/// A source item's JSON value as `json.loads` makes it: `1e400` is `float("inf")`.
pub(crate) fn source_to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    convert(py, value, Numbers::Loaded)
}

/// How a number too large for a float converts.
#[derive(Clone, Copy)]
enum Numbers {
    /// As Pydantic's JSON-mode dump holds it: `None`.
    Dumped,
    /// As `json.loads` reads it: an infinite float.
    Loaded,
}

fn convert<'py>(py: Python<'py>, value: &Value, numbers: Numbers) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => number_to_python(py, number, numbers)?,
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(convert(py, item, numbers)?)?;
            }
            list.into_any()
        }
        Value::Object(object) => convert_object(py, object, numbers)?.into_any(),
    })
}

pub(crate) fn object_to_python<'py>(py: Python<'py>, object: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    convert_object(py, object, Numbers::Dumped)
}

fn convert_object<'py>(py: Python<'py>, object: &Map<String, Value>, numbers: Numbers) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let keys = known_keys(py);
    for (key, value) in object {
        let value = convert(py, value, numbers)?;
        match keys.get(key.as_str()) {
            Some(known) => dict.set_item(known.bind(py), value)?,
            None => dict.set_item(key, value)?,
        }
    }
    Ok(dict)
}

/// The keys every event and source item repeats, made once as interned Python strings: a dict built with them
/// allocates no key and hashes none (an interned string keeps its hash).
const KNOWN_KEYS: &[&str] = &[
    "type",
    "timestamp",
    "messageId",
    "delta",
    "role",
    "toolCallId",
    "toolCallName",
    "name",
    "value",
    "content",
    "subagentRunId",
    "threadId",
    "runId",
    "protocolVersion",
    "rawEvent",
    "parentMessageId",
    "entityId",
    "subtype",
    "encryptedValue",
    "result",
    "outcome",
    "usage",
    "thread_id",
    "run_id",
    "sequence",
    "occurred_at",
    "event",
    "index",
    "part",
    "event_kind",
    "part_kind",
    "part_delta_kind",
    "args_delta",
    "tool_name_delta",
    "tool_call_id",
    "tool_name",
    "args",
    "id",
    "provider_name",
    "provider_details",
    "tool_kind",
    "previous_part_kind",
    "next_part_kind",
    "content_delta",
    "signature_delta",
    "citations",
    "citations_delta",
    "schema_version",
    "kind",
    "payload",
    "metadata",
    "outcome",
    "timestamp",
    "retry",
    "args_valid",
    "signature",
];

fn known_keys(py: Python<'_>) -> &'static FxHashMap<&'static str, Py<PyString>> {
    static KEYS: PyOnceLock<FxHashMap<&'static str, Py<PyString>>> = PyOnceLock::new();
    KEYS.get_or_init(py, || KNOWN_KEYS.iter().map(|key| (*key, PyString::intern(py, key).unbind())).collect())
}

fn number_to_python<'py>(py: Python<'py>, number: &Number, numbers: Numbers) -> PyResult<Bound<'py, PyAny>> {
    if let Some(value) = number.as_i64() {
        return Ok(value.into_pyobject(py)?.into_any());
    }
    if let Some(value) = number.as_u64() {
        return Ok(value.into_pyobject(py)?.into_any());
    }
    let literal = number.as_str();
    if literal.bytes().all(|byte| byte == b'-' || byte.is_ascii_digit()) {
        // An integer beyond 64 bits: Python's `int` of its digits, as `json.loads` makes it.
        return Ok(py.get_type::<pyo3::types::PyInt>().call1((literal,))?.into_any());
    }
    // `json.loads` reads a literal too large for a float as infinity, which a JSON-mode dump makes `None`.
    let float = literal.parse::<f64>().unwrap_or(f64::NAN);
    if !float.is_finite() && matches!(numbers, Numbers::Dumped) {
        return Ok(py.None().into_bound(py));
    }
    Ok(PyFloat::new(py, float).into_any())
}

/// Why a Python value has no JSON form: a Python error, or a refusal at a field (its path built on the way out,
/// innermost segment first, so a value that converts costs no path at all).
pub(crate) enum Refused {
    Python(PyErr),
    At { trail: Vec<String>, message: String },
}

impl From<PyErr> for Refused {
    fn from(error: PyErr) -> Refused {
        Refused::Python(error)
    }
}

impl Refused {
    fn new(message: impl Into<String>) -> Refused {
        Refused::At { trail: Vec::new(), message: message.into() }
    }

    fn within(mut self, segment: impl FnOnce() -> String) -> Refused {
        if let Refused::At { trail, .. } = &mut self {
            trail.push(segment());
        }
        self
    }

    /// The `InputError` (or the Python error) at `path` and below.
    pub(crate) fn into_error(self, path: &str) -> PyErr {
        match self {
            Refused::Python(error) => error,
            Refused::At { trail, message } => {
                let mut full = path.to_owned();
                for segment in trail.iter().rev() {
                    if !full.is_empty() {
                        full.push('.');
                    }
                    full.push_str(segment);
                }
                input_error(&full, message)
            }
        }
    }
}

/// A Python `str` as Rust text. A `str` holding a lone surrogate (half of a UTF-16 pair, as `json.loads` makes of
/// a `\ud83d` escape split from its other half) has no UTF-8 form, so no journal line or event can hold it: it is
/// refused, naming the code point. (The reference carries it into its events and fails when it exports a
/// checkpoint holding it.)
pub(crate) fn unicode<'a>(text: &'a Bound<'_, PyString>) -> Result<std::borrow::Cow<'a, str>, Refused> {
    text.to_cow().map_err(|_| Refused::new(lone_surrogate(text)))
}

/// [`unicode`], its refusal an `InputError` at `path`.
pub(crate) fn unicode_at<'a>(text: &'a Bound<'_, PyString>, path: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    unicode(text).map_err(|refused| refused.into_error(path))
}

/// What [`unicode`] says of a `str` it refuses: its first surrogate, found in the `surrogatepass` encoding (where a
/// surrogate is the three bytes `ED A0..BF xx`).
fn lone_surrogate(text: &Bound<'_, PyString>) -> String {
    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"));
    let bytes = encoded.as_ref().ok().and_then(|bytes| bytes.cast::<PyBytes>().ok()).map(|bytes| bytes.as_bytes());
    let code = bytes.and_then(|bytes| {
        bytes
            .windows(3)
            .find(|w| w[0] == 0xED && w[1] >= 0xA0)
            .map(|w| (u32::from(w[0] & 0x0F) << 12) | (u32::from(w[1] & 0x3F) << 6) | u32::from(w[2] & 0x3F))
    });
    match code {
        Some(code) => format!("a lone surrogate (U+{code:04X}, half of a UTF-16 pair) is not Unicode text"),
        None => "the text is not Unicode (it holds a lone surrogate)".to_owned(),
    }
}

/// A Python object as a JSON value; `path` names the field in errors (`InputError`).
pub(crate) fn from_python(object: &Bound<'_, PyAny>, path: &str) -> PyResult<Value> {
    json_of(object, 0).map_err(|refused| refused.into_error(path))
}

fn json_of(object: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Refused> {
    if depth > MAX_DEPTH {
        return Err(Refused::new(format!("nested deeper than {MAX_DEPTH} levels")));
    }
    if let Ok(text) = object.cast::<PyString>() {
        return Ok(Value::String(unicode(text)?.into_owned()));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(Refused::new(format!("object keys must be str, found {}", type_name(&key))));
            };
            let key = unicode(key)?.into_owned();
            match json_of(&value, depth + 1) {
                Ok(value) => map.insert(key, value),
                Err(refused) => return Err(refused.within(|| key)),
            };
        }
        return Ok(Value::Object(map));
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
        // Beyond 64 bits: its digits, kept exact as Python keeps them.
        let digits = object.str()?.to_string();
        return digits.parse::<Number>().map(Value::Number).map_err(|_| Refused::new("an integer with no JSON form"));
    }
    if let Ok(value) = object.cast::<PyFloat>() {
        let value = value.value();
        return Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| Refused::new(format!("{value} is not a JSON number")));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let mut items = Vec::with_capacity(object.len().unwrap_or(0));
        for (index, item) in object.try_iter()?.enumerate() {
            match json_of(&item?, depth + 1) {
                Ok(value) => items.push(value),
                Err(refused) => return Err(refused.within(|| index.to_string())),
            }
        }
        return Ok(Value::Array(items));
    }
    Err(Refused::new(format!("{} has no JSON form", type_name(object))))
}

/// A text as Python's `repr` writes it (`'run-1'`), or `None`: for the `repr` of the package's objects.
pub(crate) fn python_repr(py: Python<'_>, text: Option<&str>) -> PyResult<String> {
    match text {
        Some(text) => Ok(PyString::new(py, text).repr()?.to_string()),
        None => Ok("None".to_owned()),
    }
}

pub(crate) fn type_name(object: &Bound<'_, PyAny>) -> String {
    object.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "this value".into())
}

/// JSON text given as `str` or `bytes` (UTF-8); `None` for any other object.
pub(crate) fn text_of(object: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<String>> {
    if let Ok(text) = object.cast::<PyString>() {
        return unicode_at(text, what).map(|text| Some(text.into_owned()));
    }
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return match std::str::from_utf8(bytes.as_bytes()) {
            Ok(text) => Ok(Some(text.to_owned())),
            Err(error) => {
                Err(input_error(what, format!("the text is not UTF-8 (invalid after byte {})", error.valid_up_to())))
            }
        };
    }
    Ok(None)
}

/// Checkpoint or continuation JSON: `str`, `bytes`, or any model with `model_dump_json()` (this package's or the
/// reference's).
pub(crate) fn json_text(object: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Some(text) = text_of(object, what)? {
        return Ok(text);
    }
    if object.hasattr("model_dump_json")? {
        return object.call_method0("model_dump_json")?.extract::<String>();
    }
    Err(PyTypeError::new_err(format!(
        "{what} is a model with model_dump_json() or its JSON text (str or bytes), not {}",
        type_name(object)
    )))
}

/// A flag read as Python reads a condition (`bool(value)`), as the reference's constructors use theirs: `0`, `""`
/// and `None` are false, `1` true.
pub(crate) struct Truthy(pub(crate) bool);

impl<'py> FromPyObject<'_, 'py> for Truthy {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        value.is_truthy().map(Truthy)
    }
}

/// An integer argument: an `int` or a `bool`, or a `float` without a fraction, saturated to the range of `i128`;
/// `ValueError` naming `name` for anything else (Pydantic's lax `int` also coerces a numeric `str` or a `Decimal`;
/// the reference's models refuse the rest with a `ValidationError`, a `ValueError`).
pub(crate) fn integer_argument(value: &Bound<'_, PyAny>, name: &str) -> PyResult<i128> {
    if let Ok(float) = value.cast::<PyFloat>() {
        let float = float.value();
        if float.is_finite() && float.fract() == 0.0 {
            return Ok(float as i128);
        }
    } else if value.is_instance_of::<PyInt>() {
        return saturated(value);
    }
    Err(PyValueError::new_err(format!("{name} must be an integer, not {}", value.repr()?)))
}

/// An `int` as an `i128`, one past that range held as its nearest end.
fn saturated(integer: &Bound<'_, PyAny>) -> PyResult<i128> {
    match integer.extract::<i128>() {
        Ok(integer) => Ok(integer),
        Err(_) if integer.lt(0)? => Ok(i128::MIN),
        Err(_) => Ok(i128::MAX),
    }
}

/// A position argument (`snapshot`'s `start` and `stop`): an `int` (a `bool` too) or any object with `__index__`,
/// as Python's slicing takes it, saturated to the range of `i128`; `TypeError` for anything else, as the
/// reference's comparison and slicing raise it.
pub(crate) fn index_argument(value: &Bound<'_, PyAny>, name: &str) -> PyResult<i128> {
    // Python's own `operator.index`: its errors (an `__index__` that raises, or returns no `int`) as Python gives
    // them; an object without one is refused naming the argument.
    let index = if value.is_instance_of::<PyInt>() {
        value.clone()
    } else if value.hasattr("__index__")? {
        value.py().import("operator")?.getattr("index")?.call1((value,))?
    } else {
        let found = type_name(value);
        return Err(PyTypeError::new_err(format!(
            "{name} must be an integer or have an __index__ method, not {found}"
        )));
    };
    saturated(&index)
}

/// A count argument (an attempt, an ordinal): an integer from 0 to 2**64 - 1, `ValueError` naming `name` otherwise.
pub(crate) fn count_argument(value: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    match u64::try_from(integer_argument(value, name)?) {
        Ok(count) => Ok(count),
        Err(_) => Err(PyValueError::new_err(format!("{name} must be from 0 to 2**64 - 1, not {}", value.repr()?))),
    }
}
