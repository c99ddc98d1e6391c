//! Error types, one per public surface.
//!
//! Every surface separates two failures a host handles differently:
//! - an *observation* error: well-formed input that the protocol rejects (a correlation change, a part whose
//!   kind or identity changes before its end, a processor that rewrites structure). The item is not committed;
//!   the stream may continue with the next item.
//! - an *input* error: the bytes are not a valid source item, AG-UI event or checkpoint at all. The message names
//!   the line (when known), the field path and the expected shape.

use std::fmt;

/// Malformed input: bad JSON, or JSON whose shape is not what the field requires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    line: Option<u64>,
    path: String,
    message: String,
}

impl InputError {
    /// An error at `path` (a dotted field path such as `event.part.content`; empty for the whole value).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError { line: None, path: path.into(), message: message.into() }
    }

    /// The same error, attributed to a 1-based input line.
    #[must_use]
    pub fn at_line(mut self, line: u64) -> InputError {
        self.line = Some(line);
        self
    }

    /// The 1-based input line, when the input came from a line-oriented stream.
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// The dotted path of the offending field (empty for the whole value).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What was wrong with the field.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn nested(self, prefix: &str) -> InputError {
        let path = if self.path.is_empty() {
            prefix.to_owned()
        } else if prefix.is_empty() {
            self.path
        } else {
            format!("{prefix}.{}", self.path)
        };
        InputError { path, ..self }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}

/// The error of [`HarnessAguiObserver`](crate::HarnessAguiObserver) and
/// [`HarnessAguiStreamObserver`](crate::HarnessAguiStreamObserver) operations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The protocol rejects this well-formed item; nothing was committed (the reference's `AguiObservationError`).
    #[error("observation rejected: {0}")]
    Observation(String),
    /// The item is malformed; nothing was committed.
    #[error("bad input: {0}")]
    Input(#[from] InputError),
    /// A first-party payload failed the reference's Pydantic model; nothing was committed. The message is
    /// Pydantic's `ValidationError` text, as the reference raises it.
    #[error("{0}")]
    Validation(String),
    /// A call out of order or out of range (e.g. a snapshot range beyond the accumulated events).
    #[error("invalid call: {0}")]
    Usage(String),
    /// The host's event processor failed ([`ProcessorRefusal::Failed`](crate::observer::ProcessorRefusal));
    /// nothing was committed. The host that installed it holds the failure.
    #[error("the event processor failed")]
    Processor,
}

impl ObserveError {
    pub(crate) fn observation(message: impl Into<String>) -> ObserveError {
        ObserveError::Observation(message.into())
    }

    /// `true` for an observation error (valid input the protocol rejects).
    pub fn is_observation(&self) -> bool {
        matches!(self, ObserveError::Observation(_))
    }
}

/// The error of [`DisplayFold`](crate::DisplayFold) operations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FoldError {
    /// The observer rejected the source item; nothing was committed.
    #[error("observation rejected: {0}")]
    Observation(String),
    /// A malformed source item, AG-UI event or checkpoint; nothing was committed.
    #[error("bad input: {0}")]
    Input(#[from] InputError),
    /// A first-party payload failed the reference's Pydantic model (its `ValidationError` text); nothing was
    /// committed.
    #[error("{0}")]
    Validation(String),
    /// A checkpoint that cannot continue this fold (another run, attempt or content policy).
    #[error("checkpoint mismatch: {0}")]
    Continuation(String),
    /// The host's event processor failed; nothing was committed (see [`ObserveError::Processor`]).
    #[error("the event processor failed")]
    Processor,
}

impl FoldError {
    /// `true` for an observation error (valid input the protocol rejects).
    pub fn is_observation(&self) -> bool {
        matches!(self, FoldError::Observation(_))
    }
}

impl From<ObserveError> for FoldError {
    fn from(error: ObserveError) -> FoldError {
        match error {
            ObserveError::Observation(message) | ObserveError::Usage(message) => FoldError::Observation(message),
            ObserveError::Input(input) => FoldError::Input(input),
            ObserveError::Validation(message) => FoldError::Validation(message),
            ObserveError::Processor => FoldError::Processor,
        }
    }
}
