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
    // Reading the checkpoint's text in place (one pass, canonical content kept as text) accepts exactly what
    // decoding it whole accepts, and restores the same fold.
    assert_eq!(typed.is_some(), raw.is_some(), "{checkpoint}");
    let (Some(mut typed), Some(mut raw)) = (typed, raw) else { return };
    assert_eq!(typed.export().to_json(), typed.export_json());
    assert_eq!(raw.export_json(), typed.export_json(), "{checkpoint}");
    for line in rest.lines() {
        if let Ok(item) = SourceItem::from_json(line) {
            let (a, b) = (typed.fold_source(&item), raw.fold_source(&item));
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }
    assert_eq!(raw.export_json(), typed.export_json());
    let _ = typed.capture_delta();
});
