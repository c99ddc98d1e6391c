//! Opening outputs: files and standard output, written on a thread of their own ([`WriteBehind`]), their errors
//! named as the user named the output.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use crate::failure::Failure;
use crate::write_behind::WriteBehind;

/// Create a file, or standard output for `-` (or a path naming it, as `/dev/stdout`), written on a thread of its
/// own. A failed write names the file.
pub fn create(path: &Path) -> Result<WriteBehind, Failure> {
    if names_stdout(path) {
        return Ok(WriteBehind::new(Box::new(Named::stdout())));
    }
    File::create(path)
        .map(|file| WriteBehind::new(Box::new(Named::new(path.display().to_string(), file))))
        .map_err(|error| Failure::Io(format!("{}: {error}", path.display())))
}

/// Whether `path` is standard output: `-`, or a name of the process's own descriptor 1 (`/dev/stdout`,
/// `/dev/fd/1`, `/proc/self/fd/1`), which is written as it is, not opened anew (opening it would empty a file
/// that standard output appends to, or write over what the shell wrote before).
pub fn names_stdout(path: &Path) -> bool {
    ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].iter().any(|name| path == Path::new(name))
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
    /// `out`, its errors prefixed with `name`.
    pub fn new(name: String, out: W) -> Named<W> {
        Named { name, out }
    }

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
