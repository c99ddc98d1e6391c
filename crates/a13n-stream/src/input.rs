//! Reading input lines by the workspace's one set of line rules ([`a13n_stream_protocol::lines`]), with a
//! progress line (lines, bytes, lines/s) on standard error when it is a terminal; and opening outputs.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::Path;

use a13n_stream_protocol::lines::{LineError, LineSplitter};
use a13n_stream_protocol::MAX_SOURCE_LINE_BYTES;
use indicatif::{HumanCount, ProgressBar, ProgressState, ProgressStyle};

use crate::failure::Failure;
use crate::write_behind::WriteBehind;

/// How much input one read asks for.
pub const READ_BYTES: usize = 1 << 16;

/// Open a file, or standard input for `-` or no path.
pub fn open(path: Option<&Path>) -> Result<Box<dyn BufRead + Send>, Failure> {
    let stdin = || Box::new(BufReader::with_capacity(READ_BYTES, io::stdin())) as Box<dyn BufRead + Send>;
    match path {
        None => Ok(stdin()),
        Some(path) if path == Path::new("-") => Ok(stdin()),
        // A directory opens on Unix and fails at the first read, without its name: refused here, named.
        Some(path) if path.is_dir() => Err(Failure::Io(format!("{}: is a directory", path.display()))),
        Some(path) => File::open(path)
            .map(|file| Box::new(BufReader::with_capacity(READ_BYTES, file)) as Box<dyn BufRead + Send>)
            .map_err(|error| Failure::Io(format!("{}: {error}", path.display()))),
    }
}

/// Create a file, or standard output for `-`, written on a thread of its own. A failed write names the file.
pub fn create(path: &Path) -> Result<WriteBehind, Failure> {
    if path == Path::new("-") {
        return Ok(WriteBehind::new(Box::new(Named::stdout())));
    }
    File::create(path)
        .map(|file| WriteBehind::new(Box::new(Named { name: path.display().to_string(), out: file })))
        .map_err(|error| Failure::Io(format!("{}: {error}", path.display())))
}

/// An output whose errors say which it is (`out.json: No space left on device`).
pub struct Named<W> {
    name: String,
    out: W,
}

impl Named<io::Stdout> {
    /// Standard output, named so.
    pub fn stdout() -> Named<io::Stdout> {
        Named { name: "standard output".into(), out: io::stdout() }
    }
}

impl<W> Named<W> {
    fn named(&self, error: io::Error) -> io::Error {
        io::Error::new(error.kind(), format!("{}: {error}", self.name))
    }
}

impl<W: Write> Write for Named<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.out.write(bytes).map_err(|error| self.named(error))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(|error| self.named(error))
    }
}

/// What a line reader hands its taker.
pub enum Next<L> {
    /// A line: its 1-based number, and its text (or scan) or why it has none.
    Line(u64, Result<L, LineError>),
    /// The input has nothing more ready for now (a live producer between writes, or its end): what was made of
    /// the lines before should be written out rather than held.
    Waiting,
}

/// Hand every line of `input` to `each` (its 1-based line number and its text or why it has none), and
/// [`Next::Waiting`] after a read that left nothing more ready, until the input ends or `each` returns `false`.
pub fn for_each_line(
    mut input: Box<dyn BufRead>,
    mut each: impl FnMut(Next<&str>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    let progress = progress_bar();
    let mut splitter = LineSplitter::new(MAX_SOURCE_LINE_BYTES);
    let mut bytes = 0u64;
    loop {
        let chunk = input.fill_buf().map_err(|error| Failure::Io(format!("reading input: {error}")))?;
        if chunk.is_empty() {
            break;
        }
        let length = chunk.len();
        let mut rest = chunk;
        while let Some((number, line)) = splitter.next_line(&mut rest) {
            if !each(Next::Line(number, line))? {
                progress.finish_and_clear();
                return Ok(());
            }
        }
        input.consume(length);
        bytes += length as u64;
        show_progress(&progress, splitter.lines_seen(), bytes);
        // A short read: the next one may wait for the producer.
        if length < READ_BYTES && !each(Next::Waiting)? {
            progress.finish_and_clear();
            return Ok(());
        }
    }
    if let Some((number, line)) = splitter.finish() {
        each(Next::Line(number, line))?;
    }
    progress.finish_and_clear();
    Ok(())
}

/// Show `lines` lines and `bytes` bytes read on `progress`.
pub(crate) fn show_progress(progress: &ProgressBar, lines: u64, bytes: u64) {
    // The message first: setting the position may draw the line.
    progress.set_message(format!("{} read", indicatif::HumanBytes(bytes)));
    progress.set_position(lines);
}

/// A spinner with lines, lines/s and bytes on a terminal; hidden otherwise.
pub(crate) fn progress_bar() -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_message("0 B read");
    // Whole lines a second: indicatif's own `{per_sec}` writes four decimals.
    let style = ProgressStyle::with_template("{spinner} {human_pos} lines ({rate}), {msg}, {elapsed}")
        .map(|style| {
            style.with_key("rate", |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = write!(out, "{}/s", HumanCount(state.per_sec() as u64));
            })
        })
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar
}
