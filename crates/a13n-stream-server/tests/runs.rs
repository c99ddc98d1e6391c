//! `Runs` driven directly over SQLite: memory bounds, conflicts answered from the committed position, identity
//! checks, and rejected lines skipped on request.

use std::sync::Arc;
use std::time::Duration;

use a13n_stream_protocol::{DisplayFold, SourceItem};
use a13n_stream_server::metrics::Metrics;
use a13n_stream_server::postgres::{PoolOptions, PostgresStorage};
use a13n_stream_server::runs::{
    Conflict, DisplayBatch, Follows, IngestError, LineKind, Listener, Live, OnReject, RunLimits, Runs,
};
use a13n_stream_server::storage::{Batch, SqliteStorage, Storage, StoredEvent};
use a13n_testkit::hello_stream;

mod support;
use support::stalling::Stalling;

fn runs(name: &str, limits: RunLimits) -> (Runs, Arc<Metrics>, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("a13n-runs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let storage = Arc::new(SqliteStorage::open(&dir.join("host.db")).unwrap());
    let metrics = Arc::new(Metrics::default());
    (Runs::with_limits(storage, false, limits, Arc::clone(&metrics)), metrics, dir)
}

fn fold_of(lines: &[String]) -> String {
    let items: Vec<SourceItem> = lines.iter().filter_map(|l| SourceItem::from_json(l).ok()).collect();
    let mut fold = DisplayFold::new(items[0].run_id.clone());
    for item in &items {
        let _ = fold.fold_source(item);
    }
    fold.export_json()
}

#[tokio::test]
async fn reads_of_unknown_runs_create_nothing() {
    let (runs, _, dir) = runs("ghosts", RunLimits::default());
    for index in 0..500 {
        let run = format!("ghost-{index}");
        assert!(runs.status(&run).await.unwrap().is_none());
        assert!(runs.snapshot(&run).await.unwrap().is_none());
    }
    assert_eq!(runs.resident_count(), 0, "no state for runs that were only read");
    assert!(matches!(runs.ingest("ghost-x", 0, Vec::new(), OnReject::Refuse).await, Err(IngestError::Empty)));
    assert!(runs.storage().run("ghost-x").await.unwrap().is_none(), "an empty batch creates no run row");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn idle_and_least_recently_used_runs_leave_memory_and_come_back_exactly() {
    let limits = RunLimits { max_resident: 3, idle: Duration::from_secs(3600), ..RunLimits::default() };
    let (runs, metrics, dir) = runs("evict", limits);
    let streams: Vec<Vec<String>> = (0..6).map(|i| hello_stream(&format!("t-{i}"), &format!("run-{i}"))).collect();
    for (index, lines) in streams.iter().enumerate() {
        runs.ingest(&format!("run-{index}"), 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
        assert!(runs.resident_count() <= 3, "at most the limit stays in memory");
    }
    assert!(metrics.evictions.get() >= 3);
    // The evicted runs are rebuilt from storage and go on exactly.
    for (index, lines) in streams.iter().enumerate() {
        let run = format!("run-{index}");
        runs.ingest(&run, 2, lines[2..].to_vec(), OnReject::Refuse).await.unwrap();
        assert_eq!(runs.snapshot(&run).await.unwrap().unwrap(), fold_of(lines), "{run}");
    }
    let idle = RunLimits { max_resident: 100, idle: Duration::ZERO, ..RunLimits::default() };
    let (runs, _, dir2) = self::runs("idle", idle);
    runs.ingest("run-0", 0, streams[0].clone(), OnReject::Refuse).await.unwrap();
    assert_eq!(runs.resident_count(), 1);
    assert_eq!(runs.sweep(), 1, "an idle run nobody uses is dropped");
    assert_eq!(runs.resident_count(), 0);
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(dir2);
}

/// Regression: every 409 dropped the run and rebuilt it from storage under its lock, so a confused client
/// slowed the run's real writer and counted recoveries.
#[tokio::test]
async fn conflicts_are_answered_from_the_committed_position_without_a_rebuild() {
    let (runs, metrics, dir) = runs("conflict", RunLimits::default());
    let lines = hello_stream("t", "run-c");
    runs.ingest("run-c", 0, lines[..3].to_vec(), OnReject::Refuse).await.unwrap();
    let recoveries = metrics.recoveries.get();
    let offset = |result: Result<_, IngestError>| match result {
        Err(IngestError::Offset { expected, conflict, line }) => (expected, conflict, line),
        other => panic!("expected a conflict, got {other:?}"),
    };
    let ahead = runs.ingest("run-c", 5, lines[3..].to_vec(), OnReject::Refuse).await;
    assert_eq!(offset(ahead), (3, Conflict::Ahead, None));
    let mut changed = lines[0..3].to_vec();
    changed[2] = changed[2].replace("\"sequence\"", "\"sequence\" ");
    // The answer names the line that differs (found by a new user's trial: it said only where to start).
    let differs = runs.ingest("run-c", 0, changed, OnReject::Refuse).await;
    assert_eq!(offset(differs), (3, Conflict::DifferentContent, Some(2)));
    let behind = runs.ingest("run-c", 2, lines[2..].to_vec(), OnReject::Refuse).await;
    assert_eq!(offset(behind), (3, Conflict::Behind, None));
    assert!(runs.ingest("run-c", 1, lines[1..3].to_vec(), OnReject::Refuse).await.unwrap().duplicate);
    assert_eq!(metrics.recoveries.get(), recoveries, "no conflict rebuilt the run");
    let _ = std::fs::remove_dir_all(dir);
}

/// Regression: lines of another run or thread, and lines after the terminal result, were committed.
#[tokio::test]
async fn lines_of_another_run_or_after_the_end_are_refused_and_commit_nothing() {
    let (runs, _, dir) = runs("identity", RunLimits::default());
    let lines = hello_stream("t", "run-i");
    match runs.ingest("run-other", 0, lines[..2].to_vec(), OnReject::Skip).await {
        Err(IngestError::Identity { line: 0, field: "run_id", expected, found }) => {
            assert_eq!((expected.as_str(), found.as_str()), ("run-other", "run-i"));
        }
        other => panic!("{other:?}"),
    }
    assert!(runs.storage().run("run-other").await.unwrap().is_none());
    runs.ingest("run-i", 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
    let moved = lines[2].replace("\"thread_id\":\"t\"", "\"thread_id\":\"elsewhere\"");
    assert_ne!(moved, lines[2]);
    match runs.ingest("run-i", 2, vec![lines[2].clone(), moved], OnReject::Refuse).await {
        Err(IngestError::Identity { line: 3, field: "thread_id", .. }) => {}
        other => panic!("{other:?}"),
    }
    runs.ingest("run-i", 2, lines[2..].to_vec(), OnReject::Refuse).await.unwrap();
    let again = hello_stream("t", "run-i");
    match runs.ingest("run-i", 5, again[..1].to_vec(), OnReject::Skip).await {
        Err(IngestError::AfterTerminal { line: 5 }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(runs.status("run-i").await.unwrap().unwrap().journal_len, 5, "nothing was committed");
    let _ = std::fs::remove_dir_all(dir);
}

/// A rejected line no longer wedges a run: with `OnReject::Skip` it is journaled at its position, recorded, and
/// skipped exactly as the reference skips it, also when the run is rebuilt from its journal.
#[tokio::test]
async fn rejected_lines_are_journaled_and_skipped_on_request() {
    let (runs, _, dir) =
        runs("skip", RunLimits { max_resident: 1, idle: Duration::from_secs(3600), ..RunLimits::default() });
    let mut lines = hello_stream("t", "run-s");
    lines.insert(2, "{\"thread_id\": 1}".into());
    match runs.ingest("run-s", 0, lines.clone(), OnReject::Refuse).await {
        Err(IngestError::Line { line: 2, kind: LineKind::Input, .. }) => {}
        other => panic!("{other:?}"),
    }
    let accepted = runs.ingest("run-s", 0, lines[..4].to_vec(), OnReject::Skip).await.unwrap();
    assert_eq!(accepted.next_offset, 4, "offsets stay the Harness's line positions");
    assert_eq!(accepted.rejected.len(), 1);
    assert_eq!((accepted.rejected[0].line, accepted.rejected[0].kind.as_str()), (2, "input"));
    // Another run pushes this one out of memory: the rest is folded after a rebuild.
    runs.ingest("run-t", 0, hello_stream("t2", "run-t"), OnReject::Refuse).await.unwrap();
    runs.ingest("run-s", 4, lines[4..].to_vec(), OnReject::Refuse).await.unwrap();
    assert_eq!(runs.snapshot("run-s").await.unwrap().unwrap(), fold_of(&lines));
    let stored = runs.storage().rejections("run-s", 0, 10).await.unwrap();
    assert_eq!(stored, accepted.rejected);
    assert_eq!(runs.storage().journal("run-s", 2, 3).await.unwrap(), [lines[2].clone()]);
    let _ = std::fs::remove_dir_all(dir);
}

/// Regression (#29): a subscription to a run that was never ingested kept a resident slot after its client left
/// (800 such subscriptions left `a13n_resident_runs` at 807), and every new one could push a real run out of
/// memory. Slots without stored data now leave with their last listener and never count against the limit.
#[tokio::test]
async fn subscriptions_to_unknown_runs_leave_nothing_behind_and_push_no_run_out() {
    let (runs, metrics, dir) = runs(
        "ghost-subscribers",
        RunLimits { max_resident: 4, idle: Duration::from_secs(3600), ..RunLimits::default() },
    );
    let lines = hello_stream("t", "run-real");
    runs.ingest("run-real", 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
    let (resident, recoveries) = (metrics.resident_runs.get(), metrics.recoveries.get());
    assert_eq!(resident, 1);
    // Many at once, far beyond the limit: the real run stays.
    let mut listeners = Vec::new();
    for index in 0..200 {
        listeners.push(runs.subscribe(&format!("ghost-{index}")).await.unwrap().0);
    }
    assert!(runs.is_resident("run-real"), "open ghost subscriptions pushed a real run out of memory");
    drop(listeners);
    assert_eq!(metrics.resident_runs.get(), resident, "ghost slots stayed after their listeners left");
    // One after another, and two listeners on one ghost: the slot goes with the last of them.
    for index in 0..300 {
        drop(runs.subscribe(&format!("ghost-b-{index}")).await.unwrap().0);
    }
    let (first, _) = runs.subscribe("ghost-two").await.unwrap();
    let (second, _) = runs.subscribe("ghost-two").await.unwrap();
    drop(first);
    assert!(runs.is_resident("ghost-two"), "a ghost with a listener left stays");
    drop(second);
    assert!(!runs.is_resident("ghost-two"));
    // A refused first batch (offset ahead, another run's line) leaves nothing either.
    for index in 0..50 {
        let ghost = format!("ghost-c-{index}");
        assert!(runs.ingest(&ghost, 3, lines[..1].to_vec(), OnReject::Refuse).await.is_err());
        assert!(runs.ingest(&ghost, 0, lines[..1].to_vec(), OnReject::Refuse).await.is_err());
    }
    assert_eq!(metrics.resident_runs.get(), resident, "refused first batches left slots");
    assert_eq!(runs.resident_count(), 1);
    // A run ingested while a subscriber waited for it is a real run: it stays when the subscriber leaves.
    let (waiting, _) = runs.subscribe("run-late").await.unwrap();
    runs.ingest("run-late", 0, hello_stream("t", "run-late")[..2].to_vec(), OnReject::Refuse).await.unwrap();
    drop(waiting);
    assert!(runs.is_resident("run-late"));
    // The real run was never dropped: it goes on without a rebuild from storage.
    runs.ingest("run-real", 2, lines[2..].to_vec(), OnReject::Refuse).await.unwrap();
    assert_eq!(metrics.recoveries.get(), recoveries, "the real run was rebuilt: it had been pushed out");
    assert_eq!(metrics.evictions.get(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// The size of a SQLite database once its write-ahead log is checkpointed into it (the file and its log).
fn database_bytes(path: &std::path::Path) -> u64 {
    let connection = rusqlite::Connection::open(path).unwrap();
    connection.busy_timeout(Duration::from_secs(10)).unwrap();
    // The host's checkpoint thread may hold the log for a moment: checkpoint until the log is cut (its first
    // column says whether it was busy), within a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get::<_, i64>(0)).unwrap() != 0 {
        assert!(std::time::Instant::now() < deadline, "the write-ahead log was never checkpointed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let size = |suffix: &str| std::fs::metadata(format!("{}{suffix}", path.display())).map_or(0, |m| m.len());
    size("") + size("-wal")
}

/// Issue #29: the space of a deleted run goes back to the file system. A database the host creates has
/// `auto_vacuum = INCREMENTAL` and every delete returns the freed pages; one created without it (as before) keeps
/// them until the documented maintenance (`PRAGMA auto_vacuum = INCREMENTAL; VACUUM;`), after which deletes
/// return them too.
#[tokio::test]
async fn the_space_of_deleted_runs_is_returned_to_the_file_system() {
    let dir = std::env::temp_dir().join(format!("a13n-runs-space-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let big = |run: &str| a13n_testkit::text_stream("t", run, 20_000);
    let (new, old) = (dir.join("new.db"), dir.join("old.db"));
    // A database made before the host set auto_vacuum: it has a table already when the host opens it.
    rusqlite::Connection::open(&old).unwrap().execute_batch("CREATE TABLE operator_notes (note TEXT)").unwrap();
    for path in [&new, &old] {
        let runs = Runs::new(Arc::new(SqliteStorage::open(path).unwrap()), false);
        runs.ingest("run-small", 0, hello_stream("t", "run-small"), OnReject::Refuse).await.unwrap();
        let empty = database_bytes(path);
        runs.ingest("run-big", 0, big("run-big"), OnReject::Refuse).await.unwrap();
        let full = database_bytes(path);
        assert!(full > empty + 4_000_000, "{}: {empty} -> {full}", path.display());
        assert!(runs.delete("run-big", None).await.unwrap());
        let after = database_bytes(path);
        if path == &new {
            assert!(after < empty + (full - empty) / 10, "{}: {full} -> {after} after the delete", path.display());
            continue;
        }
        assert!(after > full / 2, "without auto_vacuum the pages stay in the file: {full} -> {after}");
        // The documented maintenance, once (here while the host holds the file open, which SQLite allows).
        let maintenance = rusqlite::Connection::open(path).unwrap();
        maintenance.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;").unwrap();
        drop(maintenance);
        let vacuumed = database_bytes(path);
        assert!(vacuumed < empty + (full - empty) / 10, "VACUUM returned the space: {after} -> {vacuumed}");
        // From then on every delete returns its space.
        runs.ingest("run-big-2", 0, big("run-big-2"), OnReject::Refuse).await.unwrap();
        let full = database_bytes(path);
        assert!(runs.delete("run-big-2", None).await.unwrap());
        let after = database_bytes(path);
        assert!(after < vacuumed + (full - vacuumed) / 10, "after the maintenance: {full} -> {after}");
        assert!(runs.snapshot("run-small").await.unwrap().is_some(), "other runs are untouched");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Ingest of one run racing its deletion, on one host and across two (two `Runs` over one database). The
/// behaviour: a delete and a commit of the run are serialized (the run's lock on one host, the database's write
/// or row lock across hosts, and the run's incarnation, which a commit requires to be the one its batch was
/// folded on); a batch committed before the delete is deleted with the run; a producer going on afterwards is
/// told `ahead` with `expected_offset` 0 and starts the run again from 0. Never a gap, a line of another
/// incarnation, or a row left of a deleted run.
async fn ingest_and_delete_race(a: Arc<Runs>, b: Arc<Runs>) {
    let lines = Arc::new(a13n_testkit::text_stream("t", "run-race", 60));
    let deleting = Arc::new(std::sync::atomic::AtomicBool::new(true));
    // Writers ingest under the read side; the checks between deletes take the write side, so that what they
    // read of storage is one state, not one that a writer changes half-way through.
    let pause = Arc::new(tokio::sync::RwLock::new(()));
    let mut writers = Vec::new();
    for (index, runs) in [&a, &b, &a].into_iter().enumerate() {
        let (runs, lines, deleting) = (Arc::clone(runs), Arc::clone(&lines), Arc::clone(&deleting));
        let pause = Arc::clone(&pause);
        writers.push(tokio::spawn(async move {
            let mut offset = 0u64;
            loop {
                let end = (offset as usize + 2 + index).min(lines.len());
                if offset as usize == lines.len() {
                    if !deleting.load(std::sync::atomic::Ordering::SeqCst) {
                        return;
                    }
                    // Complete: look again later, the run may have been deleted meanwhile.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    offset = runs.status("run-race").await.unwrap().map_or(0, |status| status.journal_len);
                    continue;
                }
                let writing = pause.read().await;
                let result = runs.ingest("run-race", offset, lines[offset as usize..end].to_vec(), OnReject::Refuse);
                let result = result.await;
                drop(writing);
                match result {
                    Ok(accepted) => offset = accepted.next_offset,
                    Err(IngestError::Offset { expected, .. }) => offset = expected,
                    Err(IngestError::AfterTerminal { .. }) => offset = lines.len() as u64,
                    Err(error) => panic!("writer {index}: {error}"),
                }
            }
        }));
    }
    let mut deleted = 0;
    for round in 0..40 {
        tokio::time::sleep(Duration::from_millis(3)).await;
        let runs = if round % 2 == 0 { &a } else { &b };
        deleted += usize::from(runs.delete("run-race", None).await.unwrap());
        // Between deletes, what is stored of the run (a writer may have begun it again) is whole.
        let paused = pause.write().await;
        check_whole(&runs.storage(), &lines, false).await;
        drop(paused);
    }
    deleting.store(false, std::sync::atomic::Ordering::SeqCst);
    for writer in writers {
        writer.await.unwrap();
    }
    assert!(deleted > 0, "no delete met the run");
    check_whole(&a.storage(), &lines, true).await;
    // A host that never saw the race rebuilds exactly the fold of the stream.
    let fresh = Runs::new(a.storage(), false);
    assert_eq!(fresh.snapshot("run-race").await.unwrap().unwrap(), fold_of(&lines));
    assert_eq!(a.snapshot("run-race").await.unwrap().unwrap(), fold_of(&lines));
    assert_eq!(b.snapshot("run-race").await.unwrap().unwrap(), fold_of(&lines));
}

/// What is stored of the race's run is a whole prefix of the stream: every journal line in place, every event
/// up to the position, the items the record counts; or nothing at all.
async fn check_whole(storage: &Arc<dyn a13n_stream_server::storage::Storage>, lines: &[String], complete: bool) {
    let record = storage.run("run-race").await.unwrap();
    let journal = storage.journal("run-race", 0, u64::MAX >> 1).await.unwrap();
    let events = storage.events_after("run-race", 0, usize::MAX >> 1).await.unwrap();
    let items = storage.items("run-race", 0, None, usize::MAX >> 1).await.unwrap();
    let Some(record) = record else {
        assert!(journal.is_empty() && events.is_empty() && items.is_empty(), "rows left of a deleted run");
        assert!(!complete, "the run must be stored at the end");
        return;
    };
    assert_eq!(journal.len() as u64, record.journal_len);
    assert_eq!(journal[..], lines[..journal.len()], "the journal is a prefix of the stream");
    let sequences: Vec<u64> = events.iter().map(|event| event.sequence).collect();
    assert_eq!(sequences, (1..=record.position).collect::<Vec<_>>(), "events without gap up to the position");
    // Items are stored at checkpoints (the run's end is one): at most the items the record counts until then.
    assert!(items.len() as u64 <= record.item_count, "{} items stored, {} counted", items.len(), record.item_count);
    if complete {
        assert_eq!(items.len() as u64, record.item_count);
        assert_eq!((record.journal_len, record.complete), (lines.len() as u64, true));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_racing_delete_corrupts_nothing() {
    let (runs, _, dir) = runs("race", RunLimits::default());
    let one = Arc::new(runs);
    ingest_and_delete_race(Arc::clone(&one), Arc::clone(&one)).await;
    let path = dir.join("two.db");
    let open = || Arc::new(Runs::new(Arc::new(SqliteStorage::open(&path).unwrap()), false));
    ingest_and_delete_race(open(), open()).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ingest_racing_delete_corrupts_nothing() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("race")).await.unwrap();
    let options = PoolOptions { size: 4, wait: Duration::from_secs(10) };
    let open = async || Arc::new(Runs::new(Arc::new(PostgresStorage::open(&url, options).await.unwrap()), false));
    let one = open().await;
    ingest_and_delete_race(Arc::clone(&one), one).await;
    with_fresh_run(&url).await;
    ingest_and_delete_race(open().await, open().await).await;
}

/// Delete what the previous race left, so that the next one starts from nothing.
async fn with_fresh_run(url: &str) {
    let storage = PostgresStorage::open(url, PoolOptions { size: 1, wait: Duration::from_secs(10) }).await.unwrap();
    assert!(a13n_stream_server::storage::Storage::delete(&storage, "run-race", None).await.unwrap());
}

/// A host that holds a run in memory while another host deletes it and the run id is ingested again, with other
/// lines, up to the same length: the first host's next batch must not be committed on the deleted run's state
/// (the journal would be the new run's, the display the old one's). The commit requires the stored run's
/// incarnation to be the batch's; the batch is folded again on the stored run.
async fn stale_batch_after_delete(a: Runs, b: Runs, fresh: Runs) {
    let first = a13n_testkit::text_stream("t", "run-inc", 6);
    let second: Vec<String> = first.iter().map(|line| line.replace("\"Hel\"", "\"Bye\"")).collect();
    assert_ne!(first[1], second[1]);
    a.ingest("run-inc", 0, first[..3].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(b.delete("run-inc", None).await.unwrap());
    b.ingest("run-inc", 0, second[..3].to_vec(), OnReject::Refuse).await.unwrap();
    // Host a heard of none of it: its run is the deleted one, at the same length.
    let accepted = a.ingest("run-inc", 3, first[3..6].to_vec(), OnReject::Refuse).await.unwrap();
    assert_eq!(accepted.next_offset, 6);
    let journal = a.storage().journal("run-inc", 0, 6).await.unwrap();
    assert_eq!(journal, [&second[..3], &first[3..6]].concat());
    // The stored display is the fold of the stored journal, whoever reads it.
    assert_eq!(fresh.snapshot("run-inc").await.unwrap().unwrap(), fold_of(&journal), "checkpoint and journal agree");
    assert_eq!(a.snapshot("run-inc").await.unwrap().unwrap(), fold_of(&journal));
}

#[tokio::test]
async fn a_batch_folded_on_a_deleted_run_is_never_committed_on_its_successor() {
    let (_, _, dir) = runs("incarnation", RunLimits::default());
    let path = dir.join("host.db");
    let open = || Runs::new(Arc::new(SqliteStorage::open(&path).unwrap()), false);
    stale_batch_after_delete(open(), open(), open()).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn postgres_a_batch_folded_on_a_deleted_run_is_never_committed_on_its_successor() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("incarnation")).await.unwrap();
    let options = PoolOptions { size: 2, wait: Duration::from_secs(10) };
    let open = async || Runs::new(Arc::new(PostgresStorage::open(&url, options).await.unwrap()), false);
    stale_batch_after_delete(open().await, open().await, open().await).await;
}

/// Runs stored before threads and first-ingest places were kept get them from the migration: the thread from
/// the stored continuation, the place from the order in which their rows were made (SQLite) or their last commit
/// (PostgreSQL, which keeps no insertion order). Simulated by taking the columns away again, and the journal and
/// events back to a row a line and a row an event: the migration to chunks keeps every line and event.
async fn migrated_runs_are_listed_by_thread(runs: Runs, reopen: impl AsyncFnOnce() -> Runs) {
    let mut stored = Vec::new();
    for run in ["run-z", "run-y"] {
        let lines = a13n_testkit::text_stream("thread-m", run, 6);
        runs.ingest(run, 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
        runs.ingest(run, 2, lines[2..].to_vec(), OnReject::Refuse).await.unwrap();
        let events = runs.storage().events_after(run, 0, 1000).await.unwrap();
        let events: Vec<_> = events.into_iter().map(|event| (event.sequence, event.event)).collect();
        stored.push((lines, events));
    }
    drop(runs);
    let runs = reopen().await;
    for (run, (lines, events)) in ["run-z", "run-y"].into_iter().zip(&stored) {
        assert_eq!(&runs.storage().journal(run, 0, 100).await.unwrap(), lines);
        assert_eq!(&runs.storage().journal(run, 1, 3).await.unwrap(), &lines[1..3]);
        let migrated = runs.storage().events_after(run, 0, 1000).await.unwrap();
        assert!(migrated.iter().all(|event| event.item.is_none()), "stored before item references were kept");
        let migrated: Vec<_> = migrated.into_iter().map(|event| (event.sequence, event.event)).collect();
        assert_eq!(&migrated, events);
        let page = runs.storage().events_after(run, 2, 3).await.unwrap();
        assert_eq!(page.iter().map(|event| event.sequence).collect::<Vec<_>>(), [3, 4, 5]);
    }
    let listed = runs.storage().thread_runs("thread-m", 0, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["run-z", "run-y"]);
    assert!(listed.iter().all(|run| run.thread_id.as_deref() == Some("thread-m")));
    // New runs come after them.
    runs.ingest("run-a", 0, hello_stream("thread-m", "run-a"), OnReject::Refuse).await.unwrap();
    let listed = runs.storage().thread_runs("thread-m", 0, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["run-z", "run-y", "run-a"]);
    // The run list newest first (found by a trial of the viewer: the run just started was listed by id, pages
    // away), a page at a time by the last run's place.
    let newest = runs.storage().newest_runs(None, 2).await.unwrap();
    let ids: Vec<&str> = newest.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["run-a", "run-y"]);
    let rest = runs.storage().newest_runs(Some(newest[1].created), 2).await.unwrap();
    let ids: Vec<&str> = rest.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["run-z"]);
}

#[tokio::test]
async fn sqlite_runs_stored_before_threads_and_chunks_are_migrated() {
    let (runs, _, dir) = runs("migrate-threads", RunLimits::default());
    let path = dir.join("host.db");
    migrated_runs_are_listed_by_thread(runs, async || {
        let connection = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        connection
            .execute_batch(&format!(
                // Back to before the threads migration, and the later ones (events' item references, checkpoints,
                // chunks: each chunk's parts split back into rows).
                "CREATE TABLE journal (run_id TEXT NOT NULL, offset INTEGER NOT NULL, line TEXT NOT NULL,
                     PRIMARY KEY (run_id, offset)) WITHOUT ROWID;
                 CREATE TABLE events (run_id TEXT NOT NULL, sequence INTEGER NOT NULL, event TEXT NOT NULL,
                     PRIMARY KEY (run_id, sequence)) WITHOUT ROWID;
                 WITH RECURSIVE parts(run_id, at, rest, part) AS (
                     SELECT run_id, first - 1, lines || char(10), NULL FROM journal_chunks
                     UNION ALL SELECT run_id, at + 1, substr(rest, instr(rest, char(10)) + 1),
                         substr(rest, 1, instr(rest, char(10)) - 1) FROM parts WHERE rest <> '')
                 INSERT INTO journal SELECT run_id, at, part FROM parts WHERE part IS NOT NULL;
                 WITH RECURSIVE parts(run_id, at, rest, part) AS (
                     SELECT run_id, first - 1, events || char(10), NULL FROM event_chunks
                     UNION ALL SELECT run_id, at + 1, substr(rest, instr(rest, char(10)) + 1),
                         substr(rest, 1, instr(rest, char(10)) - 1) FROM parts WHERE rest <> '')
                 INSERT INTO events SELECT run_id, at, part FROM parts WHERE part IS NOT NULL;
                 DROP TABLE journal_chunks; DROP TABLE event_chunks;
                 ALTER TABLE runs DROP COLUMN checkpoint_len;
                 DROP INDEX runs_by_created;
                 DROP INDEX runs_by_thread; DROP TABLE counters; ALTER TABLE runs DROP COLUMN thread_id;
                 ALTER TABLE runs DROP COLUMN created; ALTER TABLE runs DROP COLUMN outcome;
                 PRAGMA user_version = {};",
                version - 6
            ))
            .unwrap();
        drop(connection);
        Runs::new(Arc::new(SqliteStorage::open(&path).unwrap()), false)
    })
    .await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_runs_stored_before_threads_and_chunks_are_migrated() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("migrate_threads")).await.unwrap();
    let options = PoolOptions { size: 2, wait: Duration::from_secs(10) };
    let runs = Runs::new(Arc::new(PostgresStorage::open(&url, options).await.unwrap()), false);
    migrated_runs_are_listed_by_thread(runs, async || {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client
            .batch_execute(
                // The migration orders these runs by their last commit: made distinct here, whatever the clock did.
                "UPDATE a13n_runs SET updated_ms = CASE run_id WHEN 'run-z' THEN 1000 ELSE 2000 END;
                 DROP INDEX a13n_runs_by_created;
                 DROP INDEX a13n_runs_by_thread; ALTER TABLE a13n_runs DROP COLUMN thread_id;
                 ALTER TABLE a13n_runs DROP COLUMN created; DROP SEQUENCE a13n_runs_created;
                 CREATE TABLE a13n_journal (run_id TEXT NOT NULL, line_no BIGINT NOT NULL, line TEXT NOT NULL,
                     PRIMARY KEY (run_id, line_no));
                 INSERT INTO a13n_journal SELECT run_id, first + ordinality - 1, line
                     FROM a13n_journal_chunks, unnest(lines) WITH ORDINALITY AS t(line, ordinality);
                 CREATE TABLE a13n_events (run_id TEXT NOT NULL, sequence BIGINT NOT NULL, event TEXT NOT NULL,
                     PRIMARY KEY (run_id, sequence));
                 INSERT INTO a13n_events SELECT run_id, first + ordinality - 1, event
                     FROM a13n_event_chunks, unnest(events) WITH ORDINALITY AS t(event, ordinality);
                 DROP TABLE a13n_journal_chunks; DROP TABLE a13n_event_chunks;
                 ALTER TABLE a13n_runs DROP COLUMN checkpoint_len; ALTER TABLE a13n_runs DROP COLUMN outcome;
                 UPDATE a13n_schema SET version = version - 7;",
            )
            .await
            .unwrap();
        Runs::new(Arc::new(PostgresStorage::open(&url, options).await.unwrap()), false)
    })
    .await;
}

/// Regression: PostgreSQL compressed every chunk with pglz, a third of the server's time on ingest. Where the
/// server has lz4 (this machine kind's does), the large columns use it, on a new database and after migrating one.
#[tokio::test]
async fn postgres_large_columns_are_compressed_with_lz4() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("lz4")).await.unwrap();
    let options = PoolOptions { size: 2, wait: Duration::from_secs(10) };
    PostgresStorage::open(&url, options).await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let has_lz4 = client
        .query_one("SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'", &[])
        .await
        .ok()
        .and_then(|row| row.get::<_, Option<bool>>(0))
        .unwrap_or(false);
    assert!(has_lz4, "this test needs a PostgreSQL (14 or later) built with lz4");
    let columns = [
        ("a13n_journal_chunks", "lines"),
        ("a13n_event_chunks", "events"),
        ("a13n_event_chunks", "items"),
        ("a13n_items", "item"),
        ("a13n_runs", "continuation"),
    ];
    for (table, column) in columns {
        let sql = "SELECT attcompression::text FROM pg_attribute WHERE attrelid = $1::text::regclass AND attname = $2";
        let compression: String = client.query_one(sql, &[&table, &column]).await.unwrap().get(0);
        assert_eq!(compression, "l", "{table}.{column}");
    }
}

/// A one-line commit stores its line and events, not the growing message: items and the continuation are stored
/// only at a checkpoint (after `checkpoint_bytes` of journal, or at the run's end), and a run rebuilt from storage
/// between checkpoints (its checkpoint, then the journal after it) equals the fold.
#[tokio::test]
async fn commits_between_checkpoints_store_lines_and_events_and_rebuild_exactly() {
    let limits = RunLimits { checkpoint_bytes: 16 * 1024, ..RunLimits::default() };
    let (runs, metrics, dir) = runs("checkpoints", limits);
    let lines = a13n_testkit::text_stream("thread-c", "run-c", 400);
    let mut stored_at = Vec::new();
    for (offset, line) in lines.iter().enumerate().take(lines.len() - 1) {
        runs.ingest("run-c", offset as u64, vec![line.clone()], OnReject::Refuse).await.unwrap();
        let record = runs.storage().run("run-c").await.unwrap().unwrap();
        assert_eq!(record.journal_len, offset as u64 + 1);
        if stored_at.last() != Some(&record.checkpoint_len) {
            stored_at.push(record.checkpoint_len);
        }
        // Between checkpoints the journal runs ahead of the stored display by less than the bound.
        let behind: usize = lines[record.checkpoint_len as usize..=offset].iter().map(|l| l.len() + 1).sum();
        assert!(behind <= 16 * 1024 + lines[offset].len() + 1, "{behind} journal bytes after the checkpoint");
        if offset % 97 == 0 {
            // Rebuilt from storage mid-message (a restart), the display is the fold's.
            let rebuilt = Runs::new(runs.storage(), false);
            let snapshot = rebuilt.snapshot("run-c").await.unwrap().unwrap();
            assert_eq!(snapshot, fold_of(&lines[..=offset]), "rebuilt after line {offset}");
        }
    }
    let checkpoints = stored_at.len();
    assert!(checkpoints > 2 && checkpoints < lines.len() / 4, "{checkpoints} checkpoints for {} lines", lines.len());
    let last = lines.len() - 1;
    runs.ingest("run-c", last as u64, vec![lines[last].clone()], OnReject::Refuse).await.unwrap();
    let record = runs.storage().run("run-c").await.unwrap().unwrap();
    assert_eq!(record.checkpoint_len, lines.len() as u64, "the run's end is a checkpoint");
    let rebuilt = Runs::new(runs.storage(), false);
    assert_eq!(rebuilt.snapshot("run-c").await.unwrap().unwrap(), fold_of(&lines));
    assert_eq!(metrics.journal_rebuilds.get(), 0, "no rebuild from the whole journal");
    let _ = std::fs::remove_dir_all(dir);
}

/// A thread's runs are ordered by when their first commit became visible, not by when it began: a run whose
/// first commit waits (here on another session's uncommitted row of the same run id) while a later run commits
/// must come after it, or a follower that saw the later run first would never see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_threads_runs_are_in_the_order_their_first_commits_became_visible() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("thread_order")).await.unwrap();
    let options = PoolOptions { size: 4, wait: Duration::from_secs(10) };
    let runs = Arc::new(Runs::new(Arc::new(PostgresStorage::open(&url, options).await.unwrap()), false));
    let (mut blocker, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let transaction = blocker.transaction().await.unwrap();
    let hold = "INSERT INTO a13n_runs (run_id, journal_len, position, complete) VALUES ('run-x', 0, 0, FALSE)";
    transaction.batch_execute(hold).await.unwrap();
    // Run X's first commit begins (and waits on the row another session holds).
    let slow = {
        let runs = Arc::clone(&runs);
        tokio::spawn(async move { runs.ingest("run-x", 0, hello_stream("thread-o", "run-x"), OnReject::Refuse).await })
    };
    let (waiting, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let row = waiting.query_one("SELECT count(*) FROM pg_locks WHERE NOT granted", &[]).await.unwrap();
        if row.get::<_, i64>(0) > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "run X's commit never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Run Y begins later and commits first.
    runs.ingest("run-y", 0, hello_stream("thread-o", "run-y"), OnReject::Refuse).await.unwrap();
    transaction.rollback().await.unwrap();
    slow.await.unwrap().unwrap();
    let listed = runs.storage().thread_runs("thread-o", 0, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["run-y", "run-x"], "the order the runs became visible in");
}

/// The refusal a line gets when the host folds it on the fast path (its identity read from its head, the line
/// decoded only when no lane takes it) is the one decoding it first gives: a malformed line is malformed before it
/// is another run's, a key after the event overrides the head's, and a decoder's or observer's message is its own.
#[tokio::test]
async fn refusals_on_the_fast_path_are_those_of_decoding_first() {
    let (runs, _, dir) = runs("fast-refusals", RunLimits::default());
    let lines = hello_stream("t", "run-f");
    let malformed = lines[2].replacen("\"index\":0", "\"index\":\"zero\"", 1);
    assert_ne!(malformed, lines[2]);
    let kind_changed = lines[2].replacen("\"part_delta_kind\":\"text\"", "\"part_delta_kind\":\"thinking\"", 1);
    assert_ne!(kind_changed, lines[2]);
    let overridden = format!("{},\"thread_id\":\"elsewhere\"}}", lines[2].strip_suffix('}').unwrap());
    for (case, bad) in [("malformed", &malformed), ("kind changed", &kind_changed), ("overridden", &overridden)] {
        let run_id = format!("run-f-{case}");
        let mut batch: Vec<String> = lines[..2].iter().map(|line| line.replace("run-f", &run_id)).collect();
        batch.push(bad.replace("\"run-f\"", &format!("\"{run_id}\"")));
        // What decoding first, then folding, says of the third line.
        let mut fold = DisplayFold::new(run_id.clone());
        for line in &batch[..2] {
            fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
        }
        let expected = match SourceItem::from_json(&batch[2]) {
            Err(error) => Some(("input", error.to_string())),
            Ok(item) if item.thread_id != "t" => None,
            Ok(item) => match fold.fold_source(&item) {
                Err(error @ a13n_stream_protocol::FoldError::Observation(_)) => {
                    Some(("observation", error.to_string()))
                }
                Err(error) => Some(("input", error.to_string())),
                Ok(_) => panic!("{case}: the line folds"),
            },
        };
        match (runs.ingest(&run_id, 0, batch.clone(), OnReject::Skip).await, expected) {
            (Ok(accepted), Some((kind, message))) => {
                assert_eq!(accepted.rejected.len(), 1, "{case}");
                let rejected = &accepted.rejected[0];
                assert_eq!((rejected.line, rejected.kind.as_str()), (2, kind), "{case}");
                assert_eq!(rejected.message, message, "{case}");
            }
            (Err(IngestError::Identity { line: 2, .. }), None) => {}
            (other, expected) => panic!("{case}: {other:?}, expected {expected:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Regression: the host stored events as the fold writes observed lines (Python's `json.dumps`), so a float with a
/// small exponent was spelled otherwise than before (`1e-05` for `0.00001`) and a float too large to hold was
/// stored and sent as `Infinity`, which is not JSON. Stored events are Pydantic's JSON of each event, as
/// `event_json` of the decode-first fold gives it, whatever path the line takes.
#[tokio::test]
async fn stored_events_are_pydantics_json_of_each_event() {
    let (runs, _, dir) = runs("pydantic-events", RunLimits::default());
    let case = a13n_testkit::workspace_root().join("tests/cases/extra-parts/source.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(case).unwrap().lines().take(4).map(str::to_owned).collect();
    assert!(lines[3].contains("1e-05"), "the case holds small floats");
    // Floats too large to hold where a model keeps any value (a part's provider details; an extension payload
    // holding one is refused, as the Harness refuses it).
    let start = r#"{"index":0,"part":{"tool_name":"f","args":"{}","tool_call_id":"c1","tool_kind":null,"id":null,"provider_name":null,"provider_details":{"x":1e999,"y":-1e999},"part_kind":"tool-call"},"previous_part_kind":null,"event_kind":"part_start"}"#;
    let head = lines[3].split(r#","event":"#).next().unwrap().replace(r#""sequence":3"#, r#""sequence":4"#);
    lines.push(format!(r#"{head},"event":{start}}}"#));
    runs.ingest("run-x", 0, lines.clone(), OnReject::Refuse).await.unwrap();
    let stored = runs.storage().events_after("run-x", 0, 1000).await.unwrap();
    let mut fold = DisplayFold::new("run-x");
    let mut expected = Vec::new();
    for line in &lines {
        for entry in fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap() {
            expected.push((entry.sequence, a13n_stream_protocol::display::event_json(&entry.event)));
        }
    }
    let stored: Vec<(u64, String)> = stored.into_iter().map(|event| (event.sequence, event.event)).collect();
    assert_eq!(stored, expected);
    for (_, event) in &stored {
        serde_json::from_str::<serde_json::Value>(event).unwrap_or_else(|error| panic!("{error}: {event}"));
    }
    assert!(stored.iter().any(|(_, event)| event.contains("0.00001") && !event.contains("1e-05")));
    assert!(stored.iter().any(|(_, event)| event.contains(r#""provider_details":{"x":null,"y":null}"#)));
    let _ = std::fs::remove_dir_all(dir);
}

/// The display change of the last batch `listener` was sent.
fn last_display_batch(listener: &mut Listener) -> Arc<DisplayBatch> {
    let mut last = None;
    while let Ok(live) = listener.try_recv() {
        if let Live::Batch(batch) = live.as_ref() {
            last = Some(Arc::clone(batch));
        }
    }
    last.expect("a batch was published")
}

#[tokio::test]
async fn display_items_are_gathered_only_for_display_followers_and_go_whole_after_a_pause() {
    let (runs, _, dir) = runs("display-followers", RunLimits::default());
    let lines = a13n_testkit::text_stream("t", "run-d", 6);
    let ingest = |from: usize, to: usize| runs.ingest("run-d", from as u64, lines[from..to].to_vec(), OnReject::Refuse);
    let (mut events, _) = runs.subscribe("run-d").await.unwrap();
    ingest(0, 3).await.unwrap();
    assert_eq!(last_display_batch(&mut events).items, None, "nobody follows the display: nothing gathered");

    let (mut display, _) = runs.follow("run-d", Follows::Display).await.unwrap();
    ingest(3, 5).await.unwrap();
    let items = last_display_batch(&mut display).items.clone().expect("gathered for a display follower");
    assert!(items.len() == 1 && items[0].1.is_none(), "the first gathered batch sends the item whole");
    ingest(5, 6).await.unwrap();
    let items = last_display_batch(&mut display).items.clone().unwrap();
    assert!(items[0].1.is_some(), "then the follower holds it: a patch");
    drop(display);

    ingest(6, 7).await.unwrap();
    assert_eq!(last_display_batch(&mut events).items, None, "the follower left");
    let (mut display, _) = runs.follow("run-d", Follows::Display).await.unwrap();
    ingest(7, 8).await.unwrap();
    let items = last_display_batch(&mut display).items.clone().unwrap();
    // A patch here would be from the version published before the pause, which no follower holds.
    assert!(items.len() == 1 && items[0].1.is_none(), "after a pause the item goes whole again");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn an_ingest_dropped_while_its_commit_is_awaited_leaves_nothing_folded_behind() {
    let dir = std::env::temp_dir().join(format!("a13n-runs-stalling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let storage = Stalling::open(&dir.join("host.db"));
    let runs = Runs::with_limits(Arc::clone(&storage) as _, false, RunLimits::default(), Arc::default());
    let lines = a13n_testkit::text_stream("t", "run-c", 4);
    runs.ingest("run-c", 0, lines[..3].to_vec(), OnReject::Refuse).await.unwrap();
    storage.stall_commits(true);
    let abandoned = runs.ingest("run-c", 3, lines[3..6].to_vec(), OnReject::Refuse);
    assert!(tokio::time::timeout(Duration::from_millis(200), abandoned).await.is_err(), "the commit stalls");
    storage.stall_commits(false);
    let committed = runs.status("run-c").await.unwrap().unwrap();
    assert_eq!(committed.journal_len, 3, "the status is storage's, not the abandoned fold's");
    // The client's retry folds the lines once, on the committed state.
    runs.ingest("run-c", 3, lines[3..].to_vec(), OnReject::Refuse).await.unwrap();
    assert_eq!(runs.snapshot("run-c").await.unwrap().unwrap(), fold_of(&lines));
    let _ = std::fs::remove_dir_all(dir);
}

/// A batch's lines and events are stored as chunks (one, or several past a megabyte): every range of the journal
/// and every page of events reads back exactly what was committed, across chunk and batch boundaries.
async fn chunks_read_back_every_range(storage: Arc<dyn Storage>) {
    let big = |index: usize| format!("{index}{}", "x".repeat(600_000));
    // Batches of 3, 1 and 3 lines; the last of three lines of 600 KB each (three chunks).
    let batches: [Vec<String>; 3] =
        [(0..3).map(|i| format!("line {i}")).collect(), vec!["line 3".into()], (4..7).map(big).collect()];
    let (mut lines, mut events) = (Vec::new(), Vec::new());
    for (index, batch_lines) in batches.into_iter().enumerate() {
        // A batch's events have consecutive sequences; the second batch has none, the third large ones.
        let count = [4, 0, 3][index];
        let made: Vec<StoredEvent> = (0..count)
            .map(|n| {
                let sequence = events.len() as u64 + n + 1;
                let event = if index == 2 { big(sequence as usize) } else { format!("{{\"n\":{sequence}}}") };
                StoredEvent { sequence, event, item: Some(format!("{{\"i\":{sequence}}}")) }
            })
            .collect();
        let batch = Batch {
            run_id: "run-ch".into(),
            offset: lines.len() as u64,
            lines: batch_lines.clone(),
            events: made.clone(),
            position: (events.len() + made.len()) as u64,
            incarnation: 5,
            ..Batch::default()
        };
        storage.commit(Arc::new(batch)).await.unwrap();
        lines.extend(batch_lines);
        events.extend(made);
    }
    for from in 0..=lines.len() {
        for to in from..=lines.len() + 1 {
            let read = storage.journal("run-ch", from as u64, to as u64).await.unwrap();
            assert!(read == lines[from..to.min(lines.len())], "journal {from}..{to}");
        }
    }
    for after in 0..=events.len() {
        for limit in 1..=events.len() + 1 {
            let read = storage.events_after("run-ch", after as u64, limit).await.unwrap();
            assert!(read == events[after..(after + limit).min(events.len())], "events after {after}, {limit}");
        }
    }
}

#[tokio::test]
async fn sqlite_chunks_read_back_every_range() {
    let (runs, _, dir) = runs("chunks", RunLimits::default());
    chunks_read_back_every_range(runs.storage()).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn postgres_chunks_read_back_every_range() {
    let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("chunks")).await.unwrap();
    let options = PoolOptions { size: 2, wait: Duration::from_secs(10) };
    chunks_read_back_every_range(Arc::new(PostgresStorage::open(&url, options).await.unwrap())).await;
}
