//! The command line end to end: one integration test binary that runs the real `xtask`
//! binary in scratch workspaces (`support.rs`), one module per command group.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod anchored;
mod bazel;
mod bench;
mod campaign;
mod citer;
mod clean;
mod durability;
mod files;
mod freeze;
mod gate;
mod gate_cite;
mod gate_flake;
mod gate_freezes;
mod git_answers;
mod isolate;
mod merge;
mod observe;
mod progress;
mod prop;
mod report;
mod reproduce;
mod rng_rows;
mod semantics;
mod shards;
mod stateful;
mod supervise;
mod support;
mod targets;
mod trust;
