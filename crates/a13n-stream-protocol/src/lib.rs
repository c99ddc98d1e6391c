//! Exact Harness-to-AG-UI stream observation, display folding and checkpoint recovery.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agui;
mod content;
pub mod display;
mod error;
pub mod fragments;
mod json;
mod memory;
pub mod observer;
pub mod source;
mod time;

pub use agui::Event;
pub use content::tool_result_content;
pub use display::{
    DisplayContinuation, DisplayFold, DisplayOptions, DisplaySnapshot, Item, ItemRef, Observed,
};
pub use error::{FoldError, InputError, ObserveError};
pub use fragments::{fragment_custom_event, CustomEventAssembler};
pub use json::{py_float_repr, pydantic_float_repr};
pub use memory::MemorySource;
pub use observer::{
    AguiEventProcessor, HarnessAguiObserver, HarnessAguiStreamObserver, Observer,
    ObserverContinuation,
};
pub use source::{SourceBody, SourceEvent, SourceItem};
pub use time::{SourceTime, UtcTime};
