//! The kinds of model response part the conversion presents, which both the observer and the lanes' scans of a
//! source line name.

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
