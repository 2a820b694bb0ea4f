//! ETNA's Rust adapter contract for seedledger's re-implemented ETNA workloads:
//!
//! ```text
//! cargo run --release -p seedledger-etna --bin etna -- <tool> <property>
//! ```
//!
//! * `tool`: `seedledger` or `proptest`;
//! * `property`: an ETNA property name (`BstInsertPost`, ...), optionally `Property@variant`;
//!   the variant (the injected mutant) may also come from `ETNA_VARIANT`; none (or `base`)
//!   runs the code without a mutant;
//! * the budget is `ETNA_CASES` property invocations before the first failure (default 200);
//!   `ETNA_TRIAL` (default 0) picks the trial's seeds.
//!
//! Prints exactly one JSON line on stdout (`status`, `tests`, `discards`, `time`,
//! `counterexample`, `error`, `tool`, `property`) and exits 0 for every finished outcome,
//! an unknown tool, property or variant included (status `aborted` with the error); exits 2
//! only for a usage error (wrong number of arguments, a budget that is not a number).

use seedledger_etna::{Report, Tool};
use std::process::ExitCode;

const USAGE: &str = "usage: etna <tool> <property>\n  tools: seedledger | proptest\n  env: ETNA_CASES (default 200), ETNA_VARIANT (default base), ETNA_TRIAL (default 0)";

fn env_number(name: &str, default: u64) -> Result<u64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("{name} must be a whole number, not {s:?}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tool, property] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // Trial t has the seeds from (t + 1) * 2^32: every trial below 2^32 - 1 has its own.
    let trial = env_number("ETNA_TRIAL", 0).and_then(|t| {
        (t < u64::from(u32::MAX))
            .then_some(t)
            .ok_or_else(|| format!("ETNA_TRIAL must be below {}, not {t}", u32::MAX))
    });
    let (budget, trial) = match (env_number("ETNA_CASES", 200), trial) {
        (Ok(b), Ok(t)) => (b, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (name, variant) = match property.split_once('@') {
        Some((name, variant)) => (name.to_string(), variant.to_string()),
        None => (
            property.clone(),
            std::env::var("ETNA_VARIANT").unwrap_or_else(|_| "base".to_string()),
        ),
    };
    let report = match (Tool::parse(tool), seedledger_etna::property(&name)) {
        (None, _) => Report::aborted(format!("unknown tool `{tool}` (seedledger | proptest)")),
        (_, None) => Report::aborted(format!(
            "unknown property `{name}`; known: {}",
            seedledger_etna::property_names().join(", ")
        )),
        (Some(tool), Some(p)) => p.run(tool, &variant, budget, trial),
    };
    println!("{}", report.json_line(tool, property));
    ExitCode::SUCCESS
}
