//! seedledger's command line as a library: [`main_with`] runs `cargo xtask` over the given
//! property suites. Thin: parses arguments (clap derive), calls the crates, and maps outcomes
//! to the exit codes documented in [`ExitStatus`]. A workspace's `xtask/src/main.rs` is one
//! call to it; `crates/testbed` runs it over the framework's own test suites.

/// `println!` that ignores a closed stdout (`cargo xtask ... | head`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a closed stderr instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod bench;
mod bench_scale;
mod bench_shrink;
mod bench_store;
mod campaign;
mod ci;
mod cite_stream;
mod freezes;
mod gate;
mod gate_json;
mod gate_stream;
mod isolate;
mod merge;
mod output;
mod procs;
mod progress;
mod prop;
mod report;
mod scaffold;
mod store_diff;
mod supervise;
mod trust;

use clap::{Parser, Subcommand};
use seedledger_format::ExitStatus;
use seedledger_runner::engine;
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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run, list and replay properties (the main job: `cargo xtask prop run`).
    #[command(subcommand)]
    Prop(prop::PropCommand),
    /// Close receipts, count them, decide and cite freezes, list the freeze store, print
    /// pins and digests.
    #[command(subcommand)]
    Gate(gate::GateCommand),
    /// Benchmarks that print figures: `bench shrink`, `bench runner`, `bench scale`,
    /// `bench isolate`.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The CI flow: `ci gate` (the workflow's gate job), `ci simulate` (the whole workflow
    /// on this machine, two directories standing in for two runners).
    #[command(subcommand)]
    Ci(ci::CiCommand),
    /// Keys for authenticated runner roles: `keys generate --role remote` declares a key in
    /// props/trusted-runners.jsonl and prints the secret for the remote job's CI secret.
    #[command(subcommand)]
    Keys(trust::KeysCommand),
    /// Campaigns that attack the evidence: `campaign kill` kills running suites at random
    /// instants and checks every receipt left behind.
    #[command(subcommand)]
    Campaign(CampaignCommand),
}

#[derive(Debug, Subcommand)]
enum CampaignCommand {
    /// Kill `prop run` at random instants (SIGKILL to its process group), then check every
    /// receipt: it parses, its attempted seeds are a prefix of the plan, it agrees with its
    /// run's witness rows, and it closes freeze_eligible only if its run really finished.
    /// Exit 0 when every receipt passed, 1 otherwise.
    Kill(campaign::KillArgs),
}

/// The command line over every property registered in this binary
/// ([`seedledger_runner::register!`]): what a workspace's `xtask/src/main.rs` calls. An id
/// registered twice is refused before anything runs (exit 2, naming both places).
pub fn main() -> ExitCode {
    match seedledger_runner::registered() {
        Ok(suite) => main_with(&[&suite]),
        Err(e) => {
            errln!("error: {e}");
            ExitStatus::Error.into()
        }
    }
}

/// The command line over `suites` (concatenated, in run order): parses the process's
/// arguments, runs the command, returns its exit status.
pub fn main_with(suites: &[&[seedledger_runner::Property]]) -> ExitCode {
    // Relative paths on the command line name files in this directory, whatever a trial does
    // to the process's directory later (see the runner's `anchor.rs`).
    let _ = engine::start_dir();
    let cli = match Cli::try_parse() {
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
        Command::Bench(cmd) => bench::run(cmd, &suites.concat()),
        Command::Ci(cmd) => ci::run(cmd),
        Command::Keys(cmd) => trust::run(cmd),
        Command::Campaign(CampaignCommand::Kill(args)) => campaign::kill(&args),
    };
    status.into()
}
