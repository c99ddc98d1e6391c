//! `a13n-stream observe`: Harness source lines in, AG-UI events out.

use std::io::Write;
use std::process::ExitCode;

use a13n_stream_conformance::processors;
use a13n_stream_protocol::{recorded, HarnessAguiStreamObserver, InputError, ObserveError, SourceItem};

use crate::cli::ObserveArgs;
use crate::failure::{io_error, Failure, Outcome};
use crate::input::Next;
use crate::write_behind::WriteBehind;
use crate::{input, output, read_ahead};

/// Run `observe`.
pub fn run(args: ObserveArgs) -> Result<ExitCode, Failure> {
    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    if let Some(name) = args.processor {
        observer = observer.with_processor(processors::named(name.name()).map_err(Failure::Usage)?);
    }
    let mut out = WriteBehind::new(Box::new(output::Named::stdout()));
    let mut outcome = Outcome::default();
    let mut buffer = Vec::with_capacity(4096);
    let input = input::open(args.input.as_deref())?;
    if !args.per_item {
        // Event lines straight from the source line, the lines read and scanned for the fast lanes on a second
        // thread while this one observes them.
        let reader = observer.read_ahead();
        let reader = read_ahead::for_each_scanned(input, reader, |next| {
            let (number, line) = match next {
                Next::Line(number, line) => (number, line),
                Next::Waiting => return out.hand_on().map(|()| true).map_err(io_error),
            };
            // The event lines are made in the output's own memory.
            let result = out
                .write_in_place(|out| match line {
                    Ok((_, Some(scanned))) => observer.observe_scanned(scanned, out),
                    // Left by the reader while this thread waited for it.
                    Ok((line, None)) => observer.observe_line(line, out),
                    Err(error) => Err(ObserveError::Input(InputError::new("", error.to_string()))),
                })
                .map_err(io_error)?;
            if let Err(error) = result {
                outcome.report(number, error.is_observation(), &error.to_string());
            }
            Ok(true)
        })?;
        if let Some(reader) = reader {
            observer.end_read_ahead(reader);
        }
        out.flush().map_err(io_error)?;
        return Ok(outcome.exit());
    }
    input::for_each_line(input, |next| {
        let (number, line) = match next {
            Next::Line(number, line) => (number, line),
            Next::Waiting => return out.hand_on().map(|()| true).map_err(io_error),
        };
        buffer.clear();
        let result = match line {
            Ok(line) => SourceItem::from_json(line).map_err(ObserveError::Input),
            Err(error) => Err(ObserveError::Input(InputError::new("", error.to_string()))),
        }
        .and_then(|item| observer.observe(&item));
        match result {
            Ok(events) => recorded::write_events_line(&events, &mut buffer),
            Err(error) => {
                outcome.report(number, error.is_observation(), &error.to_string());
                let (kind, message) = recorded::observe_error_parts(&error);
                recorded::write_error_line(kind, &message, &mut buffer);
            }
        }
        buffer.push(b'\n');
        out.write_all(&buffer).map_err(io_error)?;
        Ok(true)
    })?;
    out.flush().map_err(io_error)?;
    Ok(outcome.exit())
}
