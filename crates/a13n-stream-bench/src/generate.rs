//! `a13n-stream bench`: deterministic synthetic Harness streams and the measurements of issue #4.
//!
//! Every stream is generated line by line from its kind and size alone, so a run here and a run of the Python
//! reference (`bench/compare_reference.py` reads the same lines via `a13n-stream bench --emit`) measure identical
//! input.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use a13n_stream_protocol::{ContentPolicy, DisplayFold, DisplayOptions, HarnessAguiStreamObserver};
use serde_json::Value;

/// The shapes of stream the benchmark generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// One long assistant message of text deltas.
    Text,
    /// Many short messages, one model request each.
    Short,
    /// Tool calls with streamed arguments, call events and results.
    Tools,
    /// Inline subagents whose text deltas are attributed to the child run.
    Subagents,
}

impl StreamKind {
    /// All kinds.
    pub const ALL: [StreamKind; 4] = [StreamKind::Text, StreamKind::Short, StreamKind::Tools, StreamKind::Subagents];

    /// The kind's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            StreamKind::Text => "text",
            StreamKind::Short => "short",
            StreamKind::Tools => "tools",
            StreamKind::Subagents => "subagents",
        }
    }

    /// Parse a kind name.
    pub fn parse(name: &str) -> Option<StreamKind> {
        StreamKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

const PIECES: [&str; 8] = ["The ", "agent ", "streams ", "tokens, ", "résumé ", "東京 ", "\"quoted\" ", "done.\n"];

/// Generates the lines of one stream, one at a time (constant memory).
#[derive(Debug)]
pub struct Generator {
    kind: StreamKind,
    total: u64,
    emitted: u64,
    micros: i64,
    /// Position within the repeating unit of the stream kind.
    step: u64,
    unit: u64,
    request: u64,
    line: String,
    run_id: String,
}

const THREAD: &str = "thread-bench";
const RUN: &str = "run-bench";

impl Generator {
    /// A generator of `total` source lines (at least 4).
    pub fn new(kind: StreamKind, total: u64) -> Generator {
        Generator::for_run(kind, total, RUN)
    }

    /// A generator whose root run is `run_id`.
    pub fn for_run(kind: StreamKind, total: u64, run_id: &str) -> Generator {
        Generator {
            kind,
            total: total.max(4),
            emitted: 0,
            micros: 1_795_953_600_000_000,
            step: 0,
            unit: 0,
            request: 0,
            line: String::with_capacity(512),
            run_id: run_id.to_owned(),
        }
    }

    fn occurred_at(&self) -> String {
        let seconds = self.micros / 1_000_000;
        let fraction = self.micros % 1_000_000;
        let day = seconds % 86_400;
        let date_day = 29 + (seconds / 86_400 - 20_786);
        format!("2026-11-{date_day:02}T{:02}:{:02}:{:02}.{fraction:06}+00:00", day / 3600, day / 60 % 60, day % 60)
    }

    fn push(&mut self, run: (&str, &str), body: &str) {
        self.line.clear();
        let (thread, run) = run;
        let at = self.occurred_at();
        let _ = write!(
            self.line,
            r#"{{"thread_id":"{thread}","run_id":"{run}","sequence":{},"occurred_at":"{at}",{body}}}"#,
            self.emitted
        );
    }

    fn event(&mut self, body: &str) {
        let body = format!(r#""event":{body}"#);
        let run = self.run_id.clone();
        self.push((THREAD, &run), &body);
    }

    fn child_event(&mut self, child: &str, body: &str) {
        let body = format!(r#""event":{body}"#);
        self.push(("thread-child", child), &body);
    }

    fn piece(&self) -> &'static str {
        PIECES[(self.emitted % PIECES.len() as u64) as usize]
    }

    /// The next line, or `None` after `total` lines.
    pub fn next_line(&mut self) -> Option<&str> {
        if self.emitted >= self.total {
            return None;
        }
        self.micros += 997;
        let index = self.emitted;
        if index == 0 {
            self.event(r#"{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}"#);
        } else if index == self.total - 1 {
            let body = r#""result":{"status":"completed","output":"done","usage":{"input_tokens":100,"output_tokens":50,"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}"#;
            let run = self.run_id.clone();
            self.push((THREAD, &run), body);
        } else {
            match self.kind {
                StreamKind::Text => self.text_line(index),
                StreamKind::Short => self.short_line(),
                StreamKind::Tools => self.tools_line(),
                StreamKind::Subagents => self.subagents_line(),
            }
        }
        self.emitted += 1;
        Some(&self.line)
    }

    fn request_started(&mut self) {
        self.request += 1;
        let body = format!(
            r#"{{"schema_version":"1","kind":"lifecycle","payload":{{"type":"model_request_started","request_id":"model-request-{}","request_index":{},"message_count":1}}}}"#,
            self.request,
            self.request - 1
        );
        self.event(&body);
    }

    fn text_delta(&self, index: u64) -> String {
        let piece = serde_json::to_string(self.piece()).unwrap_or_default();
        format!(
            r#"{{"index":{index},"delta":{{"content_delta":{piece},"provider_name":null,"provider_details":null,"citations_delta":null,"part_delta_kind":"text"}},"event_kind":"part_delta"}}"#
        )
    }

    fn text_line(&mut self, index: u64) {
        match index {
            1 => self.request_started(),
            2 => self.event(r#"{"index":0,"part":{"content":"","id":null,"provider_name":null,"provider_details":null,"citations":null,"part_kind":"text"},"previous_part_kind":null,"event_kind":"part_start"}"#),
            _ => {
                let body = self.text_delta(0);
                self.event(&body);
            }
        }
    }

    /// Units of 12 lines: request, start, 9 deltas, end.
    fn short_line(&mut self) {
        let step = self.step;
        self.step = (self.step + 1) % 12;
        match step {
            0 => self.request_started(),
            1 => self.event(r#"{"index":0,"part":{"content":"","id":null,"provider_name":null,"provider_details":null,"citations":null,"part_kind":"text"},"previous_part_kind":null,"event_kind":"part_start"}"#),
            11 => self.event(r#"{"index":0,"part":{"content":"A short reply.","id":null,"provider_name":null,"provider_details":null,"citations":null,"part_kind":"text"},"next_part_kind":null,"event_kind":"part_end"}"#),
            _ => {
                let body = self.text_delta(0);
                self.event(&body);
            }
        }
    }

    /// Units of 16 lines: request, tool-call start, 11 argument deltas, end, call event, result.
    fn tools_line(&mut self) {
        let step = self.step;
        self.step = (self.step + 1) % 16;
        if step == 0 {
            self.unit += 1;
        }
        let call = format!("call_{}", self.unit);
        match step {
            0 => self.request_started(),
            1 => {
                let body = format!(
                    r#"{{"index":0,"part":{{"tool_name":"search","args":"{{\"q\": \"","tool_call_id":"{call}","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"}},"previous_part_kind":null,"event_kind":"part_start"}}"#
                );
                self.event(&body);
            }
            13 => {
                let body = format!(
                    r#"{{"index":0,"part":{{"tool_name":"search","args":"{{\"q\": \"rust streams\"}}","tool_call_id":"{call}","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"}},"next_part_kind":null,"event_kind":"part_end"}}"#
                );
                self.event(&body);
            }
            14 => {
                let body = format!(
                    r#"{{"part":{{"tool_name":"search","args":"{{\"q\": \"rust streams\"}}","tool_call_id":"{call}","tool_kind":null,"id":null,"provider_name":null,"provider_details":null,"part_kind":"tool-call"}},"args_valid":true,"event_kind":"function_tool_call"}}"#
                );
                self.event(&body);
            }
            15 => {
                let body = format!(
                    r#"{{"part":{{"tool_name":"search","content":{{"hits":["a","b"],"score":0.5}},"tool_call_id":"{call}","tool_kind":null,"metadata":null,"timestamp":"2026-11-29T12:00:00Z","outcome":"success","retry":null,"part_kind":"tool-return"}},"content":null,"event_kind":"function_tool_result"}}"#
                );
                self.event(&body);
            }
            _ => {
                let body = format!(
                    r#"{{"index":0,"delta":{{"tool_name_delta":null,"args_delta":"ru","tool_call_id":"{call}","provider_name":null,"provider_details":null,"part_delta_kind":"tool_call"}},"event_kind":"part_delta"}}"#
                );
                self.event(&body);
            }
        }
    }

    /// Units of 12 lines: delegation started, 10 child text deltas, delegation completed.
    fn subagents_line(&mut self) {
        let step = self.step;
        self.step = (self.step + 1) % 12;
        if step == 0 {
            self.unit += 1;
        }
        let child = format!("run-child-{}", self.unit);
        let delegation = |action: &str, status: &str| {
            format!(
                r#"{{"schema_version":"1","kind":"delegation","payload":{{"type":"inline_delegation","invocation_id":"delegation-{}","action":"{action}","child_instance_id":"inst","subagent":"helper","status":"{status}","parent_run_id":"{}","parent_agent_instance_id":"agent","parent_tool_call_id":"call-d","child_run_id":"{child}"}}}}"#,
                self.unit, self.run_id
            )
        };
        match step {
            0 => {
                let body = delegation("started", "running");
                self.event(&body);
            }
            11 => {
                let body = delegation("completed", "completed");
                self.event(&body);
            }
            _ => {
                let body = self.text_delta(0);
                self.child_event(&child, &body);
            }
        }
    }
}

/// One measured figure.
#[derive(Clone, Debug)]
pub struct Figure {
    /// What was measured (`fold/text`, `export/4096`, …).
    pub name: String,
    /// Items processed (source lines, or display items for export and restore).
    pub items: u64,
    /// Wall-clock seconds of the measured run (the median of the repetitions).
    pub seconds: f64,
    /// An extra quantity (bytes of a checkpoint, peak memory), when the figure has one.
    pub bytes: Option<u64>,
}

impl Figure {
    /// Items per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.items as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// The figure as one JSON object.
    pub fn to_json(&self) -> Value {
        let mut value = serde_json::json!({
            "name": self.name, "items": self.items, "seconds": self.seconds, "items_per_second": self.rate(),
        });
        if let Some(bytes) = self.bytes {
            value["bytes"] = bytes.into();
        }
        value
    }
}

/// Generate a stream into memory.
pub fn lines(kind: StreamKind, total: u64) -> Vec<String> {
    let mut generator = Generator::new(kind, total);
    let mut out = Vec::with_capacity(total as usize);
    while let Some(line) = generator.next_line() {
        out.push(line.to_owned());
    }
    out
}

/// The floor: parse each line into a JSON value and serialize it back (into a reused buffer).
pub fn json_baseline(lines: &[String], out: &mut Vec<u8>) {
    for line in lines {
        out.clear();
        let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        let _ = serde_json::to_writer(&mut *out, &value);
        out.push(b'\n');
    }
}

/// Decode, observe and serialize the AG-UI events of every line.
pub fn observe(lines: &[String], out: &mut Vec<u8>) {
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    for line in lines {
        out.clear();
        let _ = observer.observe_line(line, out);
    }
}

/// Decode, convert, fold and serialize the observed lines of every line ([`DisplayFold::fold_line`]).
pub fn fold(lines: &[String], retain_content: bool, out: &mut Vec<u8>) -> DisplayFold {
    let mut fold = DisplayFold::with_options(
        RUN,
        DisplayOptions { content: ContentPolicy::new(false, retain_content), ..DisplayOptions::default() },
    );
    for line in lines {
        out.clear();
        // A rejected line appends nothing; the benchmark streams have none.
        let _ = fold.fold_line(line, out);
    }
    fold
}

/// Fold generated lines without holding the stream (the memory figure).
pub fn fold_streaming(kind: StreamKind, total: u64, retain_content: bool) -> DisplayFold {
    let mut generator = Generator::new(kind, total);
    let mut fold = DisplayFold::with_options(
        RUN,
        DisplayOptions { content: ContentPolicy::new(false, retain_content), ..DisplayOptions::default() },
    );
    let mut out = Vec::with_capacity(4096);
    while let Some(line) = generator.next_line() {
        out.clear();
        let _ = fold.fold_line(line, &mut out);
    }
    fold
}

/// A display with about `items` items (tool calls and their observations), for export and restore.
pub fn display_of(items: usize) -> DisplayFold {
    // A tools unit of 16 lines makes 3 items (the call, its streamed-argument observation, the lifecycle one).
    let lines = lines(StreamKind::Tools, (items as u64 * 16) / 3 + 2);
    let mut out = Vec::new();
    fold(&lines, false, &mut out)
}

/// The median time of `work`, after a warm-up, over at least `runs` runs.
pub fn time<T>(runs: usize, mut work: impl FnMut() -> T) -> Duration {
    // Warm up for a tenth of a second at least (caches, allocator, CPU clock), then take at least `runs` samples
    // and at least a third of a second of them, so that small streams give a stable median too.
    let warm_up = Instant::now();
    while warm_up.elapsed() < Duration::from_millis(100) {
        std::hint::black_box(work());
    }
    let mut timings: Vec<Duration> = Vec::with_capacity(runs.max(1));
    let sampling = Instant::now();
    while timings.len() < runs.max(1) || (sampling.elapsed() < Duration::from_millis(300) && timings.len() < 1000) {
        let start = Instant::now();
        std::hint::black_box(work());
        timings.push(start.elapsed());
    }
    timings.sort();
    timings[timings.len() / 2]
}

/// The time of `b` over the time of `a`, measured in pairs: each of `rounds` rounds times one run of each, back
/// to back, and the median of the rounds' ratios is returned. This machine's speed changes between and within
/// processes; a pair shares the speed of its moment, so the ratio holds where two separate medians would not.
pub fn paired_ratio<A, B>(rounds: usize, mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> f64 {
    std::hint::black_box(a());
    std::hint::black_box(b());
    let mut ratios: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(a());
            let first = start.elapsed().as_secs_f64();
            let start = Instant::now();
            std::hint::black_box(b());
            start.elapsed().as_secs_f64() / first.max(f64::MIN_POSITIVE)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// Export and restore figures for a display of `size` items.
pub fn checkpoint_figures(size: usize, runs: usize) -> Vec<Figure> {
    let fold = display_of(size);
    let count = fold.item_count() as u64;
    let json = fold.export_json();
    let export = time(runs, || fold.export_json());
    let restore = time(runs, || DisplayFold::restore_json(&json, false, None).expect("own checkpoint restores"));
    vec![
        Figure {
            name: format!("export/{size}"),
            items: count,
            seconds: export.as_secs_f64(),
            bytes: Some(json.len() as u64),
        },
        Figure {
            name: format!("restore/{size}"),
            items: count,
            seconds: restore.as_secs_f64(),
            bytes: Some(json.len() as u64),
        },
    ]
}

/// Peak resident memory of this process so far (`VmHWM`), in bytes, where the platform reports it.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A writer that only counts bytes: the checkpoint size without holding the checkpoint.
#[derive(Debug, Default)]
pub struct ByteCounter {
    /// Bytes written so far.
    pub bytes: u64,
}

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
