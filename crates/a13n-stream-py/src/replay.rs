//! `replay`: a whole journal folded in Rust, without a Python call per line, into its checkpoint JSON (the
//! recovery path).

use a13n_stream_protocol::lines::LineSplitter;
use a13n_stream_protocol::{
    ContentPolicy, DisplayFold, DisplayOptions, FoldError, ReadAhead, ScannedLine, SourceItem, MAX_SOURCE_LINE_BYTES,
};
use std::sync::{Mutex, OnceLock, PoisonError};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

use crate::errors::{at_line, fold_error};
use crate::native::line_text;

/// A line's text that Rust can read without the GIL: a `str` line's own UTF-8 (held, not copied), or text made
/// from a line of another type.
pub(crate) enum LineText {
    Held(PyBackedStr),
    Made(String),
}

impl std::ops::Deref for LineText {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            LineText::Held(text) => text,
            LineText::Made(text) => text,
        }
    }
}

/// Every line of an iterable as text Rust can work on without the GIL.
pub(crate) fn collect_lines(lines: &Bound<'_, PyAny>) -> PyResult<Vec<LineText>> {
    if lines.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("lines is an iterable of lines, not one str"));
    }
    let mut texts = Vec::with_capacity(lines.len().unwrap_or(0));
    for line in lines.try_iter()? {
        let line = line?;
        texts.push(match line.cast::<PyString>() {
            Ok(text) => LineText::Held(text.to_owned().try_into()?),
            Err(_) => LineText::Made(line_text(&line)?.into_owned()),
        });
    }
    Ok(texts)
}

/// Fold a whole journal in Rust and return its checkpoint JSON: the recovery path. `lines` is an iterable of
/// lines (`str`, `bytes` or `dict`), or a path (`str` or `os.PathLike`) to a JSON-lines file. `run_id`
/// defaults to the first line's run. A line that does not fold raises, naming its 1-based line number. A long
/// journal given as lines is read on a second thread ahead of the fold (see [`READ_AHEAD_MIN_LINES`]); one read
/// from a path is folded on the calling thread.
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
    // The lines (which hold Python strings) are let go here, with the GIL.
    drop(journal);
    result.map_err(|(line, error)| match line {
        Some(line) => at_line(py, fold_error(py, error, None, None), line),
        None => fold_error(py, error, None, None),
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
    Lines(Vec<LineText>),
    File(std::path::PathBuf),
}

type ReplayError = (Option<usize>, FoldError);

impl Journal {
    fn replay(&self, run_id: Option<String>, content: ContentPolicy) -> Result<String, ReplayError> {
        let mut replay = Replay { fold: None, run_id, content };
        match self {
            Journal::Lines(lines) => replay.lines(lines)?,
            Journal::File(path) => replay.file(path)?,
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

    /// Fold every line, reading lines on a second thread ahead of the fold when there are enough of them to pay
    /// for it (the fold and its results are the same either way: [`DisplayFold::replay_scanned`]).
    fn lines(&mut self, lines: &[LineText]) -> Result<(), ReplayError> {
        let Some((first, rest)) = lines.split_first() else { return Ok(()) };
        self.line(1, first)?;
        let fold = self.fold.as_mut().expect("the first line made the fold");
        let at_line = |(index, error): (usize, FoldError)| (Some(index + 2), error);
        // When no reader thread can be started, the lines are folded here instead.
        if let Some(folded) = (lines.len() >= READ_AHEAD_MIN_LINES).then(|| read_ahead(fold, rest)).flatten() {
            return folded.map_err(at_line);
        }
        for (index, line) in rest.iter().enumerate() {
            fold.replay_line(line).map_err(|error| at_line((index, error)))?;
        }
        Ok(())
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

/// A journal of fewer lines is folded on the calling thread alone: starting a reader costs more than it saves.
const READ_AHEAD_MIN_LINES: usize = 256;
/// Lines a reader hands over at a time, and how many such batches may wait for the fold.
const READ_AHEAD_BATCH: usize = 64;
const READ_AHEAD_BATCHES: usize = 8;

/// A batch of lines a reader scanned, on its way to the fold and back.
type Batch<'a> = Vec<ScannedLine<'a>>;

/// The thread every replay's reader runs on, kept between calls: starting a thread for each call took about 60 µs
/// here (2% of replaying a 2,700-line journal), and a kept thread's allocator heap stays warm. `None` when no thread
/// can be started.
fn reader_thread() -> Option<&'static rayon::ThreadPool> {
    static READER: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    READER
        .get_or_init(|| {
            let builder = rayon::ThreadPoolBuilder::new().num_threads(1);
            builder.thread_name(|_| "a13n-replay-reader".into()).build().ok()
        })
        .as_ref()
}

/// Fold `lines` with a reader ([`ReadAhead`]) scanning them on the reader thread ([`reader_thread`]), a batch at a
/// time, while this one folds the batches before. A folded batch goes back to the reader to be emptied and
/// refilled, so most of what the reader allocated is freed on its own thread. The error names the index of the
/// line that failed; the lines after it are not folded, and the reader stops. Replays on several threads at once
/// take the reader in turn. `None`: no reader thread could be started (nothing was folded).
fn read_ahead(fold: &mut DisplayFold, lines: &[LineText]) -> Option<Result<(), (usize, FoldError)>> {
    let reader = fold.read_ahead();
    let finished = Mutex::new(None);
    let folded = reader_thread()?.in_place_scope(|scope| {
        let (send, receive) = std::sync::mpsc::sync_channel::<Batch<'_>>(READ_AHEAD_BATCHES);
        let (give_back, given_back) = std::sync::mpsc::channel::<Batch<'_>>();
        let finished = &finished;
        scope.spawn(move |_| {
            let reader = read_batches(reader, lines, send, given_back);
            *finished.lock().unwrap_or_else(PoisonError::into_inner) = Some(reader);
        });
        let mut index = 0;
        receive.iter().try_for_each(|batch| {
            for line in &batch {
                fold.replay_scanned(line).map_err(|error| (index, error))?;
                index += 1;
            }
            // The reader may have finished: then the batch is dropped here.
            let _ = give_back.send(batch);
            Ok(())
        })
        // Leaving the scope drops `receive` (a reader still sending stops), waits for the reader, and passes on
        // its panic.
    });
    if let Some(reader) = finished.into_inner().unwrap_or_else(PoisonError::into_inner) {
        fold.end_read_ahead(reader);
    }
    Some(folded)
}

/// The reader's side of [`read_ahead`]: scan `lines` a batch at a time until they end or the fold stops.
fn read_batches<'a>(
    mut reader: ReadAhead,
    lines: &'a [LineText],
    send: std::sync::mpsc::SyncSender<Batch<'a>>,
    given_back: std::sync::mpsc::Receiver<Batch<'a>>,
) -> ReadAhead {
    for batch in lines.chunks(READ_AHEAD_BATCH) {
        let mut scanned = given_back.try_recv().unwrap_or_else(|_| Vec::with_capacity(READ_AHEAD_BATCH));
        scanned.clear();
        scanned.extend(batch.iter().map(|line| reader.scan(line)));
        // The fold has stopped (a line failed): nothing more to read.
        if send.send(scanned).is_err() {
            break;
        }
    }
    reader
}

fn line_error(error: a13n_stream_protocol::lines::LineError) -> FoldError {
    a13n_stream_protocol::InputError::new("", error.to_string()).into()
}
