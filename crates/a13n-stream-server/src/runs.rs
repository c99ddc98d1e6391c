//! Runs in memory over durable storage: recovery, exactly-once ingest and live fan-out.
//!
//! Each run is behind its own async lock, so batches of one run are serialized while runs proceed in parallel.
//! A batch is decoded and folded in memory, then committed to storage in one transaction (journal lines, events,
//! changed items, continuation) before anything is published. If folding or the commit fails, the in-memory run
//! is dropped and rebuilt from storage on next use, so memory never runs ahead of what is durable.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use a13n_stream_protocol::{DisplayFold, DisplayOptions, FoldError, SourceItem};
use tokio::sync::{broadcast, Mutex};

use crate::storage::{Batch, Storage, StorageError, StoredEvent, StoredItem};

/// How many live events a subscriber may fall behind before it catches up from storage instead.
pub const LIVE_BUFFER: usize = 1024;

/// One delivered AG-UI event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The display sequence.
    pub sequence: u64,
    /// The event JSON.
    pub data: String,
    /// Whether this is the root run's terminal event.
    pub terminal: bool,
}

/// Whether an event's JSON is the root run's terminal event (`RUN_FINISHED` or `RUN_ERROR`).
pub fn is_terminal(event: &str) -> bool {
    event.starts_with(r#"{"type":"RUN_FINISHED""#) || event.starts_with(r#"{"type":"RUN_ERROR""#)
}

/// Why a batch was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The batch does not start at the journal's end and is not an exact retry.
    #[error("the batch must start at offset {expected}")]
    Offset {
        /// The journal's length.
        expected: u64,
    },
    /// A line is malformed or rejected; nothing was committed.
    #[error("line {line}: {message}")]
    Line {
        /// The journal position of the line.
        line: u64,
        /// `input` or `observation`.
        kind: &'static str,
        /// What was wrong.
        message: String,
    },
    /// Storage failed; nothing was acknowledged.
    #[error("storage: {0}")]
    Storage(String),
}

/// The outcome of an accepted batch.
#[derive(Debug, PartialEq, Eq)]
pub struct Accepted {
    /// The journal length after the batch: the next batch's offset.
    pub next_offset: u64,
    /// Events the batch produced (0 for a retried batch).
    pub events: usize,
    /// Whether the batch was an exact retry of stored lines.
    pub duplicate: bool,
    /// The display sequence after the batch.
    pub position: u64,
}

struct RunState {
    fold: DisplayFold,
    journal_len: u64,
    complete: bool,
}

/// What subscribers of a run are told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Live {
    /// An event committed here.
    Event(Delivered),
    /// Storage advanced elsewhere (another host process): catch up from storage.
    Wake,
}

/// One run: its in-memory state (dropped and rebuilt from storage when it may be stale) and its subscribers'
/// channel, which outlives any rebuild so subscribers stay connected.
struct Slot {
    state: Option<RunState>,
    live: broadcast::Sender<Arc<Live>>,
    /// The highest display sequence subscribers were told about, by an event or a wake. Whatever reads a later
    /// position from storage (a rebuild, a commit notice) must wake them, or they would wait for events another
    /// process committed and this one never published.
    announced: u64,
}

impl Default for Slot {
    fn default() -> Self {
        Slot { state: None, live: broadcast::channel(LIVE_BUFFER).0, announced: 0 }
    }
}

impl Slot {
    /// Storage holds events up to `position`: wake the subscribers if they were not told about them yet.
    fn announce(&mut self, position: u64) {
        if position > self.announced {
            self.announced = position;
            // No subscriber is not an error.
            let _ = self.live.send(Arc::new(Live::Wake));
        }
    }
}

/// Counters for the metrics endpoint.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Source lines committed.
    pub lines: AtomicU64,
    /// Batches committed.
    pub batches: AtomicU64,
    /// Batches refused (bad line, offset, storage).
    pub refused: AtomicU64,
    /// Retried batches acknowledged without effect.
    pub duplicates: AtomicU64,
    /// Events delivered to subscribers.
    pub delivered: AtomicU64,
    /// Subscribers connected now.
    pub subscribers: AtomicU64,
    /// Times a subscriber fell behind the live buffer and caught up from storage.
    pub lagged: AtomicU64,
    /// Runs rebuilt from storage.
    pub recoveries: AtomicU64,
    /// Runs whose checkpoint was missing or unreadable, rebuilt from their journal.
    pub journal_rebuilds: AtomicU64,
}

/// The runs of one host.
pub struct Runs {
    storage: Arc<dyn Storage>,
    slots: std::sync::Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
    retain_content: bool,
    /// The host's counters.
    pub metrics: Metrics,
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(work).await.map_err(|error| StorageError::Database(error.to_string()))?
}

impl Runs {
    /// Runs over `storage`; `retain_content` keeps full values in the display (a durable host's choice).
    pub fn new(storage: Arc<dyn Storage>, retain_content: bool) -> Runs {
        Runs { storage, slots: std::sync::Mutex::new(HashMap::new()), retain_content, metrics: Metrics::default() }
    }

    /// The storage behind the runs.
    pub fn storage(&self) -> Arc<dyn Storage> {
        Arc::clone(&self.storage)
    }

    fn slot(&self, run_id: &str) -> Arc<Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(slots.entry(run_id.to_owned()).or_default())
    }

    /// Rebuild a run from storage: its checkpoint (items and continuation), or its journal when the checkpoint
    /// is missing or unreadable.
    async fn load(&self, run_id: &str) -> Result<RunState, StorageError> {
        let storage = self.storage();
        let id = run_id.to_owned();
        let record = blocking(move || storage.run(&id)).await?;
        let options = || DisplayOptions { retain_content: self.retain_content, ..DisplayOptions::default() };
        let Some(record) = record else {
            return Ok(RunState {
                fold: DisplayFold::with_options(run_id, options()),
                journal_len: 0,
                complete: false,
            });
        };
        self.metrics.recoveries.fetch_add(1, Ordering::Relaxed);
        let storage = self.storage();
        let id = run_id.to_owned();
        let items = blocking(move || storage.items(&id, 0, None, usize::MAX)).await?;
        let restored = record.continuation.as_deref().and_then(|continuation| {
            let mut text =
                String::with_capacity(items.iter().map(|i| i.item.len() + 1).sum::<usize>() + continuation.len() + 32);
            text.push_str(r#"{"items":["#);
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    text.push(',');
                }
                text.push_str(&item.item);
            }
            text.push_str(r#"],"continuation":"#);
            text.push_str(continuation);
            text.push('}');
            DisplayFold::restore_json(&text, self.retain_content, None).ok()
        });
        let mut fold = match restored {
            Some(fold) if fold.position().sequence == record.position => fold,
            _ => {
                tracing::warn!(run_id, "checkpoint missing or unreadable; rebuilding the display from the journal");
                self.metrics.journal_rebuilds.fetch_add(1, Ordering::Relaxed);
                let storage = self.storage();
                let id = run_id.to_owned();
                let journal_len = record.journal_len;
                let lines = blocking(move || storage.journal(&id, 0, journal_len)).await?;
                let mut fold = DisplayFold::with_options(run_id, options());
                for line in &lines {
                    if let Ok(item) = SourceItem::from_json(line) {
                        let _ = fold.fold_source(&item);
                    }
                }
                fold
            }
        };
        // Everything restored is already stored: start checkpoint tracking afresh.
        fold.capture_delta();
        fold.clear_changed();
        Ok(RunState { fold, journal_len: record.journal_len, complete: record.complete })
    }

    async fn state<'a>(&self, run_id: &str, slot: &'a mut Slot) -> Result<&'a mut RunState, StorageError> {
        if slot.state.is_none() {
            let state = self.load(run_id).await?;
            // The rebuilt run may be ahead of what this process published (another process ingested).
            slot.announce(state.fold.position().sequence);
            slot.state = Some(state);
        }
        slot.state.as_mut().ok_or_else(|| StorageError::Database("run state unavailable".into()))
    }

    /// Take one batch of source lines starting at journal position `offset`.
    pub async fn ingest(&self, run_id: &str, offset: u64, lines: Vec<String>) -> Result<Accepted, IngestError> {
        let slot = self.slot(run_id);
        let mut slot = slot.lock().await;
        let mut result = self.ingest_locked(run_id, offset, &lines, &mut slot).await;
        if matches!(result, Err(IngestError::Offset { .. })) {
            // The in-memory run may be behind storage (another process ingested): decide again from storage.
            slot.state = None;
            result = self.ingest_locked(run_id, offset, &lines, &mut slot).await;
        }
        if result.is_err() {
            self.metrics.refused.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    async fn ingest_locked(
        &self,
        run_id: &str,
        offset: u64,
        lines: &[String],
        slot: &mut Slot,
    ) -> Result<Accepted, IngestError> {
        let storage_error = |error: StorageError| IngestError::Storage(error.to_string());
        let live = slot.live.clone();
        let state = self.state(run_id, slot).await.map_err(storage_error)?;
        let count = lines.len() as u64;
        if offset != state.journal_len {
            if offset < state.journal_len && offset + count <= state.journal_len {
                let storage = self.storage();
                let id = run_id.to_owned();
                let stored =
                    blocking(move || storage.journal(&id, offset, offset + count)).await.map_err(storage_error)?;
                if stored == *lines {
                    self.metrics.duplicates.fetch_add(1, Ordering::Relaxed);
                    return Ok(Accepted {
                        next_offset: state.journal_len,
                        events: 0,
                        duplicate: true,
                        position: state.fold.position().sequence,
                    });
                }
            }
            return Err(IngestError::Offset { expected: state.journal_len });
        }
        // Decode everything first: a malformed line changes nothing.
        let mut items = Vec::with_capacity(lines.len());
        for (index, line) in lines.iter().enumerate() {
            let item = SourceItem::from_json(line).map_err(|error| IngestError::Line {
                line: offset + index as u64,
                kind: "input",
                message: error.to_string(),
            })?;
            items.push(item);
        }
        let mut events = Vec::new();
        let mut terminal = false;
        for (index, item) in items.iter().enumerate() {
            match state.fold.fold_source(item) {
                Ok(observed) => {
                    for entry in observed {
                        let data = a13n_stream_protocol::display::event_json(&entry.event);
                        terminal |= is_terminal(&data);
                        events.push(StoredEvent { sequence: entry.sequence, event: data });
                    }
                }
                Err(error) => {
                    // Earlier lines of the batch were folded in memory: drop the run and rebuild it from storage.
                    slot.state = None;
                    let kind = match error {
                        FoldError::Observation(_) => "observation",
                        _ => "input",
                    };
                    return Err(IngestError::Line { line: offset + index as u64, kind, message: error.to_string() });
                }
            }
        }
        let delta = state.fold.capture_delta();
        let position = delta.continuation.position.sequence;
        let complete = state.complete || terminal;
        let batch = Batch {
            run_id: run_id.to_owned(),
            offset,
            lines: lines.to_vec(),
            events,
            items: delta
                .items
                .iter()
                .map(|item| StoredItem { id: item.id.clone(), ordinal: item.ordinal, item: item.to_json() })
                .collect(),
            continuation: delta.continuation.to_json(),
            position,
            complete,
        };
        let storage = self.storage();
        let committed = tokio::task::spawn_blocking(move || storage.commit(&batch).map(|()| batch)).await;
        let batch = match committed {
            Ok(Ok(batch)) => batch,
            Ok(Err(StorageError::Conflict { journal_len, .. })) => {
                slot.state = None;
                return Err(IngestError::Offset { expected: journal_len });
            }
            Ok(Err(error)) => {
                slot.state = None;
                return Err(IngestError::Storage(error.to_string()));
            }
            Err(error) => {
                slot.state = None;
                return Err(IngestError::Storage(error.to_string()));
            }
        };
        state.journal_len += count;
        state.complete = complete;
        self.metrics.lines.fetch_add(count, Ordering::Relaxed);
        self.metrics.batches.fetch_add(1, Ordering::Relaxed);
        let (produced, next_offset) = (batch.events.len(), state.journal_len);
        slot.announced = slot.announced.max(position);
        for event in batch.events {
            let terminal = is_terminal(&event.event);
            // No subscriber is not an error: events are stored for whoever connects later.
            let delivered = Delivered { sequence: event.sequence, data: event.event, terminal };
            let _ = live.send(Arc::new(Live::Event(delivered)));
        }
        Ok(Accepted { next_offset, events: produced, duplicate: false, position })
    }

    /// Subscribe to a run's live events; also returns the committed position and whether the run is complete.
    pub async fn subscribe(&self, run_id: &str) -> Result<(broadcast::Receiver<Arc<Live>>, u64, bool), StorageError> {
        let slot = self.slot(run_id);
        let mut slot = slot.lock().await;
        let receiver = slot.live.subscribe();
        let state = self.state(run_id, &mut slot).await?;
        Ok((receiver, state.fold.position().sequence, state.complete))
    }

    /// Another process committed to `run_id`: drop the in-memory run if it is behind storage, and wake its
    /// subscribers to catch up from storage unless they were already told about the stored position.
    pub async fn advanced_elsewhere(&self, run_id: &str) {
        let slot = self.slot(run_id);
        let mut slot = slot.lock().await;
        let storage = self.storage();
        let id = run_id.to_owned();
        let Ok(Some(record)) = blocking(move || storage.run(&id)).await else { return };
        if slot.state.as_ref().is_some_and(|state| state.journal_len < record.journal_len) {
            slot.state = None;
        }
        slot.announce(record.position);
    }

    /// The committed display snapshot JSON of a run.
    pub async fn snapshot(&self, run_id: &str) -> Result<String, StorageError> {
        let slot = self.slot(run_id);
        let mut slot = slot.lock().await;
        let state = self.state(run_id, &mut slot).await?;
        Ok(state.fold.export_json())
    }

    /// The committed position and completeness of a run.
    pub async fn status(&self, run_id: &str) -> Result<(u64, bool, u64), StorageError> {
        let slot = self.slot(run_id);
        let mut slot = slot.lock().await;
        let state = self.state(run_id, &mut slot).await?;
        Ok((state.fold.position().sequence, state.complete, state.journal_len))
    }
}

/// Whether a run id is acceptable in a URL and as a storage key.
pub fn valid_run_id(run_id: &str) -> bool {
    (1..=128).contains(&run_id.len())
        && run_id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// The `sequence` of a `Last-Event-ID` / `after` value: `attempt-sequence` or a bare sequence.
pub fn parse_position(text: &str) -> Option<u64> {
    let sequence = text.rsplit_once('-').map_or(text, |(_, sequence)| sequence);
    sequence.trim().parse().ok()
}
