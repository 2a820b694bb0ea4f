//! What a seed means, pinned for every public generator: for several seeds, the value each
//! generator draws and the raw choice sequence behind it, plus the constants that shape
//! generation. Any change to a generator's encoding or distribution — drawing `option`
//! biased, swapping two `char_any` ranks, `unit_f64` drawn uniformly, `FILTER_TRIES` 32 -> 31 —
//! changes this file's output and fails the test: such a change needs a new RNG scheme name
//! (a new `Scheme`), never a silent change of what recorded seeds mean.
//!
//! Each scheme has its expected text: `crates/runner/test_data/golden_generators.txt` for
//! `chacha8-v1` (frozen: its lines never change), `golden_generators_v2.txt` for
//! `chacha8-v2` and `golden_generators_v3.txt` for `chacha8-v3` (frozen too). After a deliberate change of meaning (with a new scheme name), write the new
//! scheme's file with
//! `SEEDLEDGER_BLESS=1 cargo test -p seedledger-runner --test golden_generators` (it never
//! rewrites the file of a scheme that exists) and review it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{
    Arbitrary, BoxedGen, DEFAULT_MAX_SIZE, FILTER_TRIES, Gen, MAX_CHOICES, Scheme, Stop, TestCase,
    any, any_f32, any_f64, any_int, boolean, btree_map, btree_set, char_any, char_in, f32_in,
    f64_in, from_fn, int, just, one_of, option, recursive, recursive_tree, select, string,
    string_matching, string_of, unit_f64, vec, vec_of, weighted,
};
use std::fmt::Write as _;

/// Seeds at the edges and in the middle of the seed space.
const SEEDS: [u64; 6] = [0, 1, 1101, 1102, 1 << 63, u64::MAX];

/// How many consecutive seeds each generator's bulk digest covers: a change of distribution
/// (a bias, two ranks swapped) that the few seeds shown happen to miss shows up there.
const BULK: u64 = 2000;

/// The golden text being written, and the scheme it is about.
struct Out {
    text: String,
    scheme: Scheme,
}

impl std::fmt::Write for Out {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

/// One line per seed of [`SEEDS`] (the value, then the recorded choices), then the SHA-256 of
/// the same lines for seeds `0..BULK`, under `out.scheme`. Every seed is also drawn on the main
/// run's fast path (`TestCase::random_with`, nothing recorded), which must give the same value:
/// the file pins both.
fn pin<G: Gen>(out: &mut Out, name: &str, g: &G) {
    let scheme = out.scheme;
    let line = |seed: u64| {
        let mut tc = TestCase::recording_with(scheme, seed);
        let value = outcome(|| tc.draw(g));
        let choices = tc.into_record().choices;
        let fast = outcome(|| TestCase::random_with(scheme, seed).draw(g));
        assert_eq!(
            fast, value,
            "{name}, seed {seed}, {scheme}: the fast path draws another value than the recording"
        );
        // A replay knows no scheme: the recorded choices mean the same value whichever
        // scheme recorded them (a shrink or `--minimal` replays them).
        let replayed = outcome(|| TestCase::replay(choices.clone(), false).draw(g));
        assert_eq!(
            replayed, value,
            "{name}, seed {seed}, {scheme}: the recorded choices replay to another value"
        );
        format!("{seed}: {value} <- {choices:?}\n")
    };
    let _ = writeln!(out, "## {name}");
    for seed in SEEDS {
        out.text.push_str(&line(seed));
    }
    let bulk: String = (0..BULK).map(line).collect();
    let _ = writeln!(
        out,
        "seeds 0..{BULK}: sha256 {}",
        seedledger_format::sha256_hex(bulk.as_bytes())
    );
}

/// `Debug` of the drawn value, or how the draw stopped (a filter that gave up, a replay
/// that ran out of choices): a stop is part of what a seed means too.
fn outcome<T: std::fmt::Debug>(draw: impl FnOnce() -> T) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(draw)) {
        Ok(v) => format!("{v:?}"),
        Err(payload) => match payload.downcast_ref::<Stop>() {
            Some(stop) => format!("<{stop:?}>"),
            None => std::panic::resume_unwind(payload),
        },
    }
}

/// The value each of the choices `0..n` stands for, replayed alone: the encoding itself.
fn encoding<G: Gen>(out: &mut Out, name: &str, g: &G, n: u64) {
    let _ = writeln!(out, "## encoding of {name}, choices 0..{n}");
    let values: Vec<String> = (0..n)
        .map(|c| {
            let mut tc = TestCase::replay(vec![c], false);
            outcome(|| tc.draw(g))
        })
        .collect();
    for chunk in values.chunks(16) {
        let _ = writeln!(out, "{}", chunk.join(" "));
    }
}

#[derive(Debug, Clone)]
#[allow(dead_code)] // read through `Debug` only
enum Tree {
    Leaf(u8),
    Node(Box<Tree>, Box<Tree>),
}

#[derive(Debug, Arbitrary)]
#[allow(dead_code)] // read through `Debug` only
struct Record {
    id: u16,
    #[seedledger(gen = "int(0..=9u8)")]
    digit: u8,
    tags: Vec<bool>,
}

#[derive(Debug, Arbitrary)]
#[allow(dead_code)] // read through `Debug` only
enum Shape {
    Dot,
    Circle { r: u8 },
    Rect(i8, i8),
}

fn golden(scheme: Scheme) -> String {
    let mut out = Out {
        text: String::new(),
        scheme,
    };
    let _ = writeln!(
        out,
        "# constants\nRNG_SCHEME = {scheme}\nFILTER_TRIES = {FILTER_TRIES}\nDEFAULT_MAX_SIZE = {DEFAULT_MAX_SIZE}\nMAX_CHOICES = {MAX_CHOICES}"
    );
    pin(&mut out, "int(-1000..=1000i64)", &int(-1000..=1000i64));
    pin(&mut out, "int(5..=9u8)", &int(5..=9u8));
    pin(&mut out, "int(-3..=-1i32)", &int(-3..=-1i32));
    pin(&mut out, "int(0..=u64::MAX)", &int(0..=u64::MAX));
    pin(&mut out, "any_int::<u8>", &any_int::<u8>());
    pin(&mut out, "any_int::<i8>", &any_int::<i8>());
    pin(&mut out, "any_int::<u16>", &any_int::<u16>());
    pin(&mut out, "any_int::<i16>", &any_int::<i16>());
    pin(&mut out, "any_int::<u32>", &any_int::<u32>());
    pin(&mut out, "any_int::<i32>", &any_int::<i32>());
    pin(&mut out, "any_int::<u64>", &any_int::<u64>());
    pin(&mut out, "any_int::<i64>", &any_int::<i64>());
    pin(&mut out, "any_int::<usize>", &any_int::<usize>());
    pin(&mut out, "any_int::<isize>", &any_int::<isize>());
    pin(&mut out, "boolean", &boolean());
    pin(&mut out, "char_any", &char_any());
    pin(&mut out, "char_in('a'..='z')", &char_in('a'..='z'));
    pin(&mut out, "unit_f64", &unit_f64());
    pin(
        &mut out,
        "vec(int(0..=9u8), 0..=6)",
        &vec(int(0..=9u8), 0..=6),
    );
    pin(&mut out, "vec(boolean(), 3..=3)", &vec(boolean(), 3..=3));
    pin(
        &mut out,
        "btree_set(int(0..=20u8), 0..=5)",
        &btree_set(int(0..=20u8), 0..=5),
    );
    pin(
        &mut out,
        "btree_map(int(0..=3u8), boolean(), 0..=6)",
        &btree_map(int(0..=3u8), boolean(), 0..=6),
    );
    pin(
        &mut out,
        "string_of(char_in('a'..='e'), 0..=5)",
        &string_of(char_in('a'..='e'), 0..=5),
    );
    pin(&mut out, "string", &string());
    pin(
        &mut out,
        "option(int(0..=100u32))",
        &option(int(0..=100u32)),
    );
    let alternatives = || -> Vec<BoxedGen<i64>> {
        vec![
            just(7i64).boxed(),
            int(100..=200i64).boxed(),
            int(-50..=-10i64).boxed(),
        ]
    };
    pin(
        &mut out,
        "one_of(just 7, 100..=200, -50..=-10)",
        &one_of(alternatives()),
    );
    let weights = [1u32, 5, 2];
    let weighted_alternatives: Vec<(u32, BoxedGen<i64>)> =
        weights.into_iter().zip(alternatives()).collect();
    pin(
        &mut out,
        "weighted(1, 5, 2)",
        &weighted(weighted_alternatives),
    );
    pin(
        &mut out,
        "select([\"a\", \"b\", \"c\", \"d\"])",
        &select(vec!["a", "b", "c", "d"]),
    );
    pin(&mut out, "just(42)", &just(42u8));
    pin(
        &mut out,
        "from_fn(\"pair\", |tc| (int 0..=9, int 0..=9))",
        &from_fn("pair", |tc: &mut TestCase| {
            (tc.draw(&int(0..=9u8)), tc.draw(&int(0..=9u8)))
        }),
    );
    pin(
        &mut out,
        "int(0..=100u32).map(x * 3)",
        &int(0..=100u32).map(|x| x * 3),
    );
    pin(
        &mut out,
        "int(0..=100u32).filter(x % 7 == 0)",
        &int(0..=100u32).filter(|x| x % 7 == 0),
    );
    pin(
        &mut out,
        "int(1..=4usize).flat_map(vec(boolean(), n..=n))",
        &int(1..=4usize).flat_map(|n| vec(boolean(), n..=n)),
    );
    let tree = recursive(
        3,
        int(0..=9u8).map(Tree::Leaf).boxed(),
        |inner: BoxedGen<Tree>| {
            (inner.clone(), inner)
                .map(|(a, b)| Tree::Node(Box::new(a), Box::new(b)))
                .boxed()
        },
    );
    pin(&mut out, "recursive(3, leaf 0..=9, node(a, b))", &tree);
    encoding(&mut out, "char_any", &char_any(), 160);
    encoding(&mut out, "unit_f64", &unit_f64(), 16);
    encoding(&mut out, "boolean", &boolean(), 2);
    encoding(&mut out, "int(-5..=5i8)", &int(-5..=5i8), 11);
    // Generators added after the lines above: appended, so the old lines never move.
    pin(&mut out, "any_int::<u128>", &any_int::<u128>());
    pin(&mut out, "any_int::<i128>", &any_int::<i128>());
    pin(
        &mut out,
        "int(-(1 << 90)..=1 << 70) i128",
        &int(-(1i128 << 90)..=1i128 << 70),
    );
    pin(&mut out, "any_f64", &any_f64());
    pin(&mut out, "any_f32", &any_f32());
    pin(&mut out, "f64_in(-1.0..=1.0)", &f64_in(-1.0..=1.0));
    pin(&mut out, "f64_in(0.3..5.7)", &f64_in(0.3..5.7));
    pin(&mut out, "f32_in(-1e6..=-0.5)", &f32_in(-1e6..=-0.5));
    pin(&mut out, "int(0..10usize)", &int(0..10usize));
    pin(&mut out, "int(250u8..)", &int(250u8..));
    pin(&mut out, "vec_of(int(0..=9u8))", &vec_of(int(0..=9u8)));
    pin(&mut out, "vec(boolean(), 2..5)", &vec(boolean(), 2..5));
    let tree = recursive_tree(3)
        .leaf(int(0..=9u8).map(Tree::Leaf))
        .leaf(just(Tree::Leaf(99)))
        .branch(|sub: BoxedGen<Tree>| {
            (sub.clone(), sub).map(|(a, b)| Tree::Node(Box::new(a), Box::new(b)))
        })
        .branch(|sub: BoxedGen<Tree>| sub.map(|a| Tree::Node(Box::new(a), Box::new(Tree::Leaf(0)))))
        .build();
    pin(
        &mut out,
        "recursive_tree(3, leaves 0..=9 and 99, node(a, b), node(a, 0))",
        &tree,
    );
    pin(&mut out, "any::<Vec<i16>>", &any::<Vec<i16>>());
    pin(
        &mut out,
        "any::<(u8, Option<bool>, char)>",
        &any::<(u8, Option<bool>, char)>(),
    );
    pin(&mut out, "any::<Record> (derived struct)", &any::<Record>());
    pin(&mut out, "any::<Shape> (derived enum)", &any::<Shape>());
    for pattern in [
        "[a-c]{1,3}(x|yy)*",
        r"\d{2}-\w+",
        "(?i)ab.?",
        "(cat|dog|bird)+",
    ] {
        let g = string_matching(pattern).expect("a supported pattern");
        pin(&mut out, &format!("string_matching({pattern:?})"), &g);
    }
    out.text
}

/// Compares [`golden`] of `scheme` with its file `test_data/NAME`; with `SEEDLEDGER_BLESS`
/// set, first writes the file when it does not exist yet (an existing scheme's file is never
/// rewritten: what its seeds mean is fixed).
fn check_golden(scheme: Scheme, name: &str) {
    let got = golden(scheme);
    let path = format!("{}/test_data/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("SEEDLEDGER_BLESS").is_some() && !std::path::Path::new(&path).exists() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap();
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "what a seed means under {scheme} changed at line {} of test_data/{name}:\n  want: {}\n  got:  {}",
            first + 1,
            want.lines().nth(first).unwrap_or("<end>"),
            got.lines().nth(first).unwrap_or("<end>")
        );
    }
}

#[test]
fn every_generator_means_what_it_meant() {
    check_golden(Scheme::V1, "golden_generators.txt");
}

#[test]
fn every_generator_means_what_it_means_under_v2() {
    check_golden(Scheme::V2, "golden_generators_v2.txt");
}

#[test]
fn every_generator_means_what_it_means_under_v3() {
    check_golden(Scheme::V3, "golden_generators_v3.txt");
}
