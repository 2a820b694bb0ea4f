//! `cargo xtask bench shrink --canonical`: how often the same bug, reached from different
//! seeds, shrinks to the same minimal input.
//!
//! Each task is a property with a planted bug whose failing inputs are scattered (the
//! failure is not monotone in any one choice), the kind of bug where a shrinker stops at a
//! local minimum that depends on where it started. For each task and each starting point
//! `i`, the seeds `i * 1_000_000 ..` run in order and the first failing one is shrunk once
//! with the passes as they were before the canonicalisation stage ([`Passes::Classic`])
//! and once with every pass ([`Passes::Canonical`]). Per task and pass set the report
//! prints the number of distinct minimal inputs, the share of starting points reaching the
//! most common one (the canonical-minimal rate), and the mean evaluations and wall time of
//! a shrink.

use super::ShrinkBenchArgs;
use seedledger_runner::engine::{Judging, Passes, ShrinkPass, evaluate, execute, shrink_with};
use seedledger_runner::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use std::time::Duration;

type Regex = seedledger_runner::generators::pattern::RegexGen;

static BASE64: LazyLock<Option<Regex>> =
    LazyLock::new(|| string_matching("[a-zA-Z0-9+/=]{8}").ok());
static IPV4: LazyLock<Option<Regex>> =
    LazyLock::new(|| string_matching(r"[0-9]{1,3}(\.[0-9]{1,3}){3}").ok());
static CODE: LazyLock<Option<Regex>> = LazyLock::new(|| string_matching("[a-d]{6}").ok());

/// The generator of a pattern compiled once, or the failure to say it did not compile.
fn pattern(lazy: &'static LazyLock<Option<Regex>>) -> Result<&'static Regex, PropError> {
    lazy.as_ref()
        .ok_or_else(|| PropError::assertion("pattern", "does not compile".to_string()))
}

pub(super) struct Task {
    pub(super) name: &'static str,
    property: Property,
}

/// What one pass set did on one task.
#[derive(Default)]
struct Tally {
    minimal: BTreeMap<String, u64>,
    evaluations: u64,
    time: Duration,
    shrinks: u64,
}

impl Tally {
    fn add(&mut self, pass: &ShrinkPass) {
        *self.minimal.entry(pass.drawn.join("; ")).or_default() += 1;
        self.evaluations += pass.evaluations;
        self.time += pass.elapsed;
        self.shrinks += 1;
    }

    /// The most common minimal input and how many starting points reached it.
    fn canonical(&self) -> (&str, u64) {
        self.minimal
            .iter()
            .max_by_key(|&(_, &n)| n)
            .map_or(("-", 0), |(m, &n)| (m.as_str(), n))
    }

    fn cells(&self) -> String {
        let (_, top) = self.canonical();
        let n = self.shrinks.max(1);
        format!(
            "{:>5} {:>6.0}% {:>7.0} {:>7.2}",
            self.minimal.len(),
            100.0 * top as f64 / n as f64,
            self.evaluations as f64 / n as f64,
            self.time.as_secs_f64() * 1000.0 / n as f64
        )
    }
}

pub(super) fn run(args: &ShrinkBenchArgs, config: &ShrinkConfig) {
    let fixture = Fixture::new(Vec::new());
    outln!(
        "canonical minimal inputs: {} starting points per task, first failure of a plan of {} seeds, shrunk once per pass set",
        args.starts,
        args.plan
    );
    outln!(
        "{:<18} {:>5} | {:>5} {:>7} {:>7} {:>7} | {:>5} {:>7} {:>7} {:>7}",
        "",
        "",
        "classic",
        "",
        "",
        "",
        "canonical",
        "",
        "",
        ""
    );
    outln!(
        "{:<18} {:>5} | {:>5} {:>7} {:>7} {:>7} | {:>5} {:>7} {:>7} {:>7}",
        "task",
        "found",
        "dist",
        "canon",
        "evals",
        "ms",
        "dist",
        "canon",
        "evals",
        "ms"
    );
    let (mut all_before, mut all_after) = (Tally::default(), Tally::default());
    let mut rates = (0.0, 0.0, 0usize);
    for task in tasks() {
        if !args.problem.is_empty() && !args.problem.iter().any(|n| n == task.name) {
            continue;
        }
        let (mut before, mut after) = (Tally::default(), Tally::default());
        let mut found = 0;
        for start in args.start_at..args.start_at + args.starts {
            let Some((choices, signature)) =
                first_failure(&task.property, &fixture, start * 1_000_000, args.plan)
            else {
                continue;
            };
            found += 1;
            for (passes, tally) in [
                (Passes::Classic, &mut before),
                (Passes::Canonical, &mut after),
            ] {
                let pass = shrink_with(
                    &task.property,
                    &fixture,
                    &choices,
                    &signature,
                    config,
                    Judging::Once,
                    passes,
                );
                tally.add(&pass);
            }
        }
        outln!(
            "{:<18} {:>5} | {} | {}",
            task.name,
            found,
            before.cells(),
            after.cells()
        );
        if args.verbose {
            for (label, tally) in [("classic", &before), ("canonical", &after)] {
                for (m, n) in &tally.minimal {
                    outln!("    {label:<9} {n:>4} x {m}");
                }
            }
        }
        if found > 0 {
            rates.0 += before.canonical().1 as f64 / found as f64;
            rates.1 += after.canonical().1 as f64 / found as f64;
            rates.2 += 1;
        }
        for (from, into) in [(&before, &mut all_before), (&after, &mut all_after)] {
            into.evaluations += from.evaluations;
            into.time += from.time;
            into.shrinks += from.shrinks;
        }
    }
    let tasks = rates.2.max(1) as f64;
    let per = |t: &Tally| {
        let n = t.shrinks.max(1) as f64;
        (t.evaluations as f64 / n, t.time.as_secs_f64() * 1000.0 / n)
    };
    let ((eb, tb), (ea, ta)) = (per(&all_before), per(&all_after));
    outln!(
        "mean canonical rate: classic {:.0}%, canonical {:.0}%; evaluations per shrink {:.0} -> {:.0} ({:.2}x); ms per shrink {:.2} -> {:.2} ({:.2}x)",
        100.0 * rates.0 / tasks,
        100.0 * rates.1 / tasks,
        eb,
        ea,
        ea / eb.max(1.0),
        tb,
        ta,
        ta / tb.max(1e-9)
    );
}

/// The first failing seed of the plan from `base`: its recorded choices and signature.
fn first_failure(
    property: &Property,
    fixture: &Fixture,
    base: u64,
    plan: u64,
) -> Option<(Vec<u64>, String)> {
    let seed = (base..base + plan).find(|&seed| {
        let mut tc = TestCase::random(seed);
        matches!(
            execute(property, &mut tc, fixture),
            seedledger_runner::engine::Outcome::Fail(_)
        )
    })?;
    let eval = evaluate(property, TestCase::recording(seed), fixture);
    let signature = eval.outcome.failure()?.signature.clone();
    Some((eval.record.choices, signature))
}

pub(super) fn tasks() -> Vec<Task> {
    let t = |name, test| Task {
        name,
        property: Property::new(name, test),
    };
    vec![
        t("float_trailing_zero", float_trailing_zero),
        t("float_digits", float_digits),
        t("float_f32_roundtrip", float_f32_roundtrip),
        t("float_cents", float_cents),
        t("regex_base64", regex_base64),
        t("fixed_substring", fixed_substring),
        t("percent_escape", percent_escape),
        t("gcd_pair", gcd_pair),
        t("u8_sum", u8_sum),
        t("bst_ops", bst_ops),
        t("nested_dedup", nested_dedup),
        // Hold-outs, written after the passes and run once, untuned.
        t("month_days", month_days),
        t("ipv4_octal", ipv4_octal),
        t("float_tenths", float_tenths),
    ]
}

// ---------------------------------------------------------------- floats

/// A shortest-representation formatter that strips trailing zeros from integers too
/// (`100` prints as `1`): every nonzero multiple of 10 fails, and large floats whose
/// shortest digits end in zeros.
fn float_trailing_zero(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&any_f64());
    if !x.is_finite() {
        return Ok(());
    }
    let s = format!("{x}");
    let buggy = if s.contains('.') || x == 0.0 {
        s.clone()
    } else {
        s.trim_end_matches('0').to_string()
    };
    prop_assert!(
        buggy.parse::<f64>().ok() == Some(x),
        "{s} printed as {buggy}"
    );
    Ok(())
}

/// A formatter with 15 significant digits (`{:.14e}`): a value that needs 16 or 17 does not
/// come back. The least in the generator's order is the integer 1000000000000001.
fn float_digits(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&f64_in(-1e300..=1e300));
    let s = format!("{x:.14e}");
    prop_assert!(s.parse::<f64>().ok() == Some(x), "{x} printed as {s}");
    Ok(())
}

/// A value stored as `f32` and read back: anything `f32` cannot hold exactly fails.
fn float_f32_roundtrip(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(any_f64(), 1..=3));
    for &x in &xs {
        if x.is_finite() && x.abs() < 1e30 {
            prop_assert!(f64::from(x as f32) == x, "{x}");
        }
    }
    Ok(())
}

/// Money rounded to cents: `round(x * 100) / 100` must give `x` back.
fn float_cents(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&f64_in(0.0..=1000.0));
    prop_assert!((x * 100.0).round() / 100.0 == x, "{x}");
    Ok(())
}

// ---------------------------------------------------------------- strings

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Strict base64 decoding (padding only at the very end, zero trailing bits), or a buggy
/// decoder that also accepts a padded quad in the middle.
fn decode(s: &str, buggy: bool) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::new();
    for (q, quad) in bytes.chunks(4).enumerate() {
        let last = (q + 1) * 4 == bytes.len();
        let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && !last && !buggy) {
            return None;
        }
        let mut acc = 0u32;
        for &b in &quad[..4 - pad] {
            acc = acc << 6 | B64.iter().position(|&c| c == b)? as u32;
        }
        let (bits, keep) = match pad {
            0 => (24, 3),
            1 => (18, 2),
            _ => (12, 1),
        };
        let drop = bits - 8 * keep;
        if acc & ((1 << drop) - 1) != 0 {
            return None;
        }
        let acc = acc >> drop;
        for k in (0..keep).rev() {
            out.push((acc >> (8 * k)) as u8);
        }
    }
    Some(out)
}

/// A base64 decoder that accepts padding in the middle of its input (`"aac=aaaa"`), drawn
/// from a regex of 8 base64 characters.
fn regex_base64(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(pattern(&BASE64)?);
    prop_assert!(decode(&s, true) == decode(&s, false), "{s}");
    Ok(())
}

/// A fixed-length code must not contain `"db"`: the least is `"aaaadb"`, the substring
/// at the end, wherever it was found.
fn fixed_substring(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(pattern(&CODE)?);
    prop_assert!(!s.contains("db"), "{s}");
    Ok(())
}

/// A percent-encoder that forgets four reserved characters: any string holding one fails;
/// the least is the one of the four that comes first in the character order (`"#"`).
fn percent_escape(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_of(char_any(), 0..=12));
    let encoded: String = s
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' | '~' => c.to_string(),
            '#' | '&' | '+' | '?' => c.to_string(),
            c => format!("%{:X}", u32::from(c)),
        })
        .collect();
    let reserved = encoded.chars().any(|c| "#&+?".contains(c));
    prop_assert!(!reserved, "{s:?} encoded as {encoded:?}");
    Ok(())
}

// ---------------------------------------------------------------- integers and lists

/// A binary gcd whose shared-factor-of-two step is wrong when both are divisible by 4.
fn gcd_pair(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let a = tc.draw(&int(0..=1000u32));
    let b = tc.draw(&int(0..=1000u32));
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    fn buggy(a: u32, b: u32) -> u32 {
        if a > 0 && b > 0 && a.is_multiple_of(4) && b.is_multiple_of(4) && (a / 4 + b / 4) % 3 == 1
        {
            2 * buggy(a / 4, b / 4)
        } else {
            gcd(a, b)
        }
    }
    prop_assert!(buggy(a, b) == gcd(a, b), "{a} {b}");
    Ok(())
}

/// A byte checksum that overflows: a `u8` sum wraps past 255.
fn u8_sum(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=200u8), 0..=10));
    let wrapped = xs.iter().fold(0u8, |a, &x| a.wrapping_add(x));
    let total: u32 = xs.iter().map(|&x| u32::from(x)).sum();
    prop_assert!(u32::from(wrapped) == total % 256 && total < 256);
    Ok(())
}

/// A binary search tree whose delete of a node with two children drops the right subtree's
/// other keys, checked against a set after a sequence of inserts and deletes.
fn bst_ops(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let ops = tc.draw(&vec((boolean(), int(0..=15u8)), 0..=16));
    let mut tree: Vec<u8> = Vec::new(); // keys in insertion order (the tree's shape)
    let mut model = BTreeSet::new();
    for &(insert, k) in &ops {
        if insert {
            if model.insert(k) {
                tree.push(k);
            }
        } else if model.remove(&k) {
            let pos = tree.iter().position(|&x| x == k).unwrap_or(0);
            let root = tree[pos];
            // The bug: with keys both below and above `k` inserted after it, the keys above
            // the smallest one above are lost.
            let below = tree[pos + 1..].iter().any(|&x| x < root);
            let above: Vec<u8> = tree[pos + 1..]
                .iter()
                .copied()
                .filter(|&x| x > root)
                .collect();
            tree.remove(pos);
            if below && above.len() > 1 {
                let keep = *above.iter().min().unwrap_or(&0);
                tree.retain(|&x| x <= root || x == keep);
            }
        }
    }
    let mut got = tree.clone();
    got.sort_unstable();
    let want: Vec<u8> = model.into_iter().collect();
    prop_assert!(got == want, "{got:?} != {want:?}");
    Ok(())
}

/// A dedup of inner lists that compares only their first elements.
fn nested_dedup(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xss = tc.draw(&vec(vec(int(0..=9u8), 0..=4), 0..=5));
    let mut buggy: Vec<&Vec<u8>> = Vec::new();
    for xs in &xss {
        if !buggy.iter().any(|ys| ys.first() == xs.first()) {
            buggy.push(xs);
        }
    }
    let mut right: Vec<&Vec<u8>> = Vec::new();
    for xs in &xss {
        if !right.contains(&xs) {
            right.push(xs);
        }
    }
    prop_assert!(buggy.len() == right.len());
    Ok(())
}

// ---------------------------------------------------------------- hold-outs

/// Days in a month that forgets the parity flip after July.
fn month_days(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let m = tc.draw(&int(1..=12u32));
    let d = tc.draw(&int(1..=31u32));
    let real = match m {
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let buggy = match m {
        2 => 28,
        m if m.is_multiple_of(2) => 30,
        _ => 31,
    };
    prop_assert!((d <= real) == (d <= buggy), "{m}-{d}");
    Ok(())
}

/// An IPv4 parser that reads an octet with a leading zero as octal.
fn ipv4_octal(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(pattern(&IPV4)?);
    for octet in s.split('.') {
        let right = octet.parse::<u32>().ok();
        let buggy = if octet.len() > 1 && octet.starts_with('0') {
            u32::from_str_radix(octet, 8).ok()
        } else {
            right
        };
        prop_assert!(buggy == right, "{s}");
    }
    Ok(())
}

/// Rounding to tenths by `floor`: any value with more than one decimal digit fails.
fn float_tenths(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&f64_in(0.0..=100.0));
    prop_assert!((x * 10.0).floor() / 10.0 == x, "{x}");
    Ok(())
}
