//! A file replaced whole or not at all ([`Replacing`]): the checkpoint `fold --export` writes.
//!
//! The new bytes go to a file beside the target (`.NAME.PID.tmp`, in the target's directory, with the target's
//! permissions), which takes the target's name by `rename` once every byte is written. Until then the target is
//! as it was: a full disk, a failed write or the process killed halfway leaves the previous checkpoint whole (and
//! `fold --restore cut.json --export cut.json` can move a checkpoint on in place). Only the rename is atomic; the
//! file is not synced, so a crash of the machine itself is left to the file system.
//!
//! Where a new file cannot take the target's place, the target is written in place as any output is: standard
//! output (`-`), a path that is not a regular file (`/dev/null`, a pipe), and a directory the user may not create
//! files in. A symbolic link is followed: the file it names is replaced and the link kept.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::failure::{io_error, Failure};
use crate::output::{self, Named};
use crate::write_behind::WriteBehind;

/// An output that replaces its file whole at [`Replacing::commit`]. Dropped without it, the file is left as it
/// was and the new bytes are removed.
pub struct Replacing {
    out: Option<WriteBehind>,
    /// The new file and the target it replaces, when the target is replaced rather than written in place.
    swap: Option<(PathBuf, PathBuf)>,
    name: String,
}

impl Replacing {
    /// Start replacing `path` (`-`: standard output, written as it comes).
    pub fn new(path: &Path) -> Result<Replacing, Failure> {
        let name = path.display().to_string();
        let Some((temp, target, file)) = beside(path)? else {
            return Ok(Replacing { out: Some(output::create(path)?), swap: None, name });
        };
        let out = WriteBehind::new(Box::new(Named::new(name.clone(), file)));
        Ok(Replacing { out: Some(out), swap: Some((temp, target)), name })
    }

    /// Every byte written, then the new file in the target's place.
    pub fn commit(mut self) -> Result<(), Failure> {
        let mut out = self.out.take().expect("an output until committed");
        out.flush().map_err(io_error)?;
        drop(out);
        if let Some((temp, target)) = self.swap.take() {
            if let Err(error) = std::fs::rename(&temp, &target) {
                let _ = std::fs::remove_file(&temp);
                return Err(Failure::Io(format!("{}: {error}", self.name)));
            }
        }
        Ok(())
    }
}

impl Write for Replacing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("an output until committed").write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("an output until committed").flush()
    }
}

impl Drop for Replacing {
    fn drop(&mut self) {
        // The writer stops before its file goes; the target is untouched.
        drop(self.out.take());
        if let Some((temp, _)) = self.swap.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// The new file beside `path`'s target and the target, or `None` where the target is written in place.
fn beside(path: &Path) -> Result<Option<(PathBuf, PathBuf, File)>, Failure> {
    if path == Path::new("-") {
        return Ok(None);
    }
    let failed = |error: io::Error| Failure::Io(format!("{}: {error}", path.display()));
    let (target, permissions) = match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => return Ok(None),
        // Through any links: the file they name is replaced.
        Ok(metadata) => (std::fs::canonicalize(path).map_err(failed)?, Some(metadata.permissions())),
        // A dangling link is written through, as creating a file would.
        Err(_) if std::fs::symlink_metadata(path).is_ok() => return Ok(None),
        Err(error) if error.kind() == io::ErrorKind::NotFound => (path.to_path_buf(), None),
        Err(error) => return Err(failed(error)),
    };
    let Some(file_name) = target.file_name() else { return Ok(None) };
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = target.with_file_name(temp_name);
    let create = || OpenOptions::new().write(true).create_new(true).open(&temp);
    // One left by a process of the same id that was killed before its rename: no live process writes it.
    let made = create().or_else(|error| match error.kind() {
        io::ErrorKind::AlreadyExists => std::fs::remove_file(&temp).and_then(|()| create()),
        _ => Err(error),
    });
    let file = match made {
        Ok(file) => file,
        // The directory takes no new file (the target may still be writable): written in place.
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => return Ok(None),
        // The target's directory is missing: said as creating the target says it.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(failed(error)),
    };
    if let Some(permissions) = permissions {
        if let Err(error) = file.set_permissions(permissions) {
            let _ = std::fs::remove_file(&temp);
            return Err(failed(error));
        }
    }
    Ok(Some((temp, target, file)))
}
