//! `GET /v1/runs/{run_id}/display`: the run's display as it changes, as Server-Sent Events.
//!
//! Frames carry whole items (their checkpoint JSON, as stored), so a client that upserts them by id and orders
//! them by ordinal holds exactly the display a fold of the same source gives:
//!
//! - `event: snapshot` — the first frame without a resume position: every item (several frames for a large
//!   display; the first clears the client's items);
//! - `event: items` — items changed after the client's position: the catch-up after `Last-Event-ID` (or
//!   `?after=`), then one frame per committed batch;
//! - `event: end` — the run's terminal event is committed (`reason`: `complete`), or the run was deleted
//!   (`reason`: `deleted`, no `id`); the stream ends.
//!
//! Every frame's `id` is a position the client may resume after. Like `/events`, a subscriber that falls behind
//! or misses a batch (another process committed it) catches up from storage, which holds every item's latest
//! JSON and the sequence that last changed it.

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
use crate::runs::{Follows, Listener, Live};
use crate::storage::{StorageError, StoredItem};
use crate::subscribe::{open, sse_response, EventsQuery};
use crate::wire::{stored_items, to_json, DisplayEnd, DisplayFrame, ErrorBody};
use crate::{position, Shared};
use serde_json::value::RawValue;

/// Items per frame while catching up.
const PAGE: usize = 256;

/// A frame's `event:` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Snapshot,
    Items,
}

/// One frame: its kind, the position it brings the client to, the items as stored and patches of items the client
/// holds. `Err` when a stored item or a patch is not JSON.
fn frame<'a>(
    kind: Frame,
    at: u64,
    complete: bool,
    items: impl IntoIterator<Item = &'a StoredItem>,
    patches: impl IntoIterator<Item = &'a str>,
) -> Result<Bytes, StorageError> {
    let items = stored_items(items)?;
    let patches = patches
        .into_iter()
        .map(|patch| serde_json::from_str::<&RawValue>(patch).map_err(|e| StorageError::Database(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let id = position(at).to_string();
    let data = to_json(&DisplayFrame { position: id.clone(), complete, items, patches });
    let name = match kind {
        Frame::Snapshot => "snapshot",
        Frame::Items => "items",
    };
    Ok(crate::sse::frame(Some(name), Some(&id), &data))
}

/// Where a display subscriber is.
struct Feed {
    app: Shared,
    run_id: String,
    receiver: Listener,
    shutdown: watch::Receiver<bool>,
    /// The position the client holds (0: nothing yet).
    last: u64,
    /// The next catch-up is the client's first frame and carries every item.
    snapshot: bool,
    catching_up: bool,
    pending: VecDeque<Bytes>,
    /// The end frame is queued: the stream ends once `pending` is sent.
    ending: bool,
    _counted: SubscriberGuard,
}

impl Feed {
    async fn next(mut self) -> Option<(Bytes, Feed)> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                self.app.runs.metrics.delivered.inc();
                return Some((frame, self));
            }
            if self.ending || *self.shutdown.borrow() {
                return None;
            }
            if self.catching_up {
                self.catch_up().await.inspect_err(|error| tracing::error!(run_id = self.run_id, %error)).ok()?;
                continue;
            }
            let received = tokio::select! {
                received = self.receiver.recv() => received,
                _ = self.shutdown.wait_for(|stop| *stop) => return None,
            };
            match received {
                Ok(live) => match live.as_ref() {
                    Live::Batch(batch) if batch.from == self.last && batch.to > self.last && batch.items.is_some() => {
                        // The client holds every item as of `batch.from`: changes to them go as patches.
                        let items = batch.items.iter().flatten();
                        let whole = items.clone().filter(|(_, patch)| patch.is_none()).map(|(item, _)| item);
                        let patches = items.filter_map(|(_, patch)| patch.as_deref());
                        let frame = frame(Frame::Items, batch.to, batch.complete, whole, patches);
                        self.pending.push_back(frame.inspect_err(|error| tracing::error!(%error)).ok()?);
                        self.last = batch.to;
                        self.end_if(batch.complete);
                    }
                    Live::Batch(batch) if batch.to <= self.last => {}
                    Live::Batch(_) | Live::Wake => self.catching_up = true,
                    Live::Events(_) => {}
                    Live::Deleted => {
                        self.pending.push_back(DisplayEnd::frame(self.last, crate::wire::DELETED));
                        self.ending = true;
                    }
                },
                Err(RecvError::Lagged(_)) => {
                    self.app.runs.metrics.lagged.inc();
                    self.catching_up = true;
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// Queue the end frame once the run is complete at the client's position.
    fn end_if(&mut self, complete: bool) {
        if complete {
            self.pending.push_back(DisplayEnd::frame(self.last, crate::wire::COMPLETE));
            self.ending = true;
        }
    }

    /// Every item changed after the client's position, read with the run's committed position in one step (from
    /// the run's display in memory, rebuilt from storage when needed: storage holds only its last checkpoint).
    async fn catch_up(&mut self) -> Result<(), StorageError> {
        let (items, status) = self.app.runs.changed_since(&self.run_id, self.last).await?;
        let (at, complete) = (status.position, status.complete);
        let kind = if self.snapshot { Frame::Snapshot } else { Frame::Items };
        let pages: Vec<&[StoredItem]> = if items.is_empty() { vec![&[]] } else { items.chunks(PAGE).collect() };
        for (index, page) in pages.iter().enumerate() {
            let (first, last) = (index == 0, index + 1 == pages.len());
            // Frames before the last of a catch-up keep the client's old position: resuming there repeats them.
            let to = if last { at.max(self.last) } else { self.last };
            if !page.is_empty() || (first && (self.snapshot || at > self.last)) {
                let kind = if first { kind } else { Frame::Items };
                self.pending.push_back(frame(kind, to, complete && last, page.iter(), [])?);
            }
        }
        self.last = at.max(self.last);
        self.snapshot = false;
        self.catching_up = false;
        self.end_if(complete);
        Ok(())
    }
}

/// The run's display as it changes: a snapshot (or the items changed after `Last-Event-ID` / `?after=`), then
/// one frame per committed batch, then `end` when the run's terminal event is committed.
#[utoipa::path(get, path = "/v1/runs/{run_id}/display", tag = "runs", params(
    crate::routes::RunIdParam,
    ("Last-Event-ID" = Option<String>, Header, description = "Resume strictly after this position", pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$"),
    EventsQuery,
), responses(
    (status = 200, description = "`snapshot`, `items` and `end` frames; `data:` is `{position, complete, items}`, for `end` `{position, reason}` (`complete` or `deleted`)", content_type = "text/event-stream", body = String),
    (status = 400, description = "A malformed run id or position, another attempt, or a position beyond the committed one", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn display(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let opened = match open(&app, &run_id, &headers, query.after(), Follows::Display).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    let feed = Feed {
        _counted: SubscriberGuard::new(&app.runs.metrics.subscribers),
        shutdown: app.shutdown.clone(),
        app: Arc::clone(&app),
        run_id,
        receiver: opened.receiver,
        last: opened.after,
        snapshot: !opened.resumed,
        catching_up: true,
        pending: VecDeque::new(),
        ending: false,
    };
    sse_response(&app, stream::unfold(feed, Feed::next))
}
