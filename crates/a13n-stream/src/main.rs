//! `a13n-stream`: a thin binary over the workspace's libraries. Each command lives in its own module; the
//! command line is declared in `cli`.

mod bench;
mod cli;
mod conformance;
mod failure;
mod fold;
mod input;
mod observe;
mod output;
mod read_ahead;
mod replace;
mod serve;
mod write_behind;

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};
use crate::failure::Failure;

// The CLI allocates per event; mimalloc's thread-local size classes cut that cost for every command alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage(&error),
    };
    let result = match cli.command {
        Command::Observe(args) => observe::run(args),
        Command::Fold(args) => fold::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => bench::run(args),
        Command::BenchServe(args) => serve::bench(args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "a13n-stream", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(|failure: Failure| {
        match failure {
            Failure::Closed => {}
            Failure::Usage(_) => drop(writeln!(std::io::stderr(), "a13n-stream: {failure} {}", help_hint())),
            _ => drop(writeln!(std::io::stderr(), "a13n-stream: {failure}")),
        }
        ExitCode::from(failure.code())
    })
}

/// `--help` and `--version` print and succeed; anything else is one line on standard error and exit status 2.
fn usage(error: &clap::Error) -> ExitCode {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let commands: Vec<String> =
                Cli::command().get_subcommands().map(|command| command.get_name().to_owned()).collect();
            eprintln!("a13n-stream: a command is required: {} (see `a13n-stream --help`)", commands.join(", "));
            ExitCode::from(2)
        }
        _ => {
            // clap's first paragraph, on one line: "unexpected argument '--x' found", "the following required
            // arguments were not provided: --run-id <RUN_ID>".
            let rendered = error.render().to_string();
            let paragraph: Vec<&str> =
                rendered.lines().take_while(|line| !line.trim().is_empty()).map(str::trim).collect();
            let text = paragraph.join(" ");
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprintln!("a13n-stream: {text} {}", help_hint());
            ExitCode::from(2)
        }
    }
}

/// Where the reader of a usage error should look: the named command's own `--help`, or the tool's.
fn help_hint() -> String {
    let command = Cli::command();
    match std::env::args().skip(1).find(|arg| command.find_subcommand(arg).is_some()) {
        Some(name) => format!("(see `a13n-stream {name} --help`)"),
        None => "(see `a13n-stream --help`)".to_owned(),
    }
}
