//! The conformance runner: replays recorded cases of the Python reference and compares every output.
//!
//! A case directory holds `case.json` and the files described in the corpus README. Each comparison is one
//! check; a failed check is reported with the case, the file and the line.

use std::fs;
use std::path::{Path, PathBuf};

use a13n_stream_protocol::{
    recorded, AguiEventProcessor, ContentPolicy, DisplayFold, DisplayOptions, HarnessAguiStreamObserver, ObserveError,
    ObserverContinuation, SourceItem,
};
use serde_json::Value;

use crate::processors;

/// Which parts of a case to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    /// Every check.
    All,
    /// `agui.jsonl` and `cuts/K.observer.json`.
    Observer,
    /// `observed.jsonl`, `display.json` and `cuts/K.display.json`.
    Display,
}

/// The outcome of a conformance run.
#[derive(Debug, Default)]
pub struct Report {
    /// Checks that passed.
    pub passed: usize,
    /// One line per failed check: `case/file:line: what differs`.
    pub failures: Vec<String>,
    /// Case directories run.
    pub cases: usize,
}

impl Report {
    pub(crate) fn check(&mut self, ok: bool, failure: impl FnOnce() -> String) {
        if ok {
            self.passed += 1;
        } else {
            self.failures.push(failure());
        }
    }

    pub(crate) fn fail(&mut self, failure: String) {
        self.failures.push(failure);
    }
}

/// Every case directory at or below `path` (a directory holding `case.json`), sorted.
pub fn case_dirs(path: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    collect(path, &mut out)?;
    out.sort();
    Ok(out)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.join("case.json").is_file() {
        out.push(path.to_owned());
        return Ok(());
    }
    let entries = fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            collect(&entry.path(), out)?;
        }
    }
    Ok(())
}

/// A loaded case.
pub struct Case {
    /// The case's directory name.
    pub name: String,
    /// The directory.
    pub dir: PathBuf,
    /// `case.json`.
    pub options: Value,
    /// Source lines (empty for `agui_only` cases).
    pub source_lines: Vec<String>,
}

impl Case {
    /// Load `case.json` and the source lines of a case directory.
    pub fn load(dir: &Path) -> Result<Case, String> {
        let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        let path = dir.join("case.json");
        let options: Value =
            serde_json::from_str(&read(&path)?).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        let source = dir.join("source.jsonl");
        let source_lines = if source.is_file() { lines(&read(&source)?) } else { Vec::new() };
        Ok(Case { name, dir: dir.to_owned(), options, source_lines })
    }

    /// Whether the case feeds AG-UI events straight to a display fold.
    pub fn agui_only(&self) -> bool {
        self.options.get("agui_only").and_then(Value::as_bool).unwrap_or(false)
    }

    /// The named processor, if any.
    pub fn processor_name(&self) -> Option<&str> {
        self.options.get("processor").and_then(Value::as_str)
    }

    /// The cut points K.
    pub fn cuts(&self) -> Vec<usize> {
        self.options
            .get("cuts")
            .and_then(Value::as_array)
            .map(|cuts| cuts.iter().filter_map(Value::as_u64).map(|k| k as usize).collect())
            .unwrap_or_default()
    }

    /// A boolean option.
    pub fn flag(&self, key: &str) -> bool {
        self.options.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    fn file(&self, name: &str) -> Result<String, String> {
        read(&self.dir.join(name))
    }
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The lines of a recorded file, by the workspace's one set of line rules (blank lines skipped, a trailing `\r`
/// dropped), each exactly as written.
pub fn lines(text: &str) -> Vec<String> {
    a13n_stream_protocol::lines::split_text(text).into_iter().map(|(_, line)| line.to_owned()).collect()
}

/// Run every case under `paths`.
pub fn run(paths: &[PathBuf], only: Only) -> Result<Report, String> {
    let mut report = Report::default();
    for path in paths {
        for dir in case_dirs(path)? {
            report.cases += 1;
            // A case that cannot be read fails alone; the others still run.
            let case = match Case::load(&dir) {
                Ok(case) => case,
                Err(error) => {
                    report.fail(error);
                    continue;
                }
            };
            if only != Only::Display && !case.agui_only() {
                check_observer(&case, &mut report);
            }
            if only != Only::Observer {
                crate::display::check_display(&case, &mut report);
            }
        }
    }
    Ok(report)
}

/// A recorded file holds one line per input line: lines past the input's end are output this implementation
/// never wrote, so they fail the case as a changed line would.
pub(crate) fn check_no_extra_lines(report: &mut Report, file: &str, recorded: usize, inputs: usize) {
    report.check(recorded <= inputs, || {
        format!("{file}:{}: {} recorded line(s) past the input's {inputs}", inputs + 1, recorded - inputs)
    });
}

/// Where two texts first differ, with a little context on each side.
pub fn text_difference(expected: &str, actual: &str) -> String {
    let offset = expected.bytes().zip(actual.bytes()).take_while(|(a, b)| a == b).count();
    let window = |text: &str| {
        let mut start = offset.saturating_sub(80);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (offset + 160).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        text[start..end].to_owned()
    };
    format!(
        "first difference at byte {offset} (lengths {} and {})\n  expected …{}…\n  got      …{}…",
        expected.len(),
        actual.len(),
        window(expected),
        window(actual)
    )
}

/// The observer line of one source line, as the recorded `agui.jsonl` writes it.
fn observe_line(observer: &mut HarnessAguiStreamObserver, line: &str) -> String {
    let result = SourceItem::from_json(line).map_err(ObserveError::from).and_then(|item| observer.observe(&item));
    let mut out = Vec::with_capacity(256);
    match result {
        Ok(events) => recorded::write_events_line(&events, &mut out),
        Err(error) => {
            let (kind, message) = recorded::observe_error_parts(&error);
            recorded::write_error_line(kind, &message, &mut out);
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

fn check_observer(case: &Case, report: &mut Report) {
    let name = &case.name;
    let expected = match case.file("agui.jsonl") {
        Ok(text) => lines(&text),
        Err(error) => return report.fail(error),
    };
    let make = || processors::optional(case.processor_name());
    let processor = match make() {
        Ok(processor) => processor,
        Err(error) => return report.fail(format!("{name}/case.json: {error}")),
    };
    let mut observer = HarnessAguiStreamObserver::new();
    if let Some(processor) = processor {
        observer = observer.with_processor(processor);
    }
    let cuts = case.cuts();
    let mut exports = Vec::new();
    for (index, line) in case.source_lines.iter().enumerate() {
        if cuts.contains(&index) {
            let file = format!("cuts/{index}.observer.json");
            match case.file(&file) {
                Ok(reference) => {
                    let ours = observer.export().to_json();
                    report.check(ours == reference, || {
                        format!("{name}/{file}: export differs: {}", text_difference(&reference, &ours))
                    });
                    exports.push((index, reference));
                }
                Err(error) => report.fail(error),
            }
        }
        let Some(want) = expected.get(index) else {
            report.fail(format!("{name}/agui.jsonl:{}: missing expected line", index + 1));
            continue;
        };
        let got = observe_line(&mut observer, line);
        report.check(got == *want, || format!("{name}/agui.jsonl:{}: {}", index + 1, text_difference(want, &got)));
    }
    check_no_extra_lines(report, &format!("{name}/agui.jsonl"), expected.len(), case.source_lines.len());
    // Recovery: resumed from the prefix, or restored from the reference's export, then the suffix.
    for (cut, reference) in exports {
        let items: Result<Vec<SourceItem>, _> =
            case.source_lines[..cut].iter().map(|line| SourceItem::from_json(line)).collect();
        let mut candidates = Vec::new();
        if let (Ok(items), Ok(processor)) = (items, make()) {
            let mut resumed = HarnessAguiStreamObserver::new();
            if let Some(processor) = processor {
                resumed = resumed.with_processor(processor);
            }
            // A prefix holding a rejected item is not exact history.
            if resumed.resume(&items).is_ok() {
                candidates.push(("resumed", resumed));
            }
        }
        match ObserverContinuation::from_json(&reference) {
            Ok(continuation) => match make() {
                Ok(processor) => {
                    candidates.push(("restored", HarnessAguiStreamObserver::restore(continuation, processor)))
                }
                Err(error) => report.fail(error),
            },
            Err(error) => report.fail(format!("{name}/cuts/{cut}.observer.json: {error}")),
        }
        for (how, mut observer) in candidates {
            let mut first_bad = None;
            for (index, line) in case.source_lines.iter().enumerate().skip(cut) {
                let want = expected.get(index).cloned().unwrap_or_default();
                let got = observe_line(&mut observer, line);
                if want != got {
                    first_bad = Some((index, want, got));
                    break;
                }
            }
            report.check(first_bad.is_none(), || {
                let (index, want, got) = first_bad.unwrap_or_default();
                format!("{name}/agui.jsonl:{}: {how} at cut {cut}: {}", index + 1, text_difference(&want, &got))
            });
        }
    }
}

/// The processor a case's options name (`"processor"`), if any.
pub fn case_processor(options: &Value) -> Result<Option<AguiEventProcessor>, String> {
    processors::optional(options.get("processor").and_then(Value::as_str))
}

/// A display fold for `run_id` with a case's options: `full_content`, `retain_content` and `processor`.
pub fn case_fold(options: &Value, run_id: &str) -> Result<DisplayFold, String> {
    let flag = |key: &str| options.get(key).and_then(Value::as_bool).unwrap_or(false);
    Ok(DisplayFold::with_options(
        run_id,
        DisplayOptions {
            content: ContentPolicy::new(flag("full_content"), flag("retain_content")),
            processor: case_processor(options)?,
            ..DisplayOptions::default()
        },
    ))
}
