//! `HarnessAguiStreamObserver::observe_line` (with its fast lane) against the general path, `from_json` then
//! `observe` then `write_json`: the same bytes, the same errors and the same state, on every recorded stream,
//! on generated streams of every shape, and on mutated delta lines. A third observer takes the lines as a reader
//! read them beforehand (`read_ahead`, `observe_scanned`), the reader leaving some, alone and in runs, for the
//! observer to read itself (`observe_line`), with the same results.

use a13n_stream_bench::generate::{self as bench, StreamKind};
use a13n_stream_protocol::HarnessAguiStreamObserver;
use a13n_testkit::lanes::*;
use a13n_testkit::observe_line_generally;

fn assert_lanes_agree(name: &str, lines: &[String]) {
    let mut fast = HarnessAguiStreamObserver::new().retain_events(false);
    let mut slow = HarnessAguiStreamObserver::new().retain_events(false);
    let mut ahead = HarnessAguiStreamObserver::new().retain_events(false);
    let mut reader = ahead.read_ahead();
    // Runs of three lines, and lines alone, are left for the observer to read itself.
    let left = |n: usize| (n / 3) % 4 == 1 || n % 7 == 5;
    let scanned: Vec<_> = lines.iter().enumerate().map(|(n, line)| (!left(n)).then(|| reader.scan(line))).collect();
    for (index, (line, scanned)) in lines.iter().zip(&scanned).enumerate() {
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        let ra = fast.observe_line(line, &mut a).map_err(|e| e.to_string());
        let rb = observe_line_generally(&mut slow, line, &mut b).map_err(|e| e.to_string());
        let rc = match scanned {
            Some(scanned) => ahead.observe_scanned(scanned, &mut c),
            None => ahead.observe_line(line, &mut c),
        }
        .map_err(|e| e.to_string());
        assert_eq!(ra, rb, "{name}:{}: results", index + 1);
        assert_eq!(rc, rb, "{name}:{}: results read ahead", index + 1);
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{name}:{}: bytes", index + 1);
        assert_eq!(String::from_utf8_lossy(&c), String::from_utf8_lossy(&b), "{name}:{}: bytes read ahead", index + 1);
    }
    drop(scanned);
    ahead.end_read_ahead(reader);
    assert_eq!(fast.export().to_json(), slow.export().to_json(), "{name}: state");
    assert_eq!(ahead.export().to_json(), slow.export().to_json(), "{name}: state read ahead");
}

#[test]
fn both_lanes_agree_on_every_recorded_stream() {
    let mut streams = 0;
    for case in a13n_testkit::source_cases() {
        let text = std::fs::read_to_string(case.join("source.jsonl")).unwrap();
        let lines: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect();
        assert_lanes_agree(&case.display().to_string(), &lines);
        streams += 1;
    }
    assert!(streams >= 20);
}

#[test]
fn both_lanes_agree_on_spaced_streams() {
    respelled_streams_agree(spaced, SPACINGS);
}

#[test]
fn both_lanes_agree_on_relaid_streams() {
    respelled_streams_agree(relaid, LAYOUTS);
}

/// Every recorded stream, and generated streams of every shape, spelled each of `styles` ways by `respell`.
fn respelled_streams_agree(respell: fn(&str, u64) -> String, styles: u64) {
    for case in a13n_testkit::source_cases() {
        let text = std::fs::read_to_string(case.join("source.jsonl")).unwrap();
        for style in 0..styles {
            let lines: Vec<String> =
                text.lines().filter(|l| !l.trim().is_empty()).map(|line| respell(line, style)).collect();
            assert_lanes_agree(&format!("{} style {style}", case.display()), &lines);
        }
    }
    for kind in StreamKind::ALL {
        for style in 0..styles {
            let lines: Vec<String> = bench::lines(kind, 600).iter().map(|line| respell(line, style)).collect();
            assert_lanes_agree(&format!("{} style {style}", kind.name()), &lines);
        }
    }
}

#[test]
fn both_lanes_agree_on_generated_streams_of_every_shape() {
    for kind in StreamKind::ALL {
        assert_lanes_agree(kind.name(), &bench::lines(kind, 3_000));
    }
}

#[test]
fn both_lanes_agree_on_mutated_delta_lines() {
    let mut lines = bench::lines(StreamKind::Text, 40);
    let delta = lines.iter().find(|l| l.contains("content_delta")).unwrap().clone();
    let mutations = [
        delta.replace(r#""content_delta":""#, r#""content_delta":"\u00e9\n\"\\"#),
        delta.replace(r#""index":0"#, r#""index":7"#),
        delta.replace(r#""part_delta_kind":"text""#, r#""part_delta_kind":"thinking""#),
        delta.replace(r#""thread_id":""#, r#""thread_id":"x"#),
        delta.replace(r#""run_id":""#, r#""run_id":"child-"#),
        delta.replace(r#""occurred_at":"2"#, r#""occurred_at":"9"#),
        delta.replace(r#""sequence":"#, r#""sequence":-"#),
        delta.replace(r#""content_delta":"#, r#""content_delta":null,"x":"#),
        delta.replace(r#"","provider_name""#, r#"","content_delta":"dup","provider_name""#),
        delta.replace('}', "} "),
        delta.replacen('{', "{\"event\":{},", 1),
        String::from("{"),
    ];
    let at = lines.len() / 2;
    for (index, mutated) in mutations.into_iter().enumerate() {
        lines.insert(at + index, mutated);
    }
    assert_lanes_agree("mutated", &lines);
}

/// The streams the observer's lanes are mutated on: tools and short messages, in the root and in a child run.
fn lane_streams() -> Vec<(&'static str, Vec<String>)> {
    let tools = bench::lines(StreamKind::Tools, 300);
    let short = bench::lines(StreamKind::Short, 300);
    let child_tools = into_child_run(&bench::lines(StreamKind::Subagents, 200), &tools[2..17]);
    let child_text = into_child_run(&bench::lines(StreamKind::Subagents, 200), &short[2..13]);
    let subagents = bench::lines(StreamKind::Subagents, 200);
    let with_inputs = with_inputs(&tools);
    let child_inputs = into_child_run(&bench::lines(StreamKind::Subagents, 200), &with_inputs[1..4]);
    vec![
        ("tools", tools),
        ("tools with inputs", with_inputs),
        ("child inputs", child_inputs),
        ("short", short),
        ("child tools", child_tools),
        ("child text", child_text),
        ("subagents", subagents),
    ]
}

#[test]
fn both_lanes_agree_on_every_kind_of_mutated_lane_line() {
    let families = [
        &ARGUMENT_DELTAS,
        &CARRIED_LINES,
        &TEXT_PARTS,
        &TOOL_CALL_ENDS,
        &TOOL_RETURNS,
        &UNPRESENTED_RESULTS,
        &DELEGATIONS,
        &INPUTS,
    ];
    for family in families {
        for (name, lines) in lane_streams() {
            for choice in 0..family.count {
                // Some lines of each kind change, some stay: the first binds the run.
                let mutated = family.apply(&lines, choice, |n| n > 0 && (n * 7 + choice as usize * 3) % 5 < 2);
                assert_lanes_agree(&format!("{name}, {} change {choice}", family.name), &mutated);
            }
        }
    }
}
