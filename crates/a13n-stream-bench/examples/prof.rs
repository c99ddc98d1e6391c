use a13n_stream_bench::generate::{self as bench, StreamKind};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = StreamKind::ALL.into_iter().find(|k| k.name() == args[1]).unwrap();
    let what = args[2].as_str();
    let lines = bench::lines(kind, 100_000);
    let mut out = Vec::new();
    let t = std::time::Instant::now();
    for _ in 0..10 {
        if what == "fold" {
            bench::fold(&lines, false, &mut out);
        } else {
            bench::observe(&lines, &mut out);
        }
    }
    eprintln!("{:?} per run", t.elapsed() / 10);
}
