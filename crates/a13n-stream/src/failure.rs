//! Why a command failed, and so its exit status.

use std::fmt;

/// A command's failure.
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments (exit status 2).
    Usage(String),
    /// Malformed input: JSON or shape (exit status 3).
    Input(String),
    /// A file or stream could not be read or written (exit status 5).
    Io(String),
    /// Standard output's reader went away (`observe ... | head`): the command stops, quietly and with success, as
    /// a pipeline's earlier commands do.
    Closed,
}

impl Failure {
    /// The process exit status for this failure.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Input(_) => 3,
            Failure::Io(_) => 5,
            Failure::Closed => 0,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "{message}"),
            Failure::Input(message) => write!(f, "bad input: {message}"),
            Failure::Io(message) => write!(f, "I/O error: {message}"),
            Failure::Closed => write!(f, "the output's reader went away"),
        }
    }
}

/// An I/O error as a failure.
pub fn io_error(error: std::io::Error) -> Failure {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure::Closed;
    }
    Failure::Io(error.to_string())
}

/// The worst problem seen while going on past rejected lines, and the exit status it gives.
#[derive(Default)]
pub struct Outcome {
    input_errors: u64,
    observation_errors: u64,
}

impl Outcome {
    /// Report a rejected line on standard error, naming it.
    pub fn report(&mut self, line: u64, observation: bool, message: &str) {
        if observation {
            self.observation_errors += 1;
        } else {
            self.input_errors += 1;
        }
        eprintln!("line {line}: {message}");
    }

    /// 3 if a line was malformed, else 4 if one was rejected, else 0.
    pub fn exit(self) -> std::process::ExitCode {
        if self.input_errors > 0 {
            std::process::ExitCode::from(3)
        } else if self.observation_errors > 0 {
            std::process::ExitCode::from(4)
        } else {
            std::process::ExitCode::SUCCESS
        }
    }
}
