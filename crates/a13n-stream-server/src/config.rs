//! How the host runs: addresses, storage, and every limit and timeout, each with a default.

use std::net::SocketAddr;
use std::time::Duration;

use crate::runs::RunLimits;

/// How the host runs. Every limit and timeout has a default (see [`Config::default`]) and a `serve` flag.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Where to listen (loopback by default).
    pub listen: SocketAddr,
    /// A SQLite database file, or a `postgres://` URL (several processes may share one PostgreSQL database).
    pub database: String,
    /// A bearer token every request but `/healthz` must carry, when set.
    pub token: Option<String>,
    /// Origins (`scheme://host[:port]`) whose browser requests are served, with CORS; `*` allows any. A request
    /// with any other `Origin` is refused.
    pub allow_origins: Vec<String>,
    /// Extra `Host` names served. Bound to a loopback address, only loopback names (`localhost`, `127.x.x.x`,
    /// `[::1]`) and these are served, which defeats DNS rebinding; bound elsewhere, any host is served unless
    /// this list is set.
    pub allow_hosts: Vec<String>,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// The largest source line.
    pub max_line_bytes: usize,
    /// The most lines in one batch.
    pub max_batch_lines: usize,
    /// The most request-body bytes all ingest requests together may hold; beyond it ingest answers 503 with
    /// `Retry-After`.
    pub max_ingest_bytes: usize,
    /// The most open connections; beyond it new connections get 503 and are closed.
    pub max_connections: usize,
    /// How long a client may take to send a request's head, from the moment it connects.
    pub header_timeout: Duration,
    /// How long a client may take to send an ingest request's body.
    pub body_timeout: Duration,
    /// A connection with no byte read or written for this long is closed (event streams send a keep-alive
    /// comment at a third of it).
    pub idle_timeout: Duration,
    /// On SIGINT or SIGTERM: stop accepting, end event streams, let in-flight requests finish for at most this
    /// long.
    pub shutdown_timeout: Duration,
    /// How many runs stay in memory, and for how long unused.
    pub runs: RunLimits,
    /// PostgreSQL: the most pooled connections of this process.
    pub db_pool: usize,
    /// PostgreSQL: how long to wait for a pooled connection or a new one.
    pub db_timeout: Duration,
    /// SQLite: how often to look for commits of other processes on the same file, to wake subscribers; any storage:
    /// how often a thread's follower looks for the thread's next run.
    pub poll_interval: Duration,
    /// Keep full values in displays (a durable host's choice).
    pub retain_content: bool,
    /// Delete runs whose last commit is older than this (`None`, the default: keep every run until it is
    /// deleted with `DELETE /v1/runs/{run_id}`).
    pub retain: Option<Duration>,
    /// How often retention looks for runs to delete (the first time when the host starts).
    pub retain_interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            database: "a13n-stream.db".into(),
            token: None,
            allow_origins: Vec::new(),
            allow_hosts: Vec::new(),
            max_body_bytes: 32 * 1024 * 1024,
            max_line_bytes: 8 * 1024 * 1024,
            max_batch_lines: 10_000,
            max_ingest_bytes: 64 * 1024 * 1024,
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(10),
            runs: RunLimits::default(),
            db_pool: 16,
            db_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_millis(250),
            retain_content: false,
            retain: None,
            retain_interval: Duration::from_secs(600),
        }
    }
}

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl Config {
    /// Check the configuration before anything starts.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(token) = &self.token {
            // A header value is visible ASCII; the scheme and the token are separated by spaces, which are trimmed.
            if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ConfigError(
                    "the token can never match: a bearer token is 1 or more visible ASCII characters, without spaces"
                        .into(),
                ));
            }
        }
        for origin in &self.allow_origins {
            if origin != "*" && !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(ConfigError(format!("--allow-origin {origin:?}: expected scheme://host[:port] or *")));
            }
            if origin.ends_with('/') {
                return Err(ConfigError(format!("--allow-origin {origin:?}: an origin has no path (drop the /)")));
            }
        }
        let nonzero = [
            ("--max-body-bytes", self.max_body_bytes),
            ("--max-line-bytes", self.max_line_bytes),
            ("--max-batch-lines", self.max_batch_lines),
            ("--max-ingest-bytes", self.max_ingest_bytes),
            ("--max-connections", self.max_connections),
            ("--max-resident-runs", self.runs.max_resident),
            ("--db-pool", self.db_pool),
            ("--checkpoint-bytes", usize::try_from(self.runs.checkpoint_bytes).unwrap_or(usize::MAX)),
        ];
        if let Some((flag, _)) = nonzero.iter().find(|(_, value)| *value == 0) {
            return Err(ConfigError(format!("{flag} must be at least 1")));
        }
        if self.max_ingest_bytes < self.max_body_bytes {
            return Err(ConfigError("--max-ingest-bytes must be at least --max-body-bytes".into()));
        }
        let timeouts = [
            ("--header-timeout", self.header_timeout),
            ("--body-timeout", self.body_timeout),
            ("--idle-timeout", self.idle_timeout),
            ("--db-timeout", self.db_timeout),
            ("--poll-interval", self.poll_interval),
            ("--retain", self.retain.unwrap_or(Duration::MAX)),
            ("--retain-interval", self.retain_interval),
        ];
        if let Some((flag, _)) = timeouts.iter().find(|(_, value)| value.is_zero()) {
            return Err(ConfigError(format!("{flag} must be longer than 0")));
        }
        Ok(())
    }

    /// The interval of keep-alive comments on event streams: well inside the idle timeout.
    pub fn keep_alive(&self) -> Duration {
        (self.idle_timeout / 3).min(Duration::from_secs(15))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_that_can_never_match_are_refused_at_startup() {
        for token in ["", "two words", " padded", "tab\there", "café"] {
            let config = Config { token: Some(token.into()), ..Config::default() };
            assert!(config.validate().is_err(), "{token:?}");
        }
        let config = Config { token: Some("s3cret-._~+/=".into()), ..Config::default() };
        assert!(config.validate().is_ok());
    }

    #[test]
    fn retention_keeps_everything_by_default_and_refuses_zero_durations() {
        assert_eq!(Config::default().retain, None, "nothing is deleted unless asked");
        let config = Config { retain: Some(Duration::ZERO), ..Config::default() };
        assert!(config.validate().unwrap_err().to_string().contains("--retain"));
        let config = Config { retain_interval: Duration::ZERO, ..Config::default() };
        assert!(config.validate().unwrap_err().to_string().contains("--retain-interval"));
        let config = Config { retain: Some(Duration::from_secs(86400)), ..Config::default() };
        assert!(config.validate().is_ok());
    }
}
