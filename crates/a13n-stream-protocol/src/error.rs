//! Error types, one per public surface.
//!
//! Every surface separates two failures a host handles differently:
//! - an *observation* error: well-formed input that the protocol rejects (a correlation change, a part whose
//!   kind or identity changes before its end, a processor that rewrites structure). The item is not committed;
//!   the stream may continue with the next item.
//! - an *input* error: the bytes are not a valid source item, AG-UI event or checkpoint at all. The message names
//!   the line (when known), the field path and the expected shape.

use std::fmt;

/// What is wrong with malformed input, as a host matches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// Not JSON (or nested deeper than the decoder goes); the JSON error is the [`source`](std::error::Error::source).
    Json,
    /// Longer than the limit.
    TooLarge,
    /// A required field is absent.
    Missing,
    /// A field holds a value of another type.
    WrongType,
    /// A value of the right type breaks its field's rule (empty, out of range, not a valid time).
    Invalid,
    /// JSON that does not have the shape of the model it is read as (a checkpoint, a continuation): a missing
    /// or unknown field or a value of another type, as the decoder reports it (its error is the source).
    Shape,
}

/// Malformed input: bad JSON, or JSON whose shape is not what the field requires.
#[derive(Clone, Debug)]
pub struct InputError {
    line: Option<u64>,
    path: String,
    message: String,
    kind: InputKind,
    source: Option<std::sync::Arc<serde_json::Error>>,
}

/// Errors are equal when they say the same; the decoder error behind one is not compared.
impl PartialEq for InputError {
    fn eq(&self, other: &InputError) -> bool {
        (self.line, &self.path, &self.message, self.kind) == (other.line, &other.path, &other.message, other.kind)
    }
}

impl Eq for InputError {}

impl InputError {
    /// An error at `path` (a dotted field path such as `event.part.content`; empty for the whole value): a value
    /// that breaks its field's rule ([`InputKind::Invalid`]).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError::of(InputKind::Invalid, path, message)
    }

    /// An error of `kind` at `path`.
    pub fn of(kind: InputKind, path: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError { line: None, path: path.into(), message: message.into(), kind, source: None }
    }

    /// A required field absent at `path`.
    pub(crate) fn missing(path: impl Into<String>) -> InputError {
        InputError::of(InputKind::Missing, path, "missing field")
    }

    /// A value of another type at `path`.
    pub(crate) fn wrong_type(path: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError::of(InputKind::WrongType, path, message)
    }

    /// What the JSON decoder reported reading `path` as its model: [`InputKind::Json`] for text that is not JSON,
    /// [`InputKind::Shape`] for JSON of another shape. `message` is what the error says; the decoder's error is
    /// its source.
    pub(crate) fn decoding(
        path: impl Into<String>,
        message: impl Into<String>,
        error: serde_json::Error,
    ) -> InputError {
        let kind = match error.classify() {
            serde_json::error::Category::Data => InputKind::Shape,
            _ => InputKind::Json,
        };
        InputError { source: Some(std::sync::Arc::new(error)), ..InputError::of(kind, path, message) }
    }

    /// What is wrong.
    pub fn kind(&self) -> InputKind {
        self.kind
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

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|error| error as &(dyn std::error::Error + 'static))
    }
}

/// Why the protocol rejected a well-formed item, as a host matches on it (the reference raises
/// `AguiObservationError` for each, with the message [`Rejection`] carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObservationKind {
    /// A run's items arrived under another thread than its first.
    ThreadChanged,
    /// A single-run observer was given another run's item.
    RunChanged,
    /// A model response part changed its kind before its end.
    PartKindChanged,
    /// A part or tool call changed its identity before its end.
    PartIdentityChanged,
    /// The host processor changed an event's type or a structural field, or returned no valid AG-UI event.
    ProcessorChangedStructure,
    /// A snapshot was asked of an observer that does not retain its events.
    EventsNotRetained,
    /// Resumption was asked of an observer that has observed or resumed before.
    NotFresh,
}

/// A rejected item: the kind of rejection and the reference's message for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    kind: ObservationKind,
    message: std::borrow::Cow<'static, str>,
}

impl Rejection {
    pub(crate) fn new(kind: ObservationKind, message: impl Into<std::borrow::Cow<'static, str>>) -> Rejection {
        Rejection { kind, message: message.into() }
    }

    /// What was rejected.
    pub fn kind(&self) -> ObservationKind {
        self.kind
    }

    /// The reference's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The error of [`HarnessAguiObserver`](crate::HarnessAguiObserver) and
/// [`HarnessAguiStreamObserver`](crate::HarnessAguiStreamObserver) operations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The protocol rejects this well-formed item; nothing was committed (the reference's `AguiObservationError`).
    #[error("observation rejected: {0}")]
    Observation(Rejection),
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
    pub(crate) fn rejected(kind: ObservationKind, message: impl Into<std::borrow::Cow<'static, str>>) -> ObserveError {
        ObserveError::Observation(Rejection::new(kind, message))
    }

    /// `true` for an observation error (valid input the protocol rejects).
    pub fn is_observation(&self) -> bool {
        matches!(self, ObserveError::Observation(_))
    }

    /// The kind of rejection, for an observation error.
    pub fn rejection(&self) -> Option<ObservationKind> {
        match self {
            ObserveError::Observation(rejection) => Some(rejection.kind()),
            _ => None,
        }
    }
}

/// The error of [`DisplayFold`](crate::DisplayFold) operations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FoldError {
    /// The observer rejected the source item; nothing was committed.
    #[error("observation rejected: {0}")]
    Observation(Rejection),
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
    /// A call out of order or out of range.
    #[error("invalid call: {0}")]
    Usage(String),
}

impl FoldError {
    /// `true` for an observation error (valid input the protocol rejects).
    pub fn is_observation(&self) -> bool {
        matches!(self, FoldError::Observation(_))
    }

    /// The kind of rejection, for an observation error.
    pub fn rejection(&self) -> Option<ObservationKind> {
        match self {
            FoldError::Observation(rejection) => Some(rejection.kind()),
            _ => None,
        }
    }
}

impl From<ObserveError> for FoldError {
    fn from(error: ObserveError) -> FoldError {
        match error {
            ObserveError::Observation(rejection) => FoldError::Observation(rejection),
            ObserveError::Usage(message) => FoldError::Usage(message),
            ObserveError::Input(input) => FoldError::Input(input),
            ObserveError::Validation(message) => FoldError::Validation(message),
            ObserveError::Processor => FoldError::Processor,
        }
    }
}
