//! `HarnessAguiStreamObserver::observe_line` (with its fast lane) against the general path, `from_json` then
//! `observe` then `write_json`: the same bytes, the same errors and the same state, on every recorded stream,
//! on generated streams of every shape, and on mutated delta lines.

use a13n_stream_bench::generate::{self as bench, StreamKind};
use a13n_stream_protocol::HarnessAguiStreamObserver;
use a13n_testkit::lanes::*;
use a13n_testkit::observe_line_generally;

fn assert_lanes_agree(name: &str, lines: &[String]) {
    let mut fast = HarnessAguiStreamObserver::new().retain_events(false);
    let mut slow = HarnessAguiStreamObserver::new().retain_events(false);
    for (index, line) in lines.iter().enumerate() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let ra = fast.observe_line(line, &mut a).map_err(|e| e.to_string());
        let rb = observe_line_generally(&mut slow, line, &mut b).map_err(|e| e.to_string());
        assert_eq!(ra, rb, "{name}:{}: results", index + 1);
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "{name}:{}: bytes", index + 1);
    }
    assert_eq!(fast.export().to_json(), slow.export().to_json(), "{name}: state");
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

#[test]
fn both_lanes_agree_on_mutated_argument_lines() {
    let tools = bench::lines(StreamKind::Tools, 300);
    let call: Vec<String> = tools[2..15].to_vec();
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 200), &call);
    for (name, lines) in [("tools", tools), ("child tools", child)] {
        for choice in 0..ARGUMENT_MUTATIONS {
            let mut count = 0;
            let mutated: Vec<String> = lines
                .iter()
                .map(|line| {
                    count += 1;
                    if line.contains("args_delta") && count % 3 == 0 {
                        mutate_argument_delta(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            assert_lanes_agree(&format!("{name} mutation {choice}"), &mutated);
        }
    }
}

#[test]
fn both_lanes_agree_on_mutated_carried_lines() {
    let tools = bench::lines(StreamKind::Tools, 300);
    let call: Vec<String> = tools[2..15].to_vec();
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 200), &call);
    let short = bench::lines(StreamKind::Short, 300);
    for (name, lines) in [("tools", tools), ("child tools", child), ("short", short)] {
        for choice in 0..CARRIED_MUTATIONS {
            let mutated: Vec<String> = lines
                .iter()
                .enumerate()
                .map(|(n, line)| {
                    if n > 0 && (n + choice as usize) % 2 == 0 && is_carried_line(line) {
                        mutate_carried_line(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            assert_lanes_agree(&format!("{name} carried mutation {choice}"), &mutated);
        }
    }
}

#[test]
fn both_lanes_agree_on_mutated_text_part_lines() {
    let short = bench::lines(StreamKind::Short, 300);
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 200), &short[2..13]);
    for (name, lines) in [("short", short), ("child text", child)] {
        for choice in 0..TEXT_PART_MUTATIONS {
            let mutated: Vec<String> = lines
                .iter()
                .enumerate()
                .map(|(n, line)| {
                    if (n / 12 + choice as usize) % 2 == 0 && is_text_part_line(line) {
                        mutate_text_part(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            assert_lanes_agree(&format!("{name} text part mutation {choice}"), &mutated);
        }
    }
}

#[test]
fn both_lanes_agree_on_mutated_tool_call_ends() {
    let tools = bench::lines(StreamKind::Tools, 300);
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 200), &tools[2..15]);
    for (name, lines) in [("tools", tools), ("child tools", child)] {
        for choice in 0..TOOL_CALL_END_MUTATIONS {
            let mutated: Vec<String> = lines
                .iter()
                .enumerate()
                .map(|(n, line)| {
                    if (n / 16 + choice as usize) % 2 == 0 && is_tool_call_end_line(line) {
                        mutate_tool_call_end(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            assert_lanes_agree(&format!("{name} tool call end mutation {choice}"), &mutated);
        }
    }
}

#[test]
fn both_lanes_agree_on_mutated_tool_returns() {
    let tools = bench::lines(StreamKind::Tools, 300);
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 200), &tools[2..17]);
    for (name, lines) in [("tools", tools), ("child tools", child)] {
        for choice in 0..TOOL_RETURN_MUTATIONS {
            let mutated: Vec<String> = lines
                .iter()
                .enumerate()
                .map(|(n, line)| {
                    if (n / 16 + choice as usize) % 2 == 0 && is_tool_return_line(line) {
                        mutate_tool_return(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            assert_lanes_agree(&format!("{name} tool return mutation {choice}"), &mutated);
        }
    }
}
