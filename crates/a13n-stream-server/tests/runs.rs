//! `Runs` driven directly over SQLite: memory bounds, conflicts answered from the committed position, identity
//! checks, and rejected lines skipped on request.

use std::sync::Arc;
use std::time::Duration;

use a13n_stream_protocol::{DisplayFold, SourceItem};
use a13n_stream_server::metrics::Metrics;
use a13n_stream_server::runs::{Conflict, IngestError, LineKind, OnReject, RunLimits, Runs};
use a13n_stream_server::storage::SqliteStorage;
use a13n_testkit::hello_stream;

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
    let limits = RunLimits { max_resident: 3, idle: Duration::from_secs(3600) };
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
    let idle = RunLimits { max_resident: 100, idle: Duration::ZERO };
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
        Err(IngestError::Offset { expected, conflict }) => (expected, conflict),
        other => panic!("expected a conflict, got {other:?}"),
    };
    assert_eq!(offset(runs.ingest("run-c", 5, lines[3..].to_vec(), OnReject::Refuse).await), (3, Conflict::Ahead));
    let mut changed = lines[1..3].to_vec();
    changed[0] = changed[0].replace("\"sequence\"", "\"sequence\" ");
    assert_eq!(offset(runs.ingest("run-c", 1, changed, OnReject::Refuse).await), (3, Conflict::DifferentContent));
    assert_eq!(offset(runs.ingest("run-c", 2, lines[2..].to_vec(), OnReject::Refuse).await), (3, Conflict::Behind));
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
    let (runs, _, dir) = runs("skip", RunLimits { max_resident: 1, idle: Duration::from_secs(3600) });
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
    let (runs, metrics, dir) =
        runs("ghost-subscribers", RunLimits { max_resident: 4, idle: Duration::from_secs(3600) });
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
