//! A hex decoder modelled on ETNA's `hex` workload (alpaylan/hex-etna): our own `decode`
//! (odd length first, then each pair's two nibbles, the first invalid byte reported with its
//! offset) and its error's `Display`, with the crate's two historical bugs:
//!
//! * `from_hex_accepts_whitespace` (after 71c83f2, "Stop accepting whitespace in
//!   FromHex::from_hex"): space, tab, newline and carriage return decode as the nibble 0.
//!   Caught by `HexDecodeStrict` (a string decodes exactly when it has even length and only
//!   hex digits), over strings drawn from the hex digits and the four whitespace characters.
//! * `invalid_char_display_raw` (after 764ee61, "Fix Error::InvalidHexCharacter::to_string"):
//!   the error message shows the invalid character raw instead of escaped. Caught by
//!   `HexErrorDisplayEscaped` (no control character in the message) over arbitrary bytes.

use crate::bst::spec;
use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, any_int, select, vec};

/// The mutants (variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// Whitespace decodes as 0.
    FromHexAcceptsWhitespace,
    /// The invalid character is shown raw in the error message.
    InvalidCharDisplayRaw,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("from_hex_accepts_whitespace", M::FromHexAcceptsWhitespace),
        ("invalid_char_display_raw", M::InvalidCharDisplayRaw),
    ];
}

/// Why bytes do not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromHexError {
    /// A byte that is not a hex digit, at this offset.
    InvalidHexCharacter {
        /// The byte, as a character.
        c: char,
        /// Its offset.
        index: usize,
    },
    /// An odd number of bytes.
    OddLength,
}

impl FromHexError {
    /// The error message with mutant `m`.
    pub fn message(&self, m: M) -> String {
        match self {
            FromHexError::InvalidHexCharacter { c, index } if m == M::InvalidCharDisplayRaw => {
                format!("Invalid character '{c}' at position {index}")
            }
            FromHexError::InvalidHexCharacter { c, index } => {
                format!("Invalid character {c:?} at position {index}")
            }
            FromHexError::OddLength => "Odd number of digits".to_string(),
        }
    }
}

fn val(m: M, bytes: &[u8], index: usize) -> Result<u8, FromHexError> {
    let b = bytes[index];
    match b {
        b'0'..=b'9' => Ok(b - b'0'),
        b'a'..=b'f' => Ok(b - b'a' + 10),
        b'A'..=b'F' => Ok(b - b'A' + 10),
        b' ' | b'\t' | b'\n' | b'\r' if m == M::FromHexAcceptsWhitespace => Ok(0),
        _ => Err(FromHexError::InvalidHexCharacter {
            c: char::from(b),
            index,
        }),
    }
}

/// Decodes hex digits into bytes.
pub fn decode(m: M, bytes: &[u8]) -> Result<Vec<u8>, FromHexError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(FromHexError::OddLength);
    }
    (0..bytes.len() / 2)
        .map(|i| Ok(val(m, bytes, 2 * i)? << 4 | val(m, bytes, 2 * i + 1)?))
        .collect()
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&String`.
#[allow(clippy::ptr_arg)]
fn decode_strict(s: &String, m: M) -> Verdict {
    let valid = s.len().is_multiple_of(2) && s.bytes().all(|b| b.is_ascii_hexdigit());
    let result = decode(m, s.as_bytes());
    Verdict::check(result.is_ok() == valid, || {
        format!("{s:?} decodes to {result:?}")
    })
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&Vec` / `&String`.
#[allow(clippy::ptr_arg)]
fn error_display_escaped(s: &Vec<u8>, m: M) -> Verdict {
    match decode(m, s) {
        Ok(_) => Verdict::Pass,
        Err(e) => {
            let message = e.message(m);
            Verdict::check(!message.chars().any(char::is_control), || {
                format!("raw control character in {message:?}")
            })
        }
    }
}

/// The characters `HexDecodeStrict` draws from: the hex digits and four whitespace bytes.
pub const POOL: &str = "0123456789abcdefABCDEF \t\n\r";

fn sl_pool() -> BoxedGen<String> {
    vec(select(POOL.chars().collect()), 0..=8)
        .map(|cs| cs.into_iter().collect::<String>())
        .boxed()
}

fn pt_pool() -> BoxedStrategy<String> {
    proptest::collection::vec(
        proptest::sample::select(POOL.chars().collect::<Vec<_>>()),
        0..=8,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>())
    .boxed()
}

fn sl_bytes() -> BoxedGen<Vec<u8>> {
    vec(any_int::<u8>(), 0..=8).boxed()
}

fn pt_bytes() -> BoxedStrategy<Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..=8).boxed()
}

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        spec!("HexDecodeStrict", decode_strict, (sl_pool), (pt_pool)),
        spec!(
            "HexErrorDisplayEscaped",
            error_display_escaped,
            (sl_bytes),
            (pt_bytes)
        ),
    ]
}

/// The hex workload.
pub const WORKLOAD: Workload = Workload {
    name: "hex",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        ("from_hex_accepts_whitespace", &["HexDecodeStrict"]),
        ("invalid_char_display_raw", &["HexErrorDisplayEscaped"]),
    ],
};
