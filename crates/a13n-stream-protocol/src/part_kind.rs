//! Model response parts as the conversion reads them: the kinds it presents ([`PartKind`]) and a part's start or
//! end, typed ([`PartBody`]), which the observer's general path reads from a decoded event and the part lane from a
//! scanned line, so that one set of rules converts both.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The kind of an open model response part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// A text part, presented as a text message.
    Text,
    /// A thinking part, presented as a reasoning message.
    Reasoning,
    /// A tool-call part, presented at its end.
    ToolCall,
}

/// Which boundary of a part an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Boundary {
    Start,
    End,
}

/// What the conversion reads of a part at its start or end (fields as given; the rules skip empty texts).
#[derive(Debug)]
pub(crate) enum PartBody<'a> {
    /// A text part: its text, and the message id it names, if any.
    Text { content: Cow<'a, str>, id: Option<Cow<'a, str>> },
    /// A thinking part: its text and its signature (its id is positional, so any `id` is not read).
    Thinking { content: Cow<'a, str>, signature: Option<Cow<'a, str>> },
    /// A tool-call part (`builtin`: a provider's own tool): its call id, the tool's name, and at its end the
    /// argument text (`None`: no arguments).
    ToolCall { tool_call_id: Cow<'a, str>, tool_name: Option<Cow<'a, str>>, args: Option<Cow<'a, str>>, builtin: bool },
}
