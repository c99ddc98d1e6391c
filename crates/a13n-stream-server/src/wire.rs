//! The host's JSON bodies as typed structs: what each route answers, declared once for serde and for the
//! OpenAPI document (`GET /openapi.json`).

use a13n_stream_protocol::agui::{EventType, RunFinishedOutcome};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::storage::{StorageError, StoredItem};

/// `GET /healthz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// A source line journaled as rejected and skipped (`on_reject=skip`).
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectedLine {
    /// The line's journal position.
    pub line: u64,
    /// `input` (malformed) or `observation` (refused by the protocol).
    pub kind: String,
    /// Why.
    pub message: String,
}

/// `POST /v1/runs/{run_id}/source`: the batch was committed, or was an exact retry.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ingested {
    /// The journal's length after the batch: the next batch's offset.
    pub next_offset: u64,
    /// AG-UI events the batch produced (0 for a retry).
    pub events: usize,
    /// Whether the batch was an exact retry of stored lines (nothing changed).
    pub duplicate: bool,
    /// The committed position, `attempt-sequence`.
    #[schema(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$", example = "0-42")]
    pub position: String,
    /// Lines journaled as rejected and skipped.
    pub rejected: Vec<RejectedLine>,
}

/// One run of `GET /v1/runs`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunSummary {
    /// The run.
    pub run_id: String,
    /// Source lines journaled.
    pub journal_len: u64,
    /// The committed position, `attempt-sequence`.
    #[schema(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    pub position: String,
    /// Whether the run's terminal result is committed.
    pub complete: bool,
    /// Display items.
    pub items: u64,
    /// When the last batch was committed, in Unix milliseconds (0: not known).
    pub updated_ms: u64,
    /// The root run's thread (`null` until a line of the run was accepted).
    pub thread_id: Option<String>,
    /// How the run ended, once it is complete (`null` before, and for runs completed before the host kept it).
    pub outcome: Option<RunOutcome>,
}

/// How a run ended, read off its terminal event: `RUN_ERROR` failed; `RUN_FINISHED` completed, or was cancelled
/// or interrupted, as its `outcome.type` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RunOutcome {
    /// Finished with its result.
    Completed,
    /// Ended by an error (`RUN_ERROR`).
    Failed,
    /// Cancelled before it finished.
    Cancelled,
    /// Stopped for input (a tool call awaiting approval, say).
    Interrupted,
}

impl RunOutcome {
    const ALL: [RunOutcome; 4] =
        [RunOutcome::Completed, RunOutcome::Failed, RunOutcome::Cancelled, RunOutcome::Interrupted];

    /// The outcome of a run whose terminal event is `event` (its JSON as Pydantic writes it: no `Infinity`);
    /// `None` for any other event. The `outcome` of `RUN_FINISHED` is read as the protocol's own type.
    pub fn of_terminal(event: &str) -> Option<RunOutcome> {
        #[derive(serde::Deserialize)]
        struct Terminal<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
            outcome: Option<RunFinishedOutcome>,
        }
        let terminal: Terminal<'_> = serde_json::from_str(event).ok()?;
        match (EventType::parse(&terminal.kind)?, terminal.outcome) {
            (EventType::RunError, _) => Some(RunOutcome::Failed),
            (EventType::RunFinished, Some(RunFinishedOutcome::Cancelled)) => Some(RunOutcome::Cancelled),
            (EventType::RunFinished, Some(RunFinishedOutcome::Interrupt { .. })) => Some(RunOutcome::Interrupted),
            (EventType::RunFinished, _) => Some(RunOutcome::Completed),
            _ => None,
        }
    }

    /// Its name on the wire and in storage.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Completed => "completed",
            RunOutcome::Failed => "failed",
            RunOutcome::Cancelled => "cancelled",
            RunOutcome::Interrupted => "interrupted",
        }
    }

    /// The outcome named `name` ([`RunOutcome::as_str`]).
    pub fn parse(name: &str) -> Option<RunOutcome> {
        RunOutcome::ALL.into_iter().find(|outcome| outcome.as_str() == name)
    }
}

impl RunSummary {
    pub(crate) fn of(run: crate::storage::RunRecord) -> RunSummary {
        RunSummary {
            position: crate::position(run.position).to_string(),
            run_id: run.run_id,
            journal_len: run.journal_len,
            complete: run.complete,
            items: run.item_count,
            updated_ms: run.updated_ms,
            thread_id: run.thread_id,
            outcome: run.outcome.as_deref().and_then(RunOutcome::parse),
        }
    }
}

/// `GET /v1/threads/{thread_id}/runs`: a page of a thread's runs in the order of their first ingest.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadRunsPage {
    /// The runs.
    pub runs: Vec<RunSummary>,
    /// Pass as `after` for the next page; `null` on the last page.
    pub next_after: Option<u64>,
}

/// `GET /v1/runs`: a page of runs, by id or newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunsPage {
    /// The runs.
    pub runs: Vec<RunSummary>,
    /// Pass as `after` (with the same `order`) for the next page: the last run's id, or, newest first, its place
    /// in the order of first ingest (a decimal number); `null` on the last page.
    pub next_after: Option<String>,
}

/// The order of `GET /v1/runs`.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunOrder {
    /// By run id.
    #[default]
    Id,
    /// The most recently first ingested first.
    Newest,
}

/// `GET /v1/runs/{run_id}/items`: a page of display items by ordinal (each item as its checkpoint JSON).
#[derive(Debug, Serialize, ToSchema)]
pub struct ItemsPage<'a> {
    /// The items, as stored (never parsed into a tree again).
    #[schema(value_type = Vec<Object>)]
    pub items: Vec<&'a RawValue>,
    /// The committed position, `attempt-sequence`.
    #[schema(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    pub position: String,
    /// Whether the run's terminal result is committed.
    pub complete: bool,
    /// The last ordinal of the page: pass as `after` for the next page.
    pub next_after: u64,
}

/// The `data:` of a `snapshot` or `items` frame of `GET /v1/runs/{run_id}/display`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DisplayFrame<'a> {
    /// The position the frame brings the client to, `attempt-sequence` (also the frame's `id`).
    #[schema(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    pub position: String,
    /// Whether the run's terminal result is committed at that position.
    pub complete: bool,
    /// Whole items (their checkpoint JSON, as stored): upsert them by id.
    #[schema(value_type = Vec<Object>)]
    pub items: Vec<&'a RawValue>,
    /// Live frames only: changes to items the client holds, `{id, state, last_stream_id, ended_at, append?, set?}`:
    /// set the three fields, append each `append` string to the content field of its name, and set each `set`
    /// content field (a new one goes last). Absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Object>)]
    pub patches: Vec<&'a RawValue>,
}

/// The `data:` of the `end` frame of `GET /v1/runs/{run_id}/display`, and of `GET /v1/runs/{run_id}/events` when
/// the run was deleted.
#[derive(Debug, Serialize, ToSchema)]
pub struct DisplayEnd {
    /// `complete`: the position of the run's terminal event; `deleted`: the last position the client was sent,
    /// `attempt-sequence`.
    #[schema(pattern = r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")]
    pub position: String,
    /// Why the stream ends: `complete` (the run's terminal event is committed) or `deleted` (the run was deleted,
    /// by `DELETE` or by retention; nothing of it is stored any more).
    #[schema(pattern = "^(complete|deleted)$")]
    pub reason: &'static str,
}

impl DisplayEnd {
    /// The `end` frame of a stream whose client holds `position`, ending for `reason`. A deleted run's frame has no
    /// `id`: there is nothing to resume.
    pub(crate) fn frame(position: u64, reason: &'static str) -> axum::body::Bytes {
        let mut out = Vec::new();
        DisplayEnd::write_frame(position, reason, &mut out);
        axum::body::Bytes::from(out)
    }

    /// [`DisplayEnd::frame`], appended to `out`.
    pub(crate) fn write_frame(position: u64, reason: &'static str, out: &mut Vec<u8>) {
        let at = crate::position(position).to_string();
        let id = (reason != DELETED).then_some(at.as_str());
        crate::sse::write_frame(out, Some(END), id, &to_json(&DisplayEnd { position: at.clone(), reason }));
    }
}

/// The event name of the frame that ends a stream.
pub(crate) const END: &str = "end";

/// The `reason` of the `end` frame of a deleted run.
pub(crate) const DELETED: &str = "deleted";
/// The `reason` of the `end` frame of a run whose terminal event is delivered.
pub(crate) const COMPLETE: &str = "complete";

/// Stored items as the JSON values they are, checked (not parsed into a tree) so that a corrupt row becomes a
/// storage error rather than a malformed answer.
pub(crate) fn stored_items<'a>(
    items: impl IntoIterator<Item = &'a StoredItem>,
) -> Result<Vec<&'a RawValue>, StorageError> {
    items
        .into_iter()
        .map(|item| serde_json::from_str(&item.item))
        .collect::<Result<_, _>>()
        .map_err(|error| StorageError::Database(format!("a stored item is not JSON: {error}")))
}

/// A wire struct's JSON: serializing these structs (strings, integers, checked raw values) cannot fail.
pub(crate) fn to_json(body: &impl Serialize) -> String {
    serde_json::to_string(body).unwrap_or_default()
}

/// `GET /v1/runs/{run_id}/rejections`: a page of rejected lines by position.
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectionsPage {
    /// The lines.
    pub rejections: Vec<RejectedLine>,
    /// Pass as `from` for the next page; `null` on the last page.
    pub next_from: Option<u64>,
}

/// `GET /v1/runs/{run_id}/snapshot`: the reference's `DisplaySnapshot` checkpoint JSON.
#[derive(Debug, Serialize, ToSchema)]
pub struct Snapshot {
    /// The display items.
    pub items: Vec<serde_json::Map<String, serde_json::Value>>,
    /// The continuation a fold restores from.
    pub continuation: serde_json::Map<String, serde_json::Value>,
}

/// Every error answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong: a stable `code`, a message, and the fields that say more for that code.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// One of `offset`, `line`, `identity`, `run_complete`, `empty`, `content_type`, `too_large`, `busy`,
    /// `body_timeout`, `body`, `query`, `position`, `run_id`, `thread_id`, `not_found`, `method`, `host`, `origin`,
    /// `unauthorized`, `storage`.
    pub code: String,
    /// A sentence for people.
    pub message: String,
    /// `offset`: `behind`, `ahead` or `different_content`.
    pub conflict: Option<String>,
    /// `offset`: the journal's length, where the next batch must start.
    pub expected_offset: Option<u64>,
    /// `line`, `identity`, `run_complete`, `too_large`: the journal position of the line; `offset` with
    /// `different_content`: the first line that differs.
    pub line: Option<u64>,
    /// `line`: `input` or `observation`.
    pub kind: Option<String>,
    /// `identity`: `run_id` or `thread_id`.
    pub field: Option<String>,
    /// `identity`: the run's value.
    pub expected: Option<String>,
    /// `identity`: the line's value.
    pub found: Option<String>,
    /// `position`: the committed position.
    pub position: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_is_named_alike_on_the_wire_and_in_storage() {
        for outcome in RunOutcome::ALL {
            assert_eq!(to_json(&outcome), format!("\"{}\"", outcome.as_str()));
            assert_eq!(RunOutcome::parse(outcome.as_str()), Some(outcome));
        }
    }

    #[test]
    fn an_outcome_is_read_off_the_terminal_event() {
        let read = |event: &str| RunOutcome::of_terminal(event);
        assert_eq!(read(r#"{"type":"RUN_ERROR","message":"m"}"#), Some(RunOutcome::Failed));
        assert_eq!(read(r#"{"type":"RUN_FINISHED","outcome":{"type":"cancelled"}}"#), Some(RunOutcome::Cancelled));
        assert_eq!(
            read(r#"{"type":"RUN_FINISHED","outcome":{"type":"interrupt","interrupts":[]}}"#),
            Some(RunOutcome::Interrupted)
        );
        assert_eq!(read(r#"{"type":"RUN_FINISHED","outcome":{"type":"success"}}"#), Some(RunOutcome::Completed));
        assert_eq!(read(r#"{"type":"RUN_FINISHED","result":null}"#), Some(RunOutcome::Completed));
        assert_eq!(read(r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#), None);
    }
}
