//! `GET /v1/threads/{thread_id}/events` and `/observed`: every run of a thread, one after another in the order of
//! their first ingest, as one Server-Sent Events stream, including runs that start after the client connected.
//!
//! Each run's frames are sent as `/v1/runs/{run_id}/events` (or `/observed`) sends them, with
//! `id: <run_id>/<attempt>-<sequence>`,
//! a position that names the run, so `Last-Event-ID` resumes inside any run of the thread. After a run's terminal
//! event the stream goes on with the thread's next run; while there is none it looks for one every
//! `--poll-interval` (runs are found in storage, so runs ingested by other processes are followed too). A run
//! deleted while it is followed is left for the next. The stream does not end by itself: a thread may always get
//! another run.

use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde::Deserialize;
use tokio::sync::watch;
use utoipa::IntoParams;

use crate::metrics::SubscriberGuard;
use crate::observed::Feed;
use crate::problem::{Params, Problem};
use crate::runs::valid_run_id;
use crate::storage::StorageError;
use crate::subscribe::{open_after, sse_response, RunTail, Step};
use crate::wire::{to_json, DisplayEnd, ErrorBody, DELETED, END};
use crate::{position, Shared, ATTEMPT};

/// The separator of a thread position's run id and its position in the run (a run id never holds it).
const SEPARATOR: char = '/';

/// `GET /v1/threads/{thread_id}/events` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThreadEventsQuery {
    /// Resume strictly after this position (`<run_id>/<attempt>-<sequence>`); the `Last-Event-ID` header wins.
    #[param(pattern = r"^[A-Za-z0-9_.:-]{1,128}/(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    after: Option<String>,
}

/// One frame of a run's stream: its `event:` name (none for an event record), the position it brings the client
/// to (none: no `id`), and its `data:` (as the run's stream holds it: a live event's text is shared, not copied).
type RunFrame<D> = (Option<&'static str>, Option<u64>, D);

/// A run's stream as a thread stream chains it.
trait RunFrames: Sized + Send + 'static {
    /// A frame's `data:` text.
    type Data: std::ops::Deref<Target = str> + Send;
    /// Whether these are `/observed` frames (their response says the host's content policy).
    const OBSERVED: bool;
    /// The run's frames after sequence `after`; `None`: from the start, as a client that holds nothing of it.
    fn open(
        app: &Shared,
        run_id: String,
        after: Option<u64>,
    ) -> impl Future<Output = Result<Self, StorageError>> + Send;
    /// The next frame; `None` when the run's stream is over ([`RunFrames::finished`]) or cut short.
    fn next(
        &mut self,
        shutdown: &mut watch::Receiver<bool>,
    ) -> impl Future<Output = Option<RunFrame<Self::Data>>> + Send;
    /// Whether the run's stream is over: the run is complete or was deleted.
    fn finished(&self) -> bool;
}

impl RunFrames for RunTail {
    type Data = std::sync::Arc<str>;
    const OBSERVED: bool = false;

    async fn open(app: &Shared, run_id: String, after: Option<u64>) -> Result<RunTail, StorageError> {
        let opened = open_after(app, &run_id, after.unwrap_or(0)).await?;
        Ok(RunTail::new(app, run_id, opened))
    }

    async fn next(&mut self, shutdown: &mut watch::Receiver<bool>) -> Option<RunFrame<Self::Data>> {
        match RunTail::next(self, shutdown).await? {
            Step::Event(sequence, data) => Some((None, Some(sequence), data)),
            // As the run's own stream ends: an `end` frame without an id; the thread goes on with its next run.
            Step::Deleted => {
                let end = DisplayEnd { position: position(self.last()).to_string(), reason: DELETED };
                Some((Some(END), None, std::sync::Arc::from(to_json(&end))))
            }
        }
    }

    fn finished(&self) -> bool {
        RunTail::finished(self)
    }
}

impl RunFrames for Feed {
    type Data = String;
    const OBSERVED: bool = true;

    async fn open(app: &Shared, run_id: String, after: Option<u64>) -> Result<Feed, StorageError> {
        let (receiver, _) = app.runs.subscribe(&run_id).await?;
        Ok(Feed::new(app, run_id, receiver, after))
    }

    async fn next(&mut self, shutdown: &mut watch::Receiver<bool>) -> Option<RunFrame<Self::Data>> {
        let frame = Feed::next(self, shutdown).await?;
        Some((Some(frame.event), frame.at, frame.data))
    }

    fn finished(&self) -> bool {
        Feed::finished(self)
    }
}

/// Where a thread's subscriber is: the run it follows and the place of that run in the thread.
struct ThreadFeed<F> {
    app: Shared,
    thread_id: String,
    shutdown: watch::Receiver<bool>,
    current: Option<(String, F)>,
    /// The `created` place of the run followed last: the next run comes after it.
    after_created: u64,
    _counted: SubscriberGuard,
}

impl<F: RunFrames> ThreadFeed<F> {
    async fn next(mut self) -> Option<(Bytes, ThreadFeed<F>)> {
        loop {
            if *self.shutdown.borrow() {
                return None;
            }
            if let Some((run_id, frames)) = &mut self.current {
                match frames.next(&mut self.shutdown).await {
                    Some((event, at, data)) => {
                        let id = at.map(|at| format!("{run_id}{SEPARATOR}{}", position(at)));
                        return Some((crate::sse::frame(event, id.as_deref(), &data), self));
                    }
                    // Shutdown or a storage failure: the client resumes from its last id.
                    None if !frames.finished() => return None,
                    None => {}
                }
                self.current = None;
                continue;
            }
            if !self.follow_next().await.inspect_err(|error| tracing::error!(%error)).ok()? {
                tokio::select! {
                    _ = tokio::time::sleep(self.app.config.poll_interval) => {}
                    _ = self.shutdown.wait_for(|stop| *stop) => return None,
                }
            }
        }
    }

    /// Start following the thread's next run from its beginning; whether there is one (a run deleted before it
    /// could be followed counts: it is passed over, and the next is looked for at once).
    async fn follow_next(&mut self) -> Result<bool, StorageError> {
        let runs = self.app.runs.storage().thread_runs(&self.thread_id, self.after_created, 1).await?;
        let Some(run) = runs.into_iter().next() else { return Ok(false) };
        let frames = F::open(&self.app, run.run_id.clone(), None).await?;
        let stored = still_stored(&self.app, &run.run_id, run.created).await?;
        self.after_created = run.created;
        if stored {
            self.current = Some((run.run_id, frames));
        }
        Ok(true)
    }
}

/// Whether `run_id` is still the run first ingested at `created`, asked once its frames are open. A run deleted
/// between being found and being opened would otherwise be waited on as a run not ingested yet, for ever (its
/// delete has gone by); one deleted after this answer ends its open frames as deleted. A run ingested again under
/// the same id is another run, listed later.
async fn still_stored(app: &Shared, run_id: &str, created: u64) -> Result<bool, StorageError> {
    Ok(app.runs.storage().run(run_id).await?.is_some_and(|record| record.created == created))
}

fn bad_position(message: String) -> Response {
    Problem::new(StatusCode::BAD_REQUEST, "position", message).into_response()
}

/// Every run of the thread as one stream of AG-UI events, in the order of the runs' first ingest, following runs
/// that start later; `id: <run_id>/<attempt>-<sequence>`.
#[utoipa::path(get, path = "/v1/threads/{thread_id}/events", tag = "runs", params(
    crate::routes::ThreadIdParam,
    ("Last-Event-ID" = Option<String>, Header, description = "Resume strictly after this position", pattern = r"^[A-Za-z0-9_.:-]{1,128}/(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$"),
    ThreadEventsQuery,
), responses(
    (status = 200, description = "A stream of `id:` (`<run_id>/<attempt>-<sequence>`) and `data:` (one AG-UI event JSON) records, run after run", content_type = "text/event-stream", body = String),
    (status = 400, description = "A malformed thread id or position, or a position in a run of another thread or beyond its committed one", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn thread_events(
    State(app): State<Shared>,
    Path(thread_id): Path<String>,
    Params(query): Params<ThreadEventsQuery>,
    headers: HeaderMap,
) -> Response {
    thread_stream::<RunTail>(app, thread_id, query, headers).await
}

/// Every run of the thread as `/v1/runs/{run_id}/observed` sends it (`snapshot`, `observed` and `end` frames per
/// run), in the order of the runs' first ingest, following runs that start later; `id: <run_id>/<attempt>-<sequence>`.
#[utoipa::path(get, path = "/v1/threads/{thread_id}/observed", tag = "runs", params(
    crate::routes::ThreadIdParam,
    ("Last-Event-ID" = Option<String>, Header, description = "Resume strictly after this position", pattern = r"^[A-Za-z0-9_.:-]{1,128}/(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$"),
    ThreadEventsQuery,
), responses(
    (status = 200, description = "Each run's `snapshot`, `observed` and `end` frames, run after run; ids name the run", content_type = "text/event-stream", body = String,
        headers(("a13n-retain-content" = String, description = "`true` when the host keeps whole values (`--retain-content`): fold the entries with the same policy"))),
    (status = 400, description = "A malformed thread id or position, or a position in a run of another thread or beyond its committed one", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn thread_observed(
    State(app): State<Shared>,
    Path(thread_id): Path<String>,
    Params(query): Params<ThreadEventsQuery>,
    headers: HeaderMap,
) -> Response {
    thread_stream::<Feed>(app, thread_id, query, headers).await
}

async fn thread_stream<F: RunFrames>(
    app: Shared,
    thread_id: String,
    query: ThreadEventsQuery,
    headers: HeaderMap,
) -> Response {
    if !valid_run_id(&thread_id) {
        return crate::bad_thread_id();
    }

    let mut feed = ThreadFeed::<F> {
        _counted: SubscriberGuard::new(&app.runs.metrics.subscribers),
        shutdown: app.shutdown.clone(),
        app: Arc::clone(&app),
        thread_id,
        current: None,
        after_created: 0,
    };
    if let Some(text) = crate::subscribe::resume_text(&headers, query.after.as_deref()) {
        match resume::<F>(&app, &feed.thread_id, text).await {
            Ok((created, current)) => {
                feed.after_created = created;
                feed.current = current;
            }
            Err(response) => return response,
        }
    } else if let Err(error) = feed.follow_next().await {
        // The thread's first run looked for before answering: storage that cannot serve is a 503, not an empty
        // stream.
        return Problem::storage(error).into_response();
    }
    let frames = stream::unfold(feed, ThreadFeed::next);
    if F::OBSERVED {
        crate::observed::observed_response(&app, frames)
    } else {
        sse_response(&app, frames)
    }
}

/// The `created` place of the run a position names, and that run's frames after the position (none when the
/// client holds the run's end).
type Resumed<F> = (u64, Option<(String, F)>);

/// The run a thread position names, checked to be the thread's, and its frames after that position.
async fn resume<F: RunFrames>(app: &Shared, thread_id: &str, text: &str) -> Result<Resumed<F>, Response> {
    let Some((run_id, at)) = text.rsplit_once(SEPARATOR) else {
        return Err(bad_position(format!("{text:?} is not <run_id>/<attempt>-<sequence>")));
    };
    let at: a13n_stream_protocol::StreamPosition = at.parse().map_err(|error| bad_position(format!("{error}")))?;
    if !valid_run_id(run_id) {
        let rule = crate::RUN_ID_RULE;
        return Err(bad_position(format!("{text:?}: the run id before the last {SEPARATOR:?} is malformed ({rule})")));
    }
    if at.attempt != ATTEMPT {
        return Err(bad_position(format!("{text:?} names no run of this host (attempt {ATTEMPT})")));
    }
    let record = app.runs.storage().run(run_id).await.map_err(|e| Problem::storage(e).into_response())?;
    let Some(record) = record.filter(|record| record.thread_id.as_deref() == Some(thread_id)) else {
        return Err(bad_position(format!("{run_id:?} is no run of thread {thread_id:?}")));
    };
    if at.sequence > record.position {
        let committed = position(record.position);
        let problem = Problem::new(
            StatusCode::BAD_REQUEST,
            "position",
            format!("{text} is beyond the run's committed position {committed}"),
        );
        // As the run's own route answers it: the committed position, for a client to resume from.
        return Err(problem.with("position", committed.to_string()).into_response());
    }
    if record.complete && at.sequence == record.position && !F::OBSERVED {
        // The client has the run's terminal event: the thread goes on with the next run. (An `/observed` client
        // at that position may not have the run's `end` frame, which shares the last entries' id: the run's
        // feed sends it again, as the run's own route does.)
        return Ok((record.created, None));
    }
    let frames =
        F::open(app, run_id.to_owned(), Some(at.sequence)).await.map_err(|e| Problem::storage(e).into_response())?;
    if !still_stored(app, run_id, record.created).await.map_err(|e| Problem::storage(e).into_response())? {
        // Deleted since it was read: as if it had been before.
        return Err(bad_position(format!("{run_id:?} is no run of thread {thread_id:?}")));
    }
    Ok((record.created, Some((run_id.to_owned(), frames))))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use a13n_testkit::hello_stream;
    use async_trait::async_trait;

    use super::{RunTail, ThreadFeed};
    use crate::ingest::Budget;
    use crate::metrics::SubscriberGuard;
    use crate::runs::{OnReject, Runs};
    use crate::storage::{Batch, Rejection, RunRecord, SqliteStorage, Storage, StorageError, StoredEvent, StoredItem};
    use crate::{App, Config};
    use std::sync::Arc;
    use tokio::sync::watch;

    /// SQLite storage that, once armed, deletes the runs a thread listing finds before it answers: a delete (by
    /// another process, or retention) landing between a thread follower finding its next run and opening it.
    struct DeletedOnceFound {
        inner: SqliteStorage,
        armed: AtomicBool,
    }

    #[async_trait]
    impl Storage for DeletedOnceFound {
        async fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError> {
            self.inner.run(run_id).await
        }
        async fn runs(&self, after: &str, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
            self.inner.runs(after, limit).await
        }
        async fn newest_runs(&self, before: Option<u64>, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
            self.inner.newest_runs(before, limit).await
        }
        async fn thread_runs(&self, thread: &str, after: u64, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
            let runs = self.inner.thread_runs(thread, after, limit).await?;
            if self.armed.swap(false, Ordering::SeqCst) {
                for run in &runs {
                    self.inner.delete(&run.run_id, None).await?;
                }
            }
            Ok(runs)
        }
        async fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError> {
            self.inner.journal(run_id, from, to).await
        }
        async fn commit(&self, batch: Arc<Batch>) -> Result<(), StorageError> {
            self.inner.commit(batch).await
        }
        async fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError> {
            self.inner.events_after(run_id, after, limit).await
        }
        async fn items(
            &self,
            run_id: &str,
            after: u64,
            before: Option<u64>,
            limit: usize,
        ) -> Result<Vec<StoredItem>, StorageError> {
            self.inner.items(run_id, after, before, limit).await
        }
        async fn rejections(&self, run_id: &str, from: u64, limit: usize) -> Result<Vec<Rejection>, StorageError> {
            self.inner.rejections(run_id, from, limit).await
        }
        async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
            self.inner.delete(run_id, idle_before).await
        }
        async fn idle_runs(&self, before: u64, after: &str, limit: usize) -> Result<Vec<String>, StorageError> {
            self.inner.idle_runs(before, after, limit).await
        }
    }

    /// Regression (a new user's trial): a run deleted just after a thread follower found it was opened as a run
    /// not ingested yet and waited on for ever, and the thread's later runs never came.
    #[tokio::test]
    async fn a_run_deleted_between_being_found_and_opened_is_passed_over() {
        let dir = std::env::temp_dir().join(format!("a13n-thread-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let inner = SqliteStorage::open(&dir.join("host.db")).unwrap();
        // Another process writes the runs: this host holds nothing of them in memory.
        let writer = Runs::new(Arc::new(inner.clone()), false);
        let storage = Arc::new(DeletedOnceFound { inner, armed: AtomicBool::new(false) });
        let (_stop, shutdown) = watch::channel(false);
        let runs = Runs::new(storage.clone(), false);
        let counted = SubscriberGuard::new(&runs.metrics.subscribers);
        let app = Arc::new(App { runs, config: Config::default(), budget: Budget::new(1 << 20), shutdown });
        writer.ingest("run-a", 0, hello_stream("thread-t", "run-a"), OnReject::Refuse).await.unwrap();
        writer.ingest("run-b", 0, hello_stream("thread-t", "run-b"), OnReject::Refuse).await.unwrap();
        storage.armed.store(true, Ordering::SeqCst);
        let feed = ThreadFeed::<RunTail> {
            app: Arc::clone(&app),
            thread_id: "thread-t".into(),
            shutdown: app.shutdown.clone(),
            current: None,
            after_created: 0,
            _counted: counted,
        };
        let next = tokio::time::timeout(Duration::from_secs(60), feed.next()).await;
        let (frame, _feed) = next.expect("the deleted run is passed over, not waited on").expect("a frame");
        let frame = String::from_utf8_lossy(&frame);
        assert!(frame.contains("id: run-b/0-1\n"), "the next run's first event comes: {frame}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
