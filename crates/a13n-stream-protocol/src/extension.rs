//! A Harness extension event (a line's `event` without `event_kind`) as the conversion reads it: by its `kind`, its
//! payload's `type` and a model request's index. The observer's general path and the carried lane's scan both
//! classify through [`Extension::of`], so the lifecycle rules are stated once.

use crate::fields::source_key::MODEL_REQUEST_STARTED;
use crate::names;
use crate::request_index::RequestIndex;

/// What the conversion makes of a Harness extension event. Every one but the run's start is carried through as
/// one `CUSTOM` observation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Extension {
    /// The run's start: `RUN_STARTED`.
    RunStarted,
    /// A model request's start: it opens a response group, and its index, when 0 or more, becomes the run's
    /// request index.
    ModelRequestStarted { request_index: Option<RequestIndex> },
    /// Any other lifecycle event.
    Lifecycle,
    /// An inline delegation: validated and converted to `SUBAGENT_*` events before its observation.
    InlineDelegation,
    /// A usage report (no rule reads its payload).
    Usage,
    /// Any other extension event.
    Other,
}

const LIFECYCLE: &str = "lifecycle";
const DELEGATION: &str = "delegation";
const USAGE: &str = "usage";

impl Extension {
    /// Classify an extension event of `kind` whose payload (when it is an object) has `payload_type` and
    /// `request_index` (when an integer of 0 or more: [`RequestIndex::of_payload`]).
    pub(crate) fn of(kind: Option<&str>, payload_type: Option<&str>, request_index: Option<RequestIndex>) -> Extension {
        match (kind, payload_type) {
            (Some(LIFECYCLE), Some("run_started")) => Extension::RunStarted,
            (Some(LIFECYCLE), Some(MODEL_REQUEST_STARTED)) => Extension::ModelRequestStarted { request_index },
            (Some(LIFECYCLE), _) => Extension::Lifecycle,
            (Some(DELEGATION), Some("inline_delegation")) => Extension::InlineDelegation,
            (Some(USAGE), _) => Extension::Usage,
            _ => Extension::Other,
        }
    }

    /// The observation's name, for the kinds the carried lane takes (`None`: the run's start, which is no
    /// observation, and any other extension event).
    pub(crate) fn carried_name(&self) -> Option<&'static str> {
        match self {
            Extension::ModelRequestStarted { .. } | Extension::Lifecycle => Some(names::HARNESS_LIFECYCLE),
            Extension::InlineDelegation => Some(names::HARNESS_DELEGATION),
            Extension::Usage => Some(names::HARNESS_USAGE),
            Extension::RunStarted | Extension::Other => None,
        }
    }
}
