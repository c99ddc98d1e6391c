//! Inputs for the lane-equivalence tests: lines of every lane changed in every way the fast lanes must notice,
//! and streams whose inline child run streams a tool call.

use serde_json::{json, Value};

/// How many distinct changes [`mutate_argument_delta`] makes.
pub const ARGUMENT_MUTATIONS: u64 = 28;

/// Change a tool-call argument-delta source line in one of [`ARGUMENT_MUTATIONS`] ways: text that needs
/// escaping, spacing, key order, every identity and provider field, value types, repeated and unknown keys,
/// other parts, threads, runs and times, and broken JSON.
pub fn mutate_argument_delta(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let delta = &mut item["event"]["delta"];
    match choice {
        0 => return line.replace(r#""args_delta":""#, r#""args_delta":"\u00e9\n\"q\" \/ \ud83d\ude00"#),
        1 => return line.replace(r#""thread_id":"#, r#" "thread_id" : "#),
        2 => {
            let moved = delta.as_object_mut().and_then(|d| d.shift_remove("tool_name_delta"));
            delta["tool_name_delta"] = moved.unwrap_or(Value::Null);
        }
        3 => {
            let moved = item["event"].as_object_mut().and_then(|e| e.shift_remove("index"));
            item["event"]["index"] = moved.unwrap_or(json!(0));
        }
        4 => delta["tool_call_id"] = Value::Null,
        5 => delta["tool_call_id"] = json!(""),
        6 => delta["tool_call_id"] = json!("call_other"),
        7 => delta["tool_name_delta"] = json!("x"),
        8 => delta["tool_name_delta"] = json!(""),
        9 => delta["provider_name"] = json!("open\"ai"),
        10 => delta["provider_details"] = json!({"k": 1}),
        11 => delta["args_delta"] = Value::Null,
        12 => delta["args_delta"] = json!(5),
        13 => delta["args_delta"] = json!(""),
        14 => delta["extra"] = json!(1),
        15 => delta["content_delta"] = json!("x"),
        16 => drop(delta.as_object_mut().and_then(|d| d.shift_remove("tool_call_id"))),
        17 => drop(delta.as_object_mut().and_then(|d| d.shift_remove("provider_name"))),
        18 => item["event"]["index"] = json!(1),
        19 => item["thread_id"] = json!("another-thread"),
        20 => item["run_id"] = json!("another-run"),
        21 => item["occurred_at"] = json!("2026-11-29T13:00:00Z"),
        22 => item["occurred_at"] = json!("2026-11-29T12:00:00.5-05:00"),
        23 => return line.replace(r#""args_delta":"#, r#""args_delta":"dup","args_delta":"#),
        24 => delta["part_delta_kind"] = json!("text"),
        25 => item["event"]["event_kind"] = json!("part_end"),
        26 => item["sequence"] = json!(1.5),
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// `stream` with `call` (lines of a root stream: a tool call's part start, argument deltas and end, say) moved
/// into the inline child run that `stream`'s first delegation starts, right after that delegation's start.
pub fn into_child_run(stream: &[String], call: &[String]) -> Vec<String> {
    let started = stream.iter().position(|line| line.contains(r#""action":"started""#)).expect("a delegation");
    let delegation: Value = serde_json::from_str(&stream[started]).expect("a JSON line");
    let child_run = delegation["event"]["payload"]["child_run_id"].as_str().expect("a child run").to_owned();
    let child_thread = stream
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|item| item["run_id"] == child_run.as_str())
        .map_or_else(|| "thread-child".to_owned(), |item| item["thread_id"].as_str().unwrap_or_default().to_owned());
    let mut lines = stream.to_vec();
    let moved = call.iter().map(|line| {
        let mut item: Value = serde_json::from_str(line).expect("a JSON line");
        item["run_id"] = json!(child_run);
        item["thread_id"] = json!(child_thread);
        item.to_string()
    });
    lines.splice(started + 1..started + 1, moved);
    lines
}

/// A JSON number as written (the workspace's `serde_json` keeps its literal).
fn number(literal: &str) -> Value {
    serde_json::from_str(literal).expect("a JSON number")
}

/// How many distinct changes [`mutate_carried_line`] makes.
pub const CARRIED_MUTATIONS: u64 = 35;

/// Change a line the observer carries through whole (a Harness lifecycle event, a tool-call part's start, a
/// function tool call) in one of [`CARRIED_MUTATIONS`] ways: spellings that are not canonical JSON, values of
/// other types, other kinds, repeated and unknown keys, other threads and runs.
pub fn mutate_carried_line(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let harness = item["event"].get("event_kind").is_none();
    // Where a change to the event's content goes: a Harness event's payload, or a Pydantic event's part.
    let body = if harness { "payload" } else { "part" };
    match choice {
        0 => item["event"][body]["note"] = json!("\u{e9}\n\"q\" \u{1} \\ \u{7f} \u{2028} 東京"),
        1 => return line.replacen(r#":"#, r#": "#, 3),
        2 => return line.replacen(r#","event":{"#, r#","event":{ "#, 1),
        3 => return insert_into_body(&item, body, r#""k":"a\/b","#),
        4 => item["event"][body]["note"] = json!(1e16),
        5 => item["event"][body]["note"] = json!([0.5, 1.5e-7]),
        6 => item["event"][body]["note"] = json!(12345678901234567890u64),
        7 => item["event"][body]["note"] = json!(-12),
        8 => return insert_into_body(&item, body, r#""k":"\u00E9","#),
        9 => return insert_into_body(&item, body, r#""k":"\u0041\u001f","#),
        10 => return insert_into_body(&item, body, r#""k":1,"k":2,"#),
        11 => item["event"]["schema_version"] = json!(2),
        12 => drop(item["event"].as_object_mut().and_then(|e| e.shift_remove("schema_version"))),
        13 => item["event"]["payload"] = json!("not an object"),
        14 => item["event"]["payload"]["request_index"] = json!(-1),
        15 => item["event"]["payload"]["request_index"] = json!("7"),
        16 => item["event"]["payload"]["request_index"] = json!(1.0),
        17 => item["event"]["payload"]["type"] = json!("run_started"),
        18 => item["event"]["payload"]["type"] = json!(5),
        19 => item["event"]["kind"] = json!("context"),
        20 => item["event"]["extra"] = json!({"nested": [1, null, true]}),
        21 => item["event"]["part"]["part_kind"] = json!("builtin-tool-call"),
        22 => item["event"]["part"]["tool_call_id"] = json!(7),
        23 => drop(item["event"]["part"].as_object_mut().and_then(|p| p.shift_remove("tool_name"))),
        24 => item["event"]["index"] = json!(3),
        25 => item["thread_id"] = json!("another-thread"),
        26 => item["run_id"] = json!("another-run"),
        27 => item["occurred_at"] = json!("2026-11-29T12:00:00.5-05:00"),
        28 => item["event"]["payload"]["request_index"] = json!(9),
        29 => item["event"]["schema_version"] = json!("2"),
        // A usage report is carried like a lifecycle event, whatever its payload's type says.
        30 => item["event"]["kind"] = json!("usage"),
        31 => {
            item["event"]["kind"] = json!("usage");
            item["event"]["payload"]["type"] = json!("model_request_started");
            item["event"]["payload"]["request_index"] = json!(4);
        }
        // Indexes Python reads as an `int` that 64 bits do not hold, or spelled `-0`.
        32 => item["event"]["payload"]["request_index"] = number("18446744073709551616"),
        33 => item["event"]["payload"]["request_index"] = number("-0"),
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is one [`mutate_carried_line`] changes: a Harness lifecycle event, a part start or a function
/// tool call.
pub fn is_carried_line(line: &str) -> bool {
    line.contains(r#""kind":"lifecycle""#)
        || line.contains(r#""kind":"usage""#)
        || line.contains(r#""event_kind":"part_start""#)
        || line.contains(r#""event_kind":"function_tool_call""#)
}

/// `item`'s JSON with `fields` (raw JSON text ending in a comma) first in the event's `body` object.
fn insert_into_body(item: &Value, body: &str, fields: &str) -> String {
    let text = item.to_string();
    let Some(found) = text.find(&format!(r#""{body}":{{"#)) else { return text };
    let at = found + body.len() + 4;
    format!("{}{fields}{}", &text[..at], &text[at..])
}

/// How many distinct changes [`mutate_delegation`] makes.
pub const DELEGATION_MUTATIONS: u64 = 26;

/// Change an inline delegation line in one of [`DELEGATION_MUTATIONS`] ways: every rule of the payload's model
/// (required fields, lengths counted in characters, the invocation pattern, types, unknown fields), the other
/// action, other and nested parents, other children, spellings that are not canonical, other kinds, runs and
/// threads.
pub fn mutate_delegation(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let own_run = item["run_id"].clone();
    let payload = &mut item["event"]["payload"];
    let drop_field = |payload: &mut Value, key: &str| drop(payload.as_object_mut().and_then(|p| p.shift_remove(key)));
    match choice {
        0 => {
            payload["action"] = json!("failed");
            payload["status"] = json!("timed_out");
        }
        1 => payload["child_run_id"] = Value::Null,
        2 => drop_field(payload, "child_run_id"),
        3 => payload["invocation_id"] = json!("call-7"),
        4 => payload["invocation_id"] = json!(format!("delegation-{}", "a".repeat(118))),
        5 => payload["subagent"] = json!(""),
        6 => payload["subagent"] = json!("h".repeat(129)),
        7 => payload["parent_tool_call_id"] = Value::Null,
        8 => drop_field(payload, "parent_tool_call_id"),
        9 => payload["parent_run_id"] = json!("run-parent-child"),
        10 => payload["note"] = json!(1),
        11 => payload["status"] = json!(5),
        12 => payload["type"] = json!("other_delegation"),
        13 => drop_field(payload, "type"),
        14 => item["event"]["kind"] = json!("context"),
        15 => return line.replacen(r#""subagent":""#, r#""subagent":"\/"#, 1),
        16 => payload["subagent"] = json!("助手 é"),
        17 => payload["subagent"] = json!("助".repeat(128)),
        18 => payload["child_run_id"] = own_run,
        19 => payload["child_run_id"] = json!("run-child-unknown"),
        20 => {
            let action = if payload["action"] == "started" { "completed" } else { "started" };
            payload["action"] = json!(action);
        }
        21 => return line.replacen(r#""action":"#, r#""action":"started","action":"#, 1),
        22 => item["run_id"] = json!("another-run"),
        23 => item["thread_id"] = json!("another-thread"),
        24 => payload["child_run_id"] = json!(""),
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is an inline delegation.
pub fn is_delegation_line(line: &str) -> bool {
    line.contains(r#""type":"inline_delegation""#)
}

/// How many distinct changes [`mutate_text_part`] makes.
pub const TEXT_PART_MUTATIONS: u64 = 21;

/// Change a text part's start or end line in one of [`TEXT_PART_MUTATIONS`] ways: its text, its own id, its
/// kind (thinking, with and without signatures) and index, unknown and repeated keys, value types, threads and runs.
pub fn mutate_text_part(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let part = &mut item["event"]["part"];
    match choice {
        0 => part["content"] = json!("Hello \u{e9}\n\"q\""),
        1 => part["id"] = json!("msg-own"),
        2 => part["id"] = json!(""),
        3 => part["id"] = json!(5),
        4 => part["content"] = Value::Null,
        5 => part["part_kind"] = json!("thinking"),
        6 => part["extra"] = json!({"deep": [1, 2.5, null]}),
        7 => item["event"]["index"] = json!(4),
        8 => item["event"]["index"] = json!(-1),
        9 => item["event"]["extra"] = json!("x"),
        10 => return line.replace(r#""content":"#, r#""content":"a","content":"#),
        11 => return line.replace(r#""part":{"#, r#""part": { "#),
        12 => item["thread_id"] = json!("another-thread"),
        13 => item["run_id"] = json!("another-run"),
        14 => drop(item["event"]["part"].as_object_mut().and_then(|p| p.shift_remove("content"))),
        // Thinking parts: a signature (sent once, at the start or else the end), one of another type, an own id
        // (not read: reasoning ids are positional) and an empty text.
        15 => {
            part["part_kind"] = json!("thinking");
            part["signature"] = json!("sig-\u{e9}");
        }
        16 => {
            part["part_kind"] = json!("thinking");
            part["signature"] = json!(5);
        }
        17 => {
            part["part_kind"] = json!("thinking");
            part["id"] = json!("rs_own");
        }
        18 => {
            part["part_kind"] = json!("thinking");
            part["content"] = json!("");
            part["signature"] = json!("");
        }
        19 => {
            part["part_kind"] = json!("thinking");
            part["id"] = json!(5);
        }
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is a text or thinking part's start or end.
pub fn is_text_part_line(line: &str) -> bool {
    (line.contains(r#""event_kind":"part_start""#) || line.contains(r#""event_kind":"part_end""#))
        && (line.contains(r#""part_kind":"text""#) || line.contains(r#""part_kind":"thinking""#))
}

/// How many distinct changes [`mutate_tool_call_end`] makes.
pub const TOOL_CALL_END_MUTATIONS: u64 = 15;

/// Change a tool-call part's end line in one of [`TOOL_CALL_END_MUTATIONS`] ways: arguments as an object, null,
/// absent, empty or needing escapes; the tool's name and call id missing, of another type or another call's;
/// another kind or index; repeated keys.
pub fn mutate_tool_call_end(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let part = &mut item["event"]["part"];
    match choice {
        0 => part["args"] = json!({"q": "rust", "a": [1, 2.5]}),
        1 => part["args"] = Value::Null,
        2 => drop(part.as_object_mut().and_then(|p| p.shift_remove("args"))),
        3 => part["args"] = json!(""),
        4 => part["args"] = json!("{\"q\": \"\u{e9}\\n\"}"),
        5 => drop(part.as_object_mut().and_then(|p| p.shift_remove("tool_name"))),
        6 => part["tool_name"] = json!(7),
        7 => part["tool_call_id"] = json!("call_other"),
        8 => drop(part.as_object_mut().and_then(|p| p.shift_remove("tool_call_id"))),
        9 => part["part_kind"] = json!("builtin-tool-call"),
        10 => item["event"]["index"] = json!(2),
        11 => return line.replace(r#""tool_name":"#, r#""tool_name":"x","tool_name":"#),
        12 => item["run_id"] = json!("another-run"),
        13 => part["tool_name"] = json!("another_tool"),
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is a tool-call part's end.
pub fn is_tool_call_end_line(line: &str) -> bool {
    line.contains(r#""event_kind":"part_end""#) && line.contains(r#""part_kind":"tool-call""#)
}

/// How many distinct changes [`mutate_tool_return`] makes.
pub const TOOL_RETURN_MUTATIONS: u64 = 21;

/// Change a tool's return line in one of [`TOOL_RETURN_MUTATIONS`] ways: content as text, as native media, nested
/// or with floats (one Python reads as infinite); metadata (a lowered result's marker among it); every other
/// outcome, null, success spelled out and one of another type; a retry; the call id missing or of another type; the
/// other result kind; unknown and repeated keys; another run.
pub fn mutate_tool_return(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let part = &mut item["event"]["part"];
    match choice {
        0 => part["content"] = json!("plain text \u{e9}\n"),
        1 => part["content"] = json!([{"kind": "image-url", "url": "https://example.com/a.png"}, "caption"]),
        2 => part["content"] = json!({"nested": {"list": [1, 2.5, 1e16, null, true]}, "b": "x"}),
        3 => part["metadata"] = json!({"a13n.tool-content": {"result_index": 0}}),
        4 => part["metadata"] = json!({"note": 1}),
        5 => part["outcome"] = json!("failed"),
        6 => part["outcome"] = json!("denied"),
        7 => part["outcome"] = Value::Null,
        8 => part["part_kind"] = json!("retry-prompt"),
        9 => drop(part.as_object_mut().and_then(|p| p.shift_remove("tool_call_id"))),
        10 => part["tool_call_id"] = json!(3),
        11 => item["event"]["event_kind"] = json!("output_tool_result"),
        12 => item["event"]["extra"] = json!({"k": [1]}),
        13 => return line.replace(r#""tool_call_id":"#, r#""tool_call_id":"dup","tool_call_id":"#),
        14 => item["run_id"] = json!("another-run"),
        15 => drop(part.as_object_mut().and_then(|p| p.shift_remove("outcome"))),
        16 => part["content"] = json!("x".repeat(40_000)),
        17 => part["outcome"] = json!(5),
        18 => part["outcome"] = json!("success"),
        19 => {
            part["content"] = json!({"big": "INFINITE"});
            return item.to_string().replace(r#""INFINITE""#, "1e400");
        }
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is a tool's return.
pub fn is_tool_return_line(line: &str) -> bool {
    line.contains(r#""event_kind":"function_tool_result""#) || line.contains(r#""event_kind":"output_tool_result""#)
}

/// How many distinct changes [`mutate_unpresented_result`] makes.
pub const UNPRESENTED_RESULT_MUTATIONS: u64 = 4 * 20;

/// Make a tool's return one the observer does not present, as the Harness writes one (outcome `retried`,
/// `failed`, `denied` or `interrupted`, by `choice % 4`, and its content text), then change it in one of 20 ways
/// (`choice / 4`): none; content an object, a
/// list with native media, null, text with escapes, longer than the carried lane's bound; metadata of its own or a
/// lowered result's marker; the event's own content set or missing; a retry prompt (content a list or text); the
/// other result kind (its content set or not); a call no part opened; an outcome of another type; a part of
/// another kind; a retry prompt without content, or without its call's id; an unknown key.
pub fn mutate_unpresented_result(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let event = &mut item["event"];
    event["part"]["outcome"] = json!(["retried", "failed", "denied", "interrupted"][(choice % 4) as usize]);
    event["part"]["content"] = json!("the tool failed: try again");
    let part = &mut event["part"];
    match choice / 4 {
        0 => {}
        1 => part["content"] = json!({"error": "bad", "n": [1, 2.5, null]}),
        2 => part["content"] = json!(["see", {"kind": "image-url", "url": "https://example.com/a.png"}]),
        3 => part["content"] = Value::Null,
        4 => part["content"] = json!("\u{e9} \"quoted\" \\ \u{2028} \u{1f600}\n"),
        5 => part["content"] = json!("x".repeat(9_000)),
        6 => part["metadata"] = json!({"note": 1}),
        7 => part["metadata"] = json!({"a13n.tool-content": {"result_index": 0}}),
        8 => event["content"] = json!("what the model sees"),
        9 => drop(event.as_object_mut().and_then(|e| e.shift_remove("content"))),
        10 => {
            part["part_kind"] = json!("retry-prompt");
            part["content"] = json!([{"type": "value_error", "loc": ["a"], "msg": "bad", "input": 1}]);
        }
        11 => part["part_kind"] = json!("retry-prompt"),
        12 => event["event_kind"] = json!("output_tool_result"),
        13 => {
            event["event_kind"] = json!("output_tool_result");
            event["content"] = json!("x");
        }
        14 => part["tool_call_id"] = json!("no-such-call"),
        15 => part["outcome"] = json!(7),
        16 => part["part_kind"] = json!("text"),
        17 => {
            part["part_kind"] = json!("retry-prompt");
            part.as_object_mut().and_then(|p| p.shift_remove("content"));
        }
        18 => {
            part["part_kind"] = json!("retry-prompt");
            part.as_object_mut().and_then(|p| p.shift_remove("tool_call_id"));
        }
        _ => event["extra"] = json!({"k": [1]}),
    }
    item.to_string()
}

/// `stream` with text inputs after its first line, as a Harness writes them: a user's message, a context block with
/// metadata of its own, and steering. Their sequences are past the stream's, so their messages are their own.
pub fn with_inputs(stream: &[String]) -> Vec<String> {
    let first: Value = serde_json::from_str(&stream[0]).expect("a JSON line");
    let input = |sequence: u64, source: &str, content: &str, metadata: Value| {
        let event = json!({
            "kind": "a13n.input.text", "capability_id": "a13n.input", "tool_call_id": null, "tool_name": null,
            "event_kind": "capability", "input_id": format!("input-{sequence}"), "source": source,
            "content": content, "metadata": metadata,
        });
        json!({
            "thread_id": first["thread_id"], "run_id": first["run_id"], "sequence": sequence,
            "occurred_at": first["occurred_at"], "event": event,
        })
        .to_string()
    };
    let plain = json!({"display": true, "source_id": null, "media": false});
    let context = json!({"display": false, "source_id": "a13n.environment-mounts", "media": false, "note": [1, "n"]});
    let inputs = [
        input(1_000_001, "user", "Hello there \u{e9} \"quoted\"\n", plain.clone()),
        input(1_000_002, "context", "Current mounts:\n{\"mounts\":[]}", context),
        input(1_000_003, "steering", "Stop and summarise", plain),
    ];
    let mut lines = stream.to_vec();
    lines.splice(1..1, inputs);
    lines
}

/// How many distinct changes [`mutate_input`] makes.
pub const INPUT_MUTATIONS: u64 = 34;

/// Change a text input line in one of [`INPUT_MUTATIONS`] ways: other sources, contents and metadata (of other
/// types, not canonical JSON, out of order, with values the model reads as booleans or refuses), fields missing, of
/// other types or refused by the model, other kinds, runs and sequences, repeated and unknown keys, a line too long
/// for the lane.
pub fn mutate_input(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).expect("a JSON line");
    let event = &mut item["event"];
    match choice {
        0 => event["content"] = json!("plain \u{e9}\n\"q\" \u{2028} \u{1} \u{7f} \u{1F680}"),
        1 => event["content"] = json!(3),
        2 => event["source"] = json!("steering"),
        3 => event["source"] = json!("context"),
        4 => event["source"] = json!(7),
        5 => event["metadata"] = Value::Null,
        6 => event["metadata"] = json!({"display": false, "source_id": "s", "media": false, "extra": [1, {"a": null}]}),
        7 => return line.replace(r#""media":false"#, r#""media":false,"big":18446744073709551616"#),
        8 => event["metadata"] = json!({"display": true, "source_id": null, "media": false, "x": 1.5}),
        9 => event["metadata"] = json!("text"),
        10 => drop(event.as_object_mut().and_then(|e| e.shift_remove("metadata"))),
        11 => event["input_id"] = Value::Null,
        12 => event["input_id"] = json!(5),
        13 => event["kind"] = json!("a13n.input.media"),
        14 => item["run_id"] = json!("another-run"),
        15 => event["content"] = json!("x".repeat(40_000)),
        16 => event["content"] = json!("y".repeat(9_000)),
        17 => item["sequence"] = json!(-1),
        18 => return line.replace(r#""source":"#, r#""source":"dup","source":"#),
        19 => event["extra"] = json!(1),
        20 => event["metadata"] = json!({"media": false, "source_id": null, "display": true}),
        21 => item["occurred_at"] = json!("2026-11-29T12:00:00.5-05:30"),
        22 => return line.replace(r#""content":""#, r#""content":"\u00e9\/"#),
        23 => event["metadata"] = json!({"display": true, "source_id": null, "media": false, "k": "\u{2028}"}),
        24 => return line.replace(r#""display":"#, r#""display":-0,"was":"#),
        25 => event["source"] = json!("bogus"),
        26 => event["metadata"]["display"] = Value::Null,
        27 => event["metadata"]["display"] = json!("YES"),
        28 => event["metadata"]["media"] = json!(2),
        29 => event["metadata"]["media"] = json!("x"),
        30 => event["metadata"]["source_id"] = json!(5),
        31 => event["capability_id"] = json!(3),
        32 => event["tool_name"] = json!({"n": 1}),
        33 => event["metadata"]["display"] = json!(1),
        _ => return format!("{line} x"),
    }
    item.to_string()
}

/// Whether `line` is a text input.
pub fn is_input_line(line: &str) -> bool {
    line.contains(r#""kind":"a13n.input.text""#)
}

/// A family of line changes for the lane tests: the lines it applies to and how it changes them.
pub struct Mutations {
    /// What the family changes, for messages.
    pub name: &'static str,
    /// How many distinct changes it makes; `count` itself changes nothing.
    pub count: u64,
    /// Whether it applies to a line.
    pub applies: fn(&str) -> bool,
    /// Change a line in the given way.
    pub mutate: fn(&str, u64) -> String,
}

/// Argument deltas of tool calls.
pub const ARGUMENT_DELTAS: Mutations = Mutations {
    name: "argument delta",
    count: ARGUMENT_MUTATIONS,
    applies: |line| line.contains("args_delta"),
    mutate: mutate_argument_delta,
};
/// Lines carried through whole.
pub const CARRIED_LINES: Mutations =
    Mutations { name: "carried", count: CARRIED_MUTATIONS, applies: is_carried_line, mutate: mutate_carried_line };
/// Inline delegations.
pub const DELEGATIONS: Mutations = Mutations {
    name: "delegation",
    count: DELEGATION_MUTATIONS,
    applies: is_delegation_line,
    mutate: mutate_delegation,
};
/// Text parts' starts and ends.
pub const TEXT_PARTS: Mutations =
    Mutations { name: "text part", count: TEXT_PART_MUTATIONS, applies: is_text_part_line, mutate: mutate_text_part };
/// Tool calls' ends.
pub const TOOL_CALL_ENDS: Mutations = Mutations {
    name: "tool call end",
    count: TOOL_CALL_END_MUTATIONS,
    applies: is_tool_call_end_line,
    mutate: mutate_tool_call_end,
};
/// Tools' returns.
pub const TOOL_RETURNS: Mutations = Mutations {
    name: "tool return",
    count: TOOL_RETURN_MUTATIONS,
    applies: is_tool_return_line,
    mutate: mutate_tool_return,
};

/// Tools' returns made ones the observer does not present.
pub const UNPRESENTED_RESULTS: Mutations = Mutations {
    name: "unpresented result",
    count: UNPRESENTED_RESULT_MUTATIONS,
    applies: is_tool_return_line,
    mutate: mutate_unpresented_result,
};

/// Text inputs.
pub const INPUTS: Mutations =
    Mutations { name: "input", count: INPUT_MUTATIONS, applies: is_input_line, mutate: mutate_input };

impl Mutations {
    /// `lines` with change `choice` made to each line the family applies to and `pick` (given the line's index)
    /// selects; with `choice == count`, `lines` as they are.
    pub fn apply(&self, lines: &[String], choice: u64, mut pick: impl FnMut(usize) -> bool) -> Vec<String> {
        let change = |(n, line): (usize, &String)| {
            if choice < self.count && (self.applies)(line) && pick(n) {
                (self.mutate)(line, choice)
            } else {
                line.clone()
            }
        };
        lines.iter().enumerate().map(change).collect()
    }
}

/// How many spacings [`spaced`] makes.
pub const SPACINGS: u64 = 4;

/// `line` (compact JSON) with whitespace between its tokens, in one of [`SPACINGS`] ways: `json.dumps`' default
/// separators (`", "`, `": "`), spaces inside braces and brackets too, tabs and a line feed beside the colons and
/// commas, and a space before each comma and colon with the line padded at both ends. Strings are not touched.
pub fn spaced(line: &str, style: u64) -> String {
    let mut out = String::with_capacity(line.len() * 5 / 4);
    if style == 3 {
        out.push(' ');
    }
    let (mut in_string, mut escaped) = (false, false);
    for ch in line.chars() {
        if in_string {
            out.push(ch);
            (in_string, escaped) = match (escaped, ch) {
                (true, _) => (true, false),
                (false, '\\') => (true, true),
                (false, '"') => (false, false),
                _ => (true, false),
            };
            continue;
        }
        in_string = ch == '"';
        match (style, ch) {
            (0, ':' | ',') | (1, ':' | ',') => {
                out.push(ch);
                out.push(' ');
            }
            (1, '{' | '[') => {
                out.push(ch);
                out.push(' ');
            }
            (1, '}' | ']') => {
                out.push(' ');
                out.push(ch);
            }
            (2, ':') => out.push_str(":\t"),
            (2, ',') => out.push_str(",\n "),
            (3, ':' | ',') => {
                out.push(' ');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    if style == 3 {
        out.push_str(" \t");
    }
    out
}

/// How many layouts [`relaid`] makes.
pub const LAYOUTS: u64 = 4;

/// `line` (a JSON object) with its keys in another order, in one of [`LAYOUTS`] ways: every object's keys
/// reversed; sorted (`json.dumps(sort_keys=True)`); sorted and spaced as `json.dumps` spaces them by default; and
/// every `null` member left out with an unknown key put first in the event. Values are written again by
/// `serde_json`, so a number or an escape may be spelled otherwise than in `line`; a line that is not JSON is
/// returned as it is.
pub fn relaid(line: &str, style: u64) -> String {
    let Ok(mut item) = serde_json::from_str::<Value>(line) else { return line.to_owned() };
    match style {
        0 => reorder(&mut item, &|keys| keys.reverse()),
        1 | 2 => reorder(&mut item, &|keys| keys.sort()),
        _ => {
            drop_nulls(&mut item);
            if let Some(Value::Object(event)) = item.get_mut("event") {
                let taken = std::mem::take(event);
                event.insert("x_unknown".into(), json!([1, {"a": null}]));
                event.extend(taken);
            }
        }
    }
    let text = item.to_string();
    if style == 2 {
        spaced(&text, 0)
    } else {
        text
    }
}

/// Every object in `value` with its keys put in the order `order` leaves them.
fn reorder(value: &mut Value, order: &dyn Fn(&mut Vec<String>)) {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<String> = object.keys().cloned().collect();
            order(&mut keys);
            let mut taken = std::mem::take(object);
            for key in keys {
                let mut member = taken.shift_remove(&key).expect("a key of the object");
                reorder(&mut member, order);
                object.insert(key, member);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| reorder(item, order)),
        _ => {}
    }
}

/// `value` without any object member whose value is `null`.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.retain(|_, member| !member.is_null());
            object.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
