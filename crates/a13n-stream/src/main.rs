//! `a13n-stream`: observe Harness streams as AG-UI, fold display checkpoints, run the conformance corpus.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use a13n_stream::cli::{Args, Failure};
use a13n_stream::{conformance, processors};
use a13n_stream_protocol::{
    DisplayFold, DisplayOptions, DisplaySnapshot, FoldError, HarnessAguiStreamObserver, InputError,
    ObserveError, SourceItem,
};
use serde_json::Value;

const HELP: &str = "\
a13n-stream: exact Agent Stream Protocol conversion, display folding and recovery

USAGE:
    a13n-stream observe [FILE|-] [--per-item] [--processor NAME]
    a13n-stream fold [FILE|-] [--agui --run-id ID] [--observed OUT] [--export OUT] [--stop K]
                     [--restore CHECKPOINT --start K] [--full-content] [--retain-content] [--processor NAME]
    a13n-stream conformance [--only observer|display] DIR...
    a13n-stream help

COMMANDS:
    observe       Convert Harness source lines (JSON, one item a line) to AG-UI events, printed as JSON lines.
                  --per-item prints one line per source line: {\"events\": [...]} or
                  {\"error\": {\"kind\": \"observation\"|\"input\", \"message\": ...}}.
    fold          Fold source lines (or AG-UI event lines with --agui) into display items and write the
                  checkpoint JSON (--export, default stdout). --observed writes one line per input line.
                  --stop K folds only the first K lines; --restore continues a checkpoint from line K.
    conformance   Run every recorded case under the given directories; ends with `N passed, M failed`.

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
            print!("{HELP}");
            Ok(ExitCode::SUCCESS)
        }
        Some("observe") => observe(args),
        Some("fold") => fold(args),
        Some("conformance") => run_conformance(args),
        Some(other) => Err(Failure::Usage(format!(
            "unknown command {other:?}; see `a13n-stream help`"
        ))),
    }
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

/// Read lines, numbering them from 1, skipping blank ones; reports progress on a terminal.
struct Lines {
    input: Box<dyn BufRead>,
    number: u64,
    progress: bool,
    buffer: String,
}

impl Lines {
    fn new(input: Box<dyn BufRead>) -> Lines {
        Lines {
            input,
            number: 0,
            progress: io::stderr().is_terminal(),
            buffer: String::new(),
        }
    }

    fn next_line(&mut self) -> Result<Option<(u64, &str)>, Failure> {
        loop {
            self.buffer.clear();
            let read = self
                .input
                .read_line(&mut self.buffer)
                .map_err(|e| Failure::Io(format!("reading input: {e}")))?;
            if read == 0 {
                if self.progress && self.number >= 10_000 {
                    let _ = writeln!(io::stderr(), "\r{} lines", self.number);
                }
                return Ok(None);
            }
            self.number += 1;
            if self.progress && self.number % 10_000 == 0 {
                let _ = write!(io::stderr(), "\r{} lines", self.number);
            }
            let line = self.buffer.trim_end_matches(['\n', '\r']);
            if !line.trim().is_empty() {
                return Ok(Some((
                    self.number,
                    self.buffer.trim_end_matches(['\n', '\r']),
                )));
            }
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

fn error_line(observation: bool, message: &str) -> Value {
    serde_json::json!({"error": {"kind": if observation { "observation" } else { "input" }, "message": message}})
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
        let result = SourceItem::from_json(line)
            .map_err(ObserveError::Input)
            .and_then(|item| observer.observe(&item));
        buffer.clear();
        match result {
            Ok(events) if per_item => {
                buffer.extend_from_slice(b"{\"events\":[");
                for (index, event) in events.iter().enumerate() {
                    if index > 0 {
                        buffer.push(b',');
                    }
                    event.write_json(&mut buffer);
                }
                buffer.extend_from_slice(b"]}\n");
            }
            Ok(events) => {
                for event in &events {
                    event.write_json(&mut buffer);
                    buffer.push(b'\n');
                }
            }
            Err(error) => {
                let message = error.to_string();
                outcome.report(number, error.is_observation(), &message);
                if per_item {
                    serde_json::to_writer(
                        &mut buffer,
                        &error_line(error.is_observation(), &message),
                    )
                    .map_err(|e| Failure::Io(e.to_string()))?;
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
        return Err(Failure::Usage(
            "--agui needs --run-id (or --restore)".into(),
        ));
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
            let snapshot = DisplaySnapshot::from_json(&text)
                .map_err(|e| Failure::Input(format!("{checkpoint}: {e}")))?;
            if full_content != snapshot.continuation.full_content && full_content {
                return Err(Failure::Usage(
                    "--full-content does not match the checkpoint's content policy".into(),
                ));
            }
            let restored = DisplayFold::restore(snapshot, retain_content, processor.take());
            Some(restored.map_err(|e| Failure::Input(format!("{checkpoint}: {e}")))?)
        }
        None if agui => Some(DisplayFold::with_options(
            run_id.clone().unwrap_or_default(),
            DisplayOptions {
                full_content,
                retain_content,
                processor: processor.take(),
                ..DisplayOptions::default()
            },
        )),
        // A source fold belongs to the run of its first item.
        None => None,
    };
    let mut observed = observed_path.as_deref().map(create_output).transpose()?;
    let mut outcome = Outcome::default();
    let mut buffer = Vec::with_capacity(4096);
    let mut index = 0u64;
    while let Some((number, line)) = lines.next_line()? {
        index += 1;
        if index <= start as u64 {
            continue;
        }
        if stop.is_some_and(|stop| index > stop as u64) {
            break;
        }
        let result: Result<_, FoldError> = if agui {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(event)) => fold
                    .as_mut()
                    .map_or(Ok(Vec::new()), |f| f.fold(vec![event], None)),
                Ok(other) => Err(InputError::new(
                    "",
                    format!("expected an AG-UI event object, found {other}"),
                )
                .into()),
                Err(error) => Err(InputError::new("", format!("invalid JSON: {error}")).into()),
            }
        } else {
            match SourceItem::from_json(line) {
                Ok(item) => {
                    let fold = fold.get_or_insert_with(|| {
                        DisplayFold::with_options(
                            item.run_id.clone(),
                            DisplayOptions {
                                full_content,
                                retain_content,
                                processor: processor.take(),
                                ..DisplayOptions::default()
                            },
                        )
                    });
                    fold.fold_source(&item)
                }
                Err(error) => Err(error.into()),
            }
        };
        buffer.clear();
        match result {
            Ok(items) => {
                if observed.is_some() {
                    buffer.extend_from_slice(b"{\"observed\":[");
                    for (position, item) in items.iter().enumerate() {
                        if position > 0 {
                            buffer.push(b',');
                        }
                        buffer.extend_from_slice(item.to_json().as_bytes());
                    }
                    buffer.extend_from_slice(b"]}\n");
                }
            }
            Err(error) => {
                let message = error.to_string();
                outcome.report(number, error.is_observation(), &message);
                if observed.is_some() {
                    serde_json::to_writer(
                        &mut buffer,
                        &error_line(error.is_observation(), &message),
                    )
                    .map_err(|e| Failure::Io(e.to_string()))?;
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
            DisplayOptions {
                full_content,
                retain_content,
                ..DisplayOptions::default()
            },
        )
    });
    let mut export = create_output(&export_path)?;
    export
        .write_all(fold.export().to_json().as_bytes())
        .map_err(io_error)?;
    export.write_all(b"\n").map_err(io_error)?;
    export.flush().map_err(io_error)?;
    Ok(outcome.exit())
}

fn run_conformance(mut args: Args) -> Result<ExitCode, Failure> {
    let only = match args.value("--only")?.as_deref() {
        None => conformance::Only::All,
        Some("observer") => conformance::Only::Observer,
        Some("display") => conformance::Only::Display,
        Some(other) => {
            return Err(Failure::Usage(format!(
                "--only takes observer or display, not {other:?}"
            )))
        }
    };
    let mut paths = Vec::new();
    while let Some(path) = args.positional() {
        paths.push(PathBuf::from(path));
    }
    args.finish()?;
    if paths.is_empty() {
        return Err(Failure::Usage(
            "conformance needs at least one case directory".into(),
        ));
    }
    let report = conformance::run(&paths, only).map_err(Failure::Io)?;
    let mut out = io::stdout().lock();
    for failure in &report.failures {
        writeln!(out, "FAIL {failure}").map_err(io_error)?;
    }
    writeln!(out, "{} cases", report.cases).map_err(io_error)?;
    writeln!(
        out,
        "{} passed, {} failed",
        report.passed,
        report.failures.len()
    )
    .map_err(io_error)?;
    if report.cases == 0 {
        let _ = writeln!(
            io::stderr(),
            "a13n-stream: no case directories (with case.json) under the given paths"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
