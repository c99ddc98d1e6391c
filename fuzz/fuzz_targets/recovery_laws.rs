//! Random valid-shaped Harness streams: at a random cut, observer export/restore and resume, and display
//! checkpoint/restore, continue exactly as the uninterrupted run.
#![no_main]

use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, ObserverContinuation, SourceItem};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

#[derive(Arbitrary, Debug)]
enum Step {
    RequestStarted,
    TextStart { index: u8, content: String },
    TextDelta { index: u8, delta: String },
    TextEnd { index: u8, content: String },
    ThinkingDelta { index: u8, delta: String, signature: Option<String> },
    ThinkingEnd { index: u8, content: String },
    ToolStart { index: u8, call: u8 },
    ToolArgs { index: u8, call: u8, args: String },
    ToolEnd { index: u8, call: u8 },
    ToolResult { call: u8, ok: bool, value: String },
    Input { text: String },
    Delegate { child: u8, action: u8 },
    ChildDelta { child: u8, delta: String },
    Finish,
}

fn event(sequence: usize, run: &str, thread: &str, event: Value) -> SourceItem {
    let micros = 123_456 + sequence * 1_001;
    let value = json!({"thread_id": thread, "run_id": run, "sequence": sequence,
        "occurred_at": format!("2026-11-29T12:{:02}:{:02}.{:06}+00:00", (micros / 60_000_000) % 60, (micros / 1_000_000) % 60, micros % 1_000_000),
        "event": event});
    SourceItem::from_value(value).expect("generated items decode")
}

fn build(steps: &[Step]) -> Vec<SourceItem> {
    let mut items = vec![event(0, "run-f", "thread-f", json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "run_started"}}))];
    let mut request = 0;
    for step in steps {
        let n = items.len();
        let root = |e: Value| event(n, "run-f", "thread-f", e);
        items.push(match step {
            Step::RequestStarted => {
                request += 1;
                root(json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "model_request_started", "request_id": format!("model-request-{request}"), "request_index": request - 1, "message_count": 1}}))
            }
            Step::TextStart { index, content } => root(json!({"index": index % 4, "part": {"content": content, "id": null, "part_kind": "text"}, "event_kind": "part_start"})),
            Step::TextDelta { index, delta } => root(json!({"index": index % 4, "delta": {"content_delta": delta, "part_delta_kind": "text"}, "event_kind": "part_delta"})),
            Step::TextEnd { index, content } => root(json!({"index": index % 4, "part": {"content": content, "id": null, "part_kind": "text"}, "event_kind": "part_end"})),
            Step::ThinkingDelta { index, delta, signature } => root(json!({"index": index % 4, "delta": {"content_delta": delta, "signature_delta": signature, "part_delta_kind": "thinking"}, "event_kind": "part_delta"})),
            Step::ThinkingEnd { index, content } => root(json!({"index": index % 4, "part": {"content": content, "signature": null, "part_kind": "thinking"}, "event_kind": "part_end"})),
            Step::ToolStart { index, call } => root(json!({"index": index % 4, "part": {"tool_name": "t", "args": "", "tool_call_id": format!("c{}", call % 4), "part_kind": "tool-call"}, "event_kind": "part_start"})),
            Step::ToolArgs { index, call, args } => root(json!({"index": index % 4, "delta": {"tool_name_delta": null, "args_delta": args, "tool_call_id": format!("c{}", call % 4), "part_delta_kind": "tool_call"}, "event_kind": "part_delta"})),
            Step::ToolEnd { index, call } => root(json!({"index": index % 4, "part": {"tool_name": "t", "args": {"k": 1}, "tool_call_id": format!("c{}", call % 4), "part_kind": "tool-call"}, "event_kind": "part_end"})),
            Step::ToolResult { call, ok, value } => root(json!({"part": {"tool_name": "t", "content": value, "tool_call_id": format!("c{}", call % 4), "metadata": null, "outcome": if *ok { "success" } else { "failed" }, "part_kind": "tool-return"}, "content": null, "event_kind": "function_tool_result"})),
            Step::Input { text } => root(json!({"kind": "a13n.input.text", "event_kind": "capability", "input_id": "in", "source": "user", "content": text, "metadata": {"display": true, "source_id": null, "media": false}})),
            Step::Delegate { child, action } => {
                let action = ["started", "completed", "failed"][usize::from(action % 3)];
                root(json!({"schema_version": "1", "kind": "delegation", "payload": {"type": "inline_delegation", "invocation_id": "delegation-1", "action": action, "child_instance_id": "i", "subagent": "s", "status": action, "parent_run_id": "run-f", "parent_agent_instance_id": "a", "child_run_id": format!("run-child{}", child % 3)}}))
            }
            Step::ChildDelta { child, delta } => event(n, &format!("run-child{}", child % 3), "thread-child", json!({"index": 0, "delta": {"content_delta": delta, "part_delta_kind": "text"}, "event_kind": "part_delta"})),
            Step::Finish => {
                let value = json!({"thread_id": "thread-f", "run_id": "run-f", "sequence": n, "occurred_at": "2026-11-29T13:00:00+00:00",
                    "result": {"status": "completed", "output": "done", "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0, "details": {}}}});
                SourceItem::from_value(value).expect("a result decodes")
            }
        });
    }
    items
}

fn outputs(observer: &mut HarnessAguiStreamObserver, items: &[SourceItem]) -> Vec<Result<Vec<Value>, bool>> {
    items
        .iter()
        .map(|item| {
            observer.observe(item).map(|events| events.iter().map(|e| e.to_value()).collect()).map_err(|e| e.is_observation())
        })
        .collect()
}

fuzz_target!(|input: (Vec<Step>, u8)| {
    let (steps, cut) = input;
    let items = build(&steps);
    let cut = usize::from(cut) % (items.len() + 1);
    let expected = outputs(&mut HarnessAguiStreamObserver::new(), &items);
    let mut prefix = HarnessAguiStreamObserver::new();
    outputs(&mut prefix, &items[..cut]);
    let saved = ObserverContinuation::from_json(&prefix.export().to_json()).expect("own continuation");
    let mut restored = HarnessAguiStreamObserver::restore(saved, None);
    assert_eq!(outputs(&mut restored, &items[cut..]), expected[cut..]);
    let mut resumed = HarnessAguiStreamObserver::new();
    if resumed.resume(&items[..cut]).is_ok() {
        assert_eq!(outputs(&mut resumed, &items[cut..]), expected[cut..]);
    }

    let mut whole = DisplayFold::new("run-f");
    for item in &items {
        let _ = whole.fold_source(item);
    }
    let mut half = DisplayFold::new("run-f");
    for item in &items[..cut] {
        let _ = half.fold_source(item);
    }
    let mut continued = DisplayFold::restore_json(&half.export_json(), false, None).expect("own checkpoint");
    for item in &items[cut..] {
        let _ = continued.fold_source(item);
    }
    assert_eq!(continued.export_json(), whole.export_json());
});
