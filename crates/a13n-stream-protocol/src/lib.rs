//! Exact Harness-to-AG-UI stream observation, display folding and checkpoint recovery.
//!
//! An agent Harness emits a public stream of native observations: model text, reasoning and tool-call parts as
//! start/delta/end events, tool results, lifecycle and context events, and a terminal Run result. This crate
//!
//! - decodes that stream ([`SourceItem`], one JSON object a line),
//! - converts it into typed AG-UI 1.0 [`Event`]s with [`HarnessAguiStreamObserver`] (a root Run and its inline
//!   children) or [`HarnessAguiObserver`] (one Run),
//! - folds the events into compact display items with stable ids and dense ordinals ([`DisplayFold`]),
//! - and makes recovery exact: a display checkpoint ([`DisplaySnapshot`]) taken mid-stream restores and continues
//!   with the next event exactly as the uninterrupted fold; an observer is rebuilt from retained source history
//!   ([`Observer::resume`]) or restored from its exported conversion state ([`Observer::restore`]).
//!
//! Every `observe` and `fold` is atomic: a rejected item leaves no trace. The behaviour, and the JSON of every
//! checkpoint, is that of the Python reference `a13n-stream-protocol` 0.21.0, byte for byte, so checkpoints move
//! between Python and Rust hosts.
//!
//! The crate is sans-IO: no files, sockets, clocks or randomness. Time comes from the events.
//!
//! # Restore a display checkpoint
//!
//! Save an unfinished message, restore it, and append the remaining events:
//!
//! ```
//! use a13n_stream_protocol::{DisplayFold, DisplaySnapshot};
//! use serde_json::json;
//!
//! let event = |value: serde_json::Value| value.as_object().cloned().unwrap();
//! let prefix = vec![
//!     event(json!({"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000})),
//!     event(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001})),
//! ];
//! let suffix = vec![
//!     event(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002})),
//!     event(json!({"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003})),
//! ];
//!
//! let mut fold = DisplayFold::new("run-example");
//! fold.fold(prefix.clone(), None)?;
//! let checkpoint_json = fold.export().to_json();
//!
//! let mut restored = DisplayFold::restore(DisplaySnapshot::from_json(&checkpoint_json)?, false, None)?;
//! restored.fold(suffix.clone(), None)?;
//!
//! let mut uninterrupted = DisplayFold::new("run-example");
//! uninterrupted.fold(prefix.into_iter().chain(suffix).collect(), None)?;
//! assert_eq!(restored.export(), uninterrupted.export());
//! let item = restored.items().next().unwrap();
//! assert_eq!(item.content["text"], "Hello world");
//! assert_eq!(item.state, a13n_stream_protocol::display::ItemState::Completed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Convert Harness source items and accumulate the display
//!
//! ```
//! use a13n_stream_protocol::{DisplayFold, SourceItem};
//!
//! let lines = [
//!     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}"#,
//!     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{"index":0,"part":{"content":"Hi","id":null,"part_kind":"text"},"event_kind":"part_start"}}"#,
//! ];
//! let mut fold = DisplayFold::new("r");
//! for line in lines {
//!     let source = SourceItem::from_json(line)?;
//!     let observed = fold.fold_source(&source)?; // persist and publish these in one transaction
//!     assert!(!observed.is_empty());
//! }
//! assert_eq!(fold.items().count(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Resume from source history
//!
//! A fresh observer is rebuilt atomically from the exact, ordered history of one root stream; it then observes
//! the live tail. History is not republished.
//!
//! ```
//! use a13n_stream_protocol::{HarnessAguiStreamObserver, SourceItem};
//!
//! let history = vec![SourceItem::from_json(
//!     r#"{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00","event":{"index":0,"part":{"content":"Hel","id":null,"part_kind":"text"},"event_kind":"part_start"}}"#,
//! )?];
//! let tail = SourceItem::from_json(
//!     r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}"#,
//! )?;
//! let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
//! observer.resume(&history)?;
//! let events = observer.observe(&tail)?;
//! assert_eq!(events[0].event_type(), "TEXT_MESSAGE_CONTENT");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//!
//! [`source`] (the Harness wire form), [`agui`] (AG-UI events), [`observer`] (conversion), [`fragments`]
//! (transport fragmentation of large custom events), [`display`] (items and checkpoints).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Input never decides whether the library panics: no unwrap, expect or panic outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::unreachable))]

pub mod agui;
mod canonical;
mod canonical_token;
mod content;
pub mod display;
mod error;
mod extension;
mod fields;
pub mod fragments;
mod isoformat;
mod json;
mod lane_line;
mod lanes;
mod lax;
mod lax_time;
pub mod lines;
mod memory;
pub mod names;
pub mod observer;
mod part_index;
mod part_kind;
mod py_int;
mod pydantic;
mod pystr;
#[rustfmt::skip] // generated: kept as the generator writes it
mod pystr_printable;
#[rustfmt::skip] // generated: kept as the generator writes it
mod pystr_word;
mod read_ahead;
pub mod recorded;
mod redact;
mod request_index;
mod scan;
mod sink;
mod skeleton;
pub mod source;
mod source_model;
mod source_sequence;
mod time;

pub use agui::Event;
pub use content::tool_result_content;
pub use display::{
    ContentPolicy, DisplayContinuation, DisplayFold, DisplayOptions, DisplaySnapshot, Item, ItemRef, Observed,
    PositionError, StreamPosition,
};
pub use error::{FoldError, InputError, InputKind, ObservationKind, ObserveError, Rejection};
pub use fragments::{fragment_custom_event, CustomEventAssembler};
pub use json::{py_float_repr, pydantic_float_repr};
pub use memory::{memory_sources, MemorySource};
pub use observer::{
    infallible, AguiEventProcessor, HarnessAguiObserver, HarnessAguiStreamObserver, Observer, ObserverContinuation,
    ProcessorRefusal,
};
pub use part_index::PartIndex;
pub use read_ahead::{ReadAhead, ScannedLine};
pub use source::{SourceBody, SourceEvent, SourceItem, MAX_SOURCE_LINE_BYTES};
pub use source_sequence::SourceSequence;
pub use time::{SourceTime, UtcTime};
