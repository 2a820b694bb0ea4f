//! `cargo xtask bench runner`: seedledger against proptest, on the same properties, in one
//! run. A bench target (`harness = false`) because proptest is a dev-dependency of
//! `seedledger-devtools` only: `cargo xtask bench runner` spawns
//! `cargo bench -p seedledger-devtools --bench runner -- ARGS`, and this program measures
//! (`measure.rs`) and prints the tables. Run it directly the same way.

mod discards;
mod measure;
mod replica;

use clap::Parser;
use std::io::Write as _;
use std::process::ExitCode;

/// seedledger against proptest and hand-written floors, interleaved (see `measure.rs`).
#[derive(Debug, Parser)]
#[command(name = "cargo xtask bench runner")]
struct Args {
    /// Cases per measurement.
    #[arg(long, default_value_t = 100_000)]
    cases: u64,
    /// Interleaved rounds: each runs every contender once on every property.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// A smoke test: at most 200 cases and 2 rounds (figures meaningless).
    #[arg(long)]
    quick: bool,
    /// Print only the generation table (ns per drawn value, both rng schemes).
    #[arg(long)]
    generation: bool,
    /// Run only seedledger with evidence on the cheap property, `--rounds` times, and print
    /// each run's time per case (a workload for profilers such as `perf record`).
    #[arg(long)]
    evidence_only: bool,
    /// Print only the discard cost table (a discarding trial against a passing one of the
    /// same property, returned and unwound).
    #[arg(long)]
    discards: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if cfg!(debug_assertions) {
        let _ = writeln!(
            std::io::stderr(),
            "note: unoptimised build; for meaningful figures run `cargo bench -p seedledger-devtools --bench runner`"
        );
    }
    let options = measure::Options {
        cases: args.cases,
        rounds: args.rounds,
        quick: args.quick,
    };
    let n = if args.quick {
        args.cases.min(200)
    } else {
        args.cases
    };
    if args.generation {
        let _ = writeln!(
            std::io::stdout(),
            "generation, ns per drawn u64 (the cost of starting the case subtracted), median (min) of {} rounds:",
            args.rounds
        );
        let table = measure::generation_costs(n.max(1), args.rounds.max(1));
        let _ = std::io::stdout().write_all(measure::render_generation(&table).as_bytes());
        return ExitCode::SUCCESS;
    }
    if args.discards {
        return print_discards(n, &options);
    }
    if args.evidence_only {
        return match measure::evidence_only(&options) {
            Ok(lines) => {
                let _ = std::io::stdout().write_all(lines.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut progress = |what: &str| {
        let _ = writeln!(std::io::stderr(), "bench runner: {what}");
    };
    match measure::run(&options, &mut progress) {
        Ok(report) => {
            let _ = std::io::stdout().write_all(report.render().as_bytes());
            progress("discard cost");
            let _ = writeln!(std::io::stdout());
            print_discards(n, &options)
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(2)
        }
    }
}

fn print_discards(n: u64, options: &measure::Options) -> ExitCode {
    let rounds = if options.quick {
        options.rounds.clamp(1, 2)
    } else {
        options.rounds
    };
    match discards::measure(n, rounds) {
        Ok(table) => {
            let _ = std::io::stdout().write_all(table.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(2)
        }
    }
}
