//! `cargo xtask bench shrink`: shrink quality on the public shrinking-challenge problems.
//!
//! For each problem and each starting point `i`, the seeds `i * 1_000_000 ..` (a plan of
//! `--plan` seeds) run in order on the fast path; the first failing seed is re-run recording
//! its choices and shrunk twice with [`shrink_twice`]. The table reports, per problem: the
//! share of starting points that found a failure, the share whose minimal input is the ideal
//! one, the number of distinct minimal inputs, evaluations of the first pass (median / p95 /
//! max), its cache hits (median), the wall time (search and both shrinks), the share of
//! stable shrinks, and the median number of seeds run until the first failure. Problems
//! below the line are generality checks the passes were not tuned on.

use seedledger_format::ExitStatus;
use seedledger_runner::{
    BoxedGen, DEFAULT_MAX_SIZE, Fixture, Gen, Outcome, PropResult, Property, ShrinkConfig,
    ShrinkReport, TestCase, any_int, char_in, evaluate, execute, int, one_of, prop_assert,
    prop_assert_eq, recursive, shrink_twice, string_of, vec,
};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Measures shrink quality. Build in release mode for meaningful times:
/// `cargo run --release -p xtask -- bench shrink`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Times are meaningful only in release mode: cargo run --release -p xtask -- bench shrink"
)]
pub struct ShrinkBenchArgs {
    /// Independent starting points per problem.
    #[arg(long, default_value_t = 100)]
    starts: u64,
    /// Index of the first starting point (to rerun one: `--start-at 17 --starts 1`).
    #[arg(long, default_value_t = 0)]
    start_at: u64,
    /// Seeds in each starting point's plan (the first failing one is shrunk).
    #[arg(long, default_value_t = 10_000)]
    plan: u64,
    /// Run only the named problem (repeatable); see the table for names.
    #[arg(long)]
    problem: Vec<String>,
    /// Evaluation budget of each shrink pass (default: the runner's default).
    #[arg(long)]
    max_evaluations: Option<u64>,
    /// Time budget of each shrink pass, in milliseconds (default: the runner's default).
    #[arg(long)]
    max_time_ms: Option<u64>,
    /// Also print every distinct minimal input with its count.
    #[arg(long)]
    verbose: bool,
}

struct Problem {
    name: &'static str,
    property: Property,
    ideal: fn(&str) -> bool,
    /// A generality check (not one of the challenge problems).
    extra: bool,
}

pub fn run(args: ShrinkBenchArgs) -> ExitStatus {
    let mut config = ShrinkConfig::default();
    if let Some(n) = args.max_evaluations {
        config.max_evaluations = n;
    }
    if let Some(ms) = args.max_time_ms {
        config.max_time = Duration::from_millis(ms);
    }
    let problems = problems();
    for name in &args.problem {
        if !problems.iter().any(|p| p.name == name) {
            let names: Vec<_> = problems.iter().map(|p| p.name).collect();
            errln!(
                "error: unknown problem `{name}` (known: {})",
                names.join(", ")
            );
            return ExitStatus::Error;
        }
    }
    if cfg!(debug_assertions) {
        errln!(
            "note: unoptimised build; for meaningful times run `cargo run --release -p xtask -- bench shrink`"
        );
    }
    outln!(
        "shrink benchmark: {} starting points x plan of {} seeds; budget {} evaluations / {:?} per pass",
        args.starts,
        args.plan,
        config.max_evaluations,
        config.max_time
    );
    outln!(
        "{:<18} {:>6} {:>6} {:>8} {:>17} {:>9} {:>8} {:>7} {:>10}",
        "problem",
        "found",
        "ideal",
        "distinct",
        "evals med/p95/max",
        "hits med",
        "time s",
        "stable",
        "seeds med"
    );
    let fixture = Fixture::new(Vec::new());
    let mut separated = false;
    for problem in &problems {
        if !args.problem.is_empty() && !args.problem.iter().any(|n| n == problem.name) {
            continue;
        }
        if problem.extra && !separated {
            outln!("-- generality checks (passes not tuned on these) --");
            separated = true;
        }
        let row = measure(problem, &fixture, &args, &config);
        outln!(
            "{:<18} {:>6} {:>6} {:>8} {:>17} {:>9} {:>8.2} {:>7} {:>10}",
            problem.name,
            row.found,
            row.ideal,
            row.results.len(),
            format!(
                "{}/{}/{}",
                percentile(&row.evals, 50),
                percentile(&row.evals, 95),
                percentile(&row.evals, 100)
            ),
            percentile(&row.hits, 50),
            row.time.as_secs_f64(),
            row.stable,
            percentile(&row.seeds, 50),
        );
        if args.verbose {
            for (drawn, count) in &row.results {
                outln!("    {count:>4} x {drawn}");
            }
            for (drawn, choices) in &row.odd {
                outln!("    not ideal: {drawn}\n      choices: {choices:?}");
            }
            for stop in &row.stops {
                outln!("    stop: {stop}");
            }
        }
    }
    ExitStatus::Success
}

struct Row {
    found: u64,
    ideal: u64,
    stable: u64,
    evals: Vec<u64>,
    hits: Vec<u64>,
    /// Seeds run until the first failure, per starting point that found one.
    seeds: Vec<u64>,
    results: BTreeMap<String, u64>,
    /// Choices of the first non-ideal result of each kind (for `--verbose`).
    odd: BTreeMap<String, Vec<u64>>,
    stops: BTreeSet<String>,
    time: Duration,
}

fn measure(
    problem: &Problem,
    fixture: &Fixture,
    args: &ShrinkBenchArgs,
    config: &ShrinkConfig,
) -> Row {
    let started = Instant::now();
    let mut row = Row {
        found: 0,
        ideal: 0,
        stable: 0,
        evals: Vec::new(),
        hits: Vec::new(),
        seeds: Vec::new(),
        results: BTreeMap::new(),
        odd: BTreeMap::new(),
        stops: BTreeSet::new(),
        time: Duration::ZERO,
    };
    for start in args.start_at..args.start_at + args.starts {
        let base = start * 1_000_000;
        let Some((seed, report)) = first_failure_shrunk(problem, fixture, base, args.plan, config)
        else {
            continue;
        };
        row.seeds.push(seed - base + 1);
        row.found += 1;
        let drawn = report.first.drawn.join("; ");
        if (problem.ideal)(&drawn) {
            row.ideal += 1;
        } else {
            row.odd
                .entry(drawn.clone())
                .or_insert_with(|| report.first.choices.clone());
        }
        if report.stable {
            row.stable += 1;
        }
        row.evals.push(report.first.evaluations);
        row.hits.push(report.first.cache_hits);
        row.stops.insert(format!(
            "{} / {}",
            report.first.stop.as_str(),
            report.second.stop.as_str()
        ));
        if args.verbose && report.first.stop != seedledger_runner::ShrinkStop::FixedPoint {
            outln!(
                "    start {start}: stopped by {} after {} evaluations",
                report.first.stop.as_str(),
                report.first.evaluations
            );
        }
        *row.results.entry(drawn).or_default() += 1;
    }
    row.time = started.elapsed();
    row
}

/// Runs the plan from `base` and shrinks the first failing seed.
fn first_failure_shrunk(
    problem: &Problem,
    fixture: &Fixture,
    base: u64,
    plan: u64,
    config: &ShrinkConfig,
) -> Option<(u64, ShrinkReport)> {
    let property = &problem.property;
    let seed = (base..base + plan).find(|&seed| {
        let mut tc = TestCase::random(seed);
        matches!(execute(property, &mut tc, fixture), Outcome::Fail(_))
    })?;
    let eval = evaluate(property, TestCase::recording(seed), fixture);
    let signature = eval.outcome.failure()?.signature.clone();
    let report = shrink_twice(property, fixture, &eval.record.choices, &signature, config);
    Some((seed, report))
}

fn percentile(values: &[u64], p: usize) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let at = ((v.len() - 1) * p).div_ceil(100);
    v[at.min(v.len() - 1)]
}

// ---------------------------------------------------------------- problems

fn problems() -> Vec<Problem> {
    let p = |name, test, ideal, extra| Problem {
        name,
        property: Property::new(name, test),
        ideal,
        extra,
    };
    vec![
        p(
            "reverse",
            reverse,
            |d| d == "[0, 1]" || d == "[1, 0]",
            false,
        ),
        p("lengthlist", lengthlist, |d| d == "[900]", false),
        p(
            "nestedlists",
            nestedlists,
            |d| d == "[[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]",
            false,
        ),
        p(
            "distinct",
            distinct,
            |d| is_permutation(d, &[0, 1, -1], false),
            false,
        ),
        p(
            "large_union_list",
            large_union_list,
            |d| is_permutation(d, &[0, 1, -1, 2, -2], true),
            false,
        ),
        p("difference1", difference1, |d| d == "10; 10", false),
        p("difference2", difference2, |d| d == "10; 6", false),
        p("difference3", difference3, |d| d == "10; 9", false),
        p("sum_exceeds", sum_exceeds, |d| d == "[1, 1000]", true),
        p(
            "calculator",
            calculator,
            |d| d == "Div(Lit(0), Add(Lit(0), Lit(0)))",
            true,
        ),
        p("string_repeat", string_repeat, |d| d == "\"aa\"", true),
        p("filtered_sum", filtered_sum, |d| d == "[100]", true),
        p("sorted_list", sorted_list, |d| d == "[0, -1]", true),
        p(
            "distinct_strings",
            distinct_strings,
            |d| d == "[\"\", \"\"]",
            true,
        ),
        p("coupling", coupling, |d| d == "[1, 0]", true),
    ]
}

/// True when `drawn` is `[a, b, ...]` (or `[[a, b, ...]]` when `nested`) for a permutation
/// of `values`.
fn is_permutation(drawn: &str, values: &[i64], nested: bool) -> bool {
    let inner = if nested {
        drawn.strip_prefix("[[").and_then(|d| d.strip_suffix("]]"))
    } else {
        drawn.strip_prefix('[').and_then(|d| d.strip_suffix(']'))
    };
    let Some(inner) = inner else { return false };
    let mut got: Vec<i64> = Vec::new();
    for part in inner.split(", ") {
        match part.parse() {
            Ok(v) => got.push(v),
            Err(_) => return false,
        }
    }
    let mut want = values.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    got == want
}

fn i64_list() -> impl Gen<Value = Vec<i64>> {
    vec(any_int::<i64>(), 0..=DEFAULT_MAX_SIZE)
}

fn reverse(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&i64_list());
    let mut reversed = xs.clone();
    reversed.reverse();
    prop_assert_eq!(reversed, xs);
    Ok(())
}

fn lengthlist(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&int(1..=100u64).flat_map(|n| vec(int(0..=1000i64), n as usize)));
    prop_assert!(xs.iter().max().is_none_or(|&m| m < 900));
    Ok(())
}

fn nestedlists(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xss = tc.draw(&vec(i64_list(), 0..=DEFAULT_MAX_SIZE));
    prop_assert!(xss.iter().map(Vec::len).sum::<usize>() <= 10);
    Ok(())
}

fn distinct(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&i64_list());
    prop_assert!(xs.iter().collect::<BTreeSet<_>>().len() < 3);
    Ok(())
}

fn large_union_list(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xss = tc.draw(&vec(i64_list(), 0..=DEFAULT_MAX_SIZE));
    prop_assert!(xss.iter().flatten().collect::<BTreeSet<_>>().len() <= 4);
    Ok(())
}

fn positive_pair(tc: &mut TestCase) -> (i64, i64) {
    let x = tc.draw(&int(1..=i32::MAX));
    let y = tc.draw(&int(1..=i32::MAX));
    (i64::from(x), i64::from(y))
}

fn difference1(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let (x, y) = positive_pair(tc);
    prop_assert!(x < 10 || x != y);
    Ok(())
}

fn difference2(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let (x, y) = positive_pair(tc);
    prop_assert!(x < 10 || !(1..=4).contains(&(x - y).abs()));
    Ok(())
}

fn difference3(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let (x, y) = positive_pair(tc);
    prop_assert!(x < 10 || (x - y).abs() != 1);
    Ok(())
}

fn sum_exceeds(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=1000u32), 0..=DEFAULT_MAX_SIZE));
    prop_assert!(xs.iter().map(|&x| u64::from(x)).sum::<u64>() <= 1000);
    Ok(())
}

#[derive(Debug, Clone)]
enum Expr {
    Lit(i8),
    Add(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
}

fn expr() -> BoxedGen<Expr> {
    recursive(5, int(-10..=10i8).map(Expr::Lit).boxed(), |sub| {
        let add = (sub.clone(), sub.clone()).map(|(a, b)| Expr::Add(Box::new(a), Box::new(b)));
        let div = (sub.clone(), sub).map(|(a, b)| Expr::Div(Box::new(a), Box::new(b)));
        one_of(vec![add.boxed(), div.boxed()]).boxed()
    })
}

fn eval(e: &Expr) -> Option<i64> {
    match e {
        Expr::Lit(v) => Some(i64::from(*v)),
        Expr::Add(a, b) => Some(eval(a)? + eval(b)?),
        Expr::Div(a, b) => eval(a)?.checked_div(eval(b)?),
    }
}

fn divides_by_literal_zero(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => false,
        Expr::Add(a, b) => divides_by_literal_zero(a) || divides_by_literal_zero(b),
        Expr::Div(a, b) => {
            matches!(**b, Expr::Lit(0)) || divides_by_literal_zero(a) || divides_by_literal_zero(b)
        }
    }
}

/// The calculator challenge: excluding literal zero divisors does not exclude division by 0.
fn calculator(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let e = tc.draw(&expr());
    if !divides_by_literal_zero(&e) {
        prop_assert!(eval(&e).is_some(), "{e:?}");
    }
    Ok(())
}

fn string_repeat(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_of(char_in('a'..='z'), 0..=DEFAULT_MAX_SIZE));
    let chars: Vec<char> = s.chars().collect();
    prop_assert!(chars.windows(2).all(|w| w[0] != w[1]));
    Ok(())
}

fn filtered_sum(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(int(0..=1000u32).filter(|x| x % 3 == 1), 0..=10));
    prop_assert!(xs.iter().map(|&x| u64::from(x)).sum::<u64>() < 100);
    Ok(())
}

fn sorted_list(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&i64_list());
    prop_assert!(xs.windows(2).all(|w| w[0] <= w[1]));
    Ok(())
}

fn distinct_strings(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(&vec(string_of(char_in('a'..='z'), 0..=8), 0..=16));
    prop_assert!(xs.iter().collect::<BTreeSet<_>>().len() == xs.len());
    Ok(())
}

/// The coupling challenge: a list whose elements are indices into it (a list-level filter).
fn coupling(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let xs = tc.draw(
        &vec(int(0..=10u64), 0..=10).filter(|xs| xs.iter().all(|&j| (j as usize) < xs.len())),
    );
    for (i, &j) in xs.iter().enumerate() {
        if i < j as usize {
            prop_assert!(xs[j as usize] != i as u64);
        }
    }
    Ok(())
}
