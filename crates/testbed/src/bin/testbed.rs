//! `testbed`: seedledger's command line over the example suite (`seedledger-orders`), for the
//! framework's own end-to-end tests (`tests/cli/`). The tests run this binary, never the
//! workspace's `cargo xtask`, so a suite registered there — or a real bug one finds — cannot
//! fail `cargo test` of the framework. It has this repository's dev tooling too (`bench`,
//! `campaign`), whose tests are in `tests/cli/` as well.

use std::process::ExitCode;

fn main() -> ExitCode {
    seedledger_cli::main_with_extended::<seedledger_devtools::DevCommand>(&[
        &seedledger_orders::properties(),
    ])
}
