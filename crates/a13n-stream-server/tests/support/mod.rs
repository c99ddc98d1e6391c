//! Support shared by this crate's integration tests (each test file includes it with `mod support;`).

pub mod stalling;
