//! `resume_stream`: rebuilding an observer from an asynchronous history.
#![cfg(feature = "async")]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

use a13n_stream_protocol::HarnessAguiStreamObserver;
use a13n_testkit::random_stream;
use futures::stream::{self, StreamExt};

#[test]
fn resume_from_a_stream_equals_resume_from_an_iterator() {
    let items = random_stream(5);
    let cut = items.len() / 2;
    let mut from_stream = HarnessAguiStreamObserver::new();
    futures::executor::block_on(from_stream.resume_stream(stream::iter(items[..cut].to_vec()))).unwrap();
    let mut from_iter = HarnessAguiStreamObserver::new();
    from_iter.resume(&items[..cut]).unwrap();
    assert_eq!(from_stream.export(), from_iter.export());
    assert_eq!(from_stream.snapshot(0, None).unwrap(), from_iter.snapshot(0, None).unwrap());
    for item in &items[cut..] {
        assert_eq!(from_stream.observe(item).unwrap(), from_iter.observe(item).unwrap());
    }
}

#[test]
fn a_dropped_resume_leaves_the_observer_fresh() {
    let items = random_stream(9);
    let mut observer = HarnessAguiStreamObserver::new();
    {
        // Two items arrive, then the history stalls; the host gives up and drops the future.
        let stalled = stream::iter(items[..2].to_vec()).chain(stream::pending());
        let mut future = pin!(observer.resume_stream(stalled));
        let mut context = Context::from_waker(futures::task::noop_waker_ref());
        assert!(matches!(future.as_mut().poll(&mut context), Poll::Pending));
    }
    assert_eq!(observer.export(), HarnessAguiStreamObserver::new().export());
    assert_eq!(observer.event_count(), 0);
    observer.resume(&items[..2]).expect("a fresh observer resumes");
}
