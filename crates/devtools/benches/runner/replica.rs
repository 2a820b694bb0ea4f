//! The floor with seedledger's own values: `vec(any_int::<u64>(), 0..=max)` written by hand on
//! rand_chacha from the `chacha8-v1` scheme's description (the key, Lemire ranges, the
//! hidden size, the edge bias), with none of the framework (no `TestCase`, no `Gen`, no
//! `catch_unwind`). [`same_values`] checks, seed by seed, that it really generates what the
//! framework does: the one check of what a seed means that does not go through the
//! implementation (the bench refuses to run without it, and `tests/bench_runner.rs` runs it).
//! [`Replica::any_u64_v2`] and [`same_values_v2`] do the same for `chacha8-v2`, written from
//! its description in `case.rs`'s module docs (plainly, with branches: a reference, not a
//! fast path), and [`Replica::any_u64_v3`] / [`same_values_v3`] for `chacha8-v3`, the
//! default, whose values the floor draws.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use seedledger_runner::{Scheme, TestCase, any_int, vec};

pub struct Replica {
    rng: ChaCha8Rng,
    bits: u64,
    bits_left: u32,
    recent: [u64; 8],
    n_recent: usize,
    /// `chacha8-v3`'s ring of the last 64 indices.
    ring: [u64; 64],
}

impl Replica {
    pub fn new(seed: u64) -> Replica {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..].copy_from_slice(b"seedledger/chacha8/v1\0\0\0");
        Replica {
            rng: ChaCha8Rng::from_seed(key),
            bits: 0,
            bits_left: 0,
            recent: [0; 8],
            n_recent: 0,
            ring: [0; 64],
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.rng.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.rng.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    fn take_bits(&mut self, n: u32) -> u64 {
        if self.bits_left < n {
            self.bits = self.rng.next_u64();
            self.bits_left = 64;
        }
        let out = self.bits & ((1 << n) - 1);
        self.bits >>= n;
        self.bits_left -= n;
        out
    }

    fn recent(&mut self) -> Option<u64> {
        let n = self.n_recent.min(8) as u64;
        (n > 0).then(|| self.recent[self.below(n) as usize])
    }

    /// A full-range `u64`, biased as the scheme biases it: three times in four a uniform
    /// word, else an edge (0, 1, MAX, a byte, a recent value, a recent value nudged).
    pub fn any_u64(&mut self) -> u64 {
        let v = if self.take_bits(2) != 0 {
            self.rng.next_u64()
        } else {
            match self.take_bits(3) {
                0 => 0,
                1 => 1,
                2 => u64::MAX,
                3 => self.below(256),
                4 => self.recent().unwrap_or_else(|| self.rng.next_u64()),
                5 => match self.recent() {
                    Some(r) => r.saturating_add(1 + self.below(4)),
                    None => self.rng.next_u64(),
                },
                6 => match self.recent() {
                    Some(r) => r.saturating_sub(1 + self.below(4)),
                    None => self.rng.next_u64(),
                },
                _ => self.rng.next_u64(),
            }
        };
        self.recent[self.n_recent % 8] = v;
        self.n_recent += 1;
        v
    }

    /// A full-range `u64` under `chacha8-v2`: 5 control bits, then one word `x`, the uniform
    /// value (the range is the whole word); one time in four (control bits 0..2 both 0) the
    /// kind (bits 2..5) picks an edge computed from `x` instead.
    pub fn any_u64_v2(&mut self) -> u64 {
        let control = self.take_bits(5);
        let x = self.rng.next_u64();
        let n = self.n_recent.min(8) as u64;
        let recent = self.recent[((((x >> 32) & ((1 << 30) - 1)) * n) >> 30) as usize];
        let delta = 1 + (x >> 62);
        let v = if control & 3 != 0 {
            x
        } else {
            match control >> 2 {
                0 => 0,
                1 => 1,
                2 => u64::MAX,
                3 => (x & 0xff) >> ((x >> 56) & 7),
                4 if n > 0 => recent,
                5 if n > 0 => recent.saturating_add(delta),
                6 if n > 0 => recent.saturating_sub(delta),
                7 => u64::MAX - delta,
                _ => x,
            }
        };
        self.recent[self.n_recent % 8] = v;
        self.n_recent += 1;
        v
    }

    /// A full-range `u64` under `chacha8-v3`: 7 control bits, then one word `x`, the uniform
    /// value; three times in eight (control bits 0..3 below 3) the kind (bits 3..7) picks a
    /// special value computed from `x`: 0, 1, the far end, a small value, a repeat of one of
    /// the last 8 or the last 64 values (exact or nudged).
    pub fn any_u64_v3(&mut self) -> u64 {
        let control = self.take_bits(7);
        let x = self.rng.next_u64();
        let count = self.n_recent as u64;
        let s = (x >> 32) & ((1 << 30) - 1);
        let near = self.ring[(count.wrapping_sub(1 + ((s * count.min(8)) >> 30)) % 64) as usize];
        let deep = self.ring[(((s * count.min(64)) >> 30) % 64) as usize];
        let delta = 1 + (x >> 62);
        let v = if control & 7 >= 3 {
            x
        } else {
            match control >> 3 {
                0 => 0,
                1 => 1,
                2 => u64::MAX - (x >> 62) % 3,
                3 | 4 => (x & 0xff) >> ((x >> 56) & 7),
                5 | 6 if count > 0 => near,
                7 if count > 0 => near.saturating_add(delta),
                8 if count > 0 => near.saturating_sub(delta),
                9..=13 if count > 0 => deep,
                14 if count > 0 => deep.saturating_add(delta),
                15 if count > 0 => deep.saturating_sub(delta),
                _ => x,
            }
        };
        self.ring[(count % 64) as usize] = v;
        self.n_recent += 1;
        v
    }

    /// A length in `0..=max` (`max` > 3) under `chacha8-v3`: one time in eight `max`, one in
    /// eight `1..=3`, else uniform.
    pub fn len_v3(&mut self, max: u64) -> usize {
        (match self.take_bits(3) {
            0 => max,
            1 => 1 + self.below(3),
            _ => self.below(max + 1),
        }) as usize
    }

    /// A length in `0..=max` (`max` > 3), drawn as a collection's hidden size: one time in
    /// eight 0, one in eight `0..=3`, else uniform.
    pub fn len(&mut self, max: u64) -> usize {
        (match self.take_bits(3) {
            0 => 0,
            1 => self.below(4),
            _ => self.below(max + 1),
        }) as usize
    }
}

/// Seed `seed`'s `Vec<u64>` of length `0..=max_len`, into `out`.
pub fn input(seed: u64, max_len: u64, out: &mut Vec<u64>) {
    let mut r = Replica::new(seed);
    let len = r.len(max_len);
    out.clear();
    out.extend((0..len).map(|_| r.any_u64()));
}

/// Seed `seed`'s `Vec<u64>` of length `0..=max_len` under `chacha8-v2`, into `out`.
pub fn input_v2(seed: u64, max_len: u64, out: &mut Vec<u64>) {
    let mut r = Replica::new(seed);
    let len = r.len(max_len);
    out.clear();
    out.extend((0..len).map(|_| r.any_u64_v2()));
}

/// Seed `seed`'s `Vec<u64>` of length `0..=max_len` under `chacha8-v3`, into `out`.
pub fn input_v3(seed: u64, max_len: u64, out: &mut Vec<u64>) {
    let mut r = Replica::new(seed);
    let len = r.len_v3(max_len);
    out.clear();
    out.extend((0..len).map(|_| r.any_u64_v3()));
}

/// The first seed on which the `chacha8-v3` replica and the framework disagree (there must be
/// none).
pub fn same_values_v3(seeds: std::ops::Range<u64>, max_len: usize) -> Option<u64> {
    let mut scratch = Vec::new();
    seeds.into_iter().find(|&seed| {
        input_v3(seed, max_len as u64, &mut scratch);
        TestCase::random_with(Scheme::V3, seed).draw(&vec(any_int::<u64>(), 0..=max_len)) != scratch
    })
}

/// The first seed on which the `chacha8-v2` replica and the framework disagree (there must be
/// none).
pub fn same_values_v2(seeds: std::ops::Range<u64>, max_len: usize) -> Option<u64> {
    let mut scratch = Vec::new();
    seeds.into_iter().find(|&seed| {
        input_v2(seed, max_len as u64, &mut scratch);
        TestCase::random_with(Scheme::V2, seed).draw(&vec(any_int::<u64>(), 0..=max_len)) != scratch
    })
}

/// The first seed on which the replica and the framework disagree (there must be none).
pub fn same_values(seeds: std::ops::Range<u64>, max_len: usize) -> Option<u64> {
    let mut scratch = Vec::new();
    seeds.into_iter().find(|&seed| {
        input(seed, max_len as u64, &mut scratch);
        TestCase::random_with(Scheme::V1, seed).draw(&vec(any_int::<u64>(), 0..=max_len)) != scratch
    })
}
