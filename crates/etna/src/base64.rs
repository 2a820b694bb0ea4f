//! A base64 codec modelled on ETNA's `rust-base64` workload (alpaylan/rust-base64-etna): our
//! own standard-alphabet encoder and decoder (padded, and unpadded), with three mutants
//! re-creating the kind of bug the crate fixed:
//!
//! * `alphabet_7_for_f` (after 838355e, "Correct BinHex 4.0 alphabet according to
//!   specifications": the alphabet literal held `7` where the specification has `f`): the
//!   alphabet has `7` at index 31 as well as at 59, so index 31 cannot be decoded back.
//!   Caught by `Base64EncodeMatchesSpec` (encoding equals the specification's) and
//!   `Base64RoundTrip`.
//! * `decoded_len_overflow` (after fa47981, "Switch to non-overflowing decoded length
//!   formula"): the decoded-length estimate adds 3 before dividing and fails on the last
//!   three `u64` values. Caught by `Base64DecodedLenTotal` over all of `u64` (upstream's
//!   adapters draw from a hand-picked pool of near-maximal values; ours are unbiased, so only
//!   a generator that reaches the maximum finds it).
//! * `trailing_bits` (after the crate's `InvalidLastSymbol` check): the unpadded decoder
//!   accepts a last symbol with non-zero unused bits, so two strings decode to the same bytes.
//!   Caught by `Base64DecodeCanonical` (a decoded string is the encoding of its bytes).

use crate::bst::spec;
use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, any_int, select, vec};

/// The mutants (variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// The alphabet has `7` where `f` belongs.
    Alphabet7ForF,
    /// The decoded-length estimate overflows near `u64::MAX`.
    DecodedLenOverflow,
    /// Non-zero unused bits in the last symbol are accepted.
    TrailingBits,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("alphabet_7_for_f", M::Alphabet7ForF),
        ("decoded_len_overflow", M::DecodedLenOverflow),
        ("trailing_bits", M::TrailingBits),
    ];
}

/// The standard alphabet (RFC 4648).
pub const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn alphabet(m: M) -> [u8; 64] {
    let mut a = *STANDARD;
    if m == M::Alphabet7ForF {
        a[31] = b'7';
    }
    a
}

/// Encodes `bytes`, padded with `=` when `pad`.
pub fn encode(m: M, bytes: &[u8], pad: bool) -> String {
    let a = alphabet(m);
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let mut n = 0u32;
        for (i, b) in chunk.iter().enumerate() {
            n |= u32::from(*b) << (16 - 8 * i);
        }
        let symbols = chunk.len() + 1;
        for i in 0..symbols {
            out.push(char::from(a[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if pad {
            out.extend(std::iter::repeat_n('=', 4 - symbols));
        }
    }
    out
}

/// Why a string does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A byte outside the alphabet at this offset.
    InvalidByte(usize),
    /// A length no encoding has.
    InvalidLength,
    /// The last symbol has non-zero unused bits.
    InvalidLastSymbol,
}

/// Decodes unpadded base64 (`=` is an invalid byte).
pub fn decode_unpadded(m: M, s: &str) -> Result<Vec<u8>, DecodeError> {
    let a = alphabet(m);
    let mut table = [None; 256];
    for (i, c) in a.iter().enumerate() {
        table[usize::from(*c)] = Some(i as u32);
    }
    let bytes = s.as_bytes();
    if bytes.len() % 4 == 1 {
        return Err(DecodeError::InvalidLength);
    }
    let mut out = Vec::new();
    for (c, chunk) in bytes.chunks(4).enumerate() {
        let mut n = 0u32;
        for (i, b) in chunk.iter().enumerate() {
            let v = table[usize::from(*b)].ok_or(DecodeError::InvalidByte(4 * c + i))?;
            n |= v << (18 - 6 * i);
        }
        let whole = chunk.len() - 1;
        let unused = n & (0x00FF_FFFF >> (8 * whole));
        if unused != 0 && m != M::TrailingBits {
            return Err(DecodeError::InvalidLastSymbol);
        }
        out.extend((0..whole).map(|i| (n >> (16 - 8 * i)) as u8));
    }
    Ok(out)
}

/// Decodes padded base64.
pub fn decode_padded(m: M, s: &str) -> Result<Vec<u8>, DecodeError> {
    if !s.len().is_multiple_of(4) {
        return Err(DecodeError::InvalidLength);
    }
    let trimmed = s
        .strip_suffix("==")
        .or_else(|| s.strip_suffix('='))
        .unwrap_or(s);
    decode_unpadded(m, trimmed)
}

/// An upper bound of the decoded length of `n` encoded bytes (`None`: the estimate failed).
pub fn decoded_len_estimate(m: M, n: u64) -> Option<u64> {
    if m == M::DecodedLenOverflow {
        return n.checked_add(3).map(|x| x / 4 * 3);
    }
    Some((n / 4 + u64::from(!n.is_multiple_of(4))) * 3)
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&Vec` / `&String`.
#[allow(clippy::ptr_arg)]
fn round_trip(bytes: &Vec<u8>, m: M) -> Verdict {
    let encoded = encode(m, bytes, true);
    let decoded = decode_padded(m, &encoded);
    Verdict::check(decoded.as_ref() == Ok(bytes), || {
        format!("{encoded:?} decodes to {decoded:?}")
    })
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&Vec` / `&String`.
#[allow(clippy::ptr_arg)]
fn encode_matches_spec(bytes: &Vec<u8>, m: M) -> Verdict {
    let (got, want) = (encode(m, bytes, true), encode(M::Base, bytes, true));
    Verdict::check(got == want, || format!("{got:?} != {want:?}"))
}

fn decoded_len_total(n: &u64, m: M) -> Verdict {
    match decoded_len_estimate(m, *n) {
        Some(e) => Verdict::check(e >= n / 4 * 3, || format!("estimate {e} too small")),
        None => Verdict::Fail(format!("no estimate for {n}")),
    }
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&Vec` / `&String`.
#[allow(clippy::ptr_arg)]
fn decode_canonical(s: &String, m: M) -> Verdict {
    match decode_unpadded(m, s) {
        Err(_) => Verdict::Pass,
        Ok(bytes) => {
            let again = encode(m, &bytes, false);
            Verdict::check(&again == s, || {
                format!("decodes to {bytes:?}, which encodes to {again:?}")
            })
        }
    }
}

fn sl_bytes() -> BoxedGen<Vec<u8>> {
    vec(any_int::<u8>(), 0..=32).boxed()
}

fn pt_bytes() -> BoxedStrategy<Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..=32).boxed()
}

fn sl_u64() -> BoxedGen<u64> {
    any_int::<u64>().boxed()
}

fn pt_u64() -> BoxedStrategy<u64> {
    any::<u64>().boxed()
}

fn symbols() -> Vec<char> {
    STANDARD.iter().map(|b| char::from(*b)).collect()
}

fn sl_symbols() -> BoxedGen<String> {
    vec(select(symbols()), 0..=10)
        .map(|cs| cs.into_iter().collect::<String>())
        .boxed()
}

fn pt_symbols() -> BoxedStrategy<String> {
    proptest::collection::vec(proptest::sample::select(symbols()), 0..=10)
        .prop_map(|cs| cs.into_iter().collect::<String>())
        .boxed()
}

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        spec!("Base64RoundTrip", round_trip, (sl_bytes), (pt_bytes)),
        spec!(
            "Base64EncodeMatchesSpec",
            encode_matches_spec,
            (sl_bytes),
            (pt_bytes)
        ),
        spec!(
            "Base64DecodedLenTotal",
            decoded_len_total,
            (sl_u64),
            (pt_u64)
        ),
        spec!(
            "Base64DecodeCanonical",
            decode_canonical,
            (sl_symbols),
            (pt_symbols)
        ),
    ]
}

/// The base64 workload.
pub const WORKLOAD: Workload = Workload {
    name: "base64",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        (
            "alphabet_7_for_f",
            &["Base64RoundTrip", "Base64EncodeMatchesSpec"],
        ),
        ("decoded_len_overflow", &["Base64DecodedLenTotal"]),
        ("trailing_bits", &["Base64DecodeCanonical"]),
    ],
};
