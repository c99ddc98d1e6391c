//! The host over HTTP, in this process (`serve_until` on a runtime of its own), as clients find it: ghost
//! subscriptions, over-long lines, a database file removed under the host, deleting runs and retention.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, OnceLock};
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

    fn db(&self) -> PathBuf {
        self.dir.join("host.db")
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

/// What the hosts of this test binary logged (every level, as text lines).
fn logs() -> String {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    let buffer = LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        let subscriber = tracing_subscriber::fmt().with_writer(move || Capture(Arc::clone(&writer))).finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        buffer
    });
    String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

/// Send `total` bytes of `fill` as a chunked body (no `Content-Length`, as a streaming client sends), from a
/// thread of its own, and read the answer meanwhile. The host may answer before it has read everything.
fn post_chunked(address: &str, path: &str, total: usize, fill: impl Fn(usize) -> u8 + Send + 'static) -> Response {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/x-ndjson\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sending = std::thread::spawn(move || {
        const CHUNK: usize = 1 << 20;
        let mut sent = 0;
        while sent < total {
            let size = CHUNK.min(total - sent);
            let chunk: Vec<u8> = (sent..sent + size).map(&fill).collect();
            let framed = [format!("{size:x}\r\n").as_bytes(), &chunk, b"\r\n"].concat();
            // Once the host has answered, it reads no more: the rest may be refused.
            if writer.write_all(&framed).is_err() {
                return;
            }
            sent += size;
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    });
    let mut raw = Vec::new();
    let mut buffer = [0u8; 65536];
    // The answer is complete once its head and its Content-Length of body have arrived.
    loop {
        let read = stream.read(&mut buffer).unwrap_or(0);
        raw.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok()).flatten()
            });
            if length.is_some_and(|length| body.len() >= length) || read == 0 {
                break;
            }
        } else {
            assert!(read > 0, "the connection ended without an answer: {text}");
        }
    }
    drop(stream);
    let _ = sending.join();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Response { status, headers: Vec::new(), body: body.to_owned() }
}

/// Regression (#29): a 40 MiB line without a newline, under a body bound larger than the line bound, was refused
/// as "the body exceeds ..." once 32 MiB had been read, though the line had passed its own bound at 8 MiB.
#[test]
fn an_overlong_line_is_named_with_its_bound_and_position_before_the_body_bound() {
    let host = Host::start("longline", |_| {});
    let limits = Config::default();
    assert!(limits.max_body_bytes > limits.max_line_bytes);
    let lines = hello_stream("t", "run-long");
    assert_eq!(host.post("run-long", 0, &lines[..2]).0, 200);
    let answer = post_chunked(&host.address, "/v1/runs/run-long/source?offset=2", 40 << 20, |_| b'x');
    let error = &json(&answer.body)["error"];
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(error["code"], "too_large", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("{}-byte limit", limits.max_line_bytes)), "names the line bound: {message}");
    assert!(message.starts_with("line 2:"), "names the line: {message}");
    assert_eq!((error["line"].as_u64(), error["kind"].as_str()), (Some(2), Some("input")), "{error}");
    // Lines each within their bound that together pass the body bound are still refused as the body.
    let answer = post_chunked(&host.address, "/v1/runs/run-long/source?offset=2", 40 << 20, |index| {
        if index % 8192 == 8191 {
            b'\n'
        } else {
            b'x'
        }
    });
    assert_eq!(answer.status, 413, "{}", answer.body);
    let message = json(&answer.body)["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(&format!("the body exceeds {} bytes", limits.max_body_bytes)), "{message}");
    // Nothing was committed; the run goes on.
    assert_eq!(host.post("run-long", 2, &lines[2..]).0, 200);
}

/// Regression (#29): with the SQLite file deleted under a running host, commits still answered 200 (into the
/// unlinked file, so a restart showed no runs), `/healthz` stayed 200, and nothing was logged. The file's identity
/// is now checked: storage answers 503 saying the file is gone, `/healthz` too, and an error is logged.
#[test]
fn a_database_file_removed_or_replaced_under_the_host_is_refused_and_reported() {
    logs();
    for how in ["removed", "replaced"] {
        let host = Host::start(&format!("gone-{how}"), |_| {});
        let lines = hello_stream("t", "run-gone");
        assert_eq!(host.post("run-gone", 0, &lines[..2]).0, 200, "{how}");
        assert_eq!(host.get("/healthz").status, 200, "{how}");
        let db = host.db();
        if how == "removed" {
            std::fs::remove_file(&db).unwrap();
        } else {
            let copy = db.with_extension("copy");
            std::fs::copy(&db, &copy).unwrap();
            std::fs::rename(&copy, &db).unwrap();
        }
        let (status, body) = host.post("run-gone", 2, &lines[2..]);
        assert_eq!(status, 503, "{how}: a commit into a file that is gone is refused: {body}");
        assert_eq!(body["error"]["code"], "storage", "{how}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("database file") && message.contains("is gone"), "{how}: {message}");
        let health = host.get("/healthz");
        assert_eq!(health.status, 503, "{how}: /healthz: {}", health.body);
        assert!(json(&health.body)["error"]["message"].as_str().unwrap().contains("is gone"), "{}", health.body);
        assert_eq!(host.get("/v1/runs/run-gone/items").status, 503, "{how}: reads of a file that is gone");
        let path = db.display().to_string();
        eventually(Duration::from_secs(10), "the host logs an error naming the file", || {
            logs()
                .lines()
                .any(|line| line.contains("ERROR") && line.contains(&path) && line.contains("removed or replaced"))
        });
    }
}
