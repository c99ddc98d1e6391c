//! Shared test support for the workspace: where the conformance corpora are, loading their streams, and
//! deterministic generators of valid Harness streams for property tests.

pub mod host;
pub mod lanes;

use std::path::{Path, PathBuf};

use a13n_stream_protocol::{DisplayFold, FoldError, HarnessAguiStreamObserver, ObserveError, Observed, SourceItem};
use serde_json::{json, Value};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap_or_else(|_| PathBuf::from("../.."))
}

/// The repository's own recorded cases (always present).
pub fn own_cases() -> PathBuf {
    workspace_root().join("tests/cases")
}

/// The shared public corpus beside the repository, when this checkout has it (`A13N_CONFORMANCE` overrides).
pub fn shared_cases() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("A13N_CONFORMANCE") {
        return Some(PathBuf::from(path));
    }
    let path = workspace_root().join("../shared/conformance/cases");
    path.is_dir().then_some(path)
}

/// Every case directory with a `source.jsonl`, from the repository and (when present) the shared corpus.
pub fn source_cases() -> Vec<PathBuf> {
    let mut roots = vec![own_cases()];
    roots.extend(shared_cases());
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.path().join("source.jsonl").is_file() {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// A case's options (`case.json`).
pub fn case_options(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("case.json")).unwrap_or_else(|_| "{}".into());
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A case's source items, decoded.
pub fn load_source(dir: &Path) -> Vec<SourceItem> {
    let text = std::fs::read_to_string(dir.join("source.jsonl")).expect("source.jsonl is readable");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(index, line)| {
            SourceItem::from_json(line).unwrap_or_else(|e| panic!("{}:{}: {e}", dir.display(), index + 1))
        })
        .collect()
}

/// A small deterministic random source (SplitMix64), so generated streams need no extra dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }
}

const WORDS: [&str; 12] =
    ["the", "agent", "streams", "résumé", "東京", "🚀", "\"quoted\"", "back\\slash", "tab\t", "line\n", "ok", "x"];

/// Builds Harness source items with a deterministic clock.
#[derive(Debug)]
pub struct StreamBuilder {
    /// The root thread.
    pub thread_id: String,
    /// The root run.
    pub run_id: String,
    sequence: u64,
    micros: i64,
    items: Vec<String>,
}

impl StreamBuilder {
    /// A builder for one root run.
    pub fn new(thread_id: &str, run_id: &str) -> StreamBuilder {
        StreamBuilder {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            sequence: 0,
            micros: 1_795_953_600_123_456,
            items: Vec::new(),
        }
    }

    fn time(&self) -> String {
        let seconds = self.micros / 1_000_000;
        let fraction = self.micros % 1_000_000;
        let day_seconds = seconds % 86_400;
        // 2026-11-29 is day 20_786 after the epoch; the generated streams stay within a day.
        let extra_days = seconds / 86_400 - 20_786;
        format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{fraction:06}+00:00",
            29 + extra_days,
            day_seconds / 3600,
            day_seconds / 60 % 60,
            day_seconds % 60
        )
    }

    /// Add an event of `run_id` (the root run when `None`).
    pub fn event(&mut self, event: Value, run: Option<(&str, &str)>) {
        self.micros += 1001;
        let (thread_id, run_id) = run.unwrap_or((&self.thread_id, &self.run_id));
        let item = json!({"thread_id": thread_id, "run_id": run_id, "sequence": self.sequence, "occurred_at": self.time(), "event": event});
        self.items.push(item.to_string());
        self.sequence += 1;
    }

    /// Add the terminal result of the root run.
    pub fn result(&mut self, result: Value) {
        self.micros += 1001;
        let item = json!({"thread_id": self.thread_id, "run_id": self.run_id, "sequence": self.sequence, "occurred_at": self.time(), "result": result});
        self.items.push(item.to_string());
        self.sequence += 1;
    }

    /// The source lines.
    pub fn lines(&self) -> &[String] {
        &self.items
    }

    /// The decoded items.
    pub fn items(&self) -> Vec<SourceItem> {
        self.items.iter().map(|line| SourceItem::from_json(line).expect("generated items decode")).collect()
    }
}

/// A random sentence.
pub fn sentence(rng: &mut Rng, words: usize) -> String {
    (0..words).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

/// Split a text into random pieces of 1 to `max` characters.
pub fn chunks(rng: &mut Rng, text: &str, max: u64) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let n = 1 + rng.below(max) as usize;
        out.push(chars[at..(at + n).min(chars.len())].iter().collect());
        at += n;
    }
    out
}

/// A random valid-shaped Harness stream: lifecycle, inputs, text and thinking parts streamed in random pieces,
/// streamed tool calls with results (some failing), an inline child run, memory evidence, and a terminal result.
pub fn random_stream(seed: u64) -> Vec<SourceItem> {
    let mut rng = Rng::new(seed);
    let mut s = StreamBuilder::new("thread-g", &format!("run-g{seed}"));
    s.event(json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "run_started"}}), None);
    let requests = 1 + rng.below(3);
    for request in 0..requests {
        s.event(json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "model_request_started", "request_id": format!("model-request-{}", request + 1), "request_index": request, "message_count": 1}}), None);
        if rng.below(3) == 0 {
            s.event(json!({"schema_version": "1", "kind": "context", "payload": {"type": "memory_recall", "memories": [{"memory": "notes", "recall": "recalled", "records": [{"id": format!("r{request}"), "sha256": "ab"}]}]}}), None);
        }
        if rng.below(2) == 0 {
            s.event(json!({"kind": "a13n.input.text", "capability_id": null, "tool_call_id": null, "tool_name": null, "event_kind": "capability", "input_id": format!("in-{request}"), "source": "user", "content": sentence(&mut rng, 4), "metadata": {"display": true, "source_id": null, "media": false}}), None);
        }
        let mut index = 0;
        if rng.below(2) == 0 {
            let words = 1 + rng.below(8) as usize;
            let thought = sentence(&mut rng, words);
            s.event(json!({"index": index, "part": {"content": "", "id": null, "signature": null, "provider_name": null, "provider_details": null, "part_kind": "thinking"}, "previous_part_kind": null, "event_kind": "part_start"}), None);
            for piece in chunks(&mut rng, &thought, 6) {
                s.event(json!({"index": index, "delta": {"content_delta": piece, "signature_delta": null, "provider_name": null, "provider_details": null, "part_delta_kind": "thinking"}, "event_kind": "part_delta"}), None);
            }
            s.event(json!({"index": index, "part": {"content": thought, "id": null, "signature": "sig", "provider_name": null, "provider_details": null, "part_kind": "thinking"}, "next_part_kind": null, "event_kind": "part_end"}), None);
            index += 1;
        }
        let words = 1 + rng.below(20) as usize;
        let text = sentence(&mut rng, words);
        let pieces = chunks(&mut rng, &text, 7);
        for (n, piece) in pieces.iter().enumerate() {
            if n == 0 {
                s.event(json!({"index": index, "part": {"content": piece, "id": null, "provider_name": null, "provider_details": null, "citations": null, "part_kind": "text"}, "previous_part_kind": null, "event_kind": "part_start"}), None);
            } else {
                s.event(json!({"index": index, "delta": {"content_delta": piece, "provider_name": null, "provider_details": null, "citations_delta": null, "part_delta_kind": "text"}, "event_kind": "part_delta"}), None);
            }
        }
        if rng.below(4) != 0 {
            s.event(json!({"index": index, "part": {"content": text, "id": null, "provider_name": null, "provider_details": null, "citations": null, "part_kind": "text"}, "next_part_kind": null, "event_kind": "part_end"}), None);
        }
        index += 1;
        for call in 0..rng.below(3) {
            let call_id = format!("call-{request}-{call}");
            let args = json!({"q": sentence(&mut rng, 2), "n": rng.below(100), "w": 0.25}).to_string();
            let pieces = chunks(&mut rng, &args, 9);
            s.event(json!({"index": index, "part": {"tool_name": "search", "args": pieces[0], "tool_call_id": call_id, "tool_kind": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "tool-call"}, "previous_part_kind": null, "event_kind": "part_start"}), None);
            for piece in &pieces[1..] {
                s.event(json!({"index": index, "delta": {"tool_name_delta": null, "args_delta": piece, "tool_call_id": call_id, "provider_name": null, "provider_details": null, "part_delta_kind": "tool_call"}, "event_kind": "part_delta"}), None);
            }
            s.event(json!({"index": index, "part": {"tool_name": "search", "args": args, "tool_call_id": call_id, "tool_kind": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "tool-call"}, "next_part_kind": null, "event_kind": "part_end"}), None);
            let outcome = if rng.below(4) == 0 { "failed" } else { "success" };
            s.event(json!({"part": {"tool_name": "search", "content": {"hits": [sentence(&mut rng, 2)], "score": 0.5}, "tool_call_id": call_id, "tool_kind": null, "metadata": null, "timestamp": "2026-11-29T18:05:40.919206Z", "outcome": outcome, "retry": null, "part_kind": "tool-return"}, "content": null, "event_kind": "function_tool_result"}), None);
            index += 1;
        }
    }
    if rng.below(2) == 0 {
        let child = format!("run-child{seed}");
        let base = json!({"type": "inline_delegation", "child_instance_id": "inst", "subagent": "helper", "status": "running", "parent_run_id": s.run_id, "parent_agent_instance_id": "agent", "invocation_id": "delegation-1", "parent_tool_call_id": "call-d", "child_run_id": child});
        let mut started = base.clone();
        started["action"] = "started".into();
        s.event(json!({"schema_version": "1", "kind": "delegation", "payload": started}), None);
        let child_run = (String::from("thread-child"), child.clone());
        let said = sentence(&mut rng, 6);
        for piece in chunks(&mut rng, &said, 5) {
            s.event(json!({"index": 0, "delta": {"content_delta": piece, "provider_name": null, "provider_details": null, "citations_delta": null, "part_delta_kind": "text"}, "event_kind": "part_delta"}), Some((&child_run.0, &child_run.1)));
        }
        let mut done = base;
        done["action"] = "completed".into();
        done["status"] = "completed".into();
        s.event(json!({"schema_version": "1", "kind": "delegation", "payload": done}), None);
    }
    if rng.below(5) != 0 {
        s.result(json!({"status": "completed", "output": "done", "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0, "details": {}}}));
    }
    s.items()
}

/// The AG-UI JSON path of `DisplayFold::fold_line`, spelled out: decode the line, take the observer's events as
/// objects (`events`), fold them with the source (`fold`), and append each observed entry's JSON and a newline.
/// The typed path and the fast lanes are checked against this.
pub fn fold_line_generally(fold: &mut DisplayFold, line: &str, out: &mut Vec<u8>) -> Result<usize, FoldError> {
    let item = SourceItem::from_json(line)?;
    let events = fold.events(&item)?;
    let observed = fold.fold(events, Some(&item))?;
    Observed::write_lines(&observed, out);
    Ok(observed.len())
}

/// `fold_source` on the decoded line (the observer's typed events folded as they are), its observed entries
/// written as `fold_line` writes them.
pub fn fold_source_line(fold: &mut DisplayFold, line: &str, out: &mut Vec<u8>) -> Result<usize, FoldError> {
    let item = SourceItem::from_json(line)?;
    let observed = fold.fold_source(&item)?;
    Observed::write_lines(&observed, out);
    Ok(observed.len())
}

/// The general path of `HarnessAguiStreamObserver::observe_line`, spelled out: decode the line, observe it, and
/// append each event's JSON and a newline. The observer's fast lanes are checked against this.
pub fn observe_line_generally(
    observer: &mut HarnessAguiStreamObserver,
    line: &str,
    out: &mut Vec<u8>,
) -> Result<usize, ObserveError> {
    let item = SourceItem::from_json(line)?;
    let events = observer.observe(&item)?;
    for event in &events {
        event.write_json(out);
        out.push(b'\n');
    }
    Ok(events.len())
}

/// A short complete run: started, one text part in three events, a completed result (5 lines).
pub fn hello_stream(thread_id: &str, run_id: &str) -> Vec<String> {
    text_stream(thread_id, run_id, 1)
}

/// A complete run with one text part of `deltas` content deltas (`deltas + 4` lines).
pub fn text_stream(thread_id: &str, run_id: &str, deltas: usize) -> Vec<String> {
    let mut s = StreamBuilder::new(thread_id, run_id);
    s.event(json!({"schema_version": "1", "kind": "lifecycle", "payload": {"type": "run_started"}}), None);
    s.event(json!({"index": 0, "part": {"content": "Hel", "id": null, "provider_name": null, "provider_details": null, "citations": null, "part_kind": "text"}, "previous_part_kind": null, "event_kind": "part_start"}), None);
    for _ in 0..deltas {
        s.event(json!({"index": 0, "delta": {"content_delta": "lo", "provider_name": null, "provider_details": null, "citations_delta": null, "part_delta_kind": "text"}, "event_kind": "part_delta"}), None);
    }
    let text = format!("Hel{}", "lo".repeat(deltas));
    s.event(json!({"index": 0, "part": {"content": text, "id": null, "provider_name": null, "provider_details": null, "citations": null, "part_kind": "text"}, "next_part_kind": null, "event_kind": "part_end"}), None);
    s.result(json!({"status": "completed", "output": text, "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0, "details": {}}}));
    s.lines().to_vec()
}

/// `value` with every float written one way. `serde_json` keeps each number's literal (so that integers of
/// any size stay exact), and two writers may spell one float differently (`2.5e-06`, `2.5e-6`); tests that
/// compare JSON from two writers compare it through this.
pub fn same_floats(value: Value) -> Value {
    match value {
        Value::Number(number) if number.as_str().bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
            number.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Number(number), Value::Number)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(same_floats).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(key, item)| (key, same_floats(item))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod float_tests {
    use super::*;

    #[test]
    fn floats_spelled_two_ways_compare_equal_and_integers_stay_exact() {
        let a: Value = serde_json::from_str(r#"{"x":2.5e-06,"n":18446744073709551616}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"x":2.5e-6,"n":18446744073709551616}"#).unwrap();
        assert_ne!(a, b);
        assert_eq!(same_floats(a.clone()), same_floats(b));
        assert_eq!(same_floats(a)["n"].to_string(), "18446744073709551616");
    }
}
