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

/// A repository case holds the cuts its `case.json` names and no others: a cut file left by an earlier recording
/// is checked by nothing and would read as part of the case (two were found, session 46; the recorders now empty a
/// case's directory first).
#[test]
fn repository_cases_hold_only_the_cuts_they_name() {
    let mut strays = Vec::new();
    for entry in std::fs::read_dir(own_cases()).expect("tests/cases") {
        let dir = entry.expect("a case directory").path();
        let Ok(text) = std::fs::read_to_string(dir.join("case.json")) else { continue };
        let options: serde_json::Value = serde_json::from_str(&text).expect("case.json is JSON");
        let named: Vec<u64> = options["cuts"]
            .as_array()
            .map(|cuts| cuts.iter().filter_map(|cut| cut.as_u64()).collect())
            .unwrap_or_default();
        for file in std::fs::read_dir(dir.join("cuts")).into_iter().flatten() {
            let name = file.expect("a cut file").file_name().to_string_lossy().into_owned();
            let cut = name.split('.').next().and_then(|cut| cut.parse::<u64>().ok());
            if !cut.is_some_and(|cut| named.contains(&cut)) {
                strays.push(format!("{}/cuts/{name}", dir.display()));
            }
        }
    }
    assert!(strays.is_empty(), "cut files no case.json names:\n{}", strays.join("\n"));
}

/// A copy of a repository case in a fresh directory, to be spoiled by a test.
fn copied_case(test: &str, case: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("a13n-conformance-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (from, to) = (own_cases().join(case), root.join(case));
    std::fs::create_dir_all(to.join("cuts")).unwrap();
    for entry in std::fs::read_dir(&from).unwrap().chain(std::fs::read_dir(from.join("cuts")).unwrap()) {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.strip_prefix(&from).unwrap())).unwrap();
        }
    }
    root
}

fn append(path: std::path::PathBuf, line: &str) {
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}{line}\n")).unwrap();
}

/// A recorded line no input line produces used to pass unnoticed: only lines the input reached were compared.
#[test]
fn a_recorded_line_past_the_input_fails_the_case() {
    for (file, only) in [("agui.jsonl", Only::Observer), ("observed.jsonl", Only::Display)] {
        let root = copied_case(&file.replace('.', "-"), "extra-cancelled");
        assert!(run(std::slice::from_ref(&root), only).unwrap().failures.is_empty(), "the copy passes as it is");
        append(root.join("extra-cancelled").join(file), r#"{"observed":[]}"#);
        let report = run(std::slice::from_ref(&root), only).unwrap();
        assert_eq!(report.failures.len(), 1, "{file}: {:?}", report.failures);
        assert!(report.failures[0].contains("1 recorded line(s) past the input's"), "{}", report.failures[0]);
        let _ = std::fs::remove_dir_all(root);
    }
}

/// A case whose `case.json` is not JSON used to stop the whole run: it fails alone and the others still run.
#[test]
fn an_unreadable_case_fails_alone() {
    let root = copied_case("unreadable", "extra-cancelled");
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/case.json"), "{").unwrap();
    let report = run(std::slice::from_ref(&root), Only::All).expect("a bad case is a failure, not an error");
    assert_eq!(report.cases, 2);
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(report.failures[0].contains("broken/case.json: not JSON"), "{}", report.failures[0]);
    assert!(report.passed > 0, "the readable case still ran");
    let _ = std::fs::remove_dir_all(root);
}
