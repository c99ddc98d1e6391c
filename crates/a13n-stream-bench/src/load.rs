//! `a13n-stream bench-serve`: a bounded load test of `a13n-stream serve` on loopback.
//!
//! It starts the server as a child process on a free port with a temporary database (or the one given), then runs
//! many runs at once: one ingester per run posting batches of generated text-delta lines on one kept-alive
//! connection (as any HTTP client's connection pool does), and several SSE
//! subscribers per run stamping every event on arrival. Latency is measured from the moment a batch is sent to
//! the moment each subscriber receives each event of that batch. Everything stops at the deadline.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::generate::{Generator, StreamKind};
use crate::http::{sse_each, Connection};

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Runs ingested at once.
    pub runs: usize,
    /// SSE subscribers per run.
    pub subscribers: usize,
    /// Source lines per run.
    pub lines: u64,
    /// Lines per batch.
    pub batch: usize,
    /// Stop after this long, whatever is left.
    pub seconds: f64,
    /// The database (`None`: a temporary SQLite file).
    pub database: Option<String>,
    /// Host processes sharing the database; runs and subscribers are spread over them.
    pub processes: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { runs: 8, subscribers: 4, lines: 5_000, batch: 50, seconds: 60.0, database: None, processes: 1 }
    }
}

/// What was measured.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// Source lines acknowledged.
    pub lines: u64,
    /// Wall-clock seconds of ingest.
    pub seconds: f64,
    /// Events received by all subscribers together.
    pub deliveries: u64,
    /// Delivery latency percentiles in milliseconds: p50, p90, p99, max.
    pub latency_ms: [f64; 4],
    /// Whether every subscriber received every event of its run exactly once, in order.
    pub exact: bool,
}

impl LoadReport {
    /// The report as one JSON object.
    pub fn to_json(&self, options: &LoadOptions) -> Value {
        serde_json::json!({
            "name": "serve_load", "processes": options.processes, "runs": options.runs, "subscribers_per_run": options.subscribers,
            "batch": options.batch, "items": self.lines, "seconds": self.seconds,
            "items_per_second": self.lines as f64 / self.seconds.max(1e-9),
            "deliveries": self.deliveries,
            "latency_ms": {"p50": self.latency_ms[0], "p90": self.latency_ms[1], "p99": self.latency_ms[2], "max": self.latency_ms[3]},
            "exact": self.exact,
        })
    }
}

/// A server child process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The most of a server's standard error kept to say why it stopped.
const KEPT_STDERR_BYTES: usize = 4096;

/// Start `exe serve` on a free port: the server, and its address. A server that does not start is reported with
/// what it wrote on standard error (`storage: database: ... no schema has been selected to create in`).
fn start(exe: &Path, database: &str) -> Result<(Server, String), String> {
    let mut child = Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--db", database])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the server: {e}"))?;
    let stdout = child.stdout.take().ok_or("the server has no stdout")?;
    let stderr = child.stderr.take().ok_or("the server has no stderr")?;
    // Read all along, so the server's log never fills the pipe; the start is kept.
    let said = thread::spawn(move || {
        let mut kept = Vec::new();
        for line in BufReader::new(stderr).split(b'\n').map_while(Result::ok) {
            if kept.len() < KEPT_STDERR_BYTES {
                kept.extend_from_slice(&line[..line.len().min(KEPT_STDERR_BYTES - kept.len())]);
                kept.push(b'\n');
            }
        }
        String::from_utf8_lossy(&kept).trim().to_owned()
    });
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).map_err(|e| format!("reading the server's address: {e}"))?;
    match line.trim().strip_prefix("listening on http://") {
        Some(address) => Ok((server, address.to_owned())),
        None => {
            let status = server.0.wait().map_err(|e| format!("waiting for the server: {e}"))?;
            let said = said.join().unwrap_or_default();
            let said = if said.is_empty() { line.trim().to_owned() } else { said };
            Err(format!("the server did not start ({status}): {said}"))
        }
    }
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// Run the load test against the `serve` command of `exe`.
pub fn run(exe: &Path, options: &LoadOptions) -> Result<LoadReport, String> {
    let scratch = std::env::temp_dir().join(format!("a13n-bench-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let database = options.database.clone().unwrap_or_else(|| scratch.join("load.db").display().to_string());
    let mut servers = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..options.processes.max(1) {
        let (server, address) = start(exe, &database)?;
        servers.push(server);
        addresses.push(address);
    }
    let deadline = Instant::now() + Duration::from_secs_f64(options.seconds);
    let stamp = format!("{}", std::process::id());

    // Per run: when each event's batch was sent, by display sequence.
    let sent: Arc<Mutex<HashMap<String, Vec<Instant>>>> = Arc::new(Mutex::new(HashMap::new()));
    let run_ids: Vec<String> =
        (0..options.runs).map(|index| format!("load-{stamp}-{}-{index}", options.processes)).collect();
    let mut subscribers = Vec::new();
    for (index, run) in run_ids.iter().enumerate() {
        for subscriber in 0..options.subscribers {
            // Subscribers of a run sit on every process in turn, so most follow commits made elsewhere.
            let address = addresses[(index + subscriber + 1) % addresses.len()].clone();
            let run = run.clone();
            subscribers.push(thread::spawn(move || {
                let mut received = Vec::new();
                sse_each(&address, &format!("/v1/runs/{run}/events"), None, Duration::from_secs(5), |event| {
                    let sequence = event.id.rsplit_once('-').and_then(|(_, s)| s.parse::<u64>().ok()).unwrap_or(0);
                    received.push((sequence, Instant::now()));
                    Instant::now() < deadline + Duration::from_secs(5)
                });
                (run, received)
            }));
        }
    }
    thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let mut ingesters = Vec::new();
    for (index, run) in run_ids.iter().enumerate() {
        let address = addresses[index % addresses.len()].clone();
        let (run, sent, options) = (run.clone(), Arc::clone(&sent), options.clone());
        ingesters.push(thread::spawn(move || -> Result<u64, String> {
            let mut generator = Generator::for_run(StreamKind::Text, options.lines, &run);
            let mut offset = 0u64;
            let mut times: Vec<Instant> = Vec::new();
            let mut connection = Connection::open(&address).map_err(|e| e.to_string())?;
            loop {
                if Instant::now() >= deadline {
                    break;
                }
                let mut batch = String::new();
                let mut count = 0;
                while count < options.batch {
                    let Some(line) = generator.next_line() else { break };
                    batch.push_str(line);
                    batch.push('\n');
                    count += 1;
                }
                if count == 0 {
                    break;
                }
                let at = Instant::now();
                let path = format!("/v1/runs/{run}/source?offset={offset}");
                let response = (connection.request("POST", &path, "application/x-ndjson", batch.as_bytes()))
                    .map_err(|e| e.to_string())?;
                if response.status != 200 {
                    return Err(format!("{run}: {} {}", response.status, response.body));
                }
                let body: Value = serde_json::from_str(&response.body).unwrap_or(Value::Null);
                let events = body["events"].as_u64().unwrap_or(0) as usize;
                times.extend(std::iter::repeat_n(at, events));
                offset += count as u64;
            }
            sent.lock().map_err(|e| e.to_string())?.insert(run, times);
            Ok(offset)
        }));
    }
    let mut lines = 0;
    for ingester in ingesters {
        lines += ingester.join().map_err(|_| "an ingester panicked")??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let sent = sent.lock().map_err(|e| e.to_string())?.clone();
    let mut latencies = Vec::new();
    let mut exact = true;
    let mut deliveries = 0;
    for subscriber in subscribers {
        let (run, received) = subscriber.join().map_err(|_| "a subscriber panicked")?;
        let times = sent.get(&run).cloned().unwrap_or_default();
        deliveries += received.len() as u64;
        exact &= received.len() == times.len() && received.iter().enumerate().all(|(i, (seq, _))| *seq == i as u64 + 1);
        for (sequence, at) in received {
            if let Some(sent_at) = times.get(sequence as usize - 1) {
                latencies.push(at.saturating_duration_since(*sent_at).as_secs_f64() * 1000.0);
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    drop(servers);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(LoadReport {
        lines,
        seconds,
        deliveries,
        latency_ms: [
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.9),
            percentile(&latencies, 0.99),
            latencies.last().copied().unwrap_or(0.0),
        ],
        exact,
    })
}
