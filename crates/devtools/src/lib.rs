//! seedledger's own dev tooling, kept out of the command line users ship: the benchmarks
//! (`cargo xtask bench shrink|runner|scale|isolate|store|etna|observe|find|stateful|e2e`) and the
//! kill campaign
//! (`cargo xtask campaign kill`). This repository's `xtask` adds [`DevCommand`] to the
//! command line through [`seedledger_cli::Extension`]; a workspace that adopts seedledger
//! never links this crate.

// `outln!` / `errln!`: the command line's printing that ignores a closed pipe.
#[macro_use]
extern crate seedledger_cli;

mod bench;
pub mod bench_e2e;
mod bench_etna;
mod bench_find;
mod bench_observe;
mod bench_scale;
mod bench_shrink;
mod bench_stateful;
mod bench_store;
mod campaign;
pub mod campaign_flake;

use clap::Subcommand;
use seedledger_format::ExitStatus;
use seedledger_runner::Property;

/// The commands this repository's `cargo xtask` has beside the command line's own.
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Benchmarks that print figures: `bench shrink`, `bench runner`, `bench scale`,
    /// `bench isolate`, `bench store`, `bench etna`, `bench observe`, `bench find`,
    /// `bench stateful`.
    /// `bench e2e`.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Campaigns that attack the evidence: `campaign kill` kills running suites at random
    /// instants and checks every receipt left behind.
    #[command(subcommand)]
    Campaign(CampaignCommand),
}

/// `cargo xtask campaign ...`.
#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Kill `prop run` at random instants (SIGKILL to its process group), then check every
    /// receipt: it parses, its attempted seeds are a prefix of the plan, it agrees with its
    /// run's witness rows, and it closes freeze_eligible only if its run really finished.
    /// Exit 0 when every receipt passed, 1 otherwise.
    Kill(campaign::KillArgs),
    /// The flake corpus (planted flakes of rate p on their failing seeds, deterministic bugs,
    /// an environment-dependent failure), each failing seed replayed K times and classed as
    /// `gate flake` classes it, beside what "re-run the test" (retry-based tools) calls the
    /// same failures. Prints the coverage of the exact intervals and the classes; exit 1 when
    /// a deterministic bug is classed flaky, a flake of p >= 0.2 deterministic, or the
    /// environment failure anything but environment-dependent.
    Flake(campaign_flake::FlakeArgs),
}

impl seedledger_cli::Extension for DevCommand {
    fn run(self, suite: &[Property]) -> ExitStatus {
        match self {
            DevCommand::Bench(cmd) => bench::run(cmd, suite),
            DevCommand::Campaign(CampaignCommand::Kill(args)) => campaign::kill(&args),
            DevCommand::Campaign(CampaignCommand::Flake(args)) => campaign_flake::campaign(&args),
        }
    }
}
