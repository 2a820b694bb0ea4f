//! `gate decide`: one freeze decision over a pair of runs, from the witness files streamed.

use super::*;

pub(super) fn decide(args: &DecideArgs) -> anyhow::Result<ExitStatus> {
    let x = expectation(&args.expect)?;
    // The witness files are read in passes, never held (`seedledger_gate::decide_files`).
    let mut batch = super::reading::Batch::open(&args.expect.witnesses)?;
    let streamed = seedledger_gate::decide_files::<super::reading::Scratch, _>(
        &mut batch,
        &x.expected,
        x.roles.keys(),
    )?;
    let culprit = streamed.culprit.map(|k| batch.path(k));
    x.notes(streamed.lines, &streamed.decision, culprit);
    // What the citation writer's same-seed review would say (it does not change the
    // decision, nor the exit status: SPEC's decision 2 stays blind to seeds).
    let review = streamed.review;
    let decision = streamed.decision;
    err_line(&format!("note: same-seed review: {}", review.detail));
    print_decision(&decision, &review, x.roles.label(), args.format);
    Ok(if decision.admit {
        ExitStatus::Success
    } else {
        ExitStatus::No
    })
}

/// What witness rows are decided against, computed before any of them is read: the
/// expected digest, pin and bound from the checked-in spec and fixture files, and whether
/// runner roles are authenticated.
pub(super) struct Expectation {
    pub(super) expected: Expected,
    pub(super) spec_path: PathBuf,
    pub(super) fixture_path: PathBuf,
    pub(super) roles: crate::common::keys::Roles,
    /// The spec's `oracle_source` now.
    pub(super) oracle: seedledger_format::OracleSource,
}

impl Expectation {
    /// The notes on stderr that say what was expected, whether roles are authenticated and
    /// which file decided a refusal.
    pub(super) fn notes(&self, lines: usize, decision: &FreezeDecision, culprit: Option<&Path>) {
        let expected = &self.expected;
        err_line(&format!(
            "note: expected property `{}`, digest {} (`{}`), pin {} (`{}`), bound `{}`; {} rows read",
            expected.property_id,
            expected.digest,
            self.spec_path.display(),
            expected.pin,
            self.fixture_path.display(),
            expected.bound,
            lines
        ));
        err_line(&self.roles.note());
        match culprit {
            Some(file) => err_line(&format!("note: `{}`: {}", file.display(), decision.detail)),
            None => err_line(&format!("note: {}", decision.detail)),
        }
    }
}

/// Computes the expected digest, pin and bound from the checked-in spec and fixture files and
/// loads the trust file. `Err` is unreadable input.
pub(super) fn expectation(args: &ExpectArgs) -> anyhow::Result<Expectation> {
    // Without `--root`, defaults are relative paths (shown as `props/ID.md`, not `./props/...`).
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let property = args.property.as_str();
    seedledger_format::check_id("property id", property).map_err(|e| anyhow!("--property: {e}"))?;
    let spec_path = match &args.spec {
        Some(path) => path.clone(),
        None => root.join("props").join(format!("{property}.md")),
    };
    let spec_bytes = read_bounded(&spec_path, "spec", MAX_SPEC_BYTES)?;
    let spec_text = std::str::from_utf8(&spec_bytes).map_err(|e| {
        anyhow!(
            "spec `{}`: not UTF-8 (byte {})",
            spec_path.display(),
            e.valid_up_to()
        )
    })?;
    let spec =
        SpecFile::parse(spec_text).map_err(|e| anyhow!("spec `{}`: {e}", spec_path.display()))?;
    if spec.property_id != property {
        bail!(
            "spec `{}`: line {}: property_id is `{}`, but `--property` is `{property}`",
            spec_path.display(),
            key_line(spec_text, "property_id"),
            spec.property_id
        );
    }
    // `fixture: none` (and no `--fixture`): the property reads no file; its bytes are empty.
    let fixture_path = match (&args.fixture, spec.fixture_path()) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(fixture)) => Some(root.join(fixture)),
        (None, None) => None,
    };
    let fixture_bytes = match &fixture_path {
        None => Vec::new(),
        Some(path) => read_bounded(path, "fixture", MAX_FIXTURE_BYTES).with_context(|| {
            format!(
                "the fixture named by spec `{}` (or `--fixture`)",
                spec_path.display()
            )
        })?,
    };
    let fixture_path = fixture_path.unwrap_or_else(|| PathBuf::from(seedledger_format::NO_FIXTURE));
    let expected = Expected {
        property_id: property.to_string(),
        digest: property_digest(&spec_bytes),
        pin: fixture_pin(&fixture_bytes),
        bound: args.bound.clone().unwrap_or_else(|| spec.bound.clone()),
    };

    // With a trust file, remote rows not signed by a declared remote key become malformed.
    let roles = crate::common::keys::Roles::load(&root)?;
    Ok(Expectation {
        expected,
        spec_path,
        fixture_path,
        roles,
        oracle: spec.oracle_source,
    })
}
