//! The table of bad inputs: every row is an input, the kind of error it must get, and what the message must
//! say. Nothing here may panic, and a rejected input changes nothing.

use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, InputError, SourceItem};
use serde_json::{json, Value};

const ENVELOPE: &str = r#""thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:00+00:00""#;

fn line(body: &str) -> String {
    format!("{{{ENVELOPE},{body}}}")
}

/// Source lines that must not decode: (input, field path, words of the message).
fn malformed_source() -> Vec<(String, &'static str, &'static str)> {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    vec![
        (String::new(), "", "invalid JSON"),
        ("{not json".into(), "", "invalid JSON"),
        ("[]".into(), "", "expected a source item object"),
        (r#"{"run_id":"r"}"#.into(), "thread_id", "missing field"),
        (r#"{"thread_id":"  ","run_id":"r"}"#.into(), "thread_id", "must not be empty"),
        (r#"{"thread_id":7,"run_id":"r"}"#.into(), "thread_id", "expected a string"),
        (r#"{"thread_id":"t","run_id":"r","sequence":-1}"#.into(), "sequence", "integer of 0 or more"),
        (r#"{"thread_id":"t","run_id":"r","sequence":"1"}"#.into(), "sequence", "integer of 0 or more"),
        (r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"yesterday"}"#.into(), "occurred_at", "ISO 8601"),
        (
            r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-02-30T00:00:00Z","event":{}}"#.into(),
            "occurred_at",
            "out of range",
        ),
        // Python reads a naive time's zone a day before it too: before 0001-01-02 it has no timestamp.
        (
            r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"0001-01-01T23:59:59","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"model_request_started","request_id":"m","request_index":0,"message_count":1}}}"#.into(),
            "occurred_at",
            "year 0 is out of range",
        ),
        (format!("{{{ENVELOPE}}}"), "", "missing field `event`"),
        (line(r#""event":{"kind":"state","payload":1},"result":{}"#), "", "not both"),
        (line(r#""event":[1]"#), "event", "expected an object"),
        (line(r#""event":{"payload":1}"#), "event.kind", "missing field"),
        (line(r#""event":{"event_kind":5}"#), "event.event_kind", "expected a string"),
        (line(r#""event":{"index":"0.5","delta":{},"event_kind":"part_delta"}"#), "event.index", "expected an integer"),
        (
            line(
                r#""event":{"index":0,"delta":{"content_delta":null,"part_delta_kind":"text"},"event_kind":"part_delta"}"#,
            ),
            "event.delta.content_delta",
            "expected a string",
        ),
        (line(r#""event":{"index":0,"event_kind":"part_start"}"#), "event.part", "missing field"),
        (
            line(r#""event":{"index":0,"part":{"part_kind":"tool-call","tool_name":"t"},"event_kind":"part_end"}"#),
            "event.part.tool_call_id",
            "missing field",
        ),
        (
            line(r#""event":{"part":{"part_kind":"weird"},"event_kind":"function_tool_result"}"#),
            "event.part.part_kind",
            "tool-return",
        ),
        (
            line(
                r#""event":{"kind":"a13n.input.text","event_kind":"capability","input_id":"i","source":"user","content":{}}"#,
            ),
            "event.content",
            "expected a string",
        ),
        // Pydantic AI's event union is tagged by `event_kind`, of which it knows the tags.
        (line(r#""event":{"event_kind":"Capability"}"#), "event.event_kind", "no event kind"),
        // The envelopes of capability and custom events (every class of theirs has them), whatever the kind.
        (line(r#""event":{"event_kind":"capability","kind":null}"#), "event.kind", "expected a string"),
        (line(r#""event":{"event_kind":"capability","kind":"x.y","capability_id":5}"#), "event.capability_id", "string or null"),
        (line(r#""event":{"tool_name":[],"event_kind":"capability"}"#), "event.tool_name", "string or null"),
        (line(r#""event":{"event_kind":"custom","x":1}"#), "event.name", "missing field"),
        (line(r#""event":{"event_kind":"custom","name":""}"#), "event.name", "requires a `name`"),
        (line(r#""event":{"event_kind":"custom","name":"x.y","tool_call_id":5}"#), "event.tool_call_id", "string or null"),
        (line(r#""result":{"status":"done"}"#), "result.status", "completed, suspended"),
        (line(r#""result":{"status":"completed"}"#), "result.usage", "missing field"),
        (
            line(
                r#""result":{"status":"failed","usage":{"input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0}}"#,
            ),
            "result.failure",
            "missing field",
        ),
        (
            line(
                r#""result":{"status":"completed","usage":{"input_tokens":-1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0}}"#,
            ),
            "result.usage.input_tokens",
            "integer from 0 to 2**64 - 1",
        ),
        (line(&format!(r#""event":{{"kind":"state","payload":{deep}}}"#)), "", "nested deeper than 128 levels"),
        // Python's `json.loads` converts no integer of more than 4,300 digits.
        (
            line(&format!(r#""event":{{"kind":"state","payload":{{"n":[1,-{}]}}}}"#, "9".repeat(4301))),
            "event.payload.n.1",
            "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits",
        ),
    ]
}

#[test]
fn malformed_source_lines_name_the_field() {
    for (input, path, words) in malformed_source() {
        let error: InputError = SourceItem::from_json(&input).expect_err(&input);
        assert_eq!(error.path(), path, "{input}: {error}");
        assert!(error.to_string().contains(words), "{input}: {error}");
        assert_eq!(error.clone().at_line(7).to_string(), format!("line 7: {error}"));
    }
}

/// The fast lanes refuse what decoding refuses: a naive time with no timestamp (the line would take the carried
/// lane) is an error for the observer and the fold too, and changes nothing.
#[test]
fn a_naive_time_with_no_timestamp_is_refused_on_every_path() {
    let start = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#;
    let (input, _, words) = malformed_source().into_iter().find(|(_, _, words)| words.contains("year 0")).unwrap();
    let mut observer = HarnessAguiStreamObserver::new();
    observer.observe_line(start, &mut Vec::new()).unwrap();
    let error = observer.observe_line(&input, &mut Vec::new()).expect_err("observed");
    assert!(error.to_string().contains(words), "{error}");
    let mut fold = DisplayFold::new("r");
    fold.fold_line(start, &mut Vec::new()).unwrap();
    let before = fold.export_json();
    let error = fold.fold_line(&input, &mut Vec::new()).expect_err("folded");
    assert!(error.to_string().contains(words), "{error}");
    assert_eq!(fold.export_json(), before);
    let a_day_later = input.replace("0001-01-01T23:59:59", "0001-01-02T00:00:00");
    fold.fold_line(&a_day_later, &mut Vec::new()).unwrap();
}

/// An integer of more than 4,300 digits, which Python's `json` does not convert, is refused on every path: a key
/// the model drops holds it, so a lane would take the line laid out without it.
#[test]
fn an_integer_python_does_not_convert_is_refused_on_every_path() {
    let start = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#;
    let part = |digits: usize| {
        let part = r#"{"content":"hi","id":null,"provider_name":null,"provider_details":null,"part_kind":"text"}"#;
        let event = format!(
            r#"{{"index":0,"part":{part},"previous_part_kind":null,"event_kind":"part_start","x":{}}}"#,
            "9".repeat(digits)
        );
        format!(
            r#"{{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{event}}}"#
        )
    };
    let words = "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits";
    let mut observer = HarnessAguiStreamObserver::new();
    observer.observe_line(start, &mut Vec::new()).unwrap();
    let error = observer.observe_line(&part(4301), &mut Vec::new()).expect_err("observed");
    assert!(error.to_string().contains(words), "{error}");
    observer.observe_line(&part(4300), &mut Vec::new()).unwrap();
    let mut fold = DisplayFold::new("r");
    fold.fold_line(start, &mut Vec::new()).unwrap();
    let before = fold.export_json();
    let error = fold.fold_line(&part(4301), &mut Vec::new()).expect_err("folded");
    assert!(error.to_string().contains(words), "{error}");
    assert_eq!(fold.export_json(), before);
    fold.fold_line(&part(4300), &mut Vec::new()).unwrap();
}

/// Usage counts AG-UI's `TokenUsage` refuses raise its `ValidationError`, with no overflow when input and output
/// together pass 64 bits.
#[test]
fn usage_counts_past_agui_bounds_are_refused() {
    let start = r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#;
    let result = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","result":{"status":"completed","output":"x","usage":{"input_tokens":18446744073709551615,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}}"#;
    let mut observer = HarnessAguiStreamObserver::new();
    observer.observe_line(start, &mut Vec::new()).unwrap();
    let error = observer.observe_line(result, &mut Vec::new()).expect_err("observed");
    let message = error.to_string();
    assert!(message.starts_with("2 validation errors for TokenUsage\ninput_tokens\n"), "{message}");
    assert!(message.contains("total_tokens\n  Input should be less than or equal to 9007199254740991 [type=less_than_equal, input_value=18446744073709551616, input_type=int]"), "{message}");
}

#[test]
fn oversized_lines_are_refused_before_parsing() {
    let error =
        SourceItem::from_json_limited(&line(r#""event":{"kind":"state","payload":"xxxxxxxx"}"#), 16).unwrap_err();
    assert!(error.to_string().contains("the limit is 16"), "{error}");
}

/// Well-formed items the protocol rejects or reports as bad input at observation time.
#[test]
fn rejected_items_name_the_rule_and_change_nothing() {
    let item = |event: Value| {
        SourceItem::from_value(json!({"thread_id": "t", "run_id": "r", "sequence": 1, "occurred_at": "2026-11-29T12:00:00+00:00", "event": event})).unwrap()
    };
    let start = item(
        json!({"index": 0, "part": {"content": "a", "id": null, "part_kind": "text"}, "event_kind": "part_start"}),
    );
    let table: Vec<(Value, bool, &str)> = vec![
        (
            json!({"index": 0, "delta": {"content_delta": "b", "part_delta_kind": "thinking"}, "event_kind": "part_delta"}),
            true,
            "part kind changed",
        ),
        (
            json!({"index": 0, "part": {"content": "a", "id": "other", "part_kind": "text"}, "event_kind": "part_end"}),
            true,
            "identity changed",
        ),
        (
            json!({"index": 0, "part": {"tool_name": "t", "args": null, "tool_call_id": "c", "part_kind": "tool-call"}, "event_kind": "part_end"}),
            true,
            "part kind changed",
        ),
        (
            json!({"schema_version": "1", "kind": "delegation", "payload": {"type": "inline_delegation", "invocation_id": "delegation-1", "action": "started", "child_instance_id": "i", "subagent": "s", "status": "running", "parent_run_id": "r", "parent_agent_instance_id": "a"}}),
            false,
            "require child_run_id",
        ),
        (
            json!({"schema_version": "1", "kind": "delegation", "payload": {"type": "inline_delegation", "invocation_id": "delegation-1", "action": "started", "child_instance_id": "", "subagent": "s", "status": "running", "parent_run_id": "r", "parent_agent_instance_id": "a", "child_run_id": "c"}}),
            false,
            "child_instance_id\n  String should have at least 1 character",
        ),
        (
            json!({"schema_version": "1", "kind": "delegation", "payload": {"type": "inline_delegation", "surprise": 1}}),
            false,
            "Extra inputs are not permitted",
        ),
        (
            json!({"part": {"tool_name": "t", "content": ["a"], "tool_call_id": "c", "metadata": {"a13n.tool-content": {"result_index": 5}}, "outcome": "success", "part_kind": "tool-return"}, "event_kind": "function_tool_result"}),
            false,
            "no execution value at result_index 5",
        ),
        (
            json!({"part": {"tool_name": "t", "content": ["a"], "tool_call_id": "c", "metadata": {"a13n.tool-content": {"result_index": "x"}}, "outcome": "success", "part_kind": "tool-return"}, "event_kind": "function_tool_result"}),
            false,
            "result_index",
        ),
    ];
    for (event, observation, words) in table {
        let mut observer = HarnessAguiStreamObserver::new();
        observer.observe(&start).unwrap();
        let before = observer.export();
        let error = observer.observe(&item(event.clone())).expect_err(&event.to_string());
        assert_eq!(error.is_observation(), observation, "{event}: {error}");
        assert!(error.to_string().contains(words), "{event}: {error}");
        assert_eq!(observer.export(), before, "{event}");

        let mut fold = DisplayFold::new("r");
        fold.fold_source(&start).unwrap();
        let checkpoint = fold.export_json();
        assert!(fold.fold_source(&item(event.clone())).is_err());
        assert_eq!(fold.export_json(), checkpoint, "{event}");
    }
    // A thread change for a known run.
    let mut observer = HarnessAguiStreamObserver::new();
    observer.observe(&start).unwrap();
    let mut moved = start.to_value();
    moved["thread_id"] = "elsewhere".into();
    let error = observer.observe(&SourceItem::from_value(moved).unwrap()).unwrap_err();
    assert!(error.is_observation() && error.to_string().contains("Thread correlation changed"), "{error}");
    assert_eq!(error.rejection(), Some(a13n_stream_protocol::ObservationKind::ThreadChanged));
}

/// AG-UI events folded directly: what must be refused, and where the message points.
#[test]
fn malformed_agui_events_are_refused_whole() {
    let table: Vec<(Value, &str)> = vec![
        (json!({"messageId": "m"}), "events.1.type: missing field"),
        (json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}), "events.1.delta: missing field"),
        (json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 5}), "events.1.delta: expected a string"),
        (json!({"type": "TEXT_MESSAGE_START"}), "events.1.messageId: missing field"),
        (json!({"type": "REASONING_ENCRYPTED_VALUE", "messageId": "m"}), "events.1.entityId"),
        (json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c"}), "events.1.delta"),
        (json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "timestamp": i64::MAX}), "events.1.timestamp"),
        (json!({"type": "CUSTOM", "name": "a13n.pydantic_ai.part_delta", "value": {}}), "events.1.value.event.delta"),
    ];
    for (event, words) in table {
        let mut fold = DisplayFold::new("r");
        let good =
            json!({"type": "TEXT_MESSAGE_START", "messageId": "ok", "timestamp": 1}).as_object().cloned().unwrap();
        let checkpoint = fold.export_json();
        let error = fold.fold(vec![good, event.as_object().cloned().unwrap()], None).unwrap_err();
        assert!(error.to_string().contains(words), "{event}: {error}");
        assert_eq!(fold.export_json(), checkpoint, "the whole batch is refused: {event}");
    }
    // Unknown event types and non-string types fold into no item, as the reference does.
    let mut fold = DisplayFold::new("r");
    let observed = fold.fold(vec![json!({"type": 5}).as_object().cloned().unwrap()], None).unwrap();
    assert!(observed[0].item.is_none());
}

#[test]
fn bad_checkpoints_are_refused_with_their_reason() {
    let good = DisplayFold::new("r").export_json();
    let table: Vec<(String, &str)> = vec![
        ("not json".into(), "checkpoint"),
        ("{}".into(), "missing field"),
        (good.replace("\"next_ordinal\":1", "\"next_ordinal\":0"), "next_ordinal"),
        (good.replace("\"full_content\":false", "\"full_content\":false,\"surprise\":1"), "unknown field"),
        (good.replace("\"max_pending\":8", "\"max_pending\":0"), "bounds must be positive"),
        // A browser's export (js/display) after an entry: it said only "invalid type: null, expected struct".
        (with_observer_null(&good), "a browser's checkpoint"),
        (good.replace("\"items\":[]", r#""items":[{"id":"x","ordinal":0,"kind":"observation","state":"completed","first_stream_id":"0-1","last_stream_id":"0-1","started_at":"2026-11-29T12:00:00Z","ended_at":null,"content":{}}]"#), "ordinal"),
        (good.replace("\"items\":[]", r#""items":[{"id":"x","ordinal":1,"kind":"observation","state":"completed","first_stream_id":"0-1","last_stream_id":"0-1","started_at":"2026-11-29T12:00:00Z","ended_at":null,"content":[1]}]"#), "expected an object"),
    ];
    for (text, words) in table {
        let error = DisplayFold::restore_json(&text, false, None).unwrap_err();
        assert!(error.to_string().contains(words), "{text}: {error}");
    }
    assert!(DisplayFold::restore_json(&good, false, None).is_ok());
}

/// A checkpoint cut short where a number goes (`"sequence":` and the end), its items' shapes already known to the
/// one-pass reader, is refused, not a panic: found by the `checkpoint` fuzz target (session 46), where the reader's
/// integer check read the byte past the end.
#[test]
fn a_checkpoint_cut_where_a_number_goes_is_refused() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/extra-subagent-groups/source.jsonl"
    ))
    .expect("a repository case");
    let mut fold = DisplayFold::new("run-parent");
    for line in source.lines().filter(|line| !line.trim().is_empty()) {
        let _ = fold.fold_source(&SourceItem::from_json(line).expect("a recorded line"));
    }
    let checkpoint = fold.export_json();
    let cuts: Vec<usize> = checkpoint.match_indices("\"sequence\":").map(|(at, key)| at + key.len()).collect();
    assert!(cuts.len() > 5, "the checkpoint holds numbers to cut at");
    for cut in cuts {
        let error = DisplayFold::restore_json(&checkpoint[..cut], false, None).unwrap_err();
        assert!(!error.to_string().is_empty(), "cut at {cut}");
    }
}

/// `checkpoint` with the continuation's observer `null`, as the browser package exports it after an entry.
fn with_observer_null(checkpoint: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(checkpoint).unwrap();
    value["continuation"]["observer"] = serde_json::Value::Null;
    value.to_string()
}

/// Adversarial sizes: work stays linear (a quadratic path would make this test take minutes) and memory stays
/// within the configured bounds.
#[test]
fn adversarial_sizes_stay_linear_and_bounded() {
    use a13n_stream_protocol::fragments::{Accepted, CustomEventAssembler, FRAGMENT_EVENT_NAME};
    // 200k one-byte frames of one event, then a gap: nothing partial comes out, nothing stays pending.
    let mut assembler = CustomEventAssembler::default();
    let count = 200_000u64;
    for index in 0..count - 1 {
        let frame =
            json!({"name": FRAGMENT_EVENT_NAME, "value": {"id": "big", "index": index, "count": count, "data": "x"}});
        assert_eq!(assembler.accept(frame.as_object().unwrap()), Accepted::Pending);
    }
    let wrong =
        json!({"name": FRAGMENT_EVENT_NAME, "value": {"id": "big", "index": count + 5, "count": count, "data": "x"}});
    assert_eq!(assembler.accept(wrong.as_object().unwrap()), Accepted::Pending);
    assert!(assembler.gap());
    // A byte budget bounds what a sender can make the assembler hold.
    let mut small = CustomEventAssembler::new(1024, 2).unwrap();
    for index in 0..10_000 {
        let frame = json!({"name": FRAGMENT_EVENT_NAME, "value": {"id": format!("e{}", index % 7), "index": 0, "count": 3, "data": "y".repeat(100)}});
        small.accept(frame.as_object().unwrap());
        let state = small.export();
        assert!(state.pending.len() <= 2 && state.pending.values().map(|a| a.size).sum::<u64>() <= 1024);
    }

    // A 4-million-character delta of multi-byte text, then 100k more deltas into the same message.
    let mut fold = DisplayFold::new("r");
    let start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "timestamp": 1});
    fold.fold(vec![start.as_object().cloned().unwrap()], None).unwrap();
    let huge =
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "é東🚀x".repeat(1_000_000), "timestamp": 2});
    fold.fold(vec![huge.as_object().cloned().unwrap()], None).unwrap();
    for _ in 0..100_000 {
        let delta = json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "ab", "timestamp": 3});
        fold.fold(vec![delta.as_object().cloned().unwrap()], None).unwrap();
    }
    let item = fold.items().next().unwrap();
    assert_eq!(item.content["text"].as_str().unwrap().chars().count(), 262_144);
    assert_eq!(item.content["truncated"], true);
}

/// Each malformed input also says what kind of wrong it is, and a decoder's error stays reachable as the source.
#[test]
fn input_errors_say_what_kind_of_wrong_they_are() {
    use a13n_stream_protocol::{FoldError, InputKind};
    use std::error::Error;
    let source = |input: &str| SourceItem::from_json(input).unwrap_err();
    let rows = [
        ("{not json".to_owned(), InputKind::Json),
        (r#"{"run_id":"r"}"#.to_owned(), InputKind::Missing),
        (r#"{"thread_id":7,"run_id":"r"}"#.to_owned(), InputKind::WrongType),
        (r#"{"thread_id":"  ","run_id":"r"}"#.to_owned(), InputKind::Invalid),
        (format!("{{{ENVELOPE}}}"), InputKind::Missing),
        (line(r#""event":{"index":"0.5","delta":{},"event_kind":"part_delta"}"#), InputKind::WrongType),
        (line(r#""event":{"index":0,"event_kind":"part_start"}"#), InputKind::Missing),
    ];
    for (input, kind) in rows {
        let error = source(&input);
        assert_eq!(error.kind(), kind, "{input}: {error}");
        assert_eq!(error.source().is_some(), kind == InputKind::Json, "{input}: {error}");
    }
    let oversized = SourceItem::from_json_limited(&line(r#""event":{"kind":"state","payload":"xx"}"#), 16).unwrap_err();
    assert_eq!(oversized.kind(), InputKind::TooLarge);
    for (checkpoint, kind) in [("{broken", InputKind::Json), (r#"{"items":5,"continuation":{}}"#, InputKind::Shape)] {
        let Err(FoldError::Input(error)) = DisplayFold::restore_json(checkpoint, false, None) else {
            panic!("{checkpoint} must be bad input");
        };
        assert_eq!(error.kind(), kind, "{checkpoint}: {error}");
        let decoder = error.source().expect("the decoder's error");
        assert!(decoder.downcast_ref::<serde_json::Error>().is_some(), "{checkpoint}");
    }
}

/// Found by helper-54: a presented tool result whose content, written as text, holds a number Python reads as
/// infinite is refused (the reference raises `ValueError: JSON numbers must be finite`); this wrote `Infinity`. A
/// failed one folds with no failure message: the reference folds its event, then raises making the message.
#[test]
fn tool_results_holding_numbers_python_reads_as_infinite() {
    let result = |call: &str, content: &str, outcome: &str| {
        let part = format!(
            r#"{{"tool_name":"t","content":{content},"tool_call_id":"{call}","metadata":null,"outcome":"{outcome}","part_kind":"tool-return"}}"#
        );
        SourceItem::from_json(&line(&format!(r#""event":{{"part":{part},"event_kind":"function_tool_result"}}"#)))
            .unwrap()
    };
    for content in [r#"{"a":1e400}"#, "[-1E400]"] {
        let mut observer = HarnessAguiStreamObserver::new();
        let error = observer.observe(&result("c", content, "success")).unwrap_err();
        assert_eq!(error.to_string(), "bad input: event.part.content: JSON numbers must be finite", "{content}");
        let mut fold = DisplayFold::new("r");
        assert!(fold.fold_source(&result("c", content, "success")).is_err(), "{content}");
    }
    let mut fold = DisplayFold::new("r");
    fold.fold_source(&result("c", r#"{"a":1e400}"#, "failed")).unwrap();
    fold.fold_source(&result("d", r#"{"a":1}"#, "failed")).unwrap();
    let snapshot: Value = serde_json::from_str(&fold.export_json()).unwrap();
    let items = snapshot["items"].as_array().unwrap();
    assert_eq!(items[0]["content"]["value"], json!({"a": null}));
    assert_eq!(items[0]["content"].get("failure"), None, "no message: no failure");
    assert_eq!(items[1]["content"]["failure"]["message"], "{\"a\":1}");
}

/// Found by helper-55: a tool result's metadata may be any value (the part's field is `Any`); the conversion looks
/// for a lowered result's marker with Python's `in`, so other metadata is no marker, unless `in` finds the key in a
/// string or a list or refuses to look in a number, where the reference raises `TypeError`. Non-object metadata was
/// refused whole.
#[test]
fn tool_result_metadata_is_read_as_python_reads_it() {
    let item = |metadata: Value, outcome: &str| {
        SourceItem::from_value(json!({"thread_id": "t", "run_id": "r", "sequence": 1, "occurred_at": "2026-11-29T12:00:00+00:00",
            "event": {"part": {"tool_name": "t", "content": "done", "tool_call_id": "c", "metadata": metadata, "outcome": outcome, "part_kind": "tool-return"}, "event_kind": "function_tool_result"}}))
        .unwrap()
    };
    for metadata in [json!([1, 2]), json!("notes"), json!(null), json!({"note": 1}), json!(["a13n"])] {
        for outcome in ["success", "failed"] {
            let events = HarnessAguiStreamObserver::new().observe(&item(metadata.clone(), outcome));
            assert!(events.is_ok(), "{metadata} {outcome}: {events:?}");
        }
    }
    for (metadata, words) in [
        (json!(7), "argument of type 'int' is not iterable"),
        (json!(1.5), "argument of type 'float' is not iterable"),
        (json!(true), "argument of type 'bool' is not iterable"),
        (json!("see a13n.tool-content"), "string indices must be integers, not 'str'"),
        (json!([1, "a13n.tool-content"]), "list indices must be integers or slices, not str"),
    ] {
        for outcome in ["success", "failed"] {
            let error = HarnessAguiStreamObserver::new().observe(&item(metadata.clone(), outcome)).unwrap_err();
            assert_eq!(error.to_string(), format!("bad input: event.part.metadata: {words}"), "{metadata} {outcome}");
        }
    }
}
