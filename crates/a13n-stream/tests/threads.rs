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
