//! Runs in memory over durable storage: recovery, exactly-once ingest, identity checks and live fan-out.
//!
//! Each run is behind its own async lock, so batches of one run are serialized while runs proceed in parallel.
//! A batch is decoded and folded in memory, then committed to storage in one transaction (journal lines, events,
//! changed items, continuation, rejected lines) before anything is published. If folding or the commit fails, the
//! in-memory run is dropped and rebuilt from storage on next use, so memory never runs ahead of what is durable.
//!
//! Memory is bounded: reads of runs that do not exist create nothing, and a run nobody is using (no request
//! holds it, no subscriber listens) is dropped once it has been idle for [`RunLimits::idle`] or when more than
//! [`RunLimits::max_resident`] runs with stored data are held, least recently used first. It is rebuilt from
//! storage on next use. A slot that holds no run with stored data (a subscriber waiting for a run not ingested
//! yet, a refused first batch) is dropped as soon as its last holder and listener leave, and never counts
//! against the limit, so such requests cannot push real runs out of memory.

use crate::wire::RunOutcome;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use a13n_stream_protocol::agui::EventType;
use a13n_stream_protocol::display::ObservedLine;
use a13n_stream_protocol::{ContentPolicy, DisplayFold, DisplayOptions, FoldError, SourceItem};
use tokio::sync::{broadcast, Mutex, OwnedMutexGuard};

use crate::metrics::Metrics;
use crate::patch::item_patch;
use crate::postgres::Notice;
use crate::storage::{Batch, Rejection, Storage, StorageError, StoredEvent, StoredItem, NO_ITEM};

/// How many live messages a subscriber may fall behind before it catches up from storage instead. A committed batch
/// sends two (its events, then its display change), so this is 16 batches; a message is dropped once every
/// subscriber has read it, so only a lagging subscriber keeps any.
pub const LIVE_BUFFER: usize = 32;

/// Runs read per page by retention.
const EXPIRE_PAGE: usize = 256;

/// One delivered AG-UI event. Its texts are shared: every subscriber of the run takes them without a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The display sequence.
    pub sequence: u64,
    /// The event JSON.
    pub data: Arc<str>,
    /// The item reference JSON the fold handed out with it (`null`: none).
    pub item: Arc<str>,
}

/// The events of a batch's [`Live::Events`] after sequence `last`, when they follow it directly (events at or
/// before it were delivered already); `None` when there is a gap: the subscriber missed a message, or another
/// process committed in between, and catches up from storage.
pub(crate) fn following(events: &[Delivered], last: u64) -> Option<&[Delivered]> {
    let fresh = &events[events.partition_point(|event| event.sequence <= last)..];
    match fresh.first() {
        Some(first) if first.sequence != last + 1 => None,
        _ => Some(fresh),
    }
}

/// Whether an event's JSON is the root run's terminal event (`RUN_FINISHED` or `RUN_ERROR`).
pub fn is_terminal(event: &str) -> bool {
    EventType::of_json(event).is_some_and(EventType::ends_run)
}

/// Why a batch at a stored offset was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conflict {
    /// The batch starts before the journal's end and its stored part matches: resend from the expected offset.
    Behind,
    /// The batch starts after the journal's end: lines are missing in between.
    Ahead,
    /// A stored line at the batch's positions differs from the batch's line there.
    DifferentContent,
}

impl Conflict {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Conflict::Behind => "behind",
            Conflict::Ahead => "ahead",
            Conflict::DifferentContent => "different_content",
        }
    }
}

/// What a conflict says: how the batch stands to the journal, and where the next batch starts.
fn offset_message(expected: u64, conflict: Conflict, line: Option<u64>) -> String {
    match (conflict, line) {
        (Conflict::DifferentContent, Some(line)) => format!(
            "line {line} differs from the journal's line {line}: stored lines may be sent again only as they are \
             (the journal holds {expected} lines; the next batch starts at offset {expected})"
        ),
        (Conflict::Ahead, _) => {
            format!("the batch starts after the journal's end: lines are missing; the next batch starts at offset {expected}")
        }
        _ => format!(
            "the batch starts inside the journal, its stored lines as they are: send the lines from offset {expected} \
             on ({})",
            conflict.as_str()
        ),
    }
}

/// What a rejected line was: malformed, or refused by the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// Not a valid source item.
    Input,
    /// A valid source item the protocol refused.
    Observation,
}

impl LineKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Input => "input",
            LineKind::Observation => "observation",
        }
    }
}

/// What to do with a line the protocol rejects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnReject {
    /// Refuse the whole batch; nothing is committed (the default).
    #[default]
    Refuse,
    /// Journal the line at its position, record the rejection, and go on with the next line, as the reference
    /// skips a rejected item: offsets stay equal to the Harness's own line positions.
    Skip,
}

/// Why a batch was not accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IngestError {
    /// The batch does not start at the journal's end and is not an exact retry.
    #[error("{}", offset_message(*expected, *conflict, *line))]
    Offset {
        /// The journal's length.
        expected: u64,
        /// How the batch relates to the journal.
        conflict: Conflict,
        /// [`Conflict::DifferentContent`]: the journal position of the first line that differs.
        line: Option<u64>,
    },
    /// A line is malformed or rejected; nothing was committed.
    #[error("line {line}: {message}")]
    Line {
        /// The journal position of the line.
        line: u64,
        /// What kind of failure.
        kind: LineKind,
        /// What was wrong.
        message: String,
    },
    /// A line belongs to another run or thread than the run it was sent to; nothing was committed.
    #[error("line {line}: {field} is {found:?}; this run's is {expected:?}")]
    Identity {
        /// The journal position of the line.
        line: u64,
        /// `run_id` or `thread_id`.
        field: &'static str,
        /// The run's value.
        expected: String,
        /// The line's value.
        found: String,
    },
    /// A line comes after the run's terminal result; nothing was committed.
    #[error("line {line}: the run ended with its terminal result; no line may follow it")]
    AfterTerminal {
        /// The journal position of the line.
        line: u64,
    },
    /// The body holds no line.
    #[error("the batch holds no line")]
    Empty,
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
    /// Lines journaled as rejected and skipped ([`OnReject::Skip`]).
    pub rejected: Vec<Rejection>,
}

struct RunState {
    fold: DisplayFold,
    journal_len: u64,
    complete: bool,
    /// The stored run's incarnation (see [`crate::storage::RunRecord::incarnation`]); 0 before the first commit.
    incarnation: u64,
    /// Journal bytes folded since the stored checkpoint.
    since_checkpoint: u64,
    /// The bytes the stored checkpoint took (items and continuation): the next waits for as many journal bytes.
    checkpoint_bytes: u64,
    /// The JSON last published of each item in progress: a later change of it goes to `/display` as a patch.
    published: HashMap<String, String>,
}

impl RunState {
    fn empty(fold: DisplayFold) -> RunState {
        RunState {
            fold,
            journal_len: 0,
            complete: false,
            incarnation: 0,
            since_checkpoint: 0,
            checkpoint_bytes: 0,
            published: HashMap::new(),
        }
    }
}

/// Fold journal lines again (rejected lines were journaled and skipped; folding is atomic per line, so they skip
/// again); the journal bytes they take.
fn replay(fold: &mut DisplayFold, lines: &[String]) -> u64 {
    for line in lines {
        let _ = fold.replay_line(line);
    }
    lines.iter().map(|line| line.len() as u64 + 1).sum()
}

/// The display sequence that last changed an item (`position` if its stream id is unreadable).
fn last_changed(item: &a13n_stream_protocol::Item, position: u64) -> u64 {
    item.last_stream_id.parse::<a13n_stream_protocol::StreamPosition>().map_or(position, |at| at.sequence)
}

/// An item as the host stores and sends it, with the display sequence that last changed it.
fn stored_item(item: &a13n_stream_protocol::Item, position: u64) -> StoredItem {
    StoredItem {
        id: item.id.clone(),
        ordinal: item.ordinal,
        changed: last_changed(item, position),
        item: item.to_json(),
    }
}

/// For subscribers of `/display` (when `gather`): every item the batch changed, each as a patch when they hold
/// it already. Without them nothing is gathered, and what they were sent is forgotten, so that the first batch
/// gathered again sends whole items.
fn display_change(state: &mut RunState, position: u64, gather: bool) -> Option<Vec<(StoredItem, Option<String>)>> {
    if !gather {
        state.published.clear();
        return None;
    }
    let mut changed: Vec<(StoredItem, Option<String>)> = Vec::new();
    for item in state.fold.changed().iter().filter_map(|id| state.fold.item(id)) {
        let stored = stored_item(&item, position);
        let patch = state.published.get(&item.id).and_then(|old| item_patch(old, &stored.item));
        if item.state == a13n_stream_protocol::display::ItemState::InProgress {
            state.published.insert(item.id.clone(), stored.item.clone());
        } else {
            state.published.remove(&item.id);
        }
        changed.push((stored, patch));
    }
    changed.sort_by_key(|(item, _)| item.ordinal);
    Some(changed)
}

/// What one committed batch changed in the run's display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayBatch {
    /// The display sequence before the batch.
    pub from: u64,
    /// The display sequence after the batch.
    pub to: u64,
    /// Whether the run's terminal event is committed.
    pub complete: bool,
    /// The items the batch changed, as stored, each with its patch from the version published before, when
    /// there is one (see [`crate::patch`]). `None` when no `/display` subscriber listened as the batch was folded:
    /// they are gathered only for one (their cost grows with the items' length), and one that finds them missing
    /// catches up instead.
    pub items: Option<Vec<(StoredItem, Option<String>)>>,
}

/// What a subscriber of a run follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Follows {
    /// Events and the ends of batches (`/events`, `/observed`).
    Events,
    /// Also the items each batch changed (`/display`), which are gathered only while such a subscriber listens.
    Display,
}

/// What subscribers of a run are told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Live {
    /// The events of a batch committed here, in sequence order, consecutive (never empty): one message a batch,
    /// so that a subscriber wakes once for it and writes its frames together.
    Events(Vec<Delivered>),
    /// The display change of a batch committed here (after its events).
    Batch(Arc<DisplayBatch>),
    /// Storage advanced elsewhere (another host process): catch up from storage.
    Wake,
    /// The run was deleted (here, by retention, or by another process): its streams end.
    Deleted,
}

/// One run: its subscribers' channel, which outlives any rebuild so subscribers stay connected, and its
/// in-memory state behind the run's lock.
struct Slot {
    live: broadcast::Sender<Arc<Live>>,
    inner: Arc<Mutex<SlotState>>,
    /// How many listeners follow the run's display (see [`Follows::Display`]); counted up under the run's lock,
    /// down by their [`Listener`]s when they leave.
    display_followers: AtomicUsize,
}

#[derive(Default)]
struct SlotState {
    /// Dropped and rebuilt from storage when it cannot be trusted (a refused or abandoned batch, another
    /// incarnation); brought up to storage ([`SlotState::behind`]) when another process committed after it.
    state: Option<RunState>,
    /// Storage holds lines of the run that `state` has not folded (another process committed them): the next use
    /// folds them on top, or rebuilds ([`Runs::catch_up`]).
    behind: bool,
    /// The highest display sequence subscribers were told about, by an event or a wake. Whatever reads a later
    /// position from storage (a rebuild, a commit notice) must wake them, or they would wait for events another
    /// process committed and this one never published.
    announced: u64,
    /// The run was deleted while this slot held it: the slot has left the table, and whoever locks it next takes
    /// a fresh slot of the run instead.
    retired: bool,
    /// The incarnation of the stored run the subscribers follow (0: not known yet, or a run stored before
    /// incarnations were kept).
    incarnation: u64,
    /// A batch was folded into `state` and its commit not yet answered: if the ingest holding the lock is dropped
    /// there (its client went away, a timeout, shutdown), `state` may hold lines storage does not, and whoever
    /// locks the slot next drops it ([`SlotState::settle`]).
    unsettled: bool,
}

impl SlotState {
    /// The state, when it is storage's: held and not behind it.
    fn current(&self) -> Option<&RunState> {
        self.state.as_ref().filter(|_| !self.behind)
    }

    /// Drop a state an abandoned ingest left ahead of storage (see [`SlotState::unsettled`]).
    fn settle(&mut self) {
        if std::mem::take(&mut self.unsettled) {
            self.state = None;
        }
    }

    /// Storage holds incarnation `incarnation` of the run. If the subscribers followed another one, that run was
    /// deleted (by another process; the run id was then ingested again): their streams end, and positions start
    /// afresh.
    fn follow(&mut self, incarnation: u64, live: &broadcast::Sender<Arc<Live>>) {
        if incarnation == 0 || incarnation == self.incarnation {
            return;
        }
        if self.incarnation != 0 {
            let _ = live.send(Arc::new(Live::Deleted));
            self.announced = 0;
        }
        self.incarnation = incarnation;
    }

    /// Storage holds events up to `position`: wake the subscribers if they were not told about them yet.
    fn announce(&mut self, position: u64, live: &broadcast::Sender<Arc<Live>>) {
        if position > self.announced {
            self.announced = position;
            // No subscriber is not an error.
            let _ = live.send(Arc::new(Live::Wake));
        }
    }
}

struct Entry {
    slot: Arc<Slot>,
    used: Instant,
    /// The slot has held the run's state with stored data: it counts against [`RunLimits::max_resident`].
    holds_run: bool,
}

impl Entry {
    /// Nobody holds the slot (the map's lock is held, so nobody can take it either) and nobody listens.
    fn evictable(&self) -> bool {
        Arc::strong_count(&self.slot) == 1 && self.slot.live.receiver_count() == 0
    }

    /// The slot holds no run state with stored data (a ghost: a subscriber's channel for a run not ingested yet,
    /// or what a refused first batch left). Only called on an evictable entry, whose lock nobody holds.
    fn empty(&self) -> bool {
        self.slot.inner.try_lock().is_ok_and(|inner| inner.state.as_ref().is_none_or(|state| state.journal_len == 0))
    }
}

/// The runs in memory, and how many of them count against the limit, under one lock.
#[derive(Default)]
struct Table {
    entries: HashMap<String, Entry>,
    /// Entries with `holds_run`.
    holding: usize,
}

impl Table {
    fn remove(&mut self, run_id: &str) -> Option<Entry> {
        let entry = self.entries.remove(run_id)?;
        self.holding -= usize::from(entry.holds_run);
        Some(entry)
    }

    /// Whether `run_id`'s entry is `slot` (not a later slot of the same run).
    fn is(&self, run_id: &str, slot: *const Slot) -> bool {
        self.entries.get(run_id).is_some_and(|entry| std::ptr::eq(Arc::as_ptr(&entry.slot), slot))
    }
}

/// The table of runs in memory, shared with the [`Listener`]s that release their slot when they leave.
struct Resident {
    table: std::sync::Mutex<Table>,
    limits: RunLimits,
    metrics: Arc<Metrics>,
}

impl Resident {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn count(&self, table: &Table) {
        self.metrics.resident_runs.set(table.entries.len() as i64);
    }

    /// The slot of `run_id` has held its state with stored data: count it, and drop the least recently used
    /// idle runs beyond the limit.
    fn holds_run(&self, run_id: &str) {
        let mut table = self.lock();
        let Some(entry) = table.entries.get_mut(run_id) else { return };
        if entry.holds_run {
            return;
        }
        entry.holds_run = true;
        table.holding += 1;
        while table.holding > self.limits.max_resident {
            let oldest = table
                .entries
                .iter()
                .filter(|(_, entry)| entry.holds_run && entry.evictable())
                .min_by_key(|(_, entry)| entry.used);
            let Some(id) = oldest.map(|(id, _)| id.clone()) else { break };
            table.remove(&id);
            self.metrics.evictions.inc();
        }
        self.count(&table);
    }

    /// A holder or listener of `run_id`'s slot is done with it: `leaving` (its handle on the slot, its receiver)
    /// is dropped under the table's lock, and a slot left without holder, listener or run data goes at once.
    fn release(&self, run_id: &str, slot: Arc<Slot>, leaving: impl Sized) {
        let mut table = self.lock();
        let pointer = Arc::as_ptr(&slot);
        drop((slot, leaving));
        if table.is(run_id, pointer)
            && table.entries.get(run_id).is_some_and(|entry| entry.evictable() && entry.empty())
        {
            table.remove(run_id);
            self.count(&table);
        }
    }
}

/// A subscription to a run's live channel. When the last listener of a run that holds no stored data leaves,
/// the run's slot leaves memory with it.
pub struct Listener {
    receiver: Option<broadcast::Receiver<Arc<Live>>>,
    release: Option<(Arc<Resident>, String, Arc<Slot>)>,
    /// Whether this listener counts among the run's display followers.
    display: bool,
}

impl Listener {
    /// The next message (see [`broadcast::Receiver::recv`]).
    pub async fn recv(&mut self) -> Result<Arc<Live>, broadcast::error::RecvError> {
        match self.receiver.as_mut() {
            Some(receiver) => receiver.recv().await,
            None => Err(broadcast::error::RecvError::Closed),
        }
    }

    /// The next message if one is waiting (see [`broadcast::Receiver::try_recv`]).
    pub fn try_recv(&mut self) -> Result<Arc<Live>, broadcast::error::TryRecvError> {
        match self.receiver.as_mut() {
            Some(receiver) => receiver.try_recv(),
            None => Err(broadcast::error::TryRecvError::Closed),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some((resident, run_id, slot)) = self.release.take() {
            if self.display {
                slot.display_followers.fetch_sub(1, Ordering::Relaxed);
            }
            resident.release(&run_id, slot, self.receiver.take());
        }
    }
}

/// How many runs stay in memory.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    /// The most runs held in memory; beyond it the least recently used idle run is dropped.
    pub max_resident: usize,
    /// A run unused for this long is dropped from memory.
    pub idle: Duration,
    /// Journal bytes after which an open run's display (the items changed since, and the continuation) is stored
    /// again, or after as many bytes as the last such checkpoint took, if more. Recovery folds the lines after
    /// the checkpoint again, so this also bounds what a rebuild folds.
    pub checkpoint_bytes: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits { max_resident: 1024, idle: Duration::from_secs(300), checkpoint_bytes: 64 * 1024 }
    }
}

/// The committed position of a run and whether it is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStatus {
    /// The display sequence of the last committed event.
    pub position: u64,
    /// Whether the root run's terminal event is committed.
    pub complete: bool,
    /// Source lines journaled.
    pub journal_len: u64,
}

/// The runs of one host.
pub struct Runs {
    storage: Arc<dyn Storage>,
    resident: Arc<Resident>,
    retain_content: bool,
    /// The host's counters.
    pub metrics: Arc<Metrics>,
}

impl Runs {
    /// Whether the displays keep whole values (`--retain-content`).
    pub(crate) fn retains_content(&self) -> bool {
        self.retain_content
    }

    /// Runs over `storage`; `retain_content` keeps full values in the display (a durable host's choice).
    pub fn new(storage: Arc<dyn Storage>, retain_content: bool) -> Runs {
        Runs::with_limits(storage, retain_content, RunLimits::default(), Arc::default())
    }

    /// Runs over `storage` with explicit memory limits, counting on `metrics`.
    pub fn with_limits(
        storage: Arc<dyn Storage>,
        retain_content: bool,
        limits: RunLimits,
        metrics: Arc<Metrics>,
    ) -> Runs {
        let resident = Arc::new(Resident { table: std::sync::Mutex::default(), limits, metrics: Arc::clone(&metrics) });
        Runs { storage, resident, retain_content, metrics }
    }

    /// The storage behind the runs.
    pub fn storage(&self) -> Arc<dyn Storage> {
        Arc::clone(&self.storage)
    }

    /// The run's slot, created if needed (a new slot does not count against the limit until it holds the run's
    /// stored data).
    fn slot(&self, run_id: &str) -> Arc<Slot> {
        let mut table = self.resident.lock();
        let now = Instant::now();
        if let Some(entry) = table.entries.get_mut(run_id) {
            entry.used = now;
            return Arc::clone(&entry.slot);
        }
        let slot = Arc::new(Slot {
            live: broadcast::channel(LIVE_BUFFER).0,
            inner: Arc::default(),
            display_followers: AtomicUsize::new(0),
        });
        table.entries.insert(run_id.to_owned(), Entry { slot: Arc::clone(&slot), used: now, holds_run: false });
        self.resident.count(&table);
        slot
    }

    /// The run's slot if it is in memory.
    fn resident(&self, run_id: &str) -> Option<Arc<Slot>> {
        let mut table = self.resident.lock();
        let entry = table.entries.get_mut(run_id)?;
        entry.used = Instant::now();
        Some(Arc::clone(&entry.slot))
    }

    /// The run's slot, locked: never a slot a delete retired (the next slot of the run is taken instead).
    async fn locked(&self, run_id: &str) -> (Arc<Slot>, OwnedMutexGuard<SlotState>) {
        loop {
            let slot = self.slot(run_id);
            let mut guard = Arc::clone(&slot.inner).lock_owned().await;
            guard.settle();
            if !guard.retired {
                return (slot, guard);
            }
        }
    }

    /// The run was deleted: its state goes, its subscribers are told (their streams end), and its slot leaves
    /// the table (the lock is held, so nobody is using it).
    fn retire(&self, run_id: &str, slot: &Arc<Slot>, guard: &mut SlotState) {
        guard.state = None;
        guard.retired = true;
        // No subscriber is not an error.
        let _ = slot.live.send(Arc::new(Live::Deleted));
        let mut table = self.resident.lock();
        if table.is(run_id, Arc::as_ptr(slot)) {
            table.remove(run_id);
            self.resident.count(&table);
        }
    }

    /// Drop every run idle for longer than the limit; returns how many were dropped. The host calls it
    /// periodically.
    pub fn sweep(&self) -> usize {
        let mut table = self.resident.lock();
        let idle = self.resident.limits.idle;
        let stale: Vec<String> = table
            .entries
            .iter()
            .filter(|(_, entry)| entry.evictable() && entry.used.elapsed() >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &stale {
            table.remove(id);
        }
        self.metrics.evictions.inc_by(stale.len() as u64);
        self.resident.count(&table);
        stale.len()
    }

    /// How many runs are held in memory (runs with stored data, and slots someone holds or listens to).
    pub fn resident_count(&self) -> usize {
        self.resident.lock().entries.len()
    }

    /// Whether the run is held in memory.
    pub fn is_resident(&self, run_id: &str) -> bool {
        self.resident.lock().entries.contains_key(run_id)
    }

    fn options(&self) -> DisplayOptions {
        DisplayOptions { content: ContentPolicy::new(false, self.retain_content), ..DisplayOptions::default() }
    }

    /// Rebuild a run from storage: its last checkpoint (items and continuation) and the journal lines after it,
    /// or the whole journal when the checkpoint is unreadable or does not lead to the stored position.
    async fn load(&self, run_id: &str) -> Result<RunState, StorageError> {
        let Some(record) = self.storage.run(run_id).await? else {
            return Ok(RunState::empty(DisplayFold::with_options(run_id, self.options())));
        };
        self.metrics.recoveries.inc();
        let fresh = || DisplayFold::with_options(run_id, self.options());
        let (mut fold, from, checkpoint_bytes) = match record.continuation.as_deref() {
            None => (fresh(), 0, 0),
            Some(continuation) => {
                let items = self.storage.items(run_id, 0, None, usize::MAX).await?;
                let parts = items.iter().map(|item| item.item.as_str());
                match DisplayFold::restore_parts(parts, continuation, self.retain_content, None) {
                    // The next checkpoint stores only what changed since this one: it waits for the least bytes.
                    Ok(fold) => (fold, record.checkpoint_len, 0),
                    Err(_) => (fresh(), u64::MAX, 0),
                }
            }
        };
        // What the checkpoint holds is stored: the lines after it are not, and the next checkpoint stores them.
        fold.capture_delta();
        let mut since_checkpoint = 0;
        if from <= record.journal_len {
            since_checkpoint = replay(&mut fold, &self.storage.journal(run_id, from, record.journal_len).await?);
        }
        if from > record.journal_len || fold.position().sequence != record.position {
            tracing::warn!(run_id, "checkpoint unreadable or not at the stored position; rebuilding from the journal");
            self.metrics.journal_rebuilds.inc();
            fold = fresh();
            since_checkpoint = replay(&mut fold, &self.storage.journal(run_id, 0, record.journal_len).await?);
        }
        fold.clear_changed();
        Ok(RunState {
            fold,
            journal_len: record.journal_len,
            complete: record.complete,
            incarnation: record.incarnation,
            since_checkpoint,
            checkpoint_bytes,
            published: HashMap::new(),
        })
    }

    /// Bring the run in memory up to storage when another process committed after it: the journal lines it has
    /// not folded, folded on top. The fold is deterministic, so this is the display a rebuild would make, for a
    /// cost that grows with those lines rather than with the run. `false` (the state is then to be rebuilt) when
    /// storage holds another incarnation, less than the state, or a position the lines do not lead to.
    async fn catch_up(
        &self,
        run_id: &str,
        slot: &mut SlotState,
        live: &broadcast::Sender<Arc<Live>>,
    ) -> Result<bool, StorageError> {
        let (Some(record), Some(state)) = (self.storage.run(run_id).await?, slot.state.as_mut()) else {
            return Ok(false);
        };
        if record.incarnation != state.incarnation || record.journal_len < state.journal_len {
            return Ok(false);
        }
        if record.journal_len == state.journal_len {
            // Nothing new (a notice of this process's own commit, or one already read).
            return Ok(state.fold.position().sequence == record.position);
        }
        let lines = self.storage.journal(run_id, state.journal_len, record.journal_len).await?;
        if lines.len() as u64 != record.journal_len - state.journal_len {
            return Ok(false);
        }
        // Journal bytes since this state's checkpoint: more than since the stored one, if the other process took
        // a checkpoint meanwhile, so the next checkpoint comes no later than it should.
        state.since_checkpoint += replay(&mut state.fold, &lines);
        if state.fold.position().sequence != record.position {
            return Ok(false);
        }
        // What the lines changed is stored by the process that committed them; `/display` subscribers read it from
        // storage, so the next batch sends them whole items, not patches of versions they may not hold.
        state.fold.clear_changed();
        state.published.clear();
        state.journal_len = record.journal_len;
        state.complete = record.complete;
        self.metrics.catch_ups.inc();
        slot.announce(record.position, live);
        Ok(true)
    }

    async fn state<'a>(
        &self,
        run_id: &str,
        slot: &'a mut SlotState,
        live: &broadcast::Sender<Arc<Live>>,
    ) -> Result<&'a mut RunState, StorageError> {
        // `behind` is cleared only once the state is caught up or dropped: a read dropped (its client went away) or
        // failing while it awaits storage leaves the run behind, never served as current.
        if slot.behind && slot.state.is_some() && !self.catch_up(run_id, slot, live).await? {
            slot.state = None;
        }
        slot.behind = false;
        if slot.state.is_none() {
            let state = self.load(run_id).await?;
            slot.follow(state.incarnation, live);
            // The rebuilt run may be ahead of what this process published (another process ingested).
            slot.announce(state.fold.position().sequence, live);
            if state.journal_len > 0 {
                self.resident.holds_run(run_id);
            }
            slot.state = Some(state);
        }
        slot.state.as_mut().ok_or_else(|| StorageError::Database("run state unavailable".into()))
    }

    /// Take one batch of source lines starting at journal position `offset`.
    pub async fn ingest(
        &self,
        run_id: &str,
        offset: u64,
        lines: Vec<String>,
        on_reject: OnReject,
    ) -> Result<Accepted, IngestError> {
        if lines.is_empty() {
            self.metrics.refused.inc();
            return Err(IngestError::Empty);
        }
        let (slot, mut guard) = self.locked(run_id).await;
        let result = self.ingest_locked(run_id, offset, lines, on_reject, &mut guard, &slot).await;
        drop(guard);
        if result.is_err() {
            self.metrics.refused.inc();
        }
        // A refused batch of a run that was never stored leaves nothing in memory.
        self.resident.release(run_id, slot, ());
        result
    }

    async fn ingest_locked(
        &self,
        run_id: &str,
        offset: u64,
        lines: Vec<String>,
        on_reject: OnReject,
        slot: &mut SlotState,
        shared: &Slot,
    ) -> Result<Accepted, IngestError> {
        let storage_error = |error: StorageError| IngestError::Storage(error.to_string());
        let live = &shared.live;
        let (mut lines, mut refolds) = (lines, 0);
        let (batch, changed) = loop {
            let mut journal_len = self.state(run_id, slot, live).await.map_err(storage_error)?.journal_len;
            if offset != journal_len {
                // Answered from the committed position. Only when storage moved on (another process ingested) is the
                // in-memory run behind, and only then does it catch up (or, failing that, is it rebuilt).
                let stored = self.storage.run(run_id).await.map_err(storage_error)?.map_or(0, |r| r.journal_len);
                if stored != journal_len {
                    slot.behind = true;
                    journal_len = self.state(run_id, slot, live).await.map_err(storage_error)?.journal_len;
                }
                if offset != journal_len {
                    let position = slot.state.as_ref().map_or(0, |state| state.fold.position().sequence);
                    return self.retry_or_conflict(run_id, offset, &lines, journal_len, position).await;
                }
            }
            let prepared = self.fold_batch(run_id, offset, lines, on_reject, slot, shared);
            let (batch, changed) = match prepared.await {
                Ok(prepared) => prepared,
                Err(error) => {
                    // Earlier lines of the batch were folded in memory: drop the run and rebuild it from storage.
                    slot.state = None;
                    return Err(error);
                }
            };
            let batch = Arc::new(batch);
            slot.unsettled = true;
            let committed = self.storage.commit(Arc::clone(&batch)).await;
            slot.unsettled = false;
            match committed {
                Ok(()) => break (Arc::try_unwrap(batch).unwrap_or_else(|shared| (*shared).clone()), changed),
                Err(StorageError::Conflict { .. }) => {
                    // Another process committed at this offset first (its notice had not arrived yet), or deleted the
                    // run (and it was ingested again): decide again from storage, where the batch may turn out to be an
                    // exact retry.
                    slot.state = None;
                    let state = self.state(run_id, slot, live).await.map_err(storage_error)?;
                    let (journal_len, position) = (state.journal_len, state.fold.position().sequence);
                    let batch = Arc::try_unwrap(batch).unwrap_or_else(|shared| (*shared).clone());
                    if offset == journal_len && refolds < 2 {
                        // The journal ends where the batch starts, but it is another incarnation of the run than the
                        // one the batch was folded on: fold it again on the stored one.
                        refolds += 1;
                        lines = batch.lines;
                        continue;
                    }
                    return self.retry_or_conflict(run_id, offset, &batch.lines, journal_len, position).await;
                }
                Err(error) => {
                    slot.state = None;
                    return Err(storage_error(error));
                }
            }
        };
        if offset == 0 {
            // The run's first lines are stored: it now counts against the resident limit.
            self.resident.holds_run(run_id);
        }
        slot.follow(batch.incarnation, live);
        let count = batch.lines.len() as u64;
        let state = slot.state.as_mut().ok_or_else(|| IngestError::Storage("run state unavailable".into()))?;
        state.journal_len += count;
        state.complete = batch.complete;
        state.incarnation = batch.incarnation;
        self.metrics.lines.inc_by(count);
        self.metrics.batches.inc();
        self.metrics.rejected_lines.inc_by(batch.rejections.len() as u64);
        let (produced, next_offset, position) = (batch.events.len(), state.journal_len, batch.position);
        slot.announced = slot.announced.max(position);
        let delivered: Vec<Delivered> = (batch.events.into_iter())
            .map(|event| {
                let item = event.item.as_deref().unwrap_or(NO_ITEM).into();
                Delivered { sequence: event.sequence, data: event.event.into(), item }
            })
            .collect();
        if !delivered.is_empty() {
            // No subscriber is not an error: events are stored for whoever connects later.
            let _ = live.send(Arc::new(Live::Events(delivered)));
        }
        let rejected_lines = batch.rejections;
        let change =
            DisplayBatch { from: position - produced as u64, to: position, complete: batch.complete, items: changed };
        let _ = live.send(Arc::new(Live::Batch(Arc::new(change))));
        Ok(Accepted { next_offset, events: produced, duplicate: false, position, rejected: rejected_lines })
    }

    /// A batch not at the journal's end: an exact retry of stored lines is acknowledged; anything else is a
    /// conflict saying how the batch relates to the journal.
    async fn retry_or_conflict(
        &self,
        run_id: &str,
        offset: u64,
        lines: &[String],
        journal_len: u64,
        position: u64,
    ) -> Result<Accepted, IngestError> {
        let conflict = |conflict, line| IngestError::Offset { expected: journal_len, conflict, line };
        if offset >= journal_len {
            return Err(conflict(Conflict::Ahead, None));
        }
        let end = (offset + lines.len() as u64).min(journal_len);
        let stored =
            self.storage.journal(run_id, offset, end).await.map_err(|e| IngestError::Storage(e.to_string()))?;
        if let Some(differs) = stored.iter().zip(lines).position(|(stored, line)| stored != line) {
            return Err(conflict(Conflict::DifferentContent, Some(offset + differs as u64)));
        }
        if stored.len() < lines.len() {
            return Err(conflict(Conflict::Behind, None));
        }
        self.metrics.duplicates.inc();
        Ok(Accepted { next_offset: journal_len, events: 0, duplicate: true, position, rejected: Vec::new() })
    }

    /// Decode, check and fold every line in memory: the batch to commit (with a checkpoint when one is due) and
    /// the items the batch changed, for live subscribers.
    async fn fold_batch(
        &self,
        run_id: &str,
        offset: u64,
        lines: Vec<String>,
        on_reject: OnReject,
        slot: &mut SlotState,
        shared: &Slot,
    ) -> Result<(Batch, Option<Vec<(StoredItem, Option<String>)>>), IngestError> {
        let gather = shared.display_followers.load(Ordering::Relaxed) > 0;
        let state = self.state(run_id, slot, &shared.live).await.map_err(|e| IngestError::Storage(e.to_string()))?;
        let mut events = Vec::new();
        let mut rejections = Vec::new();
        let mut complete = state.complete;
        let mut outcome = None;
        let mut written = Vec::with_capacity(4096);
        for (index, line) in lines.iter().enumerate() {
            let at = offset + index as u64;
            if complete {
                return Err(IngestError::AfterTerminal { line: at });
            }
            if let Err(message) = check_line_identity(&state.fold, run_id, line, at)? {
                reject(on_reject, &mut rejections, at, LineKind::Input, message)?;
                continue;
            }
            written.clear();
            match state.fold.fold_line(line, &mut written) {
                folded @ Ok(_) => {
                    let before = events.len();
                    for entry in ObservedLine::lines(&written) {
                        let item = entry.item.unwrap_or(NO_ITEM);
                        // Stored and sent as Pydantic writes events (`event_json`), not as observed lines spell
                        // them (Python's `json.dumps` floats: `1e-05` there, `0.00001` here).
                        let event = entry.event_pydantic().into_owned();
                        if is_terminal(entry.event) {
                            complete = true;
                            outcome = RunOutcome::of_terminal(&event);
                        }
                        events.push(StoredEvent { sequence: entry.sequence, event, item: Some(item.to_owned()) });
                    }
                    debug_assert_eq!(Ok(events.len() - before), folded, "every entry the fold wrote is split");
                }
                Err(error) => {
                    // Folding is atomic per line: a rejected line leaves the fold as it was. The refusal is the
                    // decoder's when the line does not decode, as it would be had the line been decoded first.
                    let (kind, message) = match SourceItem::from_json(line) {
                        Err(input) => (LineKind::Input, input.to_string()),
                        Ok(_) if matches!(error, FoldError::Observation(_)) => {
                            (LineKind::Observation, error.to_string())
                        }
                        Ok(_) => (LineKind::Input, error.to_string()),
                    };
                    reject(on_reject, &mut rejections, at, kind, message)?;
                }
            }
        }
        let position = state.fold.position().sequence;
        let changed = display_change(state, position, gather);
        state.fold.clear_changed();
        state.since_checkpoint += lines.iter().map(|line| line.len() as u64 + 1).sum::<u64>();
        let due =
            complete || state.since_checkpoint >= self.resident.limits.checkpoint_bytes.max(state.checkpoint_bytes);
        let (items, continuation) = if due {
            let delta = state.fold.capture_delta();
            let items: Vec<StoredItem> = delta.items.iter().map(|item| stored_item(item, position)).collect();
            let continuation = delta.continuation.to_json();
            state.checkpoint_bytes =
                items.iter().map(|item| item.item.len() as u64).sum::<u64>() + continuation.len() as u64;
            state.since_checkpoint = 0;
            (items, Some(continuation))
        } else {
            (Vec::new(), None)
        };
        let batch = Batch {
            run_id: run_id.to_owned(),
            offset,
            lines,
            events,
            items,
            continuation,
            position,
            complete,
            rejections,
            item_count: state.fold.item_count() as u64,
            updated_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)),
            incarnation: if offset == 0 { fresh_incarnation() } else { state.incarnation },
            thread_id: state.fold.source_identity().map(|(thread, _)| thread.to_owned()),
            outcome: outcome.map(|outcome| outcome.as_str().to_owned()),
        };
        Ok((batch, changed))
    }

    /// Subscribe to a run's live events; also returns the committed position and whether the run is complete.
    /// A run that does not exist yet may be subscribed to: its events arrive once it is ingested.
    /// The listener releases the run's slot when it is dropped: a run with no stored data leaves memory with its
    /// last listener.
    pub async fn subscribe(&self, run_id: &str) -> Result<(Listener, RunStatus), StorageError> {
        self.follow(run_id, Follows::Events).await
    }

    /// [`Runs::subscribe`], following what `follows` says: a display follower's live batches carry the items they
    /// changed (see [`DisplayBatch::items`]).
    pub async fn follow(&self, run_id: &str, follows: Follows) -> Result<(Listener, RunStatus), StorageError> {
        // A stream needs storage after its first frames: refused now, as any read is, when storage cannot serve
        // (a run held in memory is answered without reading it).
        self.storage.check().await?;
        // Subscribed under the run's lock: every event published later reaches the listener, and every earlier
        // one is in the status read here; a display follower is counted before the next batch is folded.
        let (slot, mut guard) = self.locked(run_id).await;
        let display = follows == Follows::Display;
        if display {
            slot.display_followers.fetch_add(1, Ordering::Relaxed);
        }
        let listener = Listener {
            receiver: Some(slot.live.subscribe()),
            release: Some((Arc::clone(&self.resident), run_id.to_owned(), Arc::clone(&slot))),
            display,
        };
        if let Some(state) = guard.current() {
            return Ok((listener, status(state)));
        }
        let record = self.storage.run(run_id).await?;
        guard.follow(record.as_ref().map_or(0, |record| record.incarnation), &slot.live);
        let status = record.map_or(RunStatus { position: 0, complete: false, journal_len: 0 }, |record| RunStatus {
            position: record.position,
            complete: record.complete,
            journal_len: record.journal_len,
        });
        guard.announce(status.position, &slot.live);
        Ok((listener, status))
    }

    /// A process (maybe this one) committed to a run: if the run is in memory and behind storage, mark it behind
    /// (its next use folds the lines it lacks) and wake its subscribers to catch up from storage. Runs not in
    /// memory need nothing.
    pub async fn advanced_elsewhere(&self, notice: &Notice) {
        let Some(slot) = self.resident(&notice.run_id) else { return };
        let mut guard = slot.inner.lock().await;
        guard.settle();
        // Subscribers were told about this position already (this process's own commit, or an earlier notice
        // that also dropped a stale state): nothing to read.
        if guard.retired || notice.position.is_some_and(|position| position <= guard.announced) {
            return;
        }
        let Ok(record) = self.storage.run(&notice.run_id).await else { return };
        let known = guard.state.as_ref().map_or(0, |state| state.journal_len);
        match record {
            // Journals and positions only grow: a run gone from storage, shorter than this process knew it, or of
            // another incarnation, was deleted by another process (and maybe ingested again since).
            None if known > 0 || guard.announced > 0 => self.retire(&notice.run_id, &slot, &mut guard),
            Some(record)
                if record.journal_len < known
                    || record.position < guard.announced
                    || (guard.incarnation != 0 && record.incarnation != guard.incarnation) =>
            {
                self.retire(&notice.run_id, &slot, &mut guard);
            }
            None => {}
            Some(record) => {
                if known < record.journal_len {
                    guard.behind = true;
                }
                guard.announce(record.position, &slot.live);
            }
        }
    }

    /// Read every run in memory again from storage: after commit notices may have been missed (a dropped
    /// `LISTEN` connection) or for storage that cannot notify.
    pub async fn refresh_all(&self) {
        let run_ids: Vec<String> = self.resident.lock().entries.keys().cloned().collect();
        for run_id in run_ids {
            self.advanced_elsewhere(&Notice { run_id, position: None }).await;
        }
    }

    /// The committed display snapshot JSON of a run, or `None` when the run does not exist.
    pub async fn snapshot(&self, run_id: &str) -> Result<Option<String>, StorageError> {
        Ok(self.snapshot_at(run_id).await?.map(|(json, _)| json))
    }

    /// The committed display snapshot JSON of a run and the display sequence it is at, taken together; `None`
    /// when the run does not exist.
    pub async fn snapshot_at(&self, run_id: &str) -> Result<Option<(String, u64)>, StorageError> {
        if self.resident(run_id).is_none() && self.storage.run(run_id).await?.is_none() {
            return Ok(None);
        }
        let (slot, mut guard) = self.locked(run_id).await;
        let state = self.state(run_id, &mut guard, &slot.live).await?;
        // Deleted since it was looked up: nothing is stored.
        let snapshot = (state.journal_len > 0).then(|| (state.fold.export_json(), state.fold.position().sequence));
        drop(guard);
        self.resident.release(run_id, slot, ());
        Ok(snapshot)
    }

    /// A page of a run's items by ordinal (above `after`, below `before`), with its committed status; `None` when
    /// the run does not exist. Read from the run's display in memory: storage holds only its last checkpoint.
    pub async fn items_page(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Option<(Vec<StoredItem>, RunStatus)>, StorageError> {
        let wanted =
            |item: &a13n_stream_protocol::Item| item.ordinal > after && before.is_none_or(|b| item.ordinal < b);
        self.read(run_id, |state| {
            let position = state.fold.position().sequence;
            let mut items: Vec<_> = state.fold.items().filter(|item| wanted(item)).collect();
            items.sort_by_key(|item| item.ordinal);
            items.iter().take(limit).map(|item| stored_item(item, position)).collect()
        })
        .await
    }

    /// Every item of a run changed after display sequence `after`, by ordinal, with the run's committed status
    /// (a run not ingested yet: nothing, at 0).
    pub async fn changed_since(&self, run_id: &str, after: u64) -> Result<(Vec<StoredItem>, RunStatus), StorageError> {
        let read = self
            .read(run_id, |state| {
                let position = state.fold.position().sequence;
                // Only the items changed after the client's position are written out.
                let mut items: Vec<_> =
                    state.fold.items().filter(|item| last_changed(item, position) > after).collect();
                items.sort_by_key(|item| item.ordinal);
                items.iter().map(|item| stored_item(item, position)).collect()
            })
            .await?;
        Ok(read.unwrap_or((Vec::new(), RunStatus { position: 0, complete: false, journal_len: 0 })))
    }

    /// Read a stored run's state under its lock (rebuilt from storage if it is not in memory); `None` when the run
    /// does not exist (or was deleted meanwhile).
    async fn read<T>(
        &self,
        run_id: &str,
        read: impl FnOnce(&RunState) -> T,
    ) -> Result<Option<(T, RunStatus)>, StorageError> {
        if self.resident(run_id).is_none() && self.storage.run(run_id).await?.is_none() {
            return Ok(None);
        }
        let (slot, mut guard) = self.locked(run_id).await;
        let state = self.state(run_id, &mut guard, &slot.live).await?;
        let read = (state.journal_len > 0).then(|| (read(state), status(state)));
        drop(guard);
        self.resident.release(run_id, slot, ());
        Ok(read)
    }

    /// The snapshot of a run before its first line: no items, at sequence 0.
    pub fn empty_snapshot(&self, run_id: &str) -> String {
        DisplayFold::with_options(run_id, self.options()).export_json()
    }

    /// Delete a run: everything stored of it, in one transaction serialized with its commits (by its lock here,
    /// by the database across processes). Its subscribers' streams end (`Live::Deleted`) and its memory goes. With
    /// `idle_before` (Unix milliseconds) only a run whose last commit is known and older is deleted. Whether a
    /// run was deleted. The run id is free again afterwards: a batch at offset 0 starts a new run.
    pub async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
        let (slot, mut guard) = self.locked(run_id).await;
        let deleted = self.storage.delete(run_id, idle_before).await;
        if matches!(deleted, Ok(true)) {
            self.retire(run_id, &slot, &mut guard);
            self.metrics.runs_deleted.inc();
        }
        drop(guard);
        self.resident.release(run_id, slot, ());
        deleted
    }

    /// Delete every run whose last commit is older than `older_than` (retention); how many were deleted. Runs
    /// whose last commit time was never recorded (stored by an older version) are kept.
    pub async fn expire(&self, older_than: Duration) -> Result<usize, StorageError> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let Some(before) = now.checked_sub(older_than) else { return Ok(0) };
        let before = u64::try_from(before.as_millis()).unwrap_or(u64::MAX);
        let (mut deleted, mut after) = (0, String::new());
        loop {
            let page = self.storage.idle_runs(before, &after, EXPIRE_PAGE).await?;
            for run_id in &page {
                // Checked again under the run's lock: a run committed to since the page was read stays.
                deleted += usize::from(self.delete(run_id, Some(before)).await?);
            }
            match page.last() {
                Some(last) if page.len() == EXPIRE_PAGE => after.clone_from(last),
                _ => return Ok(deleted),
            }
        }
    }

    /// The committed position and completeness of a run, or `None` when it does not exist.
    pub async fn status(&self, run_id: &str) -> Result<Option<RunStatus>, StorageError> {
        if let Some(slot) = self.resident(run_id) {
            let mut guard = slot.inner.lock().await;
            guard.settle();
            if let Some(state) = guard.current() {
                return Ok(Some(status(state)));
            }
        }
        Ok(self.storage.run(run_id).await?.map(|record| RunStatus {
            position: record.position,
            complete: record.complete,
            journal_len: record.journal_len,
        }))
    }
}

/// A new run's incarnation: random, positive as a signed 64-bit integer, never 0 (the incarnation of runs stored
/// before incarnations were kept).
fn fresh_incarnation() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // Each RandomState is seeded anew (randomly per process, then varied per instance).
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 1).max(1)
}

fn status(state: &RunState) -> RunStatus {
    RunStatus { position: state.fold.position().sequence, complete: state.complete, journal_len: state.journal_len }
}

fn reject(
    on_reject: OnReject,
    rejections: &mut Vec<Rejection>,
    line: u64,
    kind: LineKind,
    message: String,
) -> Result<(), IngestError> {
    match on_reject {
        OnReject::Refuse => Err(IngestError::Line { line, kind, message }),
        OnReject::Skip => {
            rejections.push(Rejection { line, kind: kind.as_str().to_owned(), message });
            Ok(())
        }
    }
}

/// Check that `line` belongs to the run, reading its identity from its head where it is in the layout every
/// writer uses. `Ok(Err(message))` when the line does not decode: a malformed line is refused as such before its
/// identity is judged, as when every line was decoded first.
fn check_line_identity(
    fold: &DisplayFold,
    run_id: &str,
    line: &str,
    at: u64,
) -> Result<Result<(), String>, IngestError> {
    let written = SourceItem::written_identity(line);
    let checked = written.as_ref().map(|(thread_id, line_run)| check_identity(fold, run_id, thread_id, line_run, at));
    if let Some(Ok(())) = checked {
        return Ok(Ok(()));
    }
    match SourceItem::from_json(line) {
        Err(error) => Ok(Err(error.to_string())),
        Ok(item) => check_identity(fold, run_id, &item.thread_id, &item.run_id, at).map(Ok),
    }
}

/// A line must belong to the run it is sent to: the root stream's first line carries the URL's run id, and the
/// root run's lines keep the thread it started on. Lines of other runs are its subagents' (the stream observer
/// attributes them to child runs).
fn check_identity(
    fold: &DisplayFold,
    run_id: &str,
    thread_id: &str,
    line_run: &str,
    line: u64,
) -> Result<(), IngestError> {
    let mismatch = |field, expected: &str, found: &str| IngestError::Identity {
        line,
        field,
        expected: expected.to_owned(),
        found: found.to_owned(),
    };
    match fold.source_identity() {
        None if line_run != run_id => Err(mismatch("run_id", run_id, line_run)),
        Some((thread, root)) if line_run == root && thread_id != thread => {
            Err(mismatch("thread_id", thread, thread_id))
        }
        _ => Ok(()),
    }
}

/// Whether a run id is acceptable in a URL and as a storage key: 1 to 128 of `A-Z a-z 0-9 - _ . :`, and not
/// made of dots alone (`.` and `..` are path segments).
pub fn valid_run_id(run_id: &str) -> bool {
    (1..=128).contains(&run_id.len())
        && run_id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
        && !run_id.bytes().all(|b| b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_follows_the_last_delivered_event_or_is_a_gap() {
        let batch = |sequences: std::ops::RangeInclusive<u64>| -> Vec<Delivered> {
            sequences.map(|sequence| Delivered { sequence, data: "".into(), item: "".into() }).collect()
        };
        let sequences = |events: Option<&[Delivered]>| events.map(|e| e.iter().map(|e| e.sequence).collect::<Vec<_>>());
        assert_eq!(sequences(following(&batch(5..=7), 4)), Some(vec![5, 6, 7]));
        assert_eq!(sequences(following(&batch(5..=7), 5)), Some(vec![6, 7]), "delivered from storage already");
        assert_eq!(sequences(following(&batch(5..=7), 9)), Some(vec![]), "all delivered already");
        assert_eq!(sequences(following(&batch(5..=7), 3)), None, "event 4 was missed");
    }

    #[test]
    fn run_ids_made_of_dots_are_refused() {
        for bad in [".", "..", "...", "", "a b", "a/b"] {
            assert!(!valid_run_id(bad), "{bad:?}");
        }
        for good in ["run-1", "a.b", ".a", "x:y_z"] {
            assert!(valid_run_id(good), "{good:?}");
        }
    }

    #[test]
    fn a_terminal_event_is_known_by_its_type_in_any_layout() {
        for terminal in [
            r#"{"type":"RUN_FINISHED","timestamp":1,"threadId":"t","runId":"r"}"#,
            r#"{"type":"RUN_ERROR","message":"boom"}"#,
            r#"{"timestamp":1, "type": "RUN_ERROR", "message":"boom"}"#,
        ] {
            assert!(is_terminal(terminal), "{terminal}");
        }
        for other in [
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
            r#"{"type":"CUSTOM","name":"RUN_FINISHED","value":null}"#,
            r#"{"type":"RUN_FINISHED_LATER"}"#,
            "not json",
        ] {
            assert!(!is_terminal(other), "{other}");
        }
    }
}
