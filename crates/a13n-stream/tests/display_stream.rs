//! `GET /v1/runs/{run_id}/display`: a client that applies the frames in order (upsert by id, order by ordinal)
//! holds exactly the display a fold of the same source gives, at every batch boundary of every corpus stream,
//! whether it follows live or reconnects after each batch with the last id it received.

use std::collections::HashMap;
use std::time::Duration;

use a13n_stream_bench::http::{request, sse_each, SseEvent};
use a13n_stream_protocol::{DisplayFold, SourceItem};
use a13n_testkit::host::Server;
use serde_json::Value;

/// A display client: items by id, as the frames carried them.
#[derive(Default)]
struct Client {
    items: HashMap<String, (u64, String)>,
    /// Patches applied.
    patched: usize,
    position: String,
    ended: bool,
}

impl Client {
    fn apply(&mut self, frame: &SseEvent) {
        let data: Value = serde_json::from_str(&frame.data).expect("frame data is JSON");
        match frame.event.as_str() {
            "snapshot" | "items" => {
                if frame.event == "snapshot" {
                    self.items.clear();
                }
                // Each item is spliced as stored: read it back as text to compare byte for byte.
                let raw: serde_json::Map<String, Value> = serde_json::from_str(&frame.data).unwrap();
                for item in raw["items"].as_array().unwrap() {
                    let id = item["id"].as_str().unwrap().to_owned();
                    self.items.insert(id, (item["ordinal"].as_u64().unwrap(), item.to_string()));
                }
                for patch in raw.get("patches").and_then(Value::as_array).into_iter().flatten() {
                    self.patch(patch);
                }
            }
            "end" => self.ended = true,
            other => panic!("unexpected frame {other}"),
        }
        assert_eq!(frame.id, data["position"].as_str().unwrap(), "a frame's id is its position");
        self.position = frame.id.clone();
    }

    /// Apply a patch to the item it names, which the client must hold.
    fn patch(&mut self, patch: &Value) {
        let id = patch["id"].as_str().unwrap();
        let (_, json) = self.items.get_mut(id).unwrap_or_else(|| panic!("a patch of item {id}, which was never sent"));
        let mut item: Value = serde_json::from_str(json).unwrap();
        for field in ["state", "last_stream_id", "ended_at"] {
            item[field] = patch[field].clone();
        }
        let content = item["content"].as_object_mut().unwrap();
        for (field, suffix) in patch.get("append").and_then(Value::as_object).into_iter().flatten() {
            let text = content.get_mut(field).and_then(|v| v.as_str().map(str::to_owned)).unwrap();
            content.insert(field.clone(), Value::String(text + suffix.as_str().unwrap()));
        }
        for (field, value) in patch.get("set").and_then(Value::as_object).into_iter().flatten() {
            content.insert(field.clone(), value.clone());
        }
        *json = item.to_string();
        self.patched += 1;
    }

    /// The items in ordinal order, each as compact JSON.
    fn display(&self) -> Vec<String> {
        let mut items: Vec<&(u64, String)> = self.items.values().collect();
        items.sort();
        items.into_iter().map(|(_, json)| json.clone()).collect()
    }
}

/// The fold's items in ordinal order, each as compact JSON (re-serialized the way the client's are).
fn fold_display(fold: &DisplayFold) -> Vec<String> {
    let snapshot: Value = serde_json::from_str(&fold.export_json()).unwrap();
    snapshot["items"].as_array().unwrap().iter().map(Value::to_string).collect()
}

/// Read display frames from `after` until one brings the client to `position` (or the stream ends).
fn catch_up(address: &str, run: &str, client: &mut Client, position: &str) {
    let path = format!("/v1/runs/{run}/display");
    let after = (!client.position.is_empty()).then(|| client.position.clone());
    sse_each(address, &path, after.as_deref(), Duration::from_secs(10), |frame| {
        client.apply(&frame);
        client.position != position && !client.ended
    });
}

#[test]
fn display_frames_rebuild_the_fold_at_every_batch_boundary() {
    let dir = std::env::temp_dir().join(format!("a13n-display-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(env!("CARGO_BIN_EXE_a13n-stream"), dir.join("host.db").to_str().unwrap(), &[]);
    let mut checked = 0;
    let mut streams = 0;
    let mut followed_live = 0;
    let mut patched = 0;
    for case in a13n_testkit::source_cases() {
        let text = std::fs::read_to_string(case.join("source.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let Ok(first) = SourceItem::from_json(lines[0]) else { continue };
        let run = format!("{}-{}", first.run_id, streams);
        // The host folds under the URL's run id; so does the reference fold here.
        let lines: Vec<String> = lines.iter().map(|l| l.replace(&first.run_id, &run)).collect();
        let live = {
            let (address, run) = (server.address.clone(), run.clone());
            std::thread::spawn(move || {
                let mut client = Client::default();
                sse_each(&address, &format!("/v1/runs/{run}/display"), None, Duration::from_secs(5), |frame| {
                    client.apply(&frame);
                    !client.ended
                });
                client
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let mut fold = DisplayFold::new(run.clone());
        let mut client = Client::default();
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
            for line in batch {
                // A Run's result ends the run only when it folds (the host skips one the observer refuses).
                ended = SourceItem::from_json(line)
                    .is_ok_and(|item| fold.fold_source(&item).is_ok() && item.event().is_none());
            }
            let position =
                serde_json::from_str::<Value>(&response.body).unwrap()["position"].as_str().unwrap().to_owned();
            catch_up(&server.address, &run, &mut client, &position);
            assert_eq!(client.position, position, "{run}: batch {index} brings the client to the committed position");
            assert_eq!(client.display(), fold_display(&fold), "{run}: the display after batch {index}");
            checked += 1;
        }
        streams += 1;
        // A run without its terminal result keeps its stream open: only complete runs are followed to the end.
        if refused || !ended {
            continue;
        }
        let followed = live.join().unwrap();
        assert!(followed.ended, "{run}: the live stream ends with the run");
        assert_eq!(followed.display(), fold_display(&fold), "{run}: the live client's display");
        followed_live += 1;
        patched += followed.patched;
    }
    assert!(streams >= 20 && checked >= 100, "only {streams} streams and {checked} boundaries were checked");
    assert!(followed_live >= 10, "only {followed_live} streams were followed live to their end");
    assert!(patched > 0, "no live frame sent a patch");
    eprintln!("{streams} streams, {checked} batch boundaries, {followed_live} followed live to the end");
    let snapshot = request(&server.address, "GET", "/healthz", &[], b"").unwrap();
    assert_eq!(snapshot.status, 200);
}

/// Across processes: frames for batches another process committed come from storage, exactly.
#[test]
fn postgres_display_follows_commits_of_another_process() {
    let database = a13n_testkit::host::postgres_database("display");
    let exe = env!("CARGO_BIN_EXE_a13n-stream");
    let (writer, reader) = (Server::start(exe, &database, &[]), Server::start(exe, &database, &[]));
    let lines = a13n_testkit::text_stream("thread-d", "run-d", 40);
    let follower = {
        let address = reader.address.clone();
        std::thread::spawn(move || {
            let mut client = Client::default();
            sse_each(&address, "/v1/runs/run-d/display", None, Duration::from_secs(10), |frame| {
                client.apply(&frame);
                !client.ended
            });
            client
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let mut fold = DisplayFold::new("run-d");
    for (index, batch) in lines.chunks(5).enumerate() {
        let body = batch.join("\n") + "\n";
        let path = format!("/v1/runs/run-d/source?offset={}", index * 5);
        assert_eq!(request(&writer.address, "POST", &path, &[], body.as_bytes()).unwrap().status, 200);
        for line in batch {
            fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
        }
    }
    let client = follower.join().unwrap();
    assert!(client.ended, "the reader's display stream ends with the run");
    assert_eq!(client.display(), fold_display(&fold));
}

/// A message streamed one line per commit: each live frame carries what its line added (a patch), not the whole
/// growing item, so frames stay small however long the message grows; and the client still ends with the fold.
#[test]
fn live_frames_do_not_grow_with_the_message() {
    let dir = std::env::temp_dir().join(format!("a13n-display-grow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(env!("CARGO_BIN_EXE_a13n-stream"), dir.join("host.db").to_str().unwrap(), &[]);
    let lines = a13n_testkit::text_stream("thread-g", "run-g", 4000);
    let follower = {
        let address = server.address.clone();
        std::thread::spawn(move || {
            let (mut client, mut large) = (Client::default(), 0);
            sse_each(&address, "/v1/runs/run-g/display", None, Duration::from_secs(10), |frame| {
                if frame.event == "items" && frame.data.len() > 4096 {
                    large += 1;
                }
                client.apply(&frame);
                !client.ended
            });
            (client, large)
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let mut fold = DisplayFold::new("run-g");
    for (offset, line) in lines.iter().enumerate() {
        let path = format!("/v1/runs/run-g/source?offset={offset}");
        assert_eq!(request(&server.address, "POST", &path, &[], format!("{line}\n").as_bytes()).unwrap().status, 200);
        fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
    }
    let (client, large) = follower.join().unwrap();
    assert!(client.ended);
    assert_eq!(client.display(), fold_display(&fold));
    let message = fold_display(&fold).iter().map(String::len).max().unwrap();
    assert!(message > 8 * 1024, "the message item is {message} bytes");
    assert!(client.patched > 1000, "only {} patches", client.patched);
    // Only frames that bring whole large items (the run's result, which repeats the text) exceed a few KiB.
    assert!(large <= 3, "{large} live frames over 4 KiB");
}
