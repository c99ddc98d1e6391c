//! Recovery laws over every recorded stream, at every cut (the corpus records only a few cuts per case).

use a13n_stream_conformance::{case_fold, case_processor};
use a13n_stream_protocol::{AguiEventProcessor, DisplayFold, DisplaySnapshot, HarnessAguiStreamObserver, SourceItem};
use a13n_testkit::{case_options, load_source, source_cases};
use serde_json::Value;

fn processor(options: &Value) -> Option<AguiEventProcessor> {
    case_processor(options).expect("known processor")
}

fn observer(options: &Value) -> HarnessAguiStreamObserver {
    let observer = HarnessAguiStreamObserver::new();
    match processor(options) {
        Some(processor) => observer.with_processor(processor),
        None => observer,
    }
}

/// Per item: the events as JSON, or whether the rejection was an observation error.
fn outputs(observer: &mut HarnessAguiStreamObserver, items: &[SourceItem]) -> Vec<Result<Vec<Value>, bool>> {
    items
        .iter()
        .map(|item| {
            observer
                .observe(item)
                .map(|events| events.iter().map(|e| e.to_value()).collect())
                .map_err(|e| e.is_observation())
        })
        .collect()
}

#[test]
fn resume_and_restore_continue_exactly_at_every_cut() {
    let cases = source_cases();
    assert!(!cases.is_empty(), "no corpus found");
    for dir in cases {
        let options = case_options(&dir);
        let items = load_source(&dir);
        let expected = outputs(&mut observer(&options), &items);
        let mut live = observer(&options);
        for cut in 0..=items.len() {
            let exported = live.export();
            let mut resumed = observer(&options);
            if resumed.resume(&items[..cut]).is_ok() {
                assert_eq!(outputs(&mut resumed, &items[cut..]), expected[cut..], "{}: resume at {cut}", dir.display());
            } else {
                assert!(
                    expected[..cut].iter().any(Result::is_err),
                    "{}: resume failed on exact history",
                    dir.display()
                );
                assert_eq!(resumed.export(), HarnessAguiStreamObserver::new().export(), "a failed resume stays fresh");
            }
            let json = exported.to_json();
            let continuation = a13n_stream_protocol::ObserverContinuation::from_json(&json).unwrap();
            let mut restored = HarnessAguiStreamObserver::restore(continuation, processor(&options));
            assert_eq!(outputs(&mut restored, &items[cut..]), expected[cut..], "{}: restore at {cut}", dir.display());
            if cut < items.len() {
                let before = live.export();
                if live.observe(&items[cut]).is_err() {
                    assert_eq!(live.export(), before, "{}: a rejected item changed the observer", dir.display());
                }
            }
        }
    }
}

fn new_fold(options: &Value, run_id: &str) -> DisplayFold {
    case_fold(options, run_id).expect("known processor")
}

#[test]
fn display_checkpoints_restore_exactly_at_every_cut() {
    for dir in source_cases() {
        let options = case_options(&dir);
        let items = load_source(&dir);
        let run_id = items[0].run_id.clone();
        let retain = options.get("retain_content").and_then(Value::as_bool).unwrap_or(false);
        let mut whole = new_fold(&options, &run_id);
        let mut checkpoints = Vec::new();
        for item in &items {
            let checkpoint = whole.export().to_json();
            assert_eq!(whole.export_json(), checkpoint, "{}: export_json differs from export", dir.display());
            checkpoints.push(checkpoint);
            let before = whole.export().to_json();
            if whole.fold_source(item).is_err() {
                assert_eq!(whole.export().to_json(), before, "{}: a rejected item changed the fold", dir.display());
            }
        }
        let expected = whole.export().to_json();
        for (cut, checkpoint) in checkpoints.iter().enumerate() {
            let snapshot = DisplaySnapshot::from_json(checkpoint).unwrap();
            let mut restored = DisplayFold::restore(snapshot, retain, processor(&options)).unwrap();
            let mut from_text = DisplayFold::restore_json(checkpoint, retain, processor(&options)).unwrap();
            assert_eq!(from_text.export_json(), *checkpoint, "{}: restore_json at {cut}", dir.display());
            for item in &items[cut..] {
                let _ = restored.fold_source(item);
                let _ = from_text.fold_source(item);
            }
            assert_eq!(restored.export().to_json(), expected, "{}: restore at {cut}", dir.display());
            assert_eq!(from_text.export_json(), expected, "{}: restore_json at {cut}", dir.display());
        }
    }
}

#[test]
fn retiring_finished_items_keeps_ordinals_dense_and_increasing() {
    for dir in source_cases() {
        let options = case_options(&dir);
        let items = load_source(&dir);
        let retain = options.get("retain_content").and_then(Value::as_bool).unwrap_or(false);
        let mut whole = new_fold(&options, &items[0].run_id);
        for item in &items {
            let _ = whole.fold_source(item);
        }
        let expected: Vec<(String, u64)> = whole.items().map(|i| (i.id.clone(), i.ordinal)).collect();
        let ordinals: Vec<u64> = expected.iter().map(|(_, o)| *o).collect();
        assert_eq!(ordinals, (1..=ordinals.len() as u64).collect::<Vec<_>>(), "{}: dense from 1", dir.display());
        let cut = items.len() / 2;
        let mut half = new_fold(&options, &items[0].run_id);
        for item in &items[..cut] {
            let _ = half.fold_source(item);
        }
        let mut snapshot = half.export();
        // A host pages out the items no later event can change.
        let retired: Vec<String> = snapshot.retire_immutable().into_iter().map(|item| item.id).collect();
        let mut restored = DisplayFold::restore(snapshot, retain, processor(&options)).unwrap();
        for item in &items[cut..] {
            let _ = restored.fold_source(item);
        }
        let kept: Vec<(String, u64)> = restored.items().map(|i| (i.id.clone(), i.ordinal)).collect();
        let wanted: Vec<(String, u64)> = expected.into_iter().filter(|(id, _)| !retired.contains(id)).collect();
        assert_eq!(kept, wanted, "{}: ordinals after retiring", dir.display());
    }
}
