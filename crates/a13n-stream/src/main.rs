//! `a13n-stream`: observe Harness streams as AG-UI, fold display checkpoints, run the conformance corpus.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use a13n_stream::cli::{Args, Failure};
use a13n_stream::{conformance, processors};
use a13n_stream_protocol::{
    recorded, DisplayFold, DisplayOptions, FoldError, HarnessAguiStreamObserver, InputError, ObserveError, Observed,
    SourceItem,
};
use serde_json::Value;

// The CLI allocates per event; mimalloc's thread-local size classes cut that cost for every command alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HELP: &str = "\
a13n-stream: exact Agent Stream Protocol conversion, display folding and recovery

USAGE:
    a13n-stream observe [FILE|-] [--per-item] [--processor NAME]
    a13n-stream fold [FILE|-] [--agui --run-id ID] [--observed OUT] [--export OUT] [--stop K]
                     [--restore CHECKPOINT --start K] [--full-content] [--retain-content] [--processor NAME]
    a13n-stream conformance [--only observer|display] DIR...
    a13n-stream bench [--sizes N,N,...] [--kinds text,short,tools,subagents] [--runs N] [--json]
    a13n-stream bench --emit KIND N
    a13n-stream bench-serve [--runs N] [--subscribers M] [--lines L] [--batch B] [--seconds S] [--db URL]
                            [--processes 1,2,3] [--json]
    a13n-stream serve [--listen ADDR] [--db PATH|postgres://URL] [--token TOKEN] [--retain-content]
                      [--allow-origin ORIGIN]... [--allow-host NAME]... [--max-* N] [--*-timeout DURATION]
                      (every limit and timeout: see the README's host section)
    a13n-stream help

COMMANDS:
    observe       Convert Harness source lines (JSON, one item a line) to AG-UI events, printed as JSON lines.
                  --per-item prints one line per source line exactly as the reference's recorded agui.jsonl:
                  {\"events\":[...]} or {\"error\":{\"type\":\"AguiObservationError\",\"message\":...}}.
    fold          Fold source lines (or AG-UI event lines with --agui) into display items and write the
                  checkpoint JSON (--export, default stdout). --observed writes one line per input line.
                  --stop K folds only the first K lines; --restore continues a checkpoint from line K.
    conformance   Run every recorded case under the given directories; ends with `N passed, M failed`.
    bench-serve   Load-test `serve` on loopback: N runs ingested at once in batches of B lines, M SSE subscribers
                  per run; reports ingest rate and delivery latency percentiles (bounded by --seconds).
                  --processes 1,2,3 runs it once per count, with that many hosts sharing the database.
    serve         Host runs durably over HTTP (loopback 127.0.0.1:8787 and ./a13n-stream.db by default):
                  POST /v1/runs/{run_id}/source?offset=N (NDJSON source lines, exactly once),
                  GET /v1/runs/{run_id}/events (SSE; Last-Event-ID resumes), /items, /snapshot,
                  /rejections, GET /v1/runs, /healthz, /metrics. A13N_STREAM_TOKEN (or --token, which `ps`
                  shows to every user) requires a bearer token on every route but /healthz.
    bench         Measure json_baseline, observe and fold on generated streams (default sizes 10000, 100000,
                  1000000), export and restore of 64/1024/4096-item displays, and peak memory folding the
                  largest stream. --json prints one JSON object per figure. --emit prints a generated stream.

A rejected or malformed line is reported on stderr with its line number and skipped, as the reference
does; the exit status then says what went wrong.

EXIT STATUS:
    0  success        2  usage error        3  malformed input (bad JSON or shape)
    4  a line the protocol rejected (observation error)   5  I/O error   1  conformance failures
";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(failure) => {
            let _ = writeln!(io::stderr(), "a13n-stream: {failure}");
            ExitCode::from(failure.code())
        }
    }
}

fn run() -> Result<ExitCode, Failure> {
    let mut args = Args::new(std::env::args().skip(1).collect());
    match args.command().as_deref() {
        None | Some("help" | "--help" | "-h") => {
            say(HELP)?;
            Ok(ExitCode::SUCCESS)
        }
        Some("observe") => observe(args),
        Some("fold") => fold(args),
        Some("conformance") => run_conformance(args),
        Some("bench") => bench(args),
        Some("serve") => serve(args),
        Some("bench-serve") => bench_serve(args),
        Some(other) => Err(Failure::Usage(format!("unknown command {other:?}; see `a13n-stream help`"))),
    }
}

/// Write to stdout; a closed pipe is an I/O failure, never a panic.
fn say(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(io_error)
}

fn open_input(path: Option<&str>) -> Result<Box<dyn BufRead>, Failure> {
    match path {
        None | Some("-") => Ok(Box::new(BufReader::new(io::stdin()))),
        Some(path) => File::open(path)
            .map(|file| Box::new(BufReader::with_capacity(1 << 16, file)) as Box<dyn BufRead>)
            .map_err(|error| Failure::Io(format!("{path}: {error}"))),
    }
}

fn create_output(path: &str) -> Result<Box<dyn Write>, Failure> {
    if path == "-" {
        return Ok(Box::new(BufWriter::new(io::stdout())));
    }
    File::create(path)
        .map(|file| Box::new(BufWriter::new(file)) as Box<dyn Write>)
        .map_err(|error| Failure::Io(format!("{path}: {error}")))
}

fn io_error(error: io::Error) -> Failure {
    Failure::Io(error.to_string())
}

/// Read lines, numbering them from 1, skipping blank ones; reports progress on a terminal. A line longer than
/// the source-line limit is skipped without being held in memory and reported as malformed.
struct Lines {
    input: Box<dyn BufRead>,
    number: u64,
    progress: bool,
    buffer: Vec<u8>,
}

/// One input line, or a line that could not be read as text within the bound.
enum Line<'a> {
    Text(&'a str),
    Bad(String),
}

impl Lines {
    fn new(input: Box<dyn BufRead>) -> Lines {
        Lines { input, number: 0, progress: io::stderr().is_terminal(), buffer: Vec::new() }
    }

    fn next_line(&mut self) -> Result<Option<(u64, Line<'_>)>, Failure> {
        let limit = a13n_stream_protocol::MAX_SOURCE_LINE_BYTES;
        loop {
            self.buffer.clear();
            let mut oversized = false;
            let mut read_any = false;
            loop {
                let available = self.input.fill_buf().map_err(|e| Failure::Io(format!("reading input: {e}")))?;
                if available.is_empty() {
                    break;
                }
                read_any = true;
                let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                    Some(end) => (&available[..end], Some(end + 1)),
                    None => (available, None),
                };
                if !oversized && self.buffer.len() + chunk.len() <= limit {
                    self.buffer.extend_from_slice(chunk);
                } else {
                    oversized = true;
                    self.buffer.clear();
                }
                let consumed = done.unwrap_or(available.len());
                self.input.consume(consumed);
                if done.is_some() {
                    break;
                }
            }
            if !read_any {
                if self.progress && self.number >= 10_000 {
                    let _ = writeln!(io::stderr(), "\r{} lines", self.number);
                }
                return Ok(None);
            }
            self.number += 1;
            if self.progress && self.number % 10_000 == 0 {
                let _ = write!(io::stderr(), "\r{} lines", self.number);
            }
            if oversized {
                return Ok(Some((self.number, Line::Bad(format!("the line exceeds the {limit}-byte limit")))));
            }
            while self.buffer.last().is_some_and(|b| *b == b'\r') {
                self.buffer.pop();
            }
            if self.buffer.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(match std::str::from_utf8(&self.buffer) {
                Ok(text) => (self.number, Line::Text(text)),
                Err(error) => (self.number, Line::Bad(format!("the line is not UTF-8: {error}"))),
            }));
        }
    }
}

/// The worst problem seen while going on past rejected lines.
#[derive(Default)]
struct Outcome {
    input_errors: u64,
    observation_errors: u64,
}

impl Outcome {
    fn report(&mut self, line: u64, observation: bool, message: &str) {
        if observation {
            self.observation_errors += 1;
        } else {
            self.input_errors += 1;
        }
        let _ = writeln!(io::stderr(), "line {line}: {message}");
    }

    fn exit(self) -> ExitCode {
        if self.input_errors > 0 {
            ExitCode::from(3)
        } else if self.observation_errors > 0 {
            ExitCode::from(4)
        } else {
            ExitCode::SUCCESS
        }
    }
}

fn observe(mut args: Args) -> Result<ExitCode, Failure> {
    let per_item = args.flag("--per-item");
    let processor = args.value("--processor")?;
    let path = args.positional();
    args.finish()?;
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    if let Some(processor) = processors::optional(processor.as_deref()).map_err(Failure::Usage)? {
        observer = observer.with_processor(processor);
    }
    let mut lines = Lines::new(open_input(path.as_deref())?);
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut outcome = Outcome::default();
    let mut buffer = Vec::with_capacity(4096);
    while let Some((number, line)) = lines.next_line()? {
        let result = match line {
            Line::Text(line) => SourceItem::from_json(line).map_err(ObserveError::Input),
            Line::Bad(message) => Err(ObserveError::Input(InputError::new("", message))),
        }
        .and_then(|item| observer.observe(&item));
        buffer.clear();
        match result {
            Ok(events) if per_item => {
                recorded::write_events_line(&events, &mut buffer);
                buffer.push(b'\n');
            }
            Ok(events) => {
                for event in &events {
                    event.write_json(&mut buffer);
                    buffer.push(b'\n');
                }
            }
            Err(error) => {
                outcome.report(number, error.is_observation(), &error.to_string());
                if per_item {
                    let (kind, message) = recorded::observe_error_parts(&error);
                    recorded::write_error_line(kind, &message, &mut buffer);
                    buffer.push(b'\n');
                }
            }
        }
        out.write_all(&buffer).map_err(io_error)?;
    }
    out.flush().map_err(io_error)?;
    Ok(outcome.exit())
}

fn fold(mut args: Args) -> Result<ExitCode, Failure> {
    let agui = args.flag("--agui");
    let run_id = args.value("--run-id")?;
    let observed_path = args.value("--observed")?;
    let export_path = args.value("--export")?.unwrap_or_else(|| "-".into());
    let stop = args.number("--stop")?;
    let restore_path = args.value("--restore")?;
    let start = args.number("--start")?.unwrap_or(0);
    let full_content = args.flag("--full-content");
    let retain_content = args.flag("--retain-content");
    let processor_name = args.value("--processor")?;
    let path = args.positional();
    args.finish()?;
    if agui && run_id.is_none() && restore_path.is_none() {
        return Err(Failure::Usage("--agui needs --run-id (or --restore)".into()));
    }
    if start > 0 && restore_path.is_none() {
        return Err(Failure::Usage("--start needs --restore".into()));
    }
    let mut processor = processors::optional(processor_name.as_deref()).map_err(Failure::Usage)?;
    let mut lines = Lines::new(open_input(path.as_deref())?);
    let mut fold: Option<DisplayFold> = match &restore_path {
        Some(checkpoint) => {
            let mut text = String::new();
            File::open(checkpoint)
                .and_then(|mut file| file.read_to_string(&mut text))
                .map_err(|e| Failure::Io(format!("{checkpoint}: {e}")))?;
            let restored = DisplayFold::restore_json(&text, retain_content, processor.take())
                .map_err(|e| Failure::Input(format!("{checkpoint}: {e}")))?;
            if full_content && !restored.export_continuation().full_content {
                return Err(Failure::Usage("--full-content does not match the checkpoint's content policy".into()));
            }
            Some(restored)
        }
        None if agui => Some(DisplayFold::with_options(
            run_id.clone().unwrap_or_default(),
            DisplayOptions { full_content, retain_content, processor: processor.take(), ..DisplayOptions::default() },
        )),
        // A source fold belongs to the run of its first item.
        None => None,
    };
    let mut observed = observed_path.as_deref().map(create_output).transpose()?;
    let mut outcome = Outcome::default();
    let mut buffer = Vec::with_capacity(4096);
    let mut entries = Vec::with_capacity(4096);
    let mut index = 0u64;
    while let Some((number, line)) = lines.next_line()? {
        let line = match line {
            Line::Text(line) => Ok(line),
            Line::Bad(message) => Err(InputError::new("", message)),
        };
        index += 1;
        if index <= start as u64 {
            continue;
        }
        if stop.is_some_and(|stop| index > stop as u64) {
            break;
        }
        // Each observed entry's JSON followed by a newline.
        entries.clear();
        let result: Result<(), FoldError> = match line {
            Err(error) => Err(error.into()),
            Ok(line) if agui => match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(event)) => fold
                    .as_mut()
                    .map_or(Ok(Vec::new()), |f| f.fold(vec![event], None))
                    .map(|observed| Observed::write_lines(&observed, &mut entries)),
                Ok(other) => Err(InputError::new("", format!("expected an AG-UI event object, found {other}")).into()),
                Err(error) => Err(InputError::new("", format!("invalid JSON: {error}")).into()),
            },
            Ok(line) => match fold.as_mut() {
                Some(fold) => fold.fold_line(line, &mut entries).map(drop),
                // The first source line names the run the display belongs to.
                None => match SourceItem::from_json(line) {
                    Ok(item) => {
                        let fold = fold.insert(DisplayFold::with_options(
                            item.run_id.clone(),
                            DisplayOptions {
                                full_content,
                                retain_content,
                                processor: processor.take(),
                                ..DisplayOptions::default()
                            },
                        ));
                        fold.fold_source(&item).map(|observed| Observed::write_lines(&observed, &mut entries))
                    }
                    Err(error) => Err(error.into()),
                },
            },
        };
        buffer.clear();
        match result {
            Ok(()) => {
                if observed.is_some() {
                    recorded::write_observed_line(&entries, &mut buffer);
                    buffer.push(b'\n');
                }
            }
            Err(error) => {
                outcome.report(number, error.is_observation(), &error.to_string());
                if observed.is_some() {
                    let (kind, message) = recorded::fold_error_parts(&error);
                    recorded::write_error_line(kind, &message, &mut buffer);
                    buffer.push(b'\n');
                }
            }
        }
        if let Some(out) = observed.as_mut() {
            out.write_all(&buffer).map_err(io_error)?;
        }
    }
    if let Some(mut out) = observed {
        out.flush().map_err(io_error)?;
    }
    let fold = fold.unwrap_or_else(|| {
        DisplayFold::with_options(
            run_id.unwrap_or_else(|| "run".into()),
            DisplayOptions { full_content, retain_content, ..DisplayOptions::default() },
        )
    });
    let mut export = create_output(&export_path)?;
    fold.write_export(&mut export).map_err(io_error)?;
    export.write_all(b"\n").map_err(io_error)?;
    export.flush().map_err(io_error)?;
    Ok(outcome.exit())
}

fn run_conformance(mut args: Args) -> Result<ExitCode, Failure> {
    let only = match args.value("--only")?.as_deref() {
        None => conformance::Only::All,
        Some("observer") => conformance::Only::Observer,
        Some("display") => conformance::Only::Display,
        Some(other) => return Err(Failure::Usage(format!("--only takes observer or display, not {other:?}"))),
    };
    let mut paths = Vec::new();
    while let Some(path) = args.positional() {
        paths.push(PathBuf::from(path));
    }
    args.finish()?;
    if paths.is_empty() {
        return Err(Failure::Usage("conformance needs at least one case directory".into()));
    }
    let report = conformance::run(&paths, only).map_err(Failure::Io)?;
    let mut out = io::stdout().lock();
    for failure in &report.failures {
        writeln!(out, "FAIL {failure}").map_err(io_error)?;
    }
    writeln!(out, "{} cases", report.cases).map_err(io_error)?;
    writeln!(out, "{} passed, {} failed", report.passed, report.failures.len()).map_err(io_error)?;
    if report.cases == 0 {
        let _ = writeln!(io::stderr(), "a13n-stream: no case directories (with case.json) under the given paths");
        return Ok(ExitCode::from(1));
    }
    Ok(if report.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn bench(mut args: Args) -> Result<ExitCode, Failure> {
    use a13n_stream::bench::{self, Figure, StreamKind};
    let kind_of =
        |name: &str| StreamKind::parse(name).ok_or_else(|| Failure::Usage(format!("unknown stream kind {name:?}")));
    if let Some(kind) = args.value("--emit")? {
        let kind = kind_of(&kind)?;
        let total: u64 =
            args.positional().and_then(|n| n.parse().ok()).ok_or_else(|| Failure::Usage("--emit KIND N".into()))?;
        args.finish()?;
        let mut out = BufWriter::new(io::stdout().lock());
        let mut generator = bench::Generator::new(kind, total);
        while let Some(line) = generator.next_line() {
            out.write_all(line.as_bytes()).map_err(io_error)?;
            out.write_all(b"\n").map_err(io_error)?;
        }
        out.flush().map_err(io_error)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(spec) = args.value("--peak-child")? {
        // Internal: fold a generated stream without holding it and report this process's peak memory.
        let retain = args.flag("--retain-content");
        args.finish()?;
        let (kind, total) = spec.split_once(':').ok_or_else(|| Failure::Usage("--peak-child KIND:N".into()))?;
        let total: u64 = total.parse().map_err(|_| Failure::Usage("--peak-child KIND:N".into()))?;
        let fold = bench::fold_streaming(kind_of(kind)?, total, retain);
        let mut counter = bench::ByteCounter::default();
        fold.write_export(&mut counter).map_err(io_error)?;
        let checkpoint = counter.bytes;
        say(&format!("{}\n", serde_json::json!({"peak": bench::peak_memory(), "checkpoint": checkpoint})))?;
        return Ok(ExitCode::SUCCESS);
    }
    let json = args.flag("--json");
    let sizes: Vec<u64> = match args.value("--sizes")? {
        Some(list) => list
            .split(',')
            .map(|n| n.trim().parse().map_err(|_| Failure::Usage(format!("--sizes takes numbers, not {n:?}"))))
            .collect::<Result<_, _>>()?,
        None => vec![10_000, 100_000, 1_000_000],
    };
    let kinds: Vec<StreamKind> = match args.value("--kinds")? {
        Some(list) => list.split(',').map(|k| kind_of(k.trim())).collect::<Result<_, _>>()?,
        None => StreamKind::ALL.to_vec(),
    };
    let runs = args.number("--runs")?.unwrap_or(3);
    args.finish()?;
    let mut figures: Vec<Figure> = Vec::new();
    let emit = |figure: Figure, figures: &mut Vec<Figure>| -> Result<(), Failure> {
        if json {
            say(&format!("{}\n", figure.to_json()))?;
        } else {
            let extra = figure.bytes.map_or(String::new(), |b| format!("  {:.1} KiB", b as f64 / 1024.0));
            say(&format!(
                "{:<32} {:>9} items {:>10.4} s {:>12.0} items/s{extra}\n",
                figure.name,
                figure.items,
                figure.seconds,
                figure.rate()
            ))?;
        }
        figures.push(figure);
        Ok(())
    };
    let mut buffer = Vec::with_capacity(1 << 16);
    for &size in &sizes {
        for &kind in &kinds {
            let lines = bench::lines(kind, size);
            let runs = if size >= 1_000_000 { 1 } else { runs };
            let name = |what: &str| format!("{what}/{}/{size}", kind.name());
            let seconds = bench::time(runs, || bench::json_baseline(&lines, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("json_baseline"), items: size, seconds, bytes: None }, &mut figures)?;
            let seconds = bench::time(runs, || bench::observe(&lines, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("observe"), items: size, seconds, bytes: None }, &mut figures)?;
            let seconds = bench::time(runs, || bench::fold(&lines, false, &mut buffer)).as_secs_f64();
            emit(Figure { name: name("fold"), items: size, seconds, bytes: None }, &mut figures)?;
            if kind == StreamKind::Text {
                let seconds = bench::time(runs, || bench::fold(&lines, true, &mut buffer)).as_secs_f64();
                emit(Figure { name: name("fold_retain"), items: size, seconds, bytes: None }, &mut figures)?;
            }
        }
    }
    for size in [64, 1024, 4096] {
        for figure in bench::checkpoint_figures(size, runs.max(5)) {
            emit(figure, &mut figures)?;
        }
    }
    if let Some(&largest) = sizes.iter().max() {
        let exe = std::env::current_exe().map_err(io_error)?;
        for &kind in &kinds {
            for retain in [false, true] {
                if retain && kind != StreamKind::Text {
                    continue;
                }
                let mut command = std::process::Command::new(&exe);
                command.args(["bench", "--peak-child", &format!("{}:{largest}", kind.name())]);
                if retain {
                    command.arg("--retain-content");
                }
                let output = command.output().map_err(io_error)?;
                let report: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
                let peak = report.get("peak").and_then(Value::as_u64);
                let checkpoint = report.get("checkpoint").and_then(Value::as_u64).unwrap_or(0);
                let policy = if retain { "_retain" } else { "" };
                let name = format!("peak_memory{policy}/{}/{largest}", kind.name());
                emit(Figure { name, items: largest, seconds: 0.0, bytes: peak }, &mut figures)?;
                let name = format!("checkpoint{policy}/{}/{largest}", kind.name());
                emit(Figure { name, items: largest, seconds: 0.0, bytes: Some(checkpoint) }, &mut figures)?;
            }
        }
    }
    if !json {
        say(&summarize(&figures))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The ratios the performance targets are stated in.
fn summarize(figures: &[a13n_stream::bench::Figure]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("\n");
    let find = |name: &str| figures.iter().find(|f| f.name == name);
    for figure in figures.iter().filter(|f| f.name.starts_with("fold/")) {
        let baseline = figure.name.replacen("fold/", "json_baseline/", 1);
        if let Some(base) = find(&baseline) {
            let _ = writeln!(
                out,
                "{:<32} {:.2}x the time per item of json_baseline",
                figure.name,
                figure.seconds / base.seconds
            );
        }
    }
    let retain: Vec<_> = figures.iter().filter(|f| f.name.starts_with("fold_retain/text/")).collect();
    if let (Some(small), Some(large)) = (retain.first(), retain.last()) {
        if small.items != large.items {
            let ratio = (large.seconds / large.items as f64) / (small.seconds / small.items as f64);
            let _ = writeln!(out, "fold_retain per-item cost, {} vs {} deltas: {ratio:.2}x", large.items, small.items);
        }
    }
    for peak in figures.iter().filter(|f| f.name.starts_with("peak_memory")) {
        let checkpoint = peak.name.replacen("peak_memory", "checkpoint", 1);
        if let (Some(bytes), Some(check)) = (peak.bytes, find(&checkpoint).and_then(|c| c.bytes)) {
            let budget = 3 * check + 50 * 1024 * 1024;
            let _ = writeln!(
                out,
                "{:<32} {:.1} MiB peak; budget 3 x checkpoint + 50 MiB = {:.1} MiB",
                peak.name,
                bytes as f64 / 1048576.0,
                budget as f64 / 1048576.0
            );
        }
    }
    out
}

fn serve(mut args: Args) -> Result<ExitCode, Failure> {
    let mut config = a13n_stream_server::Config::default();
    if let Some(listen) = args.value("--listen")? {
        config.listen =
            listen.parse().map_err(|_| Failure::Usage(format!("--listen takes HOST:PORT, not {listen:?}")))?;
    }
    if let Some(database) = args.value("--db")? {
        config.database = database;
    }
    // The environment variable is preferred: a --token value is visible to every user of the machine in `ps`.
    config.token = args.value("--token")?.or_else(|| std::env::var("A13N_STREAM_TOKEN").ok()).filter(|t| !t.is_empty());
    config.retain_content = args.flag("--retain-content");
    config.allow_origins = args.values("--allow-origin")?;
    config.allow_hosts = args.values("--allow-host")?;
    let sizes: [(&str, &mut usize); 7] = [
        ("--max-batch-lines", &mut config.max_batch_lines),
        ("--max-body-bytes", &mut config.max_body_bytes),
        ("--max-line-bytes", &mut config.max_line_bytes),
        ("--max-ingest-bytes", &mut config.max_ingest_bytes),
        ("--max-connections", &mut config.max_connections),
        ("--max-resident-runs", &mut config.runs.max_resident),
        ("--db-pool", &mut config.db_pool),
    ];
    for (flag, field) in sizes {
        if let Some(value) = args.number(flag)? {
            *field = value;
        }
    }
    let durations: [(&str, &mut std::time::Duration); 7] = [
        ("--header-timeout", &mut config.header_timeout),
        ("--body-timeout", &mut config.body_timeout),
        ("--idle-timeout", &mut config.idle_timeout),
        ("--shutdown-timeout", &mut config.shutdown_timeout),
        ("--run-idle", &mut config.runs.idle),
        ("--db-timeout", &mut config.db_timeout),
        ("--poll-interval", &mut config.poll_interval),
    ];
    for (flag, field) in durations {
        if let Some(value) = args.duration(flag)? {
            *field = value;
        }
    }
    config.validate().map_err(|error| Failure::Usage(error.to_string()))?;
    args.finish()?;
    let _ = tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .with_target(false)
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Io(format!("starting the runtime: {e}")))?;
    runtime
        .block_on(a13n_stream_server::serve(config, |address| {
            let _ = say(&format!("listening on http://{address}\n"));
        }))
        .map_err(|e| Failure::Io(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

fn bench_serve(mut args: Args) -> Result<ExitCode, Failure> {
    use a13n_stream::loadbench::{self, LoadOptions};
    let defaults = LoadOptions::default();
    let mut options = LoadOptions {
        runs: args.number("--runs")?.unwrap_or(defaults.runs).max(1),
        subscribers: args.number("--subscribers")?.unwrap_or(defaults.subscribers),
        lines: args.number("--lines")?.map_or(defaults.lines, |n| n as u64).max(4),
        batch: args.number("--batch")?.unwrap_or(defaults.batch).max(1),
        seconds: args.number("--seconds")?.map_or(defaults.seconds, |s| s as f64),
        database: args.value("--db")?,
        processes: 1,
    };
    let counts: Vec<usize> = match args.value("--processes")? {
        None => vec![1],
        Some(list) => list
            .split(',')
            .map(|n| n.trim().parse().ok().filter(|n| *n >= 1))
            .collect::<Option<_>>()
            .ok_or_else(|| Failure::Usage(format!("--processes takes counts such as 1,2,3, not {list:?}")))?,
    };
    let json = args.flag("--json");
    args.finish()?;
    let exe = std::env::current_exe().map_err(io_error)?;
    let mut exact = true;
    for processes in counts {
        options.processes = processes;
        let report = loadbench::run(&exe, &options).map_err(Failure::Io)?;
        exact &= report.exact;
        if json {
            say(&format!("{}\n", report.to_json(&options)))?;
            continue;
        }
        say(&format!(
            "{} process(es), {} runs x {} subscribers, batches of {}: {} lines in {:.2} s = {:.0} lines/s; {} deliveries\n\
             delivery latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}; every event exactly once in order: {}\n",
            processes,
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
        ))?;
    }
    Ok(if exact { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
