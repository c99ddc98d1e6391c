//! `GET /v1/runs/{run_id}/observed`: the entries a client receives, live or reconnecting after every batch with the
//! last id it received, are exactly the `Observed` entries a fold of the same source hands out: every sequence once,
//! in order, each with its event and its item reference; and the first frame is the snapshot they continue.

use std::time::Duration;

use a13n_stream_bench::http::{request, sse_each, SseEvent};
use a13n_stream_protocol::{DisplayFold, SourceItem};
use a13n_testkit::host::Server;
use serde_json::Value;

/// An `/observed` client: the snapshot's position, then every entry received.
#[derive(Default)]
struct Client {
    snapshot_at: Option<String>,
    entries: Vec<Value>,
    position: String,
    ended: bool,
}

impl Client {
    fn apply(&mut self, frame: &SseEvent) {
        let data: Value = serde_json::from_str(&frame.data).expect("frame data is JSON");
        match frame.event.as_str() {
            "snapshot" => {
                let at = &data["continuation"]["position"];
                assert_eq!(
                    frame.id,
                    format!("{}-{}", at["attempt"], at["sequence"]),
                    "a snapshot's id is its position"
                );
                assert!(self.snapshot_at.is_none(), "one snapshot for a client that asked for none again");
                self.snapshot_at = Some(frame.id.clone());
            }
            "observed" => {
                assert_eq!(frame.id, data["position"].as_str().unwrap(), "a frame's id is its position");
                let observed = data["observed"].as_array().expect("observed entries");
                assert!(!observed.is_empty(), "an observed frame carries entries");
                for entry in observed {
                    let next = self.entries.last().map_or(0, |e: &Value| e["sequence"].as_u64().unwrap()) + 1;
                    let first = self.snapshot_at.as_deref().map_or(1, |at| sequence(at) + 1);
                    let expected = if self.entries.is_empty() { first } else { next };
                    assert_eq!(entry["sequence"].as_u64(), Some(expected), "entries come once each, in order");
                    self.entries.push(a13n_testkit::same_floats(entry.clone()));
                }
                let last = observed.last().unwrap()["sequence"].as_u64().unwrap();
                assert_eq!(sequence(&frame.id), last, "a frame's position is its last entry's");
            }
            "end" => self.ended = true,
            other => panic!("unexpected frame {other}"),
        }
        self.position = frame.id.clone();
    }
}

fn sequence(position: &str) -> u64 {
    position.split_once('-').unwrap().1.parse().unwrap()
}

/// The entries `fold` gives for `lines`, and whether the last of them is a Run's result it took: the run ended
/// there (the host skips a result the observer refuses, and the run stays open).
fn fold_entries(fold: &mut DisplayFold, lines: &[String]) -> (Vec<Value>, bool) {
    let (mut entries, mut ended) = (Vec::new(), false);
    for line in lines {
        ended = false;
        if let Ok(item) = SourceItem::from_json(line) {
            let folded = fold.fold_source(&item);
            ended = folded.is_ok() && item.event().is_none();
            for entry in folded.unwrap_or_default() {
                entries.push(a13n_testkit::same_floats(serde_json::from_str(&entry.to_json()).unwrap()));
            }
        }
    }
    (entries, ended)
}

/// Read frames from the client's position until one brings it to `position` (or the stream ends).
fn catch_up(address: &str, run: &str, client: &mut Client, position: &str) {
    let path = format!("/v1/runs/{run}/observed");
    let after = (!client.position.is_empty()).then(|| client.position.clone());
    sse_each(address, &path, after.as_deref(), Duration::from_secs(10), |frame| {
        client.apply(&frame);
        client.position != position && !client.ended
    });
}

#[test]
fn observed_frames_are_the_folds_entries_live_and_after_every_batch() {
    let dir = std::env::temp_dir().join(format!("a13n-observed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(env!("CARGO_BIN_EXE_a13n-stream"), dir.join("host.db").to_str().unwrap(), &[]);
    let (mut streams, mut checked, mut followed_live) = (0, 0, 0);
    for case in a13n_testkit::source_cases() {
        let text = std::fs::read_to_string(case.join("source.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let Ok(first) = SourceItem::from_json(lines[0]) else { continue };
        let run = format!("{}-{}", first.run_id, streams);
        let lines: Vec<String> = lines.iter().map(|l| l.replace(&first.run_id, &run)).collect();
        let live = {
            let (address, run) = (server.address.clone(), run.clone());
            std::thread::spawn(move || {
                let mut client = Client::default();
                sse_each(&address, &format!("/v1/runs/{run}/observed"), None, Duration::from_secs(5), |frame| {
                    client.apply(&frame);
                    !client.ended
                });
                client
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let mut fold = DisplayFold::new(run.clone());
        let mut expected = Vec::new();
        let mut client = Client { snapshot_at: Some("0-0".into()), position: "0-0".into(), ..Client::default() };
        let (mut refused, mut ended) = (false, false);
        for (index, batch) in lines.chunks(3).enumerate() {
            let body = batch.join("\n") + "\n";
            let path = format!("/v1/runs/{run}/source?offset={}&on_reject=skip", index * 3);
            let response = request(&server.address, "POST", &path, &[], body.as_bytes()).unwrap();
            if response.status != 200 {
                // Streams that move the root run's thread or go on after the end are refused by the host.
                refused = true;
                break;
            }
            let (entries, batch_ended) = fold_entries(&mut fold, batch);
            expected.extend(entries);
            ended = batch_ended;
            let position =
                serde_json::from_str::<Value>(&response.body).unwrap()["position"].as_str().unwrap().to_owned();
            if position != client.position {
                catch_up(&server.address, &run, &mut client, &position);
            }
            assert_eq!(client.position, position, "{run}: batch {index} brings the client to the committed position");
            assert_eq!(client.entries, expected, "{run}: the entries after batch {index}");
            checked += 1;
        }
        streams += 1;
        if refused || !ended {
            continue;
        }
        let followed = live.join().unwrap();
        assert!(followed.ended, "{run}: the live stream ends with the run");
        assert_eq!(followed.snapshot_at.as_deref(), Some("0-0"), "{run}: the live client's snapshot");
        assert_eq!(followed.entries, expected, "{run}: the live client's entries");
        followed_live += 1;
    }
    assert!(streams >= 20 && checked >= 100, "only {streams} streams and {checked} boundaries were checked");
    assert!(followed_live >= 10, "only {followed_live} streams were followed live to their end");
    eprintln!("{streams} streams, {checked} batch boundaries, {followed_live} followed live to the end");
}

/// A client that connects after the run is complete gets the final snapshot and `end`, and nothing between.
#[test]
fn a_complete_run_is_its_snapshot_then_end() {
    let dir = std::env::temp_dir().join(format!("a13n-observed-end-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(env!("CARGO_BIN_EXE_a13n-stream"), dir.join("host.db").to_str().unwrap(), &[]);
    let lines = a13n_testkit::text_stream("thread-e", "run-e", 30);
    let body = lines.join("\n") + "\n";
    let response = request(&server.address, "POST", "/v1/runs/run-e/source?offset=0", &[], body.as_bytes()).unwrap();
    assert_eq!(response.status, 200, "{}", response.body);
    let position = serde_json::from_str::<Value>(&response.body).unwrap()["position"].as_str().unwrap().to_owned();
    let mut frames = Vec::new();
    sse_each(&server.address, "/v1/runs/run-e/observed", None, Duration::from_secs(10), |frame| {
        frames.push(frame);
        true
    });
    let kinds: Vec<&str> = frames.iter().map(|frame| frame.event.as_str()).collect();
    assert_eq!(kinds, ["snapshot", "end"]);
    assert!(frames.iter().all(|frame| frame.id == position));
    let snapshot = request(&server.address, "GET", "/v1/runs/run-e/snapshot", &[], b"").unwrap();
    assert_eq!(frames[0].data, snapshot.body, "the snapshot frame is the run's checkpoint");
}

/// Across processes: entries of batches another process committed come from storage, exactly.
#[test]
fn postgres_observed_follows_commits_of_another_process() {
    let database = a13n_testkit::host::postgres_database("observed");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let (writer, reader) = (Server::start(exe, &database, &[]), Server::start(exe, &database, &[]));
    let lines = a13n_testkit::text_stream("thread-o", "run-o", 40);
    let follower = {
        let address = reader.address.clone();
        std::thread::spawn(move || {
            let mut client = Client::default();
            sse_each(&address, "/v1/runs/run-o/observed", None, Duration::from_secs(10), |frame| {
                client.apply(&frame);
                !client.ended
            });
            client
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let mut fold = DisplayFold::new("run-o");
    let mut expected = Vec::new();
    for (index, batch) in lines.chunks(5).enumerate() {
        let body = batch.join("\n") + "\n";
        let path = format!("/v1/runs/run-o/source?offset={}", index * 5);
        assert_eq!(request(&writer.address, "POST", &path, &[], body.as_bytes()).unwrap().status, 200);
        expected.extend(fold_entries(&mut fold, batch).0);
    }
    let client = follower.join().unwrap();
    assert!(client.ended, "the reader's stream ends with the run");
    let skipped = sequence(client.snapshot_at.as_deref().unwrap()) as usize;
    assert_eq!(client.entries, expected[skipped..], "the entries after the reader's snapshot");
}

/// Events stored by a host older than `/observed` have no item reference: a client resuming among them gets a
/// snapshot past them instead, and then the entries after it.
#[test]
fn entries_stored_without_item_references_are_replaced_by_a_snapshot() {
    let dir = std::env::temp_dir().join(format!("a13n-observed-old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("host.db");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let lines = a13n_testkit::text_stream("thread-x", "run-x", 30);
    let post = |address: &str, offset: usize, batch: &[String]| {
        let path = format!("/v1/runs/run-x/source?offset={offset}");
        let body = batch.join("\n") + "\n";
        let response = request(address, "POST", &path, &[], body.as_bytes()).unwrap();
        assert_eq!(response.status, 200, "{}", response.body);
    };
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    post(&server.address, 0, &lines[..20]);
    server.kill();
    let connection = rusqlite::Connection::open(&db).unwrap();
    let forgotten = connection.execute("UPDATE event_chunks SET items = NULL WHERE run_id = 'run-x'", []).unwrap();
    assert!(forgotten > 0);
    drop(connection);
    let server = Server::start(exe, db.to_str().unwrap(), &[]);
    let mut fold = DisplayFold::new("run-x");
    let stored = fold_entries(&mut fold, &lines[..lines.len() - 1]).0.len() as u64;
    let (last, _) = fold_entries(&mut fold, &lines[lines.len() - 1..]);
    post(&server.address, 20, &lines[20..lines.len() - 1]);
    let client = {
        let address = server.address.clone();
        std::thread::spawn(move || {
            let mut frames = Vec::new();
            sse_each(&address, "/v1/runs/run-x/observed", Some("0-3"), Duration::from_secs(10), |frame| {
                let end = frame.event == "end";
                frames.push(frame);
                !end
            });
            frames
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    post(&server.address, lines.len() - 1, &lines[lines.len() - 1..]);
    let frames = client.join().unwrap();
    let kinds: Vec<&str> = frames.iter().map(|frame| frame.event.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"snapshot"), "entries without references are not sent: {kinds:?}");
    assert_eq!(frames[0].id, format!("0-{stored}"), "the snapshot is the committed checkpoint");
    let mut entries = Vec::new();
    for frame in frames.iter().filter(|frame| frame.event == "observed") {
        let data: Value = serde_json::from_str(&frame.data).unwrap();
        entries.extend(data["observed"].as_array().unwrap().iter().cloned().map(a13n_testkit::same_floats));
    }
    assert_eq!(entries, last, "the entries after the snapshot");
    assert_eq!(kinds.last(), Some(&"end"));
}
