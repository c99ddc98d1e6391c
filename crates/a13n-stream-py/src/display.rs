//! `DisplayFold`: source items and AG-UI events folded into display items, with the reference's API (Pydantic
//! models in and out) beside the JSON fast paths (`fold_line`, `fold_lines`, `export_json`).

use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use a13n_stream_protocol::{recorded, ContentPolicy, DisplayFold, DisplayOptions, FoldError, SourceItem, UtcTime};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};
use serde_json::Value;

use crate::convert::{count_argument, from_python, json_text, python_repr, Truthy};
use crate::errors::{fold_error, input_error};
use crate::issued::{issue, Issued};
use crate::models::models;
use crate::native::{line_text, source_item, unpresented_source};
use crate::processor::{HostProcessor, Processing};
use crate::subclass;

/// Why a call finds the object busy: another thread is in a call, or the call comes from the object's own
/// processor while it works (the state is mid-change; the reference would hand it out half done).
const BUSY_FOLD: &str =
    "this DisplayFold is busy: another thread is calling it, or its own processor called back into it";

/// Folds Harness source items (or AG-UI events) into compact display items with stable ids and dense ordinals,
/// and exports checkpoints that are the reference's byte for byte.
#[pyclass(name = "DisplayFold", module = "a13n_stream_rs.display", subclass, dict, weakref)]
pub(crate) struct PyDisplayFold {
    fold: Mutex<DisplayFold>,
    processing: Processing,
    /// The source item `events` read last, kept so that `fold(events, source)` of the same object reads it once.
    last_source: Mutex<Option<(Py<PyAny>, SourceItem)>>,
    /// The event dicts `events` handed out last, so that `fold` of the same dicts, unchanged, reads none back.
    last_events: Mutex<Vec<Option<Issued>>>,
    /// False for a subclass's instance until its `__init__` made the fold.
    ready: bool,
    /// Items the host deleted (`del fold.items[id]`), retired together before the next call reads the fold, so
    /// that paging out many items costs one pass, not one a deletion.
    retiring: Mutex<std::collections::HashSet<String>>,
    /// How many times `changed` was assigned: a `changed` view follows the assignment it was taken under.
    changed_generation: std::sync::atomic::AtomicU64,
}

/// A subclass whose `__init__` did not make the fold.
const UNSET_FOLD: &str =
    "this DisplayFold was never made: a subclass's __init__ must call super().__init__(run_id, ...)";

/// The wall clock, for events without an integer `timestamp` (the reference reads `datetime.now(UTC)`).
fn wall_clock() -> Box<dyn Fn() -> UtcTime + Send> {
    Box::new(|| {
        let micros = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_micros() as i64);
        UtcTime::from_unix_micros(micros).unwrap_or(UtcTime::EPOCH)
    })
}

impl PyDisplayFold {
    fn wrap(fold: DisplayFold, processing: Processing) -> Self {
        PyDisplayFold {
            fold: Mutex::new(fold.with_clock(wall_clock())),
            processing,
            last_source: Mutex::new(None),
            last_events: Mutex::new(Vec::new()),
            ready: true,
            retiring: Mutex::new(std::collections::HashSet::new()),
            changed_generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A subclass's instance before its `__init__` made the fold.
    fn unset() -> Self {
        let mut unset = PyDisplayFold::wrap(DisplayFold::new(String::new()), Processing::new(None));
        unset.ready = false;
        unset
    }

    /// The fold, for one call. A second thread calling while a batch runs without the GIL is refused rather
    /// than left waiting for a lock the first needs the GIL to release.
    fn held(&self) -> PyResult<MutexGuard<'_, DisplayFold>> {
        let mut fold = self.locked()?;
        // Items the host deleted since the last call leave together: one pass over the display for all of them.
        if let Ok(mut retiring) = self.retiring.lock() {
            if !retiring.is_empty() {
                fold.retire_all(retiring.iter().map(String::as_str));
                retiring.clear();
            }
        }
        Ok(fold)
    }

    /// The fold as it is, items the host deleted still in it (see `held`).
    fn locked(&self) -> PyResult<MutexGuard<'_, DisplayFold>> {
        if !self.ready {
            return Err(PyRuntimeError::new_err(UNSET_FOLD));
        }
        self.fold.try_lock().map_err(|_| PyRuntimeError::new_err(BUSY_FOLD))
    }

    fn error(&self, py: Python<'_>, error: FoldError, native: Option<&Bound<'_, PyAny>>) -> PyErr {
        fold_error(py, error, self.processing.failure(), native)
    }

    /// Continue from checkpoint JSON with this host's policy.
    fn restored(py: Python<'_>, text: &str, retain_content: bool, host: Option<HostProcessor>) -> PyResult<Self> {
        let processing = Processing::new(host);
        let fold = DisplayFold::restore_json(text, retain_content, processing.core())
            .map_err(|error| fold_error(py, error, None, None))?;
        Ok(PyDisplayFold::wrap(fold, processing))
    }

    /// The source item of `source`, read again only when it is not the object `events` read last.
    fn source_of(&self, source: &Bound<'_, PyAny>) -> PyResult<SourceItem> {
        let cached = self.last_source.lock().ok().and_then(|mut last| last.take());
        match cached {
            Some((object, item)) if object.is(source) => Ok(item),
            _ => source_item(source),
        }
    }
}

/// The `{"observed":[...]}` line (or the error line) `a13n-stream fold --observed` writes for one source line.
fn fold_into(fold: &mut DisplayFold, line: &str, entries: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), FoldError> {
    entries.clear();
    fold.fold_line(line, entries)?;
    recorded::write_observed_line(entries, out);
    Ok(())
}

/// A checkpoint `{"items": [...], "continuation": ...}` made of a constructor's items and continuation.
fn checkpoint_of(items: &Bound<'_, PyAny>, continuation: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut text = String::from("{\"items\":[");
    for (index, item) in items.try_iter()?.enumerate() {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&json_text(&item?, "items")?);
    }
    text.push_str("],\"continuation\":");
    text.push_str(&json_text(continuation, "continuation")?);
    text.push('}');
    Ok(text)
}

#[pymethods]
impl PyDisplayFold {
    /// What the garbage collector sees this fold hold: its processor (and a source being observed), and the source
    /// `events` read last. A processor that refers back to the fold (a bound method of a host object holding it)
    /// is then freed with it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.processing.traverse(&visit)?;
        if let Ok(last) = self.last_source.try_lock() {
            visit.call(last.as_ref().map(|(source, _)| source))?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.processing.clear();
        if let Ok(mut last) = self.last_source.lock() {
            *last = None;
        }
    }

    /// A fold for run `run_id`, as the reference's constructor: `items` already committed (their ordinals
    /// continue from `first`), the delivery `attempt`, the content policy, a `processor(source, event)` of
    /// `ag_ui` models (or a `json_processor` of dicts), and optionally the `continuation` to resume from (it must
    /// be of this run, attempt and content policy).
    #[new]
    #[classmethod]
    #[pyo3(
        signature = (*args, **kwargs),
        text_signature = "(run_id, items=None, *, attempt=0, first=1, full_content=False, retain_content=False, \
                          processor=None, continuation=None, json_processor=None)"
    )]
    fn new(cls: &Bound<'_, PyType>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        subclass::new(cls, args, kwargs, PyDisplayFold::unset)
    }

    /// Make the fold of these constructor arguments. `__new__` does it for this class; for a subclass, whose
    /// constructor may take other arguments, `super().__init__(...)` does.
    #[pyo3(signature = (*args, **kwargs))]
    fn __init__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        subclass::init(slf, args, kwargs, PyDisplayFold::unset)
    }

    /// The constructor proper, with the reference's parameters (see `__new__`).
    #[staticmethod]
    #[pyo3(signature = (
        run_id, items=None, *, attempt=None, first=None, full_content=Truthy(false), retain_content=Truthy(false),
        processor=None, continuation=None, json_processor=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn _make(
        py: Python<'_>,
        run_id: &Bound<'_, PyAny>,
        items: Option<&Bound<'_, PyAny>>,
        attempt: Option<&Bound<'_, PyAny>>,
        first: Option<&Bound<'_, PyAny>>,
        full_content: Truthy,
        retain_content: Truthy,
        processor: Option<Py<PyAny>>,
        continuation: Option<&Bound<'_, PyAny>>,
        json_processor: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        // Arguments of the wrong type or range raise `ValueError` naming them (the reference's Pydantic models
        // refuse them with a `ValidationError`, a `ValueError`, when the fold is exported).
        let run_id = match run_id.cast::<PyString>() {
            Ok(run_id) => crate::convert::unicode_at(run_id, "run_id")?.into_owned(),
            Err(_) => return Err(PyValueError::new_err(format!("run_id must be a str, not {}", run_id.repr()?))),
        };
        let attempt = attempt.map_or(Ok(0), |attempt| count_argument(attempt, "attempt"))?;
        let first = first.map_or(Ok(1), |first| count_argument(first, "first"))?;
        let (full_content, retain_content) = (full_content.0, retain_content.0);
        let host = HostProcessor::chosen(processor, json_processor)?;
        let empty = PyList::empty(py);
        let items = items.unwrap_or(empty.as_any());
        if let Some(continuation) = continuation {
            let text = json_text(continuation, "continuation")?;
            let state: Value = serde_json::from_str(&text).map_err(|error| input_error("continuation", error))?;
            let matches = state["run_id"] == Value::String(run_id.clone())
                && state["position"]["attempt"] == attempt
                && state["full_content"] == Value::Bool(full_content);
            if !matches {
                return Err(PyValueError::new_err(
                    "Display continuation does not match the run, attempt or content policy",
                ));
            }
            return PyDisplayFold::restored(py, &checkpoint_of(items, continuation)?, retain_content, host);
        }
        let mut committed = Vec::new();
        for item in items.try_iter()? {
            let text = json_text(&item?, "items")?;
            committed.push(serde_json::from_str(&text).map_err(|error| input_error("items", error))?);
        }
        let processing = Processing::new(host);
        let options = DisplayOptions {
            attempt,
            first,
            items: committed,
            content: ContentPolicy::new(full_content, retain_content),
            processor: processing.core(),
            ..Default::default()
        };
        Ok(PyDisplayFold::wrap(DisplayFold::with_options(run_id, options), processing))
    }

    /// Continue from a checkpoint (a `DisplaySnapshot` of this package or the reference, or its JSON text).
    /// `retain_content` and the processor are host policy, not checkpoint state: pass the ones the exporting fold
    /// had.
    #[staticmethod]
    #[pyo3(
        signature = (snapshot, *, processor=None, retain_content=Truthy(false), json_processor=None),
        text_signature = "(snapshot, *, processor=None, retain_content=False, json_processor=None)"
    )]
    fn restore(
        py: Python<'_>,
        snapshot: &Bound<'_, PyAny>,
        processor: Option<Py<PyAny>>,
        retain_content: Truthy,
        json_processor: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let text = json_text(snapshot, "snapshot")?;
        PyDisplayFold::restored(py, &text, retain_content.0, HostProcessor::chosen(processor, json_processor)?)
    }

    /// The AG-UI events of one source item (a native item, or its journal line), as the JSON dicts the stream
    /// carries; then give them to `fold`. Atomic: a rejected item leaves the fold unchanged.
    fn events<'py>(&self, py: Python<'py>, source: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let item = source_item(source)?;
        let mut fold = self.held()?;
        let events = self
            .processing
            .with_source(source, || fold.events(&item))
            .map_err(|error| self.error(py, error, Some(source)))?;
        drop(fold);
        let list = PyList::empty(py);
        let mut issued = Vec::with_capacity(events.len());
        for event in events {
            let (dict, record) = issue(py, event)?;
            list.append(dict)?;
            issued.push(record);
        }
        if let Ok(mut last) = self.last_events.lock() {
            *last = issued;
        }
        if let Ok(mut last) = self.last_source.lock() {
            *last = Some((source.clone().unbind(), item));
        }
        Ok(list)
    }

    /// Give each event (a dict) the next sequence and fold it: the `Observed` entries. With `source`, a tool
    /// result the observer does not present fails its call's item, reported by the last entry.
    #[pyo3(signature = (events, source=None))]
    fn fold<'py>(
        &self,
        py: Python<'py>,
        events: &Bound<'py, PyAny>,
        source: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut dicts = Vec::new();
        let mut objects = Vec::new();
        // What `events` handed out, each dict taken at most once (by this call, whatever it ends in).
        let mut issued = self.last_events.lock().map(|mut last| std::mem::take(&mut *last)).unwrap_or_default();
        for (index, event) in events.try_iter()?.enumerate() {
            let event = event?;
            let Ok(dict) = event.cast::<PyDict>() else {
                let found = event.get_type().name().map_or_else(|_| "?".to_owned(), |name| name.to_string());
                return Err(PyTypeError::new_err(format!("events[{index}] must be an AG-UI event dict, not {found}")));
            };
            let unchanged = issued.get_mut(index).and_then(Option::as_mut).and_then(|i| i.take_if_unchanged(dict));
            match unchanged {
                Some(object) => objects.push(object),
                None => match from_python(&event, &format!("events.{index}"))? {
                    Value::Object(object) => objects.push(object),
                    _ => unreachable!("a dict converts to an object"),
                },
            }
            // Validation of the reference's `Observed` copies the dict (not its values): the host's later edits to
            // the dict it passed do not reach the entry.
            dicts.push(dict.copy()?);
        }
        let for_fold = source.map(unpresented_source).transpose()?.flatten();
        let source = source.map(|source| self.source_of(source)).transpose()?;
        let source = for_fold.or(source);
        let observed = self.held()?.fold(objects, source.as_ref()).map_err(|error| self.error(py, error, None))?;
        let models = models(py)?;
        let list = PyList::empty(py);
        for (entry, dict) in observed.iter().zip(dicts) {
            list.append(models.observed(py, entry, dict.into_any())?)?;
        }
        Ok(list)
    }

    /// Fold one source line (`str`, `bytes`, `dict` or a native item): the `{"observed":[...]}` text
    /// `a13n-stream fold --observed` writes for it. A rejected line raises and changes nothing.
    fn fold_line(&self, py: Python<'_>, line: &Bound<'_, PyAny>) -> PyResult<String> {
        // A journal line is folded as written; a native item as its line, checked as `fold` checks it.
        unpresented_source(line)?;
        let text = line_text(line)?;
        let mut fold = self.held()?;
        let (mut entries, mut out) = (Vec::with_capacity(1024), Vec::with_capacity(1024));
        self.processing
            .with_source(line, || fold_into(&mut fold, &text, &mut entries, &mut out))
            .map_err(|error| self.error(py, error, Some(line)))?;
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    /// Fold many source lines in one call (the GIL is released while Rust works, unless a processor must be
    /// called): for each line its `{"observed":[...]}` text, or for a rejected line the error line the CLI
    /// writes (`{"error":{"type":...,"message":...}}`), which changes nothing. A processor's exception stops
    /// the batch and is raised.
    fn fold_lines(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        if lines.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("lines is an iterable of lines, not one str"));
        }
        let mut texts = Vec::with_capacity(lines.len().unwrap_or(0));
        for line in lines.try_iter()? {
            let line = line?;
            unpresented_source(&line)?;
            texts.push(line_text(&line)?.into_owned());
        }
        let run = |fold: &mut DisplayFold| -> Result<Vec<String>, FoldError> {
            let mut entries = Vec::with_capacity(4096);
            let mut results = Vec::with_capacity(texts.len());
            for text in &texts {
                let mut out = Vec::with_capacity(512);
                match fold_into(fold, text, &mut entries, &mut out) {
                    Err(FoldError::Processor) => return Err(FoldError::Processor),
                    Err(error) => {
                        let (kind, message) = recorded::fold_error_parts(&error);
                        recorded::write_error_line(kind, &message, &mut out);
                    }
                    Ok(()) => {}
                }
                results.push(String::from_utf8(out).unwrap_or_default());
            }
            Ok(results)
        };
        let result = if self.processing.given {
            run(&mut *self.held()?)
        } else {
            py.detach(|| self.held().map(|mut fold| run(&mut fold)))?
        };
        result.map_err(|error| self.error(py, error, None))
    }

    /// A detached checkpoint, as a `DisplaySnapshot` model. Export never ends, interrupts or pages active content.
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.held()?.export_json();
        let models = models(py)?;
        models.validated_json(py, &models.snapshot, &text)
    }

    /// The checkpoint JSON: the reference's `export().model_dump_json()`, byte for byte.
    fn export_json(&self) -> PyResult<String> {
        Ok(self.held()?.export_json())
    }

    /// The items changed since the last capture (by ordinal) and the parser state, as a `DisplaySnapshot`.
    fn capture_delta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.held()?.capture_delta().to_json();
        let models = models(py)?;
        models.validated_json(py, &models.snapshot, &text)
    }

    /// `capture_delta` as checkpoint JSON.
    fn capture_delta_json(&self) -> PyResult<String> {
        Ok(self.held()?.capture_delta().to_json())
    }

    /// The parser state alone, as a `DisplayContinuation` model.
    fn export_continuation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.held()?.export_continuation().to_json();
        let models = models(py)?;
        models.validated_json(py, &models.continuation, &text)
    }

    /// `export_continuation` as JSON text.
    fn export_continuation_json(&self) -> PyResult<String> {
        Ok(self.held()?.export_continuation().to_json())
    }

    /// The last folded position, as a `StreamPosition` (`str()` is `attempt-sequence`).
    #[getter]
    fn position<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let position = self.held()?.position();
        models(py)?.position(py, position)
    }

    /// The items by id, in order of creation: a mapping of `Item` models from which the host may delete (retire)
    /// items, as it deletes from the reference's dict when paging.
    #[getter]
    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("a13n_stream_rs._views")?.getattr("Items")?.call1((slf,))
    }

    /// The ids of the items changed since the host last cleared it (live publication): a set the host may
    /// `clear()`, `discard` from or `add` to; checkpoint deltas are unaffected.
    #[getter]
    fn changed<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("a13n_stream_rs._views")?.getattr("Changed")?.call1((slf,))
    }

    /// Replace the changed ids, as a host does with the reference's set: `fold.changed -= published` (which
    /// assigns the view back after editing it) or `fold.changed = set()`. An id the fold does not hold raises
    /// `KeyError` and changes nothing.
    #[setter]
    fn set_changed(slf: &Bound<'_, Self>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let view = slf.py().import("a13n_stream_rs._views")?.getattr("Changed")?;
        if ids.is_instance(&view)? && ids.getattr("_fold")?.is(slf) {
            return Ok(());
        }
        if ids.is_instance_of::<pyo3::types::PyString>() {
            return Err(pyo3::exceptions::PyTypeError::new_err("changed takes a set of item ids, not a str"));
        }
        let assigned = ids;
        let ids: Vec<String> = ids.try_iter()?.map(|id| id?.extract()).collect::<PyResult<_>>()?;
        let this = slf.borrow();
        // Checked, read and replaced under one lock: a fold on another thread meanwhile adds its ids to one set
        // or the other, never to neither.
        let (replaced, generation) = {
            let mut held = this.held()?;
            if let Some(unknown) = ids.iter().find(|id| held.item(id).is_none()) {
                return Err(pyo3::exceptions::PyKeyError::new_err(unknown.clone()));
            }
            let replaced = held.changed();
            let generation = this.changed_generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.clear_changed();
            for id in &ids {
                held.set_changed(id, true);
            }
            (replaced, generation)
        };
        // Views taken before keep what they held, as the reference's replaced set does.
        let detach = slf.py().import("a13n_stream_rs._views")?.getattr("detach_changed")?;
        detach.call1((slf, replaced, generation, assigned))?;
        Ok(())
    }

    /// How many times `changed` was assigned (see `_views.py`).
    #[getter]
    fn _changed_generation(&self) -> u64 {
        self.changed_generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The run this display belongs to.
    #[getter]
    fn run_id(&self) -> PyResult<String> {
        Ok(self.held()?.run_id().to_owned())
    }

    /// The delivery attempt.
    #[getter]
    fn attempt(&self) -> PyResult<u64> {
        Ok(self.held()?.position().attempt)
    }

    /// The last folded event's sequence.
    #[getter]
    fn sequence(&self) -> PyResult<u64> {
        Ok(self.held()?.position().sequence)
    }

    /// Whether whole values are kept and native part observations skipped.
    #[getter]
    fn full_content(&self) -> PyResult<bool> {
        Ok(self.held()?.full_content())
    }

    /// Assigned, as the reference's attribute is: the fold keeps content by the new policy from the next event
    /// on, and a checkpoint records it; the events its observer hands on stay as they were made.
    #[setter]
    fn set_full_content(&self, full_content: Truthy) -> PyResult<()> {
        let mut fold = self.held()?;
        let retain_content = fold.content_policy().retain_content();
        fold.set_content_policy(ContentPolicy::new(full_content.0, retain_content));
        Ok(())
    }

    /// Whether whole values are kept with the bounded fold's items.
    #[getter]
    fn retain_content(&self) -> PyResult<bool> {
        Ok(self.held()?.content_policy().retain_content())
    }

    /// Assigned, as the reference's attribute is (its `restore` takes no `retain_content`, so a host restores and
    /// then sets it): the fold's items keep whole values from the next event on; the events its observer hands on
    /// stay as they were made.
    #[setter]
    fn set_retain_content(&self, retain_content: Truthy) -> PyResult<()> {
        let mut fold = self.held()?;
        let full_content = fold.full_content();
        fold.set_content_policy(ContentPolicy::new(full_content, retain_content.0));
        Ok(())
    }

    /// The ordinal the next new item takes (the reference's `next`): what paging preserves when it retires items.
    #[getter]
    fn next(&self) -> PyResult<u64> {
        Ok(self.held()?.next_ordinal())
    }

    /// The current response group of each scope (`root` or a subagent run), as the reference's `response_groups`.
    #[getter]
    fn response_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let groups = pyo3::types::PyDict::new(py);
        for (scope, group) in self.held()?.response_groups() {
            groups.set_item(scope, group)?;
        }
        Ok(groups)
    }

    /// How many items the display holds.
    #[getter]
    fn item_count(&self) -> PyResult<usize> {
        Ok(self.held()?.item_count())
    }

    fn _item_ids(&self) -> PyResult<Vec<String>> {
        Ok(self.held()?.items().map(|item| item.id).collect())
    }

    /// Retire an item (see `DisplayFold::retire`): whether there was one.
    fn _retire(&self, id: &str) -> PyResult<bool> {
        let fold = self.locked()?;
        let mut retiring = self.retiring.lock().map_err(|_| PyRuntimeError::new_err(BUSY_FOLD))?;
        Ok(fold.contains(id) && retiring.insert(id.to_owned()))
    }

    fn _item<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(item) = self.held()?.item(id) else { return Ok(None) };
        let text = serde_json::to_string(&item).map_err(|error| PyRuntimeError::new_err(error.to_string()))?;
        let models = models(py)?;
        models.validated_json(py, &models.item, &text).map(Some)
    }

    fn _changed_ids(&self) -> PyResult<Vec<String>> {
        Ok(self.held()?.changed())
    }

    fn _set_changed(&self, id: &str, changed: bool) -> PyResult<bool> {
        Ok(self.held()?.set_changed(id, changed))
    }

    fn _clear_changed(&self) -> PyResult<()> {
        self.held()?.clear_changed();
        Ok(())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let fold = self.held()?;
        Ok(format!(
            "DisplayFold(run_id={}, position={}, items={})",
            python_repr(py, Some(fold.run_id()))?,
            fold.position(),
            fold.item_count()
        ))
    }
}
