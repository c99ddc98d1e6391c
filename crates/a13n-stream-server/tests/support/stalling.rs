//! SQLite storage whose commits or journal reads can be made never to answer, as on a disk that hangs: a test
//! that drops a future while it awaits storage holds it there deterministically instead of racing storage's
//! threads for the first poll.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use a13n_stream_server::storage::{
    Batch, Rejection, RunRecord, SqliteStorage, Storage, StorageError, StoredEvent, StoredItem,
};

/// Storage over [`SqliteStorage`] with two switches, both off at first.
pub struct Stalling {
    inner: SqliteStorage,
    commits: AtomicBool,
    journal_reads: AtomicBool,
}

impl Stalling {
    /// Over the SQLite database at `path` (created if absent).
    pub fn open(path: &Path) -> Arc<Stalling> {
        let inner = SqliteStorage::open(path).unwrap();
        Arc::new(Stalling { inner, commits: AtomicBool::new(false), journal_reads: AtomicBool::new(false) })
    }

    /// While on, a commit awaits forever (it does not reach the database).
    #[allow(dead_code)] // Each test crate that includes this module uses one of the switches.
    pub fn stall_commits(&self, on: bool) {
        self.commits.store(on, Ordering::SeqCst);
    }

    /// While on, a read of journal lines awaits forever.
    #[allow(dead_code)] // Each test crate that includes this module uses one of the switches.
    pub fn stall_journal_reads(&self, on: bool) {
        self.journal_reads.store(on, Ordering::SeqCst);
    }
}

async fn stall_while(switch: &AtomicBool) {
    if switch.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
}

#[async_trait::async_trait]
impl Storage for Stalling {
    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError> {
        self.inner.run(run_id).await
    }
    async fn runs(&self, after: &str, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        self.inner.runs(after, limit).await
    }
    async fn newest_runs(&self, before: Option<u64>, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        self.inner.newest_runs(before, limit).await
    }
    async fn thread_runs(&self, thread_id: &str, after: u64, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        self.inner.thread_runs(thread_id, after, limit).await
    }
    async fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError> {
        stall_while(&self.journal_reads).await;
        self.inner.journal(run_id, from, to).await
    }
    async fn commit(&self, batch: Arc<Batch>) -> Result<(), StorageError> {
        stall_while(&self.commits).await;
        self.inner.commit(batch).await
    }
    async fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError> {
        self.inner.events_after(run_id, after, limit).await
    }
    async fn items(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<StoredItem>, StorageError> {
        self.inner.items(run_id, after, before, limit).await
    }
    async fn rejections(&self, run_id: &str, from: u64, limit: usize) -> Result<Vec<Rejection>, StorageError> {
        self.inner.rejections(run_id, from, limit).await
    }
    async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
        self.inner.delete(run_id, idle_before).await
    }
    async fn idle_runs(&self, before: u64, after: &str, limit: usize) -> Result<Vec<String>, StorageError> {
        self.inner.idle_runs(before, after, limit).await
    }
}
