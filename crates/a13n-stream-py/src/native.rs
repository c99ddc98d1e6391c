//! Source items as a host holds them: the Harness's native objects (`HarnessEvent`, `HarnessRunResultEvent` and
//! the Pydantic AI events inside), or their journal line as `str`, `bytes` or `dict`.
//!
//! A native item is read in Rust, attribute by attribute, into the journal wire form: what Pydantic's JSON-mode,
//! by-alias dump gives. How to read each Python type is asked of `a13n_stream_rs._native.plan` once per type (a
//! Pydantic model's fields and keys, a dataclass's fields); a value of a type without a plan (a custom serializer,
//! bytes, a date) makes the whole event go through Pydantic's own dump, so the form is exact either way.

use std::sync::{Arc, Mutex};

use a13n_stream_protocol::SourceItem;
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use rustc_hash::FxHashMap;
use serde_json::{Map, Number, Value};

use crate::convert::{from_python, unicode_at};
use crate::errors::core_input_error;

/// Nesting deeper than this goes through Pydantic's dump (which has its own limits).
const MAX_DEPTH: usize = 64;

/// How to read one Python type: its fields in order, and whether extra fields follow.
struct Plan {
    fields: Vec<PlanField>,
    extra: bool,
}

/// A plan as `a13n_stream_rs._native.plan` describes it: `(is_model, ((attribute, key, serializer), ...),
/// has_extra)`.
type Described = (bool, Vec<(String, String, Option<(Py<PyAny>, bool)>)>, bool);

/// One field: its attribute, its JSON key, and the plain serializer its value goes through first (with whether
/// `None` skips it).
struct PlanField {
    attribute: Py<PyString>,
    key: String,
    serializer: Option<(Py<PyAny>, bool)>,
}

/// What the package knows of the Python types it has met.
#[derive(Default)]
struct Types {
    /// Per type: its plan, or `None` when only Pydantic's dump is exact. The type is held so its address stays.
    plans: FxHashMap<usize, (Py<PyType>, Option<Arc<Plan>>)>,
    /// Per type: 1 `HarnessEvent`, 2 `HarnessRunResultEvent`, 0 anything else.
    kinds: FxHashMap<usize, (Py<PyType>, u8)>,
    /// Per event type: whether it is a tool result (its returned value is described first).
    tool_results: FxHashMap<usize, (Py<PyType>, bool)>,
}

/// The helpers of `a13n_stream_rs._native` and the `datetime` type.
struct Helpers {
    plan: Py<PyAny>,
    dump: Py<PyAny>,
    dump_result: Py<PyAny>,
    source_kind: Py<PyAny>,
    is_tool_result: Py<PyAny>,
    tool_result_event: Py<PyAny>,
    unpresented_for_fold: Py<PyAny>,
    datetime: Py<PyAny>,
    utc: Py<PyAny>,
}

static TYPES: PyOnceLock<Mutex<Types>> = PyOnceLock::new();
static HELPERS: PyOnceLock<Helpers> = PyOnceLock::new();

fn helpers(py: Python<'_>) -> PyResult<&'static Helpers> {
    HELPERS.get_or_try_init(py, || {
        let module = py.import("a13n_stream_rs._native")?;
        Ok(Helpers {
            plan: module.getattr("plan")?.unbind(),
            dump: module.getattr("dump")?.unbind(),
            dump_result: module.getattr("dump_result")?.unbind(),
            source_kind: module.getattr("source_kind")?.unbind(),
            is_tool_result: module.getattr("is_tool_result")?.unbind(),
            tool_result_event: module.getattr("tool_result_event")?.unbind(),
            unpresented_for_fold: module.getattr("unpresented_for_fold")?.unbind(),
            datetime: py.import("datetime")?.getattr("datetime")?.unbind(),
            utc: py.import("datetime")?.getattr("timezone")?.getattr("utc")?.unbind(),
        })
    })
}

fn types(py: Python<'_>) -> &'static Mutex<Types> {
    TYPES.get_or_init(py, || Mutex::new(Types::default()))
}

/// The plan for `cls`, asked of Python the first time the type is met.
fn plan_of(cls: &Bound<'_, PyType>) -> PyResult<Option<Arc<Plan>>> {
    let py = cls.py();
    let key = cls.as_ptr() as usize;
    let known = types(py).lock().ok().and_then(|types| types.plans.get(&key).map(|(_, plan)| plan.clone()));
    if let Some(plan) = known {
        return Ok(plan);
    }
    let described = helpers(py)?.plan.bind(py).call1((cls,))?;
    let plan = if described.is_none() {
        None
    } else {
        let (_, fields, extra): Described = described.extract()?;
        let fields = fields.into_iter().map(|(attribute, key, serializer)| PlanField {
            attribute: PyString::intern(py, &attribute).unbind(),
            key,
            serializer,
        });
        Some(Arc::new(Plan { fields: fields.collect(), extra }))
    };
    if let Ok(mut types) = types(py).lock() {
        types.plans.insert(key, (cls.clone().unbind(), plan.clone()));
    }
    Ok(plan)
}

/// Whether `object` is a native source item: 1 an event, 2 a terminal result, 0 neither.
fn source_kind(object: &Bound<'_, PyAny>) -> PyResult<u8> {
    let py = object.py();
    let cls = object.get_type();
    let key = cls.as_ptr() as usize;
    if let Some(kind) = types(py).lock().ok().and_then(|types| types.kinds.get(&key).map(|(_, kind)| *kind)) {
        return Ok(kind);
    }
    let kind: u8 = helpers(py)?.source_kind.bind(py).call1((&cls,))?.extract()?;
    if let Ok(mut types) = types(py).lock() {
        types.kinds.insert(key, (cls.unbind(), kind));
    }
    Ok(kind)
}

/// The JSON form of a native value as Pydantic dumps it, or `None` when only Pydantic's own dump is exact.
fn walk(object: &Bound<'_, PyAny>, depth: usize) -> PyResult<Option<Value>> {
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    if let Ok(text) = object.cast::<PyString>() {
        // Text that is not Unicode goes through the dump, whose reading names its field.
        return Ok(text.to_cow().ok().map(|text| Value::String(text.into_owned())));
    }
    if object.is_none() {
        return Ok(Some(Value::Null));
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return Ok(Some(Value::Bool(flag.is_true())));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(value) = object.extract::<i64>() {
            return Ok(Some(value.into()));
        }
        if let Ok(value) = object.extract::<u64>() {
            return Ok(Some(value.into()));
        }
        // Beyond 64 bits: its digits, kept exact as Python keeps them.
        return Ok(object.str()?.to_string().parse::<Number>().ok().map(Value::Number));
    }
    if let Ok(value) = object.cast::<PyFloat>() {
        return Ok(Number::from_f64(value.value()).map(Value::Number));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let Some(key) = walked_key(&key) else { return Ok(None) };
            let Some(value) = walk(&value, depth + 1)? else { return Ok(None) };
            map.insert(key.into_owned(), value);
        }
        return Ok(Some(Value::Object(map)));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let mut items = Vec::with_capacity(object.len().unwrap_or(0));
        for item in object.try_iter()? {
            let Some(value) = walk(&item?, depth + 1)? else { return Ok(None) };
            items.push(value);
        }
        return Ok(Some(Value::Array(items)));
    }
    match plan_of(&object.get_type())? {
        Some(plan) => walk_fields(object, &plan, depth),
        None if object.is_instance(helpers(object.py())?.datetime.bind(object.py()))? => {
            datetime_text(object, true).map(|text| Some(Value::String(text)))
        }
        None => Ok(None),
    }
}

/// A mapping's key as the walk takes it: a `str` of Unicode text; anything else goes through Pydantic's dump.
fn walked_key<'a>(key: &'a Bound<'_, PyAny>) -> Option<std::borrow::Cow<'a, str>> {
    key.cast::<PyString>().ok()?.to_cow().ok()
}

fn walk_fields(object: &Bound<'_, PyAny>, plan: &Plan, depth: usize) -> PyResult<Option<Value>> {
    let py = object.py();
    let mut map = Map::with_capacity(plan.fields.len());
    // A dataclass's or a model's field values live in its `__dict__`: one lookup each there costs less than an
    // attribute lookup, which searches the class first. A field the dict lacks is read as an attribute.
    let fields = object.getattr(intern!(py, "__dict__")).ok();
    let fields = fields.as_ref().and_then(|dict| dict.cast::<PyDict>().ok());
    for field in &plan.fields {
        let attribute = field.attribute.bind(py);
        let mut value = match fields.map(|dict| dict.get_item(attribute)).transpose()?.flatten() {
            Some(value) => value,
            None => object.getattr(attribute)?,
        };
        if let Some((serializer, skip_none)) = &field.serializer {
            if !(value.is_none() && *skip_none) {
                value = serializer.bind(py).call1((value,))?;
            }
        }
        let Some(value) = walk(&value, depth + 1)? else { return Ok(None) };
        map.insert(field.key.clone(), value);
    }
    if plan.extra {
        let extra = object.getattr("__pydantic_extra__")?;
        if let Ok(extra) = extra.cast::<PyDict>() {
            for (key, value) in extra.iter() {
                let Some(key) = walked_key(&key) else { return Ok(None) };
                let Some(value) = walk(&value, depth + 1)? else { return Ok(None) };
                map.insert(key.into_owned(), value);
            }
        }
    }
    Ok(Some(Value::Object(map)))
}

/// A `datetime` as ISO 8601, read from its fields (Python's `isoformat()` formats through `printf`, which costs
/// more than the rest of an item's reading): as `isoformat()` writes it, or with `zulu` as Pydantic's JSON mode
/// writes it (`Z` for a zero offset).
fn datetime_text(object: &Bound<'_, PyAny>, zulu: bool) -> PyResult<String> {
    use std::fmt::Write;
    let py = object.py();
    let Some(([year, month, day, hour, minute, second, micro], tzinfo)) = datetime_fields(object)? else {
        // A subclass that pickles otherwise: Python's own text.
        let text: String = object.call_method0(intern!(py, "isoformat"))?.extract()?;
        return Ok(match text.strip_suffix("+00:00") {
            Some(utc) if zulu => format!("{utc}Z"),
            _ => text,
        });
    };
    let mut text = String::with_capacity(32);
    let _ = write!(text, "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if micro != 0 {
        let _ = write!(text, ".{micro:06}");
    }
    let Some(offset) = utc_offset_micros(object, &tzinfo)? else { return Ok(text) };
    if offset == 0 && zulu {
        text.push('Z');
        return Ok(text);
    }
    let (sign, offset) = if offset < 0 { ('-', -offset) } else { ('+', offset) };
    let (seconds, micros) = (offset / 1_000_000, offset % 1_000_000);
    let _ = write!(text, "{sign}{:02}:{:02}", seconds / 3600, seconds / 60 % 60);
    if seconds % 60 != 0 || micros != 0 {
        let _ = write!(text, ":{:02}", seconds % 60);
    }
    if micros != 0 {
        let _ = write!(text, ".{micros:06}");
    }
    Ok(text)
}

/// A `datetime`'s fields (year, month, day, hour, minute, second, microsecond) and its `tzinfo`, read from its
/// pickle state (`__reduce__`: ten bytes in a layout Python keeps stable for pickles), which one C call returns;
/// `None` when the object reduces otherwise.
#[allow(clippy::type_complexity)]
fn datetime_fields<'py>(object: &Bound<'py, PyAny>) -> PyResult<Option<([i64; 7], Bound<'py, PyAny>)>> {
    let py = object.py();
    let reduced = object.call_method0(intern!(py, "__reduce__"))?;
    let Ok((_, state)) = reduced.extract::<(Bound<'py, PyAny>, Bound<'py, PyTuple>)>() else { return Ok(None) };
    let Ok(bytes) = state.get_item(0).and_then(|bytes| bytes.cast_into::<PyBytes>().map_err(PyErr::from)) else {
        return Ok(None);
    };
    let &[y1, y2, month, day, hour, minute, second, m1, m2, m3] = bytes.as_bytes() else { return Ok(None) };
    let tzinfo = if state.len() > 1 { state.get_item(1)? } else { py.None().into_bound(py) };
    let byte = |value: u8| i64::from(value);
    let fields = [
        byte(y1) * 256 + byte(y2),
        // The high bit of the month is the `fold` flag.
        byte(month & 0x7f),
        byte(day),
        byte(hour),
        byte(minute),
        byte(second),
        (byte(m1) << 16) | (byte(m2) << 8) | byte(m3),
    ];
    Ok(Some((fields, tzinfo)))
}

/// A `datetime`'s UTC offset in microseconds (`None` for a naive one); UTC itself is known without a call.
fn utc_offset_micros(object: &Bound<'_, PyAny>, tzinfo: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let py = object.py();
    if tzinfo.is_none() {
        return Ok(None);
    }
    if tzinfo.is(helpers(py)?.utc.bind(py)) {
        return Ok(Some(0));
    }
    let offset = object.call_method0(intern!(py, "utcoffset"))?;
    if offset.is_none() {
        return Ok(None);
    }
    let part = |name: &Bound<'_, PyString>| -> PyResult<i64> { offset.getattr(name)?.extract() };
    let (days, seconds, micros) =
        (part(intern!(py, "days"))?, part(intern!(py, "seconds"))?, part(intern!(py, "microseconds"))?);
    Ok(Some((days * 86_400 + seconds) * 1_000_000 + micros))
}

/// Whether `event` is a tool result event, asked of Python once per type.
fn is_tool_result(event: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = event.py();
    let cls = event.get_type();
    let key = cls.as_ptr() as usize;
    let known = types(py).lock().ok().and_then(|types| types.tool_results.get(&key).map(|(_, is)| *is));
    if let Some(is) = known {
        return Ok(is);
    }
    let is: bool = helpers(py)?.is_tool_result.bind(py).call1((&cls,))?.extract()?;
    if let Ok(mut types) = types(py).lock() {
        types.tool_results.insert(key, (cls.unbind(), is));
    }
    Ok(is)
}

/// Whether a tool result's returned value holds anything but plain JSON values (bytes, a record, native content),
/// which the reference presents otherwise than their dump: plain JSON, the common result, is checked here, without
/// a call into Python for each of its values.
fn returns_more_than_json(event: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = event.py();
    let Ok(part) = event.getattr(intern!(py, "part")) else { return Ok(false) };
    let Ok(content) = part.getattr(intern!(py, "content")) else { return Ok(false) };
    more_than_json(&content, 0)
}

fn more_than_json(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if value.is_none()
        || value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyBool>()
        || value.is_instance_of::<PyInt>()
    {
        return Ok(false);
    }
    // NaN and the infinities have no JSON form: the Python pass raises for them where the reference does.
    if let Ok(number) = value.cast::<PyFloat>() {
        return Ok(!number.value().is_finite());
    }
    if depth > MAX_DEPTH {
        return Ok(true);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        for (_, item) in dict.iter() {
            if more_than_json(&item, depth + 1)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        for item in value.try_iter()? {
            if more_than_json(&item?, depth + 1)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    Ok(true)
}

/// The journal wire form of a native event: walked in Rust, or Pydantic's dump where that alone is exact. A tool
/// result's returned value is described first as the reference presents it (bytes as their size, media-bearing
/// records omitted), so that binary bytes neither fail the dump nor reach the events as text.
fn event_value(event: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = event.py();
    let described;
    let event = if is_tool_result(event)? && returns_more_than_json(event)? {
        described = helpers(py)?.tool_result_event.bind(py).call1((event,))?;
        &described
    } else {
        event
    };
    if let Some(value) = walk(event, 0)? {
        return Ok(value);
    }
    from_python(&helpers(py)?.dump.bind(py).call1((event,))?, "event")
}

/// The source item the display fold reads for a native tool result its observer does not present (retried,
/// failed, a retry prompt), where it differs from the one the observer reads: the fold presents that value as the
/// failed call's text, as the reference's does from the native value (an `Enum`'s text with its quotes), while the
/// observation carries the value's dump. Raises `ValueError` as the reference's fold does for such a value holding
/// NaN or an infinity. (A presented result raises when it is read, as the reference's `observe` does.) `None`: the
/// fold reads the item as the observer does.
pub(crate) fn unpresented_source(source: &Bound<'_, PyAny>) -> PyResult<Option<SourceItem>> {
    if source_kind(source)? != 1 {
        return Ok(None);
    }
    let py = source.py();
    let event = source.getattr(intern!(py, "event"))?;
    // Plain JSON without NaN or an infinity, the common result, reads alike: no call into Python for it.
    if !is_tool_result(&event)? || !returns_more_than_json(&event)? {
        return Ok(None);
    }
    let for_fold = helpers(py)?.unpresented_for_fold.bind(py).call1((event,))?;
    if for_fold.is_none() {
        return Ok(None);
    }
    native_item_of(source, 1, Some(&for_fold)).map(Some)
}

/// The source item of a native `HarnessEvent` or `HarnessRunResultEvent`; `None` for any other object.
pub(crate) fn native_item(object: &Bound<'_, PyAny>) -> PyResult<Option<SourceItem>> {
    match source_kind(object)? {
        0 => Ok(None),
        kind => native_item_of(object, kind, None).map(Some),
    }
}

/// The source item of a native item of `kind` (1 `HarnessEvent`, 2 `HarnessRunResultEvent`), with `event` in
/// place of its own when given.
fn native_item_of(object: &Bound<'_, PyAny>, kind: u8, event: Option<&Bound<'_, PyAny>>) -> PyResult<SourceItem> {
    let py = object.py();
    let mut item = Map::with_capacity(5);
    let names = [intern!(py, "thread_id"), intern!(py, "run_id"), intern!(py, "sequence")];
    for (key, name) in ["thread_id", "run_id", "sequence"].into_iter().zip(names) {
        item.insert(key.to_owned(), from_python(&object.getattr(name)?, key)?);
    }
    let occurred_at = object.getattr(intern!(py, "occurred_at"))?;
    if !occurred_at.is_instance(helpers(py)?.datetime.bind(py))? {
        // The reference reads `occurred_at.timestamp()`: Python's own error for what has none.
        occurred_at.getattr(intern!(py, "timestamp"))?;
        let found = crate::convert::type_name(&occurred_at);
        return Err(PyTypeError::new_err(format!("occurred_at must be a datetime, not {found}")));
    }
    item.insert("occurred_at".to_owned(), Value::String(datetime_text(&occurred_at, false)?));
    if kind == 1 {
        let event = match event {
            Some(event) => event_value(event)?,
            None => event_value(&object.getattr(intern!(py, "event"))?)?,
        };
        item.insert("event".to_owned(), event);
    } else {
        let result = helpers(py)?.dump_result.bind(py).call1((object.getattr(intern!(py, "result"))?,))?;
        item.insert("result".to_owned(), from_python(&result, "result")?);
    }
    let mut item = SourceItem::from_value(Value::Object(item)).map_err(|error| core_input_error(py, &error))?;
    if item.occurred_at.is_naive() {
        item.occurred_at = item.occurred_at.naive_in_zone(local_offset_seconds(&occurred_at)?);
    }
    Ok(item)
}

/// The offset of the host's local zone at a naive `datetime`, as the reference's `occurred_at.timestamp()` reads a
/// naive time (its `fold`, and a time in a daylight-saving gap, as Python resolves them): the wall clock read as
/// UTC less the instant Python reads it as.
fn local_offset_seconds(naive: &Bound<'_, PyAny>) -> PyResult<i32> {
    let py = naive.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "tzinfo"), helpers(py)?.utc.bind(py))?;
    let as_utc: f64 =
        naive.call_method("replace", (), Some(&kwargs))?.call_method0(intern!(py, "timestamp"))?.extract()?;
    let local: f64 = naive.call_method0(intern!(py, "timestamp"))?.extract()?;
    Ok((as_utc - local).round() as i32)
}

/// A source item from what a host holds: a native item, or its journal line as `str`, `bytes` or `dict`.
pub(crate) fn source_item(object: &Bound<'_, PyAny>) -> PyResult<SourceItem> {
    let py = object.py();
    // The reference takes native items alone and raises `TypeError` for anything else: a line that is no source
    // item raises an error that is both that and this package's `InputError`.
    let line = if let Ok(text) = object.cast::<PyString>() {
        unicode_at(text, "").and_then(|text| SourceItem::from_json(&text).map_err(|error| core_input_error(py, &error)))
    } else if let Ok(bytes) = object.cast::<PyBytes>() {
        line_str(bytes.as_bytes()).and_then(|text| SourceItem::from_json(text).map_err(|e| core_input_error(py, &e)))
    } else if object.is_instance_of::<PyDict>() {
        from_python(object, "")
            .and_then(|value| SourceItem::from_value(value).map_err(|error| core_input_error(py, &error)))
    } else {
        return native_item(object)?.ok_or_else(|| not_a_source(object));
    };
    line.map_err(|error| crate::errors::as_source_line_error(py, error))
}

fn line_str(bytes: &[u8]) -> PyResult<&str> {
    std::str::from_utf8(bytes).map_err(|error| {
        crate::errors::input_error("", format!("the line is not UTF-8 (invalid after byte {})", error.valid_up_to()))
    })
}

/// One line of input as text: a `str` or `bytes` line as it is; a `dict` or a native item written as its line.
pub(crate) fn line_text<'a>(object: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, str>> {
    if let Ok(text) = object.cast::<PyString>() {
        return unicode_at(text, "");
    }
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return line_str(bytes.as_bytes()).map(|text| std::borrow::Cow::Owned(text.to_owned()));
    }
    if object.is_instance_of::<PyDict>() {
        return Ok(std::borrow::Cow::Owned(from_python(object, "")?.to_string()));
    }
    match native_item(object)? {
        Some(item) => Ok(std::borrow::Cow::Owned(item.to_line())),
        None => Err(not_a_source(object)),
    }
}

/// The `TypeError` for an object that is no source item.
pub(crate) fn not_a_source(object: &Bound<'_, PyAny>) -> PyErr {
    // The reference's message (a journal line, str, bytes or dict, is accepted too).
    let _ = object;
    PyTypeError::new_err("item must be a HarnessEvent or HarnessRunResultEvent")
}

/// The journal line of a source item (native or a line): `json.dumps(dump, ensure_ascii=False,
/// separators=(",", ":"))` of its wire form, the line `a13n-stream` and `serve` read.
#[pyfunction]
pub(crate) fn to_source_line(item: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(source_item(item)?.to_line())
}
