//! Benchmark and load-test support for the workspace, kept out of the shipped libraries:
//!
//! - [`generate`]: deterministic synthetic Harness streams of every shape and the measurements of
//!   `a13n-stream bench` (the Python comparison reads the same lines through `a13n-stream bench --emit`);
//! - [`http`]: a minimal HTTP/1.0 and Server-Sent Events client for a host on this machine;
//! - [`load`]: `a13n-stream bench-serve`, a bounded loopback load test of one or more `serve` processes.

pub mod generate;
pub mod http;
pub mod load;
