//! Tidy checks for the gate's architecture invariants: it depends on the format crate only
//! (never on a runner), and its library code does no I/O, reads no clock and no environment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

fn crate_file(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[test]
fn the_gate_never_depends_on_a_runner() {
    let manifest = crate_file("Cargo.toml");
    for forbidden in ["seedledger-runner", "seedledger-orders", "xtask"] {
        assert!(
            !manifest.contains(forbidden),
            "Cargo.toml names {forbidden}"
        );
    }
}

#[test]
fn the_library_does_no_io_and_reads_no_clock_or_environment() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src];
    let mut checked = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            // Unit tests (`foo/tests.rs`) may do what they like.
            if path.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("//!"),
                "{} must open with a `//!` line",
                path.display()
            );
            for forbidden in [
                "std::fs",
                "std::env",
                "std::net",
                "std::process",
                "SystemTime",
                "Instant",
                "println!",
                "eprintln!",
            ] {
                assert!(
                    !text.contains(forbidden),
                    "{} uses {forbidden}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 6);
}
