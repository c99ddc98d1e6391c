//! `a13n-stream serve`: a durable Agent Stream Protocol host.
//!
//! - `POST /v1/runs/{run_id}/source?offset=N` takes Harness source lines (NDJSON). A batch starting at the
//!   journal's end is observed, folded and committed in one transaction (journal lines, AG-UI events with their
//!   display sequence, changed display items, continuation); an exact retry of stored lines is acknowledged
//!   without effect; any other offset is a 409 naming the expected offset. A malformed or rejected line commits
//!   nothing and the 4xx answer names the line and the reason.
//! - `GET /v1/runs/{run_id}/events` streams the run's AG-UI events as Server-Sent Events with
//!   `id: <attempt>-<sequence>`; `Last-Event-ID` (or `?after=`) resumes strictly after that position: stored
//!   events first, then the live tail, with no gap and no duplicate, ending after the run's terminal event.
//! - `GET /v1/runs/{run_id}/items?after=&before=&limit=` pages display items by ordinal;
//!   `GET /v1/runs/{run_id}/snapshot` returns the committed checkpoint; `GET /v1/runs`; `/healthz`; `/metrics`.
//!
//! After a restart every run is rebuilt on first use from its committed checkpoint, or from its journal when the
//! checkpoint is missing or unreadable.

#![forbid(unsafe_code)]

pub mod postgres;
pub mod runs;
pub mod storage;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::runs::{is_terminal, parse_position, valid_run_id, IngestError, Live, Runs};
use crate::storage::{SqliteStorage, Storage, StoredEvent};

/// How the host runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen (loopback by default).
    pub listen: SocketAddr,
    /// A SQLite database file, or a `postgres://` URL (several processes may share one PostgreSQL database).
    pub database: String,
    /// A bearer token every request must carry, when set.
    pub token: Option<String>,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// The largest source line.
    pub max_line_bytes: usize,
    /// The most lines in one batch.
    pub max_batch_lines: usize,
    /// Keep full values in displays (a durable host's choice).
    pub retain_content: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            database: "a13n-stream.db".into(),
            token: None,
            max_body_bytes: 32 * 1024 * 1024,
            max_line_bytes: 8 * 1024 * 1024,
            max_batch_lines: 10_000,
            retain_content: false,
        }
    }
}

/// Why the host could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The database could not be opened or migrated.
    #[error("storage: {0}")]
    Storage(#[from] storage::StorageError),
    /// The listener failed.
    #[error("listening on {address}: {source}")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

struct App {
    runs: Runs,
    config: Config,
}

type Shared = Arc<App>;

/// The routes, over `runs`.
fn router(app: Shared) -> Router {
    let body_limit = app.config.max_body_bytes;
    Router::new()
        .route("/healthz", get(|| async { axum::Json(json!({"status": "ok"})) }))
        .route("/metrics", get(metrics))
        .route("/v1/runs", get(list_runs))
        .route("/v1/runs/{run_id}/source", post(ingest))
        .route("/v1/runs/{run_id}/events", get(events))
        .route("/v1/runs/{run_id}/items", get(items))
        .route("/v1/runs/{run_id}/snapshot", get(snapshot))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), authorize))
        .with_state(app)
}

/// Open storage, bind, and serve until interrupted. `on_listening` receives the bound address (port 0 picks one).
pub async fn serve(config: Config, on_listening: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    let url = config.database.clone();
    let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
    let opened = tokio::task::spawn_blocking(move || -> Result<Arc<dyn Storage>, storage::StorageError> {
        if postgres {
            Ok(Arc::new(postgres::PostgresStorage::open(&url)?))
        } else {
            Ok(Arc::new(SqliteStorage::open(std::path::Path::new(&url))?))
        }
    })
    .await
    .map_err(|error| storage::StorageError::Database(error.to_string()))?;
    let storage = opened?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen { address: config.listen, source })?;
    let address = listener.local_addr().map_err(|source| ServeError::Listen { address: config.listen, source })?;
    let app = Arc::new(App { runs: Runs::new(storage, config.retain_content), config });
    if postgres {
        // Commits of other processes wake this process's subscribers and refresh its runs.
        let (app, url, handle) = (Arc::clone(&app), app.config.database.clone(), tokio::runtime::Handle::current());
        std::thread::spawn(move || {
            postgres::listen(&url, |run_id| {
                let app = Arc::clone(&app);
                handle.spawn(async move { app.runs.advanced_elsewhere(&run_id).await });
            })
        });
    }
    on_listening(address);
    tracing::info!(%address, "serving");
    axum::serve(listener, router(app))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|source| ServeError::Listen { address, source })
}

fn problem(status: StatusCode, body: serde_json::Value) -> Response {
    (status, axum::Json(json!({ "error": body }))).into_response()
}

fn bad_run_id() -> Response {
    problem(StatusCode::BAD_REQUEST, json!({"message": "run ids are 1 to 128 characters of A-Z a-z 0-9 - _ . :"}))
}

fn storage_problem(error: impl std::fmt::Display) -> Response {
    tracing::error!(%error, "storage failure");
    problem(StatusCode::SERVICE_UNAVAILABLE, json!({"message": format!("storage: {error}")}))
}

async fn authorize(State(app): State<Shared>, request: Request, next: Next) -> Response {
    if let Some(token) = &app.config.token {
        let presented = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        if presented != Some(format!("Bearer {token}").as_str()) {
            return problem(StatusCode::UNAUTHORIZED, json!({"message": "a bearer token is required"}));
        }
    }
    next.run(request).await
}

#[derive(Deserialize)]
struct IngestQuery {
    offset: Option<u64>,
}

async fn ingest(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Query(query): Query<IngestQuery>,
    body: Bytes,
) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    let Some(offset) = query.offset else {
        return problem(
            StatusCode::BAD_REQUEST,
            json!({"message": "?offset=N (the journal position of the first line) is required"}),
        );
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return problem(StatusCode::BAD_REQUEST, json!({"message": "the body is not UTF-8"}));
    };
    let mut lines = Vec::new();
    for (index, line) in text.split('\n').map(|l| l.trim_end_matches('\r')).filter(|l| !l.trim().is_empty()).enumerate()
    {
        if line.len() > app.config.max_line_bytes {
            let message = format!("the line is {} bytes; the limit is {}", line.len(), app.config.max_line_bytes);
            return problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({"line": offset + index as u64, "kind": "input", "message": message}),
            );
        }
        lines.push(line.to_owned());
    }
    if lines.len() > app.config.max_batch_lines {
        let message = format!("{} lines; a batch holds at most {}", lines.len(), app.config.max_batch_lines);
        return problem(StatusCode::PAYLOAD_TOO_LARGE, json!({"message": message}));
    }
    match app.runs.ingest(&run_id, offset, lines).await {
        Ok(accepted) => axum::Json(json!({
            "next_offset": accepted.next_offset,
            "events": accepted.events,
            "duplicate": accepted.duplicate,
            "position": format!("0-{}", accepted.position),
        }))
        .into_response(),
        Err(IngestError::Offset { expected }) => problem(
            StatusCode::CONFLICT,
            json!({"expected_offset": expected, "message": format!("the batch must start at offset {expected}")}),
        ),
        Err(IngestError::Line { line, kind, message }) => {
            problem(StatusCode::UNPROCESSABLE_ENTITY, json!({"line": line, "kind": kind, "message": message}))
        }
        Err(IngestError::Storage(message)) => storage_problem(message),
    }
}

#[derive(Deserialize)]
struct EventsQuery {
    after: Option<String>,
}

/// Where a subscriber is: replaying stored events after `last`, or following the live tail.
struct Subscription {
    app: Shared,
    run_id: String,
    receiver: tokio::sync::broadcast::Receiver<Arc<Live>>,
    last: u64,
    pending: std::collections::VecDeque<(u64, String)>,
    catching_up: bool,
    finished: bool,
    /// The position of a run already complete when subscribing (`u64::MAX` while it is still running).
    complete_at: u64,
}

const PAGE: usize = 512;

impl Subscription {
    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Subscription)> {
        loop {
            if let Some((sequence, data)) = self.pending.pop_front() {
                self.last = sequence;
                self.finished = is_terminal(&data);
                self.app.runs.metrics.delivered.fetch_add(1, Ordering::Relaxed);
                let event = SseEvent::default().id(format!("0-{sequence}")).data(data);
                return Some((Ok(event), self));
            }
            if self.finished {
                self.app.runs.metrics.subscribers.fetch_sub(1, Ordering::Relaxed);
                return None;
            }
            if self.catching_up {
                let storage = self.app.runs.storage();
                let (run_id, after) = (self.run_id.clone(), self.last);
                let page = tokio::task::spawn_blocking(move || storage.events_after(&run_id, after, PAGE)).await;
                let page: Vec<StoredEvent> = match page {
                    Ok(Ok(page)) => page,
                    _ => {
                        self.app.runs.metrics.subscribers.fetch_sub(1, Ordering::Relaxed);
                        return None;
                    }
                };
                if page.len() < PAGE {
                    self.catching_up = false;
                    // A completed run has nothing more to send once its stored events are exhausted.
                    if page.is_empty() && self.complete_at <= self.last {
                        self.finished = true;
                    }
                }
                self.pending.extend(page.into_iter().map(|event| (event.sequence, event.event)));
                continue;
            }
            match self.receiver.recv().await {
                Ok(live) => match live.as_ref() {
                    // Live events are used only when they follow on directly; anything else (a gap left by
                    // commits of another process) is read from storage, which has every published event.
                    Live::Event(delivered) if delivered.sequence == self.last + 1 => {
                        self.pending.push_back((delivered.sequence, delivered.data.clone()));
                    }
                    Live::Event(delivered) if delivered.sequence > self.last => self.catching_up = true,
                    Live::Event(_) => {}
                    Live::Wake => self.catching_up = true,
                },
                Err(RecvError::Lagged(_)) => {
                    // Fallen behind the live buffer: catch up from storage instead of growing a buffer.
                    self.app.runs.metrics.lagged.fetch_add(1, Ordering::Relaxed);
                    self.catching_up = true;
                }
                Err(RecvError::Closed) => {
                    self.app.runs.metrics.subscribers.fetch_sub(1, Ordering::Relaxed);
                    return None;
                }
            }
        }
    }
}

async fn events(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    let resume = headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_owned).or(query.after);
    let after = match resume.as_deref().map(parse_position) {
        None => 0,
        Some(Some(after)) => after,
        Some(None) => {
            return problem(
                StatusCode::BAD_REQUEST,
                json!({"message": "Last-Event-ID / after is attempt-sequence, e.g. 0-42"}),
            )
        }
    };
    let (receiver, position, complete) = match app.runs.subscribe(&run_id).await {
        Ok(subscription) => subscription,
        Err(error) => return storage_problem(error),
    };
    app.runs.metrics.subscribers.fetch_add(1, Ordering::Relaxed);
    let subscription = Subscription {
        app: Arc::clone(&app),
        run_id,
        receiver,
        last: after,
        pending: std::collections::VecDeque::new(),
        catching_up: true,
        finished: false,
        complete_at: if complete { position } else { u64::MAX },
    };
    let stream: std::pin::Pin<Box<dyn Stream<Item = Result<SseEvent, Infallible>> + Send>> =
        Box::pin(stream::unfold(subscription, Subscription::next));
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

#[derive(Deserialize)]
struct ItemsQuery {
    after: Option<u64>,
    before: Option<u64>,
    limit: Option<usize>,
}

async fn items(State(app): State<Shared>, Path(run_id): Path<String>, Query(query): Query<ItemsQuery>) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    let (position, complete, _) = match app.runs.status(&run_id).await {
        Ok(status) => status,
        Err(error) => return storage_problem(error),
    };
    let limit = query.limit.unwrap_or(100).clamp(1, 1000);
    let storage = app.runs.storage();
    let after = query.after.unwrap_or(0);
    let page = tokio::task::spawn_blocking(move || storage.items(&run_id, after, query.before, limit)).await;
    let page = match page {
        Ok(Ok(page)) => page,
        Ok(Err(error)) => return storage_problem(error),
        Err(error) => return storage_problem(error),
    };
    let mut body = String::with_capacity(page.iter().map(|i| i.item.len() + 1).sum::<usize>() + 128);
    body.push_str(r#"{"items":["#);
    for (index, item) in page.iter().enumerate() {
        if index > 0 {
            body.push(',');
        }
        body.push_str(&item.item);
    }
    let last = page.last().map_or(after, |item| item.ordinal);
    body.push_str(&format!(r#"],"position":"0-{position}","complete":{complete},"next_after":{last}}}"#));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn snapshot(State(app): State<Shared>, Path(run_id): Path<String>) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    match app.runs.snapshot(&run_id).await {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(error) => storage_problem(error),
    }
}

async fn list_runs(State(app): State<Shared>) -> Response {
    let storage = app.runs.storage();
    match tokio::task::spawn_blocking(move || storage.runs()).await {
        Ok(Ok(runs)) => axum::Json(json!({"runs": runs.iter().map(|run| json!({
            "run_id": run.run_id,
            "journal_len": run.journal_len,
            "position": format!("0-{}", run.position),
            "complete": run.complete,
        })).collect::<Vec<_>>()}))
        .into_response(),
        Ok(Err(error)) => storage_problem(error),
        Err(error) => storage_problem(error),
    }
}

async fn metrics(State(app): State<Shared>) -> Response {
    let m = &app.runs.metrics;
    let text = format!(
        "a13n_ingest_lines_total {}\na13n_ingest_batches_total {}\na13n_ingest_refused_total {}\n\
         a13n_ingest_duplicates_total {}\na13n_events_delivered_total {}\na13n_subscribers {}\n\
         a13n_subscribers_lagged_total {}\na13n_run_recoveries_total {}\na13n_run_journal_rebuilds_total {}\n",
        m.lines.load(Ordering::Relaxed),
        m.batches.load(Ordering::Relaxed),
        m.refused.load(Ordering::Relaxed),
        m.duplicates.load(Ordering::Relaxed),
        m.delivered.load(Ordering::Relaxed),
        m.subscribers.load(Ordering::Relaxed),
        m.lagged.load(Ordering::Relaxed),
        m.recoveries.load(Ordering::Relaxed),
        m.journal_rebuilds.load(Ordering::Relaxed),
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
