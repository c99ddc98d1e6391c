//! Two hosts over one database, driven directly (no HTTP, no PostgreSQL): the order in which one host hears of
//! the other's commits must never leave its subscribers waiting.

use std::sync::Arc;

use a13n_stream_server::postgres::Notice;
use a13n_stream_server::runs::{Listener, Live, OnReject, Runs};
use a13n_stream_server::storage::SqliteStorage;
use tokio::sync::broadcast::error::TryRecvError;

fn stream() -> Vec<String> {
    a13n_testkit::hello_stream("thread-w", "run-w")
}

fn hosts(name: &str) -> (Runs, Runs, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("a13n-two-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host.db");
    let open = || Runs::new(Arc::new(SqliteStorage::open(&path).unwrap()), true);
    (open(), open(), dir)
}

/// A commit notice that names only the run, as an older process sends it.
fn notice() -> Notice {
    Notice { run_id: "run-w".into(), position: None }
}

fn woken(receiver: &mut Listener) -> bool {
    let mut wakes = 0;
    loop {
        match receiver.try_recv() {
            Ok(live) => wakes += usize::from(*live == Live::Wake),
            Err(TryRecvError::Empty) => return wakes > 0,
            Err(error) => panic!("the channel failed: {error}"),
        }
    }
}

/// Regression: host B rebuilt a run from storage while answering a retried batch before it heard of host A's
/// commit; the late commit notice then found B up to date and woke nobody, so B's subscribers waited forever for
/// events A had committed (the PostgreSQL two-node test hung in CI this way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuild_that_skips_ahead_wakes_subscribers() {
    let (a, b, dir) = hosts("rebuild");
    let lines = stream();
    let (mut receiver, status) = b.subscribe("run-w").await.unwrap();
    assert_eq!(status.position, 0);
    let first = a.ingest("run-w", 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(first.events > 0);
    // The retry reaches B first: B's run is behind storage, so it is rebuilt and the batch is a duplicate.
    let retried = b.ingest("run-w", 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(retried.duplicate);
    assert!(woken(&mut receiver), "the rebuild skipped ahead of what B published: its subscribers must wake");
    b.advanced_elsewhere(&notice()).await;
    assert!(!woken(&mut receiver), "the late notice has nothing new to announce");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_notice_wakes_subscribers_once_per_new_position() {
    let (a, b, dir) = hosts("notice");
    let lines = stream();
    let (mut receiver, _) = b.subscribe("run-w").await.unwrap();
    a.ingest("run-w", 0, lines[..3].to_vec(), OnReject::Refuse).await.unwrap();
    b.advanced_elsewhere(&notice()).await;
    assert!(woken(&mut receiver));
    b.advanced_elsewhere(&notice()).await;
    assert!(!woken(&mut receiver), "a repeated notice for the same position wakes nobody");
    // B ingests the rest itself: its subscribers get the events, and B's state follows storage.
    let rest = b.ingest("run-w", 3, lines[3..].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(!rest.duplicate);
    let status = b.status("run-w").await.unwrap().unwrap();
    assert_eq!((status.position, status.complete, status.journal_len), (rest.position, true, lines.len() as u64));
    let _ = std::fs::remove_dir_all(dir);
}

/// Regression: host B still believed the journal ended where its own last batch did when the retry of host A's
/// next batch reached it before A's commit notice; B folded the batch, the commit found A's lines in place, and B
/// answered 409 "behind" instead of acknowledging the exact retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_that_meets_another_hosts_commit_is_a_duplicate() {
    let (a, b, dir) = hosts("retry");
    let lines = stream();
    b.ingest("run-w", 0, lines[..2].to_vec(), OnReject::Refuse).await.unwrap();
    let committed = a.ingest("run-w", 2, lines[2..4].to_vec(), OnReject::Refuse).await.unwrap();
    let retried = b.ingest("run-w", 2, lines[2..4].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(retried.duplicate, "{retried:?}");
    assert_eq!((retried.next_offset, retried.position), (committed.next_offset, committed.position));
    let rest = b.ingest("run-w", 4, lines[4..].to_vec(), OnReject::Refuse).await.unwrap();
    assert!(!rest.duplicate);
    let _ = std::fs::remove_dir_all(dir);
}

/// Regression (found by a trial of two hosts behind a round-robin balancer): each batch that reached the other
/// host made it drop the run and rebuild it from storage (checkpoint, items, journal), so ingest slowed by a factor
/// of 13 and more as the run grew. A host now folds only the lines the other committed on top of what it holds:
/// the display is the same as one host's, and neither host rebuilds the run again after its first load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_alternating_between_hosts_catch_up_instead_of_rebuilding() {
    let (a, b, dir) = hosts("alternate");
    let path = a13n_testkit::own_cases().join("layout-real-subagent").join("source.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&path).unwrap().lines().map(str::to_owned).collect();
    let run = serde_json::from_str::<serde_json::Value>(&lines[0]).unwrap()["run_id"].as_str().unwrap().to_owned();
    let (mut offset, mut hosts) = (0, [&a, &b].into_iter().cycle());
    for batch in lines.chunks(3) {
        let host = hosts.next().unwrap();
        let accepted = host.ingest(&run, offset, batch.to_vec(), OnReject::Refuse).await.unwrap();
        assert!(!accepted.duplicate);
        offset += batch.len() as u64;
        // As PostgreSQL's NOTIFY would tell the other host (the order does not matter: each host also notices by
        // itself that storage moved on).
        let other = if std::ptr::eq(host, &a) { &b } else { &a };
        other.advanced_elsewhere(&Notice { run_id: run.clone(), position: Some(accepted.position) }).await;
    }
    let (one, _) = hosts_alone("alternate-alone");
    one.ingest(&run, 0, lines.clone(), OnReject::Refuse).await.unwrap();
    let expected = one.snapshot(&run).await.unwrap().unwrap();
    assert_eq!(a.snapshot(&run).await.unwrap().unwrap(), expected, "host A's display is one host's");
    assert_eq!(b.snapshot(&run).await.unwrap().unwrap(), expected, "host B's display is one host's");
    for (name, host) in [("A", &a), ("B", &b)] {
        let (recoveries, catch_ups) = (host.metrics.recoveries.get(), host.metrics.catch_ups.get());
        assert!(recoveries <= 1, "host {name} rebuilt the run {recoveries} times");
        assert!(catch_ups >= 5, "host {name} caught up {catch_ups} times");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A third host, on a database of its own.
fn hosts_alone(name: &str) -> (Runs, std::path::PathBuf) {
    let (one, _, dir) = hosts(name);
    (one, dir)
}
