//! Any lines after a prefix that opens a text part, a thinking part and a tool call with streamed arguments:
//! `DisplayFold::fold_line` and `HarnessAguiStreamObserver::observe_line` (whose fast lanes take deltas, part
//! starts and ends, and lines carried through whole) equal decoding and the general path, byte for byte, error
//! for error, state for state; and `DisplayFold::replay_line` (the same fold, no output) and `replay_scanned` (the
//! lines read ahead by a `ReadAhead`, all of them before the fold takes any) leave the same state.
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
    let mut read_ahead = DisplayFold::new("r");
    let mut reader = read_ahead.read_ahead();
    let scanned: Vec<_> = PREFIX.into_iter().chain(text.lines()).map(|line| reader.scan(line)).collect();
    for (line, scanned) in PREFIX.into_iter().chain(text.lines()).zip(&scanned) {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        let expected_result = fold_line_generally(&mut reference, line, &mut expected);
        let got_result = lane.fold_line(line, &mut got);
        assert_eq!(format!("{got_result:?}"), format!("{expected_result:?}"), "{line}");
        assert_eq!(got, expected, "{line}");
        let replay_result = replayed.replay_line(line);
        assert_eq!(format!("{replay_result:?}"), format!("{expected_result:?}"), "{line}");
        let read_result = read_ahead.replay_scanned(scanned);
        assert_eq!(format!("{read_result:?}"), format!("{expected_result:?}"), "{line}");
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        let expected_result = observe_line_generally(&mut general, line, &mut expected);
        let got_result = fast.observe_line(line, &mut got);
        assert_eq!(format!("{got_result:?}"), format!("{expected_result:?}"), "{line}");
        assert_eq!(got, expected, "{line}");
    }
    assert_eq!(lane.export_json(), reference.export_json());
    assert_eq!(replayed.export_json(), reference.export_json());
    read_ahead.end_read_ahead(reader);
    assert_eq!(read_ahead.export_json(), reference.export_json());
    assert_eq!(fast.export().to_json(), general.export().to_json());
});
