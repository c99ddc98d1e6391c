//! Reading input lines by the workspace's one set of line rules ([`a13n_stream_protocol::lines`]), with a
//! progress line (lines, bytes, lines/s) on standard error when it is a terminal, and telling when the input has
//! nothing more ready (a live producer between writes), so what was made of it is written out, not held.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use a13n_stream_protocol::lines::{LineError, LineSplitter};
use a13n_stream_protocol::MAX_SOURCE_LINE_BYTES;
use indicatif::{HumanCount, ProgressBar, ProgressState, ProgressStyle};
use rustix::event::{poll, PollFd, PollFlags, Timespec};

use crate::failure::Failure;

/// How much input one read asks for.
pub const READ_BYTES: usize = 1 << 16;

/// An input's bytes, read through a buffer of [`READ_BYTES`], and a way to ask whether more are ready now.
pub struct Input {
    bytes: BufReader<Box<dyn Read + Send>>,
    /// A duplicate of the input's file descriptor, polled; `None` for an input without one.
    polled: Option<OwnedFd>,
}

impl Input {
    /// `bytes`, polled through `polled` (a duplicate of its descriptor) when there is one.
    pub fn new(bytes: Box<dyn Read + Send>, polled: Option<OwnedFd>) -> Input {
        Input { bytes: BufReader::with_capacity(READ_BYTES, bytes), polled }
    }

    /// Whether the read that just returned `length` bytes left nothing more ready: the next read may wait for the
    /// producer (or find the input's end). A short read says so; a full one may have taken exactly what a pipe
    /// held (a producer that wrote 64 KiB and went quiet), so the descriptor is asked.
    pub fn waits_after(&self, length: usize) -> bool {
        if length < READ_BYTES {
            return true;
        }
        let ready = |fd: &OwnedFd| {
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            // A failed poll says nothing either way: read on.
            poll(&mut fds, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })).map_or(true, |ready| ready > 0)
        };
        self.polled.as_ref().is_some_and(|fd| !ready(fd))
    }
}

impl Read for Input {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.bytes.read(out)
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.bytes.fill_buf()
    }

    fn consume(&mut self, length: usize) {
        self.bytes.consume(length);
    }
}

/// Open a file, or standard input for `-` or no path.
pub fn open(path: Option<&Path>) -> Result<Input, Failure> {
    let stdin = || {
        let polled = io::stdin().as_fd().try_clone_to_owned().ok();
        Input::new(Box::new(io::stdin()), polled)
    };
    match path {
        None => Ok(stdin()),
        Some(path) if path == Path::new("-") => Ok(stdin()),
        // A directory opens on Unix and fails at the first read, without its name: refused here, named.
        Some(path) if path.is_dir() => Err(Failure::Io(format!("{}: is a directory", path.display()))),
        Some(path) => File::open(path)
            .map(|file| {
                // A named pipe (`mkfifo`) is read as standard input is.
                let polled = file.as_fd().try_clone_to_owned().ok();
                Input::new(Box::new(file), polled)
            })
            .map_err(|error| Failure::Io(format!("{}: {error}", path.display()))),
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

impl<L> Next<L> {
    /// The same, its line's text or scan made into another.
    pub fn map<M>(self, make: impl FnOnce(L) -> M) -> Next<M> {
        match self {
            Next::Line(number, line) => Next::Line(number, line.map(make)),
            Next::Waiting => Next::Waiting,
        }
    }
}

/// Hand every line of `input` to `each` (its 1-based line number and its text or why it has none), and
/// [`Next::Waiting`] after a read that left nothing more ready, until the input ends or `each` returns `false`.
pub fn for_each_line(
    mut input: Input,
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
        if input.waits_after(length) && !each(Next::Waiting)? {
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
