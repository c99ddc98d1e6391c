//! `DisplayFold::fold_line` (with its fast lanes for content and argument deltas) against decoding and
//! `fold_source`: the same bytes, the same errors and the same state, on every recorded stream, on generated
//! streams, from restored checkpoints, and on delta lines mutated in every way the fast lanes must notice.

use a13n_stream_bench::generate::{self as bench, StreamKind};
use a13n_stream_conformance::{case_fold, case_processor};
use a13n_stream_protocol::display::LanePath;
use a13n_stream_protocol::{AguiEventProcessor, DisplayFold, SourceItem};
use a13n_testkit::lanes::*;
use a13n_testkit::{case_options, fold_line_generally, fold_source_line, random_stream, source_cases, Rng};
use serde_json::{json, Value};

fn processor(options: &Value) -> Option<AguiEventProcessor> {
    case_processor(options).expect("known processor")
}

fn fold_for(options: &Value, run_id: &str) -> DisplayFold {
    case_fold(options, run_id).expect("known processor")
}

/// Fold `lines` through both lanes side by side (each fold made by `make`), comparing every output, error and
/// changed set, and the whole checkpoint every `check_every` lines and at the end. The reference is the AG-UI JSON
/// path spelled out (the observer's events as objects, then `fold`); `fold_source` (typed events folded as they
/// are) and `fold_line` (its lanes, and the typed path for any other line) must match it. A fourth fold replays
/// the lines (`replay_line`), and a fifth folds them as a reader read them beforehand (`read_ahead`;
/// `fold_scanned_line` on odd lines, the same output, and `replay_scanned` on even ones, nothing written), the
/// reader leaving some lines, alone and in runs, for the fold to read itself (`fold_line`, `replay_line`), as the
/// CLI's reader does when the fold waits for it: the same results and state, and each line down the same path.
fn compare(make: impl Fn() -> DisplayFold, lines: &[String], check_every: usize, context: &str) {
    compare_retiring(make, lines, check_every, context, |_, _| None);
}

/// [`compare`], each fold retiring after line `n` the item `retire(n, fold)` names (a host paging items out).
fn compare_retiring(
    make: impl Fn() -> DisplayFold,
    lines: &[String],
    check_every: usize,
    context: &str,
    mut retire: impl FnMut(usize, &DisplayFold) -> Option<String>,
) {
    let (general, typed, lane, replayed) = (&mut make(), &mut make(), &mut make(), &mut make());
    let read_ahead = &mut make();
    let mut reader = read_ahead.read_ahead();
    let scanned: Vec<_> =
        lines.iter().enumerate().map(|(n, line)| (!left_to_the_taker(n)).then(|| reader.scan(line))).collect();
    let mut scanned = scanned.into_iter();
    for (n, line) in lines.iter().enumerate() {
        let (mut expected, mut got, mut got_typed) = (Vec::new(), Vec::new(), Vec::new());
        let expected_result = fold_line_generally(general, line, &mut expected);
        let typed_result = fold_source_line(typed, line, &mut got_typed);
        assert_eq!(format!("{typed_result:?}"), format!("{expected_result:?}"), "{context}: line {n} typed result");
        assert_eq!(
            String::from_utf8_lossy(&got_typed),
            String::from_utf8_lossy(&expected),
            "{context}: line {n} typed output"
        );
        let got_result = lane.fold_line(line, &mut got);
        assert_eq!(format!("{got_result:?}"), format!("{expected_result:?}"), "{context}: line {n} result");
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected), "{context}: line {n} output");
        assert_eq!(lane.changed(), general.changed(), "{context}: line {n} changed items");
        assert_eq!(typed.changed(), general.changed(), "{context}: line {n} changed items typed");
        let replay_result = replayed.replay_line(line);
        assert_eq!(format!("{replay_result:?}"), format!("{expected_result:?}"), "{context}: line {n} replayed");
        assert_eq!(replayed.changed(), general.changed(), "{context}: line {n} changed items replayed");
        let scanned_line = scanned.next().expect("a place for each line");
        let read_result = if n % 2 == 1 {
            let mut read = Vec::new();
            let result = match &scanned_line {
                Some(scanned_line) => read_ahead.fold_scanned_line(scanned_line, &mut read),
                None => read_ahead.fold_line(line, &mut read),
            };
            let context = format!("{context}: line {n} output read ahead");
            assert_eq!(String::from_utf8_lossy(&read), String::from_utf8_lossy(&expected), "{context}");
            result
        } else {
            match &scanned_line {
                Some(scanned) => read_ahead.replay_scanned(scanned),
                None => read_ahead.replay_line(line),
            }
        };
        assert_eq!(format!("{read_result:?}"), format!("{expected_result:?}"), "{context}: line {n} read ahead");
        assert_eq!(read_ahead.changed(), general.changed(), "{context}: line {n} changed items read ahead");
        let retired = retire(n, general);
        for fold in [&mut *general, &mut *typed, &mut *lane, &mut *replayed, &mut *read_ahead] {
            if let Some(id) = &retired {
                let item = fold.retire(id).map(|item| (item.id, item.ordinal));
                assert_eq!(item.map(|(id, _)| id).as_ref(), Some(id), "{context}: line {n} retires {id}");
            }
            // Changes gather over a few lines while retiring, so that the marks move with the positions.
            if retired.is_none() || n % 3 == 0 {
                fold.clear_changed();
            }
        }
        if let Some(id) = &retired {
            assert!(!general.changed().contains(id), "{context}: line {n}: a retired item is no longer changed");
        }
        if n % check_every == 0 || n + 1 == lines.len() {
            let checkpoint = general.export_json();
            assert_eq!(lane.export_json(), checkpoint, "{context}: checkpoint after line {n}");
            assert_eq!(typed.export_json(), checkpoint, "{context}: typed checkpoint after line {n}");
            assert_eq!(replayed.export_json(), checkpoint, "{context}: replayed checkpoint after line {n}");
            assert_eq!(read_ahead.export_json(), checkpoint, "{context}: read-ahead checkpoint after line {n}");
        }
    }
    read_ahead.end_read_ahead(reader);
    // A line spelled otherwise is spelled again by the reader, and the fold takes that spelling down the same path.
    assert_eq!(read_ahead.lane_counts(), lane.lane_counts(), "{context}: the paths lines took read ahead");
}

/// Whether a reader reading ahead leaves line `n` for its taker to read: runs of three, and lines alone.
fn left_to_the_taker(n: usize) -> bool {
    (n / 3) % 4 == 1 || n % 7 == 5
}

/// Two tool calls whose argument deltas alternate: the second call's first delta comes right after the first
/// call's, so only the deltas' identity tells their streams apart. A reader is taken out between the two; the fold
/// reads the second call's delta with its fresh memo while its lane still holds the name of the first call's delta,
/// which the memo now held by the reader gave: the two memos must name their lines apart.
#[test]
fn a_delta_read_by_a_fresh_memo_is_not_the_reader_memos_last() {
    let tools = bench::lines(StreamKind::Tools, 40);
    let start = tools.iter().position(|line| line.contains(r#""part_kind":"tool-call"},"previous_part_kind""#));
    let start = start.expect("a tool call's start");
    let delta = tools.iter().find(|line| line.contains("args_delta")).expect("an argument delta");
    let call = |line: &str, sequence: u64, second: bool| {
        let mut item: Value = serde_json::from_str(line).unwrap();
        item["sequence"] = json!(sequence);
        if second {
            let event = &mut item["event"];
            event["index"] = json!(1);
            let part = if event.get("part").is_some() { &mut event["part"] } else { &mut event["delta"] };
            part["tool_call_id"] = json!("call-second");
        }
        item.to_string()
    };
    let mut lines = tools[..start].to_vec();
    let next = lines.len() as u64;
    lines.extend([
        call(&tools[start], next, false),
        call(&tools[start], next + 1, true),
        call(delta, next + 2, false),
        call(delta, next + 3, true),
        call(delta, next + 4, false),
    ]);
    let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
    let mut alone = DisplayFold::new(&run_id);
    for line in &lines {
        alone.replay_line(line).unwrap();
    }
    let mut mixed = DisplayFold::new(&run_id);
    let first_delta = lines.len() - 3;
    for line in &lines[..=first_delta] {
        mixed.replay_line(line).unwrap();
    }
    let mut reader = mixed.read_ahead();
    mixed.replay_line(&lines[first_delta + 1]).unwrap();
    mixed.replay_scanned(&reader.scan(&lines[first_delta + 2])).unwrap();
    mixed.end_read_ahead(reader);
    assert_eq!(mixed.export_json(), alone.export_json());
}

fn raw_lines(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("source.jsonl")).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn both_lanes_agree_on_every_recorded_stream_and_from_every_cut() {
    let cases = source_cases();
    assert!(!cases.is_empty(), "no corpus found");
    for dir in cases {
        let options = case_options(&dir);
        let lines = raw_lines(&dir);
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        let context = dir.display().to_string();
        compare(|| fold_for(&options, &run_id), &lines, 1, &context);
        // From a checkpoint at every cut: the restored fold continues the same way in both lanes.
        let retain = options.get("retain_content").and_then(Value::as_bool).unwrap_or(false);
        let mut prefix = fold_for(&options, &run_id);
        for (cut, line) in lines.iter().enumerate() {
            let checkpoint = prefix.export_json();
            let restored = || DisplayFold::restore_json(&checkpoint, retain, processor(&options)).unwrap();
            compare(restored, &lines[cut..], usize::MAX, &format!("{context} from cut {cut}"));
            let _ = prefix.fold_line(line, &mut Vec::new());
        }
    }
}

/// A checkpoint whose observer names its run but not its thread (written by other hands; a restore accepts it): the
/// next line fills the thread in on the general path, so no lane may take it (a part's start and an input did).
#[test]
fn a_restored_observer_without_its_thread_takes_the_general_path() {
    let lines = with_inputs(&bench::lines(StreamKind::Short, 40));
    let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
    let mut prefix = DisplayFold::new(&run_id);
    prefix.fold_line(&lines[0], &mut Vec::new()).unwrap();
    let mut checkpoint: Value = serde_json::from_str(&prefix.export_json()).unwrap();
    let observer = &mut checkpoint["continuation"]["observer"];
    assert!(observer["thread_id"].is_string() && observer["run_id"].is_string(), "{observer}");
    observer["thread_id"] = Value::Null;
    let checkpoint = checkpoint.to_string();
    let restored = || DisplayFold::restore_json(&checkpoint, false, None).unwrap();
    assert!(lines[1..].iter().any(|line| line.contains("a13n.input.text")), "an input next");
    compare(restored, &lines[1..], 1, "restored without its thread");
}

/// A journal spelled with whitespace between tokens (`json.dumps`' default separators, and other spacings) is
/// taken through the lanes by its compact spelling, with the general path's output and state: every recorded
/// stream, from its start, in each spacing; and most of its lines are taken so (before, all took the general path).
#[test]
fn spaced_streams_take_the_lanes_compacted_with_the_general_paths_results() {
    let compacted = respelled_streams(spaced, SPACINGS, |path| matches!(path, LanePath::Compacted(_)));
    assert!(compacted > 1000, "spaced lines taken compact: {compacted}");
}

/// A journal whose lines are laid out otherwise than the writers' (keys reversed or sorted, sorted and spaced, nulls
/// left out and an unknown key added) is taken through the lanes written in its model's layout, with the general
/// path's output and state: every recorded stream, from its start, in each layout; and many of its lines are taken
/// so (before, every line not in layout took the general path).
#[test]
fn relaid_streams_take_the_lanes_laid_out_with_the_general_paths_results() {
    let laid_out = respelled_streams(relaid, LAYOUTS, |path| matches!(path, LanePath::LaidOut(_)));
    assert!(laid_out > 1000, "lines taken laid out: {laid_out}");
}

/// Every recorded stream spelled each of `styles` ways by `respell`, compared lane against general path from its
/// start: how many lines took a path `counted` says is the respelling's.
fn respelled_streams(respell: fn(&str, u64) -> String, styles: u64, counted: fn(LanePath) -> bool) -> u64 {
    let cases = source_cases();
    assert!(!cases.is_empty(), "no corpus found");
    let mut taken = 0;
    for dir in cases {
        let options = case_options(&dir);
        let lines = raw_lines(&dir);
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        for style in 0..styles {
            let respelled: Vec<String> = lines.iter().map(|line| respell(line, style)).collect();
            compare(|| fold_for(&options, &run_id), &respelled, 8, &format!("{} style {style}", dir.display()));
            let mut fold = fold_for(&options, &run_id);
            for line in &respelled {
                let _ = fold.fold_line(line, &mut Vec::new());
            }
            taken += fold.lane_counts().iter().filter(|&(path, _)| counted(path)).map(|(_, count)| count).sum::<u64>();
        }
    }
    taken
}

#[test]
fn both_lanes_agree_on_generated_streams() {
    for seed in 0..64 {
        let lines: Vec<String> = random_stream(seed).iter().map(|item| item.to_value().to_string()).collect();
        let run_id = format!("run-g{seed}");
        for retain in [false, true] {
            let options = json!({ "retain_content": retain });
            let context = format!("seed {seed}, retain {retain}");
            compare(|| fold_for(&options, &run_id), &lines, 1, &context);
        }
    }
    for kind in StreamKind::ALL {
        let lines = bench::lines(kind, 3000);
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        for options in [json!({}), json!({"retain_content": true}), json!({"processor": "redact_text"})] {
            let context = format!("bench {} {options}", kind.name());
            compare(|| fold_for(&options, &run_id), &lines, 250, &context);
        }
    }
}

/// A host retiring items as the fold goes (the newest item, often still growing, or an older one): every path
/// makes the same of what comes after, and a checkpoint exported after a retirement continues the same way.
#[test]
fn both_lanes_agree_with_items_retired_as_the_fold_goes() {
    let mut streams: Vec<(String, Vec<String>)> = Vec::new();
    for dir in source_cases() {
        streams.push((dir.display().to_string(), raw_lines(&dir)));
    }
    for seed in 0..16 {
        streams.push((
            format!("seed {seed}"),
            random_stream(seed).iter().map(|item| item.to_value().to_string()).collect(),
        ));
    }
    for kind in StreamKind::ALL {
        streams.push((format!("bench {}", kind.name()), bench::lines(kind, 600)));
    }
    assert!(streams.len() > 16, "no corpus found");
    for (context, lines) in &streams {
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        let mut rng = Rng::new(context.len() as u64);
        let mut pick = |n: usize, fold: &DisplayFold| -> Option<String> {
            let count = fold.item_count();
            if count == 0 || rng.below(4) != 0 {
                return None;
            }
            let at = if n % 2 == 0 { count - 1 } else { rng.below(count as u64) as usize };
            fold.items().nth(at).map(|item| item.id)
        };
        let make = || DisplayFold::new(run_id.clone());
        compare_retiring(make, lines, 1, context, &mut pick);
        // A checkpoint exported after retirements restores to a fold that continues as the live one does.
        let mut live = DisplayFold::new(run_id.clone());
        for (n, line) in lines.iter().enumerate() {
            let _ = live.fold_line(line, &mut Vec::new());
            if let Some(id) = pick(n, &live) {
                live.retire(&id);
            }
            if n % 7 == 3 {
                let checkpoint = live.export_json();
                let restored = || DisplayFold::restore_json(&checkpoint, false, None).unwrap();
                compare(restored, &lines[n + 1..], usize::MAX, &format!("{context} retired, from cut {n}"));
            }
        }
    }
}

/// A content delta beyond the display's field bound: the lane appends exactly as bounding the whole text does.
#[test]
fn both_lanes_agree_across_the_field_bound() {
    let mut lines = bench::lines(StreamKind::Text, 4);
    let template = lines.remove(3);
    let big = "é".repeat(700);
    let mut body = Vec::new();
    for n in 0..40 {
        let mut item: Value = serde_json::from_str(&lines[2]).unwrap();
        item["sequence"] = json!(3 + n);
        item["event"] = json!({"index": 0, "delta": {"content_delta": big, "provider_name": null, "provider_details": null, "citations_delta": null, "part_delta_kind": "text"}, "event_kind": "part_delta"});
        body.push(item.to_string());
    }
    lines.splice(3..3, body);
    lines.push(template);
    let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
    for options in [json!({}), json!({"full_content": true}), json!({"retain_content": true})] {
        let context = format!("bound {options}");
        compare(|| fold_for(&options, &run_id), &lines, 1, &context);
    }
}

/// Every way a content-delta line can differ from the plain shape, applied at random points of a stream.
fn mutate(line: &str, choice: u64) -> String {
    let mut item: Value = serde_json::from_str(line).unwrap();
    match choice {
        0 => return line.replace(r#""content_delta":""#, r#""content_delta":"\u00e9\n\"q\" "#),
        1 => return line.replace(r#""thread_id":"#, r#" "thread_id" : "#),
        2 => return line.replacen('{', r#"{"sequence":0,"#, 1),
        3 => item["extra"] = json!(1),
        4 => item["event"]["delta"]["content_delta"] = json!(""),
        5 => item["event"]["delta"]["content_delta"] = Value::Null,
        6 => item["event"]["delta"]["part_delta_kind"] = json!("thinking"),
        7 => item["event"]["delta"]["signature_delta"] = json!("sig"),
        8 => item["event"]["index"] = json!(1),
        9 => item["event"]["index"] = json!(0.0),
        10 => item["thread_id"] = json!("another-thread"),
        11 => item["run_id"] = json!("another-run"),
        12 => item["occurred_at"] = json!("not a time"),
        13 => item["occurred_at"] = json!("0001-01-01T00:00:00+14:00"),
        14 => item["sequence"] = json!(-1),
        15 => item["event"]["delta"]["provider_details"] = json!({"nested": [1, 2, {"x": null}]}),
        16 => item["event"]["delta"]["citations_delta"] = json!([{"url": "u"}]),
        17 => item["event"]["event_kind"] = json!("part_start"),
        18 => item["event"]["unknown"] = Value::Null,
        19 => item["event"]["delta"]["tool_call_id"] = json!("call"),
        20 => item["thread_id"] = json!("  "),
        21 => item["event"]["delta"]["content_delta"] = json!(7),
        22 => return format!("{line} x"),
        _ => return line.replace(r#""run_id":"#, r#""result":null,"run_id":"#),
    }
    item.to_string()
}

#[test]
fn both_lanes_agree_on_mutated_delta_lines() {
    let mut rng = Rng::new(29);
    for kind in [StreamKind::Text, StreamKind::Short, StreamKind::Subagents] {
        let lines = bench::lines(kind, 600);
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        for choice in 0..24 {
            let mutated: Vec<String> = lines
                .iter()
                .map(|line| {
                    let delta = line.contains(r#""part_delta""#) && !line.contains("args_delta");
                    if delta && rng.below(5) == 0 {
                        mutate(line, choice)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            let context = format!("{} mutation {choice}", kind.name());
            compare(|| fold_for(&json!({}), &run_id), &mutated, 50, &context);
        }
    }
}

/// The tools stream, and a subagents stream whose child streams a tool call: argument deltas in root and child.
fn argument_streams() -> Vec<(&'static str, Vec<String>)> {
    let tools = bench::lines(StreamKind::Tools, 600);
    let call: Vec<String> = tools[2..15].to_vec();
    assert!(call.iter().filter(|line| line.contains("args_delta")).count() >= 10, "a streamed call");
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 300), &call);
    vec![("tools", tools), ("child tools", child)]
}

/// An argument stream past the observation bound: the lane drops the held copy exactly where the general path
/// does, and keeps it whole when content is retained.
#[test]
fn both_lanes_agree_across_the_observation_bound() {
    let tools = bench::lines(StreamKind::Tools, 40);
    let delta = tools.iter().find(|line| line.contains("args_delta")).unwrap();
    let big = "\u{e9}\"".repeat(1500);
    let mut lines = tools[..3].to_vec();
    for n in 0..30 {
        let mut item: Value = serde_json::from_str(delta).unwrap();
        item["sequence"] = json!(3 + n);
        item["event"]["delta"]["args_delta"] = json!(big);
        lines.push(item.to_string());
    }
    lines.extend(tools[14..].iter().cloned());
    let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
    for options in [json!({}), json!({"retain_content": true})] {
        let context = format!("observation bound {options}");
        compare(|| fold_for(&options, &run_id), &lines, 1, &context);
    }
}

/// The short stream, and a subagents stream whose child streams a text part with its start and end.
fn text_part_streams() -> Vec<(&'static str, Vec<String>)> {
    let mut short = bench::lines(StreamKind::Short, 200);
    let message: Vec<String> = short[2..13].to_vec();
    // A message whose start and end carry its whole text, with no deltas between.
    let whole = [&message[0], &message[10]].map(|line| line.replace(r#""content":"","#, r#""content":"Hi","#));
    short.splice(13..13, whole);
    assert!(message.first().is_some_and(|line| is_text_part_line(line)), "a part start");
    assert!(message.last().is_some_and(|line| is_text_part_line(line)), "a part end");
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 120), &message);
    // The same messages as reasoning: thinking parts' starts, deltas and ends.
    let thinking = short
        .iter()
        .map(|line| {
            line.replace(r#""part_kind":"text""#, r#""part_kind":"thinking""#)
                .replace(r#""part_delta_kind":"text""#, r#""part_delta_kind":"thinking""#)
        })
        .collect();
    vec![("short", short), ("child text", child), ("thinking", thinking)]
}

/// Fold `streams` with each change of `family` made to about one in `one_in` of the lines it applies to, under
/// every content policy, comparing both lanes (checkpoints every `check_every` lines).
fn compare_mutations(
    family: &Mutations,
    streams: Vec<(&str, Vec<String>)>,
    seed: u64,
    one_in: u64,
    check_every: usize,
) {
    let mut rng = Rng::new(seed);
    for (name, lines) in streams {
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        for choice in 0..=family.count {
            // The first line binds the run, so it stays as it is.
            let mutated = family.apply(&lines, choice, |n| n > 0 && rng.below(one_in) == 0);
            for options in [json!({}), json!({"retain_content": true}), json!({"full_content": true})] {
                let context = format!("{name}, {} change {choice}, {options}", family.name);
                compare(|| fold_for(&options, &run_id), &mutated, check_every, &context);
            }
        }
    }
}

/// The tools stream and a subagents stream whose child streams a whole tool call (start to return).
fn tool_streams() -> Vec<(&'static str, Vec<String>)> {
    let tools = bench::lines(StreamKind::Tools, 300);
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 150), &tools[2..17]);
    vec![("tools", tools), ("child tools", child)]
}

#[test]
fn both_lanes_agree_on_mutated_argument_lines() {
    compare_mutations(&ARGUMENT_DELTAS, argument_streams(), 31, 4, 40);
}

#[test]
fn both_lanes_agree_on_mutated_carried_lines() {
    let mut streams = argument_streams();
    streams.push(("short", bench::lines(StreamKind::Short, 400)));
    compare_mutations(&CARRIED_LINES, streams, 37, 3, 40);
}

/// Subagent streams, with a child's text still open at its completion, its tool call, and a nested child.
fn delegation_streams() -> Vec<(&'static str, Vec<String>)> {
    let subagents = bench::lines(StreamKind::Subagents, 300);
    let tools = bench::lines(StreamKind::Tools, 40);
    let child_tools = into_child_run(&bench::lines(StreamKind::Subagents, 150), &tools[2..17]);
    vec![("subagents", subagents), ("child tools", child_tools)]
}

#[test]
fn both_lanes_agree_on_mutated_delegations() {
    compare_mutations(&DELEGATIONS, delegation_streams(), 53, 2, 8);
}

/// Checkpoints after every line: a wrong cursor flag shows only in the state until a later end.
#[test]
fn both_lanes_agree_on_mutated_text_part_lines() {
    compare_mutations(&TEXT_PARTS, text_part_streams(), 41, 3, 1);
}

#[test]
fn both_lanes_agree_on_mutated_tool_call_ends() {
    compare_mutations(&TOOL_CALL_ENDS, argument_streams(), 43, 2, 16);
}

#[test]
fn both_lanes_agree_on_mutated_tool_returns() {
    compare_mutations(&TOOL_RETURNS, tool_streams(), 47, 2, 16);
}

/// Results the observer does not present: the observer carries most of them through whole, and the fold's carried
/// lane folds them into their calls' items. Each of the family's changes once, with the outcomes taken in turn (the
/// observer's lanes test meets every pairing).
#[test]
fn both_lanes_agree_on_mutated_unpresented_results() {
    let once = Mutations {
        count: UNPRESENTED_RESULTS.count / 4,
        mutate: |line, change| mutate_unpresented_result(line, change * 4 + change % 4),
        ..UNPRESENTED_RESULTS
    };
    compare_mutations(&once, tool_streams(), 61, 2, 16);
}

/// Every failing outcome of a tool's return, as the Harness writes it, takes the fold's carried lane (the general
/// path gives the same, above): the lane takes each result the tools stream's return lane took before.
#[test]
fn unpresented_results_take_the_carried_lane() {
    use a13n_stream_protocol::display::FastLane;
    let lines = bench::lines(StreamKind::Tools, 300);
    let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
    let counts = |lines: &[String]| {
        let mut fold = DisplayFold::new(&run_id);
        for line in lines {
            fold.fold_line(line, &mut Vec::new()).unwrap();
        }
        fold.lane_counts().clone()
    };
    let before = counts(&lines);
    let results = before.get(LanePath::Taken(FastLane::ToolReturn));
    assert!(results > 10, "tool returns in the stream: {results}");
    for outcome in 0..4 {
        let after = counts(&UNPRESENTED_RESULTS.apply(&lines, outcome, |_| true));
        let carried = before.get(LanePath::Taken(FastLane::Carried)) + results;
        assert_eq!(after.get(LanePath::Taken(FastLane::Carried)), carried, "outcome {outcome}");
        assert_eq!(after.get(LanePath::TakeDeclined(FastLane::Carried)), 0, "outcome {outcome}");
    }
}

/// The tools stream with text inputs, and a subagents stream whose child has them in its own run.
fn input_streams() -> Vec<(&'static str, Vec<String>)> {
    let tools = with_inputs(&bench::lines(StreamKind::Tools, 200));
    let child = into_child_run(&bench::lines(StreamKind::Subagents, 150), &tools[1..4]);
    vec![("tools", tools), ("child inputs", child)]
}

/// Every input line changes: a stream has only a few.
#[test]
fn both_lanes_agree_on_mutated_inputs() {
    compare_mutations(&INPUTS, input_streams(), 59, 1, 4);
}

/// The inputs of a root run and of an inline child take the input lane (the general path gives the same, above),
/// but for the child's first line, which binds its run to its thread on the general path.
#[test]
fn text_inputs_take_the_input_lane() {
    use a13n_stream_protocol::display::{FastLane, LanePath};
    for ((name, lines), taken) in input_streams().into_iter().zip([3, 2]) {
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        let mut fold = DisplayFold::new(&run_id);
        for line in &lines {
            fold.fold_line(line, &mut Vec::new()).unwrap();
        }
        assert_eq!(fold.lane_counts().get(LanePath::Taken(FastLane::Input)), taken, "{name}");
    }
}

/// A part that ends with no open cursor (its start lost, or ended twice) is reopened and closed by the general
/// path's rules, which the part lane now converts through too: the lane takes it, with the general path's bytes.
#[test]
fn a_part_ended_without_a_cursor_takes_the_part_lane_with_the_general_paths_bytes() {
    use a13n_stream_protocol::display::{FastLane, LanePath};
    for kind in ["text", "thinking"] {
        let short = bench::lines(StreamKind::Short, 200);
        let mut lines: Vec<String> = short
            .iter()
            .map(|line| {
                line.replace(r#""part_kind":"text""#, &format!(r#""part_kind":"{kind}""#))
                    .replace(r#""part_delta_kind":"text""#, &format!(r#""part_delta_kind":"{kind}""#))
            })
            .collect();
        let end = lines.iter().position(|line| line.contains(r#""event_kind":"part_end""#)).expect("a part's end");
        // The same end again: the part is closed, so the second end has no cursor.
        let again = lines[end].replace(r#""content":""#, r#""content":"again "#);
        lines.insert(end + 1, again);
        let run_id = SourceItem::from_json(&lines[0]).unwrap().run_id;
        compare(|| fold_for(&json!({}), &run_id), &lines, 1, &format!("{kind} ended twice"));
        // A thinking part here is a text part's line relabelled, not in a thinking part's layout: no lane takes it.
        if kind != "text" {
            continue;
        }
        let mut fold = fold_for(&json!({}), &run_id);
        let mut out = Vec::new();
        for line in &lines[..=end] {
            fold.fold_line(line, &mut out).unwrap();
        }
        let part = LanePath::Taken(FastLane::Part);
        let before = fold.lane_counts().get(part);
        fold.fold_line(&lines[end + 1], &mut out).unwrap();
        assert_eq!(fold.lane_counts().get(part), before + 1, "{kind}: the second end took the part lane");
    }
}
