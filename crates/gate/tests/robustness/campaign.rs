//! The campaign driver: case numbers, per-case seeds, threads, tallies, findings.
//!
//! Case `n` of campaign `name` draws from the seed `case_seed(name, n)` alone, so a failing
//! case is replayed with `SEEDLEDGER_FUZZ_CASE=<n>` and the test's name. Every product call
//! runs under `catch_unwind` ([`Ctx::guard`]); a panic is a finding like any other. Findings
//! are collected, not raised one by one, so a large run reports every kind it met with a few
//! examples of each, and then fails.

use crate::generate::Rng;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Total reader inputs of the default run (see the test file's header).
pub const DEFAULT_INPUTS: u64 = 24_000;

/// How many inputs the whole campaign feeds its readers: `SEEDLEDGER_FUZZ_CASES`, or the
/// default.
pub fn total_inputs() -> u64 {
    std::env::var("SEEDLEDGER_FUZZ_CASES")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(DEFAULT_INPUTS)
}

/// The one case to replay, if any.
pub fn only_case() -> Option<u64> {
    std::env::var("SEEDLEDGER_FUZZ_CASE")
        .ok()
        .and_then(|s| s.parse().ok())
}

/// The seed of case `n` of campaign `name`.
pub fn case_seed(name: &str, n: u64) -> u64 {
    // FNV-1a of the name, then one SplitMix64 step with the case number mixed in.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Rng::new(h ^ n.wrapping_mul(0xd6e8_feb8_6659_fd93)).next_u64()
}

/// What went wrong in one case.
#[derive(Debug, Clone)]
pub struct Finding {
    /// `panic`, `fail-open`, `differs`, `misread`, `metamorphic`, `test-bug`.
    pub kind: &'static str,
    pub reader: &'static str,
    /// What differed, e.g. `impl seed_gap, oracle incomplete_fields`.
    pub what: String,
    pub case: u64,
    pub seed: u64,
    /// The input, escaped and shortened.
    pub input: String,
}

impl Finding {
    /// What kind of disagreement this is, without the values: the part of `what` before
    /// its first colon.
    pub fn class(&self) -> &str {
        self.what.split(':').next().unwrap_or("")
    }
}

/// Counters and findings of a campaign (or one thread of it).
#[derive(Default)]
pub struct Tally {
    /// `reader` -> inputs it was given.
    pub inputs: BTreeMap<&'static str, u64>,
    /// `reader` -> `answer` -> how often.
    pub answers: BTreeMap<&'static str, BTreeMap<String, u64>>,
    /// Agreements of note that are not findings (e.g. a product reader stricter than SPEC).
    pub notes: BTreeMap<String, u64>,
    pub findings: Vec<Finding>,
    /// Findings per `kind reader what-class`, including those not kept as examples.
    pub finding_counts: BTreeMap<String, u64>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        for (k, v) in other.inputs {
            *self.inputs.entry(k).or_default() += v;
        }
        for (r, m) in other.answers {
            let mine = self.answers.entry(r).or_default();
            for (k, v) in m {
                *mine.entry(k).or_default() += v;
            }
        }
        for (k, v) in other.notes {
            *self.notes.entry(k).or_default() += v;
        }
        for (k, v) in other.finding_counts {
            *self.finding_counts.entry(k).or_default() += v;
        }
        for f in other.findings {
            self.keep(f);
        }
    }

    fn keep(&mut self, f: Finding) {
        let same = self
            .findings
            .iter()
            .filter(|it| it.kind == f.kind && it.reader == f.reader && it.class() == f.class())
            .count();
        if same < 3 {
            self.findings.push(f);
        }
    }

    /// How often `reader` answered `answer`.
    pub fn answered(&self, reader: &str, answer: &str) -> u64 {
        self.answers
            .get(reader)
            .and_then(|m| m.get(answer))
            .copied()
            .unwrap_or(0)
    }
}

/// The context of one case: where its counts and findings go.
pub struct Ctx<'a> {
    pub tally: &'a mut Tally,
    pub case: u64,
    pub seed: u64,
    pub verbose: bool,
}

impl Ctx<'_> {
    /// Counts one input given to `reader`, and the answer it gave.
    pub fn input(&mut self, reader: &'static str, answer: &str) {
        *self.tally.inputs.entry(reader).or_default() += 1;
        *self
            .tally
            .answers
            .entry(reader)
            .or_default()
            .entry(answer.to_string())
            .or_default() += 1;
        if self.verbose {
            eprintln!("  {reader}: {answer}");
        }
    }

    pub fn note(&mut self, what: &str) {
        *self.tally.notes.entry(what.to_string()).or_default() += 1;
    }

    /// Records a finding about `input`.
    pub fn finding(
        &mut self,
        kind: &'static str,
        reader: &'static str,
        what: String,
        input: &[u8],
    ) {
        let class = what.split(':').next().unwrap_or("").to_string();
        *self
            .tally
            .finding_counts
            .entry(format!("{kind} {reader}: {class}"))
            .or_default() += 1;
        if self.verbose {
            eprintln!(
                "  FINDING {kind} {reader}: {what}\n  input: {}",
                input.escape_ascii()
            );
        }
        let f = Finding {
            kind,
            reader,
            what,
            case: self.case,
            seed: self.seed,
            input: excerpt(input),
        };
        self.tally.keep(f);
    }

    /// Runs a product call under `catch_unwind`; a panic is a finding and `None`.
    pub fn guard<T>(
        &mut self,
        reader: &'static str,
        input: &[u8],
        call: impl FnOnce() -> T,
    ) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(call)) {
            Ok(v) => Some(v),
            Err(e) => {
                let message = panic_message(&*e);
                self.finding("panic", reader, format!("panic: {message}"), input);
                None
            }
        }
    }
}

fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// `bytes` as an escaped string of at most a few hundred characters.
pub fn excerpt(bytes: &[u8]) -> String {
    let text: String = bytes.escape_ascii().to_string();
    if text.len() > 400 {
        let mut end = 300;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} bytes)", &text[..end], bytes.len())
    } else {
        text
    }
}

/// Runs `cases` cases of campaign `name` (or only `SEEDLEDGER_FUZZ_CASE`), on every core
/// when there are many, and returns the merged tally.
pub fn run(name: &'static str, cases: u64, case: impl Fn(&mut Rng, &mut Ctx<'_>) + Sync) -> Tally {
    if let Some(n) = only_case() {
        let mut tally = Tally::default();
        eprintln!(
            "{name}: replaying case {n} (seed {:#018x})",
            case_seed(name, n)
        );
        one(name, n, &case, &mut tally, true);
        return tally;
    }
    let threads = if cases >= 20_000 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        1
    } as u64;
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    std::thread::scope(|scope| {
        let case = &case;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    let mut n = t;
                    while n < cases {
                        one(name, n, case, &mut tally, false);
                        n += threads;
                    }
                    tally
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(t) => tally.merge(t),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    });
    eprintln!(
        "{name}: {cases} cases in {:.2} s on {threads} thread(s)",
        started.elapsed().as_secs_f64()
    );
    tally
}

fn one(
    name: &'static str,
    n: u64,
    case: &(impl Fn(&mut Rng, &mut Ctx<'_>) + Sync),
    tally: &mut Tally,
    verbose: bool,
) {
    let seed = case_seed(name, n);
    let mut g = Rng::new(seed);
    let res = {
        let mut ctx = Ctx {
            tally,
            case: n,
            seed,
            verbose,
        };
        catch_unwind(AssertUnwindSafe(|| case(&mut g, &mut ctx))).map_err(|e| panic_message(&*e))
    };
    if let Err(message) = res {
        let mut ctx = Ctx {
            tally,
            case: n,
            seed,
            verbose,
        };
        ctx.finding(
            "test-bug",
            name,
            format!("the check panicked: {message}"),
            b"",
        );
    }
}

/// Prints the tally and fails when there are findings, naming a replay command for each
/// example. `test` is the test function's name.
pub fn report(name: &str, test: &str, tally: &Tally) {
    eprintln!("{name}: inputs per reader: {:?}", tally.inputs);
    for (reader, answers) in &tally.answers {
        eprintln!("{name}: {reader}: {answers:?}");
    }
    if !tally.notes.is_empty() {
        eprintln!("{name}: notes: {:?}", tally.notes);
    }
    if tally.findings.is_empty() {
        eprintln!("{name}: no panics, no fail-open answers, no disagreements");
        return;
    }
    let mut text = format!("{name}: findings: {:#?}\n", tally.finding_counts);
    for f in &tally.findings {
        text.push_str(&format!(
            "\n[{} in {}] {}\n  case {} (seed {:#018x}); replay: SEEDLEDGER_FUZZ_CASE={} cargo test -p seedledger-gate --test robustness {test} -- --nocapture\n  input: {}\n",
            f.kind, f.reader, f.what, f.case, f.seed, f.case, f.input
        ));
    }
    panic!("{text}");
}
