//! Any bytes as source lines: decoding and observation (and the fold) never panic, and a rejected item
//! changes nothing.
#![no_main]

use a13n_stream_protocol::{DisplayFold, HarnessAguiStreamObserver, SourceItem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut observer = HarnessAguiStreamObserver::new();
    let mut fold = DisplayFold::new("run-fuzz");
    for line in text.lines() {
        let Ok(item) = SourceItem::from_json(line) else { continue };
        let before = observer.export();
        if observer.observe(&item).is_err() {
            assert_eq!(observer.export(), before, "a rejected item changed the observer");
        }
        let checkpoint = fold.export_json();
        if fold.fold_source(&item).is_err() {
            assert_eq!(fold.export_json(), checkpoint, "a rejected item changed the fold");
        }
    }
    // Whatever was accepted checkpoints and restores exactly.
    let checkpoint = fold.export_json();
    let restored = DisplayFold::restore_json(&checkpoint, false, None).expect("own checkpoint restores");
    assert_eq!(restored.export_json(), checkpoint);
});
