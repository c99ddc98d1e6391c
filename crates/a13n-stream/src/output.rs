//! Opening outputs: files and standard output, written on a thread of their own ([`WriteBehind`]), their errors
//! named as the user named the output.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use crate::failure::Failure;
use crate::write_behind::WriteBehind;

/// Create a file, or standard output for `-` (or a path naming it, as `/dev/stdout`), written on a thread of its
/// own. A failed write names the file.
///
/// The file is opened here, so that a path that cannot be written is refused before any work, and emptied on the
/// writing thread: freeing the pages of a long file written before is the kernel's work, which the caller need not
/// wait for.
pub fn create(path: &Path) -> Result<WriteBehind, Failure> {
    if names_stdout(path) {
        return Ok(WriteBehind::new(Box::new(Named::stdout())));
    }
    let name = path.display().to_string();
    // Not truncated here: emptied by the writer (`Named::emptied`).
    let file = OpenOptions::new().write(true).create(true).truncate(false).open(path);
    let file = file.map_err(|error| Failure::Io(format!("{name}: {error}")))?;
    Ok(WriteBehind::after(move || Ok(Box::new(Named::new(name, file).emptied()?))))
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

impl Named<File> {
    /// The file emptied, as creating it empties it: a regular file is cut to nothing; a device, a pipe or a
    /// terminal has nothing to cut.
    fn emptied(self) -> io::Result<Named<File>> {
        let regular = self.out.metadata().map_err(|error| self.named(error))?.is_file();
        if regular {
            self.out.set_len(0).map_err(|error| self.named(error))?;
        }
        Ok(self)
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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("a13n-output-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("out.jsonl")
    }

    /// A file written before holds only the new bytes, and nothing when nothing was written: emptied as creating
    /// it would have emptied it, though on the writing thread.
    #[test]
    fn a_file_written_before_holds_only_what_is_written_now() {
        let path = scratch("again");
        std::fs::write(&path, "old line\n".repeat(20_000)).unwrap();
        let mut out = create(&path).unwrap();
        out.write_all(b"new\n").unwrap();
        out.flush().unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        std::fs::write(&path, "old line\n").unwrap();
        drop(create(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// A device has nothing to empty: it is written as it is.
    #[test]
    fn a_device_is_written_without_emptying() {
        let mut out = create(Path::new("/dev/null")).unwrap();
        out.write_all(b"line\n").unwrap();
        out.flush().unwrap();
    }

    /// A path that cannot be opened is refused at once, named.
    #[test]
    fn a_path_that_cannot_be_opened_is_refused_at_once() {
        let path = std::env::temp_dir().join(format!("a13n-output-none-{}", std::process::id())).join("out.jsonl");
        let Err(Failure::Io(message)) = create(&path) else { panic!("created {}", path.display()) };
        assert!(message.starts_with(&format!("{}: ", path.display())), "{message}");
    }
}
