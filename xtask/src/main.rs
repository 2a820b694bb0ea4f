//! `cargo xtask`: seedledger's command line (`seedledger-cli`) over the properties this
//! workspace registers. A suite crate is named here once (`use ... as _;` links it, and with
//! it every property it `register!`s); adding a property later never touches this file.

use seedledger_orders as _;

fn main() -> std::process::ExitCode {
    seedledger_cli::main()
}
