//! Any bytes as a checkpoint, restored and then folded with more input: never a panic; what restores both ways
//! restores identically.
#![no_main]

use a13n_stream_protocol::{DisplayFold, DisplaySnapshot, SourceItem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The checkpoint, then source lines to continue with.
    let (checkpoint, rest) = text.split_once('\n').unwrap_or((text, ""));
    let typed = DisplaySnapshot::from_json(checkpoint).ok().and_then(|s| DisplayFold::restore(s, false, None).ok());
    let raw = DisplayFold::restore_json(checkpoint, false, None).ok();
    let (Some(mut typed), Some(mut raw)) = (typed, raw) else { return };
    assert_eq!(typed.export().to_json(), typed.export_json());
    for line in rest.lines() {
        if let Ok(item) = SourceItem::from_json(line) {
            let _ = typed.fold_source(&item);
            let _ = raw.fold_source(&item);
        }
    }
    let _ = (typed.export_json(), raw.export_json(), typed.capture_delta());
});
