//! Display-fold checks of a conformance case: `observed.jsonl`, `display.json` and every cut.

use a13n_stream_protocol::{recorded, DisplayFold, DisplaySnapshot, FoldError, Observed};
use serde_json::Value;

use crate::processors;
use crate::runner::{check_no_extra_lines, lines, text_difference, Case, Report};

/// One input of a display case: a source line, or an AG-UI event line.
enum Input<'a> {
    Source(&'a str),
    Agui(&'a str),
}

/// The display line of one input, as the recorded `observed.jsonl` writes it.
fn fold_line(fold: &mut DisplayFold, input: &Input<'_>) -> String {
    let mut out = Vec::with_capacity(512);
    let _ = recorded::write_fold_line(&mut out, |entries| match input {
        Input::Source(line) => fold.fold_line(line, entries).map(drop),
        Input::Agui(line) => match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(event)) => {
                fold.fold(vec![event], None).map(|observed| Observed::write_lines(&observed, entries))
            }
            Ok(_) => Err(a13n_stream_protocol::InputError::new("", "expected an AG-UI event object").into()),
            Err(error) => Err(a13n_stream_protocol::InputError::new("", error.to_string()).into()),
        },
    });
    String::from_utf8(out).unwrap_or_default()
}

fn new_fold(case: &Case, run_id: &str) -> Result<DisplayFold, String> {
    crate::runner::case_fold(&case.options, run_id)
}

fn run_id(case: &Case) -> Option<String> {
    if case.agui_only() {
        return case.options.get("run_id").and_then(Value::as_str).map(str::to_owned);
    }
    let first = case.source_lines.first()?;
    let value: Value = serde_json::from_str(first).ok()?;
    value.get("run_id").and_then(Value::as_str).map(str::to_owned)
}

pub(crate) fn check_display(case: &Case, report: &mut Report) {
    let name = &case.name;
    let event_lines;
    let inputs: Vec<Input<'_>> = if case.agui_only() {
        event_lines = match std::fs::read_to_string(case.dir.join("events.jsonl")) {
            Ok(text) => lines(&text),
            Err(error) => return report.fail(format!("{name}/events.jsonl: {error}")),
        };
        event_lines.iter().map(|line| Input::Agui(line)).collect()
    } else {
        case.source_lines.iter().map(|line| Input::Source(line)).collect()
    };
    let expected = match std::fs::read_to_string(case.dir.join("observed.jsonl")) {
        Ok(text) => lines(&text),
        Err(error) => return report.fail(format!("{name}/observed.jsonl: {error}")),
    };
    let final_reference = match std::fs::read_to_string(case.dir.join("display.json")) {
        Ok(text) => text,
        Err(error) => return report.fail(format!("{name}/display.json: {error}")),
    };
    let run_id = run_id(case).unwrap_or_else(|| "run".into());
    let mut fold = match new_fold(case, &run_id) {
        Ok(fold) => fold,
        Err(error) => return report.fail(format!("{name}/case.json: {error}")),
    };
    let cuts = case.cuts();
    let mut checkpoints = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        if cuts.contains(&index) {
            let file = format!("cuts/{index}.display.json");
            let ours = fold.export().to_json();
            match std::fs::read_to_string(case.dir.join(&file)) {
                Ok(reference) => {
                    report.check(ours == reference, || {
                        format!("{name}/{file}: export differs: {}", text_difference(&reference, &ours))
                    });
                    checkpoints.push((index, file, reference, ours));
                }
                Err(error) => report.fail(format!("{name}/{file}: {error}")),
            }
        }
        let Some(want) = expected.get(index) else {
            report.fail(format!("{name}/observed.jsonl:{}: missing expected line", index + 1));
            continue;
        };
        let got = fold_line(&mut fold, input);
        report.check(got == *want, || format!("{name}/observed.jsonl:{}: {}", index + 1, text_difference(want, &got)));
    }
    check_no_extra_lines(report, &format!("{name}/observed.jsonl"), expected.len(), inputs.len());
    let ours = fold.export().to_json();
    report.check(ours == final_reference, || {
        format!("{name}/display.json: export differs: {}", text_difference(&final_reference, &ours))
    });
    // Restore the reference's checkpoint, and our own, at every cut; folding the rest must finish identically.
    for (cut, file, reference, own) in checkpoints {
        for (whose, text) in [("reference", reference), ("own", own)] {
            // The reference's checkpoint goes through the raw-JSON restore, ours through the typed one.
            let processor = processors::optional(case.processor_name()).map_err(FoldError::Continuation);
            let outcome = processor.and_then(|processor| {
                if whose == "reference" {
                    DisplayFold::restore_json(&text, case.flag("retain_content"), processor)
                } else {
                    let snapshot = DisplaySnapshot::from_json(&text)?;
                    DisplayFold::restore(snapshot, case.flag("retain_content"), processor)
                }
            });
            let mut restored = match outcome {
                Ok(restored) => restored,
                Err(error) => {
                    report.fail(format!("{name}/{file}: restoring the {whose} checkpoint failed: {error}"));
                    continue;
                }
            };
            for input in &inputs[cut..] {
                fold_line(&mut restored, input);
            }
            let finished = restored.export().to_json();
            report.check(finished == final_reference, || {
                format!(
                    "{name}/{file}: {whose} checkpoint restored and continued differs from display.json: {}",
                    text_difference(&final_reference, &finished)
                )
            });
        }
    }
}
