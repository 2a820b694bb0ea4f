//! `cargo xtask bench ...`: benchmarks that print figures (never timed assertions).

use clap::Subcommand;
use seedledger_format::ExitStatus;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Shrink quality on the public shrinking-challenge problems.
    Shrink(crate::bench_shrink::ShrinkBenchArgs),
}

pub fn run(cmd: BenchCommand) -> ExitStatus {
    match cmd {
        BenchCommand::Shrink(args) => crate::bench_shrink::run(args),
    }
}
