//! Micro-benchmarks of the per-event hot paths: `cargo bench -p a13n-stream-bench`.
//!
//! Whole-stream figures (json_baseline, observe, fold, export, restore, peak memory) come from
//! `a13n-stream bench`; these isolate one step each on a warm state.

use a13n_stream_bench::generate::{self as bench, StreamKind};
use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, SourceItem};
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

const TEXT: StreamKind = StreamKind::Text;
const TOOLS: StreamKind = StreamKind::Tools;
const SUBAGENTS: StreamKind = StreamKind::Subagents;

fn items(kind: StreamKind) -> Vec<SourceItem> {
    bench::lines(kind, 2_000).iter().map(|line| SourceItem::from_json(line).expect("generated lines decode")).collect()
}

#[divan::bench(args = [TEXT, TOOLS])]
fn decode_100_source_lines(bencher: Bencher, kind: StreamKind) {
    let lines = bench::lines(kind, 2_000);
    bencher.bench(|| {
        for line in &lines[100..200] {
            black_box(SourceItem::from_json(line).ok());
        }
    });
}

#[divan::bench(args = [TEXT, TOOLS, SUBAGENTS])]
fn observe_100_items(bencher: Bencher, kind: StreamKind) {
    let items = items(kind);
    bencher
        .with_inputs(|| {
            let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
            observer.resume(&items[..100]).expect("generated history resumes");
            observer
        })
        .bench_local_refs(|observer| {
            for item in &items[100..200] {
                black_box(observer.observe(item).ok());
            }
        });
}

#[divan::bench(args = [TEXT, TOOLS, SUBAGENTS])]
fn fold_100_items(bencher: Bencher, kind: StreamKind) {
    let items = items(kind);
    bencher
        .with_inputs(|| {
            let mut fold = DisplayFold::new("run-bench");
            for item in &items[..100] {
                fold.fold_source(item).expect("generated items fold");
            }
            fold
        })
        .bench_local_refs(|fold| {
            for item in &items[100..200] {
                black_box(fold.fold_source(item).ok());
            }
        });
}

/// Source lines to observed lines (`DisplayFold::fold_line`): the content deltas of a text stream take the fast
/// lane; the tool and subagent streams are mostly the general path.
#[divan::bench(args = [TEXT, TOOLS, SUBAGENTS])]
fn fold_100_lines(bencher: Bencher, kind: StreamKind) {
    let lines = bench::lines(kind, 2_000);
    bencher
        .with_inputs(|| {
            let mut fold = DisplayFold::new("run-bench");
            for line in &lines[..100] {
                fold.fold_line(line, &mut Vec::new()).expect("generated lines fold");
            }
            (fold, Vec::with_capacity(1 << 16))
        })
        .bench_local_refs(|(fold, out)| {
            for line in &lines[100..200] {
                black_box(fold.fold_line(line, out).ok());
            }
        });
}

#[divan::bench(args = [64, 1024, 4096])]
fn export_json(bencher: Bencher, items: usize) {
    let fold = bench::display_of(items);
    bencher.bench_local(|| black_box(fold.export_json()));
}

#[divan::bench(args = [64, 1024, 4096])]
fn restore_json(bencher: Bencher, items: usize) {
    let checkpoint = bench::display_of(items).export_json();
    bencher.bench(|| black_box(DisplayFold::restore_json(&checkpoint, false, None).expect("own checkpoint")));
}
