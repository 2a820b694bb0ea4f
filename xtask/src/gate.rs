//! `cargo xtask gate ...` (placeholder until the gate commands land).

use clap::Subcommand;
use seedledger_format::ExitStatus;

#[derive(Debug, Subcommand)]
pub enum GateCommand {
    /// Print the fixture pin of FILE.
    Pin { file: std::path::PathBuf },
}

pub fn run(cmd: GateCommand) -> ExitStatus {
    match cmd {
        GateCommand::Pin { file } => match std::fs::read(&file) {
            Ok(bytes) => {
                println!("{}", seedledger_format::fixture_pin(&bytes));
                ExitStatus::Success
            }
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", file.display());
                ExitStatus::Error
            }
        },
    }
}
