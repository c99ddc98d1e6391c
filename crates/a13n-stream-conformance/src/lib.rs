//! The conformance runner of `a13n-stream conformance`: replays the recorded cases of the Python reference
//! (`shared/conformance/cases`, `tests/cases`) and compares every output line and checkpoint as text, byte for
//! byte; and the corpus's named host processors.

mod display;
pub mod processors;
mod runner;

pub use runner::{case_dirs, case_fold, case_processor, lines, run, text_difference, Case, Only, Report};
