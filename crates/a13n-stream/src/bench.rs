//! `a13n-stream bench`: whole-stream figures on generated streams (`a13n_stream_bench::generate`).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use a13n_stream_bench::generate::{self as bench, Figure, StreamKind};
use a13n_stream_protocol::display::LaneCounts;
use serde_json::Value;

use crate::cli::BenchArgs;
use crate::failure::{io_error, Failure};

fn say(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(io_error)
}

fn kind_of(name: &str) -> Result<StreamKind, Failure> {
    StreamKind::parse(name)
        .ok_or_else(|| Failure::Usage(format!("unknown stream kind {name:?} (text, short, tools, subagents)")))
}

/// `--emit KIND N`: print a generated stream.
fn emit_stream(kind: &str, total: &str) -> Result<ExitCode, Failure> {
    let kind = kind_of(kind)?;
    let total: u64 =
        total.parse().map_err(|_| Failure::Usage(format!("--emit KIND N: N is a number, not {total:?}")))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut generator = bench::Generator::new(kind, total);
    while let Some(line) = generator.next_line() {
        out.write_all(line.as_bytes()).map_err(io_error)?;
        out.write_all(b"\n").map_err(io_error)?;
    }
    out.flush().map_err(io_error)?;
    Ok(ExitCode::SUCCESS)
}

/// `--peak-child KIND:N`: fold a generated stream without holding it and report this process's peak memory.
fn peak_child(spec: &str, retain: bool) -> Result<ExitCode, Failure> {
    let (kind, total) = spec.split_once(':').ok_or_else(|| Failure::Usage("--peak-child KIND:N".into()))?;
    let total: u64 = total.parse().map_err(|_| Failure::Usage("--peak-child KIND:N".into()))?;
    let fold = bench::fold_streaming(kind_of(kind)?, total, retain);
    let mut counter = bench::ByteCounter::default();
    fold.write_export(&mut counter).map_err(io_error)?;
    say(&format!("{}\n", serde_json::json!({"peak": bench::peak_memory(), "checkpoint": counter.bytes})))?;
    Ok(ExitCode::SUCCESS)
}

/// Run `bench`.
pub fn run(args: BenchArgs) -> Result<ExitCode, Failure> {
    if let [kind, total] = args.emit.as_slice() {
        return emit_stream(kind, total);
    }
    if let Some(spec) = &args.peak_child {
        return peak_child(spec, args.retain_content);
    }
    let json = args.json;
    let sizes = args.sizes.clone();
    let kinds: Vec<StreamKind> = if args.kinds.is_empty() {
        StreamKind::ALL.to_vec()
    } else {
        args.kinds.iter().map(|k| kind_of(k.trim())).collect::<Result<_, _>>()?
    };
    let runs = args.runs.max(1);
    let mut figures: Vec<Figure> = Vec::new();
    let emit = |figure: Figure, figures: &mut Vec<Figure>| -> Result<(), Failure> {
        if json {
            say(&format!("{}\n", figure.to_json()))?;
        } else {
            let extra = figure.bytes.map_or(String::new(), |b| format!("  {:.1} KiB", b as f64 / 1024.0));
            say(&format!(
                "{:<32} {:>9} items {:>10.4} s {:>12.0} items/s{extra}\n",
                figure.name,
                figure.items,
                figure.seconds,
                figure.rate()
            ))?;
        }
        figures.push(figure);
        Ok(())
    };
    let mut buffer = Vec::with_capacity(1 << 16);
    // Fold time per item over json_baseline's, measured in pairs (see `paired_ratio`).
    let mut paired: Vec<(String, f64)> = Vec::new();
    // Which path each shape's lines take through the fold (the summary prints them).
    let mut lanes: Vec<(String, LaneCounts)> = Vec::new();
    for &size in &sizes {
        for &kind in &kinds {
            let lines = bench::lines(kind, size);
            let runs = if size >= 1_000_000 { 1 } else { runs };
            let name = |what: &str| format!("{what}/{}/{size}", kind.name());
            let seconds = bench::time(runs, || bench::json_baseline(&lines, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("json_baseline"), items: size, seconds, bytes: None }, &mut figures)?;
            let seconds = bench::time(runs, || bench::observe(&lines, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("observe"), items: size, seconds, bytes: None }, &mut figures)?;
            let seconds = bench::time(runs, || bench::fold(&lines, false, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("fold"), items: size, seconds, bytes: None }, &mut figures)?;
            if !json {
                lanes.push((name("lanes"), bench::fold(&lines, false, &mut buffer).lane_counts().clone()));
                // Only the summary prints the paired ratio.
                let mut fold_buffer = Vec::with_capacity(1 << 16);
                let ratio = bench::paired_ratio(
                    runs.max(if size >= 1_000_000 { 1 } else { 7 }),
                    || bench::json_baseline(&lines, &mut buffer),
                    || bench::fold(&lines, false, &mut fold_buffer),
                );
                paired.push((name("fold"), ratio));
            }
            if kind == StreamKind::Text {
                let seconds = bench::time(runs, || bench::fold(&lines, true, &mut buffer)).as_secs_f64();
                emit(Figure { name: name("fold_retain"), items: size, seconds, bytes: None }, &mut figures)?;
            }
        }
    }
    for size in [64, 1024, 4096] {
        for figure in bench::checkpoint_figures(size, runs.max(5)) {
            emit(figure, &mut figures)?;
        }
    }
    if let Some(&largest) = sizes.iter().max() {
        let exe = std::env::current_exe().map_err(io_error)?;
        for &kind in &kinds {
            for retain in [false, true] {
                if retain && kind != StreamKind::Text {
                    continue;
                }
                let mut command = std::process::Command::new(&exe);
                command.args(["bench", "--peak-child", &format!("{}:{largest}", kind.name())]);
                if retain {
                    command.arg("--retain-content");
                }
                let output = command.output().map_err(io_error)?;
                let report: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
                let peak = report.get("peak").and_then(Value::as_u64);
                let checkpoint = report.get("checkpoint").and_then(Value::as_u64).unwrap_or(0);
                let policy = if retain { "_retain" } else { "" };
                let name = format!("peak_memory{policy}/{}/{largest}", kind.name());
                emit(Figure { name, items: largest, seconds: 0.0, bytes: peak }, &mut figures)?;
                let name = format!("checkpoint{policy}/{}/{largest}", kind.name());
                emit(Figure { name, items: largest, seconds: 0.0, bytes: Some(checkpoint) }, &mut figures)?;
            }
        }
    }
    if !json {
        say(&summarize(&figures, &paired))?;
        say(&lane_summary(&lanes))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The ratios the performance targets are stated in: fold against json_baseline measured in pairs (`paired`),
/// and beside it the ratio of the two figures' own medians.
fn summarize(figures: &[Figure], paired: &[(String, f64)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("\n");
    let find = |name: &str| figures.iter().find(|f| f.name == name);
    for (name, ratio) in paired {
        let baseline = name.replacen("fold/", "json_baseline/", 1);
        let separate = match (find(name), find(&baseline)) {
            (Some(fold), Some(base)) => format!(" (separate medians: {:.2}x)", fold.seconds / base.seconds),
            _ => String::new(),
        };
        let _ = writeln!(out, "{name:<32} {ratio:.2}x the time per item of json_baseline, in pairs{separate}");
    }
    let retain: Vec<_> = figures.iter().filter(|f| f.name.starts_with("fold_retain/text/")).collect();
    if let (Some(small), Some(large)) = (retain.first(), retain.last()) {
        if small.items != large.items {
            let ratio = (large.seconds / large.items as f64) / (small.seconds / small.items as f64);
            let _ = writeln!(out, "fold_retain per-item cost, {} vs {} deltas: {ratio:.2}x", large.items, small.items);
        }
    }
    for peak in figures.iter().filter(|f| f.name.starts_with("peak_memory")) {
        let checkpoint = peak.name.replacen("peak_memory", "checkpoint", 1);
        if let (Some(bytes), Some(check)) = (peak.bytes, find(&checkpoint).and_then(|c| c.bytes)) {
            let budget = 3 * check + 50 * 1024 * 1024;
            let _ = writeln!(
                out,
                "{:<32} {:.1} MiB peak; budget 3 x checkpoint + 50 MiB = {:.1} MiB",
                peak.name,
                bytes as f64 / 1048576.0,
                budget as f64 / 1048576.0
            );
        }
    }
    out
}

/// Where each shape's lines went: the share of its lines down each path (a fast lane, or the general path and
/// why; see `LanePath`).
fn lane_summary(lanes: &[(String, LaneCounts)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (name, counts) in lanes {
        let total = counts.total().max(1) as f64;
        let paths: Vec<String> = counts
            .iter()
            .map(|(path, count)| format!("{path} {count} ({:.1}%)", count as f64 * 100.0 / total))
            .collect();
        let _ = writeln!(out, "{name:<32} {}", paths.join(", "));
    }
    out
}
