//! Inputs for the lane-equivalence tests: argument-delta lines changed in every way the fast lanes must notice,
//! and a stream whose inline child run streams a tool call.

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

/// `stream` with one tool call streamed by an inline child run: `call` (a tool-call part's start, argument
/// deltas and end, from a root stream) moved into the child that `stream`'s first delegation starts, right after
/// that delegation's start.
pub fn with_child_tool_call(stream: &[String], call: &[String]) -> Vec<String> {
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
