//! Canonical minimal inputs: the same bug reached from 20 different seeds shrinks to one
//! minimal input, the least in the generators' order, even where the failing inputs are
//! scattered (a local minimum of one seed is not the minimum of another).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{
    Judging, Outcome, Passes, ShrinkStop, evaluate, execute, shortlex, shrink, shrink_with,
};
use seedledger_runner::{
    Fixture, PropResult, Property, ShrinkConfig, TestCase, any_f64, char_any, f64_in, int,
    prop_assert, string_matching, string_of,
};
use std::collections::BTreeMap;

type Test = fn(&mut TestCase, &Fixture) -> PropResult;

/// The recorded choices and signature of the first `n` failing seeds of `0..20_000`.
fn failures(property: &Property, n: usize) -> Vec<(Vec<u64>, String)> {
    let fixture = Fixture::new(Vec::new());
    let out: Vec<_> = (0..20_000u64)
        .filter(|&seed| {
            let mut tc = TestCase::random(seed);
            matches!(execute(property, &mut tc, &fixture), Outcome::Fail(_))
        })
        .take(n)
        .map(|seed| {
            let eval = evaluate(property, TestCase::recording(seed), &fixture);
            (
                eval.record.choices,
                eval.outcome.failure().unwrap().signature.clone(),
            )
        })
        .collect();
    assert_eq!(out.len(), n, "{}: too few failing seeds", property.id);
    out
}

/// Shrinks the first 20 failures of `test` and counts the minimal inputs reached.
fn minimal_inputs(id: &'static str, test: Test) -> BTreeMap<String, usize> {
    let property = Property::new(id, test);
    let fixture = Fixture::new(Vec::new());
    let mut seen = BTreeMap::new();
    for (choices, signature) in failures(&property, 20) {
        let pass = shrink(
            &property,
            &fixture,
            &choices,
            &signature,
            &ShrinkConfig::default(),
        );
        assert!(pass.reproduced, "{id}");
        assert!(shortlex(&pass.choices, &choices).is_le(), "{id}");
        *seen.entry(pass.drawn.join("; ")).or_insert(0) += 1;
    }
    seen
}

fn b64_value(b: u8) -> Option<u32> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    alphabet.iter().position(|&c| c == b).map(|p| p as u32)
}

/// Whether base64 `s` decodes, padding allowed only at the end unless `lax`.
fn decodes(s: &str, lax: bool) -> bool {
    let bytes = s.as_bytes();
    bytes.len().is_multiple_of(4)
        && bytes.chunks(4).enumerate().all(|(q, quad)| {
            let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
            let last = (q + 1) * 4 == bytes.len();
            let values: Option<Vec<u32>> = quad[..4 - pad].iter().map(|&b| b64_value(b)).collect();
            let Some(values) = values else { return false };
            let acc = values.iter().fold(0u32, |a, &v| a << 6 | v);
            let spare = [0, 2, 4][pad.min(2)];
            pad <= 2 && (pad == 0 || last || lax) && acc & ((1 << spare) - 1) == 0
        })
}

/// Padding in the middle accepted: only every fourth character before `=` fails.
fn base64_padding(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_matching("[a-zA-Z0-9+/=]{8}").unwrap());
    prop_assert!(decodes(&s, true) == decodes(&s, false), "{s}");
    Ok(())
}

/// A forbidden substring in a fixed-length code: it moves to the end.
fn fixed_substring(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_matching("[a-d]{6}").unwrap());
    prop_assert!(!s.contains("db"), "{s}");
    Ok(())
}

/// Four reserved characters left unescaped: the first of them in `char_any`'s order.
fn reserved_chars(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_of(char_any(), 0..=12));
    prop_assert!(!s.chars().any(|c| "#&+?".contains(c)), "{s:?}");
    Ok(())
}

/// Integers printed without their trailing zeros: every multiple of 10 fails.
fn trailing_zeros(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&any_f64());
    let s = format!("{x}");
    let printed = if s.contains('.') || x == 0.0 || !x.is_finite() {
        s.clone()
    } else {
        s.trim_end_matches('0').to_string()
    };
    prop_assert!(printed == s, "{s} printed as {printed}");
    Ok(())
}

/// Fifteen significant digits: the least failing value is an integer of 16 digits.
fn fifteen_digits(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&f64_in(-1e300..=1e300));
    prop_assert!(format!("{x:.14e}").parse::<f64>().ok() == Some(x), "{x}");
    Ok(())
}

/// An octet with a leading zero read as octal: the digit moves to the last field.
fn octal_octet(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let s = tc.draw(&string_matching(r"[0-9]{1,3}(\.[0-9]{1,3}){3}").unwrap());
    for octet in s.split('.') {
        let octal = octet.len() > 1 && octet.starts_with('0');
        let read = if octal {
            u32::from_str_radix(octet, 8).ok()
        } else {
            octet.parse().ok()
        };
        prop_assert!(read == octet.parse::<u32>().ok(), "{s}");
    }
    Ok(())
}

/// A pair where neither value can move alone: `(8, 8)` must become `(4, 12)`.
fn quarter_pair(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let a = tc.draw(&int(0..=1000u32));
    let b = tc.draw(&int(0..=1000u32));
    let bad =
        a > 0 && b > 0 && a.is_multiple_of(4) && b.is_multiple_of(4) && (a / 4 + b / 4) % 3 == 1;
    prop_assert!(!bad, "{a} {b}");
    Ok(())
}

#[test]
fn twenty_seeds_of_one_bug_shrink_to_one_minimal_input() {
    let table: &[(&'static str, Test, &str)] = &[
        ("base64_padding", base64_padding, "\"aac=aaaa\""),
        ("fixed_substring", fixed_substring, "\"aaaadb\""),
        ("reserved_chars", reserved_chars, "\"#\""),
        ("trailing_zeros", trailing_zeros, "10.0"),
        ("fifteen_digits", fifteen_digits, "1000000000000001.0"),
        ("quarter_pair", quarter_pair, "4; 12"),
        ("octal_octet", octal_octet, "\"0.0.0.08\""),
    ];
    for &(id, test, want) in table {
        let seen = minimal_inputs(id, test);
        assert_eq!(
            seen,
            BTreeMap::from([(want.to_string(), 20)]),
            "{id}: every seed reaches {want}"
        );
    }
}

#[test]
fn a_canonical_minimal_input_shrinks_to_itself() {
    let property = Property::new("base64_padding", base64_padding);
    let fixture = Fixture::new(Vec::new());
    let config = ShrinkConfig::default();
    let (choices, signature) = failures(&property, 1).remove(0);
    let first = shrink(&property, &fixture, &choices, &signature, &config);
    let again = shrink(&property, &fixture, &first.choices, &signature, &config);
    assert_eq!(again.choices, first.choices);
    assert!(again.evaluations < first.evaluations);
}

#[test]
fn the_classic_passes_stop_at_a_local_minimum_the_canonical_ones_pass() {
    // `"aaE=aaaa"`: the classic search tries 0, three just below and a few small values
    // for the `E`, all passing, and stops; the scan from 0 finds `c`.
    let property = Property::new("base64_padding", base64_padding);
    let fixture = Fixture::new(Vec::new());
    let eval = evaluate(
        &property,
        TestCase::replay(vec![0, 0, 30, 64, 0, 0, 0, 0], true),
        &fixture,
    );
    assert_eq!(eval.record.drawn, ["\"aaE=aaaa\""]);
    let signature = eval.outcome.failure().unwrap().signature.clone();
    let config = ShrinkConfig::default();
    let run = |passes| {
        let pass = shrink_with(
            &property,
            &fixture,
            &eval.record.choices,
            &signature,
            &config,
            Judging::Once,
            passes,
        );
        pass.drawn.join("; ")
    };
    assert_eq!(run(Passes::Classic), "\"aaE=aaaa\"");
    assert_eq!(run(Passes::Canonical), "\"aac=aaaa\"");
}

#[test]
fn the_stage_costs_a_bounded_amount_on_a_long_minimal_input() {
    // 150 elements of 9: the scans alone would cost 9 runs per element, 1350 in all, and
    // the stage stops at its budget of 1024 candidates (a step under way may finish); the
    // shrink still ends at a fixed point, with the classic passes' answer.
    fn long(tc: &mut TestCase, _: &Fixture) -> PropResult {
        let xs = tc.draw(&seedledger_runner::vec(int(0..=9u8), 0..=400));
        prop_assert!(xs.iter().filter(|&&x| x >= 9).count() < 150);
        Ok(())
    }
    let property = Property::new("long", long);
    let fixture = Fixture::new(Vec::new());
    let start: Vec<u64> = (0..160).flat_map(|_| [1, 9]).chain([0]).collect();
    let eval = evaluate(&property, TestCase::replay(start, false), &fixture);
    let signature = eval.outcome.failure().unwrap().signature.clone();
    let config = ShrinkConfig::default();
    let run = |passes| {
        shrink_with(
            &property,
            &fixture,
            &eval.record.choices,
            &signature,
            &config,
            Judging::Once,
            passes,
        )
    };
    let (classic, canonical) = (run(Passes::Classic), run(Passes::Canonical));
    assert_eq!(canonical.stop, ShrinkStop::FixedPoint);
    assert_eq!(canonical.choices, classic.choices);
    assert!(
        canonical.evaluations <= classic.evaluations + 1024 + 128,
        "{} against {}",
        canonical.evaluations,
        classic.evaluations
    );
}
