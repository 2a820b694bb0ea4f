//! `cargo xtask`: seedledger's command line (`seedledger-cli`) over the properties this
//! workspace registers, with this repository's own dev tooling (`seedledger-devtools`:
//! `bench`, `campaign`) added. A suite crate is named here once (`use ... as _;` links it, and
//! with it every property it `register!`s); adding a property later never touches this file.

use seedledger_orders as _;

fn main() -> std::process::ExitCode {
    seedledger_cli::main_extended::<seedledger_devtools::DevCommand>()
}
