//! The `a13n_stream_rs._core` extension module: the exact Rust core of the Agent Stream Protocol for Python
//! hosts. The Python package `a13n_stream_rs` re-exports it with the reference's names; see `python/` for its
//! documentation and tests.
//!
//! Rooms: `convert` (Python objects and JSON values), `native` (source items as a host holds them: the
//! Harness's native objects or their journal lines), `models` (the Pydantic and `ag_ui` models handed out),
//! `errors` (the exceptions and how core errors become them), `processor` (a host processor, by the reference's
//! contract or over JSON), `display` (`DisplayFold`), `replay` (whole-journal recovery), `observer` (the two
//! observers), `fragments` (fragmented `CUSTOM` events, tool result content).

// Unsafe code is refused everywhere but `models::raw`, two audited C calls.
#![deny(unsafe_code)]

mod convert;
mod display;
mod errors;
mod fragments;
mod issued;
mod memory;
mod models;
mod native;
mod observer;
mod processor;
mod replay;
mod subclass;

use pyo3::prelude::*;

// The core allocates per event; mimalloc's size classes cut that cost against the system allocator's (callgrind,
// live loop: glibc's malloc and free cost twice what mimalloc does, thread-local lookups included). Only this
// library's own allocations go through it: Python's objects keep Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<display::PyDisplayFold>()?;
    module.add_class::<observer::PyStreamObserver>()?;
    module.add_class::<observer::PyObserver>()?;
    module.add_class::<fragments::PyAssembler>()?;
    module.add_function(wrap_pyfunction!(replay::replay, module)?)?;
    module.add_function(wrap_pyfunction!(native::to_source_line, module)?)?;
    module.add_function(wrap_pyfunction!(fragments::fragment_custom_event, module)?)?;
    module.add_function(wrap_pyfunction!(fragments::tool_result_content, module)?)?;
    module.add_function(wrap_pyfunction!(memory::memory_sources, module)?)?;
    module.add("AguiObservationError", py.get_type::<errors::AguiObservationError>())?;
    module.add("ValidationError", py.get_type::<errors::ValidationError>())?;
    module.add("InputError", py.get_type::<errors::InputError>())?;
    module.add("MAX_SOURCE_LINE_BYTES", a13n_stream_protocol::MAX_SOURCE_LINE_BYTES)?;
    module.add("FRAGMENT_EVENT_NAME", a13n_stream_protocol::names::STREAM_FRAGMENT)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
