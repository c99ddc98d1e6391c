//! Behaviour of the public API beyond the recorded corpus.

use a13n_stream_protocol::display::ItemState;
use a13n_stream_protocol::{DisplayFold, FoldError, HarnessAguiObserver, HarnessAguiStreamObserver, SourceItem};
use a13n_testkit::random_stream;
use serde_json::json;

fn with_run(item: &SourceItem, thread: &str, run: &str) -> SourceItem {
    let mut value = item.to_value();
    value["thread_id"] = thread.into();
    value["run_id"] = run.into();
    SourceItem::from_value(value).unwrap()
}

#[test]
fn a_single_run_observer_rejects_another_run_or_thread() {
    let items = random_stream(1);
    let mut observer = HarnessAguiObserver::new();
    observer.observe(&items[0]).unwrap();
    let other_run = observer.observe(&with_run(&items[1], &items[1].thread_id, "run-other")).unwrap_err();
    assert_eq!(other_run.to_string(), "observation rejected: Harness Run correlation changed within one observer");
    let other_thread = observer.observe(&with_run(&items[1], "thread-other", &items[1].run_id)).unwrap_err();
    assert!(other_thread.to_string().contains("Thread correlation changed"));
    assert_eq!(observer.run_id(), Some(items[0].run_id.as_str()));
    // The stream observer accepts another run as an inline child, attributed to it.
    let mut stream = HarnessAguiStreamObserver::new();
    stream.observe(&items[0]).unwrap();
    let child_text = SourceItem::from_value(json!({
        "thread_id": "thread-child", "run_id": "run-child", "sequence": 0,
        "occurred_at": "2026-11-29T12:00:00+00:00",
        "event": {"index": 0, "part": {"content": "hi", "id": null, "part_kind": "text"}, "event_kind": "part_start"}
    }))
    .unwrap();
    let events = stream.observe(&child_text).unwrap();
    assert!(events.iter().all(|event| event.subagent_run_id() == Some("run-child")));
}

#[test]
fn capture_delta_returns_changes_since_the_last_capture_only() {
    let items = random_stream(2);
    let mut fold = DisplayFold::new(items[0].run_id.clone());
    for item in &items[..5] {
        fold.fold_source(item).unwrap();
    }
    let first = fold.capture_delta();
    assert_eq!(first.items.len(), fold.items().count());
    fold.clear_changed();
    assert!(fold.capture_delta().items.is_empty(), "nothing changed since");
    fold.fold_source(&items[5]).unwrap();
    let second = fold.capture_delta();
    assert!(!second.items.is_empty());
    assert!(second.items.windows(2).all(|pair| pair[0].ordinal < pair[1].ordinal));
    assert_eq!(second.continuation, fold.export_continuation());
    assert!(!fold.changed().is_empty(), "live changes are tracked separately");
}

#[test]
fn the_continuation_accessors_read_what_an_export_would_say() {
    for seed in 0..8 {
        let items = random_stream(seed);
        let mut fold = DisplayFold::new(items[0].run_id.clone());
        for item in &items {
            let _ = fold.fold_source(item);
            let continuation = fold.export_continuation();
            assert_eq!(fold.next_ordinal(), continuation.next_ordinal);
            assert_eq!(fold.full_content(), continuation.full_content);
            let groups: Vec<(String, String)> =
                fold.response_groups().map(|(scope, group)| (scope.to_owned(), group.to_owned())).collect();
            let exported: Vec<(String, String)> = continuation.response_groups.into_iter().collect();
            assert_eq!(groups, exported);
        }
    }
}

#[test]
fn a_retired_item_leaves_the_display_its_changes_and_its_checkpoint() {
    let items = random_stream(5);
    let mut fold = DisplayFold::new(items[0].run_id.clone());
    let half = items.len() / 2;
    for item in &items[..half] {
        let _ = fold.fold_source(item);
    }
    let before: Vec<_> = fold.items().collect();
    assert!(before.len() >= 3, "a stream with items to retire");
    let next = fold.next_ordinal();
    fold.clear_changed();
    fold.set_changed(&before[0].id, true);
    fold.set_changed(&before[2].id, true);
    let retired = fold.retire(&before[1].id).expect("the item is there");
    assert_eq!(retired, before[1]);
    assert!(fold.retire(&before[1].id).is_none(), "retired once");
    assert!(fold.item(&before[1].id).is_none());
    assert_eq!(fold.item_count(), before.len() - 1);
    assert_eq!(fold.changed(), vec![before[0].id.clone(), before[2].id.clone()], "the others' marks stay theirs");
    assert_eq!(fold.next_ordinal(), next, "ordinals are not reused");
    let kept: Vec<_> = fold.items().collect();
    assert_eq!(kept.iter().map(|item| item.ordinal).collect::<Vec<_>>(), {
        let mut ordinals: Vec<u64> = before.iter().map(|item| item.ordinal).collect();
        ordinals.remove(1);
        ordinals
    });
    let delta = fold.capture_delta();
    assert!(delta.items.iter().all(|item| item.id != before[1].id));
    assert_eq!(delta.items.len(), before.len() - 1, "every other item is still new to the checkpoint");
    let snapshot = fold.export();
    assert!(snapshot.items.iter().all(|item| item.id != before[1].id));
    for item in &items[half..] {
        let _ = fold.fold_source(item);
    }
    // An item an event touched after it was retired is made anew, after every item it had come before.
    if let Some(remade) = fold.item(&before[1].id) {
        assert!(remade.ordinal >= next, "a retired ordinal is not reused");
    }
    assert_eq!(fold.item(&before[0].id).map(|item| item.ordinal), Some(before[0].ordinal));
    assert!(fold.items().map(|item| item.ordinal).collect::<Vec<_>>().windows(2).all(|pair| pair[0] < pair[1]));
}

#[test]
fn retiring_many_at_once_is_retiring_each_in_turn() {
    for seed in 0..6 {
        let items = random_stream(seed);
        let (mut one_by_one, mut at_once) =
            (DisplayFold::new(items[0].run_id.clone()), DisplayFold::new(items[0].run_id.clone()));
        for (n, item) in items.iter().enumerate() {
            let _ = one_by_one.fold_source(item);
            let _ = at_once.fold_source(item);
            if n % 5 != 4 {
                continue;
            }
            let ids: Vec<String> = one_by_one.items().map(|item| item.id).step_by(2).collect();
            let mut asked: Vec<&str> = ids.iter().map(String::as_str).collect();
            asked.push("itm_absent");
            asked.push(asked[0]);
            for id in &ids {
                assert!(one_by_one.retire(id).is_some());
            }
            assert_eq!(at_once.retire_all(asked), ids.len(), "absent and repeated ids are passed over");
            assert!(ids.iter().all(|id| !at_once.contains(id)));
            assert_eq!(at_once.changed(), one_by_one.changed(), "seed {seed}, line {n}");
            assert_eq!(at_once.export_json(), one_by_one.export_json(), "seed {seed}, line {n}");
            if n % 3 == 0 {
                one_by_one.clear_changed();
                at_once.clear_changed();
            }
        }
        assert_eq!(at_once.capture_delta(), one_by_one.capture_delta());
    }
}

#[test]
fn a_checkpoint_of_another_run_attempt_or_policy_is_rejected() {
    let mut fold = DisplayFold::new("run-a");
    fold.fold(
        vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "run-a", "timestamp": 1})
            .as_object()
            .cloned()
            .unwrap()],
        None,
    )
    .unwrap();
    let snapshot = fold.export();
    for (run, attempt, full) in [("run-b", 0, false), ("run-a", 1, false), ("run-a", 0, true)] {
        let error = DisplayFold::restore_checked(run, attempt, full, snapshot.clone(), false, None).unwrap_err();
        assert!(matches!(error, FoldError::Continuation(_)), "{error}");
    }
    let restored = DisplayFold::restore_checked("run-a", 0, false, snapshot, false, None).unwrap();
    assert_eq!(restored.position().sequence, 1);
}

#[test]
fn failed_tool_results_mark_the_call_failed_with_the_message() {
    let lines = [
        r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"index":0,"part":{"tool_name":"edit","args":{"p":1},"tool_call_id":"c1","part_kind":"tool-call"},"event_kind":"part_end"}}"#,
        r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{"part":{"tool_name":"edit","content":"disk full","tool_call_id":"c1","metadata":null,"outcome":"failed","part_kind":"tool-return"},"content":null,"event_kind":"function_tool_result"}}"#,
    ];
    let mut fold = DisplayFold::new("r");
    let mut last = Vec::new();
    for line in lines {
        last = fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
    }
    let reference = last.last().unwrap().item.as_ref().unwrap();
    assert_eq!(reference.state, ItemState::Failed);
    assert_eq!(reference.failure.as_ref().unwrap()["message"], "disk full");
    let call = fold.items().find(|item| item.content.get("toolCallId") == Some(&json!("c1"))).unwrap();
    assert_eq!(call.content["arguments"], r#"{"p":1}"#);
    assert_eq!(call.content["failure"]["code"], "tool_failed");
}

#[test]
fn events_without_a_timestamp_take_the_hosts_clock() {
    let clock = a13n_stream_protocol::UtcTime::from_epoch_ms(1_700_000_000_000).unwrap();
    let mut fold = DisplayFold::with_options(
        "r",
        a13n_stream_protocol::DisplayOptions { clock: Some(Box::new(move || clock)), ..Default::default() },
    );
    fold.fold(vec![json!({"type": "TEXT_MESSAGE_START", "messageId": "m"}).as_object().cloned().unwrap()], None)
        .unwrap();
    assert_eq!(fold.items().next().unwrap().started_at, clock);
}

/// Regression: atomicity once relied on cloning every Run's state per item (quadratic with many children).
/// The narrower rollback must still remove a child's entry and thread binding created by a rejected item.
#[test]
fn a_rejected_first_item_of_a_child_leaves_no_child_state() {
    use a13n_stream_protocol::agui::CustomEvent;
    use a13n_stream_protocol::Event;
    let items = random_stream(4);
    let reject_child_text = a13n_stream_protocol::infallible(|_, event| match event {
        Event::TextMessageStart(start) if start.subagent_run_id.is_some() => {
            Some(Event::Custom(CustomEvent { name: "swapped".into(), ..CustomEvent::default() }))
        }
        other => Some(other),
    });
    let mut observer = HarnessAguiStreamObserver::new().with_processor(reject_child_text);
    observer.observe(&items[0]).unwrap();
    let before = observer.export();
    let child_text = SourceItem::from_value(json!({
        "thread_id": "thread-new-child", "run_id": "run-new-child", "sequence": 0,
        "occurred_at": "2026-11-29T12:00:00+00:00",
        "event": {"index": 0, "part": {"content": "hi", "id": null, "part_kind": "text"}, "event_kind": "part_start"}
    }))
    .unwrap();
    assert!(observer.observe(&child_text).unwrap_err().is_observation());
    assert_eq!(observer.export(), before);
    assert_eq!(observer.export().to_json(), before.to_json(), "entry order is restored too");
    // A rejected delegation (invalid payload) leaves no child entry either.
    let bad_delegation = SourceItem::from_value(json!({
        "thread_id": items[0].thread_id, "run_id": items[0].run_id, "sequence": 1,
        "occurred_at": "2026-11-29T12:00:00+00:00",
        "event": {"schema_version": "1", "kind": "delegation", "payload": {"type": "inline_delegation", "invocation_id": "nope",
            "action": "started", "child_instance_id": "i", "subagent": "s", "status": "running", "parent_run_id": "p",
            "parent_agent_instance_id": "a", "child_run_id": "run-z"}}
    }))
    .unwrap();
    assert!(!observer.observe(&bad_delegation).unwrap_err().is_observation(), "a malformed payload is bad input");
    assert_eq!(observer.export().to_json(), before.to_json());
}

#[test]
fn stream_positions_parse_strictly_and_round_trip() {
    use a13n_stream_protocol::StreamPosition;
    let position: StreamPosition = "0-42".parse().unwrap();
    assert_eq!(position, StreamPosition { attempt: 0, sequence: 42 });
    assert_eq!(position.to_string(), "0-42");
    assert_eq!("3-0".parse::<StreamPosition>().unwrap(), StreamPosition { attempt: 3, sequence: 0 });
    // Regression: the host read `-5` and `0--5` as 5 and ignored the attempt of `x-40`.
    for bad in [
        "-5",
        "0--5",
        "x-40",
        "42",
        "0-",
        "-",
        "0-+5",
        "0- 5",
        " 0-5",
        "0-05",
        "00-5",
        "0-5-1",
        "0-18446744073709551616",
        "",
    ] {
        assert!(bad.parse::<StreamPosition>().is_err(), "{bad:?} must be refused");
    }
    assert_eq!("0-18446744073709551615".parse::<StreamPosition>().unwrap().sequence, u64::MAX);
}

#[test]
fn a_checkpoint_restores_the_same_from_its_parts() {
    use a13n_stream_protocol::{DisplayFold, SourceItem};
    let lines = a13n_testkit::text_stream("t", "r", 5);
    let mut fold = DisplayFold::new("r");
    for line in &lines[..4] {
        fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
    }
    let snapshot = fold.export();
    let items: Vec<String> = snapshot.items.iter().map(|item| item.to_json()).collect();
    let continuation = snapshot.continuation.to_json();
    let mut from_parts =
        DisplayFold::restore_parts(items.iter().map(String::as_str), &continuation, false, None).unwrap();
    let mut whole = DisplayFold::restore_json(&fold.export_json(), false, None).unwrap();
    for line in &lines[4..] {
        let item = SourceItem::from_json(line).unwrap();
        from_parts.fold_source(&item).unwrap();
        whole.fold_source(&item).unwrap();
    }
    assert_eq!(from_parts.export_json(), whole.export_json());
    let bad = DisplayFold::restore_parts(["{}"], &continuation, false, None).unwrap_err();
    assert!(bad.to_string().contains("items.0"), "{bad}");
}

#[test]
fn a_restored_checkpoint_is_written_back_as_a_fully_decoded_one_would_be() {
    use a13n_stream_protocol::{DisplayFold, DisplaySnapshot, SourceItem};
    let lines = a13n_testkit::text_stream("t", "r", 6);
    let mut fold = DisplayFold::new("r");
    for line in &lines {
        fold.fold_source(&SourceItem::from_json(line).unwrap()).unwrap();
    }
    let text = fold.export_json();
    let first_content = r#""content":{"type":"RUN_STARTED","#;
    assert!(text.contains(first_content), "{text}");
    // Content that is valid but not what a writer writes, in the writers' layout (read in one pass) and in
    // another layout (decoded by serde): kept verbatim it would be exported wrongly.
    let variants = [
        text.replacen(first_content, r#""content":{"type":"RUN_STARTED","type":"RUN_STARTED","#, 1),
        text.replacen(first_content, r#""content":{"type": "RUN_STARTED","#, 1),
        text.replacen(first_content, r#""content":{"extra":1.50,"type":"RUN_STARTED","#, 1),
        text.replacen(first_content, r#""content":{"extra":"\u00e9","type":"RUN_STARTED","#, 1),
        text.replacen(r#"{"items":["#, "{\"items\": [", 1),
        format!("{text}\n"),
        // Stream positions are plain strings to the reference: a spelling that does not read back as numbers
        // (a sign, a leading zero) is kept.
        text.replacen(r#""first_stream_id":"0-1""#, r#""first_stream_id":"+0-1""#, 1),
        text.replacen(r#""last_stream_id":"0-1""#, r#""last_stream_id":"0-01""#, 1),
    ];
    for variant in variants {
        assert_ne!(variant, text);
        let expected = DisplaySnapshot::from_json(&variant).unwrap().to_json();
        let restored = DisplayFold::restore_json(&variant, false, None).unwrap();
        assert_eq!(restored.export_json(), expected, "{variant}");
        let typed = DisplayFold::restore(DisplaySnapshot::from_json(&variant).unwrap(), false, None).unwrap();
        assert_eq!(typed.export_json(), expected, "{variant}");
        let mut out = Vec::new();
        restored.write_export(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}

#[test]
fn a_refusing_processor_rejects_the_whole_item_and_commits_nothing() {
    use a13n_stream_protocol::{Event, ObservationKind, ObserveError, ProcessorRefusal};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let lines = a13n_testkit::text_stream("t", "r", 4);
    let items: Vec<SourceItem> = lines.iter().map(|line| SourceItem::from_json(line).unwrap()).collect();
    let rejected = |message: &str| (Some(ObservationKind::ProcessorChangedStructure), message.to_owned());
    let refusals = [
        (ProcessorRefusal::Failed, (None, ObserveError::Processor.to_string())),
        (
            ProcessorRefusal::NotAnEvent,
            rejected("observation rejected: The event processor returned a non-AG-UI value"),
        ),
        (
            ProcessorRefusal::InvalidEvent,
            rejected("observation rejected: The event processor returned an invalid AG-UI event"),
        ),
    ];
    for (refusal, expected) in refusals {
        let refuse = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&refuse);
        let processor: a13n_stream_protocol::AguiEventProcessor =
            Box::new(move |_, event: Event| if flag.load(Ordering::Relaxed) { Err(refusal) } else { Ok(Some(event)) });
        let mut observer = HarnessAguiStreamObserver::new().with_processor(processor);
        observer.observe(&items[0]).unwrap();
        let (before, count) = (observer.export(), observer.event_count());
        refuse.store(true, Ordering::Relaxed);
        // The second item opens a text part: a converted event the processor refuses.
        let error = observer.observe(&items[1]).unwrap_err();
        assert_eq!((error.rejection(), error.to_string()), expected);
        assert_eq!((observer.export(), observer.event_count()), (before, count));
        refuse.store(false, Ordering::Relaxed);
        assert!(!observer.observe(&items[1]).unwrap().is_empty());
    }
}

/// What one observer observed, handed to a fresh one (`take_resumption`, then `finish_resume`): the second
/// continues exactly as the first would have, with its events, and the first is fresh again.
#[test]
fn a_resumption_taken_from_one_observer_is_committed_by_another() {
    for seed in 0..8 {
        let items = random_stream(seed);
        let cut = items.len() / 2;
        let mut first = HarnessAguiStreamObserver::new();
        for item in &items[..cut] {
            let _ = first.observe(item);
        }
        let (exported, count) = (first.export().to_json(), first.event_count());
        let mut whole = HarnessAguiStreamObserver::new();
        for item in &items[..cut] {
            let _ = whole.observe(item);
        }
        let mut second = HarnessAguiStreamObserver::new();
        second.finish_resume(first.take_resumption()).unwrap();
        assert_eq!((second.export().to_json(), second.event_count()), (exported, count), "seed {seed}");
        assert!(first.begin_resume().is_ok(), "seed {seed}: the observer it was taken from is fresh again");
        for item in &items[cut..] {
            assert_eq!(second.observe(item).ok(), whole.observe(item).ok(), "seed {seed}");
        }
    }
}
