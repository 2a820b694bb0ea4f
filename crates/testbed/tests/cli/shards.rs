//! The shard variables of Bazel and the CI services, through the real binary: a run that
//! sees them plans exactly its part of the plan (as `--partition slice:M/N`), says so, and the
//! parts merged cover every planned seed exactly once, for 1, 2, 3, 8 and 13 shards of each
//! engine; half a pair, an index out of range or a total of 0 runs nothing.

use crate::support::{Root, Run, read_json, seeds};
use serde_json::Value;

const PROPERTY: &str = "order_total_nonneg";
const CASES: u64 = 40;

/// Each engine's pair (total, index) and the index of its first shard.
const ENGINES: [(&str, &str, u64); 4] = [
    ("TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", 0),
    ("CI_NODE_TOTAL", "CI_NODE_INDEX", 1),
    ("BUILDKITE_PARALLEL_JOB_COUNT", "BUILDKITE_PARALLEL_JOB", 0),
    ("CIRCLE_NODE_TOTAL", "CIRCLE_NODE_INDEX", 0),
];

fn run_shard(root: &Root, out: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let cases = CASES.to_string();
    let mut args = vec![
        "prop",
        "run",
        "--property",
        PROPERTY,
        "--cases",
        &cases,
        "--out",
        out,
    ];
    args.extend(extra);
    root.run_env(&args, env)
}

fn receipt(root: &Root, out: &str) -> Value {
    read_json(
        &root
            .path()
            .join(format!("{out}/local/{PROPERTY}.receipt.json")),
    )
}

/// Runs the `n` shards of `engine` (by its own variables and numbering, no `--partition`);
/// checks each plans its slice and says where it came from; returns their output
/// directories.
fn shards(root: &Root, (total, index, first): (&str, &str, u64), n: u64) -> Vec<String> {
    (0..n)
        .map(|k| {
            let out = format!("{index}-{n}-{k}");
            let (n_text, i_text) = (n.to_string(), (k + first).to_string());
            let run = run_shard(root, &out, &[], &[(total, &n_text), (index, &i_text)]);
            assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
            let part = format!("slice:{}/{n}", k + 1);
            assert!(
                run.stderr
                    .contains(&format!("note: this run is part {part} from"))
                    && run.stderr.contains(index),
                "{}",
                run.stderr
            );
            // The summary line says the run was a part, of which plan.
            assert!(
                run.stdout
                    .contains(&format!("(part {part} of a {CASES}-seed plan)")),
                "{}",
                run.stdout
            );
            let r = receipt(root, &out);
            let planned = seeds(&r["planned_seeds"]);
            let want: Vec<u64> = (1..=CASES).filter(|s| (s - 1) % n == k).collect();
            assert_eq!(planned, want, "{index} {k}/{n}");
            out
        })
        .collect()
}

/// Each engine's shards, 1, 2, 3, 8 and 13 of them, by its own variables and numbering (no
/// `--partition`): each plans its slice, the attempted seeds of all cover the plan exactly
/// once, and `gate merge` makes of them one receipt that plans and attempts the whole plan.
fn cover_the_plan_exactly_once_and_merge_into_it(engine: (&str, &str, u64)) {
    let root = Root::new();
    let plan: Vec<u64> = (1..=CASES).collect();
    for n in [1, 2, 3, 8, 13] {
        let outs = shards(&root, engine, n);
        let mut all: Vec<u64> = outs
            .iter()
            .flat_map(|out| seeds(&receipt(&root, out)["attempted_seeds"]))
            .collect();
        all.sort_unstable();
        // Exactly once: no seed in two shards, none in none.
        assert_eq!(all, plan, "{} with {n} shards", engine.1);
        let merged = format!("merged-{}-{n}", engine.1);
        let mut args = vec!["gate", "merge", "--out", merged.as_str()];
        let files: Vec<String> = outs
            .iter()
            .map(|out| format!("{out}/local/{PROPERTY}.receipt.json"))
            .collect();
        args.extend(files.iter().map(String::as_str));
        let run = root.run(&args);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        let m = receipt(&root, &merged);
        assert_eq!(seeds(&m["planned_seeds"]), plan);
        assert_eq!(seeds(&m["attempted_seeds"]), plan);
    }
}

#[test]
fn bazel_shards_cover_the_plan_exactly_once_and_merge_into_it() {
    cover_the_plan_exactly_once_and_merge_into_it(ENGINES[0]);
}

#[test]
fn gitlab_shards_cover_the_plan_exactly_once_and_merge_into_it() {
    cover_the_plan_exactly_once_and_merge_into_it(ENGINES[1]);
}

#[test]
fn buildkite_shards_cover_the_plan_exactly_once_and_merge_into_it() {
    cover_the_plan_exactly_once_and_merge_into_it(ENGINES[2]);
}

#[test]
fn circleci_shards_cover_the_plan_exactly_once_and_merge_into_it() {
    cover_the_plan_exactly_once_and_merge_into_it(ENGINES[3]);
}

#[test]
fn half_a_pair_an_index_out_of_range_or_no_shards_runs_nothing_for_every_engine() {
    let root = Root::new();
    for (total, index, first) in ENGINES {
        let past = (4 + first).to_string();
        let below = if first == 1 { "0" } else { "-1" };
        let first = first.to_string();
        for env in [
            // Half a pair, either half.
            vec![(total, "4")],
            vec![(index, first.as_str())],
            // An index past the last shard, or before the first.
            vec![(total, "4"), (index, past.as_str())],
            vec![(total, "4"), (index, below)],
            // No shards at all.
            vec![(total, "0"), (index, first.as_str())],
        ] {
            let run = run_shard(&root, "refused", &[], &env);
            assert_eq!(run.code, 2, "{env:?}\n{}\n{}", run.stdout, run.stderr);
            assert!(run.stderr.contains("no trial runs"), "{}", run.stderr);
            assert!(
                run.stderr.contains(env[0].0) || run.stderr.contains(env[env.len() - 1].0),
                "{}",
                run.stderr
            );
            assert!(
                !run.stderr.contains("note: this run is part"),
                "{}",
                run.stderr
            );
            assert!(
                !root.path().join("refused").exists(),
                "{env:?}: evidence was written"
            );
        }
    }
}

#[test]
fn partition_auto_needs_the_variables_and_an_explicit_part_wins() {
    let root = Root::new();
    let run = run_shard(&root, "auto-none", &["--partition", "auto"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--partition auto: no CI shard variables are set"),
        "{}",
        run.stderr
    );
    let env = [("CI_NODE_TOTAL", "4"), ("CI_NODE_INDEX", "2")];
    let run = run_shard(&root, "auto", &["--partition", "auto"], &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want: Vec<u64> = (1..=CASES).filter(|s| (s - 1) % 4 == 1).collect();
    assert_eq!(seeds(&receipt(&root, "auto")["planned_seeds"]), want);
    // An explicit part is the part, whatever the variables say.
    let run = run_shard(&root, "explicit", &["--partition", "slice:1/2"], &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want: Vec<u64> = (1..=CASES).filter(|s| (s - 1) % 2 == 0).collect();
    assert_eq!(seeds(&receipt(&root, "explicit")["planned_seeds"]), want);
    // GitLab without `parallel:` sets CI_NODE_TOTAL=1 alone: the whole plan, nothing said.
    let run = run_shard(&root, "gitlab-one", &[], &[("CI_NODE_TOTAL", "1")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("note: this run is part"),
        "{}",
        run.stderr
    );
    let plan: Vec<u64> = (1..=CASES).collect();
    assert_eq!(seeds(&receipt(&root, "gitlab-one")["planned_seeds"]), plan);
}
