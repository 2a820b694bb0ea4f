//! `e2e_suite`: the command line over the one property of `cargo xtask bench e2e` (the
//! runner bench's cheap property, `bench_cheap`), as a workspace's `xtask` binary is built:
//! `seedledger_cli::main_with` over its suite. The benchmark runs it, built in release, as a
//! user runs `cargo xtask prop run` (without cargo in front).

fn main() -> std::process::ExitCode {
    seedledger_cli::main_with(&[&[seedledger_devtools::bench_e2e::CHEAP]])
}
