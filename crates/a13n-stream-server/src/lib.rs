//! `a13n-stream serve`: a durable Agent Stream Protocol host that is safe to leave running.
//!
//! - `POST /v1/runs/{run_id}/source?offset=N` takes Harness source lines (NDJSON). A batch starting at the
//!   journal's end is observed, folded and committed in one transaction; an exact retry of stored lines is
//!   acknowledged without effect; any other offset is a 409 saying whether the batch is behind, ahead, or differs
//!   from what is stored. A malformed or rejected line commits nothing (or, with `on_reject=skip`, is journaled
//!   and skipped), and a line of another run or after the run's terminal result is refused.
//! - `GET /v1/runs/{run_id}/events` streams the run's AG-UI events as Server-Sent Events with
//!   `id: <attempt>-<sequence>`; `Last-Event-ID` (or `?after=`) resumes strictly after that position.
//! - `GET /v1/runs/{run_id}/items`, `/snapshot`, `/rejections`; `GET /v1/runs`; `/healthz`; `/metrics`.
//! - `GET /v1/threads/{thread_id}/runs` pages a thread's runs in the order of first ingest.
//! - `DELETE /v1/runs/{run_id}` deletes a run; with [`Config::retain`], runs idle for longer are deleted
//!   periodically.
//!
//! Bounded everywhere: connections, request heads, bodies, bytes in flight, and runs held in memory; every limit
//! is a field of [`Config`]. See the modules: [`config`], [`listener`] (connections and timeouts), [`guard`]
//! (hosts, origins, tokens), `ingest`, `subscribe`, `routes`, [`runs`] (runs in memory), [`storage`] and
//! [`postgres`].

#![forbid(unsafe_code)]

mod checkpointer;
mod chunks;
pub mod config;
mod display;
mod group_commit;
pub mod guard;
mod ingest;
pub mod listener;
pub mod metrics;
mod observed;
pub mod openapi;
mod patch;
pub mod postgres;
mod problem;
mod routes;
pub mod runs;
mod sse;
pub mod storage;
mod subscribe;
mod threads;
pub mod viewer;
pub mod wire;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use tokio::sync::watch;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::set_header::SetResponseHeaderLayer;

pub use crate::config::{Config, ConfigError};
use crate::ingest::Budget;
use crate::metrics::Metrics;
use crate::problem::Problem;
use crate::runs::Runs;
use crate::storage::{SqliteStorage, Storage};

/// The delivery attempt of every position this host serves.
pub const ATTEMPT: u64 = 0;

/// The position of display sequence `sequence`: the one position type every route writes and reads.
pub(crate) fn position(sequence: u64) -> a13n_stream_protocol::StreamPosition {
    a13n_stream_protocol::StreamPosition { attempt: ATTEMPT, sequence }
}

/// Why the host could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The configuration cannot work.
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
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
    budget: Budget,
    shutdown: watch::Receiver<bool>,
}

type Shared = Arc<App>;

fn bad_run_id() -> Response {
    Problem::new(StatusCode::BAD_REQUEST, "run_id", RUN_ID_RULE).into_response()
}

/// The rule of run and thread ids (`runs::valid_run_id`), after the name of which it is said.
macro_rules! id_rule {
    ($ids:literal) => {
        concat!($ids, " are 1 to 128 characters of A-Z a-z 0-9 - _ . :, not only dots")
    };
}

/// What a run id must be.
const RUN_ID_RULE: &str = id_rule!("run ids");

/// What a thread id must be.
const THREAD_ID_RULE: &str = id_rule!("thread ids");

/// The answer for a malformed thread id (thread ids follow the run id rule, `runs::valid_run_id`).
fn bad_thread_id() -> Response {
    Problem::new(StatusCode::BAD_REQUEST, "thread_id", THREAD_ID_RULE).into_response()
}

/// CORS answers for the allowed origins (`--allow-origin`); other origins never get this far.
fn cors(config: &Config) -> CorsLayer {
    let origins = if config.allow_origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(config.allow_origins.iter().filter_map(|o| o.parse().ok()))
    };
    CorsLayer::new()
        .allow_origin(origins)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, HeaderName::from_static("last-event-id")])
        .max_age(std::time::Duration::from_secs(600))
}

/// The routes. Layers run outside in: hosts and origins, CORS (which answers preflights), the token, the route.
fn router(app: Shared) -> Router {
    let body_limit = app.config.max_body_bytes;
    viewer::asset_routes(Router::new())
        .route("/", get(viewer::page))
        .route("/runs/{run_id}", get(viewer::run_page))
        .route("/threads/{thread_id}", get(viewer::thread_page))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics))
        .route("/openapi.json", get(openapi::openapi_json))
        .route("/v1/runs", get(routes::list_runs))
        .route("/v1/runs/{run_id}", delete(routes::delete_run))
        .route("/v1/threads/{thread_id}/runs", get(routes::thread_runs))
        .route("/v1/runs/{run_id}/source", post(ingest::ingest))
        .route("/v1/runs/{run_id}/events", get(subscribe::events))
        .route("/v1/runs/{run_id}/display", get(display::display))
        .route("/v1/runs/{run_id}/observed", get(observed::observed))
        .route("/v1/threads/{thread_id}/events", get(threads::thread_events))
        .route("/v1/threads/{thread_id}/observed", get(threads::thread_observed))
        .route("/v1/runs/{run_id}/items", get(routes::items))
        .route("/v1/runs/{run_id}/snapshot", get(routes::snapshot))
        .route("/v1/runs/{run_id}/rejections", get(routes::rejections))
        .fallback(|| async { Problem::new(StatusCode::NOT_FOUND, "not_found", "no such route").into_response() })
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            let message = format!("{method} is not a method of this route");
            Problem::new(StatusCode::METHOD_NOT_ALLOWED, "method", message).into_response()
        })
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard::authorize))
        .layer(cors(&app.config))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard::hosts_and_origins))
        // No answer is to be read as another type than it says (JSON errors and pages included).
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .with_state(app)
}

async fn open_storage(config: &Config) -> Result<(Arc<dyn Storage>, bool), ServeError> {
    let url = config.database.clone();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let options = postgres::PoolOptions { size: config.db_pool, wait: config.db_timeout };
        return Ok((Arc::new(postgres::PostgresStorage::open(&url, options).await?), true));
    }
    let opened = tokio::task::spawn_blocking(move || SqliteStorage::open(std::path::Path::new(&url)))
        .await
        .map_err(|error| storage::StorageError::Database(error.to_string()))??;
    Ok((Arc::new(opened), false))
}

/// Resolve on SIGINT (Ctrl-C) or SIGTERM.
async fn signalled() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Keep the runs in step with other processes' commits: PostgreSQL notices, or SQLite's data version (read once
/// before the host serves, so that a change made after that, however soon, is noticed at the next poll).
async fn follow_other_processes(app: &Shared, postgres: bool) -> tokio::task::JoinHandle<()> {
    if postgres {
        let (app, url) = (Arc::clone(app), app.config.database.clone());
        return tokio::spawn(postgres::listen(url, app.config.db_timeout, move |heard| {
            let app = Arc::clone(&app);
            tokio::spawn(async move {
                match heard {
                    postgres::Heard::Listening => app.runs.refresh_all().await,
                    postgres::Heard::Commit(notice) => app.runs.advanced_elsewhere(&notice).await,
                }
            });
        }));
    }
    let app = Arc::clone(app);
    let mut seen = app.runs.storage().external_version().await.ok().flatten();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(app.config.poll_interval).await;
            let Ok(Some(version)) = app.runs.storage().external_version().await else { continue };
            if seen.is_some_and(|seen| seen != version) {
                app.runs.refresh_all().await;
            }
            seen = Some(version);
        }
    })
}

/// Open storage, bind, and serve until SIGINT or SIGTERM, then shut down gracefully. `on_listening` receives the
/// bound address (port 0 picks one).
pub async fn serve(config: Config, on_listening: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    serve_until(config, on_listening, signalled()).await
}

/// [`serve`] until `stop` resolves (a host embedded in another program, or a test), then shut down gracefully.
pub async fn serve_until(
    config: Config,
    on_listening: impl FnOnce(SocketAddr),
    stop_when: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    config.validate()?;
    let (storage, postgres) = open_storage(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen { address: config.listen, source })?;
    let address = listener.local_addr().map_err(|source| ServeError::Listen { address: config.listen, source })?;
    let metrics = Arc::new(Metrics::default());
    let (stop, shutdown) = watch::channel(false);
    let app = Arc::new(App {
        runs: Runs::with_limits(storage, config.retain_content, config.runs, Arc::clone(&metrics)),
        budget: Budget::new(config.max_ingest_bytes),
        shutdown: shutdown.clone(),
        config,
    });
    let follower = follow_other_processes(&app, postgres).await;
    let sweeper = {
        let app = Arc::clone(&app);
        let every =
            (app.config.runs.idle / 4).clamp(std::time::Duration::from_millis(100), std::time::Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                app.runs.sweep();
            }
        })
    };
    let retention = app.config.retain.map(|retain| {
        let app = Arc::clone(&app);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(app.config.retain_interval);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                match app.runs.expire(retain).await {
                    Ok(0) => {}
                    Ok(deleted) => {
                        tracing::info!(deleted, ?retain, "retention deleted runs idle for longer than --retain")
                    }
                    Err(error) => tracing::error!(%error, "retention failed; trying again at the next interval"),
                }
            }
        })
    });
    let limits = listener::ConnectionLimits {
        max_connections: app.config.max_connections,
        header_timeout: app.config.header_timeout,
        idle_timeout: app.config.idle_timeout,
        shutdown_timeout: app.config.shutdown_timeout,
    };
    on_listening(address);
    tracing::info!(%address, "serving");
    tokio::spawn(async move {
        stop_when.await;
        tracing::info!("shutting down: no new connections; ending event streams; finishing open requests");
        let _ = stop.send(true);
    });
    listener::serve(listener, router(Arc::clone(&app)), limits, metrics, shutdown).await;
    sweeper.abort();
    follower.abort();
    if let Some(retention) = retention {
        retention.abort();
    }
    tracing::info!("stopped");
    Ok(())
}
