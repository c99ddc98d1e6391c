//! `HarnessAguiStreamObserver` and `HarnessAguiObserver`: source lines in, AG-UI events out, with atomic
//! resumption from history and continuation from exported state.

use std::sync::{Mutex, MutexGuard};

use a13n_stream_protocol::observer::{Mode, RootStream, SingleRun};
use a13n_stream_protocol::{Event, ObserveError, Observer, ObserverContinuation, SourceItem};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyType};

use crate::convert::{json_text, split_lines, to_python};
use crate::display::collect_lines;
use crate::errors::{at_line, input_error, observe_error, FailureSlot};
use crate::processor::optional_processor;

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

/// An observer of either mode, with its processor's failure slot.
pub(crate) struct Held<M: Mode> {
    observer: Mutex<Observer<M>>,
    failure: Option<FailureSlot>,
}

impl<M: Mode> Held<M>
where
    Observer<M>: ObserveLine,
{
    fn new(processor: Option<Py<PyAny>>, retain_events: bool) -> Self {
        let (processor, failure) = optional_processor(processor);
        let mut observer = Observer::<M>::new().retain_events(retain_events);
        if let Some(processor) = processor {
            observer = observer.with_processor(processor);
        }
        Held { observer: Mutex::new(observer), failure }
    }

    fn restore(continuation: &Bound<'_, PyAny>, processor: Option<Py<PyAny>>) -> PyResult<Self> {
        let text = json_text(continuation, "continuation")?;
        let continuation = ObserverContinuation::from_json(&text).map_err(|error| input_error("", error))?;
        let (processor, failure) = optional_processor(processor);
        Ok(Held { observer: Mutex::new(Observer::<M>::restore(continuation, processor)), failure })
    }

    fn lock(&self) -> PyResult<MutexGuard<'_, Observer<M>>> {
        self.observer.try_lock().map_err(|_| PyRuntimeError::new_err("this observer is in use by another thread"))
    }

    fn error(&self, error: ObserveError) -> PyErr {
        observe_error(error, self.failure.as_ref())
    }

    /// The JSON lines `a13n-stream observe` prints for one source line.
    fn observe_bytes(&self, line: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        let text = crate::convert::line_text(line)?;
        let mut out = Vec::with_capacity(1024);
        self.lock()?.observe_line_into(&text, &mut out).map_err(|error| self.error(error))?;
        Ok(out)
    }

    fn observe<'py>(&self, py: Python<'py>, line: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = self.observe_bytes(line)?;
        let list = PyList::empty(py);
        for text in split_lines(&out) {
            let value: serde_json::Value =
                serde_json::from_str(text).map_err(|error| PyRuntimeError::new_err(error.to_string()))?;
            list.append(to_python(py, &value)?)?;
        }
        Ok(list)
    }

    fn observe_json(&self, line: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let out = self.observe_bytes(line)?;
        Ok(split_lines(&out).into_iter().map(str::to_owned).collect())
    }

    fn resume(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<()> {
        let texts = collect_lines(lines)?;
        let mut items = Vec::with_capacity(texts.len());
        for (index, text) in texts.iter().enumerate() {
            let item = SourceItem::from_json(text).map_err(|error| at_line(py, input_error("", error), index + 1))?;
            items.push(item);
        }
        if self.failure.is_some() {
            return self.lock()?.resume(&items).map_err(|error| self.error(error));
        }
        // The lock is taken and released on the worker side of `detach`.
        py.detach(|| self.lock().map(|mut observer| observer.resume(&items)))?.map_err(|error| self.error(error))
    }

    fn snapshot<'py>(&self, py: Python<'py>, start: usize, stop: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let events = self.lock()?.snapshot(start, stop).map_err(|error| self.error(error))?;
        events_list(py, &events)
    }
}

fn events_list<'py>(py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for event in events {
        list.append(to_python(py, &event.to_value())?)?;
    }
    Ok(list)
}

/// Run an awaitable `resume`: the package's `_aio.aresume` collects the async history, then calls `resume`.
fn aresume<'py>(observer: &Bound<'py, PyAny>, history: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let helper = observer.py().import("a13n_stream_rs._aio")?.getattr("aresume")?;
    helper.call1((observer, history))
}

macro_rules! observer_class {
    ($rust:ident, $python:literal, $mode:ty, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(name = $python, module = "a13n_stream_rs")]
        pub(crate) struct $rust(Held<$mode>);

        #[pymethods]
        impl $rust {
            /// A fresh observer. `processor(source, event)` sees every converted event (as dicts) and returns
            /// it, a replacement, or `None`; `retain_events` keeps every event for `snapshot`.
            #[new]
            #[pyo3(signature = (*, processor=None, retain_events=true))]
            fn new(processor: Option<Py<PyAny>>, retain_events: bool) -> Self {
                $rust(Held::new(processor, retain_events))
            }

            /// Continue from an exported continuation (`str`, `bytes` or a reference `ObserverContinuation`),
            /// without the old event journal.
            #[classmethod]
            #[pyo3(signature = (continuation, *, processor=None))]
            fn restore(
                _cls: &Bound<'_, PyType>,
                continuation: &Bound<'_, PyAny>,
                processor: Option<Py<PyAny>>,
            ) -> PyResult<Self> {
                Ok($rust(Held::restore(continuation, processor)?))
            }

            /// Convert one source line (`str`, `bytes` or `dict`) and commit it atomically: its AG-UI events as
            /// dicts (the reference's `model_dump(mode="json", by_alias=True, exclude_none=True)`).
            fn observe<'py>(&self, py: Python<'py>, line: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
                self.0.observe(py, line)
            }

            /// Like `observe`, each event as the JSON text `a13n-stream observe` prints.
            fn observe_json(&self, line: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
                self.0.observe_json(line)
            }

            /// Rebuild this fresh observer atomically from a finite, ordered history of source lines. On error
            /// the observer stays fresh.
            fn resume(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<()> {
                self.0.resume(py, lines)
            }

            /// `resume` from an async iterable of source lines: an awaitable. If iterating fails, or the
            /// awaitable is dropped, the observer stays fresh.
            fn aresume<'py>(slf: &Bound<'py, Self>, history: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                aresume(slf.as_any(), history)
            }

            /// The conversion state as the reference's `ObserverContinuation` JSON (events excluded).
            fn export(&self) -> PyResult<String> {
                Ok(self.0.lock()?.export().to_json())
            }

            /// Retained events in `start..stop` (all by default), as dicts. Requires `retain_events=True`.
            #[pyo3(signature = (*, start=0, stop=None))]
            fn snapshot<'py>(
                &self,
                py: Python<'py>,
                start: usize,
                stop: Option<usize>,
            ) -> PyResult<Bound<'py, PyList>> {
                self.0.snapshot(py, start, stop)
            }

            /// How many events are retained: a stable boundary for `snapshot`.
            #[getter]
            fn event_count(&self) -> PyResult<usize> {
                Ok(self.0.lock()?.event_count())
            }

            /// The bound Harness thread, once observation has begun.
            #[getter]
            fn thread_id(&self) -> PyResult<Option<String>> {
                Ok(self.0.lock()?.thread_id().map(str::to_owned))
            }

            /// The bound (root) Harness run, once observation has begun.
            #[getter]
            fn run_id(&self) -> PyResult<Option<String>> {
                Ok(self.0.lock()?.run_id().map(str::to_owned))
            }

            fn __repr__(&self) -> PyResult<String> {
                let observer = self.0.lock()?;
                Ok(format!(
                    "{}(thread_id={:?}, run_id={:?}, event_count={})",
                    $python,
                    observer.thread_id(),
                    observer.run_id(),
                    observer.event_count()
                ))
            }
        }
    };
}

observer_class!(
    PyStreamObserver,
    "HarnessAguiStreamObserver",
    RootStream,
    "Converts a host's root stream and its forwarded inline child runs, in source order, to AG-UI events."
);
observer_class!(
    PySingleObserver,
    "HarnessAguiObserver",
    SingleRun,
    "Converts exactly one Harness run to AG-UI events."
);
