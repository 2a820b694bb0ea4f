//! `cargo xtask prop new ID`: writes the spec file a new property needs and prints the
//! function to write. The spec starts as `oracle_source: model_draft`: a person reviews the
//! predicate, sets `human_reviewed` and commits the file before its receipts can close.

use clap::Args;
use seedledger_format::{ExitStatus, NO_FIXTURE, SpecFile, write_atomic_new};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The new property's id (ASCII letters, digits, `.`, `_`, `-`; a Rust function name is
    /// a good choice).
    #[arg(value_name = "ID")]
    id: String,
    /// What the property promises, in one line (the spec's `bound:`) [default: TODO].
    #[arg(long, value_name = "TEXT")]
    bound: Option<String>,
    /// The fixture file it reads, relative to the root [default: none: it reads no file].
    #[arg(long, value_name = "PATH")]
    fixture: Option<String>,
    /// Workspace root [default: the current directory if it has props/, else the nearest
    /// ancestor that has one].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub fn new(args: &NewArgs) -> ExitStatus {
    if let Err(e) = seedledger_format::check_id("property id", &args.id) {
        errln!("error: {e}");
        return ExitStatus::Error;
    }
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let rel = PathBuf::from("props").join(format!("{}.md", args.id));
    let path = root.join(&rel);
    let bound = args
        .bound
        .as_deref()
        .unwrap_or("TODO: what must always hold");
    let fixture = args.fixture.as_deref().unwrap_or(NO_FIXTURE);
    if bound.contains('\n') || fixture.contains('\n') {
        errln!("error: --bound and --fixture are one line each");
        return ExitStatus::Error;
    }
    let text = format!(
        "---\nproperty_id: {id}\nbound: {bound}\nfixture: {fixture}\noracle_source: model_draft\n---\n# `{id}`\n\nTODO: say, for a reviewer, what `{id}` checks and why it must hold. A person who has\nreviewed the predicate changes `oracle_source` to `human_reviewed` and commits this file;\nuntil then its receipts say `model_draft` and never close as freeze_eligible.\n",
        id = args.id
    );
    // The scaffold must be a spec the runner reads.
    if let Err(e) = SpecFile::parse(&text) {
        errln!("error: the spec this would write does not read back: {e}");
        return ExitStatus::Error;
    }
    if let Some(dir) = path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        errln!("error: cannot create `{}`: {e}", dir.display());
        return ExitStatus::Error;
    }
    match write_atomic_new(&path, text.as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            errln!(
                "error: `{}` already exists; a spec is edited by hand, never overwritten",
                path.display()
            );
            return ExitStatus::Error;
        }
        Err(e) => {
            errln!("error: cannot write `{}`: {e}", path.display());
            return ExitStatus::Error;
        }
    }
    let (param, fixture_line) = if fixture == NO_FIXTURE {
        (
            "_fixture",
            "    // `fixture: none`: the property reads no file.".to_string(),
        )
    } else {
        (
            "fixture",
            format!("    let _bytes = fixture.bytes(); // the pinned bytes of {fixture}"),
        )
    };
    // The id may hold `-` and `.` or start with a digit; the function needs a Rust name.
    let mut name: String = args
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "prop_");
    }
    outln!("wrote {} (oracle_source: model_draft)", rel.display());
    outln!();
    outln!("Add this to a crate your xtask links (for example beside the code it tests):");
    outln!();
    outln!(
        "use seedledger_runner::{{Fixture, PropResult, Property, TestCase, int, prop_assert, register}};\n\nfn {name}(tc: &mut TestCase, {param}: &Fixture) -> PropResult {{\n{fixture_line}\n    let x = tc.draw(&int(0..=100u32));\n    prop_assert!(x <= 100, \"x = {{x}}\");\n    Ok(())\n}}\nregister!(Property::new(\"{id}\", {name}));\n\n// Optional: run it from `cargo test` too.\n#[test]\nfn {name}_holds() {{\n    seedledger_runner::check_registered(\"{id}\");\n}}",
        id = args.id
    );
    outln!();
    outln!(
        "Then: review the predicate, set `oracle_source: human_reviewed` in {}, and commit it.",
        rel.display()
    );
    ExitStatus::Success
}
