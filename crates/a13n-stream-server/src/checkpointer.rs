//! WAL checkpoints off the commit path. SQLite copies the write-ahead log back into the database file (a
//! checkpoint) inside whichever commit crosses its threshold, so that commit, and every batch of its group, waits
//! for the copy and a sync of the database file. Here the writer's connection does none (`wal_autocheckpoint = 0`);
//! a thread with a connection of its own runs a passive checkpoint (it never blocks a writer or a reader) after
//! commits, at most once per [`CHECKPOINT_INTERVAL`]. The thread ends when the storage is dropped.

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use rusqlite::Connection;

/// The least time between two checkpoints while commits go on.
pub(crate) const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(100);

/// Tells the checkpoint thread that the log grew.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    committed: SyncSender<()>,
}

impl Checkpointer {
    /// Start the checkpoint thread for the database at `path`; `None` if its connection or thread cannot be had
    /// (the writer then keeps checkpointing in its commits, as SQLite does by default).
    pub(crate) fn start(path: &Path) -> Option<Checkpointer> {
        let connection = Connection::open(path).ok()?;
        connection.busy_timeout(Duration::from_secs(10)).ok()?;
        let (committed, wake) = sync_channel(1);
        let thread = std::thread::Builder::new().name("a13n-sqlite-checkpoint".into());
        thread.spawn(move || checkpoints(&connection, &wake)).ok()?;
        Some(Checkpointer { committed })
    }

    /// A commit added to the log: a checkpoint is due (several commits before it runs make one).
    pub(crate) fn committed(&self) {
        match self.committed.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) => {}
            Err(TrySendError::Disconnected(())) => tracing::warn!("the checkpoint thread stopped"),
        }
    }
}

/// The thread: a passive checkpoint after commits, then a pause, until the storage is dropped.
fn checkpoints(connection: &Connection, wake: &Receiver<()>) {
    while wake.recv().is_ok() {
        // A checkpoint that finds readers in the way copies what it can; the next one does the rest.
        if let Err(error) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(%error, "checkpoint of the write-ahead log failed; it is tried again after the next commit");
        }
        std::thread::sleep(CHECKPOINT_INTERVAL);
    }
}
