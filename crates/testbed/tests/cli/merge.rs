//! One plan split across machines and merged back, end to end through the
//! real binary: `prop run --partition slice:M/N | hash:M/N` runs exactly its part of the plan,
//! and `gate merge` combines the parts of one property into one receipt of the whole plan —
//! open with the reason when a part is missing or stopped early, refused when the parts do not
//! belong together — that closes, verifies, decides and cites as a single run's.

use crate::support::{Root, Run};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

const PROPERTY: &str = "order_total_nonneg";
/// The planted deterministic bug: `order_total_nonneg` fails on some seeds.
const BUG: (&str, &str) = ("ORDERS_DEMO_BUG", "1");

/// The partition of seed `seed` at plan position `i`, written from the documented rules (not
/// from the implementation): slice = round robin by position; hash = SplitMix64's finalizer.
fn model_part(kind: &str, total: u64, i: usize, seed: u64) -> u64 {
    match kind {
        "slice" => i as u64 % total + 1,
        _ => {
            let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % total + 1
        }
    }
}

/// `prop run --property P PLAN... --partition PART --out OUT` (or the whole plan without
/// `part`), never an error.
fn run_part(
    root: &Root,
    out: &str,
    plan: &[&str],
    part: Option<&str>,
    env: &[(&str, &str)],
) -> Run {
    run_prop(root, PROPERTY, out, plan, part, env)
}

fn run_prop(
    root: &Root,
    property: &str,
    out: &str,
    plan: &[&str],
    part: Option<&str>,
    env: &[(&str, &str)],
) -> Run {
    let mut args = vec!["prop", "run", "--property", property, "--out", out];
    args.extend(plan);
    if let Some(part) = part {
        args.extend(["--partition", part]);
    }
    let run = root.run_env(&args, env);
    assert!(
        run.code == 0 || run.code == 1,
        "{args:?}\n{}\n{}",
        run.stdout,
        run.stderr
    );
    run
}

fn receipt_file(out: &str, property: &str) -> String {
    format!("{out}/local/{property}.receipt.json")
}

fn read(root: &Root, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.path().join(rel)).unwrap()).unwrap()
}

fn write(root: &Root, rel: &str, value: &Value) {
    std::fs::write(
        root.path().join(rel),
        serde_json::to_string_pretty(value).unwrap(),
    )
    .unwrap();
}

fn seeds(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}

fn merge(root: &Root, parts: &[String], out: &str) -> Run {
    let mut args = vec!["gate", "merge", "--out", out];
    args.extend(parts.iter().map(String::as_str));
    root.run(&args)
}

/// Runs the N parts of `kind` into `<prefix>-<m>`; returns their receipt files.
fn parts(
    root: &Root,
    prefix: &str,
    kind: &str,
    n: u64,
    plan: &[&str],
    env: &[(&str, &str)],
) -> Vec<String> {
    (1..=n)
        .map(|m| {
            let out = format!("{prefix}-{m}");
            run_part(root, &out, plan, Some(&format!("{kind}:{m}/{n}")), env);
            receipt_file(&out, PROPERTY)
        })
        .collect()
}

#[test]
fn the_parts_of_slice_and_hash_partitions_cover_the_plan_exactly_once() {
    let root = Root::new();
    let whole: Vec<u64> = (1101..=1130).collect();
    let list = [9u64, 3, 7, 100, 42, 18446744073709551615, 0];
    let list_text = "9,3,7,100,42,18446744073709551615,0";
    for (plan, args) in [
        (whole.clone(), vec!["--seeds", "1101..=1130"]),
        (whole.clone(), vec!["--cases", "30", "--base-seed", "1101"]),
        (list.to_vec(), vec!["--seeds", list_text]),
    ] {
        for kind in ["slice", "hash"] {
            let n = 3;
            let mut seen: Vec<u64> = Vec::new();
            for m in 1..=n {
                let out = format!("cover-{kind}-{}-{m}", plan.len());
                let run = run_part(&root, &out, &args, Some(&format!("{kind}:{m}/{n}")), &[]);
                assert!(
                    run.stdout.contains(&format!(
                        " seeds (part {kind}:{m}/{n} of a {}-seed plan)",
                        plan.len()
                    )),
                    "{}",
                    run.stdout
                );
                let r = read(&root, &receipt_file(&out, PROPERTY));
                let expected: Vec<u64> = plan
                    .iter()
                    .enumerate()
                    .filter(|(i, s)| model_part(kind, n, *i, **s) == m)
                    .map(|(_, s)| *s)
                    .collect();
                assert_eq!(seeds(&r["planned_seeds"]), expected, "{kind}:{m}/{n}");
                assert_eq!(r["attempted_seeds"], r["planned_seeds"]);
                assert_eq!(r["partition"]["kind"], kind);
                assert_eq!(r["partition"]["index"], m);
                assert_eq!(r["partition"]["total"], n);
                assert_eq!(r["partition"]["plan_len"], plan.len());
                seen.extend(expected);
            }
            // Every seed of the plan in exactly one part.
            assert_eq!(seen.len(), plan.len(), "{kind}");
            assert_eq!(
                seen.iter().collect::<BTreeSet<_>>(),
                plan.iter().collect::<BTreeSet<_>>(),
                "{kind}"
            );
        }
    }
    let json = root.run(&[
        "prop",
        "run",
        "--property",
        PROPERTY,
        "--cases",
        "5",
        "--partition",
        "hash:2/2",
        "--out",
        "json",
        "--format",
        "json",
    ]);
    let line: Value = serde_json::from_str(json.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(line["partition"], "hash:2/2", "{line}");
    assert_eq!(line["planned"], line["attempted"]);
    // nextest's M/N: 1 <= M <= N.
    for bad in ["slice:0/2", "slice:3/2", "count:1/2", "hash:1"] {
        let run = root.run(&["prop", "run", "--partition", bad]);
        assert_eq!(run.code, 2, "{bad}");
        assert!(run.stderr.contains("slice:M/N"), "{}", run.stderr);
    }
}

/// The fields a merged receipt shares with a single unpartitioned run of the same plan.
fn decision(r: &Value) -> Value {
    let modes: Vec<Value> = r["failure_modes"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| json!([m["signature"], m["count"], m["first_seed"]]))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "planned_seeds": r["planned_seeds"],
        "attempted_seeds": r["attempted_seeds"],
        "failing_seed": r["failing_seed"],
        "failing_seeds": r["failing_seeds"],
        "verdicts": r["verdicts"],
        "stopped_early": r["stopped_early"],
        "shrink_stable": r["shrink_stable"],
        "shrink_status": r["shrink_status"],
        "minimal_input": r["shrink"]["minimal_input"],
        "fixture_hash": r["fixture_hash"],
        "oracle_source": r["oracle_source"],
        "failure_modes": modes,
    })
}

#[test]
fn merged_receipts_close_and_verify_exactly_as_a_single_run_of_the_plan() {
    let root = Root::new();
    for (env, plan) in [
        (vec![BUG], vec!["--seeds", "1..=40"]),
        (vec![], vec!["--cases", "25"]),
    ] {
        let tag = if env.is_empty() { "pass" } else { "bug" };
        let single = format!("single-{tag}");
        run_part(&root, &single, &plan, None, &env);
        let single_receipt = read(&root, &receipt_file(&single, PROPERTY));
        if tag == "bug" {
            assert!(
                single_receipt["failing_seed"].is_u64(),
                "the bug must fail some seed"
            );
        }
        let close = |file: &str| root.run(&["gate", "close", "--verify", file]);
        let single_close = close(&receipt_file(&single, PROPERTY));
        for kind in ["slice", "hash"] {
            let files = parts(&root, &format!("{tag}-{kind}"), kind, 3, &plan, &env);
            let out = format!("merged-{tag}-{kind}");
            let merged = merge(&root, &files, &out);
            let merged_file = receipt_file(&out, PROPERTY);
            assert_eq!(merged.code, 0, "{}\n{}", merged.stdout, merged.stderr);
            assert!(
                merged
                    .stdout
                    .starts_with(&format!("merged 3 of 3 parts of {PROPERTY} (")),
                "{}",
                merged.stdout
            );
            let r = read(&root, &merged_file);
            assert_eq!(decision(&r), decision(&single_receipt), "{tag} {kind}");
            assert_eq!(r["merge"]["kind"], kind);
            assert_eq!(r["merge"]["parts"].as_array().unwrap().len(), 3);
            assert!(r["run_id"].as_str().unwrap().starts_with("merge-"));
            let c = close(&merged_file);
            assert_eq!(c.code, single_close.code, "{}", c.stdout);
            let status = |out: &str| {
                out.lines()
                    .next()
                    .unwrap()
                    .split_once(": ")
                    .unwrap()
                    .1
                    .to_string()
            };
            assert_eq!(status(&c.stdout), status(&single_close.stdout));
            assert!(c.stdout.contains(": rows agree ("), "{}", c.stdout);
            // The merged witness file is the parts' files, byte for byte, in part order.
            let mut concatenated = Vec::new();
            for m in 1..=3 {
                concatenated.extend(
                    std::fs::read(
                        root.path()
                            .join(format!("{tag}-{kind}-{m}/local/{PROPERTY}.witness.jsonl")),
                    )
                    .unwrap(),
                );
            }
            assert_eq!(
                std::fs::read(
                    root.path()
                        .join(format!("{out}/local/{PROPERTY}.witness.jsonl"))
                )
                .unwrap(),
                concatenated
            );
        }
    }
}

#[test]
fn a_merged_receipt_whose_rows_were_edited_does_not_verify() {
    let root = Root::new();
    let files = parts(&root, "edit", "slice", 2, &["--cases", "6"], &[]);
    assert_eq!(merge(&root, &files, "merged").code, 0);
    let witness = root
        .path()
        .join(format!("merged/local/{PROPERTY}.witness.jsonl"));
    let text = std::fs::read_to_string(&witness).unwrap();
    // Part 2's rows moved before part 1's still verify (the file order is the parts' order
    // only by convention); a row of part 1 dropped does not.
    let lines: Vec<&str> = text.lines().collect();
    let verify = || {
        root.run(&[
            "gate",
            "close",
            "--verify",
            &receipt_file("merged", PROPERTY),
        ])
    };
    let (part_1, part_2) = lines.split_at(3);
    std::fs::write(
        &witness,
        format!("{}\n{}\n", part_2.join("\n"), part_1.join("\n")),
    )
    .unwrap();
    let c = verify();
    assert_eq!(c.code, 1, "budget pass: {}", c.stdout);
    assert!(c.stdout.contains(": rows agree ("), "{}", c.stdout);
    std::fs::write(&witness, format!("{}\n", lines[1..].join("\n"))).unwrap();
    let c = verify();
    assert_eq!(c.code, 1, "{}", c.stdout);
    assert!(
        c.stdout.contains(
            "rows disagree: the receipt lists 6 attempted seeds but its run wrote 5 rows"
        ),
        "{}",
        c.stdout
    );
}

#[test]
fn a_missing_part_or_a_part_that_stopped_early_leaves_the_merged_receipt_open() {
    let root = Root::new();
    let files = parts(&root, "open", "slice", 3, &["--cases", "10"], &[]);
    // Part 2 (seeds 2, 5, 8) missing.
    let missing = merge(&root, &[files[0].clone(), files[2].clone()], "merged-gap");
    assert_eq!(missing.code, 1, "{}\n{}", missing.stdout, missing.stderr);
    assert!(
        missing.stdout.contains(
            "merged 2 of 3 parts of order_total_nonneg (7 of 10 planned seeds attempted)"
        ),
        "{}",
        missing.stdout
    );
    assert!(
        missing.stdout.contains(": seed_gap ("),
        "{}",
        missing.stdout
    );
    assert!(
        missing
            .stdout
            .contains("open: part slice:2/3 missing: 3 planned seeds never attempted\n"),
        "{}",
        missing.stdout
    );
    let r = read(&root, &receipt_file("merged-gap", PROPERTY));
    assert_eq!(seeds(&r["planned_seeds"]), (1..=10).collect::<Vec<u64>>());
    assert_eq!(seeds(&r["attempted_seeds"]), vec![1, 3, 4, 6, 7, 9, 10]);
    assert_eq!(r["merge"]["missing"], json!([2]));
    let close = root.run(&[
        "gate",
        "close",
        "--verify",
        &receipt_file("merged-gap", PROPERTY),
    ]);
    assert_eq!(close.code, 1);
    assert!(close.stdout.contains(": seed_gap ("), "{}", close.stdout);
    assert!(close.stdout.contains(": rows agree ("), "{}", close.stdout);
    let counts = root.run(&["gate", "counts", &receipt_file("merged-gap", PROPERTY)]);
    assert!(
        counts.stdout.starts_with("local: open 1,"),
        "{}",
        counts.stdout
    );

    // A part that had not finished (as a crash after its last trial leaves it).
    let mut part = read(&root, &files[1]);
    part["stopped_early"] = json!(true);
    write(&root, &files[1], &part);
    let early = merge(&root, &files, "merged-early");
    assert_eq!(early.code, 1, "{}\n{}", early.stdout, early.stderr);
    assert!(
        early.stdout.contains(": early_stop_incomplete ("),
        "{}",
        early.stdout
    );
    assert!(
        early.stdout.contains(&format!(
            "open: part slice:2/3 (`{}`) stopped early after 3 of 3 seeds\n",
            files[1]
        )),
        "{}",
        early.stdout
    );
    let merged = read(&root, &receipt_file("merged-early", PROPERTY));
    assert_eq!(merged["stopped_early"], true);
    // The open merged receipt agrees with its parts' rows; a row put under another part's
    // run (renamed consistently) does not, open or not (the parts' rows are read, never
    // taken as absent for want of rows of the merged run id).
    let verify = || {
        root.run(&[
            "gate",
            "close",
            "--verify",
            &receipt_file("merged-early", PROPERTY),
        ])
    };
    let c = verify();
    assert!(c.stdout.contains(": rows agree ("), "{}", c.stdout);
    let part_3 = merged["merge"]["parts"][2]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let witness = root
        .path()
        .join(format!("merged-early/local/{PROPERTY}.witness.jsonl"));
    let text = std::fs::read_to_string(&witness).unwrap();
    let mut rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["seed"], 1, "part 1's first row comes first");
    rows[0]["run_id"] = json!(part_3);
    rows[0]["witness_id"] = json!(format!("{part_3}-1"));
    let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    std::fs::write(&witness, text.join("\n") + "\n").unwrap();
    let c = verify();
    assert!(
        c.stdout.contains("rows disagree: row `")
            && c.stdout
                .contains("(seed 1) comes from part 3 but the seed is in part 1 of 3"),
        "{}",
        c.stdout
    );
}

/// Replaces `"key": old` by `"key": new` in every row of the witness file beside `receipt`.
fn edit_rows(root: &Root, receipt: &str, key: &str, new: &Value) {
    let path = root
        .path()
        .join(receipt.replace(".receipt.json", ".witness.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let rows: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v[key] = new.clone();
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    std::fs::write(path, rows.join("\n") + "\n").unwrap();
}

#[test]
fn gate_merge_refuses_parts_that_do_not_belong_together() {
    let root = Root::new();
    let plan = ["--cases", "12"];
    let base = parts(&root, "base", "slice", 2, &plan, &[]);
    let refused = |files: &[String], why: &str| {
        let out = format!("refused-{}", why.len());
        let run = merge(&root, files, &out);
        assert_eq!(run.code, 1, "{why}\n{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.starts_with("merge refused: "), "{}", run.stdout);
        assert!(
            run.stdout.contains(why),
            "expected `{why}` in {}",
            run.stdout
        );
        assert!(!root.path().join(&out).exists(), "a refusal writes nothing");
    };
    // Another property.
    run_prop(
        &root,
        "order_total_adds_up",
        "other-prop",
        &plan,
        Some("slice:2/2"),
        &[],
    );
    refused(
        &[
            base[0].clone(),
            receipt_file("other-prop", "order_total_adds_up"),
        ],
        "is from another property than",
    );
    // Another patch.
    let r = root.run(&[
        "prop",
        "run",
        "--property",
        PROPERTY,
        "--cases",
        "12",
        "--partition",
        "slice:2/2",
        "--patch-id",
        "pr-9",
        "--out",
        "other-patch",
    ]);
    assert_eq!(r.code, 0);
    refused(
        &[
            base[0].clone(),
            format!("other-patch/pr-9/{PROPERTY}.receipt.json"),
        ],
        "is from another patch than",
    );
    // Another fixture (the fixture file changed between the parts).
    let fixture = root.path().join("fixtures/order.json");
    let original = std::fs::read(&fixture).unwrap();
    root.plant_negative_price();
    run_part(&root, "other-fixture", &plan, Some("slice:2/2"), &[]);
    std::fs::write(&fixture, &original).unwrap();
    refused(
        &[base[0].clone(), receipt_file("other-fixture", PROPERTY)],
        "is from another fixture hash than",
    );
    // Another property digest (the spec's prose changed between the parts).
    let spec = root.path().join(format!("props/{PROPERTY}.md"));
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, format!("{spec_text}\nOne more sentence.\n")).unwrap();
    run_part(&root, "other-digest", &plan, Some("slice:2/2"), &[]);
    std::fs::write(&spec, &spec_text).unwrap();
    refused(
        &[base[0].clone(), receipt_file("other-digest", PROPERTY)],
        "is from another property digest than",
    );
    // Another bound, rng scheme, code identity: receipts (and rows, where rows carry the
    // field) as another tool or version would write them.
    for (key, value, rows, why) in [
        (
            "bound",
            json!("total>0"),
            true,
            "is from another bound than",
        ),
        (
            "rng",
            json!("chacha20-v9"),
            true,
            "is from another rng scheme than",
        ),
        (
            "code",
            json!("commit:0123456789abcdef0123456789abcdef01234567"),
            true,
            "is from another code identity (`code`) than",
        ),
    ] {
        let out = format!("other-{key}");
        run_part(&root, &out, &plan, Some("slice:2/2"), &[]);
        let file = receipt_file(&out, PROPERTY);
        let mut r = read(&root, &file);
        r[key] = value.clone();
        write(&root, &file, &r);
        if rows {
            edit_rows(&root, &file, key, &value);
        }
        refused(&[base[0].clone(), file], why);
    }
    // Another runner role.
    run_part(&root, "other-runner", &plan, Some("slice:2/2"), &[]);
    let file = receipt_file("other-runner", PROPERTY);
    let mut r = read(&root, &file);
    r["runner"] = json!("remote");
    write(&root, &file, &r);
    edit_rows(&root, &file, "runner", &json!("remote"));
    refused(&[base[0].clone(), file], "is from another runner than");
    // A part record that says another part than its seeds are, or whose plan does not match
    // its digest, or whose attempted seeds skip one of its planned seeds.
    run_part(&root, "wrong-index", &plan, Some("slice:1/2"), &[]);
    let file = receipt_file("wrong-index", PROPERTY);
    let mut r = read(&root, &file);
    r["partition"]["index"] = json!(2);
    write(&root, &file, &r);
    refused(
        &[base[0].clone(), file],
        "says it is part slice:2/2 but its planned seeds are not that part of the plan",
    );
    run_part(&root, "bad-digest", &plan, Some("slice:1/2"), &[]);
    let file = receipt_file("bad-digest", PROPERTY);
    let mut r = read(&root, &file);
    r["partition"]["plan_first"] = json!(2);
    write(&root, &file, &r);
    refused(
        &[file, base[1].clone()],
        "its partition record is inconsistent: the plan's seeds do not have its plan_digest",
    );
    run_part(&root, "skipped", &plan, Some("slice:1/2"), &[]);
    let file = receipt_file("skipped", PROPERTY);
    let mut r = read(&root, &file);
    // Planned 1, 3, 5, ...: attempted without 3, and its row gone too (so the part agrees
    // with its rows).
    r["attempted_seeds"] = json!([1, 5, 7, 9, 11]);
    r["verdicts"] = json!(".....");
    write(&root, &file, &r);
    let rows_file = root
        .path()
        .join(format!("skipped/local/{PROPERTY}.witness.jsonl"));
    let rows: String = std::fs::read_to_string(&rows_file)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"seed\":3,"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&rows_file, rows).unwrap();
    refused(
        &[file, base[1].clone()],
        "its attempted seeds are not a prefix of its planned seeds",
    );
    // Another plan.
    run_part(
        &root,
        "other-plan",
        &["--cases", "13"],
        Some("slice:2/2"),
        &[],
    );
    refused(
        &[base[0].clone(), receipt_file("other-plan", PROPERTY)],
        "is from another plan than",
    );
    // Mixed kinds and totals.
    run_part(&root, "other-kind", &plan, Some("hash:2/2"), &[]);
    refused(
        &[base[0].clone(), receipt_file("other-kind", PROPERTY)],
        "is from another partition kind than",
    );
    run_part(&root, "other-total", &plan, Some("slice:2/3"), &[]);
    refused(
        &[base[0].clone(), receipt_file("other-total", PROPERTY)],
        "is from another number of parts than",
    );
    // The same part twice: two runs of it, or one file given twice.
    run_part(&root, "again", &plan, Some("slice:1/2"), &[]);
    refused(
        &[
            base[0].clone(),
            base[1].clone(),
            receipt_file("again", PROPERTY),
        ],
        &format!(
            "part slice:1/2 is given twice: `{}` and `{}`",
            base[0],
            receipt_file("again", PROPERTY)
        ),
    );
    refused(&[base[0].clone(), base[0].clone()], "is given twice");
    // Not a part at all.
    run_part(&root, "whole", &plan, None, &[]);
    refused(
        &[receipt_file("whole", PROPERTY)],
        "is not a part of a split plan",
    );
    // A part whose receipt was edited so that it disagrees with its own rows.
    let mut edited = read(&root, &base[1]);
    edited["verdicts"] = json!("F".repeat(6));
    write(&root, &base[1], &edited);
    refused(&base, "disagrees with its witness rows");

    // Bad files: exit 2, naming the file; nothing written.
    std::fs::write(root.path().join("junk.receipt.json"), "{ not json").unwrap();
    for (file, named) in [
        ("junk.receipt.json", "junk.receipt.json"),
        ("absent.receipt.json", "absent.receipt.json"),
    ] {
        let run = merge(&root, &[base[0].clone(), file.to_string()], "bad");
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(named), "{}", run.stderr);
        assert!(!root.path().join("bad").exists());
    }
    std::fs::remove_file(
        root.path()
            .join(format!("base-1/local/{PROPERTY}.witness.jsonl")),
    )
    .unwrap();
    let run = merge(&root, &base, "bad");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(&format!("base-1/local/{PROPERTY}.witness.jsonl")),
        "{}",
        run.stderr
    );
}

/// A merged receipt and its merged witness file go through `prop reproduce`, `gate decide` and
/// `gate cite` as a single run's evidence does: the environment-dependent failure of
/// `order_receipt_roundtrip`, run as two parts in a git repository, is cited.
#[test]
fn a_merged_receipt_is_decided_and_cited_like_a_single_run() {
    let (root, base) = crate::freeze::repository();
    let property = "order_receipt_roundtrip";
    let env = [("ORDERS_LOCALE", "de_DE")];
    for m in 1..=2 {
        let part = format!("hash:{m}/2");
        let out = format!("part-{m}");
        let run = root.run_env(
            &[
                "prop",
                "run",
                "--property",
                property,
                "--seeds",
                "1093..=1096",
                "--patch-id",
                "pr-7",
                "--base",
                &base,
                "--out",
                &out,
                "--partition",
                &part,
            ],
            &env,
        );
        assert!(run.code <= 1, "{}", run.stderr);
    }
    let merged = root.run(&[
        "gate",
        "merge",
        "--out",
        "local",
        &format!("part-1/pr-7/{property}.receipt.json"),
        &format!("part-2/pr-7/{property}.receipt.json"),
    ]);
    assert_eq!(merged.code, 0, "{}\n{}", merged.stdout, merged.stderr);
    assert!(
        merged.stdout.contains(": freeze_eligible\n"),
        "{}",
        merged.stdout
    );
    let remote = root.run(&[
        "prop",
        "reproduce",
        "local",
        "--out",
        "remote",
        "--repeat",
        "1",
        "--base",
        &base,
    ]);
    assert_eq!(remote.code, 0, "{}\n{}", remote.stdout, remote.stderr);
    let witnesses = [
        format!("local/pr-7/{property}.witness.jsonl"),
        format!("remote/pr-7/{property}.witness.jsonl"),
    ];
    let decide = root.run(&[
        "gate",
        "decide",
        "--property",
        property,
        "--witnesses",
        &witnesses[0],
        &witnesses[1],
    ]);
    assert_eq!(decide.code, 0, "{}\n{}", decide.stdout, decide.stderr);
    assert!(
        decide
            .stdout
            .starts_with("stable signature across opposite verdicts\n"),
        "{}",
        decide.stdout
    );
    let cite = root.run(&[
        "gate",
        "cite",
        "--property",
        property,
        "--witnesses",
        &witnesses[0],
        &witnesses[1],
        "--receipts",
        &format!("local/pr-7/{property}.receipt.json"),
        "--expires-at",
        "2999-01-01T00:00:00Z",
    ]);
    assert_eq!(cite.code, 0, "{}\n{}", cite.stdout, cite.stderr);
    assert!(
        cite.stdout
            .contains("same-seed review: passed: fail `local-"),
        "{}",
        cite.stdout
    );
    assert!(cite.stdout.contains("` on seed 1094\n"), "{}", cite.stdout);
    assert!(
        cite.stdout.contains("citation written: "),
        "{}",
        cite.stdout
    );
    assert!(Path::new(&root.path().join("props/freezes")).exists());
}

/// `ci simulate --partitions 2` runs the workflow's matrix (two part runs), its merge job
/// (`ci merge`) and the jobs after it on the merged evidence; `ci merge` over a missing part
/// leaves the merged receipt open and says so (exit 1).
#[test]
fn ci_simulate_partitions_the_plan_and_merges_the_parts() {
    let root = Root::new();
    let run = root.run(&[
        "ci",
        "simulate",
        "--work",
        "sim",
        "--partitions",
        "2",
        "--seeds",
        "1..=40",
        "--property",
        PROPERTY,
        "--local-env",
        "ORDERS_DEMO_BUG=1",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for step in [
        "== the local runner, part 1 of 2 (one matrix job)\n",
        "ORDERS_DEMO_BUG=1 cargo xtask prop run --runner local --patch-id ci-simulate --out sim/parts/2 --seeds 1..=40 --property order_total_nonneg --partition slice:2/2\n",
        "$ cargo xtask ci merge --patch-id ci-simulate --out sim/local sim/parts/1 sim/parts/2\n",
        "merged 2 of 2 parts of order_total_nonneg (40 of 40 planned seeds attempted) into sim/local/ci-simulate/order_total_nonneg.receipt.json\n",
        "$ cargo xtask prop reproduce sim/local --out sim/remote --runner remote\n",
        "sim/local/ci-simulate/order_total_nonneg.receipt.json: freeze_eligible\n",
        "stable signature across opposite verdicts\n",
    ] {
        assert!(run.stdout.contains(step), "{step}\n{}", run.stdout);
    }
    let gap = root.run(&["ci", "merge", "--out", "gap", "sim/parts/2"]);
    assert_eq!(gap.code, 1, "{}\n{}", gap.stdout, gap.stderr);
    assert!(
        gap.stdout
            .contains("open: part slice:1/2 missing: 20 planned seeds never attempted\n"),
        "{}",
        gap.stdout
    );
    let none = root.run(&["ci", "merge", "--out", "none", "sim/remote"]);
    assert_eq!(none.code, 2);
    assert!(none.stderr.contains("no part receipts"), "{}", none.stderr);
}
