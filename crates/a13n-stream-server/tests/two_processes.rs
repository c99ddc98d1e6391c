//! Two hosts over one database, driven directly (no HTTP, no PostgreSQL): the order in which one host hears of
//! the other's commits must never leave its subscribers waiting.

use std::future::Future;
use std::sync::Arc;

use a13n_stream_server::postgres::Notice;
use a13n_stream_server::runs::{Listener, Live, OnReject, RunLimits, Runs};
use a13n_stream_server::storage::SqliteStorage;
use tokio::sync::broadcast::error::TryRecvError;

mod support;
use support::stalling::Stalling;

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
    let (one, alone) = hosts_alone("alternate-alone");
    one.ingest(&run, 0, lines.clone(), OnReject::Refuse).await.unwrap();
    let expected = one.snapshot(&run).await.unwrap().unwrap();
    assert_eq!(a.snapshot(&run).await.unwrap().unwrap(), expected, "host A's display is one host's");
    assert_eq!(b.snapshot(&run).await.unwrap().unwrap(), expected, "host B's display is one host's");
    for (name, host) in [("A", &a), ("B", &b)] {
        let (recoveries, catch_ups) = (host.metrics.recoveries.get(), host.metrics.catch_ups.get());
        assert!(recoveries <= 1, "host {name} rebuilt the run {recoveries} times");
        assert!(catch_ups >= 5, "host {name} caught up {catch_ups} times");
    }
    let _ = (std::fs::remove_dir_all(dir), std::fs::remove_dir_all(alone));
}

/// A third host, on a database of its own.
fn hosts_alone(name: &str) -> (Runs, std::path::PathBuf) {
    let (one, _, dir) = hosts(name);
    (one, dir)
}

/// Three hosts over one SQLite file, with checkpoints every `checkpoint_bytes` of journal.
fn hosts_checkpointing(name: &str, checkpoint_bytes: u64) -> (Runs, Runs, Runs, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("a13n-two-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host.db");
    let limits = RunLimits { checkpoint_bytes, ..RunLimits::default() };
    let open = || Runs::with_limits(Arc::new(SqliteStorage::open(&path).unwrap()), true, limits, Arc::default());
    (open(), open(), open(), dir)
}

/// From the review of the catch-up: every case of the repository, its batches alternating between two hosts that
/// are told of each other's commits only sometimes and read in between, with checkpoints taken after every batch
/// or rarely, and lines refused and skipped: both hosts, a third host's rebuild and a single host's rebuild all
/// hold the display one host's ingest makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catching_up_under_checkpoints_and_skipped_lines_holds_one_hosts_display() {
    let mut cases: Vec<_> = std::fs::read_dir(a13n_testkit::own_cases()).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let mut lines: Vec<String> =
            std::fs::read_to_string(case.join("source.jsonl")).unwrap().lines().map(str::to_owned).collect();
        let run = serde_json::from_str::<serde_json::Value>(&lines[0]).unwrap()["run_id"].as_str().unwrap().to_owned();
        // A line that does not decode, and a valid line again out of place: both refused and skipped.
        let (half, again) = (lines.len() / 2, lines[1].clone());
        lines.insert(half, "not json".to_owned());
        lines.insert(half + 1, again);
        for (chunk, checkpoint_bytes) in [(1, 1), (3, 2000)] {
            let (a, b, c, dir) = hosts_checkpointing(&format!("catch-{n}-{chunk}"), checkpoint_bytes);
            let (one, _, _, alone) = hosts_checkpointing(&format!("catch-alone-{n}-{chunk}"), checkpoint_bytes);
            let mut offset = 0;
            for (turn, batch) in lines.chunks(chunk).enumerate() {
                let (host, other) = if turn % 2 == 0 { (&a, &b) } else { (&b, &a) };
                let accepted = host.ingest(&run, offset, batch.to_vec(), OnReject::Skip).await.unwrap();
                if turn % 3 != 2 {
                    other.advanced_elsewhere(&Notice { run_id: run.clone(), position: Some(accepted.position) }).await;
                }
                if turn % 4 == 3 {
                    other.snapshot(&run).await.unwrap();
                }
                one.ingest(&run, offset, batch.to_vec(), OnReject::Skip).await.unwrap();
                offset += batch.len() as u64;
            }
            let expected = one.snapshot(&run).await.unwrap().unwrap();
            for host in [&a, &b] {
                host.advanced_elsewhere(&Notice { run_id: run.clone(), position: None }).await;
            }
            let rebuilt = Runs::new(Arc::new(SqliteStorage::open(&alone.join("host.db")).unwrap()), true);
            for (name, host) in [("A", &a), ("B", &b), ("a third host", &c), ("one host, rebuilt", &rebuilt)] {
                if host.snapshot(&run).await.unwrap().unwrap() != expected {
                    failures.push(format!("{}, batches of {chunk}: {name} differs", case.display()));
                }
            }
            let _ = (std::fs::remove_dir_all(dir), std::fs::remove_dir_all(alone));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Found by the review of the catch-up: a read dropped while it caught the run up (its client went away) cleared
/// `behind` first, so the host went on serving the run as it was before the other host's batch. Host A's journal
/// reads stall while the read is polled, so it is dropped mid catch-up however fast storage answers (with plain
/// SQLite the first poll could finish the read on a busy machine, and the test failed in CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_dropped_while_catching_up_leaves_the_run_behind() {
    let (_, b, dir) = hosts("cancel");
    let storage = Stalling::open(&dir.join("host.db"));
    let a = Runs::new(Arc::clone(&storage) as _, true);
    let lines = a13n_testkit::text_stream("thread-w", "run-w", 6);
    a.ingest("run-w", 0, lines[..3].to_vec(), OnReject::Refuse).await.unwrap();
    let accepted = b.ingest("run-w", 3, lines[3..6].to_vec(), OnReject::Refuse).await.unwrap();
    a.advanced_elsewhere(&Notice { run_id: "run-w".into(), position: Some(accepted.position) }).await;
    storage.stall_journal_reads(true);
    let mut read = Box::pin(a.snapshot("run-w"));
    let pending = std::future::poll_fn(|cx| std::task::Poll::Ready(read.as_mut().poll(cx).is_pending())).await;
    drop(read);
    storage.stall_journal_reads(false);
    assert!(pending, "the read was dropped while it awaited storage");
    assert_eq!(a.snapshot("run-w").await.unwrap(), b.snapshot("run-w").await.unwrap(), "A's display is B's");
    assert_eq!(a.status("run-w").await.unwrap().unwrap().position, accepted.position);
    let _ = std::fs::remove_dir_all(dir);
}
