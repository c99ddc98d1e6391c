//! The command line: every command, argument and default, declared once (clap derive).

use std::path::PathBuf;
use std::time::Duration;

use a13n_stream_server::Config;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exact Agent Stream Protocol conversion, display folding and recovery, and a durable host.
#[derive(Debug, Parser)]
#[command(name = "a13n-stream", version, about, propagate_version = true, max_term_width = 110)]
#[command(after_help = "Exit status: 0 success, 1 conformance failures or bench-serve inexact, 2 usage error, \
3 malformed input, 4 a line the protocol rejected, 5 I/O error.")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert Harness source lines (JSON, one item a line) to AG-UI events, one JSON line each.
    Observe(ObserveArgs),
    /// Fold source lines (or AG-UI event lines) into display items and write the checkpoint JSON.
    Fold(FoldArgs),
    /// Replay recorded cases of the Python reference and compare every output byte for byte.
    Conformance(ConformanceArgs),
    /// Host runs durably over HTTP: exactly-once ingest, Server-Sent Events with replay, crash recovery.
    Serve(ServeArgs),
    /// Measure json_baseline, observe and fold on generated streams, checkpoints, and peak memory.
    Bench(BenchArgs),
    /// Load-test `serve` on loopback: concurrent runs, SSE subscribers, delivery latency.
    BenchServe(BenchServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// A named host processor of the conformance corpus.
#[derive(Clone, Copy, Debug, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ProcessorName {
    /// Drop `a13n.harness.usage` and `a13n.harness.diagnostic` CUSTOM events.
    DropUsage,
    /// Replace each text delta by as many `*` as it has characters.
    RedactText,
    /// Rewrite `TEXT_MESSAGE_START.messageId` (a structural change the observer rejects).
    BadStructural,
    /// Replace `TOOL_CALL_START` by a CUSTOM event (a type change the observer rejects).
    BadType,
}

impl ProcessorName {
    /// The corpus's name for the processor.
    pub fn name(self) -> &'static str {
        match self {
            ProcessorName::DropUsage => "drop_usage",
            ProcessorName::RedactText => "redact_text",
            ProcessorName::BadStructural => "bad_structural",
            ProcessorName::BadType => "bad_type",
        }
    }
}

/// `observe`.
#[derive(Debug, Args)]
pub struct ObserveArgs {
    /// The source lines (`-` or absent: standard input, which may be live: each line's events are written once
    /// the input has nothing more ready).
    pub input: Option<PathBuf>,
    /// One line per source line, exactly as the reference's recorded agui.jsonl: {"events":[...]} or
    /// {"error":{"type":...,"message":...}}.
    #[arg(long)]
    pub per_item: bool,
    /// A host processor applied to every event.
    #[arg(long, value_enum)]
    pub processor: Option<ProcessorName>,
}

/// `fold`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("agui_run").args(["run_id", "restore"]).multiple(true)))]
pub struct FoldArgs {
    /// The input lines (`-` or absent: standard input, which may be live: the observed lines are written once the
    /// input has nothing more ready).
    pub input: Option<PathBuf>,
    /// The input lines are AG-UI events, not Harness source lines.
    #[arg(long, requires = "agui_run")]
    pub agui: bool,
    /// The run the display belongs to (with --agui; source folds take the first line's run, a restored fold
    /// its checkpoint's).
    #[arg(long, requires = "agui", conflicts_with = "restore")]
    pub run_id: Option<String>,
    /// Write one line per input line, exactly as the reference's recorded observed.jsonl.
    #[arg(long, value_name = "OUT")]
    pub observed: Option<PathBuf>,
    /// Where to write the checkpoint JSON (`-`: standard output).
    #[arg(long, value_name = "OUT", default_value = "-")]
    pub export: PathBuf,
    /// Fold only the first K input lines (K after --start; 0 only with --agui: a source fold's run is its first
    /// line's).
    #[arg(long, value_name = "K")]
    pub stop: Option<u64>,
    /// Continue the display of a checkpoint, with --start: the input line it was taken at.
    #[arg(long, value_name = "CHECKPOINT", requires = "start")]
    pub restore: Option<PathBuf>,
    /// Skip the first K input lines, which the checkpoint holds (0 when the input holds only the lines after it).
    /// Not checked: a checkpoint records display positions, not input lines; another K folds lines twice or skips
    /// them.
    #[arg(long, value_name = "K", requires = "restore")]
    pub start: Option<u64>,
    /// Keep full values in items instead of bounded previews (the reference's full_content).
    #[arg(long)]
    pub full_content: bool,
    /// Keep full values as host content references (the reference's retain_content).
    #[arg(long)]
    pub retain_content: bool,
    /// A host processor applied to every event.
    #[arg(long, value_enum)]
    pub processor: Option<ProcessorName>,
    /// Report on standard error how many source lines took each path through the fold: a fast lane (`taken/LANE`,
    /// `compacted/LANE` for a line with whitespace between its tokens, `laid-out/LANE` for one laid out otherwise
    /// than its model writes it), or the general path and why
    /// (`general/no-lane`, `general/not-in-layout`, `declined-scan/LANE`, `declined-take/LANE`).
    #[arg(long, conflicts_with = "agui")]
    pub lanes: bool,
}

/// Which checks `conformance` runs.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OnlyChecks {
    /// agui.jsonl and cuts/K.observer.json.
    Observer,
    /// observed.jsonl, display.json and cuts/K.display.json.
    Display,
}

/// `conformance`.
#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// Directories holding cases (a directory with case.json), searched recursively.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Run only these checks.
    #[arg(long, value_enum)]
    pub only: Option<OnlyChecks>,
}

/// How `serve` writes its log.
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// A duration on the command line: `500ms`, `10s`, `5m`, or a bare number of seconds; shown as humantime writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait(pub Duration);

impl std::str::FromStr for Wait {
    type Err = String;

    fn from_str(text: &str) -> Result<Wait, String> {
        match text.parse::<u64>() {
            Ok(seconds) => Ok(Wait(Duration::from_secs(seconds))),
            Err(_) => humantime::parse_duration(text)
                .map(Wait)
                .map_err(|_| format!("expected a duration such as 500ms, 10s or 5m, not {text:?}")),
        }
    }
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

/// `serve`. Every limit and timeout defaults to [`Config::default`]'s value.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen.
    #[arg(long, default_value_t = Config::default().listen)]
    pub listen: std::net::SocketAddr,
    /// A SQLite database file, or a postgres:// URL (several processes may share one PostgreSQL database).
    #[arg(long, default_value_t = Config::default().database)]
    pub db: String,
    /// The bearer token every route but /healthz requires. Prefer the environment variable: a --token value is
    /// visible to every user of the machine in `ps`.
    #[arg(long, env = TOKEN_VARIABLE, hide_env_values = true)]
    pub token: Option<String>,
    /// Keep full values in displays (a durable host's choice).
    #[arg(long)]
    pub retain_content: bool,
    /// Origins (scheme://host[:port], or *) whose browser requests are served, with CORS. Repeat or separate
    /// with commas.
    #[arg(long, value_delimiter = ',', value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Extra Host names served (a loopback bind serves only loopback names otherwise).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// The most open connections; beyond it new ones get 503.
    #[arg(long, value_name = "N", default_value_t = Config::default().max_connections)]
    pub max_connections: usize,
    /// The largest ingest body, in bytes.
    #[arg(long, value_name = "N", default_value_t = Config::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// The largest source line, in bytes.
    #[arg(long, value_name = "N", default_value_t = Config::default().max_line_bytes)]
    pub max_line_bytes: usize,
    /// The most lines in one batch.
    #[arg(long, value_name = "N", default_value_t = Config::default().max_batch_lines)]
    pub max_batch_lines: usize,
    /// Body bytes all ingest requests together may hold; beyond it 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = Config::default().max_ingest_bytes)]
    pub max_ingest_bytes: usize,
    /// Delete runs whose last commit is older than this (default: keep every run until DELETE /v1/runs/{run_id}).
    #[arg(long, value_name = "DURATION")]
    pub retain: Option<Wait>,
    /// How often --retain looks for runs to delete, the first time at startup (given without --retain, a usage
    /// error: nothing would look).
    #[arg(long, value_name = "DURATION", requires = "retain", default_value_t = Wait(Config::default().retain_interval))]
    pub retain_interval: Wait,
    /// Runs held in memory; beyond it the least recently used idle run is dropped (rebuilt on next use).
    #[arg(long, value_name = "N", default_value_t = Config::default().runs.max_resident)]
    pub max_resident_runs: usize,
    /// Time from connecting to the end of the request head.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().header_timeout))]
    pub header_timeout: Wait,
    /// Time to receive an ingest body.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().body_timeout))]
    pub body_timeout: Wait,
    /// A connection with no byte read or written for this long is closed.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().idle_timeout))]
    pub idle_timeout: Wait,
    /// On SIGINT or SIGTERM: how long open requests may take to finish.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().shutdown_timeout))]
    pub shutdown_timeout: Wait,
    /// A run unused for this long is dropped from memory.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().runs.idle))]
    pub run_idle: Wait,
    /// Journal bytes after which an open run's display is stored again (or as many as its last checkpoint took);
    /// a restart folds at most about this much of a run again.
    #[arg(long, value_name = "N", default_value_t = Config::default().runs.checkpoint_bytes)]
    pub checkpoint_bytes: u64,
    /// PostgreSQL: connections of this process.
    #[arg(long, value_name = "N", default_value_t = Config::default().db_pool)]
    pub db_pool: usize,
    /// PostgreSQL: waiting for a pooled or new connection; the longest pause between LISTEN reconnects.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().db_timeout))]
    pub db_timeout: Wait,
    /// SQLite: how often to look for other processes' commits on the same file; any storage: how often a thread's
    /// follower looks for the thread's next run.
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Config::default().poll_interval))]
    pub poll_interval: Wait,
    /// Log lines as text or JSON; RUST_LOG filters them (default: info).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// The environment variable `serve --token` reads.
pub const TOKEN_VARIABLE: &str = "A13N_STREAM_TOKEN";

/// `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Stream sizes, in items (`--sizes 10000 100000` or `--sizes 10000,100000`).
    #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = [10_000u64, 100_000, 1_000_000])]
    pub sizes: Vec<u64>,
    /// Stream shapes: text, short, tools, subagents (default: all), separated by spaces or commas.
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub runs: usize,
    /// One JSON object per figure.
    #[arg(long)]
    pub json: bool,
    /// Print a generated stream of KIND with N items instead of measuring.
    #[arg(long, num_args = 2, value_names = ["KIND", "N"])]
    pub emit: Vec<String>,
    /// Used by bench itself: fold a generated KIND:N stream in this process and print its peak memory as JSON.
    #[arg(long, value_name = "KIND:N")]
    pub peak_child: Option<String>,
    /// With --peak-child: keep full values.
    #[arg(long, requires = "peak_child")]
    pub retain_content: bool,
}

/// `bench-serve`.
#[derive(Debug, Args)]
pub struct BenchServeArgs {
    /// Runs ingested at once.
    #[arg(long, default_value_t = 8)]
    pub runs: usize,
    /// SSE subscribers per run.
    #[arg(long, default_value_t = 4)]
    pub subscribers: usize,
    /// Source lines per run.
    #[arg(long, default_value_t = 5_000)]
    pub lines: u64,
    /// Lines per batch.
    #[arg(long, default_value_t = 50)]
    pub batch: usize,
    /// Stop after this many seconds, whatever is left.
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// The database (default: a temporary SQLite file).
    #[arg(long)]
    pub db: Option<String>,
    /// Host processes sharing the database; one measurement per count.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    pub processes: Vec<usize>,
    /// One JSON object per measurement.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn bench(args: &[&str]) -> BenchArgs {
        let line = ["a13n-stream", "bench"].iter().chain(args);
        match Cli::try_parse_from(line).expect("the arguments parse").command {
            Command::Bench(args) => args,
            other => panic!("not bench: {other:?}"),
        }
    }

    /// The help writes the default sizes with spaces between them; a user who copies that layout is understood.
    #[test]
    fn bench_lists_take_spaces_or_commas() {
        for args in
            [&["--sizes", "10", "20", "--kinds", "text", "tools"][..], &["--sizes", "10,20", "--kinds", "text,tools"]]
        {
            let parsed = bench(args);
            assert_eq!(parsed.sizes, [10, 20]);
            assert_eq!(parsed.kinds, ["text", "tools"]);
        }
        assert_eq!(bench(&[]).sizes, [10_000, 100_000, 1_000_000]);
    }
}
