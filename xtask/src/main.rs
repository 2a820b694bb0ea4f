//! `cargo xtask`: seedledger's command line over the default suite (the CLI itself is the
//! library, `src/lib.rs`).

use std::process::ExitCode;

/// The property suites `cargo xtask prop` knows, in run order. To add your own, write a
/// crate whose `properties()` lists them (each with its `props/<id>.md`), depend on it from
/// `xtask/Cargo.toml`, and add it here.
fn main() -> ExitCode {
    seedledger_cli::main_with(&[&seedledger_orders::properties()])
}
