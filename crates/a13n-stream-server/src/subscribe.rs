//! `GET /v1/runs/{run_id}/events`: a run's AG-UI events as Server-Sent Events, `id: <attempt>-<sequence>`.
//!
//! A subscription replays storage after its position, then follows live events, taking a live event only when
//! it directly follows the last one delivered; any gap (a lagging subscriber, another process's commit) sends it
//! back to storage, which holds every published event. It ends after the run's terminal event, when the run is
//! deleted (an `event: end` frame, `data: {"position", "reason": "deleted"}`, no `id`), or when the host shuts down.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Arc;

use a13n_stream_protocol::StreamPosition;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use utoipa::IntoParams;

use crate::metrics::SubscriberGuard;
use crate::problem::{Params, Problem};
use crate::runs::{is_terminal, valid_run_id, Follows, Listener, Live};
use crate::storage::StorageError;
use crate::wire::ErrorBody;
use crate::{bad_run_id, position, Shared, ATTEMPT};

/// Events read from storage per query while catching up.
const PAGE: usize = 512;

/// `GET /v1/runs/{run_id}/events` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsQuery {
    /// Resume strictly after this position (`attempt-sequence`); the `Last-Event-ID` header wins.
    #[param(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    after: Option<String>,
}

impl EventsQuery {
    /// The `after` parameter.
    pub(crate) fn after(&self) -> Option<&str> {
        self.after.as_deref()
    }
}

/// A run's events from a position on: stored events first, then the live tail, until the run's terminal event.
pub(crate) struct RunTail {
    app: Shared,
    run_id: String,
    receiver: Listener,
    last: u64,
    pending: VecDeque<(u64, Arc<str>)>,
    catching_up: bool,
    finished: bool,
    /// The position of a run already complete when subscribing (`u64::MAX` while it is still running).
    complete_at: u64,
}

/// What a run's tail yields next.
pub(crate) enum Step {
    /// An event at its sequence.
    Event(u64, Arc<str>),
    /// The run was deleted: its stream ends.
    Deleted,
}

impl RunTail {
    /// The tail of `run_id` after sequence `last`, from an open subscription and the status read with it.
    pub(crate) fn new(app: &Shared, run_id: String, opened: Opened) -> RunTail {
        let complete_at = if opened.status.complete { opened.status.position } else { u64::MAX };
        RunTail {
            app: Arc::clone(app),
            run_id,
            receiver: opened.receiver,
            last: opened.after,
            pending: VecDeque::new(),
            catching_up: true,
            finished: false,
            complete_at,
        }
    }

    /// The next event; `None` once the run's terminal event was yielded, on shutdown, or when storage fails.
    pub(crate) async fn next(&mut self, shutdown: &mut watch::Receiver<bool>) -> Option<Step> {
        loop {
            if let Some((sequence, data)) = self.ready() {
                return Some(Step::Event(sequence, data));
            }
            if self.finished || *shutdown.borrow() {
                return None;
            }
            if self.catching_up {
                let page = self.app.runs.storage().events_after(&self.run_id, self.last, PAGE).await;
                // The stream ends (the client reconnects from its last id); the operator is told why.
                let Ok(page) = page.inspect_err(|error| tracing::error!(run_id = self.run_id, %error)) else {
                    return None;
                };
                if page.len() < PAGE {
                    self.catching_up = false;
                    // A completed run has nothing more to send once its stored events are exhausted.
                    if page.is_empty() && self.complete_at <= self.last {
                        self.finished = true;
                    }
                }
                self.pending.extend(page.into_iter().map(|event| (event.sequence, event.event.into())));
                continue;
            }
            let received = tokio::select! {
                received = self.receiver.recv() => received,
                _ = shutdown.wait_for(|stop| *stop) => return None,
            };
            match received {
                Ok(live) => match live.as_ref() {
                    Live::Events(events) => self.take(events),
                    Live::Batch(_) => {}
                    Live::Wake => self.catching_up = true,
                    Live::Deleted => {
                        self.finished = true;
                        return Some(Step::Deleted);
                    }
                },
                Err(RecvError::Lagged(_)) => {
                    // Fallen behind the live buffer: catch up from storage instead of growing a buffer.
                    self.app.runs.metrics.lagged.inc();
                    self.catching_up = true;
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// The next event when one is at hand (taken from storage or the live channel with the ones before it), without
    /// waiting: `next` yields it, and a subscriber writing frames takes every event at hand with it.
    pub(crate) fn ready(&mut self) -> Option<(u64, Arc<str>)> {
        let (sequence, data) = self.pending.pop_front()?;
        self.last = sequence;
        self.finished = is_terminal(&data);
        self.app.runs.metrics.delivered.inc();
        Some((sequence, data))
    }

    /// A batch's live events: those after the last one delivered when they follow it directly, else back to
    /// storage.
    fn take(&mut self, events: &[crate::runs::Delivered]) {
        match crate::runs::following(events, self.last) {
            Some(fresh) => self.pending.extend(fresh.iter().map(|event| (event.sequence, Arc::clone(&event.data)))),
            None => self.catching_up = true,
        }
    }

    /// The sequence of the last event yielded (or the position the tail started after).
    pub(crate) fn last(&self) -> u64 {
        self.last
    }

    /// Whether the run's terminal event was yielded (or the run was deleted): the tail has nothing more.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }
}

/// A run's events as Server-Sent Events, `id: attempt-sequence`.
struct Subscription {
    tail: RunTail,
    shutdown: watch::Receiver<bool>,
    _counted: SubscriberGuard,
}

impl Subscription {
    /// The frames of the next event and of every event at hand after it (a committed batch's), as one chunk.
    async fn next(mut self) -> Option<(Bytes, Subscription)> {
        let mut frames = Vec::new();
        match self.tail.next(&mut self.shutdown).await? {
            Step::Event(sequence, data) => {
                // One id buffer for the chunk's frames: `attempt-sequence`.
                let mut id = String::new();
                let mut write = |sequence: u64, data: &str| {
                    id.clear();
                    let _ = write!(id, "{}", position(sequence));
                    crate::sse::write_frame(&mut frames, None, Some(&id), data);
                };
                write(sequence, &data);
                while !self.tail.finished() {
                    let Some((sequence, data)) = self.tail.ready() else { break };
                    write(sequence, &data);
                }
            }
            Step::Deleted => crate::wire::DisplayEnd::write_frame(self.tail.last(), crate::wire::DELETED, &mut frames),
        }
        Some((Bytes::from(frames), self))
    }
}

/// A subscription to a run's live channel, with the committed status and the client's position.
pub(crate) struct Opened {
    pub(crate) receiver: Listener,
    pub(crate) status: crate::runs::RunStatus,
    /// The sequence the client holds: 0, or the position it resumes after.
    pub(crate) after: u64,
    /// Whether the client named a position to resume after.
    pub(crate) resumed: bool,
}

/// What both event streams do first: check the run id and the resume position (`Last-Event-ID`, else `after`),
/// subscribe, and refuse a position of another attempt or beyond the committed one.
pub(crate) async fn open(
    app: &Shared,
    run_id: &str,
    headers: &HeaderMap,
    after: Option<&str>,
    follows: Follows,
) -> Result<Opened, Response> {
    if !valid_run_id(run_id) {
        return Err(bad_run_id());
    }
    let after = resume_after(headers, after).map_err(IntoResponse::into_response)?;
    let (receiver, status) = app.runs.follow(run_id, follows).await.map_err(|e| Problem::storage(e).into_response())?;
    let committed = position(status.position);
    let last = match after {
        None => 0,
        Some(position) if position.attempt != ATTEMPT => {
            let message =
                format!("{position} names attempt {}; this host's runs are attempt {ATTEMPT}", position.attempt);
            return Err(Problem::new(StatusCode::BAD_REQUEST, "position", message).into_response());
        }
        Some(position) if position.sequence > status.position => {
            let message = format!("{position} is beyond the run's committed position {committed}");
            let problem = Problem::new(StatusCode::BAD_REQUEST, "position", message);
            return Err(problem.with("position", committed.to_string()).into_response());
        }
        Some(position) => position.sequence,
    };
    Ok(Opened { receiver, status, after: last, resumed: after.is_some() })
}

/// A subscription to a run, resuming after `after` (already checked against the run by the caller).
pub(crate) async fn open_after(app: &Shared, run_id: &str, after: u64) -> Result<Opened, StorageError> {
    let (receiver, status) = app.runs.subscribe(run_id).await?;
    Ok(Opened { receiver, status, after, resumed: true })
}

/// The client's `Last-Event-ID`, else its `?after=`; an empty one is none (an event source whose last `id:` was
/// empty sends it so: it holds no position).
pub(crate) fn resume_text<'a>(headers: &'a HeaderMap, after: Option<&'a str>) -> Option<&'a str> {
    let header = headers.get("last-event-id").map(|v| v.to_str().unwrap_or("\u{fffd}"));
    let given = |text: &&str| !text.is_empty();
    header.filter(given).or(after.filter(given))
}

/// The position to resume after: `Last-Event-ID`, else `?after=`, else the start.
fn resume_after(headers: &HeaderMap, after: Option<&str>) -> Result<Option<StreamPosition>, Problem> {
    match resume_text(headers, after) {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|error: a13n_stream_protocol::PositionError| {
            Problem::new(StatusCode::BAD_REQUEST, "position", error.to_string())
        }),
    }
}

/// The run's AG-UI events as Server-Sent Events (`id: attempt-sequence`): stored events after the position,
/// then the live tail, ending after the run's terminal event, or with an `end` frame (`reason`: `deleted`) when
/// the run is deleted. A run not ingested yet may be subscribed to.
#[utoipa::path(get, path = "/v1/runs/{run_id}/events", tag = "runs", params(
    crate::routes::RunIdParam,
    ("Last-Event-ID" = Option<String>, Header, description = "Resume strictly after this position", pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$"),
    EventsQuery,
), responses(
    (status = 200, description = "A stream of `id:` and `data:` (one AG-UI event JSON) records; a deleted run's stream ends with `event: end`, `data: {position, reason: \"deleted\"}`", content_type = "text/event-stream", body = String),
    (status = 400, description = "A malformed run id or position, another attempt, or a position beyond the committed one", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn events(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let opened = match open(&app, &run_id, &headers, query.after(), Follows::Events).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    let subscription = Subscription {
        _counted: SubscriberGuard::new(&app.runs.metrics.subscribers),
        shutdown: app.shutdown.clone(),
        tail: RunTail::new(&app, run_id, opened),
    };
    sse_response(&app, stream::unfold(subscription, Subscription::next))
}

/// A Server-Sent Events answer over `frames` (whole frames, see [`crate::sse`]), with keep-alive comments well
/// inside the idle timeout.
pub(crate) fn sse_response(app: &Shared, frames: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    crate::sse::response(app.config.keep_alive(), frames)
}
