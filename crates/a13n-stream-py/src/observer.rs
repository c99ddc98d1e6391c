//! `HarnessAguiStreamObserver` and `HarnessAguiObserver`: source items in, `ag_ui` event models out, with atomic
//! resumption from history (awaitable, one item at a time) and continuation from exported state.
//!
//! Call order, as the reference's: create (or `restore`), then either `await resume(history)` once on the fresh
//! observer or nothing, then `observe` each live item; `export` between items. While a resumption runs,
//! `observe`, `export` and a second `resume` are refused; a resumption that fails or is cancelled leaves the
//! observer fresh.

use std::sync::{Mutex, MutexGuard};

use a13n_stream_protocol::observer::{Mode, Resumption, RootStream, SingleRun};
use a13n_stream_protocol::{Event, ObserveError, Observer, ObserverContinuation, SourceItem};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};

use crate::convert::{index_argument, json_text, python_repr, Truthy};
use crate::errors::{at_line, core_input_error, observation_error, observe_error};
use crate::models::models;
use crate::native::{line_text, source_item};
use crate::processor::{HostProcessor, Processing};
use crate::subclass;

/// Why a call finds the object busy: another thread is in a call, or the call comes from the object's own
/// processor while it works (the state is mid-change; the reference would hand it out half done).
const BUSY_OBSERVER: &str =
    "this observer is busy: another thread is calling it, or its own processor called back into it";

const RESUMING: &str = "resuming";

/// Writing the AG-UI events of one source line, one JSON text a line.
pub(crate) trait ObserveLine {
    fn observe_line_into(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, ObserveError>;
}

impl ObserveLine for Observer<RootStream> {
    fn observe_line_into(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, ObserveError> {
        // The stream observer's lanes write the frequent lines straight from the scanned text.
        self.observe_line(line, out)
    }
}

impl ObserveLine for Observer<SingleRun> {
    fn observe_line_into(&mut self, line: &str, out: &mut Vec<u8>) -> Result<usize, ObserveError> {
        let events = self.observe(&SourceItem::from_json(line)?)?;
        for event in &events {
            event.write_json(out);
            out.push(b'\n');
        }
        Ok(events.len())
    }
}

/// An observer of either mode, its processor, and the resumption in progress.
pub(crate) struct Held<M: Mode> {
    observer: Mutex<Observer<M>>,
    processing: Processing,
    resuming: Mutex<Option<Resumption>>,
}

impl<M: Mode> Held<M>
where
    Observer<M>: ObserveLine,
{
    fn new(processor: Option<HostProcessor>, retain_events: bool) -> Self {
        let processing = Processing::new(processor);
        let mut observer = Observer::<M>::new().retain_events(retain_events);
        if let Some(processor) = processing.core() {
            observer = observer.with_processor(processor);
        }
        Held { observer: Mutex::new(observer), processing, resuming: Mutex::new(None) }
    }

    fn restore(continuation: &Bound<'_, PyAny>, processor: Option<HostProcessor>) -> PyResult<Self> {
        let py = continuation.py();
        let text = json_text(continuation, "continuation")?;
        let continuation = ObserverContinuation::from_json(&text).map_err(|error| core_input_error(py, &error))?;
        let processing = Processing::new(processor);
        let observer = Observer::<M>::restore(continuation, processing.core());
        Ok(Held { observer: Mutex::new(observer), processing, resuming: Mutex::new(None) })
    }

    fn lock(&self) -> PyResult<MutexGuard<'_, Observer<M>>> {
        self.observer.try_lock().map_err(|_| PyRuntimeError::new_err(BUSY_OBSERVER))
    }

    /// The observer for a call that must not run while a resumption does.
    fn idle(&self, py: Python<'_>, refusal: &str) -> PyResult<MutexGuard<'_, Observer<M>>> {
        if self.resuming.lock().map(|staged| staged.is_some()).unwrap_or(false) {
            return Err(observation_error(py, RESUMING, refusal));
        }
        self.lock()
    }

    fn error(&self, py: Python<'_>, error: ObserveError, native: Option<&Bound<'_, PyAny>>) -> PyErr {
        observe_error(py, error, self.processing.failure(), native)
    }

    fn observe<'py>(&self, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
        let py = item.py();
        let mut observer = self.idle(py, "Cannot observe while observer resumption is in progress")?;
        let source = source_item(item)?;
        let events = self
            .processing
            .with_source(item, || observer.observe(&source))
            .map_err(|error| self.error(py, error, Some(item)))?;
        drop(observer);
        events_tuple(py, &events)
    }

    fn observe_json(&self, item: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let py = item.py();
        let mut observer = self.idle(py, "Cannot observe while observer resumption is in progress")?;
        let text = line_text(item)?;
        let mut out = Vec::with_capacity(1024);
        self.processing
            .with_source(item, || observer.observe_line_into(&text, &mut out))
            .map_err(|error| self.error(py, error, Some(item)))?;
        Ok(out.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()).map(lossless).collect())
    }

    fn resume_begin(&self, py: Python<'_>) -> PyResult<()> {
        let mut staged = self.resuming.lock().map_err(|_| PyRuntimeError::new_err("resumption state poisoned"))?;
        if staged.is_some() {
            return Err(observation_error(py, RESUMING, "Observer resumption is already in progress"));
        }
        *staged = Some(self.lock()?.begin_resume().map_err(|error| self.error(py, error, None))?);
        Ok(())
    }

    fn resume_item(&self, item: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = item.py();
        let mut staged = self.resuming.lock().map_err(|_| PyRuntimeError::new_err("resumption state poisoned"))?;
        let Some(resumption) = staged.as_mut() else {
            return Err(PyRuntimeError::new_err("no resumption is in progress"));
        };
        let source = source_item(item)?;
        let mut observer = self.lock()?;
        self.processing
            .with_source(item, || observer.resume_item(resumption, &source))
            .map_err(|error| self.error(py, error, Some(item)))
    }

    fn resume_end(&self, py: Python<'_>, commit: bool) -> PyResult<()> {
        let mut staged = self.resuming.lock().map_err(|_| PyRuntimeError::new_err("resumption state poisoned"))?;
        let Some(resumption) = staged.take() else { return Ok(()) };
        if commit {
            self.lock()?.finish_resume(resumption).map_err(|error| self.error(py, error, None))?;
        }
        Ok(())
    }

    /// The constructor arguments another observer like this one is made with (`processor` or `json_processor`,
    /// `retain_events`).
    fn construction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let arguments = PyDict::new(py);
        match &self.processing.host(py) {
            Some(HostProcessor::Models(processor)) => arguments.set_item("processor", processor)?,
            Some(HostProcessor::Json(processor)) => arguments.set_item("json_processor", processor)?,
            None => {}
        }
        arguments.set_item("retain_events", self.lock()?.retains_events())?;
        Ok(arguments)
    }

    /// Take what `staged` observed (a fresh observer's history, observed through a subclass's own `observe`) as
    /// this fresh observer's state.
    fn adopt(&self, py: Python<'_>, staged: &Held<M>) -> PyResult<()> {
        if std::ptr::eq(self, staged) {
            return Err(PyRuntimeError::new_err("an observer cannot take its own state"));
        }
        let resumption = staged.lock()?.take_resumption();
        self.lock()?.finish_resume(resumption).map_err(|error| self.error(py, error, None))
    }

    fn resume_lines(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut items = Vec::new();
        for (index, line) in lines.try_iter()?.enumerate() {
            items.push(source_item(&line?).map_err(|error| at_line(py, error, index + 1))?);
        }
        drop(self.idle(py, "Observer resumption is already in progress")?);
        // The history item that failed, by its 1-based position (0: the observer was not fresh).
        let staged = |observer: &mut Observer<M>| -> Result<(), (usize, ObserveError)> {
            let mut staged = observer.begin_resume().map_err(|error| (0, error))?;
            for (index, item) in items.iter().enumerate() {
                observer.resume_item(&mut staged, item).map_err(|error| (index + 1, error))?;
            }
            observer.finish_resume(staged).map_err(|error| (0, error))
        };
        let result = if self.processing.given {
            staged(&mut *self.lock()?)
        } else {
            // The lock is taken and released on the worker side of `detach`.
            py.detach(|| self.lock().map(|mut observer| staged(&mut observer)))?
        };
        result.map_err(|(line, error)| match line {
            0 => self.error(py, error, None),
            line => at_line(py, self.error(py, error, None), line),
        })
    }

    fn export(&self, py: Python<'_>) -> PyResult<ObserverContinuation> {
        Ok(self.idle(py, "Cannot export while observer resumption is in progress")?.export())
    }

    fn snapshot<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        // The reference's steps: retention checked, the bounds compared (Python's comparison, whatever their
        // type: a float out of range is a range error), then the events sliced (an `int` or `__index__` only).
        let count = {
            let observer = self.lock()?;
            observer.snapshot(0, Some(0)).map_err(|error| self.error(py, error, None))?;
            observer.event_count()
        };
        let zero = 0i64.into_pyobject(py)?.into_any();
        let start = start.cloned().unwrap_or_else(|| zero.clone());
        let end = match stop {
            Some(stop) => stop.clone(),
            None => count.into_pyobject(py)?.into_any(),
        };
        if start.lt(&zero)? || end.lt(&start)? || end.gt(count)? {
            return Err(PyValueError::new_err(OUTSIDE));
        }
        let (start, end) = (index_argument(&start, "start")?, index_argument(&end, "stop")?);
        // An `__index__` that disagrees with its object's comparisons.
        if start < 0 || end < start || end > count as i128 {
            return Err(PyValueError::new_err(OUTSIDE));
        }
        let observer = self.lock()?;
        let events =
            observer.snapshot(start as usize, Some(end as usize)).map_err(|error| self.error(py, error, None))?;
        drop(observer);
        events_tuple(py, &events)
    }
}

/// The reference's message for a snapshot range it refuses.
const OUTSIDE: &str = "snapshot range is outside the accumulated events";

fn lossless(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

/// Events as a tuple of `ag_ui` models.
fn events_tuple<'py>(py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyTuple>> {
    let values: Vec<_> = events.iter().map(Event::to_value).collect();
    models(py)?.events(py, &values)
}

/// The awaitable `resume`: `a13n_stream_rs._aio.resume` drives the staged steps.
fn resume<'py>(observer: &Bound<'py, PyAny>, history: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let helper = observer.py().import("a13n_stream_rs._aio")?.getattr("resume")?;
    helper.call1((observer, history))
}

/// An observer of either mode: a `HarnessAguiObserver` converts one run, a `HarnessAguiStreamObserver` (its
/// subclass, as in the reference) a host's root stream with its inline child runs.
enum Observing {
    Single(Held<SingleRun>),
    Stream(Held<RootStream>),
}

/// `$body` with `$held` bound to the observer's `Held`, whichever its mode.
macro_rules! with_held {
    ($observing:expr, $held:ident => $body:expr) => {
        match $observing {
            Observing::Single($held) => $body,
            Observing::Stream($held) => $body,
        }
    };
}

impl Observing {
    /// A fresh observer of this mode without a processor: a subclass's instance before its `__init__` made it.
    fn placeholder(stream: bool) -> Self {
        Observing::made(stream, None, true)
    }

    fn made(stream: bool, processor: Option<HostProcessor>, retain_events: bool) -> Self {
        match stream {
            true => Observing::Stream(Held::new(processor, retain_events)),
            false => Observing::Single(Held::new(processor, retain_events)),
        }
    }

    fn restored(stream: bool, continuation: &Bound<'_, PyAny>, processor: Option<HostProcessor>) -> PyResult<Self> {
        Ok(match stream {
            true => Observing::Stream(Held::restore(continuation, processor)?),
            false => Observing::Single(Held::restore(continuation, processor)?),
        })
    }

    /// The package class of this mode, as `repr` names it.
    fn class_name(&self) -> &'static str {
        match self {
            Observing::Single(_) => "HarnessAguiObserver",
            Observing::Stream(_) => "HarnessAguiStreamObserver",
        }
    }

    fn processing(&self) -> &Processing {
        with_held!(self, held => &held.processing)
    }

    fn processing_mut(&mut self) -> &mut Processing {
        with_held!(self, held => &mut held.processing)
    }
}

/// Whether `cls` is the stream observer or a subclass of it: which mode its instances observe in.
fn streams(cls: &Bound<'_, PyType>) -> PyResult<bool> {
    cls.is_subclass_of::<PyStreamObserver>()
}

/// The package's class of `cls`'s mode: the one whose `_make` takes the reference's constructor arguments.
fn own_class<'py>(cls: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyType>> {
    let py = cls.py();
    Ok(if streams(cls)? { py.get_type::<PyStreamObserver>() } else { py.get_type::<PyObserver>() })
}

/// Converts and accumulates one public Harness run as AG-UI events.
#[pyclass(name = "HarnessAguiObserver", module = "a13n_stream_rs", subclass, dict, weakref)]
pub(crate) struct PyObserver(Observing);

#[pymethods]
impl PyObserver {
    /// What the garbage collector sees this observer hold: its processor (and a source being observed). A
    /// processor that refers back to the observer is then freed with it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.0.processing().traverse(&visit)
    }

    fn __clear__(&mut self) {
        self.0.processing_mut().clear();
    }

    /// A fresh observer. `processor(source, event)` sees every converted event as an `ag_ui` model with the
    /// source item as given, and returns it, a replacement or `None`; `json_processor` is the same with JSON
    /// dicts. `retain_events` keeps every event for `snapshot`.
    #[new]
    #[classmethod]
    #[pyo3(
        signature = (*args, **kwargs),
        text_signature = "(*, processor=None, retain_events=True, json_processor=None)"
    )]
    fn new(cls: &Bound<'_, PyType>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let stream = streams(cls)?;
        subclass::new_of(&own_class(cls)?, cls, args, kwargs, || PyObserver(Observing::placeholder(stream)))
    }

    /// Make the observer of these constructor arguments. `__new__` does it for the package's classes; for a
    /// subclass, whose constructor may take other arguments, `super().__init__(...)` does.
    #[pyo3(signature = (*args, **kwargs))]
    fn __init__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let class = slf.get_type();
        let stream = streams(&class)?;
        subclass::init_of(&own_class(&class)?, slf, args, kwargs, || PyObserver(Observing::placeholder(stream)))
    }

    /// The constructor proper, with the reference's parameters (see `__new__`).
    #[staticmethod]
    #[pyo3(signature = (*, processor=None, retain_events=Truthy(true), json_processor=None))]
    fn _make(processor: Option<Py<PyAny>>, retain_events: Truthy, json_processor: Option<Py<PyAny>>) -> PyResult<Self> {
        let processor = HostProcessor::chosen(processor, json_processor)?;
        Ok(PyObserver(Observing::made(false, processor, retain_events.0)))
    }

    /// Continue from an exported continuation (an `ObserverContinuation` of this package or the reference, or its
    /// JSON text), without the old event journal. Supply the processor again. On a subclass, an instance of it,
    /// made as the reference makes it (`cls(processor=..., retain_events=False)`), then given the restored state.
    #[classmethod]
    #[pyo3(signature = (continuation, *, processor=None, json_processor=None))]
    fn restore(
        cls: &Bound<'_, PyType>,
        continuation: &Bound<'_, PyAny>,
        processor: Option<Py<PyAny>>,
        json_processor: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = cls.py();
        let kwargs = subclass::restore_kwargs(py, &processor, &json_processor)?;
        let stream = streams(cls)?;
        let observer =
            PyObserver(Observing::restored(stream, continuation, HostProcessor::chosen(processor, json_processor)?)?);
        let own = own_class(cls)?;
        subclass::restored(cls, &own, kwargs, observer, |observer| match stream {
            true => Ok(Bound::new(py, PyClassInitializer::from(observer).add_subclass(PyStreamObserver))?.into_any()),
            false => Ok(Bound::new(py, observer)?.into_any()),
        })
    }

    /// Convert one source item (native, or its journal line) and commit it atomically: its AG-UI events as a
    /// tuple of `ag_ui` models.
    fn observe<'py>(&self, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
        with_held!(&self.0, held => held.observe(item))
    }

    /// Like `observe`, each event as the JSON text `a13n-stream observe` prints.
    fn observe_json(&self, item: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        with_held!(&self.0, held => held.observe_json(item))
    }

    /// Rebuild this fresh observer atomically from the exact, ordered history of its stream (an async or a sync
    /// iterable of source items): an awaitable returning `None`. On failure or cancellation the observer stays
    /// fresh.
    fn resume<'py>(slf: &Bound<'py, Self>, history: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        resume(slf.as_any(), history)
    }

    /// `resume` for a history at hand, synchronously (the work runs without the GIL when there is no processor).
    /// A failing item raises with its 1-based `line`.
    fn resume_lines(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<()> {
        with_held!(&self.0, held => held.resume_lines(py, lines))
    }

    fn _resume_begin(&self, py: Python<'_>) -> PyResult<()> {
        with_held!(&self.0, held => held.resume_begin(py))
    }

    fn _resume_item(&self, item: &Bound<'_, PyAny>) -> PyResult<()> {
        with_held!(&self.0, held => held.resume_item(item))
    }

    fn _resume_end(&self, py: Python<'_>, commit: bool) -> PyResult<()> {
        with_held!(&self.0, held => held.resume_end(py, commit))
    }

    fn _construction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        with_held!(&self.0, held => held.construction(py))
    }

    fn _adopt(&self, py: Python<'_>, staged: PyRef<'_, Self>) -> PyResult<()> {
        match (&self.0, &staged.0) {
            (Observing::Single(held), Observing::Single(staged)) => held.adopt(py, staged),
            (Observing::Stream(held), Observing::Stream(staged)) => held.adopt(py, staged),
            _ => Err(PyRuntimeError::new_err("an observer cannot take the state of another mode's observer")),
        }
    }

    /// The conversion state (events excluded), as an `ObserverContinuation` model.
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = with_held!(&self.0, held => held.export(py))?.to_json();
        let models = models(py)?;
        models.validated_json(py, &models.observer_continuation, &text)
    }

    /// `export` as the continuation's JSON text.
    fn export_json(&self, py: Python<'_>) -> PyResult<String> {
        Ok(with_held!(&self.0, held => held.export(py))?.to_json())
    }

    /// Retained events in `start..stop` (all by default), as `ag_ui` models. Requires `retain_events`.
    #[pyo3(signature = (*, start=None, stop=None), text_signature = "(self, *, start=0, stop=None)")]
    fn snapshot<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        with_held!(&self.0, held => held.snapshot(py, start, stop))
    }

    /// How many events are retained: a stable boundary for `snapshot`.
    #[getter]
    fn event_count(&self) -> PyResult<usize> {
        with_held!(&self.0, held => Ok(held.lock()?.event_count()))
    }

    /// The bound Harness thread, once observation has begun.
    #[getter]
    fn thread_id(&self) -> PyResult<Option<String>> {
        with_held!(&self.0, held => Ok(held.lock()?.thread_id().map(str::to_owned)))
    }

    /// The bound (root) Harness run, once observation has begun.
    #[getter]
    fn run_id(&self) -> PyResult<Option<String>> {
        with_held!(&self.0, held => Ok(held.lock()?.run_id().map(str::to_owned)))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (thread_id, run_id, event_count) = with_held!(&self.0, held => {
            let observer = held.lock()?;
            (python_repr(py, observer.thread_id())?, python_repr(py, observer.run_id())?, observer.event_count())
        });
        Ok(format!("{}(thread_id={thread_id}, run_id={run_id}, event_count={event_count})", self.0.class_name()))
    }
}

/// Observes a host's root stream and its forwarded inline child runs, in source order, as AG-UI events. A
/// `HarnessAguiObserver` (its methods are that class's), as the reference's is.
#[pyclass(name = "HarnessAguiStreamObserver", module = "a13n_stream_rs", extends = PyObserver, subclass)]
pub(crate) struct PyStreamObserver;

#[pymethods]
impl PyStreamObserver {
    /// A fresh stream observer (the arguments as `HarnessAguiObserver`'s).
    #[new]
    #[classmethod]
    #[pyo3(
        signature = (*args, **kwargs),
        text_signature = "(*, processor=None, retain_events=True, json_processor=None)"
    )]
    fn new(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let own = cls.py().get_type::<PyStreamObserver>();
        let observer = subclass::new_of(&own, cls, args, kwargs, || PyObserver(Observing::placeholder(true)))?;
        Ok(PyClassInitializer::from(observer).add_subclass(PyStreamObserver))
    }

    /// The constructor proper, with the reference's parameters (see `__new__`).
    #[staticmethod]
    #[pyo3(signature = (*, processor=None, retain_events=Truthy(true), json_processor=None))]
    fn _make(
        py: Python<'_>,
        processor: Option<Py<PyAny>>,
        retain_events: Truthy,
        json_processor: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'_, Self>> {
        let processor = HostProcessor::chosen(processor, json_processor)?;
        let observer = PyObserver(Observing::made(true, processor, retain_events.0));
        Bound::new(py, PyClassInitializer::from(observer).add_subclass(PyStreamObserver))
    }
}
