//! `GET /v1/threads/{thread_id}/events`: a client following a thread gets every event of its runs exactly once and
//! in order, run after run, including runs started after it connected: through a host restart (resuming with the
//! run-naming `Last-Event-ID`), and from a second PostgreSQL process while another ingests.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a13n_stream_bench::http::{request, sse_each};
use a13n_stream_server::runs::is_terminal;
use a13n_testkit::host::Server;

const THREAD: &str = "thread-t";

/// Follow the thread at whatever address `address` holds, reconnecting with the last id, until `runs` terminal
/// events arrived (or a minute passed): every `(id, data)` received.
fn follow(address: Arc<Mutex<String>>, runs: usize) -> std::thread::JoinHandle<Vec<(String, String)>> {
    std::thread::spawn(move || {
        let mut received: Vec<(String, String)> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while received.iter().filter(|(_, data)| is_terminal(data)).count() < runs && Instant::now() < deadline {
            let at = address.lock().unwrap().clone();
            let last = received.last().map(|(id, _)| id.clone());
            sse_each(&at, &format!("/v1/threads/{THREAD}/events"), last.as_deref(), Duration::from_secs(5), |frame| {
                received.push((frame.id, frame.data));
                received.iter().filter(|(_, data)| is_terminal(data)).count() < runs
            });
            std::thread::sleep(Duration::from_millis(50));
        }
        received
    })
}

/// Post `lines` of `run` in batches of `size` from `offset`.
fn post(address: &str, run: &str, lines: &[String], from: usize, to: usize) {
    for offset in (from..to).step_by(5) {
        let end = (offset + 5).min(to);
        let body = lines[offset..end].join("\n") + "\n";
        let path = format!("/v1/runs/{run}/source?offset={offset}");
        let response = request(address, "POST", &path, &[], body.as_bytes()).unwrap();
        assert_eq!(response.status, 200, "{}", response.body);
    }
}

/// What the run routes say: every event of each run, with the thread's ids.
fn expected(address: &str, runs: &[&str]) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for run in runs {
        sse_each(address, &format!("/v1/runs/{run}/events"), None, Duration::from_secs(5), |frame| {
            let terminal = is_terminal(&frame.data);
            all.push((format!("{run}/{}", frame.id), frame.data));
            !terminal
        });
    }
    all
}

fn streams() -> Vec<(String, Vec<String>)> {
    (1..=3)
        .map(|index| {
            let run = format!("run-t{index}");
            let lines = a13n_testkit::text_stream(THREAD, &run, 20 + index * 7);
            (run, lines)
        })
        .collect()
}

#[test]
fn a_thread_is_followed_run_after_run_through_a_restart() {
    let dir = std::env::temp_dir().join(format!("a13n-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("host.db");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    let address = Arc::new(Mutex::new(server.address.clone()));
    let runs = streams();
    let (first, second, third) = (&runs[0], &runs[1], &runs[2]);
    post(&server.address, &first.0, &first.1, 0, first.1.len());
    let follower = follow(Arc::clone(&address), 3);
    std::thread::sleep(Duration::from_millis(200));
    let half = second.1.len() / 2;
    post(&server.address, &second.0, &second.1, 0, half);
    server.kill();
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    *address.lock().unwrap() = server.address.clone();
    post(&server.address, &second.0, &second.1, half, second.1.len());
    post(&server.address, &third.0, &third.1, 0, third.1.len());
    let received = follower.join().unwrap();
    let expected = expected(&server.address, &[&first.0, &second.0, &third.0]);
    assert!(expected.len() > 60, "{} events", expected.len());
    assert_eq!(received, expected, "every event of the three runs once, in order");
}

#[test]
fn postgres_a_thread_is_followed_from_another_process() {
    let database = a13n_testkit::host::postgres_database("threads");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let (writer, reader) = (Server::start(exe, &database, &[]), Server::start(exe, &database, &[]));
    let runs = streams();
    post(&writer.address, &runs[0].0, &runs[0].1, 0, runs[0].1.len());
    let follower = follow(Arc::new(Mutex::new(reader.address.clone())), 3);
    std::thread::sleep(Duration::from_millis(200));
    for (run, lines) in &runs[1..] {
        post(&writer.address, run, lines, 0, lines.len());
    }
    let received = follower.join().unwrap();
    let names: Vec<&str> = runs.iter().map(|(run, _)| run.as_str()).collect();
    assert_eq!(received, expected(&reader.address, &names), "every event of the three runs once, in order");
}

#[test]
fn a_thread_position_must_name_a_run_of_the_thread() {
    let dir = std::env::temp_dir().join(format!("a13n-threads-pos-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(env!("CARGO_BIN_EXE_a13n-stream"), dir.join("host.db").to_str().unwrap(), &[]);
    let lines = a13n_testkit::text_stream("other-thread", "run-o", 5);
    post(&server.address, "run-o", &lines, 0, lines.len());
    for after in ["run-o/0-1", "run-x/0-1", "0-1", "run-o/1-1", "run-o/0-999"] {
        let path = format!("/v1/threads/{THREAD}/events?after={after}");
        let response = request(&server.address, "GET", &path, &[], b"").unwrap();
        assert_eq!(response.status, 400, "{after}: {}", response.body);
        assert!(response.body.contains("\"position\""), "{}", response.body);
    }
}

/// `/v1/threads/{thread_id}/observed`: each run's snapshot, then its entries without gap or repeat, then its end,
/// run after run, through a restart (resuming with the run-naming id); the entries are the fold's own.
#[test]
fn a_threads_observed_frames_are_each_runs_snapshot_entries_and_end() {
    use a13n_stream_protocol::{DisplayFold, SourceItem};
    use serde_json::Value;
    let dir = std::env::temp_dir().join(format!("a13n-threads-observed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("host.db");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    let address = Arc::new(Mutex::new(server.address.clone()));
    let runs = streams();
    post(&server.address, &runs[0].0, &runs[0].1, 0, runs[0].1.len());
    let follower = {
        let address = Arc::clone(&address);
        std::thread::spawn(move || {
            let mut frames: Vec<(String, String, String)> = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(60);
            // The runs whose end arrived (a run's end may come again after a reconnection).
            let ends = |frames: &Vec<(String, String, String)>| {
                frames.iter().filter(|f| f.1 == "end").map(|f| &f.0).collect::<std::collections::HashSet<_>>().len()
            };
            while ends(&frames) < 3 && Instant::now() < deadline {
                let at = address.lock().unwrap().clone();
                let last = frames.iter().rev().find(|f| !f.0.is_empty()).map(|f| f.0.clone());
                sse_each(
                    &at,
                    &format!("/v1/threads/{THREAD}/observed"),
                    last.as_deref(),
                    Duration::from_secs(5),
                    |f| {
                        frames.push((f.id, f.event, f.data));
                        ends(&frames) < 3
                    },
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            frames
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let half = runs[1].1.len() / 2;
    post(&server.address, &runs[1].0, &runs[1].1, 0, half);
    server.kill();
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    *address.lock().unwrap() = server.address.clone();
    post(&server.address, &runs[1].0, &runs[1].1, half, runs[1].1.len());
    post(&server.address, &runs[2].0, &runs[2].1, 0, runs[2].1.len());
    let mut frames = follower.join().unwrap();
    // A follower that reconnected holding a run's end (its id is the run's last entries') gets that end again, as
    // the run's own route sends it: the client may not have had it. A repeat of the end just held is dropped.
    frames.dedup_by(|next, previous| next.1 == "end" && next == previous);
    let mut rest = frames.as_slice();
    for (run, lines) in &runs {
        let mut fold = DisplayFold::new(run.clone());
        let mut expected = Vec::new();
        for line in lines {
            for entry in fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap() {
                expected.push(serde_json::from_str::<Value>(&entry.to_json()).unwrap());
            }
        }
        let (snapshot, tail) = rest.split_first().expect("a snapshot frame");
        assert_eq!(snapshot.1, "snapshot", "{run}: {snapshot:?}");
        let (id_run, at) = snapshot.0.split_once('/').unwrap();
        assert_eq!(id_run, run);
        let from: usize = at.split_once('-').unwrap().1.parse().unwrap();
        let end = tail.iter().position(|f| f.1 == "end").expect("an end frame");
        let mut entries = Vec::new();
        for frame in &tail[..end] {
            assert_eq!(frame.1, "observed", "{run}: {frame:?}");
            assert!(frame.0.starts_with(&format!("{run}/")), "{frame:?}");
            entries.extend(serde_json::from_str::<Value>(&frame.2).unwrap()["observed"].as_array().unwrap().clone());
        }
        assert_eq!(entries, expected[from..], "{run}: the entries after its snapshot, once each, in order");
        rest = &tail[end + 1..];
    }
    assert!(rest.is_empty(), "nothing after the third run's end: {rest:?}");
}
