//! Any bytes as AG-UI event lines folded directly (a browser normalizer's input): never a panic, and a malformed
//! batch changes nothing.
#![no_main]

use a13n_stream_protocol::DisplayFold;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut fold = DisplayFold::new("run-fuzz");
    for line in text.lines() {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else { continue };
        let checkpoint = fold.export_json();
        if fold.fold(vec![event], None).is_err() {
            assert_eq!(fold.export_json(), checkpoint, "a rejected event changed the fold");
        }
    }
    let checkpoint = fold.export_json();
    let restored = DisplayFold::restore_json(&checkpoint, false, None).expect("own checkpoint restores");
    assert_eq!(restored.export_json(), checkpoint);
});
