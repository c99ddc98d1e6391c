//! `a13n-stream serve`, run as a real process on a free loopback port with a temporary SQLite file.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a13n_stream_bench::http::{request, sse, Connection, SseEvent};
use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, SourceItem};
use a13n_testkit::host::{postgres_database, Server};
use a13n_testkit::{own_cases, shared_cases, Rng};
use serde_json::Value;

/// How long a subscriber of the crash test keeps reconnecting for its run's events (the whole test takes about
/// three minutes on a busy two-core machine; only a failing run waits this long).
const SUBSCRIBER_DEADLINE: Duration = Duration::from_secs(600);

/// `a13n-stream serve` on a free loopback port over `database`.
fn start(database: &str, extra: &[&str]) -> Server {
    Server::start(env!("CARGO_BIN_EXE_a13n-stream"), database, extra)
}

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("a13n-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("host.db")
}

fn case_lines(name: &str) -> Vec<String> {
    // `synth-observations` is in the shared corpus; the basic test falls back to a repository case without it.
    let name = if name == "synth-observations" && shared_cases().is_none() { "extra-cancelled-no-usage" } else { name };
    let dir = [own_cases()].into_iter().chain(shared_cases()).map(|root| root.join(name)).find(|d| d.is_dir()).unwrap();
    std::fs::read_to_string(dir.join("source.jsonl")).unwrap().lines().map(str::to_owned).collect()
}

/// What an uninterrupted observer and fold produce for `lines`: the AG-UI events and the checkpoint JSON.
fn uninterrupted(lines: &[String]) -> (Vec<Value>, String) {
    let items: Vec<SourceItem> = lines.iter().map(|l| SourceItem::from_json(l).unwrap()).collect();
    let mut observer = HarnessAguiStreamObserver::new();
    let events = items.iter().flat_map(|item| observer.observe(item).unwrap()).map(|e| e.to_value()).collect();
    let mut fold = DisplayFold::new(items[0].run_id.clone());
    for item in &items {
        fold.fold_source(item).unwrap();
    }
    (events, fold.export_json())
}

fn post(address: &str, run_id: &str, offset: usize, lines: &[String]) -> std::io::Result<(u16, Value)> {
    let body = lines.join("\n") + "\n";
    let response =
        request(address, "POST", &format!("/v1/runs/{run_id}/source?offset={offset}"), &[], body.as_bytes())?;
    Ok((response.status, serde_json::from_str(&response.body).unwrap_or(Value::Null)))
}

fn run_id(lines: &[String]) -> String {
    SourceItem::from_json(&lines[0]).unwrap().run_id
}

#[test]
fn ingest_is_exactly_once_and_delivery_replays_without_gap() {
    exactly_once_and_replay(temp_db("basic").to_str().unwrap());
}

#[test]
fn postgres_ingest_is_exactly_once_and_delivery_replays_without_gap() {
    exactly_once_and_replay(&postgres_database("basic"));
}

fn exactly_once_and_replay(database: &str) {
    let server = start(database, &[]);
    let address = server.address.clone();
    let lines = case_lines("synth-observations");
    let run = run_id(&lines);
    let (expected_events, expected_display) = uninterrupted(&lines);

    let (status, body) = post(&address, &run, 0, &lines[..10]).unwrap();
    assert_eq!((status, body["next_offset"].as_u64()), (200, Some(10)), "{body}");
    let (status, body) = post(&address, &run, 0, &lines[..10]).unwrap();
    assert_eq!((status, body["duplicate"].as_bool()), (200, Some(true)), "an exact retry is acknowledged: {body}");
    let (status, body) = post(&address, &run, 4, &lines[4..12]).unwrap();
    assert_eq!((status, body["error"]["expected_offset"].as_u64()), (409, Some(10)), "{body}");
    let mut changed = lines[5..10].to_vec();
    changed[0] = changed[0].replace("\"sequence\"", "\"sequence\" ");
    assert_eq!(post(&address, &run, 5, &changed).unwrap().0, 409, "a retry that differs is a conflict");

    // A malformed line commits nothing and the answer names it.
    let mut bad = lines[10..15].to_vec();
    bad[2] = "{\"thread_id\": 1}".into();
    let (status, body) = post(&address, &run, 10, &bad).unwrap();
    assert_eq!(
        (status, body["error"]["line"].as_u64(), body["error"]["kind"].as_str()),
        (422, Some(12), Some("input")),
        "{body}"
    );
    let (status, body) = post(&address, &run, 10, &lines[10..]).unwrap();
    assert_eq!(status, 200, "{body}");

    // This run has no terminal result yet, so its stream stays open: read what was committed.
    let (events, _) = sse(&address, &format!("/v1/runs/{run}/events"), None, expected_events.len());
    let data: Vec<Value> = events.iter().map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    assert_eq!(data, expected_events);
    let ids: Vec<String> = (1..=events.len()).map(|n| format!("0-{n}")).collect();
    assert_eq!(events.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), ids);
    let (tail, _) = sse(&address, &format!("/v1/runs/{run}/events"), Some(&format!("0-{}", events.len() - 3)), 3);
    assert_eq!(tail, events[events.len() - 3..], "Last-Event-ID resumes strictly after the position");

    let snapshot = request(&address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
    assert_eq!(snapshot.body, expected_display, "the committed display equals the uninterrupted export");

    // A viewer restores a snapshot taken mid-stream and continues from its position with the events endpoint.
    let (viewer, _) = {
        let mut fold = DisplayFold::new(run.clone());
        for line in &lines[..7] {
            fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
        }
        (fold, ())
    };
    let position = viewer.position();
    let mut restored = DisplayFold::restore_json(&viewer.export_json(), false, None).unwrap();
    let after = format!("{}-{}", position.attempt, position.sequence);
    let (rest, _) =
        sse(&address, &format!("/v1/runs/{run}/events?after={after}"), None, events.len() - position.sequence as usize);
    assert_eq!(rest.first().map(|e| e.id.clone()), Some(format!("0-{}", position.sequence + 1)), "no gap, no overlap");
    let batch: Vec<_> =
        rest.iter().map(|e| serde_json::from_str::<Value>(&e.data).unwrap().as_object().cloned().unwrap()).collect();
    restored.fold(batch, None).unwrap();
    let continued: Vec<Value> =
        restored.items().map(|item| item.content.get("messageId").cloned().unwrap_or(Value::Null)).collect();
    let whole: Vec<Value> = DisplayFold::restore_json(&expected_display, false, None)
        .unwrap()
        .items()
        .map(|item| item.content.get("messageId").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(continued.len(), whole.len(), "the viewer's display has every item");
    let page = request(&address, "GET", &format!("/v1/runs/{run}/items?after=2&limit=3"), &[], b"").unwrap();
    let page: Value = serde_json::from_str(&page.body).unwrap();
    let ordinals: Vec<u64> = page["items"].as_array().unwrap().iter().map(|i| i["ordinal"].as_u64().unwrap()).collect();
    assert_eq!(ordinals, [3, 4, 5]);
    let terminal = lines.last().is_some_and(|line| line.contains("\"result\""));
    assert_eq!(page["complete"], terminal, "complete once the terminal result is stored");
    assert_eq!(request(&address, "GET", "/v1/runs/bad%20id/snapshot", &[], b"").unwrap().status, 400);
    assert!(request(&address, "GET", "/metrics", &[], b"").unwrap().body.contains("a13n_ingest_duplicates_total 1"));
    drop(server);

    // Restarted, the run is rebuilt from its checkpoint and ingest goes on at the same offset.
    let server = start(database, &[]);
    let snapshot = request(&server.address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
    assert_eq!(snapshot.body, expected_display);
    assert_eq!(post(&server.address, &run, 0, &lines).unwrap().1["duplicate"], true, "the journal equals the source");
}

#[test]
fn a_token_guards_every_route() {
    let database = temp_db("token");
    let server = start(database.to_str().unwrap(), &["--token", "s3cret"]);
    // Liveness probes need no token; everything else does, /metrics included.
    assert_eq!(request(&server.address, "GET", "/healthz", &[], b"").unwrap().status, 200);
    for path in ["/metrics", "/v1/runs", "/v1/runs/r/snapshot"] {
        let refused = request(&server.address, "GET", path, &[], b"").unwrap();
        assert_eq!(refused.status, 401, "{path}");
        assert_eq!(refused.header("www-authenticate"), Some(r#"Bearer realm="a13n-stream""#), "{path}");
    }
    // The scheme is case-insensitive; the token is not.
    for (value, status) in [
        ("Bearer s3cret", 200),
        ("bearer s3cret", 200),
        ("BEARER s3cret", 200),
        ("Bearer nope", 401),
        ("Bearer S3CRET", 401),
    ] {
        let response = request(&server.address, "GET", "/v1/runs", &[("Authorization", value)], b"").unwrap();
        assert_eq!(response.status, status, "{value}");
        // A wrong token was answered "a bearer token is required", as if none had been sent.
        if status == 401 {
            assert!(response.body.contains("does not match"), "{value}: {}", response.body);
        }
    }
    let missing = request(&server.address, "GET", "/v1/runs", &[], b"").unwrap();
    assert!(missing.body.contains("is required"), "{}", missing.body);
}

#[test]
fn a_token_that_can_never_match_is_refused_at_startup() {
    // An empty token, given or set in the environment, used to start the host with no authentication at all.
    for (token, variable) in [(Some("two words"), None), (Some(""), None), (None, Some(""))] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_a13n-stream"));
        command.args(["serve", "--listen", "127.0.0.1:0", "--db", temp_db("badtoken").to_str().unwrap()]);
        command.args(token.map(|token| ["--token", token]).iter().flatten());
        command.env_remove("A13N_STREAM_TOKEN");
        if let Some(value) = variable {
            command.env("A13N_STREAM_TOKEN", value);
        }
        let case = format!("token {token:?}, variable {variable:?}");
        let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        // A host that starts would serve until killed: wait for the refusal with a deadline.
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{case}: the host started instead of refusing the token");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{case}: {stderr}");
        assert!(stderr.contains("can never match"), "{case}: {stderr}");
    }
}

/// Streams ingested in random batches while the server is killed with SIGKILL at random moments and restarted;
/// unacknowledged batches are retried at the same offsets and a subscriber reconnects with Last-Event-ID.
#[test]
fn crash_recovery_keeps_every_acknowledged_batch_exactly_once() {
    crash_recovery(temp_db("crash").to_str().unwrap().to_owned());
}

#[test]
fn postgres_crash_recovery_keeps_every_acknowledged_batch_exactly_once() {
    crash_recovery(postgres_database("crash"));
}

fn crash_recovery(database: String) {
    // Streams without rejected items; the shared corpus's when this checkout has it.
    let cases: Vec<&str> = [
        "real-tools",
        "real-subagent",
        "synth-observations",
        "extra-external",
        "extra-output-structured",
        "extra-failed",
    ]
    .into_iter()
    .filter(|case| [own_cases()].into_iter().chain(shared_cases()).any(|root| root.join(case).is_dir()))
    .collect();
    let server = Arc::new(Mutex::new(Some(start(&database, &[]))));
    let address = Arc::new(Mutex::new(server.lock().unwrap().as_ref().unwrap().address.clone()));
    let done = Arc::new(AtomicBool::new(false));
    let kills = Arc::new(AtomicUsize::new(0));

    let killer = {
        let (server, address, done, kills, database) =
            (Arc::clone(&server), Arc::clone(&address), Arc::clone(&done), Arc::clone(&kills), database.clone());
        std::thread::spawn(move || {
            let mut rng = Rng::new(20261129);
            while !done.load(Ordering::SeqCst) || kills.load(Ordering::SeqCst) < 20 {
                std::thread::sleep(Duration::from_millis(5 + rng.below(40)));
                let mut guard = server.lock().unwrap();
                if let Some(running) = guard.take() {
                    running.kill();
                }
                kills.fetch_add(1, Ordering::SeqCst);
                let restarted = start(&database, &[]);
                *address.lock().unwrap() = restarted.address.clone();
                *guard = Some(restarted);
                if done.load(Ordering::SeqCst) && kills.load(Ordering::SeqCst) >= 20 {
                    break;
                }
            }
        })
    };

    let current = |address: &Arc<Mutex<String>>| address.lock().unwrap().clone();
    let mut rng = Rng::new(7);
    let mut retries = 0;
    let mut subscribers = Vec::new();
    let mut expectations = Vec::new();
    for case in cases {
        let lines = case_lines(case);
        let run = run_id(&lines);
        let (events, display) = uninterrupted(&lines);
        // A subscriber from the start, reconnecting after every failure with the last id it received.
        let subscriber = {
            let (address, run, total) = (Arc::clone(&address), run.clone(), events.len());
            std::thread::spawn(move || {
                let mut received: Vec<SseEvent> = Vec::new();
                let mut reconnects = 0;
                // Bounded by time, not by connections: on a busy machine the server spends longer restarting
                // after each kill, and 10,000 refused connections once came before the run's last events.
                let deadline = Instant::now() + SUBSCRIBER_DEADLINE;
                while received.len() < total && Instant::now() < deadline {
                    let last = received.last().map(|e| e.id.clone());
                    let (batch, _) =
                        sse(&current(&address), &format!("/v1/runs/{run}/events"), last.as_deref(), usize::MAX);
                    received.extend(batch);
                    reconnects += 1;
                    std::thread::sleep(Duration::from_millis(5));
                }
                eprintln!("{run}: {} events over {reconnects} connections", received.len());
                received
            })
        };
        subscribers.push(subscriber);
        let mut offset = 0;
        while offset < lines.len() {
            let size = (1 + rng.below(6) as usize).min(lines.len() - offset);
            // Retry the same batch at the same offset until it is acknowledged.
            loop {
                match post(&current(&address), &run, offset, &lines[offset..offset + size]) {
                    Ok((200, body)) => {
                        assert_eq!(body["next_offset"].as_u64(), Some((offset + size) as u64), "{body}");
                        break;
                    }
                    // Status 0: the connection died mid-response, so the batch is not known to be acknowledged.
                    Ok((0, _)) | Err(_) => {
                        retries += 1;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Ok((status, body)) => panic!("{case}: unexpected {status}: {body}"),
                }
            }
            offset += size;
            // Paced like a live Harness, so the kills fall throughout ingest.
            std::thread::sleep(Duration::from_millis(8));
        }
        expectations.push((run, lines, events, display));
    }
    done.store(true, Ordering::SeqCst);
    killer.join().unwrap();
    let kills = kills.load(Ordering::SeqCst);
    eprintln!("{kills} kills; {retries} batches retried after a kill");
    assert!(kills >= 20, "the server was killed {kills} times");
    assert!(retries >= 5, "only {retries} kills landed during ingest");

    let address = current(&address);
    for ((run, lines, events, display), subscriber) in expectations.into_iter().zip(subscribers) {
        let received = subscriber.join().unwrap();
        let ids: Vec<String> = (1..=events.len()).map(|n| format!("0-{n}")).collect();
        assert_eq!(
            received.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
            ids,
            "{run}: every event exactly once, in order"
        );
        let data: Vec<Value> =
            received.iter().map(|e| a13n_testkit::same_floats(serde_json::from_str(&e.data).unwrap())).collect();
        let events: Vec<Value> = events.into_iter().map(a13n_testkit::same_floats).collect();
        assert_eq!(data, events, "{run}: the stored events equal the uninterrupted observer output");
        let snapshot = request(&address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
        assert_eq!(snapshot.body, display, "{run}: the display equals the uninterrupted export");
        let (status, body) = post(&address, &run, 0, &lines).unwrap();
        assert_eq!((status, body["duplicate"].as_bool()), (200, Some(true)), "{run}: the journal equals the source");
    }
}

/// Regression: the subscribers' channel lived in the per-run state, which is dropped when a batch is refused, so
/// a refused batch disconnected every subscriber of the run.
#[test]
fn a_refused_batch_does_not_disconnect_subscribers() {
    let database = temp_db("refused");
    let server = start(database.to_str().unwrap(), &[]);
    let lines = case_lines("extra-output-structured");
    let run = run_id(&lines);
    let (expected, _) = uninterrupted(&lines);
    let subscriber = {
        let (address, run, total) = (server.address.clone(), run.clone(), expected.len());
        std::thread::spawn(move || sse(&address, &format!("/v1/runs/{run}/events"), None, total))
    };
    std::thread::sleep(Duration::from_millis(100));
    let half = lines.len() / 2;
    assert_eq!(post(&server.address, &run, 0, &lines[..half]).unwrap().0, 200);
    // Rejected while folding (the root run changes thread), after the batch's first line was folded.
    let mut bad = lines[half..].to_vec();
    let mut moved: Value = serde_json::from_str(&bad[1]).unwrap();
    moved["thread_id"] = "elsewhere".into();
    bad[1] = moved.to_string();
    let (status, body) = post(&server.address, &run, half, &bad).unwrap();
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("identity")), "{body}");
    assert_eq!(post(&server.address, &run, half, &lines[half..]).unwrap().0, 200);
    let (events, _) = subscriber.join().unwrap();
    assert_eq!(events.len(), expected.len(), "every event arrived on the one connection");
}

/// A client that keeps its connection open (as an HTTP client's pool does, and `bench-serve`'s ingesters do) sends
/// every batch of a run on it, refused ones too: each answer is read whole by its length and the next request
/// follows on the same connection.
#[test]
fn batches_follow_one_another_on_one_kept_alive_connection() {
    let database = temp_db("kept-alive");
    let server = start(database.to_str().unwrap(), &[]);
    let lines = case_lines("synth-observations");
    let run = run_id(&lines);
    let (_, expected_display) = uninterrupted(&lines);
    let mut connection = Connection::open(&server.address).unwrap();
    let mut post = |offset: usize, lines: &[String]| {
        let (path, body) = (format!("/v1/runs/{run}/source?offset={offset}"), lines.join("\n") + "\n");
        let response = connection.request("POST", &path, "application/x-ndjson", body.as_bytes()).unwrap();
        (response.status, serde_json::from_str::<Value>(&response.body).unwrap())
    };
    let mut offset = 0;
    for batch in lines.chunks(4) {
        let (status, body) = post(offset + 1, batch);
        assert_eq!((status, body["error"]["expected_offset"].as_u64()), (409, Some(offset as u64)), "{body}");
        let (status, body) = post(offset, batch);
        offset += batch.len();
        assert_eq!((status, body["next_offset"].as_u64()), (200, Some(offset as u64)), "{body}");
    }
    let snapshot = request(&server.address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
    assert_eq!(snapshot.body, expected_display, "every batch was stored once");
}

/// Several processes share one PostgreSQL database: batches of one run alternate between them, and subscribers
/// on each receive every event exactly once, wherever it was ingested.
#[test]
fn postgres_nodes_share_runs_and_deliver_everywhere() {
    let database = postgres_database("nodes");
    let nodes = [start(&database, &[]), start(&database, &[])];
    let lines = case_lines("real-tools");
    let run = run_id(&lines);
    let (expected, display) = uninterrupted(&lines);
    let subscribers: Vec<_> = nodes
        .iter()
        .map(|node| {
            let (address, run, total) = (node.address.clone(), run.clone(), expected.len());
            std::thread::spawn(move || sse(&address, &format!("/v1/runs/{run}/events"), None, total))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut offset = 0;
    let mut turn = 0;
    while offset < lines.len() {
        let size = 4.min(lines.len() - offset);
        let (status, body) = post(&nodes[turn % 2].address, &run, offset, &lines[offset..offset + size]).unwrap();
        assert_eq!(status, 200, "{body}");
        // The other node has the batch too: retrying it there is acknowledged without effect.
        let (status, body) = post(&nodes[(turn + 1) % 2].address, &run, offset, &lines[offset..offset + size]).unwrap();
        assert_eq!((status, body["duplicate"].as_bool()), (200, Some(true)), "{body}");
        offset += size;
        turn += 1;
    }
    for (node, subscriber) in subscribers.into_iter().enumerate() {
        let (events, _) = subscriber.join().unwrap();
        let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
        let wanted: Vec<String> = (1..=expected.len()).map(|n| format!("0-{n}")).collect();
        assert_eq!(ids, wanted, "node {node}: every event exactly once, in order");
        let data: Vec<Value> = events.iter().map(|e| serde_json::from_str(&e.data).unwrap()).collect();
        assert!(data == expected, "node {node}: the events differ from the uninterrupted observer output");
    }
    for node in &nodes {
        let snapshot = request(&node.address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
        assert_eq!(snapshot.body, display, "the display is the same on every node");
    }
}

/// The single-node behaviour, with PostgreSQL storage.
#[test]
fn postgres_storage_is_exactly_once_across_restarts() {
    let database = postgres_database("restart");
    let lines = case_lines("real-subagent");
    let run = run_id(&lines);
    let (expected, display) = uninterrupted(&lines);
    let server = start(&database, &[]);
    let half = lines.len() / 2;
    assert_eq!(post(&server.address, &run, 0, &lines[..half]).unwrap().0, 200);
    server.kill();
    let server = start(&database, &[]);
    assert_eq!(post(&server.address, &run, 0, &lines[..half]).unwrap().1["duplicate"], true);
    assert_eq!(post(&server.address, &run, half + 1, &lines[half + 1..]).unwrap().0, 409);
    assert_eq!(post(&server.address, &run, half, &lines[half..]).unwrap().0, 200);
    let (events, ended) = sse(&server.address, &format!("/v1/runs/{run}/events"), None, usize::MAX);
    assert!(ended);
    assert_eq!(events.iter().map(|e| serde_json::from_str::<Value>(&e.data).unwrap()).collect::<Vec<_>>(), expected);
    let snapshot = request(&server.address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
    assert_eq!(snapshot.body, display);
}

/// When a run's checkpoint is unreadable, the run is rebuilt from its journal and goes on exactly.
#[test]
fn an_unreadable_checkpoint_is_rebuilt_from_the_journal() {
    let database = temp_db("journal");
    let lines = case_lines("extra-output-structured");
    let run = run_id(&lines);
    let (_, display) = uninterrupted(&lines);
    let server = start(database.to_str().unwrap(), &[]);
    let half = lines.len() / 2;
    assert_eq!(post(&server.address, &run, 0, &lines[..half]).unwrap().0, 200);
    server.kill();
    let connection = rusqlite::Connection::open(&database).unwrap();
    connection.execute("UPDATE runs SET continuation = '{\"not\": \"a continuation\"}'", []).unwrap();
    drop(connection);
    let server = start(database.to_str().unwrap(), &[]);
    assert_eq!(post(&server.address, &run, half, &lines[half..]).unwrap().0, 200);
    let snapshot = request(&server.address, "GET", &format!("/v1/runs/{run}/snapshot"), &[], b"").unwrap();
    assert_eq!(snapshot.body, display);
    let metrics = request(&server.address, "GET", "/metrics", &[], b"").unwrap().body;
    assert!(metrics.contains("a13n_run_journal_rebuilds_total 1"), "{metrics}");
}

/// Item pages and display frames are typed bodies over the stored items: a stored item that is not JSON is a
/// storage error, never spliced into a malformed answer.
#[test]
fn a_corrupt_checkpoint_is_rebuilt_from_the_journal_and_a_storage_error_says_when_to_retry() {
    let database = temp_db("corrupt-item");
    let lines = case_lines("extra-output-structured");
    let run = run_id(&lines);
    let server = start(database.to_str().unwrap(), &[]);
    assert_eq!(post(&server.address, &run, 0, &lines).unwrap().0, 200);
    let page = request(&server.address, "GET", &format!("/v1/runs/{run}/items?limit=2"), &[], b"").unwrap();
    let before: Value = serde_json::from_str(&page.body).unwrap();
    assert_eq!(before["items"].as_array().unwrap().len(), 2);
    assert!(before["position"].as_str().unwrap().starts_with("0-"), "{before}");
    assert_eq!(before["next_after"], 2);
    server.kill();
    let connection = rusqlite::Connection::open(&database).unwrap();
    connection.execute("UPDATE items SET item = '{\"broken\": ' WHERE ordinal = 1", []).unwrap();
    drop(connection);
    // Pages come from the run's display, rebuilt from the checkpoint, or from the journal when it is unreadable.
    let server = start(database.to_str().unwrap(), &[]);
    let page = request(&server.address, "GET", &format!("/v1/runs/{run}/items?limit=2"), &[], b"").unwrap();
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(serde_json::from_str::<Value>(&page.body).unwrap(), before);
    let metrics = request(&server.address, "GET", "/metrics", &[], b"").unwrap().body;
    assert!(metrics.lines().any(|line| line.starts_with("a13n_run_journal_rebuilds_total 1")), "{metrics}");
    let (frames, _) = sse(&server.address, &format!("/v1/runs/{run}/display"), None, usize::MAX);
    for frame in &frames {
        serde_json::from_str::<Value>(&frame.data).unwrap_or_else(|error| panic!("{error}: {}", frame.data));
    }
    // Regression: a storage 503 said nothing of when to come back (the busy 503 did).
    std::fs::remove_file(&database).unwrap();
    let other = lines.iter().map(|line| line.replace(&run, "run-after-loss")).collect::<Vec<_>>();
    let response = request(
        &server.address,
        "POST",
        "/v1/runs/run-after-loss/source?offset=0",
        &[("Content-Type", "application/x-ndjson")],
        (other[..2].join("\n") + "\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(response.status, 503, "{}", response.body);
    assert_eq!(response.header("retry-after"), Some("1"), "{:?}", response.headers);
    let error: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(error["error"]["code"], "storage", "{error}");
}
