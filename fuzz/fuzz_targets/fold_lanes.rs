//! Any lines after a prefix that opens a text part, a thinking part and a tool call with streamed arguments:
//! `DisplayFold::fold_line` and `HarnessAguiStreamObserver::observe_line` (whose fast lanes take deltas, part
//! starts and ends, and lines carried through whole) equal decoding and the general path, byte for byte, error
//! for error, state for state; `DisplayFold::replay_line` (the same fold, no output) leaves the same state, and so
//! do lines read ahead by a `ReadAhead` (all of them before the fold takes any), odd ones folded with their
//! observed lines compared (`fold_scanned_line`), even ones replayed (`replay_scanned`); and lines read
//! ahead for an observer (`observe_scanned`) give the same events. Both readers leave some lines (those whose
//! length is a multiple of three) for their taker to read itself, as the CLI's reader does when its taker waits.
#![no_main]

use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver};
use a13n_testkit::{fold_line_generally, observe_line_generally};
use libfuzzer_sys::fuzz_target;

const PREFIX: [&str; 6] = [
    r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00Z","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#,
    r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:00.5Z","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"model_request_started","request_id":"m","request_index":0,"message_count":1}}}"#,
    r#"{"thread_id":"t","run_id":"r","sequence":2,"occurred_at":"2026-11-29T12:00:01Z","event":{"index":0,"part":{"content":"","part_kind":"text"},"event_kind":"part_start"}}"#,
    r#"{"thread_id":"t","run_id":"r","sequence":3,"occurred_at":"2026-11-29T12:00:02Z","event":{"index":1,"part":{"content":"","part_kind":"thinking"},"event_kind":"part_start"}}"#,
    r#"{"thread_id":"t","run_id":"r","sequence":4,"occurred_at":"2026-11-29T12:00:03Z","event":{"index":2,"part":{"tool_name":"search","args":"","tool_call_id":"c","part_kind":"tool-call"},"event_kind":"part_start"}}"#,
    r#"{"thread_id":"t","run_id":"r","sequence":5,"occurred_at":"2026-11-29T12:00:04Z","event":{"index":2,"delta":{"tool_name_delta":null,"args_delta":"{","tool_call_id":"c","part_delta_kind":"tool_call"},"event_kind":"part_delta"}}"#,
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (mut reference, mut lane, mut replayed) = (DisplayFold::new("r"), DisplayFold::new("r"), DisplayFold::new("r"));
    let observer = || HarnessAguiStreamObserver::new().retain_events(false);
    let (mut general, mut fast) = (observer(), observer());
    let (mut read_ahead, mut ahead) = (DisplayFold::new("r"), observer());
    let (mut reader, mut observer_reader) = (read_ahead.read_ahead(), ahead.read_ahead());
    let left = |line: &str| line.len() % 3 == 0;
    let lines = || PREFIX.into_iter().chain(text.lines());
    let scanned: Vec<_> = lines().map(|line| (!left(line)).then(|| reader.scan(line))).collect();
    let scanned_ahead: Vec<_> = lines().map(|line| (!left(line)).then(|| observer_reader.scan(line))).collect();
    for (n, ((line, scanned), scanned_ahead)) in lines().zip(&scanned).zip(&scanned_ahead).enumerate() {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        let expected_result = fold_line_generally(&mut reference, line, &mut expected);
        let got_result = lane.fold_line(line, &mut got);
        assert_eq!(format!("{got_result:?}"), format!("{expected_result:?}"), "{line}");
        assert_eq!(got, expected, "{line}");
        let replay_result = replayed.replay_line(line);
        assert_eq!(format!("{replay_result:?}"), format!("{expected_result:?}"), "{line}");
        // Odd lines are folded with their observed lines written, even ones replayed.
        let mut read = Vec::new();
        let read_result = match (scanned, n % 2 == 1) {
            (Some(scanned), true) => read_ahead.fold_scanned_line(scanned, &mut read),
            (None, true) => read_ahead.fold_line(line, &mut read),
            (Some(scanned), false) => read_ahead.replay_scanned(scanned),
            (None, false) => read_ahead.replay_line(line),
        };
        assert_eq!(format!("{read_result:?}"), format!("{expected_result:?}"), "{line}");
        if n % 2 == 1 {
            assert_eq!(read, expected, "{line}");
        }
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        let expected_result = observe_line_generally(&mut general, line, &mut expected);
        let got_result = fast.observe_line(line, &mut got);
        assert_eq!(format!("{got_result:?}"), format!("{expected_result:?}"), "{line}");
        assert_eq!(got, expected, "{line}");
        let mut read = Vec::new();
        let read_result = match scanned_ahead {
            Some(scanned) => ahead.observe_scanned(scanned, &mut read),
            None => ahead.observe_line(line, &mut read),
        };
        assert_eq!(format!("{read_result:?}"), format!("{expected_result:?}"), "{line}");
        assert_eq!(read, expected, "{line}");
    }
    assert_eq!(lane.export_json(), reference.export_json());
    assert_eq!(replayed.export_json(), reference.export_json());
    read_ahead.end_read_ahead(reader);
    assert_eq!(read_ahead.export_json(), reference.export_json());
    assert_eq!(fast.export().to_json(), general.export().to_json());
    drop(scanned_ahead);
    ahead.end_read_ahead(observer_reader);
    assert_eq!(ahead.export().to_json(), general.export().to_json());
});
