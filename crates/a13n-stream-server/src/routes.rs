//! The read routes: runs (paged), a run's items (paged), its snapshot and its rejected lines; liveness; metrics.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::problem::{Count, Limit, Params, Problem};
use crate::runs::valid_run_id;
use crate::wire::{stored_items, to_json, ErrorBody, ItemsPage, Snapshot};
use crate::wire::{Health, RejectedLine, RejectionsPage, RunOrder, RunSummary, RunsPage, ThreadRunsPage};
use crate::{bad_run_id, position, Shared};

/// The default page of `/v1/runs`, `/items` and `/rejections`.
pub const PAGE_DEFAULT: usize = 100;
/// The largest page.
pub const PAGE_MAX: usize = 1000;

/// A page size from a `limit` parameter: the default when absent.
fn page_size(limit: Option<Limit>) -> usize {
    limit.map_or(PAGE_DEFAULT, |Limit(limit)| limit)
}

fn not_found(run_id: &str) -> Response {
    Problem::new(StatusCode::NOT_FOUND, "not_found", format!("no run {run_id:?} was ingested")).into_response()
}

/// The committed status of an ingested run, or the answer for a malformed id (400), an unknown run (404) or a
/// storage failure (503).
async fn ingested(app: &Shared, run_id: &str) -> Result<crate::runs::RunStatus, Response> {
    if !valid_run_id(run_id) {
        return Err(bad_run_id());
    }
    match app.runs.status(run_id).await {
        Ok(Some(status)) => Ok(status),
        Ok(None) => Err(not_found(run_id)),
        Err(error) => Err(Problem::storage(error).into_response()),
    }
}

/// Liveness: answered without a token. A host whose storage can no longer store (its SQLite file was removed or
/// replaced) answers 503.
#[utoipa::path(get, path = "/healthz", tag = "host", operation_id = "healthz", security(()), responses(
    (status = 200, description = "The host is up", body = Health),
    (status = 503, description = "The host cannot store: its database file is gone", body = ErrorBody),
))]
pub(crate) async fn healthz(State(app): State<Shared>) -> Response {
    match app.runs.storage().check().await {
        Ok(()) => axum::Json(Health { status: "ok" }).into_response(),
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// The host's counters and gauges, in the OpenMetrics text format.
#[utoipa::path(get, path = "/metrics", tag = "host", responses(
    (status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text", body = String),
))]
pub(crate) async fn metrics(State(app): State<Shared>) -> Response {
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], app.runs.metrics.encode()).into_response()
}

/// `GET /v1/runs` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunsQuery {
    /// `id` (the default) or `newest` (the most recently first ingested first).
    #[param(inline)]
    order: Option<RunOrder>,
    /// The previous page's `next_after`: runs whose id sorts after this one, or, newest first, first ingested
    /// before the run of this place.
    after: Option<String>,
    /// The most runs in the page: 1 to 1000 (default 100).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 1000)]
    limit: Option<Limit>,
}

/// Runs by id, or the most recently first ingested first, a page at a time.
#[utoipa::path(get, path = "/v1/runs", tag = "runs", params(RunsQuery), responses(
    (status = 200, description = "A page of runs", body = RunsPage),
    (status = 400, description = "A malformed parameter", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn list_runs(State(app): State<Shared>, Params(query): Params<RunsQuery>) -> Response {
    let limit = page_size(query.limit);
    let order = query.order.unwrap_or_default();
    let listed = match order {
        RunOrder::Id => app.runs.storage().runs(query.after.as_deref().unwrap_or_default(), limit).await,
        RunOrder::Newest => {
            let before = match query.after.as_deref().map(str::parse::<u64>) {
                None => None,
                Some(Ok(place)) => Some(place),
                Some(Err(_)) => {
                    let message = "after: newest first, a run's place in the order of first ingest (the previous page's next_after)";
                    return Problem::new(StatusCode::BAD_REQUEST, "query", message).into_response();
                }
            };
            app.runs.storage().newest_runs(before, limit).await
        }
    };
    match listed {
        Ok(runs) => {
            let cursor = |run: &crate::storage::RunRecord| match order {
                RunOrder::Id => run.run_id.clone(),
                RunOrder::Newest => run.created.to_string(),
            };
            let next_after = (runs.len() == limit).then(|| runs.last().map(cursor)).flatten();
            let runs = runs.into_iter().map(RunSummary::of).collect();
            axum::Json(RunsPage { runs, next_after }).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// `GET /v1/threads/{thread_id}/runs` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThreadRunsQuery {
    /// Runs first ingested after this place (the previous page's `next_after`; default 0).
    #[param(value_type = Option<u64>, minimum = 0, maximum = 9223372036854775807_i64)]
    after: Option<Count>,
    /// The most runs in the page: 1 to 1000 (default 100).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 1000)]
    limit: Option<Limit>,
}

/// The `{thread_id}` path parameter.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // Only its OpenAPI description is used; the handler takes the id as a `String`.
pub(crate) struct ThreadIdParam {
    /// The thread (the Harness thread id of the runs' first lines): 1 to 128 of `A-Z a-z 0-9 - _ . :`, not only
    /// dots.
    #[param(pattern = r"^[A-Za-z0-9_.:-]*[A-Za-z0-9_:-][A-Za-z0-9_.:-]*$", max_length = 128, min_length = 1)]
    thread_id: String,
}

/// The runs of a thread (the root runs whose first lines name it), a page at a time in the order of their first
/// ingest. A thread with no stored run has an empty page.
#[utoipa::path(get, path = "/v1/threads/{thread_id}/runs", tag = "runs", params(ThreadIdParam, ThreadRunsQuery), responses(
    (status = 200, description = "A page of the thread's runs, first ingested first", body = ThreadRunsPage),
    (status = 400, description = "A malformed thread id or parameter", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn thread_runs(
    State(app): State<Shared>,
    Path(thread_id): Path<String>,
    Params(query): Params<ThreadRunsQuery>,
) -> Response {
    if !valid_run_id(&thread_id) {
        return crate::bad_thread_id();
    }
    let limit = page_size(query.limit);
    let after = query.after.map_or(0, |Count(after)| after);
    match app.runs.storage().thread_runs(&thread_id, after, limit).await {
        Ok(runs) => {
            let next_after = (runs.len() == limit).then(|| runs.last().map(|run| run.created)).flatten();
            let runs = runs.into_iter().map(RunSummary::of).collect();
            axum::Json(ThreadRunsPage { runs, next_after }).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// `GET /v1/runs/{run_id}/items` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ItemsQuery {
    /// Items with a larger ordinal (the previous page's `next_after`; default 0).
    #[param(value_type = Option<u64>, minimum = 0, maximum = 9223372036854775807_i64)]
    after: Option<Count>,
    /// Items with a smaller ordinal.
    #[param(value_type = Option<u64>, minimum = 0, maximum = 9223372036854775807_i64)]
    before: Option<Count>,
    /// The most items in the page: 1 to 1000 (default 100).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 1000)]
    limit: Option<Limit>,
}

/// Display items by ordinal, with the committed position.
#[utoipa::path(get, path = "/v1/runs/{run_id}/items", tag = "runs", params(RunIdParam, ItemsQuery), responses(
    (status = 200, description = "A page of items", body = ItemsPage),
    (status = 400, description = "A malformed run id or parameter", body = ErrorBody),
    (status = 404, description = "No such run was ingested", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn items(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<ItemsQuery>,
) -> Response {
    if let Err(response) = ingested(&app, &run_id).await {
        return response;
    }
    let limit = page_size(query.limit);
    let after = query.after.map_or(0, |Count(after)| after);
    let before = query.before.map(|Count(before)| before);
    // The page and the position it is at come from one read of the run's display.
    let (page, status) = match app.runs.items_page(&run_id, after, before, limit).await {
        Ok(Some(read)) => read,
        Ok(None) => return not_found(&run_id),
        Err(error) => return Problem::storage(error).into_response(),
    };
    let items = match stored_items(&page) {
        Ok(items) => items,
        Err(error) => return Problem::storage(error).into_response(),
    };
    let next_after = page.last().map_or(after, |item| item.ordinal);
    let position = position(status.position).to_string();
    let body = to_json(&ItemsPage { items, position, complete: status.complete, next_after });
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The committed display checkpoint: restore it and continue from its position with `events`.
#[utoipa::path(get, path = "/v1/runs/{run_id}/snapshot", tag = "runs", params(RunIdParam), responses(
    (status = 200, description = "The reference's DisplaySnapshot JSON", body = Snapshot),
    (status = 400, description = "A malformed run id", body = ErrorBody),
    (status = 404, description = "No such run was ingested", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn snapshot(State(app): State<Shared>, Path(run_id): Path<String>) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    match app.runs.snapshot(&run_id).await {
        Ok(Some(json)) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(None) => not_found(&run_id),
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// Delete a run: its journal, events, items and rejected lines, at once and for good. Its open event streams
/// end with an `end` frame whose `reason` is `deleted`; later reads of it are 404. Needs the token, like ingest.
#[utoipa::path(delete, path = "/v1/runs/{run_id}", tag = "runs", params(RunIdParam), responses(
    (status = 204, description = "The run was deleted"),
    (status = 400, description = "A malformed run id", body = ErrorBody),
    (status = 404, description = "No such run is stored", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn delete_run(State(app): State<Shared>, Path(run_id): Path<String>) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    match app.runs.delete(&run_id, None).await {
        Ok(true) => {
            tracing::info!(run_id, "run deleted");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => {
            Problem::new(StatusCode::NOT_FOUND, "not_found", format!("no run {run_id:?} is stored")).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// `GET /v1/runs/{run_id}/rejections` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct RejectionsQuery {
    /// Lines at this journal position or later (the previous page's `next_from`; default 0).
    #[param(value_type = Option<u64>, minimum = 0, maximum = 9223372036854775807_i64)]
    from: Option<Count>,
    /// The most lines in the page: 1 to 1000 (default 100).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 1000)]
    limit: Option<Limit>,
}

/// Lines journaled as rejected and skipped (`on_reject=skip`), by position.
#[utoipa::path(get, path = "/v1/runs/{run_id}/rejections", tag = "runs", params(RunIdParam, RejectionsQuery), responses(
    (status = 200, description = "A page of rejected lines", body = RejectionsPage),
    (status = 400, description = "A malformed run id or parameter", body = ErrorBody),
    (status = 404, description = "No such run was ingested", body = ErrorBody),
    (status = 503, description = "Storage failed", body = ErrorBody),
))]
pub(crate) async fn rejections(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<RejectionsQuery>,
) -> Response {
    if let Err(response) = ingested(&app, &run_id).await {
        return response;
    }
    let limit = page_size(query.limit);
    match app.runs.storage().rejections(&run_id, query.from.map_or(0, |Count(from)| from), limit).await {
        Ok(rejections) => {
            let next_from = (rejections.len() == limit).then(|| rejections.last().map(|r| r.line + 1)).flatten();
            let rejections = rejections
                .into_iter()
                .map(|r| RejectedLine { line: r.line, kind: r.kind, message: r.message })
                .collect();
            axum::Json(RejectionsPage { rejections, next_from }).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}

/// The `{run_id}` path parameter of every run route.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // Only its OpenAPI description is used; handlers take the id as a `String`.
pub(crate) struct RunIdParam {
    /// The run (the Harness run id): 1 to 128 of `A-Z a-z 0-9 - _ . :`, not only dots.
    #[param(pattern = r"^[A-Za-z0-9_.:-]*[A-Za-z0-9_:-][A-Za-z0-9_.:-]*$", max_length = 128, min_length = 1)]
    run_id: String,
}
