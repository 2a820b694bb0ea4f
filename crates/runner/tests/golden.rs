//! Golden values: what the first seeds mean, under each scheme. A change here changes what
//! every recorded seed means, so it must come with a new RNG scheme name (`Scheme`) and
//! receipt note; the lines of an existing scheme never change.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{
    Gen, RNG_SCHEME, Scheme, SeedRng, TestCase, any_int, boolean, int, string, vec,
};

#[test]
fn scheme_name_is_pinned() {
    assert_eq!(Scheme::V1.name(), "chacha8-v1");
    assert_eq!(Scheme::V2.name(), "chacha8-v2");
    assert_eq!(Scheme::V3.name(), "chacha8-v3");
    assert_eq!(RNG_SCHEME, "chacha8-v3", "new runs use chacha8-v3");
    assert_eq!(Scheme::DEFAULT, Scheme::V3);
    assert_eq!(Scheme::parse("chacha8-v1"), Ok(Scheme::V1));
    assert_eq!(Scheme::parse("chacha8-v2"), Ok(Scheme::V2));
    assert_eq!(Scheme::parse("chacha8-v3"), Ok(Scheme::V3));
    assert_eq!(
        Scheme::parse("chacha8-v4").unwrap_err().to_string(),
        "unknown rng scheme `chacha8-v4` (known: chacha8-v1, chacha8-v2, chacha8-v3)"
    );
    // A receipt without `rng` was written under the only scheme there was.
    assert_eq!(Scheme::of_receipt(None), Ok(Scheme::V1));
    assert_eq!(Scheme::of_receipt(Some("chacha8-v2")), Ok(Scheme::V2));
    assert_eq!(Scheme::of_receipt(Some("chacha8-v3")), Ok(Scheme::V3));
}

#[test]
fn raw_words_of_seeds_are_pinned() {
    let words = |seed: u64| {
        let mut rng = SeedRng::new(seed);
        [rng.next_u64(), rng.next_u64(), rng.next_u64()]
    };
    let got: Vec<_> = [0u64, 1, 1101, u64::MAX]
        .iter()
        .map(|&s| words(s))
        .collect();
    insta_like(&format!("{got:?}"), GOLDEN_WORDS);
}

/// The first values of several seeds under `scheme`, one line a seed.
fn first_values(scheme: Scheme) -> String {
    let g = (
        int(-1000..=1000i64),
        vec(int(0..=9u8), 0..=6),
        any_int::<u64>(),
        boolean(),
        string_of_len(),
    );
    let got: Vec<String> = [0u64, 1, 1101, 1102, u64::MAX]
        .iter()
        .map(|&s| format!("{:?}", TestCase::random_with(scheme, s).draw(&g)))
        .collect();
    got.join("\n")
}

#[test]
fn first_values_of_seeds_are_pinned() {
    insta_like(&first_values(Scheme::V1), GOLDEN_VALUES);
}

#[test]
fn first_values_of_seeds_are_pinned_under_v2() {
    insta_like(&first_values(Scheme::V2), GOLDEN_VALUES_V2);
}

#[test]
fn first_values_of_seeds_are_pinned_under_v3() {
    insta_like(&first_values(Scheme::V3), GOLDEN_VALUES_V3);
}

#[test]
fn recording_does_not_change_what_a_seed_means() {
    let g = vec((int(-50..=50i32), string()), 0..=10);
    for (scheme, seed) in Scheme::ALL
        .into_iter()
        .flat_map(|s| (0..200u64).map(move |n| (s, n)))
    {
        let fast = TestCase::random_with(scheme, seed).draw(&g);
        let mut rec = TestCase::recording_with(scheme, seed);
        let recorded = rec.draw(&g);
        assert_eq!(fast, recorded, "seed {seed}");
        let record = rec.into_record();
        let replayed = TestCase::replay(record.choices.clone(), false).draw(&g);
        assert_eq!(replayed, recorded, "seed {seed}");
    }
}

fn string_of_len() -> impl Gen<Value = String> {
    seedledger_runner::string_of(seedledger_runner::char_in('a'..='z'), 0..=5)
}

fn insta_like(got: &str, want: &str) {
    assert_eq!(got.trim(), want.trim(), "golden values changed:\n{got}");
}

const GOLDEN_WORDS: &str = "[[6182224123804511820, 12981062262824435276, 8686750407166444519], [18216133326304080645, 1925358401669858430, 7771150273654428072], [13466711416305979613, 16787941170346512548, 13110711925579962351], [14679808621527011627, 3450837470387494418, 8186585329043908892]]";
const GOLDEN_VALUES_V2: &str = r#"
(-2, [9, 4, 6], 7734517021461264244, false, "ovpi")
(-104, [], 7771150273654428072, true, "")
(911, [9, 9, 3, 9], 11662553443126212919, false, "")
(720, [8, 7, 0], 1442, false, "rg")
(-187, [9], 0, true, "xbf")
"#;
const GOLDEN_VALUES_V3: &str = r#"
(-704, [9, 4, 6], 7734517021461264244, false, "toviz")
(-104, [5, 0], 4762203419463506972, true, "gu")
(911, [9, 5, 3], 17937026157124365127, true, "")
(720, [8, 7, 0], 0, false, "rg")
(-187, [9, 8, 5], 11716681599165976032, true, "nyftm")
"#;
const GOLDEN_VALUES: &str = r#"
(-90, [9, 4, 6], 7734517021461264244, false, "ovpi")
(-104, [0], 4762203419463506972, true, "ag")
(911, [9, 5, 9, 3], 17937026157124365127, true, "")
(720, [8], 14650507470394770331, false, "kmj")
(-187, [9, 8, 9], 10180055208106320938, true, "nyfzz")
"#;

#[test]
fn pointer_sized_and_map_generators_are_portable() {
    use seedledger_runner::btree_map;
    let g = (
        any_int::<usize>(),
        any_int::<isize>(),
        int(3..=9usize),
        btree_map(int(0..=3u8), boolean(), 0..=6),
    );
    for seed in 0..300u64 {
        let (u, i, r, m) = TestCase::random_with(Scheme::V1, seed).draw(&g);
        assert!(u as u64 <= u64::from(u32::MAX));
        assert!(i64::from(i32::MIN) <= i as i64 && i as i64 <= i64::from(i32::MAX));
        assert!((3..=9).contains(&r));
        assert!(m.len() <= 4 && m.keys().all(|k| *k <= 3));
    }
    let first: Vec<String> = (0..3u64)
        .map(|s| format!("{:?}", TestCase::random_with(Scheme::V1, s).draw(&g)))
        .collect();
    insta_like(&first.join("\n"), GOLDEN_PORTABLE);
}

const GOLDEN_PORTABLE: &str = r#"
(180, -1011270844, 9, {0: true, 2: true})
(448282435, -904680960, 3, {2: false})
(4294967295, 1794832607, 6, {0: false, 1: true})
"#;
