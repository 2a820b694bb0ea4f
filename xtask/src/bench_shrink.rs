//! `cargo xtask bench shrink` (placeholder until the shrinker lands).

use seedledger_format::ExitStatus;

#[derive(Debug, clap::Args)]
pub struct ShrinkBenchArgs {}

pub fn run(_args: ShrinkBenchArgs) -> ExitStatus {
    eprintln!("error: the shrink benchmark is not written yet");
    ExitStatus::Error
}
