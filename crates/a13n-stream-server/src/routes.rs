//! The read routes: runs (paged), a run's items (paged), its snapshot and its rejected lines; liveness; metrics.

use a13n_stream_protocol::StreamPosition;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use crate::problem::{Params, Problem};
use crate::runs::valid_run_id;
use crate::{bad_run_id, Shared, ATTEMPT};

/// The default and the largest page of `/v1/runs`, `/items` and `/rejections`.
pub const PAGE_DEFAULT: usize = 100;
/// The largest page.
pub const PAGE_MAX: usize = 1000;

fn position(sequence: u64) -> String {
    StreamPosition { attempt: ATTEMPT, sequence }.to_string()
}

fn not_found(run_id: &str) -> Response {
    Problem::new(StatusCode::NOT_FOUND, "not_found", format!("no run {run_id:?} was ingested")).into_response()
}

pub(crate) async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

pub(crate) async fn metrics(State(app): State<Shared>) -> Response {
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], app.runs.metrics.encode()).into_response()
}

#[derive(Deserialize)]
pub(crate) struct RunsQuery {
    after: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn list_runs(State(app): State<Shared>, Params(query): Params<RunsQuery>) -> Response {
    let limit = query.limit.unwrap_or(PAGE_DEFAULT).clamp(1, PAGE_MAX);
    let after = query.after.unwrap_or_default();
    match app.runs.storage().runs(&after, limit).await {
        Ok(runs) => {
            let next_after = (runs.len() == limit).then(|| runs.last().map(|run| run.run_id.clone())).flatten();
            let runs: Vec<_> = runs
                .iter()
                .map(|run| {
                    json!({
                        "run_id": run.run_id,
                        "journal_len": run.journal_len,
                        "position": position(run.position),
                        "complete": run.complete,
                    })
                })
                .collect();
            axum::Json(json!({"runs": runs, "next_after": next_after})).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}

#[derive(Deserialize)]
pub(crate) struct ItemsQuery {
    after: Option<u64>,
    before: Option<u64>,
    limit: Option<usize>,
}

pub(crate) async fn items(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<ItemsQuery>,
) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    let status = match app.runs.status(&run_id).await {
        Ok(Some(status)) => status,
        Ok(None) => return not_found(&run_id),
        Err(error) => return Problem::storage(error).into_response(),
    };
    let limit = query.limit.unwrap_or(PAGE_DEFAULT).clamp(1, PAGE_MAX);
    let after = query.after.unwrap_or(0);
    let page = match app.runs.storage().items(&run_id, after, query.before, limit).await {
        Ok(page) => page,
        Err(error) => return Problem::storage(error).into_response(),
    };
    // Items are stored as their checkpoint JSON: spliced in as they are, never parsed again.
    let mut body = String::with_capacity(page.iter().map(|i| i.item.len() + 1).sum::<usize>() + 128);
    body.push_str(r#"{"items":["#);
    for (index, item) in page.iter().enumerate() {
        if index > 0 {
            body.push(',');
        }
        body.push_str(&item.item);
    }
    let last = page.last().map_or(after, |item| item.ordinal);
    let tail = json!({"position": position(status.position), "complete": status.complete, "next_after": last});
    body.push_str("],");
    body.push_str(tail.to_string().trim_start_matches('{'));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

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

#[derive(Deserialize)]
pub(crate) struct RejectionsQuery {
    from: Option<u64>,
    limit: Option<usize>,
}

pub(crate) async fn rejections(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<RejectionsQuery>,
) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    match app.runs.status(&run_id).await {
        Ok(Some(_)) => {}
        Ok(None) => return not_found(&run_id),
        Err(error) => return Problem::storage(error).into_response(),
    }
    let limit = query.limit.unwrap_or(PAGE_DEFAULT).clamp(1, PAGE_MAX);
    match app.runs.storage().rejections(&run_id, query.from.unwrap_or(0), limit).await {
        Ok(rejections) => {
            let next_from = (rejections.len() == limit).then(|| rejections.last().map(|r| r.line + 1)).flatten();
            let rejections: Vec<_> =
                rejections.iter().map(|r| json!({"line": r.line, "kind": r.kind, "message": r.message})).collect();
            axum::Json(json!({"rejections": rejections, "next_from": next_from})).into_response()
        }
        Err(error) => Problem::storage(error).into_response(),
    }
}
