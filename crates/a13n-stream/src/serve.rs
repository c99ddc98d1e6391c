//! `a13n-stream serve` and `a13n-stream bench-serve`.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use a13n_stream_bench::load::{self, LoadOptions};
use a13n_stream_server::Config;
use tracing_subscriber::EnvFilter;

use crate::cli::{BenchServeArgs, LogFormat, ServeArgs, Wait, TOKEN_VARIABLE};
use crate::failure::{io_error, Failure};

/// The token variable when it is set but empty, which clap reads as absent: a deployment whose secret came out
/// empty must not start without authentication.
fn empty_token_variable() -> Option<String> {
    std::env::var_os(TOKEN_VARIABLE).filter(|value| value.is_empty()).map(|_| String::new())
}

fn config(args: ServeArgs) -> Config {
    let mut config = Config::default();
    config.listen = args.listen;
    config.database = args.db;
    // An empty token is kept so that validation refuses it: dropped, it would serve every route without one.
    config.token = args.token.or_else(empty_token_variable);
    config.retain_content = args.retain_content;
    config.allow_origins = args.allow_origin;
    config.allow_hosts = args.allow_host;
    config.max_connections = args.max_connections;
    config.max_body_bytes = args.max_body_bytes;
    config.max_line_bytes = args.max_line_bytes;
    config.max_batch_lines = args.max_batch_lines;
    config.max_ingest_bytes = args.max_ingest_bytes;
    config.runs.max_resident = args.max_resident_runs;
    config.header_timeout = args.header_timeout.0;
    config.body_timeout = args.body_timeout.0;
    config.idle_timeout = args.idle_timeout.0;
    config.shutdown_timeout = args.shutdown_timeout.0;
    config.runs.idle = args.run_idle.0;
    config.runs.checkpoint_bytes = args.checkpoint_bytes;
    config.db_pool = args.db_pool;
    config.db_timeout = args.db_timeout.0;
    config.poll_interval = args.poll_interval.0;
    config.retain = args.retain.map(|Wait(retain)| retain);
    config.retain_interval = args.retain_interval.0;
    config
}

/// Logs on standard error, filtered by `RUST_LOG` (default `info`), as text or JSON lines.
fn init_logs(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(io::stderr).with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Run `serve` until SIGINT or SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode, Failure> {
    let log_format = args.log_format;
    let config = config(args);
    config.validate().map_err(|error| Failure::Usage(error.to_string()))?;
    init_logs(log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Io(format!("starting the runtime: {e}")))?;
    runtime
        .block_on(a13n_stream_server::serve(config, |address| {
            let mut out = io::stdout().lock();
            let _ = writeln!(out, "listening on http://{address}").and_then(|()| out.flush());
        }))
        .map_err(|e| Failure::Io(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// Run `bench-serve`: one measurement per process count.
pub fn bench(args: BenchServeArgs) -> Result<ExitCode, Failure> {
    let mut options = LoadOptions {
        runs: args.runs.max(1),
        subscribers: args.subscribers,
        lines: args.lines.max(4),
        batch: args.batch.max(1),
        seconds: args.seconds as f64,
        database: args.db,
        processes: 1,
    };
    let exe = std::env::current_exe().map_err(io_error)?;
    let mut exact = true;
    let mut out = io::stdout().lock();
    for processes in args.processes {
        options.processes = processes.max(1);
        let report = load::run(&exe, &options).map_err(Failure::Io)?;
        exact &= report.exact;
        if args.json {
            writeln!(out, "{}", report.to_json(&options)).map_err(io_error)?;
            continue;
        }
        writeln!(
            out,
            "{} process(es), {} runs x {} subscribers, batches of {}: {} lines in {:.2} s = {:.0} lines/s; {} deliveries\n\
             delivery latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}; every event exactly once in order: {}",
            options.processes,
            options.runs,
            options.subscribers,
            options.batch,
            report.lines,
            report.seconds,
            report.lines as f64 / report.seconds.max(1e-9),
            report.deliveries,
            report.latency_ms[0],
            report.latency_ms[1],
            report.latency_ms[2],
            report.latency_ms[3],
            report.exact
        )
        .map_err(io_error)?;
    }
    Ok(if exact { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
