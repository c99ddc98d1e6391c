//! The host over HTTP, in this process (`serve_until` on a runtime of its own), as clients find it: ghost
//! subscriptions, over-long lines, a database file removed under the host, deleting runs and retention.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use a13n_stream_bench::http::{request, Response};
use a13n_stream_server::Config;
use a13n_testkit::hello_stream;
use serde_json::Value;

/// A host serving on a free loopback port from a thread of its own, stopped (gracefully) when dropped.
struct Host {
    address: String,
    dir: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Host {
    /// A host over a fresh SQLite file, configured by `configure`.
    fn start(name: &str, configure: impl FnOnce(&mut Config)) -> Host {
        let dir = std::env::temp_dir().join(format!("a13n-host-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut config = Config::default();
        config.database = dir.join("host.db").display().to_string();
        Host::with_config(dir, config, configure)
    }

    fn with_config(dir: PathBuf, mut config: Config, configure: impl FnOnce(&mut Config)) -> Host {
        config.listen = "127.0.0.1:0".parse().unwrap();
        config.shutdown_timeout = Duration::from_secs(2);
        configure(&mut config);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (listening, address) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let serving = a13n_stream_server::serve_until(
                config,
                move |address| listening.send(address.to_string()).unwrap(),
                async move {
                    let _ = stopped.await;
                },
            );
            if let Err(error) = runtime.block_on(serving) {
                panic!("the host failed: {error}");
            }
        });
        let address = address.recv_timeout(Duration::from_secs(60)).expect("the host listens within 60 s");
        Host { address, dir, stop: Some(stop), thread: Some(thread) }
    }

    fn get(&self, path: &str) -> Response {
        request(&self.address, "GET", path, &[], b"").unwrap()
    }

    fn post(&self, run: &str, offset: u64, lines: &[String]) -> (u16, Value) {
        let body = lines.join("\n") + "\n";
        let path = format!("/v1/runs/{run}/source?offset={offset}");
        let response = request(&self.address, "POST", &path, &[], body.as_bytes()).unwrap();
        (response.status, json(&response.body))
    }

    /// A metric's value from `/metrics` (a counter by its `_total` name).
    fn metric(&self, name: &str) -> f64 {
        let text = self.get("/metrics").body;
        let line = text.lines().find(|line| line.split(' ').next() == Some(name));
        line.and_then(|line| line.split(' ').nth(1)).and_then(|value| value.parse().ok()).unwrap_or_else(|| {
            panic!("no metric {name} in {text}");
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// Wait (at most `within`) for `condition`; a busy machine may take a while, a broken host never gets there.
fn eventually(within: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !condition() {
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An event stream opened and read up to the end of its response head: the host has subscribed it.
fn open_stream(address: &str, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "{path}: the head ended early");
        seen.push(byte[0]);
    }
    assert!(seen.starts_with(b"HTTP/1.1 200"), "{path}: {}", String::from_utf8_lossy(&seen));
    stream
}

/// Regression (#29): subscribing to runs that were never ingested kept a resident slot per run after the client
/// left (800 ghost subscriptions left `a13n_resident_runs` at 807), and each pushed real runs out of memory.
#[test]
fn ghost_subscriptions_leave_no_resident_run_and_push_no_real_run_out() {
    let host = Host::start("ghosts", |config| {
        config.runs.max_resident = 8;
        // Keep-alive comments every third of a second: a closed client is noticed at the next one at the latest.
        config.idle_timeout = Duration::from_secs(1);
    });
    let lines = hello_stream("t", "run-real");
    assert_eq!(host.post("run-real", 0, &lines[..2]).0, 200);
    let resident = host.metric("a13n_resident_runs");
    let recoveries = host.metric("a13n_run_recoveries_total");
    for round in 0..2 {
        let streams: Vec<TcpStream> = (0..60)
            .map(|index| {
                let route = if index % 2 == 0 { "events" } else { "display" };
                open_stream(&host.address, &format!("/v1/runs/ghost-{round}-{index}/{route}"))
            })
            .collect();
        // The real run is still in memory: reading it rebuilds nothing from storage.
        assert_eq!(host.get("/v1/runs/run-real/snapshot").status, 200);
        assert_eq!(host.metric("a13n_run_recoveries_total"), recoveries, "ghosts pushed the real run out of memory");
        drop(streams);
        eventually(Duration::from_secs(30), "the resident gauge returns to where it was", || {
            host.metric("a13n_resident_runs") <= resident
        });
    }
    assert_eq!(host.post("run-real", 2, &lines[2..]).0, 200);
    assert_eq!(host.metric("a13n_run_recoveries_total"), recoveries, "the real run stayed resident throughout");
    assert_eq!(host.metric("a13n_run_evictions_total"), 0.0);
}
