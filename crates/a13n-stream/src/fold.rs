//! `a13n-stream fold`: source lines (or AG-UI event lines) in, a display checkpoint out; optionally one observed
//! line per input line, and checkpoint/restore/continue.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use a13n_stream_conformance::processors;
use a13n_stream_protocol::{
    recorded, AguiEventProcessor, ContentPolicy, DisplayFold, DisplayOptions, FoldError, InputError, Observed,
    ReadAhead, ScannedLine, SourceItem,
};
use serde_json::Value;

use crate::cli::FoldArgs;
use crate::failure::{io_error, Failure, Outcome};
use crate::input::Next;
use crate::replace::Replacing;
use crate::write_behind::WriteBehind;
use crate::{input, output, read_ahead};

fn processor(args: &FoldArgs) -> Result<Option<AguiEventProcessor>, Failure> {
    args.processor.map(|name| processors::named(name.name())).transpose().map_err(Failure::Usage)
}

fn options(args: &FoldArgs, processor: Option<AguiEventProcessor>) -> DisplayOptions {
    DisplayOptions {
        content: ContentPolicy::new(args.full_content, args.retain_content),
        processor,
        ..DisplayOptions::default()
    }
}

/// The fold to start from: a restored checkpoint, a fresh AG-UI fold, or none yet (a source fold belongs to the
/// run of its first line).
fn starting_fold(args: &FoldArgs, processor: &mut Option<AguiEventProcessor>) -> Result<Option<DisplayFold>, Failure> {
    if let Some(checkpoint) = &args.restore {
        let mut text = String::new();
        std::fs::File::open(checkpoint)
            .and_then(|mut file| file.read_to_string(&mut text))
            .map_err(|e| Failure::Io(format!("{}: {e}", checkpoint.display())))?;
        let restored = DisplayFold::restore_json(&text, args.retain_content, processor.take()).map_err(|error| {
            // `Failure::Input` says "bad input" itself.
            let reason = match error {
                FoldError::Input(error) => error.to_string(),
                other => other.to_string(),
            };
            Failure::Input(format!("{}: {reason}", checkpoint.display()))
        })?;
        if args.full_content && !restored.full_content() {
            return Err(Failure::Usage("--full-content does not match the checkpoint's content policy".into()));
        }
        return Ok(Some(restored));
    }
    if args.agui {
        let run_id = args.run_id.clone().unwrap_or_default();
        return Ok(Some(DisplayFold::with_options(run_id, options(args, processor.take()))));
    }
    Ok(None)
}

/// Fold one AG-UI event line, writing its observed entries one a line when there is somewhere to write them.
fn fold_event(fold: &mut DisplayFold, line: &str, entries: Option<&mut Vec<u8>>) -> Result<(), FoldError> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(event)) => fold.fold(vec![event], None).map(|observed| {
            if let Some(entries) = entries {
                Observed::write_lines(&observed, entries);
            }
        }),
        Ok(other) => Err(InputError::new("", format!("expected an AG-UI event object, found {other}")).into()),
        Err(error) => Err(InputError::new("", format!("invalid JSON: {error}")).into()),
    }
}

/// Refuse what clap cannot: a cut that folds nothing, two outputs in one file, an output that is the input.
fn check_args(args: &FoldArgs) -> Result<(), Failure> {
    if args.stop == Some(0) && !args.agui && args.restore.is_none() {
        return Err(Failure::Usage(
            "--stop 0 folds no source line, and a source fold's run is its first line's: its checkpoint could not \
             continue"
                .into(),
        ));
    }
    if let (Some(start), Some(stop)) = (args.start, args.stop) {
        if stop <= start {
            return Err(Failure::Usage(format!("--stop {stop} folds nothing after --start {start}")));
        }
    }
    let export = Output::of(&args.export);
    let observed = args.observed.as_deref().map(Output::of);
    if let Some(observed) = &observed {
        if *observed == export {
            let why = match observed {
                Output::Stdout => "both write to standard output, their lines interleaved",
                Output::File(_) => "the checkpoint would overwrite the observed lines",
            };
            let path = args.export.display();
            return Err(Failure::Usage(format!("--observed and --export both name {path}: {why}")));
        }
    }
    if let Some(input) = args.input.as_deref().filter(|input| *input != Path::new("-")) {
        let input = Output::of(input);
        if export == input || observed == Some(input) {
            return Err(Failure::Usage("an output names the input: it would be emptied before it is read".into()));
        }
    }
    Ok(())
}

/// Where an output goes: standard output (`-`), or a file known by its device and inode when it exists (links and
/// `..` resolved), else by its resolved directory and name.
#[derive(Debug, PartialEq, Eq)]
enum Output {
    Stdout,
    File(FileId),
}

#[derive(Debug, PartialEq, Eq)]
enum FileId {
    Inode(u64, u64),
    Path(std::path::PathBuf),
}

impl Output {
    fn of(path: &Path) -> Output {
        use std::os::unix::fs::MetadataExt;
        if path == Path::new("-") {
            return Output::Stdout;
        }
        if let Ok(metadata) = std::fs::metadata(path) {
            return Output::File(FileId::Inode(metadata.dev(), metadata.ino()));
        }
        // Not made yet: a dangling link names its target; otherwise the directory is resolved.
        let path = std::fs::read_link(path).map_or_else(
            |_| path.to_owned(),
            |target| match path.parent() {
                Some(parent) if target.is_relative() => parent.join(target),
                _ => target,
            },
        );
        let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let resolved = parent.canonicalize().ok().zip(path.file_name()).map(|(parent, name)| parent.join(name));
        Output::File(FileId::Path(resolved.unwrap_or(path)))
    }
}

/// Run `fold`.
pub fn run(args: FoldArgs) -> Result<ExitCode, Failure> {
    check_args(&args)?;
    let mut processor = processor(&args)?;
    let fold = starting_fold(&args, &mut processor)?;
    let observed = args.observed.as_deref().map(output::create).transpose()?;
    let mut folding = Folding::new(&args, processor, fold, observed);
    // Source lines are scanned on a second thread while this one folds, from the first line on: a fold restored
    // to continue (`--start`) takes its lines as they come, and AG-UI lines have no lane. A restored fold hands its
    // reader out; a fold made from the first line starts with a new one.
    let reader = (!args.agui && args.start.unwrap_or(0) == 0)
        .then(|| folding.fold.as_mut().map_or_else(ReadAhead::for_new_fold, DisplayFold::read_ahead));
    let input = input::open(args.input.as_deref())?;
    if let Some(reader) = reader {
        let reader = read_ahead::for_each_scanned(input, reader, |next| folding.take(next))?;
        if let (Some(fold), Some(reader)) = (folding.fold.as_mut(), reader) {
            fold.end_read_ahead(reader);
        }
    } else {
        input::for_each_line(input, |next| folding.take(next.map(|line| (line, None))))?;
    }
    folding.finish()
}

/// A fold in progress: the fold (none yet before a source fold's first line), where its observed lines go, and
/// what it has seen.
struct Folding<'a> {
    args: &'a FoldArgs,
    processor: Option<AguiEventProcessor>,
    fold: Option<DisplayFold>,
    observed: Option<WriteBehind>,
    outcome: Outcome,
    /// Lines taken so far (for `--start` and `--stop`).
    index: u64,
}

impl<'a> Folding<'a> {
    fn new(
        args: &'a FoldArgs,
        processor: Option<AguiEventProcessor>,
        fold: Option<DisplayFold>,
        observed: Option<WriteBehind>,
    ) -> Folding<'a> {
        Folding { args, processor, fold, observed, outcome: Outcome::default(), index: 0 }
    }

    /// Take the next line (its text, and its scan when it was read ahead), or hand the observed lines on when the
    /// input waits. `false` once `--stop` is passed.
    fn take(&mut self, next: Next<(&str, Option<&ScannedLine<'_>>)>) -> Result<bool, Failure> {
        let (number, line) = match next {
            Next::Line(number, line) => (number, line),
            // What was made of the lines so far is written now, not when the output's buffer fills.
            Next::Waiting => {
                return self.observed.as_mut().map_or(Ok(()), WriteBehind::hand_on).map_err(io_error).map(|()| true)
            }
        };
        self.index += 1;
        if self.index <= self.args.start.unwrap_or(0) {
            return Ok(true);
        }
        if self.args.stop.is_some_and(|stop| self.index > stop) {
            return Ok(false);
        }
        let Folding { args, processor, fold, observed, .. } = self;
        let mut fold_into = |out: Option<&mut Vec<u8>>| match line {
            Err(error) => Err(InputError::new("", error.to_string()).into()),
            Ok((line, scanned)) => fold_line(args, processor, fold, line, scanned, out),
        };
        let result = match observed {
            // Without --observed nothing reads the observed lines: only the state is wanted.
            None => fold_into(None),
            // The observed line is made in the output's own memory.
            Some(out) => out
                .write_in_place(|out| {
                    let result = recorded::write_fold_line(out, |out| fold_into(Some(out)));
                    out.push(b'\n');
                    result
                })
                .map_err(io_error)?,
        };
        if let Err(error) = &result {
            self.outcome.report(number, error.is_observation(), &error.to_string());
        }
        Ok(true)
    }

    /// After the last line: the observed lines written whole, then the checkpoint; the exit status.
    fn finish(self) -> Result<ExitCode, Failure> {
        // The observed lines are whole before the checkpoint is opened: a failure writing them leaves a
        // checkpoint already at that path as it was, and is the failure reported.
        if let Some(mut out) = self.observed {
            out.flush().map_err(io_error)?;
        }
        if let (true, Some(fold)) = (self.args.lanes, self.fold.as_ref()) {
            report_lanes(fold.lane_counts());
        }
        let run_id = self.args.run_id.clone().unwrap_or_else(|| "run".into());
        let fold = self.fold.unwrap_or_else(|| DisplayFold::with_options(run_id, options(self.args, None)));
        // Replaced whole: a failure writing it leaves the checkpoint before (see `replace.rs`).
        let mut export = Replacing::new(&self.args.export)?;
        fold.write_export(&mut export).map_err(io_error)?;
        export.write_all(b"\n").map_err(io_error)?;
        export.commit()?;
        // The process ends next: its memory goes back whole, without a free for each of the fold's allocations
        // (about 0.3 ms of a 7,059-line run's 25).
        std::mem::forget(fold);
        Ok(self.outcome.exit())
    }
}

/// Fold one line, an AG-UI event or a source line (the first names a source fold's run), appending its observed
/// entries one a line to `out` when there is one.
fn fold_line(
    args: &FoldArgs,
    processor: &mut Option<AguiEventProcessor>,
    fold: &mut Option<DisplayFold>,
    line: &str,
    scanned: Option<&ScannedLine<'_>>,
    out: Option<&mut Vec<u8>>,
) -> Result<(), FoldError> {
    if args.agui {
        return fold.as_mut().map_or(Ok(()), |fold| fold_event(fold, line, out));
    }
    let fold = match fold {
        Some(fold) => fold,
        None => {
            let run_id = SourceItem::from_json(line)?.run_id;
            fold.insert(DisplayFold::with_options(run_id, options(args, processor.take())))
        }
    };
    match (scanned, out) {
        (None, None) => fold.replay_line(line).map(drop),
        (None, Some(out)) => fold.fold_line(line, out).map(drop),
        (Some(scanned), None) => fold.replay_scanned(scanned).map(drop),
        (Some(scanned), Some(out)) => fold.fold_scanned_line(scanned, out).map(drop),
    }
}

/// `--lanes`: on standard error, how many lines took each path through the fold.
fn report_lanes(counts: &a13n_stream_protocol::display::LaneCounts) {
    let total = counts.total().max(1) as f64;
    for (path, count) in counts.iter() {
        eprintln!("{:<28} {count:>10} {:>6.1}%", path.to_string(), count as f64 * 100.0 / total);
    }
}
