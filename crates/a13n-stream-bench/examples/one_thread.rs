//! Observe or fold a journal on one thread, each line scanned and then taken as the CLI's two threads do, for
//! counting instructions: the CLI's count moves by a few percent from run to run with how its reader and taker
//! share the scans; this one does not.
//!
//! ```sh
//! cargo build --release -p a13n-stream-bench --example one_thread
//! valgrind --tool=callgrind target/release/examples/one_thread fold run.jsonl
//! ```
//!
//! Prints the bytes written (observed lines, events, and the checkpoint for `fold`), so that two builds can be
//! checked to do the same work.

use std::process::ExitCode;

use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, ReadAhead, ScannedLine, SourceItem};

// The CLI's allocator: allocation is a share of every line's instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(command), Some(path)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: one_thread observe|fold JOURNAL");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("one_thread: {path}: {error}");
            return ExitCode::from(1);
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let written = match command.as_str() {
        "observe" => observe(&lines),
        "fold" => fold(&lines),
        other => {
            eprintln!("one_thread: unknown command {other:?} (observe or fold)");
            return ExitCode::from(2);
        }
    };
    println!("{written}");
    ExitCode::SUCCESS
}

/// The events' bytes (a line that fails writes nothing, as the CLI reports it and goes on).
fn observe(lines: &[&str]) -> usize {
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    let mut reader = observer.read_ahead();
    let written = take_scanned(lines, &mut reader, |line, out| drop(observer.observe_scanned(line, out)));
    observer.end_read_ahead(reader);
    written
}

/// The observed entries' bytes, then the checkpoint's.
fn fold(lines: &[&str]) -> usize {
    let Some(run_id) = lines.first().and_then(|line| SourceItem::from_json(line).ok()).map(|item| item.run_id) else {
        return 0;
    };
    let mut fold = DisplayFold::new(run_id);
    let mut reader = fold.read_ahead();
    let written = take_scanned(lines, &mut reader, |line, out| drop(fold.fold_scanned_line(line, out)));
    fold.end_read_ahead(reader);
    written + fold.export_json().len()
}

/// Scan each line with `reader`, then hand it to `take` with an empty buffer: the bytes `take` wrote in all.
fn take_scanned(lines: &[&str], reader: &mut ReadAhead, mut take: impl FnMut(&ScannedLine<'_>, &mut Vec<u8>)) -> usize {
    let mut out = Vec::with_capacity(1 << 16);
    let mut written = 0;
    for line in lines {
        let scanned = reader.scan(line);
        out.clear();
        take(&scanned, &mut out);
        written += out.len();
    }
    written
}
