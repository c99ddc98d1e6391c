//! `GET /v1/runs/{run_id}/observed`: what a browser's display normalizer folds, as Server-Sent Events.
//!
//! - `event: snapshot` — the display checkpoint (the reference's `DisplaySnapshot` JSON) at the frame's `id`: the
//!   first frame when the client names no position, and the frame that replaces entries stored without their item
//!   reference (by a host older than this route);
//! - `event: observed` — `{"position", "observed": [Observed...]}`: the entries after the client's position, one
//!   frame per committed batch live, one per page while catching up;
//! - `event: end` — `{"position", "reason"}`: `complete` once the run's terminal event is delivered, `deleted`
//!   (without an `id`: nothing is left to resume) when the run was deleted; the stream ends.
//!
//! Every frame's `id` is a position to resume after (`Last-Event-ID` or `?after=`). The frames cost what the
//! events cost: an entry is the event and its item reference, never the item itself. Like `/events`, a subscriber
//! that falls behind or misses a batch (another process committed it) catches up from storage.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::stream;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::metrics::SubscriberGuard;
use crate::problem::Params;
use crate::runs::{is_terminal, Follows, Listener, Live};
use crate::storage::StorageError;
use crate::subscribe::{open, sse_response, EventsQuery};
use crate::wire::{to_json, DisplayEnd, ErrorBody, DELETED};
use crate::{position, Shared};

/// Entries read from storage per frame while catching up.
const PAGE: usize = 512;

/// One entry: its sequence, its event JSON and its item reference JSON.
type Entry = (u64, Arc<str>, Arc<str>);

/// One frame of a run's `/observed` stream: its `event:` name, the position it brings the client to (`None`: no
/// `id`, the end of a deleted run), and its `data:`.
pub(crate) struct Frame {
    pub(crate) event: &'static str,
    pub(crate) at: Option<u64>,
    pub(crate) data: String,
}

/// Where an observed-entries subscriber of one run is.
pub(crate) struct Feed {
    app: Shared,
    run_id: String,
    receiver: Listener,
    /// The position the client holds.
    last: u64,
    /// The client holds nothing yet: the next catch-up starts with a snapshot.
    snapshot: bool,
    catching_up: bool,
    /// Live entries after `last`, waiting for the end of their batch.
    batch: Vec<Entry>,
    pending: VecDeque<Frame>,
    /// The end frame is queued: the stream ends once `pending` is sent.
    ending: bool,
}

impl Feed {
    /// The frames of `run_id` after sequence `after`; `None`: from a snapshot, as a client that holds nothing.
    pub(crate) fn new(app: &Shared, run_id: String, receiver: Listener, after: Option<u64>) -> Feed {
        Feed {
            app: Arc::clone(app),
            run_id,
            receiver,
            last: after.unwrap_or(0),
            snapshot: after.is_none(),
            catching_up: true,
            batch: Vec::new(),
            pending: VecDeque::new(),
            ending: false,
        }
    }

    /// Whether the stream ended with its `end` frame (the run is complete or was deleted).
    pub(crate) fn finished(&self) -> bool {
        self.ending && self.pending.is_empty()
    }

    /// The next frame; `None` after the `end` frame, on shutdown, or when storage fails.
    pub(crate) async fn next(&mut self, shutdown: &mut watch::Receiver<bool>) -> Option<Frame> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                self.app.runs.metrics.delivered.inc();
                return Some(frame);
            }
            if self.ending || *shutdown.borrow() {
                return None;
            }
            if self.catching_up {
                self.catch_up().await.inspect_err(|error| tracing::error!(run_id = self.run_id, %error)).ok()?;
                continue;
            }
            let received = tokio::select! {
                received = self.receiver.recv() => received,
                _ = shutdown.wait_for(|stop| *stop) => return None,
            };
            match received {
                Ok(live) => self.take(&live),
                Err(RecvError::Lagged(_)) => {
                    self.app.runs.metrics.lagged.inc();
                    self.fall_back();
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// A live message: an entry joins its batch, and the batch's end sends it as one frame. Anything out of
    /// order (a missed message, another process's commit) sends the subscriber back to storage.
    fn take(&mut self, live: &Live) {
        let held = self.last + self.batch.len() as u64;
        match live {
            Live::Events(events) => match crate::runs::following(events, held) {
                Some(fresh) => {
                    let shared = |e: &crate::runs::Delivered| (e.sequence, Arc::clone(&e.data), Arc::clone(&e.item));
                    self.batch.extend(fresh.iter().map(shared));
                }
                None => self.fall_back(),
            },
            Live::Batch(batch) if batch.to <= self.last => {}
            Live::Batch(batch) if batch.from == self.last && batch.to == held => {
                let entries = std::mem::take(&mut self.batch);
                self.send(&entries);
            }
            Live::Batch(_) | Live::Wake => self.fall_back(),
            Live::Deleted => {
                self.batch.clear();
                self.push_end(None, DELETED);
                self.ending = true;
            }
        }
    }

    fn fall_back(&mut self) {
        self.batch.clear();
        self.catching_up = true;
    }

    /// Queue one `observed` frame, then `end` if it delivers the run's terminal event.
    fn send(&mut self, entries: &[Entry]) {
        let Some((to, _, _)) = entries.last() else { return };
        let at = position(*to).to_string();
        let mut data =
            String::with_capacity(64 + entries.iter().map(|(_, e, i)| e.len() + i.len() + 48).sum::<usize>());
        data.push_str(r#"{"position":""#);
        data.push_str(&at);
        data.push_str(r#"","observed":["#);
        for (index, (sequence, event, item)) in entries.iter().enumerate() {
            if index > 0 {
                data.push(',');
            }
            data.push_str(r#"{"sequence":"#);
            data.push_str(&sequence.to_string());
            data.push_str(r#","event":"#);
            data.push_str(event);
            data.push_str(r#","item":"#);
            data.push_str(item);
            data.push('}');
        }
        data.push_str("]}");
        self.pending.push_back(Frame { event: "observed", at: Some(*to), data });
        self.last = *to;
        if entries.iter().any(|(_, event, _)| is_terminal(event)) {
            self.end();
        }
    }

    fn end(&mut self) {
        self.push_end(Some(self.last), crate::wire::COMPLETE);
        self.ending = true;
    }

    fn push_end(&mut self, at: Option<u64>, reason: &'static str) {
        let data = to_json(&DisplayEnd { position: position(self.last).to_string(), reason });
        self.pending.push_back(Frame { event: "end", at, data });
    }

    /// The committed checkpoint (an empty display for a run not ingested yet) as a `snapshot` frame.
    async fn send_snapshot(&mut self) -> Result<(), StorageError> {
        let (json, at) = match self.app.runs.snapshot_at(&self.run_id).await? {
            Some(snapshot) => snapshot,
            None => (self.app.runs.empty_snapshot(&self.run_id), 0),
        };
        self.pending.push_back(Frame { event: "snapshot", at: Some(at), data: json });
        self.last = at;
        self.snapshot = false;
        Ok(())
    }

    /// Every entry after the client's position, read from storage, then `end` if the run is complete there.
    async fn catch_up(&mut self) -> Result<(), StorageError> {
        let mut snapshotted = false;
        if self.snapshot {
            self.send_snapshot().await?;
            snapshotted = true;
        }
        let storage = self.app.runs.storage();
        loop {
            let page = storage.events_after(&self.run_id, self.last, PAGE).await?;
            if page.iter().any(|event| event.item.is_none()) {
                // Stored before item references were kept: a checkpoint past them replaces them.
                if snapshotted {
                    return Err(StorageError::Database(
                        "stored events after the checkpoint lack item references".into(),
                    ));
                }
                self.send_snapshot().await?;
                snapshotted = true;
                continue;
            }
            let full = page.len() == PAGE;
            let entries: Vec<Entry> =
                page.into_iter().map(|e| (e.sequence, e.event.into(), e.item.unwrap_or_default().into())).collect();
            self.send(&entries);
            if self.ending || !full {
                break;
            }
        }
        self.catching_up = false;
        self.batch.clear();
        if !self.ending {
            let status = self.app.runs.status(&self.run_id).await?;
            if status.is_some_and(|status| status.complete && status.position <= self.last) {
                self.end();
            }
        }
        Ok(())
    }
}

/// A run's `/observed` stream as Server-Sent Events, `id: attempt-sequence`.
struct Subscription {
    feed: Feed,
    shutdown: watch::Receiver<bool>,
    _counted: SubscriberGuard,
}

impl Subscription {
    async fn next(mut self) -> Option<(Bytes, Subscription)> {
        let frame = self.feed.next(&mut self.shutdown).await?;
        Some((sse(frame, |at| position(at).to_string()), self))
    }
}

/// The response header of `/observed` streams that tells a browser's display normalizer the host's content policy
/// (`true` when the host keeps whole values, `--retain-content`): entries folded without it would bound the
/// values the host's snapshot holds whole.
pub(crate) const RETAIN_CONTENT_HEADER: &str = "a13n-retain-content";

/// An `/observed` stream's response, saying the host's content policy ([`RETAIN_CONTENT_HEADER`]).
pub(crate) fn observed_response(
    app: &Shared,
    frames: impl futures_util::Stream<Item = Bytes> + Send + 'static,
) -> Response {
    let mut response = sse_response(app, frames);
    let policy = if app.runs.retains_content() { "true" } else { "false" };
    response.headers_mut().insert(RETAIN_CONTENT_HEADER, axum::http::HeaderValue::from_static(policy));
    response
}

/// A frame as an SSE event, its id written by `id`.
pub(crate) fn sse(frame: Frame, id: impl FnOnce(u64) -> String) -> Bytes {
    crate::sse::frame(Some(frame.event), frame.at.map(id).as_deref(), &frame.data)
}

/// The run's display as a browser folds it: a checkpoint (or the entries after `Last-Event-ID` / `?after=`),
/// then one frame of `Observed` entries per committed batch, then `end` when the run's terminal event is
/// delivered. A run not ingested yet may be subscribed to: its snapshot is the empty display.
#[utoipa::path(get, path = "/v1/runs/{run_id}/observed", tag = "runs", params(
    crate::routes::RunIdParam,
    ("Last-Event-ID" = Option<String>, Header, description = "Resume strictly after this position", pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$"),
    EventsQuery,
), responses(
    (status = 200, description = "`snapshot` (`data:` the DisplaySnapshot JSON), `observed` (`data:` `{position, observed}`) and `end` frames", content_type = "text/event-stream", body = String,
        headers(("a13n-retain-content" = String, description = "`true` when the host keeps whole values (`--retain-content`): fold the entries with the same policy"))),
    (status = 400, description = "A malformed run id or position, another attempt, or a position beyond the committed one", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn observed(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let opened = match open(&app, &run_id, &headers, query.after(), Follows::Events).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    let after = opened.resumed.then_some(opened.after);
    let subscription = Subscription {
        feed: Feed::new(&app, run_id, opened.receiver, after),
        shutdown: app.shutdown.clone(),
        _counted: SubscriberGuard::new(&app.runs.metrics.subscribers),
    };
    observed_response(&app, stream::unfold(subscription, Subscription::next))
}
