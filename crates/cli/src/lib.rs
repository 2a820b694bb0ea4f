//! seedledger's command line as a library: [`main`] runs `cargo xtask` over the properties
//! registered in the binary, [`main_with`] over given suites. It parses arguments (clap
//! derive), calls the crates, and maps outcomes to the exit codes of [`ExitStatus`]. A
//! workspace's `xtask/src/main.rs` is one call to it.
//!
//! The commands are grouped by audience: `prop` (run, list, replay, reproduce, scaffold; the
//! supervisor and trial isolation under it), `gate` (close, decide, cite, counts, merge, the
//! freeze store, keys) and `ci` (the workflow's steps). No command module imports another;
//! what several share lives in [`common`]. [`main_extended`] adds commands of the caller's
//! (this repository's `xtask` adds its benchmarks through [`Extension`]).

/// `println!` that ignores a closed stdout (`cargo xtask ... | head`) instead of panicking
/// (exported for the commands an [`Extension`] adds).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a closed stderr instead of panicking (exported as [`outln!`]).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // Formatted first and written at once: `prop run`'s supervisor and its run process
        // share stderr, and an unbuffered `writeln!` makes one write per piece of the
        // format, so their lines could interleave mid-line.
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

mod ci;
pub mod common;
mod gate;
mod prop;

pub use common::{discover_root, receipt_files};
pub use prop::Isolated;

use clap::{FromArgMatches, Parser, Subcommand};
use seedledger_format::ExitStatus;
use std::process::ExitCode;

/// seedledger: seeded property runs that leave evidence, and the gate that reads it.
///
/// Exit codes (every command): 0 success (all properties passed, every receipt
/// freeze_eligible, freeze admitted); 1 "no" (a property failed, a receipt is not eligible,
/// a freeze is refused); 2 error (unreadable input, bad arguments, I/O failure).
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    version,
    about,
    long_about
)]
struct Cli<E: Extension> {
    #[command(subcommand)]
    command: Command<E>,
}

#[derive(Debug, Subcommand)]
enum Command<E: Extension> {
    /// Run, list and replay properties (the main job: `cargo xtask prop run`).
    #[command(subcommand)]
    Prop(prop::PropCommand),
    /// Close receipts, count them, decide and cite freezes, list the freeze store, print
    /// pins and digests.
    #[command(subcommand)]
    Gate(gate::GateCommand),
    /// The CI flow: `ci gate` (the workflow's gate job), `ci simulate` (the whole workflow
    /// on this machine, two directories standing in for two runners).
    #[command(subcommand)]
    Ci(ci::CiCommand),
    /// Keys for authenticated roles: `keys generate --role remote` declares a key in
    /// props/trusted-runners.jsonl and prints the secret for the remote job's CI secret.
    #[command(subcommand)]
    Keys(gate::keys::KeysCommand),
    #[command(flatten)]
    Extended(E),
}

/// Commands a binary adds to the command line beside `prop`, `gate`, `ci` and `keys` (a clap
/// subcommand enum): this repository's `xtask` adds its benchmarks and campaigns this way.
pub trait Extension: Subcommand + FromArgMatches + std::fmt::Debug {
    /// Runs the command over the suite the command line was given.
    fn run(self, suite: &[seedledger_runner::Property]) -> ExitStatus;
}

/// No added commands: what [`main`] and [`main_with`] run.
#[derive(Debug, Subcommand)]
pub enum NoExtension {}

impl Extension for NoExtension {
    fn run(self, _: &[seedledger_runner::Property]) -> ExitStatus {
        match self {}
    }
}

/// The command line over every property registered in this binary
/// ([`seedledger_runner::register!`]): what a workspace's `xtask/src/main.rs` calls. An id
/// registered twice is refused before anything runs (exit 2, naming both places).
pub fn main() -> ExitCode {
    main_extended::<NoExtension>()
}

/// [`main`] with the commands of `E` added.
pub fn main_extended<E: Extension>() -> ExitCode {
    match seedledger_runner::registered() {
        Ok(suite) => main_with_extended::<E>(&[&suite]),
        Err(e) => {
            errln!("error: {e}");
            ExitStatus::Error.into()
        }
    }
}

/// The command line over `suites` (concatenated, in run order): parses the process's
/// arguments, runs the command, returns its exit status.
pub fn main_with(suites: &[&[seedledger_runner::Property]]) -> ExitCode {
    main_with_extended::<NoExtension>(suites)
}

/// [`main_with`] with the commands of `E` added.
pub fn main_with_extended<E: Extension>(suites: &[&[seedledger_runner::Property]]) -> ExitCode {
    // Relative paths on the command line name files in this directory, whatever a trial does
    // to the process's directory later (see the runner's `anchor.rs`).
    let _ = seedledger_runner::engine::start_dir();
    if let Some(args) = prop_run_fast(std::env::args_os()) {
        return prop::run(prop::PropCommand::Run(args), &suites.concat()).into();
    }
    let cli = match Cli::<E>::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitStatus::Error.into()
            } else {
                ExitStatus::Success.into()
            };
        }
    };
    let status = match cli.command {
        Command::Prop(cmd) => prop::run(cmd, &suites.concat()),
        Command::Gate(cmd) => gate::run(cmd),
        Command::Ci(cmd) => ci::run(cmd),
        Command::Keys(cmd) => gate::keys::run(cmd),
        Command::Extended(cmd) => cmd.run(&suites.concat()),
    };
    status.into()
}

/// `prop run ARGS`, parsed by its own arguments' parser: building the whole command line's
/// (every command's arguments) costs a short run about a fifth of a millisecond. `None`
/// for any other command line, and for one this parser refuses or answers itself (`--help`,
/// an error): the whole command line's parser then parses it, and prints its help or error
/// as always, so this changes nothing a user sees.
fn prop_run_fast(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<prop::RunArgs> {
    let _program = args.next()?;
    if args.next()? != "prop" || args.next()? != "run" {
        return None;
    }
    let command = <prop::RunArgs as clap::Args>::augment_args(
        clap::Command::new("run")
            .bin_name("cargo xtask prop run")
            .no_binary_name(true),
    );
    let matches = command.try_get_matches_from(args).ok()?;
    prop::RunArgs::from_arg_matches(&matches).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full parser's reading of `line` as `prop run` arguments, `None` when it refuses
    /// it or reads another command.
    fn full(line: &[&str]) -> Option<prop::RunArgs> {
        match Cli::<NoExtension>::try_parse_from(line).ok()?.command {
            Command::Prop(prop::PropCommand::Run(args)) => Some(args),
            _ => None,
        }
    }

    fn fast(line: &[&str]) -> Option<prop::RunArgs> {
        prop_run_fast(line.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn prop_run_is_parsed_alone_exactly_as_the_whole_command_line_parses_it() {
        let same = [
            &["x", "prop", "run"][..],
            &["x", "prop", "run", "--property", "a", "--cases", "100"],
            &[
                "x",
                "prop",
                "run",
                "--property=a",
                "--property",
                "b",
                "--seeds",
                "1..5",
            ],
            &[
                "x",
                "prop",
                "run",
                "--patch-id",
                "p1",
                "--format",
                "json",
                "--no-shrink",
            ],
            &[
                "x",
                "prop",
                "run",
                "--jobs",
                "2",
                "--seed-jobs",
                "3",
                "--isolate",
            ],
            &[
                "x",
                "prop",
                "run",
                "--partition",
                "auto",
                "--out",
                "o",
                "--junit",
                "j.xml",
            ],
            &[
                "x",
                "prop",
                "run",
                "--trial-timeout",
                "1.5",
                "--base",
                "origin/main",
            ],
            // The hidden arguments an exec'd run process is given.
            &[
                "x",
                "prop",
                "run",
                "--supervised-worker",
                "12",
                "--events-fd",
                "5",
                "--code-fd",
                "6",
                "--pending-rows-fd",
                "7",
                "--progress-events",
            ],
        ];
        for line in same {
            let (fast, full) = (fast(line), full(line));
            assert!(fast.is_some(), "{line:?}");
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line:?}");
        }
        // What the whole parser refuses or answers itself (help, errors) or reads as another
        // command is left to it.
        let left = [
            &["x", "prop", "run", "--help"][..],
            &["x", "prop", "run", "-h"],
            &["x", "prop", "run", "--cases"],
            &["x", "prop", "run", "--cases", "many"],
            &["x", "prop", "run", "--no-such-flag"],
            &["x", "prop", "run", "extra"],
            &["x", "prop", "list"],
            &["x", "gate", "run"],
            &["x", "prop"],
            &["x"],
            &["x", "--version"],
        ];
        for line in left {
            assert!(fast(line).is_none(), "{line:?}");
        }
    }
}
