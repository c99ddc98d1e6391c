//! Sequences of fragment frames through the assembler: never a panic, never more pending events or bytes than
//! its bounds, and an exported state restores to the same assembler.
#![no_main]

use a13n_stream_protocol::fragments::{Accepted, CustomEventAssembler, FRAGMENT_EVENT_NAME};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

#[derive(Arbitrary, Debug)]
struct Frame {
    id: u8,
    index: i8,
    count: i8,
    data: String,
    other_name: bool,
}

#[derive(Arbitrary, Debug)]
struct Input {
    max_bytes: u16,
    max_pending: u8,
    frames: Vec<Frame>,
}

fuzz_target!(|input: Input| {
    let Ok(mut assembler) = CustomEventAssembler::new(u64::from(input.max_bytes), u64::from(input.max_pending)) else {
        return;
    };
    for frame in input.frames {
        let name = if frame.other_name { "app.event" } else { FRAGMENT_EVENT_NAME };
        let payload = json!({"type": "CUSTOM", "name": name,
            "value": {"id": format!("f{}", frame.id % 4), "index": frame.index, "count": frame.count, "data": frame.data}});
        let object = payload.as_object().expect("an object");
        match assembler.accept(object) {
            Accepted::Passed(passed) => assert_eq!(passed, object),
            Accepted::Assembled(event) => assert_eq!(event.get("type").and_then(|t| t.as_str()), Some("CUSTOM")),
            Accepted::Pending => {}
        }
        let state = assembler.export();
        assert!(state.pending.len() as u64 <= state.max_pending);
        assert!(state.pending.values().map(|a| a.size).sum::<u64>() <= state.max_bytes);
        let restored = CustomEventAssembler::restore(state).expect("own state restores");
        assert_eq!(restored, assembler);
    }
});
