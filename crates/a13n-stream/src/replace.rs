//! A file replaced whole or not at all ([`Replacing`]): the checkpoint `fold --export` writes.
//!
//! The new bytes go to a file beside the target (`.NAME.RANDOM.tmp`, in the target's directory, with its mode,
//! owner and group), which takes the target's name by `rename` once every byte is written. Until then the target
//! is as it was: a full disk, a failed write or the process killed halfway leaves the previous checkpoint whole
//! (and `fold --restore cut.json --export cut.json` can move a checkpoint on in place). Only the rename is
//! atomic; the file is not synced, so a crash of the machine itself is left to the file system. A killed process
//! leaves its hidden file behind; a new file's name is random, so no run takes or removes another's.
//!
//! The target is replaced only where replacing it is invisible but for the safety: a regular file with one name,
//! which the user may write, whose owner and group the new file can be given, named by a path outside `/dev` and
//! `/proc` (`/dev/stdout` names whatever standard output is). Anywhere else the target is written in place, as
//! any output is: standard output (`-`), a device, a pipe, a file with other hard links, one owned by another
//! user, a directory that takes no new file, and a rename the file system refuses (a file bind-mounted on its
//! own, a sticky directory). A symbolic link is followed: the file it names is replaced and the link kept.

use std::fs::{File, Metadata, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
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
        let failed = |error: io::Error| Failure::Io(format!("{name}: {error}"));
        let Some((temp, target, file)) = beside(path).map_err(failed)? else {
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
        let Some((temp, target)) = self.swap.take() else { return Ok(()) };
        // A rename the file system refuses: the new bytes are copied over the target instead.
        let replaced = std::fs::rename(&temp, &target).or_else(|_| copy_over(&temp, &target));
        let _ = std::fs::remove_file(&temp);
        replaced.map_err(|error| Failure::Io(format!("{}: {error}", self.name)))
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
fn beside(path: &Path) -> io::Result<Option<(PathBuf, PathBuf, File)>> {
    if output::names_stdout(path) || through_system_files(path) {
        return Ok(None);
    }
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            // A dangling link is written through, as creating a file would.
            if std::fs::symlink_metadata(path).is_ok() {
                return Ok(None);
            }
            return new_file_beside(path, None);
        }
        Err(error) => return Err(error),
    };
    if !metadata.is_file() || metadata.nlink() != 1 {
        return Ok(None);
    }
    // Refused as writing in place would refuse it: a file the user may not write stays so.
    OpenOptions::new().write(true).open(path)?;
    // Through any links: the file they name is replaced.
    new_file_beside(&std::fs::canonicalize(path)?, Some(&metadata))
}

/// A new file beside `target` with the mode, owner and group of the file it replaces (`old`), or `None` where it
/// cannot be made so.
fn new_file_beside(target: &Path, old: Option<&Metadata>) -> io::Result<Option<(PathBuf, PathBuf, File)>> {
    let Some((temp, file)) = fresh_file(target) else { return Ok(None) };
    if let Some(old) = old {
        let kept = file.metadata().and_then(|new| {
            if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
                std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()))?;
            }
            file.set_permissions(old.permissions())
        });
        if kept.is_err() {
            drop(file);
            let _ = std::fs::remove_file(&temp);
            return Ok(None);
        }
    }
    Ok(Some((temp, target.to_path_buf(), file)))
}

/// A file of a new random name beside `target` (`.NAME.RANDOM.tmp`); `None` where the directory takes no new file
/// or no name this long (written in place then, whose own error, if any, is the one to report).
fn fresh_file(target: &Path) -> Option<(PathBuf, File)> {
    let file_name = target.file_name()?;
    for _ in 0..8 {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(file_name);
        temp_name.push(format!(".{:016x}.tmp", random()));
        let temp = target.with_file_name(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Some((temp, file)),
            // Another run's: never taken or removed.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Whether `path`, or a link it leads through, names a file under `/dev` or `/proc` (`/dev/stdout`,
/// `/proc/self/fd/1`): what those name is the process's own, written in place.
fn through_system_files(path: &Path) -> bool {
    let Ok(mut path) = std::path::absolute(path) else { return true };
    for _ in 0..40 {
        if path.starts_with("/dev") || path.starts_with("/proc") {
            return true;
        }
        let Ok(link) = std::fs::read_link(&path) else { return false };
        path = path.parent().map_or_else(|| link.clone(), |parent| parent.join(&link));
    }
    false
}

/// The new bytes copied over `target` in place, for a rename the file system refused.
fn copy_over(temp: &Path, target: &Path) -> io::Result<()> {
    let mut from = File::open(temp)?;
    let mut to = OpenOptions::new().write(true).truncate(true).open(target)?;
    io::copy(&mut from, &mut to)?;
    to.flush()
}

/// A random number for a new file's name (the standard library's hash keys are seeded at random).
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}
