//! Generators through the public API: each one's range, its special values (drawn often
//! enough to be found), and its shrink target (the minimal value a failing property shrinks
//! to). What a seed means is pinned separately, in `golden_generators.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
use support::{minimal, minimals};

use seedledger_runner::{
    DEFAULT_MAX_SIZE, Gen, MAX_CHOICES, RegexError, Scheme, Sizes, Stop, TestCase, any_f32,
    any_f64, any_int, char_in, f32_in, f64_in, int, string_matching, string_of, vec, vec_of,
};

/// Values `g` draws for seeds `0..n`.
fn draws<G: Gen>(g: &G, n: u64) -> Vec<G::Value> {
    (0..n).map(|seed| TestCase::random(seed).draw(g)).collect()
}

// ---------------------------------------------------------------- the choice limit

/// A collection drawn near [`MAX_CHOICES`] stops where drawing its elements one by one
/// would: the main run's fast path (which draws a run of integers in one go, its choices
/// counted up front) and a recording case (one choice at a time) reach the same value or
/// the same [`Stop::Overrun`], after the same number of choices, under both schemes.
#[test]
fn a_collection_at_the_choice_limit_stops_where_single_draws_would() {
    // 255 full runs of 4096 and one of 3995 leave room for 101 choices: a last
    // `vec(.., 0..=100)` of `t` elements needs `2t + 1` (a flag before each element, a
    // false flag or the forced 0 after), so it fits when `t <= 50` and overruns above.
    let room = 101;
    let filler = MAX_CHOICES - room;
    let draw = |tc: &mut TestCase| {
        let mut n = 0;
        while n < filler {
            let k = (filler - n).min(4096);
            tc.draw(&vec(any_int::<u8>().map(u16::from), k));
            n += k;
        }
        assert_eq!(tc.n_choices(), filler);
        tc.draw(&vec(any_int::<u64>(), 0..=100))
    };
    let outcome =
        |tc: &mut TestCase| match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            draw(tc)
        })) {
            Ok(v) => Ok(v),
            Err(payload) => Err(*payload.downcast::<Stop>().unwrap()),
        };
    let (mut fits, mut overruns) = (0, 0);
    for scheme in Scheme::ALL {
        for seed in 0..2 {
            let mut fast = TestCase::random_with(scheme, seed);
            let mut recording = TestCase::recording_with(scheme, seed);
            let (a, b) = (outcome(&mut fast), outcome(&mut recording));
            assert_eq!(a, b, "{scheme}, seed {seed}");
            assert_eq!(
                fast.n_choices(),
                recording.n_choices(),
                "{scheme}, seed {seed}"
            );
            match a {
                Ok(_) => fits += 1,
                Err(stop) => {
                    assert_eq!(stop, Stop::Overrun);
                    assert_eq!(fast.n_choices(), MAX_CHOICES);
                    overruns += 1;
                }
            }
        }
    }
    assert!(fits > 0 && overruns > 0, "{fits} fit, {overruns} overran");
}

/// A property that catches a panic of a generator's `map` in the middle of a collection and
/// draws on finds the same stream on the main run's fast path (a run of integers drawn in
/// one go) as one choice at a time: the same later values, after the same number of
/// choices, under both schemes. (A seed means one input, whatever the property does.)
#[test]
fn a_panic_caught_inside_a_collection_leaves_the_stream_where_single_draws_would() {
    let draw = |tc: &mut TestCase| {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tc.draw(&vec(
                any_int::<u8>().map(|x| {
                    assert!(x % 7 != 3, "no {x}");
                    x
                }),
                0..=200,
            ))
        }));
        let after: Vec<u64> = (0..40).map(|_| tc.draw(&any_int::<u64>())).collect();
        (caught.is_ok(), after, tc.n_choices())
    };
    let mut panicked = 0;
    for scheme in Scheme::ALL {
        for seed in 0..200 {
            let fast = draw(&mut TestCase::random_with(scheme, seed));
            let one_by_one = draw(&mut TestCase::recording_with(scheme, seed));
            assert_eq!(fast, one_by_one, "{scheme}, seed {seed}");
            panicked += usize::from(!fast.0);
        }
    }
    assert!(panicked > 100, "{panicked} of 400 draws panicked");
}

// ---------------------------------------------------------------- 128-bit integers

#[test]
fn wide_integers_cover_their_range_and_edges() {
    let xs = draws(&any_int::<u128>(), 20_000);
    assert!(
        xs.iter().any(|&x| x > u128::from(u64::MAX)),
        "above 64 bits"
    );
    assert!(xs.iter().any(|&x| x < 256), "small values");
    assert!(xs.contains(&0) && xs.contains(&u128::MAX), "edges");

    let ys = draws(&any_int::<i128>(), 20_000);
    for edge in [0, 1, -1, i128::MIN, i128::MAX] {
        assert!(ys.contains(&edge), "{edge}");
    }
    assert!(ys.iter().any(|&y| y < i128::from(i64::MIN)));
    assert!(ys.iter().any(|&y| y > i128::from(i64::MAX)));

    // A range wider than 2^64 values but far from either end of the type.
    let (lo, hi) = (-(1i128 << 90), 1i128 << 70);
    let zs = draws(&int(lo..=hi), 20_000);
    assert!(zs.iter().all(|z| (lo..=hi).contains(z)));
    // The edges of the choice index: the shrink target 0 and the far bound (the near bound
    // is an ordinary index in the middle of the zigzag, as for narrower integers).
    assert!(zs.contains(&0) && zs.contains(&lo));
    assert!(zs.iter().any(|&z| z > 1 << 64));
    let (lo, hi) = (u128::MAX - (1 << 66), u128::MAX - 3);
    let ws = draws(&int(lo..=hi), 20_000);
    assert!(ws.iter().all(|w| (lo..=hi).contains(w)));
    assert!(ws.contains(&lo) && ws.contains(&hi));
}

#[test]
fn wide_integer_choices_are_the_distance_from_zero_in_two_parts() {
    let g = any_int::<i128>();
    assert_eq!(g.max_index(), u128::MAX);
    // 0, 1, -1, 2, -2, ... while both sides have room; the last index is MIN.
    assert_eq!(
        (0..5).map(|k| g.value_of(k)).collect::<Vec<_>>(),
        [0, 1, -1, 2, -2]
    );
    assert_eq!(g.value_of(u128::MAX), i128::MIN);
    assert_eq!(g.value_of(u128::MAX - 1), -i128::MAX);
    assert_eq!(g.value_of(u128::MAX - 2), i128::MAX);
    for v in [0, 5, -5, i128::MIN, i128::MAX, 1 << 100, -(1 << 100)] {
        assert_eq!(g.value_of(g.index_of(v)), v);
    }
    // Replayed: the high 64 bits of the index first, then the low 64 bits.
    let mut tc = TestCase::replay(vec![1, 0], false);
    assert_eq!(tc.draw(&any_int::<u128>()), 1 << 64);
    let mut tc = TestCase::replay(vec![0, 7], false);
    assert_eq!(tc.draw(&any_int::<u128>()), 7);
    // At the top of the high part the low part is bounded by the range.
    let g = int(0..=(1u128 << 64) + 5);
    let mut tc = TestCase::replay(vec![1, 5], false);
    assert_eq!(tc.draw(&g), (1 << 64) + 5);
    let mut tc = TestCase::recording(3);
    tc.draw(&g);
    let record = tc.into_record();
    assert_eq!(record.maxes[0], 1);
    assert!(record.maxes[1] == 5 || record.maxes[1] == u64::MAX);
}

#[test]
fn wide_integers_shrink_to_the_boundary() {
    assert_eq!(
        minimal(any_int::<u128>(), |&x| x > 1 << 100),
        ((1u128 << 100) + 1).to_string()
    );
    assert_eq!(
        minimal(any_int::<i128>(), |&x| x < -(1 << 70)),
        (-(1i128 << 70) - 1).to_string()
    );
    assert_eq!(minimal(any_int::<i128>(), |&x| x > 1000), "1001");
    assert_eq!(minimal(any_int::<u128>(), |_| true), "0");
}

// ---------------------------------------------------------------- floats

fn share<T>(xs: &[T], pred: impl Fn(&T) -> bool) -> f64 {
    xs.iter().filter(|x| pred(x)).count() as f64 / xs.len() as f64
}

#[test]
fn any_f64_draws_every_kind_of_double() {
    let xs = draws(&any_f64(), 20_000);
    let has = |pred: &dyn Fn(f64) -> bool| xs.iter().any(|&x| pred(x));
    assert!(has(&|x| x.is_nan()), "NaN");
    assert!(has(&|x| x == f64::INFINITY) && has(&|x| x == f64::NEG_INFINITY));
    assert!(has(&|x| x.to_bits() == (-0.0f64).to_bits()), "-0.0");
    assert!(has(&|x| x.to_bits() == 0), "0.0");
    assert!(has(&|x| x == f64::MAX) && has(&|x| x == f64::MIN));
    assert!(has(&|x| x == f64::MIN_POSITIVE) && has(&|x| x == f64::EPSILON));
    assert!(has(&|x| x == 5e-324), "the smallest subnormal");
    assert!(has(&|x| x != 0.0
        && x.abs() < f64::MIN_POSITIVE
        && x.abs() > 5e-324));
    assert!(has(&|x| x.abs() > 1e300 && x.is_finite()) && has(&|x| x.abs() < 1e-300 && x != 0.0));
    assert!(
        has(&|x| x.abs() > 1e17 && x.abs() < 1e18),
        "magnitudes between"
    );
    for small in [1.0, -1.0, 2.0, 0.5, -0.5] {
        assert!(xs.contains(&small), "{small}");
    }
    // Shares: integers of every size, short fractions, special values, any bit pattern.
    let integer = share(&xs, |x| x.is_finite() && x.fract() == 0.0);
    let small_integer = share(&xs, |x| x.fract() == 0.0 && x.abs() <= 1000.0);
    let short_fraction = share(&xs, |x| x.fract() != 0.0 && (x * 256.0).fract() == 0.0);
    let special = share(&xs, |x| !x.is_finite() || x.abs() == f64::MAX || *x == 0.0);
    for (name, got, least) in [
        ("integer", integer, 0.2),
        ("small integer", small_integer, 0.1),
        ("short fraction", short_fraction, 0.05),
        ("special", special, 0.05),
    ] {
        assert!(got >= least, "{name}: {got}");
    }
}

#[test]
fn any_f32_draws_every_kind_of_float() {
    let xs = draws(&any_f32(), 20_000);
    let has = |pred: &dyn Fn(f32) -> bool| xs.iter().any(|&x| pred(x));
    assert!(has(&|x| x.is_nan()) && has(&|x| x == f32::NEG_INFINITY));
    assert!(has(&|x| x.to_bits() == (-0.0f32).to_bits()));
    assert!(has(&|x| x == f32::MAX) && has(&|x| x == f32::MIN) && has(&|x| x == f32::EPSILON));
    assert!(has(&|x| x == f32::from_bits(1)) && has(&|x| x.is_subnormal() && x.to_bits() > 1));
    assert!(has(&|x| x == 3.0) && has(&|x| x == -0.5));
}

#[test]
fn a_float_is_four_choices_simple_before_raw() {
    let value = |choices: Vec<u64>| TestCase::replay(choices, false).draw(&any_f64());
    assert_eq!(value(vec![0, 0, 0, 0]).to_bits(), 0);
    assert_eq!(value(vec![0, 0, 0, 1]).to_bits(), (-0.0f64).to_bits());
    assert_eq!(value(vec![0, 0, 3, 0]), 3.0);
    assert_eq!(value(vec![0, 1, 0, 0]), 0.5);
    assert_eq!(value(vec![0, 3, 2, 1]), -2.75);
    assert_eq!(
        value(vec![1, 0, 0, 0]),
        1.0,
        "raw: exponent rank 0 is [1, 2)"
    );
    assert_eq!(value(vec![1, 0, 2047 << 42, 1]), f64::NEG_INFINITY);
    assert!(value(vec![1, 1, 2047 << 42, 0]).is_nan());
    assert_eq!(value(vec![1, 1, 2046 << 42, 0]), 5e-324);
    // The same bounds whatever the kind.
    let mut tc = TestCase::recording(11);
    tc.draw(&any_f64());
    assert_eq!(tc.into_record().maxes, [1, (1 << 52) - 1, (1 << 53) - 1, 1]);
    let mut tc = TestCase::recording(11);
    tc.draw(&f32_in(0.0..=1.0));
    assert_eq!(tc.into_record().maxes, [1, (1 << 23) - 1, (1 << 24) - 1, 1]);
}

#[test]
fn f64_in_stays_in_its_range_and_draws_its_edges() {
    let check = |lo: f64, hi: f64, xs: &[f64]| {
        assert!(xs.iter().all(|&x| lo <= x && x <= hi), "{lo}..={hi}");
        for edge in [lo, hi, lo.next_up(), hi.next_down()] {
            assert!(xs.contains(&edge), "{lo}..={hi}: {edge}");
        }
    };
    check(-1.0, 1.0, &draws(&f64_in(-1.0..=1.0), 5_000));
    check(0.3, 5.7, &draws(&f64_in(0.3..=5.7), 5_000));
    check(1e10, 1e10 + 1.0, &draws(&f64_in(1e10..=1e10 + 1.0), 5_000));
    check(-1e-300, -1e-310, &draws(&f64_in(-1e-300..=-1e-310), 5_000));

    let xs = draws(&f64_in(-1.0..=1.0), 5_000);
    assert!(xs.contains(&0.0) && xs.contains(&0.5) && xs.contains(&-1.0));
    assert!(xs.iter().any(|x| x.is_subnormal()));
    let distinct: std::collections::BTreeSet<u64> = xs.iter().map(|x| x.to_bits()).collect();
    assert!(distinct.len() > 2_000, "{}", distinct.len());

    let xs = draws(&f64_in(0.0..=1.0), 5_000);
    assert!(
        xs.iter().all(|x| x.is_sign_positive()),
        "0.0..=1.0 never draws -0.0"
    );
    let xs = draws(&f64_in(0.0..1.0), 5_000);
    assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(xs.contains(&1f64.next_down()));

    let xs = draws(&f64_in(f64::MIN..=f64::MAX), 5_000);
    assert!(xs.iter().all(|x| x.is_finite()));
    assert!(xs.contains(&f64::MIN) && xs.contains(&f64::MAX));
    // Bounds that are not finite, or reversed, never panic.
    let xs = draws(&f64_in(f64::NAN..=f64::INFINITY), 2_000);
    assert!(xs.iter().all(|x| x.is_finite()));
    assert!(draws(&f64_in(5.0..=1.0), 100).iter().all(|&x| x == 5.0));
    assert!(draws(&f64_in(2.0..2.0), 100).iter().all(|&x| x == 2.0));

    let ys = draws(&f32_in(-2.5..=7.0), 5_000);
    assert!(ys.iter().all(|&y| (-2.5..=7.0).contains(&y)));
    assert!(ys.contains(&-2.5) && ys.contains(&7.0) && ys.contains(&0.0));
}

#[test]
fn floats_shrink_to_simple_values() {
    let debug = |x: f64| format!("{x:?}");
    let table: Vec<(&str, String, String)> = vec![
        ("x > 2.5", minimal(any_f64(), |&x| x > 2.5), "3.0".into()),
        ("x < -1.5", minimal(any_f64(), |&x| x < -1.5), "-2.0".into()),
        (
            "fraction",
            minimal(any_f64(), |&x| x.is_finite() && x.fract() != 0.0),
            "0.5".into(),
        ),
        (
            "fraction above 2",
            minimal(any_f64(), |&x| x.is_finite() && x > 2.0 && x.fract() != 0.0),
            "2.5".into(),
        ),
        ("NaN", minimal(any_f64(), |x| x.is_nan()), "NaN".into()),
        (
            "infinite",
            minimal(any_f64(), |x| x.is_infinite()),
            "inf".into(),
        ),
        (
            "negative sign",
            minimal(any_f64(), |x| x.is_sign_negative()),
            "-0.0".into(),
        ),
        (
            "huge",
            minimal(any_f64(), |&x| x.is_finite() && x > 1e300),
            debug(2f64.powi(997)),
        ),
        (
            "tiny",
            minimal(any_f64(), |&x| x != 0.0 && x.abs() < 1e-300),
            debug(2f64.powi(-997)),
        ),
        ("anything", minimal(any_f64(), |_| true), "0.0".into()),
        (
            "range: x > 2.5",
            minimal(f64_in(0.3..=5.7), |&x| x > 2.5),
            "3.0".into(),
        ),
        (
            "range: anything",
            minimal(f64_in(0.3..=5.7), |_| true),
            "0.3".into(),
        ),
        (
            "range: near hi",
            minimal(f64_in(0.3..=5.7), |&x| x > 5.5),
            "5.7".into(),
        ),
        (
            "negative range",
            minimal(f64_in(-10.0..=-2.0), |_| true),
            "-2.0".into(),
        ),
        (
            "integers first",
            minimal(f64_in(-1.0..=1.0), |&x| x > 0.3),
            "1.0".into(),
        ),
    ];
    for (name, got, want) in table {
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(minimal(any_f32(), |&x| x > 2.5), "3.0");
    assert_eq!(minimal(any_f32(), |x| x.is_nan()), "NaN");
    // Integers first: 2.0 before 1.25; a shrink that overshoots lands on the bound.
    assert_eq!(minimal(f32_in(1.0..=2.0), |&x| x > 1.2), "2.0");
    assert_eq!(minimal(f32_in(1.0..=1.9), |&x| x > 1.2), "1.9");
}

#[test]
fn float_shrinks_land_on_one_value_from_any_start() {
    let one = |results: std::collections::BTreeMap<String, usize>, want: &str| {
        assert_eq!(results.keys().collect::<Vec<_>>(), [want], "{results:?}");
    };
    one(minimals(any_f64(), |&x| x > 2.5, 30), "3.0");
    one(minimals(any_f64(), |&x| x < -1.5, 30), "-2.0");
    one(
        minimals(any_f64(), |&x| x.is_finite() && x.fract() != 0.0, 30),
        "0.5",
    );
    one(
        minimals(any_f64(), |&x| x.is_finite() && x > 1e300, 30),
        &format!("{:?}", 2f64.powi(997)),
    );
    one(
        minimals(any_f64(), |&x| x != 0.0 && x.abs() < 1e-300, 30),
        &format!("{:?}", 2f64.powi(-997)),
    );
    one(minimals(f64_in(0.3..=5.7), |&x| x > 2.5, 30), "3.0");
    one(
        minimals(f64_in(-100.0..=100.0), |&x| x * x > 50.0, 30),
        "8.0",
    );
    one(minimals(any_f32(), |&x| x > 2.5, 30), "3.0");
}

// ---------------------------------------------------------------- strings from a pattern

const PATTERNS: &[&str] = &[
    "",
    "a",
    "abc",
    "[a-z]+",
    "[^a-z]{2,5}",
    r"\d{3}-\d{4}",
    "(foo|bar|b)*",
    "a?b+c*",
    "[[:alpha:]]{1,3}",
    r"\w+@\w+\.(com|org)",
    "(?i)hello",
    r"\p{Greek}+",
    ".{0,10}",
    "(?s).{2}",
    "(a|b|c){3}",
    "x{2,}",
    "^start",
    "end$",
    r"^(a|b)$",
    r"\Aanchored\z",
    "(^a|b$)",
    r"[\u{1F600}-\u{1F64F}]+",
    r"\s*",
    "[a-c&&b-d]",
    r"[^\x00-\x7F]*",
    "(ab){0,3}c",
    "((a|b)(c|d))+",
    "[0-9a-fA-F]{8}",
    r"\D\W\S",
    "a{0}",
    "(?x) a b  c  # a comment\n",
    r"[\-\]\[]+",
    "(|a)z",
    "🙂+é",
    "(?-u:[a-z])+",
    "(?m)^line$",
    "[^\n]{3}",
    r"[\u{D7FF}-\u{E000}]",
    "(a*)*b",
    "(?:x|yy|zzz)+?",
];

#[test]
fn every_string_drawn_from_a_pattern_matches_it() {
    for &pattern in PATTERNS {
        let g = string_matching(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        let oracle = regex::Regex::new(&format!(r"\A(?:{pattern})\z")).unwrap();
        let xs = draws(&g, 500);
        for s in &xs {
            assert!(oracle.is_match(s), "{pattern:?} drew {s:?}");
        }
        // Replays of recorded choices draw the same strings.
        for seed in 0..20 {
            let mut tc = TestCase::recording(seed);
            let s = tc.draw(&g);
            let choices = tc.into_record().choices;
            assert_eq!(TestCase::replay(choices, false).draw(&g), s, "{pattern:?}");
        }
    }
}

#[test]
fn patterns_draw_variety_and_respect_the_repeat_cap() {
    let xs = draws(&string_matching("[a-z]+").unwrap(), 2_000);
    let lens: std::collections::BTreeSet<usize> = xs.iter().map(String::len).collect();
    assert_eq!(
        lens,
        (1..=9).collect(),
        "`+` draws 1 to 1 + REGEX_REPEAT_CAP"
    );
    assert!(xs.iter().any(|s| s.contains('z')) && xs.iter().any(|s| s.contains('a')));
    let xs = draws(&string_matching(r"(cat|dog|bird)").unwrap(), 300);
    for word in ["cat", "dog", "bird"] {
        assert!(xs.iter().any(|s| s == word), "{word}");
    }
    let xs = draws(&string_matching(".").unwrap(), 3_000);
    assert!(xs.iter().any(|s| !s.is_ascii()), "beyond ASCII");
    assert!(xs.iter().all(|s| s != "\n"));
    let xs = draws(&string_matching("a{2,4}").unwrap(), 300);
    assert!(
        ["aa", "aaa", "aaaa"]
            .iter()
            .all(|w| xs.iter().any(|s| s == w))
    );
}

#[test]
fn unsupported_and_invalid_patterns_are_errors() {
    let syntax = |p: &str| matches!(string_matching(p), Err(RegexError::Syntax { .. }));
    let unsupported = |p: &str| matches!(string_matching(p), Err(RegexError::Unsupported { .. }));
    assert!(syntax("a(") && syntax("[z-a]") && syntax("a{2,1}") && syntax(r"\p{Nope}"));
    assert!(unsupported(r"\bword\b") && unsupported(r"a\Bb"));
    assert!(unsupported("a^b") && unsupported("a$b") && unsupported("(^a)*"));
    assert!(unsupported("(a{1000}){1000}"), "too long a match");
    assert!(matches!(
        string_matching(r"[^\x00-\x{10FFFF}]"),
        Err(RegexError::Empty { .. })
    ));
    assert!(
        string_matching(r"[^\x00-\x{10FFFF}]|ok").is_ok(),
        "an empty branch is dropped"
    );
    assert!(string_matching(r"([^\x00-\x{10FFFF}])*ok").is_ok());
    let e = string_matching("a(").unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid regular expression `a(` at offset 1: unclosed group"
    );
}

#[test]
fn pattern_strings_shrink_to_the_shortest_simplest_match() {
    let m = |pattern: &str, fails: fn(&String) -> bool| {
        minimal(string_matching(pattern).unwrap(), fails)
    };
    type Case = (&'static str, fn(&String) -> bool, &'static str);
    let table: &[Case] = &[
        ("[a-z]+", |_| true, "a"),
        ("[a-z]+", |s| s.len() >= 3, "aaa"),
        ("[a-z]+", |s| s.contains('q'), "q"),
        ("[a-z]+", |s| s.contains("qx"), "qx"),
        ("(foo|bar|b)+", |_| true, "b"),
        ("(foo|bar|b)+", |s| s.contains('f'), "foo"),
        (r"\d{3}-\d{4}", |_| true, "000-0000"),
        (r"\d{3}-\d{4}", |s| s.ends_with('7'), "000-0007"),
        ("(?i)hello", |_| true, "hello"),
        ("(?i)hello", |s| s.starts_with('H'), "Hello"),
        ("[b-d]x*", |s| s.len() > 2, "bxx"),
        (r"[\u{3B1}-\u{3C9}]{2}", |_| true, "αα"),
        (".*", |s| !s.is_ascii(), "\u{80}"),
    ];
    for &(pattern, fails, want) in table {
        assert_eq!(m(pattern, fails), format!("{want:?}"), "{pattern}");
    }
}

/// A random pattern built from atoms, classes, groups, alternations and repetitions.
fn random_pattern(tc: &mut TestCase, depth: u32) -> String {
    const ATOMS: &[&str] = &[
        "a",
        "xy",
        "[a-c]",
        "[^a]",
        r"\d",
        r"\w",
        ".",
        r"\p{Greek}",
        r"\s",
        "é",
        r"\.",
        "[😀-🙏]",
    ];
    const REPEATS: &[&str] = &["", "*", "+", "?", "{1,3}", "{2}", "{2,}", "*?", "{0,2}"];
    let kind = if depth == 0 {
        0
    } else {
        tc.draw(&int(0..=3u8))
    };
    let mut out = match kind {
        0 => ATOMS[tc.draw(&int(0..=ATOMS.len() - 1))].to_string(),
        1 => {
            let n = tc.draw(&int(2..=3usize));
            (0..n).map(|_| random_pattern(tc, depth - 1)).collect()
        }
        _ => {
            let n = tc.draw(&int(2..=3usize));
            let branches: Vec<String> = (0..n).map(|_| random_pattern(tc, depth - 1)).collect();
            format!("({})", branches.join("|"))
        }
    };
    let repeat = REPEATS[tc.draw(&int(0..=REPEATS.len() - 1))];
    if !repeat.is_empty() {
        out = format!("(?:{out}){repeat}");
    }
    out
}

#[test]
fn random_patterns_generate_only_matches() {
    // The oracle is the `regex` crate, slow to build large Unicode automata in a debug
    // build: 120 patterns of 20 strings each keep this test to a few seconds.
    for seed in 0..120 {
        let pattern = random_pattern(&mut TestCase::random(seed), 3);
        let g = string_matching(&pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        let oracle = regex::Regex::new(&format!(r"\A(?:{pattern})\z")).unwrap();
        for s in draws(&g, 20) {
            assert!(oracle.is_match(&s), "{pattern:?} drew {s:?}");
        }
    }
}

#[test]
fn pattern_shrinks_land_on_one_string_from_any_start() {
    let one = |results: std::collections::BTreeMap<String, usize>, want: &str| {
        assert_eq!(
            results.keys().collect::<Vec<_>>(),
            [&format!("{want:?}")],
            "{results:?}"
        );
    };
    let g = || string_matching("[a-z]+").unwrap();
    one(minimals(g(), |s| s.len() >= 3, 20), "aaa");
    one(minimals(g(), |s| s.contains('q'), 20), "q");
    let g = || string_matching(r"(\d+,)*\d+").unwrap();
    one(minimals(g(), |s| s.matches(',').count() >= 2, 20), "0,0,0");
    let g = || string_matching("(foo|bar|b)+").unwrap();
    one(minimals(g(), |s| s.contains("ar"), 20), "bar");
}

// ---------------------------------------------------------------- defaults

#[test]
#[allow(clippy::reversed_empty_ranges)] // empty ranges on purpose
fn int_takes_every_kind_of_range() {
    let xs = draws(&int(0..10), 2_000);
    assert!(xs.iter().all(|x| (0..10).contains(x)) && xs.contains(&9) && xs.contains(&0));
    let xs: Vec<u8> = draws(&int(250..), 500);
    assert!(xs.iter().all(|&x| x >= 250) && xs.contains(&255));
    let xs = draws(&int(..=-3i8), 2_000);
    assert!(xs.iter().all(|&x| x <= -3) && xs.contains(&-128) && xs.contains(&-3));
    let xs = draws(&int(..3u16), 500);
    assert!(xs.iter().all(|&x| x < 3) && xs.contains(&2));
    let xs: Vec<u16> = draws(&int(..), 2_000);
    assert!(xs.contains(&u16::MAX) && xs.contains(&0));
    // Empty ranges are the single value lo, at every edge of the type.
    assert!(draws(&int(3..3), 50).iter().all(|&x| x == 3));
    assert!(draws(&int(7..2), 50).iter().all(|&x| x == 7));
    assert!(
        draws(&int(u128::MAX..u128::MAX), 50)
            .iter()
            .all(|&x| x == u128::MAX)
    );
    assert!(draws(&int(..i64::MIN), 50).iter().all(|&x| x == i64::MIN));
    // The type comes from how the value is used.
    let v = ["a", "b", "c"];
    let mut tc = TestCase::random(5);
    let i = tc.draw(&int(0..v.len()));
    assert!(v[i] <= "c");
    let small: u8 = tc.draw(&int(0..=200));
    assert!(small <= 200);
    // `lo..hi` draws what `lo..=hi - 1` draws.
    for seed in 0..200 {
        assert_eq!(
            TestCase::random(seed).draw(&int(-5..5i32)),
            TestCase::random(seed).draw(&int(-5..=4i32))
        );
    }
}

#[test]
#[allow(clippy::reversed_empty_ranges)] // empty ranges on purpose
fn collections_take_every_kind_of_range_and_a_default_size() {
    let sizes = |s: Sizes| (s.min, s.max);
    assert_eq!(sizes((..).into()), (0, DEFAULT_MAX_SIZE));
    assert_eq!(sizes((2..).into()), (2, 2 + DEFAULT_MAX_SIZE));
    assert_eq!(sizes((..5).into()), (0, 4));
    assert_eq!(sizes((..=5).into()), (0, 5));
    assert_eq!(sizes((1..4).into()), (1, 3));
    assert_eq!(sizes((4..4).into()), (4, 4));
    assert_eq!(sizes((6..=2).into()), (6, 6));
    assert_eq!(sizes(3.into()), (3, 3));
    assert_eq!(Sizes::DEFAULT, Sizes::from(..));

    let lens: std::collections::BTreeSet<usize> = draws(&vec_of(int(0..=9u8)), 3_000)
        .iter()
        .map(Vec::len)
        .collect();
    assert_eq!(lens, (0..=DEFAULT_MAX_SIZE).collect());
    for seed in 0..200 {
        assert_eq!(
            TestCase::random(seed).draw(&vec_of(int(0..=9u8))),
            TestCase::random(seed).draw(&vec(int(0..=9u8), ..)),
            "vec_of(g) is vec(g, ..)"
        );
    }
    assert!(
        draws(&vec(int(0..=9u8), 1..), 500)
            .iter()
            .all(|v| !v.is_empty())
    );
    assert!(
        draws(&vec(int(0..=9u8), ..3), 500)
            .iter()
            .all(|v| v.len() < 3)
    );
    let s = draws(&string_of(char_in('a'..='c'), 2..4), 500);
    assert!(s.iter().all(|s| (2..4).contains(&s.len())));
    assert_eq!(minimal(vec_of(int(0..=9u8)), |v| v.len() >= 3), "[0, 0, 0]");
}
