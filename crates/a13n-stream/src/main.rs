use std::path::PathBuf;
fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(2).map(PathBuf::from).collect();
    let report =
        a13n_stream::conformance::run(&paths, a13n_stream::conformance::Only::All).unwrap();
    for f in &report.failures {
        println!("{f}");
    }
    println!("{} passed, {} failed", report.passed, report.failures.len());
}
