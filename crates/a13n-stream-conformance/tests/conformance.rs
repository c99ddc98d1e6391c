//! The recorded behaviour of the Python reference: every case must pass.

use a13n_stream_conformance::{run, Only};
use a13n_testkit::{own_cases, shared_cases};

fn assert_passes(path: std::path::PathBuf) {
    let report = run(std::slice::from_ref(&path), Only::All).expect("cases are readable");
    assert!(report.cases > 0, "no cases under {}", path.display());
    assert!(report.failures.is_empty(), "{} failures:\n{}", report.failures.len(), report.failures.join("\n"));
    eprintln!("{}: {} cases, {} checks passed", path.display(), report.cases, report.passed);
}

#[test]
fn repository_cases_pass() {
    assert_passes(own_cases());
}

#[test]
fn shared_public_corpus_passes() {
    let path = shared_cases().expect(
        "needs the shared corpus: ../shared/conformance/cases beside this checkout, or A13N_CONFORMANCE naming it",
    );
    assert_passes(path);
}
