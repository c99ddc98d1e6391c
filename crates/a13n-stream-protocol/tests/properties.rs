//! Recovery and atomicity laws over generated Harness streams.

use a13n_stream_protocol::{
    ContentPolicy, DisplayFold, DisplayOptions, DisplaySnapshot, HarnessAguiStreamObserver, ObserverContinuation,
    SourceItem,
};
use a13n_testkit::random_stream;
use proptest::prelude::*;
use serde_json::{json, Value};

fn observe_all(observer: &mut HarnessAguiStreamObserver, items: &[SourceItem]) -> Vec<Value> {
    items
        .iter()
        .map(|item| match observer.observe(item) {
            Ok(events) => Value::Array(events.iter().map(|e| e.to_value()).collect()),
            Err(error) => json!({"error": error.is_observation()}),
        })
        .collect()
}

fn fold_all(fold: &mut DisplayFold, items: &[SourceItem]) {
    for item in items {
        let _ = fold.fold_source(item);
    }
}

/// The same item re-dressed as a thinking delta at part index 0: rejected whenever index 0 holds another kind.
fn contradicting(item: &SourceItem) -> SourceItem {
    let mut value = item.to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("result");
    }
    value["event"] = json!({"index": 0, "delta": {"content_delta": "x", "signature_delta": null, "provider_name": null, "provider_details": null, "part_delta_kind": "thinking"}, "event_kind": "part_delta"});
    SourceItem::from_value(value).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn observer_resume_and_restore_equal_uninterrupted(seed in any::<u64>(), cut in 0.0f64..=1.0) {
        let items = random_stream(seed);
        let cut = ((items.len() as f64) * cut) as usize;
        let expected = observe_all(&mut HarnessAguiStreamObserver::new(), &items);
        let mut resumed = HarnessAguiStreamObserver::new();
        resumed.resume(&items[..cut]).unwrap();
        prop_assert_eq!(observe_all(&mut resumed, &items[cut..]), expected[cut..].to_vec());
        let total: usize = expected.iter().map(|e| e.as_array().map_or(0, Vec::len)).sum();
        prop_assert_eq!(resumed.event_count(), total);

        let mut prefix = HarnessAguiStreamObserver::new();
        observe_all(&mut prefix, &items[..cut]);
        let saved = ObserverContinuation::from_json(&prefix.export().to_json()).unwrap();
        let mut restored = HarnessAguiStreamObserver::restore(saved, None);
        prop_assert_eq!(observe_all(&mut restored, &items[cut..]), expected[cut..].to_vec());
    }

    #[test]
    fn display_restore_equals_uninterrupted(seed in any::<u64>(), cut in 0.0f64..=1.0, retain in any::<bool>()) {
        let items = random_stream(seed);
        let cut = ((items.len() as f64) * cut) as usize;
        let options = || DisplayOptions { content: ContentPolicy::new(false, retain), ..Default::default() };
        let mut whole = DisplayFold::with_options(items[0].run_id.clone(), options());
        fold_all(&mut whole, &items);
        let mut prefix = DisplayFold::with_options(items[0].run_id.clone(), options());
        fold_all(&mut prefix, &items[..cut]);
        let snapshot = DisplaySnapshot::from_json(&prefix.export().to_json()).unwrap();
        let mut restored = DisplayFold::restore(snapshot, retain, None).unwrap();
        fold_all(&mut restored, &items[cut..]);
        prop_assert_eq!(restored.export().to_json(), whole.export().to_json());
    }

    #[test]
    fn agui_folding_is_independent_of_batching(seed in any::<u64>(), splits in proptest::collection::vec(1usize..6, 1..50)) {
        let items = random_stream(seed);
        let mut observer = HarnessAguiStreamObserver::new();
        let events: Vec<_> = items
            .iter()
            .flat_map(|item| observer.observe(item).unwrap())
            .filter_map(|event| match event.to_value() { Value::Object(object) => Some(object), _ => None })
            .collect();
        let mut one_by_one = DisplayFold::new("run-batch");
        for event in &events {
            one_by_one.fold(vec![event.clone()], None).unwrap();
        }
        let mut batched = DisplayFold::new("run-batch");
        let mut rest = events.as_slice();
        for size in splits.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let take = (*size).min(rest.len());
            batched.fold(rest[..take].to_vec(), None).unwrap();
            rest = &rest[take..];
        }
        prop_assert_eq!(batched.export().to_json(), one_by_one.export().to_json());
    }

    #[test]
    fn a_rejected_item_changes_nothing(seed in any::<u64>(), at in 0.0f64..1.0) {
        let items = random_stream(seed);
        let at = ((items.len() as f64) * at) as usize;
        let mut observer = HarnessAguiStreamObserver::new();
        let mut fold = DisplayFold::new(items[0].run_id.clone());
        for item in &items[..at] {
            let _ = observer.observe(item);
            let _ = fold.fold_source(item);
        }
        let bad = contradicting(&items[at]);
        let before = (observer.export(), observer.event_count(), fold.export().to_json());
        // Rejected when index 0 holds an open part of another kind; accepted otherwise. A failure is a no-op.
        if observer.observe(&bad).is_err() {
            prop_assert_eq!((observer.export(), observer.event_count()), (before.0.clone(), before.1));
        }
        if fold.fold_source(&bad).is_err() {
            prop_assert_eq!(fold.export().to_json(), before.2);
        }
    }
}

#[test]
fn a_contradicting_delta_is_rejected_without_a_trace() {
    let mut rejected = 0;
    for seed in 0..20 {
        let items = random_stream(seed);
        let mut observer = HarnessAguiStreamObserver::new();
        for item in &items {
            // Probe a copy: a text and a thinking delta at index 0, one of which contradicts any open part there.
            for kind in ["text", "thinking"] {
                let mut probe = HarnessAguiStreamObserver::restore(observer.export(), None);
                let before = probe.export();
                let mut value = contradicting(item).to_value();
                value["event"]["delta"]["part_delta_kind"] = kind.into();
                if probe.observe(&SourceItem::from_value(value).unwrap()).is_err() {
                    rejected += 1;
                    assert_eq!(probe.export(), before);
                }
            }
            let _ = observer.observe(item);
        }
    }
    assert!(rejected > 0, "no generated stream opened a conflicting part");
}

#[test]
fn resume_is_rejected_on_a_used_observer_and_failure_leaves_it_fresh() {
    let items = random_stream(7);
    let mut used = HarnessAguiStreamObserver::new();
    used.observe(&items[0]).unwrap();
    assert_eq!(
        used.resume(&items[..1]).unwrap_err().rejection(),
        Some(a13n_stream_protocol::ObservationKind::NotFresh)
    );

    // A history whose root run changes thread does not convert; the observer stays fresh and a retry with
    // complete, exact history succeeds.
    let mut bad_history = items[..3].to_vec();
    let mut thread_changed = bad_history[2].to_value();
    thread_changed["thread_id"] = "another-thread".into();
    bad_history[2] = SourceItem::from_value(thread_changed).unwrap();
    let mut fresh = HarnessAguiStreamObserver::new();
    assert!(fresh.resume(&bad_history).is_err());
    assert_eq!(fresh.export(), HarnessAguiStreamObserver::new().export());
    assert_eq!(fresh.event_count(), 0);
    fresh.resume(&items[..3]).unwrap();
    assert!(fresh.resume(&items[..3]).is_err(), "a second resume is rejected");
}

#[test]
fn snapshots_need_retained_events() {
    let items = random_stream(3);
    let mut retaining = HarnessAguiStreamObserver::new();
    let mut total = 0;
    for item in &items {
        total += retaining.observe(item).unwrap().len();
    }
    assert_eq!(retaining.event_count(), total);
    assert_eq!(retaining.snapshot(1, Some(3)).unwrap().len(), 2);
    assert!(retaining.snapshot(3, Some(1)).is_err());
    assert!(retaining.snapshot(0, Some(total + 1)).is_err());
    let live = HarnessAguiStreamObserver::new().retain_events(false);
    assert_eq!(
        live.snapshot(0, None).unwrap_err().rejection(),
        Some(a13n_stream_protocol::ObservationKind::EventsNotRetained)
    );
    let restored = HarnessAguiStreamObserver::restore(retaining.export(), None);
    assert!(restored.snapshot(0, None).is_err(), "a restored observer keeps no journal");
}
