//! The seed -> random stream schemes, `chacha8-v1`, `chacha8-v2` and `chacha8-v3`, and the
//! integer arithmetic built on their raw words. Every value a seed means is derived here (and
//! in `case.rs` and the generators) by our own code, never by a `rand` distribution whose
//! algorithm a version bump could change.
//!
//! A scheme names the whole map from a seed to an input: the stream below, and how
//! `case.rs` and the generators turn it into choices. All schemes share the stream and the
//! ranges. v1 and v2 differ only in the biased choice (`TestCase::choice`, what every
//! integer, char and element index draws through), described in `case.rs`. v3 changes, beside
//! its biased choice (`case.rs`), what the generators make of the stream: hidden collection
//! and repetition sizes (`case.rs`), `select` (uniform), characters and regex classes
//! (printable ASCII half the time), and the special values of `any_f64` / `any_f32` (NaN
//! less often); each generator's rustdoc says what it draws under v3 and under v1 / v2. A
//! receipt records the scheme of its run as `rng` (a receipt without `rng` is under
//! `chacha8-v1`), and every replay of its seeds uses that scheme. New runs use
//! [`Scheme::DEFAULT`], `chacha8-v3`.
//!
//! # The stream (every scheme)
//!
//! * The stream is ChaCha with 8 rounds (`rand_chacha::ChaCha8Rng`, stream 0, word position
//!   0) keyed with 32 bytes: the seed as 8 little-endian bytes, followed by the 24 ASCII bytes
//!   `seedledger/chacha8/v1\0\0\0` (`chacha8-v2` and `-v3` keep this key: the same seed,
//!   the same words).
//! * Words are read with `next_u64` (two consecutive little-endian 32-bit outputs).
//! * A uniform integer in `0..n` is Lemire's multiply-shift with rejection: `m = x * n`
//!   (128-bit); reject while `low64(m) < (2^64 - n) mod n`; the value is `high64(m)`.
//!   `0..=u64::MAX` is the raw word.
//!
//! Golden tests (`tests/golden.rs`, `tests/golden_generators.rs`) pin the first words and
//! first generated values of several seeds under each scheme, so a change in what a seed
//! means fails CI.

use rand_chacha::ChaCha8Core;
use rand_core::SeedableRng;
use rand_core::block::Generator;

/// The name of the scheme new runs use ([`Scheme::DEFAULT`]), recorded in receipts as `rng`.
pub const RNG_SCHEME: &str = Scheme::DEFAULT.name();

/// A seed -> input scheme: what a seed means. See the module docs and `case.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scheme {
    /// `chacha8-v1`: every receipt without `rng` is under it.
    V1,
    /// `chacha8-v2`: v1's stream with a branch-free biased choice.
    V2,
    /// `chacha8-v3`: v2's stream and choice layout with distributions chosen for finding
    /// bugs (sizes, no bias on small ranges, deeper repeats; the default).
    #[default]
    V3,
}

/// A scheme name no scheme of this build has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rng scheme `{name}` (known: chacha8-v1, chacha8-v2, chacha8-v3)")]
pub struct UnknownScheme {
    /// The name as given.
    pub name: String,
}

impl Scheme {
    /// The scheme new runs use.
    pub const DEFAULT: Scheme = Scheme::V3;
    /// Every scheme, oldest first.
    pub const ALL: [Scheme; 3] = [Scheme::V1, Scheme::V2, Scheme::V3];

    /// The name receipts record (`rng`).
    pub const fn name(self) -> &'static str {
        match self {
            Scheme::V1 => "chacha8-v1",
            Scheme::V2 => "chacha8-v2",
            Scheme::V3 => "chacha8-v3",
        }
    }

    /// The scheme called `name`.
    pub fn parse(name: &str) -> Result<Scheme, UnknownScheme> {
        Scheme::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UnknownScheme {
                name: name.to_string(),
            })
    }

    /// The scheme of a receipt from its `rng` field: absent means `chacha8-v1`.
    pub fn of_receipt(rng: Option<&str>) -> Result<Scheme, UnknownScheme> {
        rng.map_or(Ok(Scheme::V1), Scheme::parse)
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Scheme {
    type Err = UnknownScheme;
    fn from_str(name: &str) -> Result<Scheme, UnknownScheme> {
        Scheme::parse(name)
    }
}

const KEY_SUFFIX: &[u8; 24] = b"seedledger/chacha8/v1\0\0\0";

/// 64-bit words per refill of the buffer: one call of the ChaCha core (4 blocks of 16
/// 32-bit words).
const BUF_WORDS: usize = 32;

/// The random stream of one seed: `rand_chacha::ChaCha8Rng`'s stream read with `next_u64`,
/// buffered here as 64-bit words. The core fills 64 32-bit words at a time; `next_u64` of
/// `ChaCha8Rng` pairs them in order (low word first), and every read of this stream is a
/// `next_u64`, so a pair never straddles two fills and the words are exactly
/// `ChaCha8Rng::next_u64`'s (`tests/golden.rs` pins them). Reading the pairs from our own
/// buffer keeps the hot path to a load, a compare and an increment.
#[derive(Clone)]
pub struct SeedRng {
    pub(crate) block: Block,
    /// The next unread word of `block` ([`BUF_WORDS`]: none left).
    pub(crate) pos: usize,
}

/// The ChaCha core and its current fill, paired into words. The read position lives
/// beside it ([`SeedRng::pos`]) so that a run of draws can hold it in a local
/// (`case.rs`'s `Hot`) while the block stays in memory.
#[derive(Clone)]
pub(crate) struct Block {
    core: ChaCha8Core,
    words: [u64; BUF_WORDS],
}

impl Block {
    /// The word at `*pos`, the block refilled first when every word is read.
    #[inline(always)]
    pub(crate) fn next(&mut self, pos: &mut usize) -> u64 {
        let at = if *pos < BUF_WORDS {
            *pos
        } else {
            self.refill();
            0
        };
        *pos = at + 1;
        self.words[at]
    }

    /// The next fill of the buffer (every [`BUF_WORDS`] words; out of line so that
    /// [`Block::next`] stays small).
    #[inline(never)]
    fn refill(&mut self) {
        let mut halves = [0u32; 2 * BUF_WORDS];
        self.core.generate(&mut halves);
        for (word, pair) in self.words.iter_mut().zip(halves.chunks_exact(2)) {
            *word = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        }
    }
}

impl std::fmt::Debug for SeedRng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedRng").finish_non_exhaustive()
    }
}

impl SeedRng {
    /// The stream of `seed` (see the module docs for the key).
    pub fn new(seed: u64) -> SeedRng {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..].copy_from_slice(KEY_SUFFIX);
        SeedRng {
            block: Block {
                core: ChaCha8Core::from_seed(key),
                words: [0; BUF_WORDS],
            },
            pos: BUF_WORDS,
        }
    }

    /// The next word of the stream.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.block.next(&mut self.pos)
    }

    /// A uniform integer in `0..=max`.
    #[inline]
    pub fn upto(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            self.next_u64()
        } else {
            self.below(max + 1)
        }
    }

    /// A uniform integer in `0..n`; `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let first = self.next_u64();
        below_from(first, n, || self.next_u64())
    }
}

/// [`SeedRng::upto`] whose first word is `first`, already drawn, and whose further words
/// (drawn only on a rejection) come from `next`: the value `upto` gives when `first` is
/// the next word.
#[inline(always)]
pub(crate) fn upto_from(first: u64, max: u64, next: impl FnMut() -> u64) -> u64 {
    if max == u64::MAX {
        first
    } else {
        below_from(first, max + 1, next)
    }
}

/// [`SeedRng::below`] whose first word is `first`, already drawn; `next` draws the words
/// a rejection needs.
#[inline(always)]
pub(crate) fn below_from(first: u64, n: u64, mut next: impl FnMut() -> u64) -> u64 {
    debug_assert!(n > 0);
    let mut m = u128::from(first) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(next()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::Rng;

    /// The buffered stream is `ChaCha8Rng::next_u64`'s, word for word, across several fills.
    #[test]
    fn the_buffered_stream_is_chacha8rngs_next_u64() {
        for seed in [0, 1, 2, 7, 1 << 40, u64::MAX] {
            let mut key = [0u8; 32];
            key[..8].copy_from_slice(&seed.to_le_bytes());
            key[8..].copy_from_slice(KEY_SUFFIX);
            let mut reference = ChaCha8Rng::from_seed(key);
            let mut ours = SeedRng::new(seed);
            for i in 0..5 * BUF_WORDS + 3 {
                assert_eq!(
                    ours.next_u64(),
                    reference.next_u64(),
                    "seed {seed}, word {i}"
                );
            }
        }
    }
}
