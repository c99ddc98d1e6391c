//! Durable storage of runs: the source journal, the AG-UI events with their display sequence, the display items
//! and the display continuation, committed together; on SQLite the batches of many runs that wait while a commit is
//! written go into the next transaction together (`group_commit`).
//!
//! [`Storage`] is asynchronous. [`SqliteStorage`] is the embedded default (WAL, `synchronous=FULL`: an
//! acknowledged batch survives a crash or power loss); it runs its one connection on blocking threads.
//! [`crate::postgres::PostgresStorage`] uses a connection pool.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::checkpointer::Checkpointer;
use crate::chunks;
use crate::group_commit::{self, CommitQueue, WriterGuard};

/// A storage failure.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The batch does not start at the journal's end (another writer or a stale retry).
    #[error("the journal of run {run_id} has {journal_len} lines; a batch must start there")]
    Conflict {
        /// The run.
        run_id: String,
        /// The journal length, which is the expected offset.
        journal_len: u64,
    },
    /// The database failed.
    #[error("database: {0}")]
    Database(String),
    /// The SQLite database file was removed or replaced while the host had it open: what the host would store
    /// now would go to a file nobody can open again.
    #[error(
        "the database file {path} is gone (removed or replaced while the host was running); nothing more can be \
         stored: put the file back, or restart the host"
    )]
    FileGone {
        /// The database file's path, as the host opened it.
        path: String,
    },
}

impl From<rusqlite::Error> for StorageError {
    fn from(error: rusqlite::Error) -> Self {
        StorageError::Database(error.to_string())
    }
}

impl From<rusqlite::types::FromSqlError> for StorageError {
    fn from(error: rusqlite::types::FromSqlError) -> Self {
        StorageError::Database(error.to_string())
    }
}

/// What is stored about a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRecord {
    /// The run.
    pub run_id: String,
    /// Source lines journaled.
    pub journal_len: u64,
    /// The display sequence of the last event.
    pub position: u64,
    /// Whether the root run's terminal event was stored.
    pub complete: bool,
    /// The display continuation JSON of the last checkpoint (not read by listings): with the stored items, the
    /// display after the first [`RunRecord::checkpoint_len`] journal lines. `None` before the first checkpoint.
    pub continuation: Option<String>,
    /// Display items.
    pub item_count: u64,
    /// When the last batch was committed, in Unix milliseconds (0 for runs stored before this was kept).
    pub updated_ms: u64,
    /// Which life of the run id this is: drawn at random by the run's first batch, so that a run deleted and
    /// ingested again is never taken for the one that was deleted (0 for runs stored before this was kept).
    pub incarnation: u64,
    /// The root run's thread, from its first line (`None` until a line of it was accepted).
    pub thread_id: Option<String>,
    /// The run's place in the order of first ingest: larger for runs first committed later.
    pub created: u64,
    /// The journal lines the stored items and continuation hold: recovery folds the lines after them again.
    pub checkpoint_len: u64,
    /// How the run ended ([`RunOutcome::as_str`]), once its terminal event is stored (`None` before, and for runs
    /// completed before this was kept).
    pub outcome: Option<String>,
}

/// One AG-UI event at its display sequence, with the item it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// The display sequence.
    pub sequence: u64,
    /// The event JSON.
    pub event: String,
    /// The item reference the fold handed out with the event (its JSON; `null` when the event changed no item).
    /// `None` for events a host stored before it kept references: a reader sends a snapshot instead.
    pub item: Option<String>,
}

/// The item reference column of an event that changed no item.
pub const NO_ITEM: &str = "null";

/// One display item's JSON, its ordinal, and the display sequence of the event that last changed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredItem {
    /// The item id.
    pub id: String,
    /// The item's ordinal.
    pub ordinal: u64,
    /// The display sequence of the latest event that changed it (its `last_stream_id`).
    pub changed: u64,
    /// The item JSON.
    pub item: String,
}

/// A source line the protocol rejected, journaled at its position and skipped (as the reference skips it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The journal position of the line.
    pub line: u64,
    /// `input` (malformed) or `observation` (well-formed, refused by the protocol).
    pub kind: String,
    /// Why.
    pub message: String,
}

/// Everything one accepted batch commits, atomically.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// The run.
    pub run_id: String,
    /// The journal position of the first line (the journal's length before the batch).
    pub offset: u64,
    /// The source lines, exactly as received.
    pub lines: Vec<String>,
    /// The AG-UI events the lines produced.
    pub events: Vec<StoredEvent>,
    /// With a checkpoint: the items changed since the last one (empty without).
    pub items: Vec<StoredItem>,
    /// A checkpoint: the display continuation after the batch, stored with `items`, so that recovery starts after
    /// this batch's lines. `None`: the journal lines alone record the batch; recovery folds them again.
    pub continuation: Option<String>,
    /// The display sequence after the batch.
    pub position: u64,
    /// Whether the run's terminal event is in this batch or before.
    pub complete: bool,
    /// Lines of the batch that were journaled but skipped.
    pub rejections: Vec<Rejection>,
    /// Display items after the batch.
    pub item_count: u64,
    /// When the batch is committed, in Unix milliseconds.
    pub updated_ms: u64,
    /// The run's incarnation ([`RunRecord::incarnation`]): a fresh one for a batch at offset 0, else the one the
    /// batch was folded on, which the commit requires storage still to hold.
    pub incarnation: u64,
    /// The root run's thread, once a line of the run was accepted (stored with the run when first known).
    pub thread_id: Option<String>,
    /// How the run ended, when the batch holds its terminal event.
    pub outcome: Option<String>,
}

/// Durable storage for the host. Implementations must make [`Storage::commit`] atomic and durable.
#[async_trait]
pub trait Storage: Send + Sync + 'static {
    /// A run's record.
    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError>;
    /// Up to `limit` runs whose id sorts after `after`, by id.
    async fn runs(&self, after: &str, limit: usize) -> Result<Vec<RunRecord>, StorageError>;
    /// Up to `limit` runs first ingested before the one with `created` place `before` (all, for `None`), the most
    /// recently first ingested first.
    async fn newest_runs(&self, before: Option<u64>, limit: usize) -> Result<Vec<RunRecord>, StorageError>;
    /// Up to `limit` runs of thread `thread_id` with a `created` above `after`, in the order of first ingest.
    async fn thread_runs(&self, thread_id: &str, after: u64, limit: usize) -> Result<Vec<RunRecord>, StorageError>;
    /// Journal lines `from..to`.
    async fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError>;
    /// Commit a batch, or [`StorageError::Conflict`] when the journal's length is not `batch.offset` or (after the
    /// first batch) the stored run is another incarnation than the batch's (the run was deleted and ingested
    /// again since the batch's run was read).
    async fn commit(&self, batch: Arc<Batch>) -> Result<(), StorageError>;
    /// Up to `limit` events with a sequence after `after`, in order.
    async fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError>;
    /// Up to `limit` items with `after < ordinal < before`, by ordinal.
    async fn items(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<StoredItem>, StorageError>;
    /// Up to `limit` rejected lines at journal positions of at least `from`, in order.
    async fn rejections(&self, run_id: &str, from: u64, limit: usize) -> Result<Vec<Rejection>, StorageError>;
    /// Remove a run and everything stored of it (its journal, events, items and rejected lines) in one
    /// transaction, serialized with commits of the same run; with `idle_before` (Unix milliseconds), only when its
    /// last commit is known (`updated_ms > 0`) and older. Whether a run was removed.
    async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError>;
    /// Up to `limit` runs whose id sorts after `after` and whose last commit is known and older than `before`
    /// (Unix milliseconds), by id: what retention removes.
    async fn idle_runs(&self, before: u64, after: &str, limit: usize) -> Result<Vec<String>, StorageError>;
    /// For storage without commit notifications: a number that changes whenever another process commits
    /// (SQLite's `data_version`), polled to wake subscribers. `None` when the storage notifies by itself.
    async fn external_version(&self) -> Result<Option<u64>, StorageError> {
        Ok(None)
    }
    /// Whether the storage can still store (`/healthz`): SQLite checks that its file is still the one it opened.
    async fn check(&self) -> Result<(), StorageError> {
        Ok(())
    }
}

/// Embedded SQLite storage.
#[derive(Debug, Clone)]
pub struct SqliteStorage {
    connection: Arc<Mutex<Connection>>,
    file: Arc<FileWatch>,
    /// Batches waiting for the writer, which commits each group of them in one transaction.
    queue: Arc<CommitQueue>,
    /// Checkpoints the write-ahead log on a thread of its own (`None`: the commits do, as by default).
    checkpointer: Option<Arc<Checkpointer>>,
}

/// The database file as it was opened: its path and identity (device and inode). Removing the file (or renaming
/// another over it) leaves the open connection writing to an unlinked inode, where every commit would be lost at
/// the next restart; comparing the identity with a `stat` of the path before every statement, and after every
/// commit, notices it.
#[derive(Debug)]
struct FileWatch {
    path: std::path::PathBuf,
    /// `None` where the platform gives no file identity (the check is then skipped).
    identity: Option<(u64, u64)>,
    /// Whether the file was gone at the last check (so that each change is logged once).
    gone: std::sync::atomic::AtomicBool,
}

impl FileWatch {
    fn new(path: &Path) -> FileWatch {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let identity = file_identity(&path);
        FileWatch { path, identity, gone: std::sync::atomic::AtomicBool::new(false) }
    }

    fn check(&self) -> Result<(), StorageError> {
        use std::sync::atomic::Ordering;
        let Some(identity) = self.identity else { return Ok(()) };
        let path = self.path.display().to_string();
        if file_identity(&self.path) == Some(identity) {
            if self.gone.swap(false, Ordering::Relaxed) {
                tracing::warn!(path, "the database file is back; storing again");
            }
            return Ok(());
        }
        if !self.gone.swap(true, Ordering::Relaxed) {
            tracing::error!(
                path,
                "the database file was removed or replaced while the host was running; refusing to store anything \
                 (every request that needs storage answers 503, /healthz too): put the file back, or restart the host"
            );
        }
        Err(StorageError::FileGone { path })
    }
}

#[cfg(unix)]
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|metadata| (metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn file_identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// The schema, one entry per version; `PRAGMA user_version` records how many have run.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        journal_len INTEGER NOT NULL,
        position INTEGER NOT NULL,
        complete INTEGER NOT NULL,
        continuation TEXT
    );
    CREATE TABLE journal (
        run_id TEXT NOT NULL,
        offset INTEGER NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (run_id, offset)
    ) WITHOUT ROWID;
    CREATE TABLE events (
        run_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    ) WITHOUT ROWID;
    CREATE TABLE items (
        run_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (run_id, item_id)
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX items_by_ordinal ON items (run_id, ordinal);
",
    "
    CREATE TABLE rejections (
        run_id TEXT NOT NULL,
        line INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (run_id, line)
    ) WITHOUT ROWID;
",
    "
    ALTER TABLE items ADD COLUMN changed INTEGER NOT NULL DEFAULT 0;
    UPDATE items SET changed = CAST(substr(json_extract(item, '$.last_stream_id'),
        instr(json_extract(item, '$.last_stream_id'), '-') + 1) AS INTEGER);
    CREATE INDEX items_by_change ON items (run_id, changed);
",
    "
    ALTER TABLE runs ADD COLUMN item_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN updated_ms INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET item_count = (SELECT count(*) FROM items WHERE items.run_id = runs.run_id);
",
    "
    ALTER TABLE runs ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
",
    "
    ALTER TABLE runs ADD COLUMN thread_id TEXT;
    ALTER TABLE runs ADD COLUMN created INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET created = rowid,
        thread_id = CASE WHEN json_valid(continuation) THEN json_extract(continuation, '$.observer.thread_id') END;
    CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO counters (name, value) SELECT 'runs_created', coalesce(max(created), 0) FROM runs;
    CREATE INDEX runs_by_thread ON runs (thread_id, created);
",
    "
    ALTER TABLE events ADD COLUMN item TEXT;
",
    "
    ALTER TABLE runs ADD COLUMN checkpoint_len INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET checkpoint_len = journal_len WHERE continuation IS NOT NULL;
",
    // A batch's lines and events a row each (`chunks.rs`); each line or event stored before is a chunk of one.
    "
    CREATE TABLE journal_chunks (
        run_id TEXT NOT NULL,
        first INTEGER NOT NULL,
        lines TEXT NOT NULL,
        PRIMARY KEY (run_id, first)
    );
    INSERT INTO journal_chunks (run_id, first, lines) SELECT run_id, offset, line FROM journal;
    DROP TABLE journal;
    CREATE TABLE event_chunks (
        run_id TEXT NOT NULL,
        first INTEGER NOT NULL,
        events TEXT NOT NULL,
        items TEXT,
        PRIMARY KEY (run_id, first)
    );
    INSERT INTO event_chunks (run_id, first, events, items) SELECT run_id, sequence, event, item FROM events;
    DROP TABLE events;
",
    "
    ALTER TABLE runs ADD COLUMN outcome TEXT;
",
    // The run list newest first (`GET /v1/runs?order=newest`).
    "
    CREATE INDEX runs_by_created ON runs (created);
",
];

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 64;

/// `PRAGMA auto_vacuum`'s value for `INCREMENTAL`.
const AUTO_VACUUM_INCREMENTAL: i64 = 2;

/// The size the write-ahead log is cut back to after a checkpoint (`PRAGMA journal_size_limit`), in bytes.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// The tables holding a run's rows, the run's own row last.
const RUN_TABLES: [&str; 5] = ["journal_chunks", "event_chunks", "items", "rejections", "runs"];

/// A stored (signed) integer as a count or position.
pub(crate) fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A count or position as a storable (signed) integer.
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl SqliteStorage {
    /// Open (creating if needed) the database at `path` and run pending migrations.
    ///
    /// A new database is created with `auto_vacuum = INCREMENTAL`, so that the pages a deleted run frees are
    /// returned to the file system (`PRAGMA incremental_vacuum` after every delete). A database created without
    /// it keeps them for reuse, and says so in the log: `PRAGMA auto_vacuum = INCREMENTAL; VACUUM;` converts it.
    pub fn open(path: &Path) -> Result<SqliteStorage, StorageError> {
        let connection = Connection::open(path)?;
        // Takes effect only while the database has no table (a new file); for others it is a no-op.
        connection.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "FULL")?;
        // After a checkpoint the write-ahead log is cut back to this, however large a delete made it.
        connection.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        connection.busy_timeout(std::time::Duration::from_secs(10))?;
        // Room for every statement the host runs (about twenty), so that a retention sweep's deletes do not push
        // the commit's out of the cache.
        connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let checkpointer = Checkpointer::start(path).map(Arc::new);
        if checkpointer.is_some() {
            connection.pragma_update(None, "wal_autocheckpoint", 0)?;
        }
        let storage = SqliteStorage {
            connection: Arc::new(Mutex::new(connection)),
            file: Arc::new(FileWatch::new(path)),
            queue: Arc::default(),
            checkpointer,
        };
        storage.migrate()?;
        let auto_vacuum: i64 = storage.lock().pragma_query_value(None, "auto_vacuum", |row| row.get(0))?;
        if auto_vacuum != AUTO_VACUUM_INCREMENTAL {
            tracing::info!(
                path = %path.display(),
                "this database was created without auto_vacuum: space freed by deleted runs is reused, not returned \
                 to the file system; to return it, stop the host and run \
                 `sqlite3 <file> 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'` once"
            );
        }
        Ok(storage)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a transaction half-applied; the connection stays usable.
        self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Run `work` on the connection on a blocking thread, if the database file is still the one opened.
    async fn on_connection<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StorageError> + Send + 'static,
    ) -> Result<T, StorageError> {
        let storage = self.clone();
        tokio::task::spawn_blocking(move || {
            storage.file.check()?;
            work(&mut storage.lock())
        })
        .await
        .map_err(|error| StorageError::Database(error.to_string()))?
    }

    /// The writer: commit each group of waiting batches in one transaction until none waits.
    fn write_groups(&self) {
        let _guard = WriterGuard(&self.queue);
        while let Some(group) = self.queue.next_group() {
            let batches: Vec<&Batch> = group.iter().map(|waiting| &*waiting.batch).collect();
            let results = commit_group(&mut self.lock(), &self.file, &batches);
            group_commit::answer(group, results);
            if let Some(checkpointer) = &self.checkpointer {
                checkpointer.committed();
            }
        }
    }

    fn migrate(&self) -> Result<(), StorageError> {
        let mut connection = self.lock();
        let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
        let done = usize::try_from(version).unwrap_or(0);
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(done) {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute_batch(migration)?;
            transaction.pragma_update(None, "user_version", index as i64 + 1)?;
            transaction.commit()?;
        }
        Ok(())
    }
}

fn record(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        run_id: row.get(0)?,
        journal_len: to_u64(row.get(1)?),
        position: to_u64(row.get(2)?),
        complete: row.get::<_, i64>(3)? != 0,
        continuation: row.get(4)?,
        item_count: to_u64(row.get(5)?),
        updated_ms: to_u64(row.get(6)?),
        incarnation: to_u64(row.get(7)?),
        thread_id: row.get(8)?,
        created: to_u64(row.get(9)?),
        checkpoint_len: to_u64(row.get(10)?),
        outcome: row.get(11)?,
    })
}

#[async_trait]
impl Storage for SqliteStorage {
    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id, journal_len, position, complete, continuation, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM runs
                 WHERE run_id = ?1",
            )?;
            Ok(statement.query_row(params![run_id], record).optional()?)
        })
        .await
    }

    async fn runs(&self, after: &str, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let after = after.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM runs WHERE run_id > ?1
                 ORDER BY run_id LIMIT ?2",
            )?;
            let rows = statement.query_map(params![after, to_i64(limit as u64)], record)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn newest_runs(&self, before: Option<u64>, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let before = before.map_or(i64::MAX, to_i64);
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM runs WHERE created < ?1
                 ORDER BY created DESC LIMIT ?2",
            )?;
            let rows = statement.query_map(params![before, to_i64(limit as u64)], record)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn thread_runs(&self, thread_id: &str, after: u64, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let thread_id = thread_id.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM runs WHERE thread_id = ?1 AND created > ?2 ORDER BY created LIMIT ?3",
            )?;
            let rows = statement.query_map(params![thread_id, to_i64(after), to_i64(limit as u64)], record)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| {
            // From the chunk holding line `from` (the last to start at or before it) to the last starting before `to`.
            let mut statement = connection.prepare_cached(
                "SELECT first, lines FROM journal_chunks WHERE run_id = ?1 AND first < ?3 AND first >=
                     coalesce((SELECT max(first) FROM journal_chunks WHERE run_id = ?1 AND first <= ?2), 0)
                 ORDER BY first",
            )?;
            let mut rows = statement.query(params![run_id, to_i64(from), to_i64(to)])?;
            let mut lines = Vec::new();
            while let Some(row) = rows.next()? {
                let text: &str = row.get_ref(1)?.as_str()?;
                chunks::lines_within(to_u64(row.get(0)?), chunks::split(text), (from, to), &mut lines);
            }
            Ok(lines)
        })
        .await
    }

    async fn commit(&self, batch: Arc<Batch>) -> Result<(), StorageError> {
        // Refused alone, before it joins a group that it would fail.
        chunks::check(&batch)?;
        let (answer, start) = self.queue.submit(batch);
        if start {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                // No runtime to write on: nothing waits for a writer that cannot start.
                self.queue.abandon();
                return Err(group_commit::writer_gone());
            };
            let storage = self.clone();
            runtime.spawn_blocking(move || storage.write_groups());
        }
        answer.await.unwrap_or_else(|_| Err(group_commit::writer_gone()))
    }

    async fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| {
            // From the chunk holding the event after `after`, chunk by chunk until `limit` events are read.
            let mut statement = connection.prepare_cached(
                "SELECT first, events, items FROM event_chunks WHERE run_id = ?1 AND first >=
                     coalesce((SELECT max(first) FROM event_chunks WHERE run_id = ?1 AND first <= ?2 + 1), 0)
                 ORDER BY first",
            )?;
            let mut rows = statement.query(params![run_id, to_i64(after)])?;
            let mut events = Vec::new();
            while let Some(row) = rows.next()? {
                let (texts, items) = (row.get_ref(1)?.as_str()?, row.get_ref(2)?.as_str_or_null()?);
                let items = items.map(chunks::split).into_iter().flatten().map(Some).chain(std::iter::repeat(None));
                if chunks::events_after(to_u64(row.get(0)?), chunks::split(texts).zip(items), after, limit, &mut events)
                {
                    break;
                }
            }
            Ok(events)
        })
        .await
    }

    async fn items(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<StoredItem>, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT item_id, ordinal, changed, item FROM items WHERE run_id = ?1 AND ordinal > ?2 AND ordinal < ?3
                 ORDER BY ordinal LIMIT ?4",
            )?;
            let before = before.map_or(i64::MAX, to_i64);
            let rows =
                statement.query_map(params![run_id, to_i64(after), before, to_i64(limit as u64)], stored_item)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn rejections(&self, run_id: &str, from: u64, limit: usize) -> Result<Vec<Rejection>, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT line, kind, message FROM rejections WHERE run_id = ?1 AND line >= ?2 ORDER BY line LIMIT ?3",
            )?;
            let rows = statement.query_map(params![run_id, to_i64(from), to_i64(limit as u64)], |row| {
                Ok(Rejection { line: to_u64(row.get(0)?), kind: row.get(1)?, message: row.get(2)? })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn check(&self) -> Result<(), StorageError> {
        self.file.check()
    }

    async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
        let run_id = run_id.to_owned();
        self.on_connection(move |connection| delete(connection, &run_id, idle_before)).await
    }

    async fn idle_runs(&self, before: u64, after: &str, limit: usize) -> Result<Vec<String>, StorageError> {
        let after = after.to_owned();
        self.on_connection(move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id FROM runs WHERE updated_ms > 0 AND updated_ms < ?1 AND run_id > ?2
                 ORDER BY run_id LIMIT ?3",
            )?;
            let rows = statement.query_map(params![to_i64(before), after, to_i64(limit as u64)], |row| row.get(0))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn external_version(&self) -> Result<Option<u64>, StorageError> {
        self.on_connection(|connection| {
            let version: i64 = connection.pragma_query_value(None, "data_version", |row| row.get(0))?;
            Ok(Some(to_u64(version)))
        })
        .await
    }
}

fn stored_item(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredItem> {
    Ok(StoredItem { id: row.get(0)?, ordinal: to_u64(row.get(1)?), changed: to_u64(row.get(2)?), item: row.get(3)? })
}

/// Commit `batches` in one transaction (one sync of the write-ahead log for all of them). A batch that does not
/// start at its run's journal end is refused with a conflict before it writes anything, and the others commit; any
/// other failure (of a statement, the transaction or the file, see [`FileWatch`]) refuses every batch of the group,
/// since nothing of it is stored. Results are in `batches`' order.
fn commit_group(connection: &mut Connection, file: &FileWatch, batches: &[&Batch]) -> Vec<Result<(), StorageError>> {
    let mut results = Vec::with_capacity(batches.len());
    let outcome = file.check().and_then(|()| {
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for batch in batches {
            match write_batch(&transaction, batch) {
                Err(conflict @ StorageError::Conflict { .. }) => results.push(Err(conflict)),
                other => results.push(Ok(other?)),
            }
        }
        transaction.commit()?;
        // Removed while the commit ran: it went to a file that is gone, and must not be acknowledged.
        file.check()
    });
    match outcome {
        Ok(()) => results,
        Err(error) => vec![Err(error); batches.len()],
    }
}

/// Write one batch inside the group's transaction. A batch that does not start at the run's journal end, on the
/// incarnation stored, is a conflict, found before anything is written.
fn write_batch(transaction: &rusqlite::Transaction<'_>, batch: &Batch) -> Result<(), StorageError> {
    // Every statement is prepared once per connection and kept (`prepare_cached`): a group runs each of them often.
    let stored: Option<(i64, i64)> = transaction
        .prepare_cached("SELECT journal_len, incarnation FROM runs WHERE run_id = ?1")?
        .query_row(params![batch.run_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let (journal_len, incarnation) =
        stored.map_or((0, None), |(length, incarnation)| (to_u64(length), Some(incarnation)));
    if journal_len != batch.offset || (batch.offset > 0 && incarnation != Some(to_i64(batch.incarnation))) {
        return Err(StorageError::Conflict { run_id: batch.run_id.clone(), journal_len });
    }
    // A new run takes the next place in the order of first ingest (never one a deleted run had).
    let created: Option<i64> = match stored {
        Some(_) => None,
        None => Some(
            transaction
                .prepare_cached("UPDATE counters SET value = value + 1 WHERE name = 'runs_created' RETURNING value")?
                .query_row([], |row| row.get(0))?,
        ),
    };
    {
        let mut insert =
            transaction.prepare_cached("INSERT INTO journal_chunks (run_id, first, lines) VALUES (?1, ?2, ?3)")?;
        for range in chunks::ranges(batch.lines.iter().map(String::len)) {
            let first = batch.offset + range.start as u64;
            let lines = chunks::join(batch.lines[range].iter().map(String::as_str));
            insert.execute(params![batch.run_id, to_i64(first), lines])?;
        }
        let first_sequence = chunks::first_sequence(&batch.events)?.unwrap_or(0);
        let mut insert = transaction
            .prepare_cached("INSERT INTO event_chunks (run_id, first, events, items) VALUES (?1, ?2, ?3, ?4)")?;
        for range in chunks::ranges(batch.events.iter().map(|event| event.event.len())) {
            let (first, events) = (first_sequence + range.start as u64, &batch.events[range]);
            let texts = chunks::join(events.iter().map(|event| event.event.as_str()));
            // Item references all or none: a host stored events without them only before it kept them.
            let items = events.iter().map(|event| event.item.as_deref()).collect::<Option<Vec<_>>>();
            let items = items.map(chunks::join);
            insert.execute(params![batch.run_id, to_i64(first), texts, items])?;
        }
        let mut upsert = transaction.prepare_cached(
            "INSERT INTO items (run_id, item_id, ordinal, changed, item) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (run_id, item_id) DO UPDATE SET ordinal = excluded.ordinal, changed = excluded.changed,
                 item = excluded.item",
        )?;
        for item in &batch.items {
            upsert.execute(params![batch.run_id, item.id, to_i64(item.ordinal), to_i64(item.changed), item.item])?;
        }
        let mut insert = transaction
            .prepare_cached("INSERT INTO rejections (run_id, line, kind, message) VALUES (?1, ?2, ?3, ?4)")?;
        for rejection in &batch.rejections {
            insert.execute(params![batch.run_id, to_i64(rejection.line), rejection.kind, rejection.message])?;
        }
    }
    transaction.prepare_cached(
        "INSERT INTO runs (run_id, journal_len, position, complete, continuation, item_count, updated_ms, incarnation,
             thread_id, created, checkpoint_len, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CASE WHEN ?5 IS NULL THEN 0 ELSE ?2 END, ?11)
         ON CONFLICT (run_id) DO UPDATE SET journal_len = excluded.journal_len, position = excluded.position,
             complete = excluded.complete, item_count = excluded.item_count,
             continuation = coalesce(excluded.continuation, runs.continuation),
             checkpoint_len = CASE WHEN excluded.continuation IS NULL THEN runs.checkpoint_len
                 ELSE excluded.checkpoint_len END,
             updated_ms = excluded.updated_ms, incarnation = excluded.incarnation,
             thread_id = coalesce(runs.thread_id, excluded.thread_id),
             outcome = coalesce(excluded.outcome, runs.outcome)",
    )?
    .execute(params![
            batch.run_id,
            to_i64(batch.offset + batch.lines.len() as u64),
            to_i64(batch.position),
            i64::from(batch.complete),
            batch.continuation,
            to_i64(batch.item_count),
            to_i64(batch.updated_ms),
            to_i64(batch.incarnation),
            batch.thread_id,
            created.unwrap_or(0),
            batch.outcome,
        ],
    )?;
    Ok(())
}

/// Delete a run in one write transaction (so no commit of the run can interleave), then return the freed pages
/// to the file system: `incremental_vacuum` moves them to the end of the file and cuts it there (in WAL mode the
/// file itself shrinks at the checkpoint, run here without waiting for readers).
fn delete(connection: &mut Connection, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let updated: Option<i64> = transaction
        .query_row("SELECT updated_ms FROM runs WHERE run_id = ?1", params![run_id], |row| row.get(0))
        .optional()?;
    let Some(updated) = updated.map(to_u64) else { return Ok(false) };
    if idle_before.is_some_and(|before| updated == 0 || updated >= before) {
        return Ok(false);
    }
    for table in RUN_TABLES {
        transaction.prepare_cached(&format!("DELETE FROM {table} WHERE run_id = ?1"))?.execute(params![run_id])?;
    }
    transaction.commit()?;
    // The run is deleted whatever becomes of the space; a busy checkpoint is simply done later.
    let reclaimed = incremental_vacuum(connection)
        .and_then(|()| connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())));
    if let Err(error) = reclaimed {
        tracing::warn!(%error, run_id, "the run is deleted; returning its space to the file system failed");
    }
    Ok(true)
}

/// `PRAGMA incremental_vacuum` frees one page per step: it is stepped to the end.
fn incremental_vacuum(connection: &Connection) -> rusqlite::Result<()> {
    let mut statement = connection.prepare("PRAGMA incremental_vacuum")?;
    let mut rows = statement.query([])?;
    while rows.next()?.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(run_id: &str, offset: u64, lines: &[String]) -> Arc<Batch> {
        Arc::new(Batch {
            run_id: run_id.into(),
            offset,
            lines: lines.to_vec(),
            events: vec![StoredEvent { sequence: offset + 1, event: "{}".into(), item: Some(NO_ITEM.into()) }],
            items: vec![StoredItem {
                id: "itm_a".into(),
                ordinal: 1,
                changed: offset + 1,
                item: format!("{{\"v\":{offset}}}"),
            }],
            continuation: Some("{}".into()),
            position: offset + 1,
            complete: false,
            rejections: Vec::new(),
            item_count: 1,
            updated_ms: 0,
            incarnation: 7,
            thread_id: Some("t".into()),
            outcome: None,
        })
    }

    /// A new database in a directory of its own: the storage, the directory and the file.
    fn fresh(name: &str) -> (SqliteStorage, std::path::PathBuf, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("a13n-storage-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("test.db");
        (SqliteStorage::open(&path).unwrap(), dir, path)
    }

    #[tokio::test]
    async fn commits_are_checked_against_the_journal_end() {
        let (storage, dir, path) = fresh("journal-end");
        let lines = vec!["a".to_owned(), "b".to_owned()];
        storage.commit(batch("r", 0, &lines)).await.unwrap();
        assert!(matches!(
            storage.commit(batch("r", 0, &lines)).await,
            Err(StorageError::Conflict { journal_len: 2, .. })
        ));
        assert_eq!(storage.run("r").await.unwrap().unwrap().outcome, None);
        let ending = Batch { outcome: Some("failed".into()), ..(*batch("r", 2, &lines[..1])).clone() };
        storage.commit(Arc::new(ending)).await.unwrap();
        let record = storage.run("r").await.unwrap().unwrap();
        assert_eq!(record.journal_len, 3);
        assert_eq!(record.outcome.as_deref(), Some("failed"));
        // A later batch without one keeps it.
        storage.commit(batch("r", 3, &lines[..1])).await.unwrap();
        assert_eq!(storage.run("r").await.unwrap().unwrap().outcome.as_deref(), Some("failed"));
        assert_eq!(storage.journal("r", 1, 3).await.unwrap(), ["b", "a"]);
        assert_eq!(storage.events_after("r", 1, 10).await.unwrap().len(), 2);
        assert_eq!(storage.items("r", 0, None, 10).await.unwrap()[0].item, "{\"v\":3}");
        drop(storage);
        // Reopening runs no migration twice and keeps everything.
        let reopened = SqliteStorage::open(&path).unwrap();
        let runs = reopened.runs("", 10).await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].outcome.as_deref(), Some("failed"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_group_commits_every_batch_but_one_that_conflicts() {
        let (storage, dir, _) = fresh("group");
        let lines = vec!["a".to_owned(), "b".to_owned()];
        storage.commit(batch("r", 0, &lines)).await.unwrap();
        let (first, stale, other) = (batch("r", 2, &lines), batch("r", 0, &lines), batch("s", 0, &lines));
        let results = commit_group(&mut storage.lock(), &storage.file, &[&first, &stale, &other]);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(matches!(results[1], Err(StorageError::Conflict { journal_len: 4, .. })), "{results:?}");
        assert_eq!(storage.run("r").await.unwrap().unwrap().journal_len, 4);
        assert_eq!(storage.run("s").await.unwrap().unwrap().journal_len, 2);
        // Batches committed at once, each by its own caller, all land.
        let commits = (0..16).map(|index| storage.commit(batch(&format!("c{index}"), 0, &lines)));
        for result in futures_util::future::join_all(commits).await {
            result.unwrap();
        }
        assert_eq!(storage.runs("", 100).await.unwrap().len(), 18);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn the_write_ahead_log_is_checkpointed_off_the_commit_path() {
        let (storage, dir, path) = fresh("checkpoint");
        let opened = std::fs::metadata(&path).unwrap().len();
        let lines: Vec<String> = (0..200).map(|index| format!("line {index} {}", "x".repeat(200))).collect();
        storage.commit(batch("r", 0, &lines)).await.unwrap();
        // The commit left its pages in the log; only a checkpoint copies them into the database file, and the
        // writer's connection runs none.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::fs::metadata(&path).unwrap().len() <= opened {
            assert!(std::time::Instant::now() < deadline, "no checkpoint copied the log into the database file");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        drop(storage);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
