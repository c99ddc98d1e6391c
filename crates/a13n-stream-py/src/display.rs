//! `DisplayFold` and `replay`: folding source lines into display items, checkpoints, and whole-journal recovery.

use std::sync::{Mutex, MutexGuard};

use a13n_stream_protocol::lines::LineSplitter;
use a13n_stream_protocol::{
    recorded, ContentPolicy, DisplayFold, DisplayOptions, FoldError, Observed, SourceItem, MAX_SOURCE_LINE_BYTES,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::convert::{from_python, json_text, line_text, object_to_python, to_python};
use crate::errors::{at_line, fold_error, input_error, FailureSlot};
use crate::processor::optional_processor;

/// Folds Harness source lines (or AG-UI events) into compact display items with stable ids and dense ordinals,
/// and exports checkpoints that are the reference's byte for byte.
#[pyclass(name = "DisplayFold", module = "a13n_stream_rs")]
pub(crate) struct PyDisplayFold {
    fold: Mutex<DisplayFold>,
    /// Where the processor's exceptions wait (`None` without a processor).
    failure: Option<FailureSlot>,
}

/// The core options and failure slot for a content policy and an optional Python processor.
fn options(
    full_content: bool,
    retain_content: bool,
    processor: Option<Py<PyAny>>,
) -> (DisplayOptions, Option<FailureSlot>) {
    let (processor, failure) = optional_processor(processor);
    let options =
        DisplayOptions { content: ContentPolicy::new(full_content, retain_content), processor, ..Default::default() };
    (options, failure)
}

impl PyDisplayFold {
    /// The fold, for one call. A second thread calling while a batch runs without the GIL is refused rather
    /// than left waiting for a lock the first needs the GIL to release.
    fn held(&self) -> PyResult<MutexGuard<'_, DisplayFold>> {
        self.fold.try_lock().map_err(|_| PyRuntimeError::new_err("this DisplayFold is in use by another thread"))
    }

    fn error(&self, error: FoldError) -> PyErr {
        fold_error(error, self.failure.as_ref())
    }
}

/// The `{"observed":[...]}` line (or the error line) `a13n-stream fold --observed` writes for one source line.
fn fold_into(fold: &mut DisplayFold, line: &str, entries: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), FoldError> {
    entries.clear();
    fold.fold_line(line, entries)?;
    recorded::write_observed_line(entries, out);
    Ok(())
}

#[pymethods]
impl PyDisplayFold {
    /// A fold for run `run_id`. `full_content` keeps whole values and skips native part observations;
    /// `retain_content` keeps whole values with the bounded fold's items; `processor(source, event)` sees every
    /// converted event (as dicts) and returns it, a replacement, or `None`.
    #[new]
    #[pyo3(signature = (run_id, *, full_content=false, retain_content=false, processor=None))]
    fn new(run_id: String, full_content: bool, retain_content: bool, processor: Option<Py<PyAny>>) -> Self {
        let (options, failure) = options(full_content, retain_content, processor);
        PyDisplayFold { fold: Mutex::new(DisplayFold::with_options(run_id, options)), failure }
    }

    /// Continue from a checkpoint (`str`, `bytes`, or a reference `DisplaySnapshot`). `retain_content` and the
    /// processor are host policy, not checkpoint state: pass the ones the exporting fold had.
    #[staticmethod]
    #[pyo3(signature = (checkpoint, *, retain_content=false, processor=None))]
    fn restore(checkpoint: &Bound<'_, PyAny>, retain_content: bool, processor: Option<Py<PyAny>>) -> PyResult<Self> {
        let text = json_text(checkpoint, "checkpoint")?;
        let (processor, failure) = optional_processor(processor);
        let fold = DisplayFold::restore_json(&text, retain_content, processor)
            .map_err(|error| fold_error(error, failure.as_ref()))?;
        Ok(PyDisplayFold { fold: Mutex::new(fold), failure })
    }

    /// Fold one source line (`str`, `bytes` or `dict`): the `{"observed":[...]}` text `a13n-stream fold
    /// --observed` writes for it. A rejected line raises and changes nothing.
    fn fold_line(&self, line: &Bound<'_, PyAny>) -> PyResult<String> {
        let text = line_text(line)?;
        let mut fold = self.held()?;
        let (mut entries, mut out) = (Vec::with_capacity(1024), Vec::with_capacity(1024));
        fold_into(&mut fold, &text, &mut entries, &mut out).map_err(|error| self.error(error))?;
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    /// Fold many source lines in one call (the GIL is released while Rust works, unless a processor must be
    /// called): for each line its `{"observed":[...]}` text, or for a rejected line the error line the CLI
    /// writes (`{"error":{"type":...,"message":...}}`), which changes nothing. A processor's exception stops
    /// the batch and is raised.
    fn fold_lines(&self, py: Python<'_>, lines: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let texts = collect_lines(lines)?;
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
        let result = if self.failure.is_some() {
            run(&mut *self.held()?)
        } else {
            py.detach(|| self.held().map(|mut fold| run(&mut fold)))?
        };
        result.map_err(|error| self.error(error))
    }

    /// Fold AG-UI events (dicts), optionally with the Harness source item they came from (`str`, `bytes` or
    /// `dict`): the observed entries as dicts (`sequence`, `event`, `item`).
    #[pyo3(signature = (events, source=None))]
    fn fold<'py>(
        &self,
        py: Python<'py>,
        events: &Bound<'py, PyAny>,
        source: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut objects = Vec::new();
        for (index, event) in events.try_iter()?.enumerate() {
            match from_python(&event?, &format!("events.{index}"))? {
                serde_json::Value::Object(object) => objects.push(object),
                _ => return Err(input_error(&format!("events.{index}"), "an AG-UI event is a dict")),
            }
        }
        let source = source.map(source_item).transpose()?;
        let observed = self.held()?.fold(objects, source.as_ref()).map_err(|error| self.error(error))?;
        observed_list(py, &observed)
    }

    /// The AG-UI events of one source item, as dicts (then give them to `fold`).
    fn events<'py>(&self, py: Python<'py>, source: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let item = source_item(source)?;
        let events = self.held()?.events(&item).map_err(|error| self.error(error))?;
        let list = PyList::empty(py);
        for event in &events {
            list.append(object_to_python(py, event)?)?;
        }
        Ok(list)
    }

    /// The checkpoint JSON: the reference's `DisplaySnapshot`, byte for byte.
    fn export(&self) -> PyResult<String> {
        Ok(self.held()?.export_json())
    }

    /// The items changed since the last capture and the parser state, as checkpoint JSON.
    fn capture_delta(&self) -> PyResult<String> {
        Ok(self.held()?.capture_delta().to_json())
    }

    /// The parser state alone, as the reference's `DisplayContinuation` JSON.
    fn export_continuation(&self) -> PyResult<String> {
        Ok(self.held()?.export_continuation().to_json())
    }

    /// The last folded position: `{"attempt": ..., "sequence": ...}`.
    #[getter]
    fn position<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let position = self.held()?.position();
        let dict = PyDict::new(py);
        dict.set_item("attempt", position.attempt)?;
        dict.set_item("sequence", position.sequence)?;
        Ok(dict)
    }

    /// The run this display belongs to.
    #[getter]
    fn run_id(&self) -> PyResult<String> {
        Ok(self.held()?.run_id().to_owned())
    }

    /// How many items the display holds.
    #[getter]
    fn item_count(&self) -> PyResult<usize> {
        Ok(self.held()?.item_count())
    }

    fn __repr__(&self) -> PyResult<String> {
        let fold = self.held()?;
        Ok(format!(
            "DisplayFold(run_id={:?}, position={}, items={})",
            fold.run_id(),
            fold.position(),
            fold.item_count()
        ))
    }
}

/// A source item from a line (`str`, `bytes` or `dict`).
pub(crate) fn source_item(line: &Bound<'_, PyAny>) -> PyResult<SourceItem> {
    let text = line_text(line)?;
    SourceItem::from_json(&text).map_err(|error| input_error("", error))
}

fn observed_list<'py>(py: Python<'py>, observed: &[Observed]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for entry in observed {
        let value = serde_json::to_value(entry).map_err(|error| PyRuntimeError::new_err(error.to_string()))?;
        list.append(to_python(py, &value)?)?;
    }
    Ok(list)
}

/// Every line of an iterable as owned text (so Rust can work on them without the GIL).
pub(crate) fn collect_lines(lines: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if lines.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("lines is an iterable of lines, not one str"));
    }
    let mut texts = Vec::with_capacity(lines.len().unwrap_or(0));
    for line in lines.try_iter()? {
        texts.push(line_text(&line?)?.into_owned());
    }
    Ok(texts)
}

/// Fold a whole journal in Rust and return its checkpoint JSON: the recovery path. `lines` is an iterable of
/// lines (`str`, `bytes` or `dict`), or a path (`str` or `os.PathLike`) to a JSON-lines file. `run_id`
/// defaults to the first line's run. A line that does not fold raises, naming its 1-based line number.
#[pyfunction]
#[pyo3(signature = (lines, run_id=None, *, full_content=false, retain_content=false))]
pub(crate) fn replay(
    py: Python<'_>,
    lines: &Bound<'_, PyAny>,
    run_id: Option<String>,
    full_content: bool,
    retain_content: bool,
) -> PyResult<String> {
    let journal = match path_of(lines)? {
        Some(path) => Journal::File(path),
        None => Journal::Lines(collect_lines(lines)?),
    };
    let result = py.detach(|| journal.replay(run_id, ContentPolicy::new(full_content, retain_content)));
    result.map_err(|(line, error)| match line {
        Some(line) => at_line(py, fold_error(error, None), line),
        None => fold_error(error, None),
    })
}

/// A path given as `str` or `os.PathLike`.
fn path_of(object: &Bound<'_, PyAny>) -> PyResult<Option<std::path::PathBuf>> {
    if object.is_instance_of::<PyString>() || object.hasattr("__fspath__")? {
        let path = object.py().import("os")?.getattr("fspath")?.call1((object,))?;
        return Ok(Some(path.extract::<std::path::PathBuf>()?));
    }
    Ok(None)
}

/// Where a journal's lines come from.
enum Journal {
    Lines(Vec<String>),
    File(std::path::PathBuf),
}

type ReplayError = (Option<usize>, FoldError);

impl Journal {
    fn replay(self, run_id: Option<String>, content: ContentPolicy) -> Result<String, ReplayError> {
        let mut replay = Replay { fold: None, run_id, content };
        match self {
            Journal::Lines(lines) => {
                for (index, line) in lines.iter().enumerate() {
                    replay.line(index + 1, line)?;
                }
            }
            Journal::File(path) => replay.file(&path)?,
        }
        let Replay { fold, run_id, content, .. } = replay;
        let fold = fold.unwrap_or_else(|| {
            let options = DisplayOptions { content, ..Default::default() };
            DisplayFold::with_options(run_id.unwrap_or_default(), options)
        });
        Ok(fold.export_json())
    }
}

struct Replay {
    fold: Option<DisplayFold>,
    run_id: Option<String>,
    content: ContentPolicy,
}

impl Replay {
    fn line(&mut self, number: usize, line: &str) -> Result<(), ReplayError> {
        let fold = match self.fold.as_mut() {
            Some(fold) => fold,
            None => {
                let run_id = match &self.run_id {
                    Some(run_id) => run_id.clone(),
                    None => SourceItem::from_json(line).map_err(|error| (Some(number), error.into()))?.run_id,
                };
                let options = DisplayOptions { content: self.content, ..Default::default() };
                self.fold.insert(DisplayFold::with_options(run_id, options))
            }
        };
        fold.replay_line(line).map(drop).map_err(|error| (Some(number), error))
    }

    fn file(&mut self, path: &std::path::Path) -> Result<(), ReplayError> {
        use std::io::Read;
        let io = |error: std::io::Error| {
            (
                None,
                FoldError::from(a13n_stream_protocol::InputError::new(path.display().to_string(), error.to_string())),
            )
        };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut splitter = LineSplitter::new(MAX_SOURCE_LINE_BYTES);
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let read = file.read(&mut buffer).map_err(io)?;
            if read == 0 {
                break;
            }
            let mut rest = &buffer[..read];
            while let Some((number, line)) = splitter.next_line(&mut rest) {
                let line = line.map_err(|error| (Some(number as usize), line_error(error)))?;
                self.line(number as usize, line)?;
            }
        }
        if let Some((number, line)) = splitter.finish() {
            let line = line.map_err(|error| (Some(number as usize), line_error(error)))?;
            self.line(number as usize, line)?;
        }
        Ok(())
    }
}

fn line_error(error: a13n_stream_protocol::lines::LineError) -> FoldError {
    a13n_stream_protocol::InputError::new("", error.to_string()).into()
}
