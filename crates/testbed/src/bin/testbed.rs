//! `testbed`: seedledger's command line over the example suite (`seedledger-orders`), for the
//! framework's own end-to-end tests (`tests/cli/`). The tests run this binary, never the
//! workspace's `cargo xtask`, so a suite registered there — or a real bug one finds — cannot
//! fail `cargo test` of the framework.

use std::process::ExitCode;

fn main() -> ExitCode {
    seedledger_cli::main_with(&[&seedledger_orders::properties()])
}
