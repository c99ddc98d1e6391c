//! The `a13n-stream` command-line tool's library: the conformance runner and the corpus's named processors.

pub mod bench;
pub mod cli;
pub mod conformance;
mod conformance_display;
pub mod http;
pub mod loadbench;
pub mod processors;
