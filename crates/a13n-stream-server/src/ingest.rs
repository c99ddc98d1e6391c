//! `POST /v1/runs/{run_id}/source?offset=N[&on_reject=skip]`: NDJSON source lines in, committed exactly once.
//!
//! The body is split into lines as it arrives, so a batch is held once as lines and never as a second copy of
//! the body; every byte held counts against the host's ingest budget ([`Config::max_ingest_bytes`]), and a
//! request that would exceed it is answered 503 with `Retry-After` instead of queueing without bound.
//!
//! [`Config::max_ingest_bytes`]: crate::Config::max_ingest_bytes

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use utoipa::IntoParams;

use a13n_stream_protocol::lines::{LineError, LineSplitter};

use crate::problem::{Count, Params, Problem, RETRY_AFTER_SECONDS};
use crate::runs::{valid_run_id, IngestError, OnReject};
use crate::wire::ErrorBody;
use crate::wire::{Ingested, RejectedLine};
use crate::{bad_run_id, position, Shared};

/// The media types ingest accepts (parameters such as `charset` aside).
pub const NDJSON_TYPES: &[&str] = &["application/x-ndjson", "application/jsonl", "application/json"];

/// `POST /v1/runs/{run_id}/source` parameters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct IngestQuery {
    /// The journal position of the batch's first line (required).
    #[param(value_type = Option<u64>, minimum = 0, maximum = 9223372036854775807_i64, required = true)]
    offset: Option<Count>,
    /// `refuse` (default): a rejected line refuses the batch. `skip`: it is journaled, recorded and skipped.
    #[param(pattern = "^(refuse|skip)$")]
    on_reject: Option<String>,
}

/// Whether a request's `Content-Type` is one ingest accepts.
fn ndjson(headers: &HeaderMap) -> bool {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = value.split(';').next().unwrap_or("").trim();
    NDJSON_TYPES.iter().any(|t| t.eq_ignore_ascii_case(media))
}

/// Take a batch of Harness source lines, exactly once.
#[utoipa::path(post, path = "/v1/runs/{run_id}/source", tag = "runs",
    params(crate::routes::RunIdParam, IngestQuery),
    request_body(description = "NDJSON: Harness source items, one JSON object a line", content(
        (String = "application/x-ndjson"), (String = "application/jsonl"), (String = "application/json"),
    )),
    responses(
        (status = 200, description = "Committed, or an exact retry of stored lines", body = Ingested),
        (status = 400, description = "A malformed run id, parameter or body line, or an empty body", body = ErrorBody),
        (status = 408, description = "The body did not arrive in time", body = ErrorBody),
        (status = 409, description = "The offset is not the journal's end (`conflict`), or the run has ended", body = ErrorBody),
        (status = 413, description = "The body, a line or the batch is too large", body = ErrorBody),
        (status = 415, description = "Not an NDJSON content type", body = ErrorBody),
        (status = 422, description = "A line is malformed, rejected, or of another run (nothing committed)", body = ErrorBody),
        (status = 503, description = "Too many ingest bytes in flight (Retry-After), or storage failed", body = ErrorBody),
    ))]
pub(crate) async fn ingest(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Params(query): Params<IngestQuery>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !valid_run_id(&run_id) {
        return bad_run_id();
    }
    let Some(Count(offset)) = query.offset else {
        let message = "?offset=N (the journal position of the first line) is required";
        return Problem::new(StatusCode::BAD_REQUEST, "query", message).into_response();
    };
    let on_reject = match query.on_reject.as_deref() {
        None | Some("refuse") => OnReject::Refuse,
        Some("skip") => OnReject::Skip,
        Some(other) => {
            let message = format!("on_reject is refuse or skip, not {other:?}");
            return Problem::new(StatusCode::BAD_REQUEST, "query", message).into_response();
        }
    };
    if !ndjson(&headers) {
        let message = format!("the body must be NDJSON: Content-Type one of {}", NDJSON_TYPES.join(", "));
        return Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "content_type", message).into_response();
    }
    // A body announced larger than the limit is refused before any of it is read (and before a client that
    // asked `Expect: 100-continue` is told to send it).
    if let Some(length) = declared_length(&headers).filter(|&length| length > app.config.max_body_bytes as u64) {
        let message = format!(
            "the body exceeds {} bytes (--max-body-bytes; Content-Length: {length})",
            app.config.max_body_bytes
        );
        return too_large(message).into_response();
    }
    let reading = read_lines(&app, body, offset);
    let (lines, _budget) = match tokio::time::timeout(app.config.body_timeout, reading).await {
        Ok(Ok(read)) => read,
        Ok(Err(problem)) => return problem.into_response(),
        Err(_) => {
            app.runs.metrics.refused.inc();
            let message = format!("the body did not arrive within {:?}", app.config.body_timeout);
            return Problem::new(StatusCode::REQUEST_TIMEOUT, "body_timeout", message).into_response();
        }
    };
    match app.runs.ingest(&run_id, offset, lines, on_reject).await {
        Ok(accepted) => axum::Json(Ingested {
            next_offset: accepted.next_offset,
            events: accepted.events,
            duplicate: accepted.duplicate,
            position: position(accepted.position).to_string(),
            rejected: accepted
                .rejected
                .into_iter()
                .map(|r| RejectedLine { line: r.line, kind: r.kind, message: r.message })
                .collect(),
        })
        .into_response(),
        Err(error) => refusal(error).into_response(),
    }
}

fn refusal(error: IngestError) -> Problem {
    let message = error.to_string();
    match error {
        IngestError::Offset { expected, conflict, line } => {
            let problem = Problem::new(StatusCode::CONFLICT, "offset", message)
                .with("conflict", conflict.as_str())
                .with("expected_offset", expected);
            match line {
                Some(line) => problem.with("line", line),
                None => problem,
            }
        }
        IngestError::Line { line, kind, message } => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "line", message)
            .with("line", line)
            .with("kind", kind.as_str()),
        IngestError::Identity { line, field, expected, found } => {
            Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "identity", message)
                .with("line", line)
                .with("field", field)
                .with("expected", expected)
                .with("found", found)
        }
        IngestError::AfterTerminal { line } => {
            Problem::new(StatusCode::CONFLICT, "run_complete", message).with("line", line)
        }
        IngestError::Empty => Problem::new(StatusCode::BAD_REQUEST, "empty", message),
        IngestError::Storage(error) => Problem::storage(error),
    }
}

/// Bytes of request bodies held by all ingest requests together.
#[derive(Debug)]
pub struct Budget {
    semaphore: Arc<Semaphore>,
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: usize) -> Budget {
        Budget { semaphore: Arc::new(Semaphore::new(bytes.min(Semaphore::MAX_PERMITS))) }
    }

    /// Take `bytes` more for `held`, or `None` when the budget is spent.
    fn take(&self, held: &mut Option<OwnedSemaphorePermit>, bytes: usize) -> Option<()> {
        let bytes = u32::try_from(bytes).ok()?;
        let permit = Arc::clone(&self.semaphore).try_acquire_many_owned(bytes).ok()?;
        match held {
            Some(held) => held.merge(permit),
            None => *held = Some(permit),
        }
        Some(())
    }
}

/// Split the body into lines as it arrives (the workspace's one set of line rules), within the body, line and
/// batch bounds and the budget.
async fn read_lines(
    app: &Shared,
    body: Body,
    offset: u64,
) -> Result<(Vec<String>, Option<OwnedSemaphorePermit>), Problem> {
    let config = &app.config;
    let mut budget = None;
    let mut lines = Vec::new();
    let mut splitter = LineSplitter::new(config.max_line_bytes);
    let mut total = 0usize;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|error| Problem::new(StatusCode::BAD_REQUEST, "body", format!("reading the body: {error}")))?;
        // The bytes within the body bound are split first: a line that passes the line bound before the body
        // passes its own is refused as the line it is.
        let within = chunk.len().min(config.max_body_bytes - total);
        total += chunk.len();
        if app.budget.take(&mut budget, within).is_none() {
            app.runs.metrics.ingest_busy.inc();
            let message = "too many ingest bytes in flight; retry shortly";
            return Err(Problem::new(StatusCode::SERVICE_UNAVAILABLE, "busy", message)
                .header("retry-after", RETRY_AFTER_SECONDS));
        }
        let mut rest: &[u8] = &chunk[..within];
        while let Some((_, line)) = splitter.next_line(&mut rest) {
            take_line(config, offset, &mut lines, line)?;
        }
        // A line already longer than the bound is refused now, not after the rest of it has been read.
        if let Some(error) = splitter.pending_error() {
            take_line(config, offset, &mut lines, Err(error))?;
        }
        if total > config.max_body_bytes {
            return Err(too_large(format!("the body exceeds {} bytes (--max-body-bytes)", config.max_body_bytes)));
        }
    }
    if let Some((_, line)) = splitter.finish() {
        take_line(config, offset, &mut lines, line)?;
    }
    Ok((lines, budget))
}

/// The body length the request announces (`Content-Length`), when it announces one that is a number.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(axum::http::header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

fn too_large(message: String) -> Problem {
    Problem::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", message)
}

/// Keep one line of the body, or refuse the batch naming the line's journal position.
fn take_line(
    config: &crate::Config,
    offset: u64,
    lines: &mut Vec<String>,
    line: Result<&str, LineError>,
) -> Result<(), Problem> {
    let position = offset + lines.len() as u64;
    match line {
        Ok(text) => lines.push(text.to_owned()),
        Err(error @ LineError::TooLong { .. }) => {
            let message = format!("line {position}: {error} (--max-line-bytes)");
            return Err(too_large(message).with("line", position).with("kind", "input"));
        }
        // Malformed, as a line that is not JSON is (422). The journal holds text, so such a line cannot be kept
        // at its position and skipped: it is refused whatever `on_reject` says.
        Err(error) => {
            let message = format!("line {position}: {error}: the journal holds only UTF-8, so it cannot be skipped");
            let problem = Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "line", message);
            return Err(problem.with("line", position).with("kind", "input"));
        }
    }
    if lines.len() > config.max_batch_lines {
        return Err(too_large(format!("a batch holds at most {} lines (--max-batch-lines)", config.max_batch_lines)));
    }
    Ok(())
}
