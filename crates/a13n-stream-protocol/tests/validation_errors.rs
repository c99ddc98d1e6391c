//! A malformed inline delegation payload fails with Pydantic's own `ValidationError` text, as the reference
//! raises it: compared with messages recorded from the reference (`tests/oracle/delegation_errors.py`).

use a13n_stream_protocol::{recorded, HarnessAguiStreamObserver, ObserveError, SourceItem};
use serde_json::{json, Value};

fn line(sequence: u64, event: Value) -> String {
    json!({
        "thread_id": "thread-p", "run_id": "run-p", "sequence": sequence,
        "occurred_at": "2026-11-29T18:05:40.520569+00:00", "event": event,
    })
    .to_string()
}

#[test]
fn delegation_payload_errors_are_the_references_text() {
    let recorded_lines = include_str!("data/delegation_errors.jsonl");
    let mut checked = 0;
    for (index, text) in recorded_lines.lines().enumerate() {
        let case: Value = serde_json::from_str(text).unwrap();
        let mut observer = HarnessAguiStreamObserver::new();
        let started = json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "run_started"}});
        observer.observe(&SourceItem::from_json(&line(0, started)).unwrap()).unwrap();
        let event = json!({"schema_version": "1", "kind": "delegation", "payload": case["payload"]});
        let result = observer.observe(&SourceItem::from_json(&line(1, event)).unwrap());
        match (&case["error"], result) {
            (Value::Null, Ok(_)) => {}
            (expected, Err(error @ ObserveError::Validation(_))) => {
                let (kind, message) = recorded::observe_error_parts(&error);
                assert_eq!(kind, expected["type"].as_str().unwrap(), "case {index}");
                assert_eq!(message, expected["message"].as_str().unwrap(), "case {index}: {}", case["payload"]);
            }
            (expected, other) => panic!("case {index}: expected {expected}, got {other:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 30, "the recording holds every case");
}
