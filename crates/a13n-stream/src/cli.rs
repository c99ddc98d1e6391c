//! Command-line plumbing: a small argument reader and the failures that decide the exit status.

use std::fmt;

/// Why a command failed, and so its exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments (exit status 2).
    Usage(String),
    /// Malformed input: JSON or shape (exit status 3).
    Input(String),
    /// A file or stream could not be read or written (exit status 5).
    Io(String),
}

impl Failure {
    /// The process exit status for this failure.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Input(_) => 3,
            Failure::Io(_) => 5,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "{message} (see `a13n-stream help`)"),
            Failure::Input(message) => write!(f, "bad input: {message}"),
            Failure::Io(message) => write!(f, "I/O error: {message}"),
        }
    }
}

/// The arguments after the program name, consumed option by option.
#[derive(Debug)]
pub struct Args {
    items: Vec<String>,
}

impl Args {
    /// Wrap the raw arguments.
    pub fn new(items: Vec<String>) -> Args {
        Args { items }
    }

    /// Take the subcommand (the first argument).
    pub fn command(&mut self) -> Option<String> {
        (!self.items.is_empty()).then(|| self.items.remove(0))
    }

    /// Take a boolean flag.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.items.len();
        self.items.retain(|item| item != name);
        self.items.len() != before
    }

    /// Take `--name VALUE` or `--name=VALUE`.
    pub fn value(&mut self, name: &str) -> Result<Option<String>, Failure> {
        let prefix = format!("{name}=");
        if let Some(index) = self.items.iter().position(|item| item.starts_with(&prefix)) {
            let item = self.items.remove(index);
            return Ok(Some(item[prefix.len()..].to_owned()));
        }
        let Some(index) = self.items.iter().position(|item| item == name) else {
            return Ok(None);
        };
        if index + 1 >= self.items.len() {
            return Err(Failure::Usage(format!("{name} needs a value")));
        }
        self.items.remove(index);
        Ok(Some(self.items.remove(index)))
    }

    /// Take `--name N` as a non-negative integer.
    pub fn number(&mut self, name: &str) -> Result<Option<usize>, Failure> {
        self.value(name)?
            .map(|text| {
                text.parse().map_err(|_| Failure::Usage(format!("{name} takes a non-negative integer, not {text:?}")))
            })
            .transpose()
    }

    /// Take every `--name VALUE` (repeatable), each value also split at commas.
    pub fn values(&mut self, name: &str) -> Result<Vec<String>, Failure> {
        let mut values = Vec::new();
        while let Some(value) = self.value(name)? {
            values.extend(value.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned));
        }
        Ok(values)
    }

    /// Take `--name DURATION`: `500ms`, `10s`, `5m`, or a bare number of seconds.
    pub fn duration(&mut self, name: &str) -> Result<Option<std::time::Duration>, Failure> {
        self.value(name)?
            .map(|text| match text.parse::<u64>() {
                Ok(seconds) => Ok(std::time::Duration::from_secs(seconds)),
                Err(_) => humantime::parse_duration(&text).map_err(|_| {
                    Failure::Usage(format!("{name} takes a duration such as 500ms, 10s or 5m, not {text:?}"))
                }),
            })
            .transpose()
    }

    /// Take the next positional argument (`-` counts as one).
    pub fn positional(&mut self) -> Option<String> {
        let index = self.items.iter().position(|item| item == "-" || !item.starts_with('-'))?;
        Some(self.items.remove(index))
    }

    /// Fail on anything not consumed.
    pub fn finish(self) -> Result<(), Failure> {
        match self.items.first() {
            None => Ok(()),
            Some(item) => Err(Failure::Usage(format!("unexpected argument {item:?}"))),
        }
    }
}
