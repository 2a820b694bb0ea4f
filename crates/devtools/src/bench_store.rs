//! `bench store`: what a freeze store of N signed citations costs `prop run`. A scratch git
//! workspace (this repository's props/ and fixtures/, a trust file declaring a citer key)
//! runs one property through this binary with an empty store and with N citations of that
//! property, each signed and named as `gate cite` does, in interleaved rounds; the medians and
//! their ratio are printed.

use clap::Args;
use seedledger_format::{
    CITATION_SCHEMA_VERSION, Citation, ExitStatus, RunnerKey, SameSeedReview, TRUST_FILE,
    public_key_hex,
};
use seedledger_runner::engine;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct StoreBenchArgs {
    /// Citations in the store.
    #[arg(long, default_value_t = 1000)]
    citations: usize,
    /// The property run (and cited).
    #[arg(long, default_value = "order_total_nonneg")]
    property: String,
    /// Interleaved rounds (each runs once without and once with the store).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Keep the scratch workspace (to profile a run in it) and print where it is.
    #[arg(long)]
    keep: bool,
}

pub fn run(args: &StoreBenchArgs) -> ExitStatus {
    match measure(args) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            errln!("error: {e:#}");
            ExitStatus::Error
        }
    }
}

fn measure(args: &StoreBenchArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let exe = std::env::current_exe().context("cannot find this program")?;
    let source = seedledger_cli::discover_root();
    let dir = tempfile::tempdir()?;
    let ws = dir.path().to_path_buf();
    let ws = ws.as_path();
    if args.keep {
        outln!("workspace: {} (kept)", ws.display());
        std::mem::forget(dir);
    }
    for sub in ["props", "fixtures"] {
        copy_dir(&source.join(sub), &ws.join(sub))?;
    }
    let _ = std::fs::remove_dir_all(ws.join("props/freezes"));
    let key = RunnerKey::from_secret_bytes(&[9; 32]);
    std::fs::write(
        ws.join(TRUST_FILE),
        format!(
            "{{\"key_id\":\"bench\",\"role\":\"citer\",\"public_key\":\"{}\"}}\n",
            public_key_hex(&key.public_key())
        ),
    )?;
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "base",
        ],
    ] {
        let ok = Command::new("git").args(args).current_dir(ws).output()?;
        anyhow::ensure!(ok.status.success(), "git {args:?} failed");
    }
    let spec = engine::load_spec(ws, &args.property)?;
    let (_, pin) = engine::load_fixture(ws, &spec)?;
    let code = engine::code_identity(ws, None)?.code;
    let store = ws.join("store");
    std::fs::create_dir_all(&store)?;
    for i in 0..args.citations {
        let mut c = Citation {
            schema_version: CITATION_SCHEMA_VERSION,
            patch_id: "bench".into(),
            property_id: args.property.clone(),
            property_digest: spec.digest.clone(),
            fixture_pin: pin.clone(),
            bound: spec.spec.bound.clone(),
            signature: format!("assert:bench {i}"),
            fail_id: format!("fail-{i}"),
            pass_id: format!("pass-{i}"),
            seed: Some(i as u64),
            same_seed_review: SameSeedReview::Passed,
            code: code.clone(),
            code_base: None,
            expires_at: "2999-01-01T00:00:00Z".into(),
            written_at: "2026-01-01T00:00:00Z".into(),
            flake: Some(seedledger_format::CitationFlake::of(
                i as u64,
                seedledger_format::flake::Tally {
                    replays: 20,
                    fails: 5,
                },
                seedledger_format::flake::Tally::default(),
            )),
            key_id: None,
            sig: None,
        };
        seedledger_gate::sign_citation(&mut c, &key, "bench");
        let text = c.to_json_pretty();
        std::fs::write(store.join(c.file_name(&text)), text)?;
    }
    let empty = ws.join("empty");
    std::fs::create_dir_all(&empty)?;
    let run = |store: &Path, round: usize| -> anyhow::Result<Duration> {
        let start = Instant::now();
        let out = Command::new(&exe)
            .args([
                "prop",
                "run",
                "--property",
                &args.property,
                "--seeds",
                "1..=16",
            ])
            .arg("--out")
            .arg(ws.join(format!("out-{round}-{}", store.display().to_string().len())))
            .arg("--freezes")
            .arg(store)
            .current_dir(ws)
            .stdin(Stdio::null())
            .output()?;
        let took = start.elapsed();
        anyhow::ensure!(
            out.status.code() == Some(0),
            "prop run exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(took)
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for round in 0..args.rounds.max(1) {
        without.push(run(&empty, round)?);
        with.push(run(&store, round)?);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut without), median(&mut with));
    outln!(
        "prop run --property {} --seeds 1..=16 (through this binary, {} rounds, medians)",
        args.property,
        args.rounds.max(1)
    );
    outln!(
        "  empty store:            {:>8.1} ms",
        a.as_secs_f64() * 1e3
    );
    outln!(
        "  {} signed citations: {:>8.1} ms  ({:.2}x; {:.1} µs a citation)",
        args.citations,
        b.as_secs_f64() * 1e3,
        b.as_secs_f64() / a.as_secs_f64(),
        (b.as_secs_f64() - a.as_secs_f64()) * 1e6 / args.citations.max(1) as f64
    );
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            continue;
        }
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}
