//! `cargo test` integration: run a property as a `#[test]`, with the same plan, generators,
//! shrinking and signatures as `cargo xtask prop run`, and the same evidence on disk.
//!
//! ```ignore
//! #[test]
//! fn order_total_nonneg() {
//!     seedledger_runner::check(&my_suite::ORDER_TOTAL_NONNEG);
//! }
//! ```
//!
//! [`check`] finds the workspace root by walking up from the test crate's directory to the
//! first one with `props/`, runs the default plan (256 seeds from 1; `SEEDLEDGER_CASES`
//! changes the count), writes the receipt and witness rows under
//! `ROOT/target/seedledger/<patch>/` as `prop run` does (patch `$SEEDLEDGER_PATCH_ID`, else
//! `local`; code identity against `$SEEDLEDGER_BASE`, else HEAD; crash safe without waiting
//! for the disk, synced at the end with `SEEDLEDGER_SYNC=1`), and panics on failure with
//! the summary: failing seeds, signature, minimal input and the replay command. A failing
//! `cargo test` is therefore replayable with `cargo xtask prop replay`. The root is absolute
//! before the run's first trial (the runner's `anchor.rs`), and the environment variables are
//! read once, at the first run of the process: a property that changes the process's
//! directory or environment moves neither its own evidence nor that of a test beside it.
//!
//! Use `prop run` for CI evidence (supervised, every property, JUnit, the freeze store); use
//! `check` for the edit-compile-test loop of one property in an IDE or `cargo test`.

use crate::plan::{DEFAULT_BASE_SEED, DEFAULT_CASES, cases};
use crate::property::Property;
use crate::run::RunSummary;
use crate::shrink::ShrinkConfig;
use std::path::{Path, PathBuf};

/// Runs `property` over the default plan and panics with a summary if any seed fails (see
/// the module docs). Returns the run's summary when every seed passed.
#[allow(clippy::panic)] // failing a `#[test]` is this function's job
pub fn check(property: &Property) -> RunSummary {
    match try_check(property) {
        Ok(summary) => summary,
        Err(message) => panic!("{message}"),
    }
}

/// [`check`] of the property registered under `id` ([`crate::register!`]) in this test
/// binary — a `#[test]` in the crate that registers it:
/// `#[test] fn total_nonneg() { seedledger_runner::check_registered("total_nonneg"); }`.
/// Panics, naming what is registered, when no property has that id.
#[allow(clippy::panic)] // failing a `#[test]` is this function's job
pub fn check_registered(id: &str) -> RunSummary {
    let suite = match crate::registered() {
        Ok(suite) => suite,
        Err(e) => panic!("{e}"),
    };
    match suite.iter().find(|p| p.id == id) {
        Some(property) => check(property),
        None => {
            let ids: Vec<&str> = suite.iter().map(|p| p.id).collect();
            panic!(
                "no property `{id}` is registered in this test binary (registered: {}); an integration test (`tests/*.rs`) links its crate's registrations only when it names the crate: add `use my_crate as _;` (your crate's name) at the top of the test file; or, if the property is not registered at all, add `seedledger_runner::register!(...)` beside it",
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            )
        }
    }
}

/// [`check`] without the panic: `Err` is the failure summary (or why the run could not be
/// made), ready to print.
pub fn try_check(property: &Property) -> Result<RunSummary, String> {
    try_check_in(property, &test_root()?)
}

/// [`try_check`] in the workspace at `root` (its `props/`, its `target/seedledger/`): for
/// tests that keep their evidence out of the real workspace, such as a planted bug's.
pub fn try_check_in(property: &Property, root: &Path) -> Result<RunSummary, String> {
    // Tests of one binary share its process: another test's trial may change its directory
    // while this one runs. The root is fixed before this run's first trial.
    let root = crate::anchor::anchored(root);
    let env = check_env();
    let count = match &env.cases {
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| format!("SEEDLEDGER_CASES=`{text}` is not a number of seeds"))?,
        None => DEFAULT_CASES,
    };
    // (The plan checked here, for the error's wording; the run makes it again.)
    cases(count, DEFAULT_BASE_SEED).map_err(|e| e.to_string())?;
    let base = env.base.clone().filter(|b| !b.is_empty());
    // The run's question whether its spec is committed goes to git now, beside the code
    // identity's (a git process is most of a short run's fixed cost).
    // (The repository as the prefetch read it serves the code identity right after.)
    let opened =
        crate::committed::prefetch(&root, &crate::committed::spec_rels(&[property.id]), true);
    let code = match crate::code::start_code_identity_read(&root, base.as_deref(), opened).finish()
    {
        Ok(code) => Some(code),
        Err(e) if base.is_some() => return Err(format!("SEEDLEDGER_BASE: {e}")),
        Err(_) => None,
    };
    let evidence = crate::lib_run::Evidence {
        out_dir: root.join("target").join("seedledger"),
        patch_id: env.patch_id.clone().unwrap_or_else(|| "local".to_string()),
        code,
        durability: env.durability,
        root,
    };
    // The library-level run (the crate's one trial loop), writing `prop run`'s evidence;
    // observed when $SEEDLEDGER_OBSERVE names a file (`observe.rs`).
    let options = crate::lib_run::RunOptions::cases(count)
        .base_seed(DEFAULT_BASE_SEED)
        .shrink(Some(ShrinkConfig::default()))
        .evidence(evidence);
    let summary = crate::observe::run_checked(property, &options)?;
    if summary.passed() {
        return Ok(summary);
    }
    Err(failure_summary(&summary))
}

/// The workspace root for a test: from the test crate's directory (`CARGO_MANIFEST_DIR`, set
/// by cargo when it runs the test), or the directory the test binary started in (the first
/// [`crate::engine::start_dir`], not whatever directory another test's trial moved the process to),
/// up to the first directory that has `props/`.
fn test_root() -> Result<PathBuf, String> {
    let start = check_env()
        .manifest_dir
        .as_deref()
        .map(crate::anchor::anchored)
        .or_else(|| crate::anchor::start_dir().map(Path::to_path_buf))
        .ok_or("cannot tell where the test runs from")?;
    start
        .ancestors()
        .find(|dir| dir.join("props").is_dir())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            format!(
                "no `props/` directory in `{}` or above it: a property needs its spec file props/<id>.md",
                start.display()
            )
        })
}

/// The environment [`check`] reads, as it was at the first run of the process: the tests of a
/// binary share its process, and a trial of one may change the environment of the others
/// (the same reason their paths are anchored, see `anchor.rs`).
struct CheckEnv {
    cases: Option<String>,
    base: Option<String>,
    patch_id: Option<String>,
    manifest_dir: Option<PathBuf>,
    /// `SEEDLEDGER_SYNC`.
    durability: crate::durability::Durability,
}

fn check_env() -> &'static CheckEnv {
    static ENV: std::sync::OnceLock<CheckEnv> = std::sync::OnceLock::new();
    ENV.get_or_init(|| CheckEnv {
        cases: std::env::var("SEEDLEDGER_CASES").ok(),
        base: std::env::var("SEEDLEDGER_BASE").ok(),
        patch_id: std::env::var("SEEDLEDGER_PATCH_ID").ok(),
        manifest_dir: std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from),
        durability: crate::durability::Durability::from_env(),
    })
}

fn failure_summary(summary: &RunSummary) -> String {
    let r = &summary.receipt;
    if r.fixture_changed == Some(true) {
        return format!(
            "{}: the fixture changed during the run; the receipt stays open ({})",
            r.property_id,
            summary.receipt_path.display()
        );
    }
    if r.failing_seeds.is_empty() && summary.too_many_discards() {
        return format!(
            "property {}: too many discards: {} of {} trials were discarded (more than half: \
             the precondition or a filter rejects most inputs; draw inputs that meet it)\n  receipt: {}",
            r.property_id,
            summary.discarded(),
            r.attempted_seeds.len(),
            summary.receipt_path.display()
        );
    }
    let shown: Vec<String> = r.failing_seeds.iter().take(5).map(u64::to_string).collect();
    let mut out = format!(
        "property {} failed on {} of {} seeds: {}{}\n",
        r.property_id,
        r.failing_seeds.len(),
        r.attempted_seeds.len(),
        shown.join(", "),
        if r.failing_seeds.len() > 5 {
            ", ..."
        } else {
            ""
        }
    );
    if summary.discarded() > 0 {
        out.push_str(&format!(
            "  {} of {} trials discarded{}\n",
            summary.discarded(),
            r.attempted_seeds.len(),
            if summary.too_many_discards() {
                " (too many discards: more than half)"
            } else {
                ""
            }
        ));
    }
    let several = r.failure_modes.len() > 1;
    for mode in &r.failure_modes {
        out.push_str(&format!(
            "  failure mode [{}]: {} seeds, first {}\n",
            mode.signature, mode.count, mode.first_seed
        ));
        // With several modes, each shows its own minimal input and replay.
        if several {
            if let Some(shrink) = &mode.shrink {
                out.push_str(&minimal_lines(shrink, "    "));
            }
            if let Some(replay) = &mode.replay {
                out.push_str(&format!("    replay: {replay}\n"));
            }
        }
    }
    if let Some(first) = r.failures.first() {
        out.push_str(&format!("  seed {}: {}\n", first.seed, first.message));
    }
    if let Some(shrink) = r.shrink.as_ref().filter(|_| !several) {
        out.push_str(&minimal_lines(shrink, "  "));
    }
    if let Some(seed) = r.failing_seeds.first() {
        out.push_str(&format!(
            "  replay: {}\n",
            crate::run::replay_seed_command(
                &r.property_id,
                None,
                &r.patch_id,
                *seed,
                crate::rng::Scheme::of_receipt(r.rng.as_deref()).unwrap_or_default(),
            )
        ));
    }
    out.push_str(&format!("  receipt: {}", summary.receipt_path.display()));
    out
}

/// `minimal input (seed N, shrink stable): <input>` and `minimal failure: <message>` (its
/// further lines indented), each line starting with `indent`.
fn minimal_lines(shrink: &seedledger_format::ShrinkRecord, indent: &str) -> String {
    let mut out = format!(
        "{indent}minimal input (seed {}, shrink {}): {}\n",
        shrink.seed,
        if shrink.stable {
            "stable"
        } else {
            "NOT stable"
        },
        shrink.minimal_input
    );
    let mut lines = shrink.minimal_message.lines();
    out.push_str(&format!(
        "{indent}minimal failure: {}\n",
        lines.next().unwrap_or("")
    ));
    for line in lines {
        out.push_str(&format!("{indent}    {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    /// An id no property is registered under names the line an integration test most often
    /// lacks (`use my_crate as _;`), not only `register!`.
    #[test]
    fn an_unregistered_id_names_the_use_line_an_integration_test_needs() {
        let err = std::panic::catch_unwind(|| super::check_registered("no_such_property"));
        let payload = err.expect_err("an unknown id panics");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            message.starts_with("no property `no_such_property` is registered in this test binary"),
            "{message}"
        );
        assert!(message.contains("add `use my_crate as _;`"), "{message}");
    }
}
