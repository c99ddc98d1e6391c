//! Group commit: batches that arrive while a group is being written wait in a queue, and the next group takes all
//! of them, so that one transaction (and one sync of the write-ahead log) stores the batches of many runs.
//!
//! The queue knows nothing of the database. A caller [`CommitQueue::submit`]s its batch and, when told it is the
//! first, starts the one writer; the writer takes [`CommitQueue::next_group`] until it returns `None` (which also
//! marks the writer stopped, under the same lock, so a batch submitted later starts a new one) and answers each
//! batch of a group with [`answer`]. Groups are as large as the batches in flight, which the host already bounds
//! (one ingest per run at a time, bytes in flight); no batch waits for a timer.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::storage::{Batch, StorageError};

/// The answer to one submitted batch.
pub(crate) type Answer = oneshot::Receiver<Result<(), StorageError>>;

/// A batch waiting for the writer, with where its result goes.
pub(crate) struct Waiting {
    /// The batch.
    pub(crate) batch: Arc<Batch>,
    answer: oneshot::Sender<Result<(), StorageError>>,
}

#[derive(Default)]
struct QueueState {
    waiting: Vec<Waiting>,
    writing: bool,
}

/// Batches waiting to be committed, and whether a writer is taking them.
#[derive(Default)]
pub(crate) struct CommitQueue {
    state: Mutex<QueueState>,
}

impl std::fmt::Debug for CommitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("CommitQueue").field("waiting", &state.waiting.len()).field("writing", &state.writing).finish()
    }
}

impl CommitQueue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // Nothing is left half-changed under this lock: a push, a swap, a flag.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue `batch`: the receiver of its result, and whether the caller must start the writer (no writer runs).
    pub(crate) fn submit(&self, batch: Arc<Batch>) -> (Answer, bool) {
        let (sender, receiver) = oneshot::channel();
        let mut state = self.lock();
        state.waiting.push(Waiting { batch, answer: sender });
        let start = !std::mem::replace(&mut state.writing, true);
        (receiver, start)
    }

    /// The writer's next group: every batch waiting, or `None` when there is none, and then the writer has stopped.
    pub(crate) fn next_group(&self) -> Option<Vec<Waiting>> {
        let mut state = self.lock();
        if state.waiting.is_empty() {
            state.writing = false;
            return None;
        }
        Some(std::mem::take(&mut state.waiting))
    }

    /// The writer failed (it panicked): drop what waits, whose callers then see the writer gone, and let the next
    /// submission start a new writer.
    pub(crate) fn abandon(&self) {
        let mut state = self.lock();
        state.waiting.clear();
        state.writing = false;
    }
}

/// Send each batch of `group` its result (`results` in the group's order). A caller that stopped waiting (its
/// request was cancelled) is not an error: its batch is committed or not as the result says.
pub(crate) fn answer(group: Vec<Waiting>, results: Vec<Result<(), StorageError>>) {
    for (Waiting { batch, answer }, result) in group.into_iter().zip(results) {
        // Let go first: the caller, once woken, takes its batch back without a copy if it holds the last reference.
        drop(batch);
        let _ = answer.send(result);
    }
}

/// What a caller's wait for its answer becomes when the writer went away without one.
pub(crate) fn writer_gone() -> StorageError {
    StorageError::Database("the commit writer stopped before answering".into())
}

/// Abandons the queue if the writer unwinds, so that later batches are not left waiting for a writer that is gone.
pub(crate) struct WriterGuard<'a>(pub(crate) &'a CommitQueue);

impl Drop for WriterGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(run_id: &str) -> Arc<Batch> {
        Arc::new(Batch { run_id: run_id.into(), ..Batch::default() })
    }

    #[test]
    fn the_first_submission_starts_the_writer_and_later_ones_join_its_next_group() {
        let queue = CommitQueue::default();
        let (_a, start_a) = queue.submit(batch("a"));
        let (_b, start_b) = queue.submit(batch("b"));
        assert!(start_a && !start_b);
        let group = queue.next_group().unwrap();
        assert_eq!(group.iter().map(|w| w.batch.run_id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let (_c, start_c) = queue.submit(batch("c"));
        assert!(!start_c, "the writer is still running: it takes c next");
        assert_eq!(queue.next_group().unwrap().len(), 1);
        assert!(queue.next_group().is_none());
        let (_d, start_d) = queue.submit(batch("d"));
        assert!(start_d, "the writer stopped when it found the queue empty");
    }

    #[tokio::test]
    async fn answers_reach_their_own_batches_and_an_abandoned_queue_starts_again() {
        let queue = CommitQueue::default();
        let (a, _) = queue.submit(batch("a"));
        let (b, _) = queue.submit(batch("b"));
        let group = queue.next_group().unwrap();
        answer(group, vec![Ok(()), Err(StorageError::Conflict { run_id: "b".into(), journal_len: 3 })]);
        assert!(a.await.unwrap().is_ok());
        assert!(matches!(b.await.unwrap(), Err(StorageError::Conflict { journal_len: 3, .. })));
        let (c, _) = queue.submit(batch("c"));
        queue.abandon();
        assert!(c.await.is_err(), "an abandoned batch's caller sees the writer gone");
        assert!(queue.submit(batch("d")).1);
    }
}
