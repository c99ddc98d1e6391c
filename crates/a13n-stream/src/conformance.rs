//! `a13n-stream conformance`: replay recorded cases and end with `N passed, M failed`.

use std::io::{self, Write};
use std::process::ExitCode;

use a13n_stream_conformance::{run as run_cases, Only};

use crate::cli::{ConformanceArgs, OnlyChecks};
use crate::failure::{io_error, Failure};

/// Run `conformance`.
pub fn run(args: ConformanceArgs) -> Result<ExitCode, Failure> {
    let only = match args.only {
        None => Only::All,
        Some(OnlyChecks::Observer) => Only::Observer,
        Some(OnlyChecks::Display) => Only::Display,
    };
    let report = run_cases(&args.dirs, only).map_err(Failure::Io)?;
    let mut out = io::stdout().lock();
    for failure in &report.failures {
        writeln!(out, "FAIL {failure}").map_err(io_error)?;
    }
    writeln!(out, "{} cases", report.cases).map_err(io_error)?;
    writeln!(out, "{} passed, {} failed", report.passed, report.failures.len()).map_err(io_error)?;
    if report.cases == 0 {
        // Paths that hold no case are the caller's mistake, not a case that failed.
        return Err(Failure::Usage("no case directories (with case.json) under the given paths".into()));
    }
    Ok(if report.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
