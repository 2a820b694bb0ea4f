//! The test case: the one stream of choices every draw goes through.
//!
//! A choice is a non-negative integer `0..=max` whose value is its *simplicity rank*: 0 is
//! the simplest answer (see `generators.rs` for how each generator maps ranks to values). A test
//! case either draws its choices from a seed's random stream or replays a recorded choice
//! sequence; recording (choices, their bounds, and labelled spans around every sub-draw) is
//! switched on for replays and for the re-run of a failing seed, and off for the fast path
//! of the main run. Both random modes consume the random stream identically, so a seed means
//! the same input with and without recording.
//!
//! # The biased choice, per scheme
//!
//! Every random-mode case keeps a *bit buffer* (bits of a stream word, taken from the low end;
//! a take of `k` bits when fewer than `k` are left drops them and draws a new word) and the
//! indices its biased choices returned (`recent`, a ring: under `chacha8-v1` and `-v2` the
//! last 8, written at `count % 8`, `n = min(count, 8)` of them filled; under `chacha8-v3` the
//! last 64, written at `count % 64`, where `count` is the number of biased choices so far).
//! Uniform choices ([`TestCase::uniform_choice`]) and weighted choices are the same in every
//! scheme; hidden collection sizes differ in `chacha8-v3` (below). [`TestCase::choice`]`(max)`
//! draws:
//!
//! **`chacha8-v1`.** Take 2 bits; if not both 0 (3 in 4), the index is uniform in `0..=max`.
//! Otherwise take 3 more bits, the kind: 0 → 0; 1 → `min(1, max)`; 2 → `max`; 3 → uniform in
//! `0..=min(max, 255)`; 4 → a recent index (uniform among the `n` filled, one more draw), else
//! uniform; 5 → that recent index plus `1 + below(4)`, at most `max`, else uniform; 6 → the
//! recent index minus `1 + below(4)`, at least 0, else uniform; 7 → uniform. "Else uniform":
//! when `n == 0` or the recent index picked is above `max`. How many words a choice consumes
//! depends on what it returns.
//!
//! **`chacha8-v2`.** Take 5 control bits `c`, then draw one word `x`; the uniform value `u` is
//! `upto(max)` with `x` as its first word (Lemire, more words only on a rejection). From `x`:
//! `delta = 1 + x[62..64]` (1..=4); `slot = x[32..62] * n >> 30` (one of the `n` filled
//! slots); `r = recent[slot]`; `small = min(x[0..8] >> x[56..59], max)` (log-uniform: in
//! `0..2^k` for `k` = 1..=8 equally likely). If `c[0..2] == 0` (1 in 4), the kind `c[2..5]`
//! selects: 0 → 0; 1 → `min(1, max)`; 2 → `max`; 3 → `small`; 4 → `r`; 5 → `min(r +
//! delta, max)` (saturating); 6 → `r - delta` (saturating at 0); 7 → `max - delta`
//! (saturating at 0); kinds 4..=6 give `u` when `n == 0` or `r > max`. Otherwise the index is
//! `u`. Every candidate is computed and one is selected by index, so the choice has no
//! data-dependent branch, and every choice consumes 5 buffer bits and the words of `u`
//! whatever it returns. It has v1's rate (1 in 4) and kinds but two, chosen on the
//! bug-finding corpus (`tests/bug_corpus.rs`): kind 7 is the near-top edge `max - 1..=4`
//! where v1 draws a second uniform (v1 never draws `i64::MAX`, index `max - 2`), and the
//! small index is log-uniform where v1's is uniform in `0..=255` (v1 draws the value 2 of a
//! `u32` once in 10^4 draws).
//!
//! **`chacha8-v3`.** Take 7 control bits `c`, then draw one word `x`; the uniform value `u`
//! is `upto(max)` with `x` as its first word, as in v2. From `x`: `delta = 1 + x[62..64]`;
//! `s = x[32..62]`; `near = ring[(count - 1 - (s * min(count, 8) >> 30)) % 64]` (one of the
//! last 8 indices); `deep = ring[(s * min(count, 64) >> 30) % 64]` (one of the last 64);
//! `small = min(x[0..8] >> x[56..59], max)` (log-uniform, as in v2); `top = max - (x[62..64]
//! mod 3)` (saturating: `max` half the time, `max - 1` and `max - 2` a quarter each; the far
//! end of the range, `MIN`, `MIN + 1` and `MAX` of a full signed range). If `max >= 64` and
//! `c[0..3] < 3` (3 in 8), the kind `c[3..7]` selects: 0 → 0; 1 → `min(1, max)`; 2 → `top`;
//! 3, 4 → `small`; 5, 6 → `near`; 7 → `min(near + delta, max)`; 8 → `near - delta`
//! (saturating at 0); 9..=13 → `deep`; 14 → `min(deep + delta, max)`; 15 → `deep - delta`
//! (saturating); kinds 5..=8 give `u` when `count == 0` or `near > max`, kinds 9..=15 when
//! `count == 0` or `deep > max`. Otherwise (and always when `max < 64`: a range of at most 64
//! values is uniform, every value already has a probability of at least 1/64) the index is
//! `u`. Every
//! choice consumes 7 buffer bits and the words of `u`, branch-free like v2. The index is
//! written to `ring[count % 64]`.
//!
//! [`TestCase::choice_preferring`]`(max, prefix)` (characters, regex classes: `prefix` is the
//! number of printable ASCII characters ranked first) is `choice(max)` under v1 and v2; under
//! v3, when `0 < prefix <= max`, it takes 1 control bit: 1 → `below(prefix)` (a second
//! word only on a rejection), remembered in the ring; 0 → `choice(max)`.
//!
//! **Sizes.** A random collection or regex repetition of `min..=max` elements has a hidden
//! target size; it takes 3 bits `b`. Under v1 and v2: `b == 0` → `min`; `b == 1` → `min +
//! upto(min(max - min, 3))`; else `min + upto(max - min)` (so `min` about 1 time in 4 for
//! small ranges). Under v3: `b == 0` → `max`; `b == 1` → `min + 1 + upto(min(max - min - 1,
//! 2))` (`min` when `max == min`); else `min + upto(max - min)`, so `min` comes `3/4` as often
//! as under a uniform size (proptest's `SizeRange` is uniform) and `max` at least 1 time in 8.
//!
//! A replay that asks for more choices than it holds stops with [`Stop::Overrun`]; a recorded
//! value above the bound now asked for stops with [`Stop::Invalid`]; a precondition that does
//! not hold ([`TestCase::assume`], a filter that gives up) stops with [`Stop::Discard`]. All
//! three unwind out of the property (without running the panic hook) and are caught by the
//! executor.

use crate::events::TrialEvents;
use crate::rng::{Block, Scheme, SeedRng, upto_from};
use std::borrow::Cow;

mod event;
mod journal;
mod target;
use journal::journal;
pub use journal::{JournalEntry, set_journal};

/// Most choices one test case may make before it is cut off as [`Stop::Overrun`].
pub const MAX_CHOICES: usize = 1 << 20;

/// Why a test case stopped before the property finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A replay ran out of recorded choices, or the case exceeded [`MAX_CHOICES`].
    Overrun,
    /// A replayed choice is above the bound now asked for.
    Invalid,
    /// The input does not meet the property's precondition ([`TestCase::assume`] was false,
    /// or a filter rejected every try): the trial is discarded, neither a pass nor a fail.
    Discard,
}

/// A labelled region of the choice sequence: the choices one sub-draw consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The label of the generator that drew it ([`Gen::label`](crate::prelude::Gen::label)).
    pub label: &'static str,
    /// Index of the first choice.
    pub start: u32,
    /// One past the last choice.
    pub end: u32,
    /// Nesting depth: top-level draws are at depth 0.
    pub depth: u32,
}

impl Span {
    /// How many choices the span holds.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// True when the sub-draw made no choice.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Random-mode state: the stream and the memory that biases draws toward edges and repeats.
#[derive(Debug)]
struct RandomState {
    rng: SeedRng,
    scheme: Scheme,
    bits: u64,
    bits_left: u32,
    /// The indices biased choices returned, a ring: `chacha8-v1` and `-v2` use its first 8
    /// slots (index `n % 8`), `chacha8-v3` all [`RING`] (index `n % RING`).
    recent: [u64; RING],
    n_recent: usize,
}

/// Slots of the `chacha8-v3` ring of returned indices.
const RING: usize = 64;

/// Under `chacha8-v3`, choices of a bound at most this are uniform: every value of such a range
/// already has a probability of at least `1 / 64`, so a bias would only skew it.
pub(crate) const V3_UNBIASED_BELOW: u64 = 63;

impl RandomState {
    fn new(scheme: Scheme, seed: u64) -> RandomState {
        RandomState {
            rng: SeedRng::new(seed),
            scheme,
            bits: 0,
            bits_left: 0,
            recent: [0; RING],
            n_recent: 0,
        }
    }

    #[inline(always)]
    fn take_bits(&mut self, n: u32) -> u64 {
        let rng = &mut self.rng;
        take_bits(&mut self.bits, &mut self.bits_left, n, || rng.next_u64())
    }

    #[inline(always)]
    fn remember(&mut self, index: u64) {
        self.recent[self.n_recent % 8] = index;
        self.n_recent += 1;
    }

    /// An index in `0..=max`, biased toward edges and repeats as the scheme says (see the
    /// module docs). The scheme is one predictable branch per draw.
    #[inline(always)]
    fn biased(&mut self, max: u64) -> u64 {
        match self.scheme {
            Scheme::V3 => self.biased_v3(max),
            Scheme::V2 => self.biased_v2(max),
            Scheme::V1 => {
                let index = self.biased_v1(max);
                self.remember(index);
                index
            }
        }
    }

    /// `chacha8-v2`'s biased index (see the module docs; [`Hot::biased_v2`]), remembered.
    #[inline(always)]
    fn biased_v2(&mut self, max: u64) -> u64 {
        let mut hot = Hot::of(self);
        let index = hot.biased_v2(&mut self.rng.block, &self.recent, max);
        hot.remember(&mut self.recent, index);
        hot.store(self);
        index
    }

    /// `chacha8-v3`'s biased index (see the module docs; [`Hot::biased_v3`]), remembered.
    #[inline(always)]
    fn biased_v3(&mut self, max: u64) -> u64 {
        let mut hot = Hot::of(self);
        let index = hot.biased_v3(&mut self.rng.block, &self.recent, max);
        hot.remember_v3(&mut self.recent, index);
        hot.store(self);
        index
    }

    /// `chacha8-v3`'s preference for the first `prefix` indices (printable ASCII first in a
    /// character's order): one control bit; when set, the index is uniform in `0..prefix`,
    /// else [`RandomState::biased`]. Under `chacha8-v1` and `-v2` it is `biased(max)`.
    #[inline]
    fn preferring(&mut self, max: u64, prefix: u64) -> u64 {
        if self.scheme != Scheme::V3 || prefix == 0 || prefix > max {
            return self.biased(max);
        }
        if self.take_bits(1) == 1 {
            let index = self.rng.below(prefix);
            let mut hot = Hot::of(self);
            hot.remember_v3(&mut self.recent, index);
            hot.store(self);
            index
        } else {
            self.biased_v3(max)
        }
    }

    /// `k` biased choices of bound `max` in a row, `each` called with every index in order:
    /// exactly `k` calls of [`RandomState::biased`]. Under `chacha8-v2` and `-v3` the state's scalars
    /// (read position, control bits, recent count) live in locals for the whole run, so a
    /// collection's loop keeps them in registers instead of storing and reloading them at
    /// every draw.
    #[inline(always)]
    fn biased_run(&mut self, max: u64, k: usize, mut each: impl FnMut(u64)) {
        match self.scheme {
            Scheme::V2 => {
                let mut run = HotRun {
                    hot: Hot::of(self),
                    state: self,
                };
                for _ in 0..k {
                    let index = run
                        .hot
                        .biased_v2(&mut run.state.rng.block, &run.state.recent, max);
                    run.hot.remember(&mut run.state.recent, index);
                    each(index);
                }
                // `run` stores the scalars back as it is dropped: here, or while `each`
                // unwinds (a generator's `map` that panics, which the property may catch and
                // then draw on from the state the draws so far left).
            }
            Scheme::V3 => {
                let mut run = HotRun {
                    hot: Hot::of(self),
                    state: self,
                };
                for _ in 0..k {
                    let index = run
                        .hot
                        .biased_v3(&mut run.state.rng.block, &run.state.recent, max);
                    run.hot.remember_v3(&mut run.state.recent, index);
                    each(index);
                }
            }
            Scheme::V1 => {
                for _ in 0..k {
                    each(self.biased(max));
                }
            }
        }
    }

    /// A recently drawn index, if the one picked fits under `max` (`chacha8-v1`).
    fn recent_one(&mut self, max: u64) -> Option<u64> {
        let n = self.n_recent.min(8);
        (n > 0)
            .then(|| self.recent[self.rng.below(n as u64) as usize])
            .filter(|&r| r <= max)
    }

    /// `chacha8-v1`'s biased index: one draw in four is special (0, 1, the maximum, a small
    /// index, a repeat of a recent index, or a recent index plus or minus 1..=4); the rest
    /// are uniform.
    #[inline(always)]
    fn biased_v1(&mut self, max: u64) -> u64 {
        if self.take_bits(2) != 0 {
            self.rng.upto(max)
        } else {
            self.special(max)
        }
    }

    /// The special quarter of [`RandomState::biased_v1`], kept out of line so the common path
    /// stays small enough to inline into every draw.
    #[cold]
    #[inline(never)]
    fn special(&mut self, max: u64) -> u64 {
        match self.take_bits(3) {
            0 => 0,
            1 => 1.min(max),
            2 => max,
            3 => self.rng.upto(max.min(255)),
            4 => self.recent_one(max).unwrap_or_else(|| self.rng.upto(max)),
            5 => match self.recent_one(max) {
                Some(r) => r.saturating_add(1 + self.rng.below(4)).min(max),
                None => self.rng.upto(max),
            },
            6 => match self.recent_one(max) {
                Some(r) => r.saturating_sub(1 + self.rng.below(4)),
                None => self.rng.upto(max),
            },
            _ => self.rng.upto(max),
        }
    }
}

/// The scalars of a [`RandomState`] a `chacha8-v2` draw reads and writes, copied out so
/// that a run of draws ([`RandomState::biased_run`]) holds them in locals; the stream's
/// block and the recent ring stay in the state.
#[derive(Clone, Copy)]
struct Hot {
    pos: usize,
    bits: u64,
    bits_left: u32,
    n_recent: usize,
}

/// A run's copied scalars and the state they are stored back into when it is dropped.
struct HotRun<'s> {
    hot: Hot,
    state: &'s mut RandomState,
}

impl Drop for HotRun<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.hot.store(self.state);
    }
}

/// A run's choice count, taken up front: set back to what the draws so far took if the run
/// does not end whole (see [`TestCase::fast_choice_run`]).
struct RunCount<'c> {
    before: usize,
    /// Choices per draw.
    each: usize,
    /// Draws handed out.
    done: usize,
    whole: bool,
    n_choices: &'c mut usize,
}

impl Drop for RunCount<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.whole {
            *self.n_choices = self.before + self.done * self.each;
        }
    }
}

/// The next `n` control bits (`n` < 64) from the word `bits` holds (`bits_left` of them
/// unread), a new word from `next` when too few are left: the one definition both the
/// random state and a run's copied scalars take their control bits by.
#[inline(always)]
fn take_bits(bits: &mut u64, bits_left: &mut u32, n: u32, next: impl FnOnce() -> u64) -> u64 {
    if *bits_left < n {
        *bits = next();
        *bits_left = 64;
    }
    let out = *bits & ((1 << n) - 1);
    *bits >>= n;
    *bits_left -= n;
    out
}

impl Hot {
    #[inline(always)]
    fn of(state: &RandomState) -> Hot {
        Hot {
            pos: state.rng.pos,
            bits: state.bits,
            bits_left: state.bits_left,
            n_recent: state.n_recent,
        }
    }

    #[inline(always)]
    fn store(self, state: &mut RandomState) {
        state.rng.pos = self.pos;
        state.bits = self.bits;
        state.bits_left = self.bits_left;
        state.n_recent = self.n_recent;
    }

    /// [`RandomState::remember`] on the copied count.
    #[inline(always)]
    fn remember(&mut self, recent: &mut [u64; RING], index: u64) {
        recent[self.n_recent % 8] = index;
        self.n_recent += 1;
    }

    /// `chacha8-v3`'s remember: every [`RING`] slot in turn.
    #[inline(always)]
    fn remember_v3(&mut self, recent: &mut [u64; RING], index: u64) {
        recent[self.n_recent % RING] = index;
        self.n_recent += 1;
    }

    /// [`RandomState::take_bits`] on the copied scalars.
    #[inline(always)]
    fn take_bits(&mut self, block: &mut Block, n: u32) -> u64 {
        let pos = &mut self.pos;
        take_bits(&mut self.bits, &mut self.bits_left, n, || block.next(pos))
    }

    /// `chacha8-v2`'s biased index (see the module docs): five control bits, one word `x`
    /// (the uniform value's first word), every candidate computed and one selected without a
    /// data-dependent branch; the stream is consumed the same way whatever is selected. The
    /// caller remembers the index (the recent ring is not written here).
    #[inline(always)]
    fn biased_v2(&mut self, block: &mut Block, recent: &[u64; RING], max: u64) -> u64 {
        let control = self.take_bits(block, 5);
        let x = block.next(&mut self.pos);
        let uniform = upto_from(x, max, || block.next(&mut self.pos));
        let n = self.n_recent.min(8) as u64;
        // One of the `n` filled recent slots: `x[32..62] * n >> 30`.
        let slot = (((x >> 32) & 0x3fff_ffff) * n) >> 30;
        let recent = recent[(slot & 7) as usize];
        // 1..=4 from `x[62..64]`.
        let delta = 1 + (x >> 62);
        // Log-uniform small: `x[0..8] >> x[56..59]`, in `0..2^k` for k = 1..=8 equally likely.
        let small = ((x & 0xff) >> ((x >> 56) & 7)).min(max);
        let candidates = [
            0,
            max.min(1),
            max,
            small,
            recent,
            recent.saturating_add(delta).min(max),
            recent.saturating_sub(delta),
            max.saturating_sub(delta),
        ];
        let kind = (control >> 2) as usize;
        // Special when both low bits are 0; kinds 4..=6 need a recent index under `max`.
        // Otherwise the uniform value. All as masks: nothing here is a branch.
        let usable = (kind < 4) | (kind == 7) | ((n != 0) & (recent <= max));
        let special = (control & 3 == 0) & usable;
        let special_mask = (special as u64).wrapping_neg();
        (candidates[kind & 7] & special_mask) | (uniform & !special_mask)
    }

    /// `chacha8-v3`'s biased index (see the module docs): seven control bits, one word `x`,
    /// every candidate computed and one selected without a data-dependent branch, like
    /// [`Hot::biased_v2`]; the caller remembers the index ([`Hot::remember_v3`]).
    #[inline(always)]
    fn biased_v3(&mut self, block: &mut Block, recent: &[u64; RING], max: u64) -> u64 {
        let control = self.take_bits(block, 7);
        let x = block.next(&mut self.pos);
        let uniform = upto_from(x, max, || block.next(&mut self.pos));
        let n = self.n_recent as u64;
        let s = (x >> 32) & 0x3fff_ffff;
        // One of the last `min(n, 8)` indices, and one of the last `min(n, 64)`.
        let back = (s * n.min(8)) >> 30;
        let near = recent[(n.wrapping_sub(1 + back) as usize) % RING];
        let deep = recent[(((s * n.min(RING as u64)) >> 30) as usize) % RING];
        let delta = 1 + (x >> 62);
        let small = ((x & 0xff) >> ((x >> 56) & 7)).min(max);
        // The far end: `max`, `max - 1`, `max - 2` for `x[62..64]` = 0 or 3, 1, 2.
        let top = max.saturating_sub((x >> 62) % 3);
        let candidates = [
            0,
            max.min(1),
            top,
            small,
            small,
            near,
            near,
            near.saturating_add(delta).min(max),
            near.saturating_sub(delta),
            deep,
            deep,
            deep,
            deep,
            deep,
            deep.saturating_add(delta).min(max),
            deep.saturating_sub(delta),
        ];
        let kind = (control >> 3) as usize & 15;
        // Kinds 5..=8 need a near index under `max`, 9..=15 a deep one; no kind applies to a
        // range of fewer than 65 values. Booleans combined with `&` / `|`: no branch.
        let has = n != 0;
        let near_ok = has & (near <= max);
        let deep_ok = has & (deep <= max);
        let usable = (kind < 5) | ((kind < 9) & near_ok) | ((kind >= 9) & deep_ok);
        let special = (control & 7 < 3) & usable & (max > V3_UNBIASED_BELOW);
        let special_mask = (special as u64).wrapping_neg();
        (candidates[kind] & special_mask) | (uniform & !special_mask)
    }
}

/// The handle a property draws its input from.
#[derive(Debug)]
pub struct TestCase {
    /// The seed's stream (a replay holds an unused one: a replay draws nothing from it). It
    /// lives inline, outside any enum: boxing it would cost an allocation per test case on
    /// the runner's hot path, and the fast path reaches it without a check of the mode.
    random: RandomState,
    /// The recorded choices a replay replays (`None`: a random case).
    replay: Option<Vec<u64>>,
    /// How many choices the fast path may count: [`MAX_CHOICES`] for a random case that
    /// records nothing, 0 for every other case, so that the one check `n_choices <
    /// fast_limit` says "random, not recording, room for one more choice".
    fast_limit: usize,
    record: bool,
    capture: bool,
    n_choices: usize,
    choices: Vec<u64>,
    maxes: Vec<u64>,
    spans: Vec<Span>,
    depth: u32,
    drawn: Vec<String>,
    notes: Vec<String>,
    /// The labels [`TestCase::event`] was told, each once (in every mode).
    events: TrialEvents,
    /// The scores [`TestCase::target`] was told, the highest per label (in every mode).
    targets: Vec<(String, f64)>,
    /// A targeted trial (`targets.rs`): `replay` is a prefix, not a whole input. A recorded
    /// value above the bound asked for is taken as the bound, and past the prefix the
    /// choices come from the seed's stream, so every prefix is an input.
    guided: bool,
}

/// What a recording test case consumed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// Every choice, in order.
    pub choices: Vec<u64>,
    /// The bound each choice was drawn under.
    pub maxes: Vec<u64>,
    /// Spans in start order (a parent before its children).
    pub spans: Vec<Span>,
    /// `Debug` renderings of the top-level draws (`name = value` for a named draw), in order,
    /// then the notes (`note: ...`), when captured.
    pub drawn: Vec<String>,
    /// The trial's event labels ([`TestCase::event`]), each once, in label order: kept in
    /// every mode, the fast path's included.
    pub events: Vec<String>,
    /// The trial's scores ([`TestCase::target`]), the highest per label, in the order the
    /// labels were first told: kept in every mode.
    pub targets: Vec<(String, f64)>,
}

impl TestCase {
    /// A test case drawing from `seed`'s stream under the default scheme
    /// ([`Scheme::DEFAULT`], the one new runs use), recording nothing (the fast path).
    pub fn random(seed: u64) -> TestCase {
        TestCase::random_with(Scheme::DEFAULT, seed)
    }

    /// A test case drawing from `seed`'s stream under `scheme`, recording nothing.
    pub fn random_with(scheme: Scheme, seed: u64) -> TestCase {
        let mut tc = TestCase::new(RandomState::new(scheme, seed), None);
        tc.fast_limit = MAX_CHOICES;
        tc
    }

    /// A test case drawing from `seed`'s stream under the default scheme and recording every
    /// choice, span and top-level draw: the same input as [`TestCase::random`] for the same
    /// seed.
    pub fn recording(seed: u64) -> TestCase {
        TestCase::recording_with(Scheme::DEFAULT, seed)
    }

    /// [`TestCase::recording`] under `scheme`: the same input as
    /// [`TestCase::random_with`]`(scheme, seed)`.
    pub fn recording_with(scheme: Scheme, seed: u64) -> TestCase {
        let mut tc = TestCase::new(RandomState::new(scheme, seed), None);
        tc.record = true;
        tc.capture = true;
        tc
    }

    /// A test case replaying `choices`, recording as it goes; `capture` keeps the `Debug`
    /// renderings of top-level draws.
    pub fn replay(choices: Vec<u64>, capture: bool) -> TestCase {
        let mut tc = TestCase::new(RandomState::new(Scheme::DEFAULT, 0), Some(choices));
        tc.record = true;
        tc.capture = capture;
        tc
    }

    fn new(random: RandomState, replay: Option<Vec<u64>>) -> TestCase {
        TestCase {
            random,
            replay,
            fast_limit: 0,
            record: false,
            capture: false,
            n_choices: 0,
            choices: Vec::new(),
            maxes: Vec::new(),
            spans: Vec::new(),
            depth: 0,
            drawn: Vec::new(),
            notes: Vec::new(),
            events: TrialEvents::new(),
            targets: Vec::new(),
            guided: false,
        }
    }

    /// Draws a value from `gen`, inside a span labelled with the generator's label. A
    /// top-level draw shows in the readable input (the receipt's `minimal_input`, `prop
    /// replay`) as its `Debug` text; [`TestCase::draw_named`] shows it as `name = value`.
    #[inline]
    pub fn draw<G: crate::Gen + ?Sized>(&mut self, generator: &G) -> G::Value {
        if !self.record {
            return generator.generate(self);
        }
        self.draw_recorded(None, generator)
    }

    /// [`TestCase::draw`], shown in the readable input as `name = value` (like proptest's
    /// `m = 0, n = 1`), so that a minimal input of several draws says which is which. The
    /// name is for people only: it is not part of what a seed means (the same choices, the
    /// same value) and it names top-level draws only (a nested draw shows inside its parent's
    /// value).
    ///
    /// ```
    /// use seedledger_runner::{TestCase, int};
    ///
    /// let mut tc = TestCase::recording(7);
    /// let m = tc.draw_named("m", &int(0..=9u8));
    /// assert_eq!(tc.drawn(), [format!("m = {m}")]);
    /// ```
    #[inline]
    pub fn draw_named<G: crate::Gen + ?Sized>(&mut self, name: &str, generator: &G) -> G::Value {
        if !self.record {
            return generator.generate(self);
        }
        self.draw_recorded(Some(name), generator)
    }

    fn draw_recorded<G: crate::Gen + ?Sized>(
        &mut self,
        name: Option<&str>,
        generator: &G,
    ) -> G::Value {
        let value = self.in_span(generator.label(), |tc| generator.generate(tc));
        if self.capture && self.depth == 0 {
            let text = match name {
                Some(name) => format!("{name} = {value:?}"),
                None => format!("{value:?}"),
            };
            journal(JournalEntry::Drawn(&text));
            self.drawn.push(text);
        }
        value
    }

    /// Runs `f` inside a span labelled `label` (when recording), without showing what it
    /// draws as a top-level draw: the state machine's steps are shown as numbered lines
    /// ([`TestCase::show`]) instead of the `Debug` text of their draws. A span `f` unwinds
    /// out of (a panic, a replay that ran out of choices) ends where it stopped, as a crashed
    /// worker's journal ends it, so the record stays well formed for the shrinker.
    pub(crate) fn in_span<T>(
        &mut self,
        label: &'static str,
        f: impl FnOnce(&mut TestCase) -> T,
    ) -> T {
        if !self.record {
            return f(self);
        }
        let at = self.spans.len();
        let depth = self.depth;
        self.spans.push(Span {
            label,
            start: self.n_choices as u32,
            end: 0,
            depth,
        });
        journal(JournalEntry::SpanStart { label, depth });
        self.depth += 1;
        let open = OpenSpan {
            tc: self,
            at,
            depth,
        };
        f(&mut *open.tc)
    }

    /// True when this case keeps the readable input (a recording or capturing replay): what
    /// [`TestCase::show`] and [`TestCase::note`] keep is only kept then.
    pub(crate) fn is_capturing(&self) -> bool {
        self.capture
    }

    /// Adds `line` to the readable input, in order with the top-level draws (not as a
    /// `note:`): a state machine's numbered steps. Kept only while capturing.
    pub(crate) fn show(&mut self, line: impl FnOnce() -> String) {
        if self.capture {
            let text = line();
            journal(JournalEntry::Drawn(&text));
            self.drawn.push(text);
        }
    }

    /// Adds a line to the failure report (shown with the minimal input), like Hypothesis'
    /// `note`. Kept only while capturing, so it costs nothing on the fast path.
    pub fn note(&mut self, line: impl FnOnce() -> String) {
        if self.capture {
            self.notes.push(line());
        }
    }

    /// The primitive: a choice in `0..=max` (0 is simplest), drawn with the standard bias.
    #[inline(always)]
    pub fn choice(&mut self, max: u64) -> u64 {
        match self.fast() {
            Some(state) => state.biased(max),
            None => self.choice_with(max, |r| r.biased(max)),
        }
    }

    /// A choice in `0..=max` with the standard bias, except that under `chacha8-v3` half of
    /// the random draws are uniform in `0..prefix` (a character's printable ASCII, ranked
    /// first). Under `chacha8-v1` and `-v2` it is [`TestCase::choice`]. Recorded like any
    /// choice of bound `max`.
    #[inline]
    pub(crate) fn choice_preferring(&mut self, max: u64, prefix: u64) -> u64 {
        match self.fast() {
            Some(state) => state.preferring(max, prefix),
            None => self.choice_with(max, |r| r.preferring(max, prefix)),
        }
    }

    /// `k` choices of bound `max` with the standard bias in a row, on the fast path only:
    /// when this case is random, records nothing and has room for `counted` more choices
    /// (the `k` choices and whatever choices without randomness stand between them, such as
    /// a collection's `true` "continue?" flags), counts them, calls `each` with every index
    /// in order, and returns true; else does nothing and returns false (the caller draws one
    /// by one). The stream is consumed exactly as by `k` calls of [`TestCase::choice`]. The
    /// count is taken up front; should `each` panic (a generator's `map`) and the property
    /// catch it and draw on, the count is set back to the choices the draws so far took (each
    /// draw's `counted / k`), as drawing one at a time would have left it.
    #[inline(always)]
    pub(crate) fn fast_choice_run(
        &mut self,
        max: u64,
        k: usize,
        counted: usize,
        mut each: impl FnMut(u64),
    ) -> bool {
        if counted > self.fast_limit.saturating_sub(self.n_choices) {
            return false;
        }
        let mut count = RunCount {
            before: self.n_choices,
            each: counted.checked_div(k).unwrap_or(0),
            done: 0,
            whole: false,
            n_choices: &mut self.n_choices,
        };
        *count.n_choices += counted;
        self.random.biased_run(max, k, |index| {
            count.done += 1;
            each(index);
        });
        count.whole = true;
        true
    }

    /// A choice in `0..=max` that, when random, is uniform (no bias toward edges).
    #[inline(always)]
    pub fn uniform_choice(&mut self, max: u64) -> u64 {
        match self.fast() {
            Some(state) => state.rng.upto(max),
            None => self.choice_with(max, |r| r.rng.upto(max)),
        }
    }

    /// The main run's fast path: a random case that records nothing and has room for one
    /// more choice gets its random state, the choice counted; every other case (recording,
    /// replaying, at [`MAX_CHOICES`]) gets `None` and goes through [`TestCase::choice_with`].
    /// The random stream is consumed exactly as on the slow path, so a seed means the same.
    /// One compare: `fast_limit` is 0 unless the case is random and records nothing.
    #[inline(always)]
    fn fast(&mut self) -> Option<&mut RandomState> {
        if self.n_choices < self.fast_limit {
            self.n_choices += 1;
            Some(&mut self.random)
        } else {
            None
        }
    }

    /// A choice in `0..=max` whose random value `pick` computes from the seed's stream (a
    /// value above `max` is taken as `max`); replays ignore `pick`. For generators whose
    /// random distribution is not the standard bias: floats plan a whole value, then record
    /// it as several choices.
    #[inline]
    pub(crate) fn choice_by(&mut self, max: u64, pick: impl FnOnce(&mut SeedRng) -> u64) -> u64 {
        match self.fast() {
            Some(state) => pick(&mut state.rng).min(max),
            None => self.choice_with(max, |r| pick(&mut r.rng).min(max)),
        }
    }

    /// A choice whose random value `pick` computes from the stream (it must return a value
    /// in `0..=max`). Replays ignore `pick`. Kept out of line: the main run's draws take
    /// [`TestCase::fast`] and never come here.
    #[inline]
    fn choice_with(&mut self, max: u64, pick: impl FnOnce(&mut RandomState) -> u64) -> u64 {
        let value = match &self.replay {
            None => {
                if self.n_choices >= MAX_CHOICES {
                    stop(Stop::Overrun);
                }
                pick(&mut self.random)
            }
            Some(prefix) if self.guided => match prefix.get(self.n_choices) {
                _ if self.n_choices >= MAX_CHOICES => stop(Stop::Overrun),
                None => pick(&mut self.random),
                Some(&v) => v.min(max),
            },
            Some(prefix) => match prefix.get(self.n_choices) {
                None => stop(Stop::Overrun),
                Some(&v) if v > max => stop(Stop::Invalid),
                Some(&v) => v,
            },
        };
        self.n_choices += 1;
        if self.record {
            self.choices.push(value);
            self.maxes.push(max);
            journal(JournalEntry::Choice { value, max });
        }
        value
    }

    /// A weighted choice among `weights.len()` alternatives: recorded as the index (0 is the
    /// simplest alternative); when random, picked with probability proportional to weight.
    pub(crate) fn weighted_choice(&mut self, weights: &[u32], total: u64) -> u64 {
        let max = weights.len().saturating_sub(1) as u64;
        self.choice_with(max, |r| {
            let mut ticket = r.rng.below(total.max(1));
            for (i, &w) in weights.iter().enumerate() {
                if ticket < u64::from(w) {
                    return i as u64;
                }
                ticket -= u64::from(w);
            }
            max
        })
    }

    /// When random, a hidden size in `min..=max` (not a choice: collections record their
    /// "continue?" flags instead). See the module docs: under `chacha8-v1` and `-v2` one in
    /// four sizes is `min` or just above it; under `chacha8-v3` one in eight is `max`, one in
    /// eight is `min + 1..=min + 3`, the rest uniform, so `min` comes at most as often as
    /// under a uniform size.
    pub(crate) fn hidden_size(&mut self, min: u64, max: u64) -> Option<u64> {
        if self.replay.is_some() {
            return None;
        }
        let r = &mut self.random;
        let span = max - min;
        Some(match (r.scheme, r.take_bits(3)) {
            (Scheme::V3, 0) => max,
            (Scheme::V3, 1) if span > 0 => min + 1 + r.rng.upto((span - 1).min(2)),
            (Scheme::V3, 1) => min,
            (Scheme::V1 | Scheme::V2, 0) => min,
            (Scheme::V1 | Scheme::V2, 1) => min + r.rng.upto(span.min(3)),
            _ => min + r.rng.upto(span),
        })
    }

    /// The scheme this case draws under (a replay: the default; it draws nothing).
    #[inline(always)]
    pub(crate) fn scheme(&self) -> Scheme {
        self.random.scheme
    }

    /// A "continue?" flag (1 = one more element). `wanted` is the random-mode answer.
    #[inline(always)]
    pub(crate) fn flag(&mut self, wanted: bool) -> bool {
        match self.fast() {
            Some(_) => wanted,
            None => self.choice_with(1, |_| u64::from(wanted)) == 1,
        }
    }

    /// A choice with bound 0: consumes no randomness, records a 0. It marks a place where
    /// the structure has no freedom but a choice may stand elsewhere (the end of a full
    /// collection, the bottom level of a recursive structure), so that the recorded
    /// encoding is the same at every size and depth and a shrink that moves or shortens
    /// the structure stays aligned.
    #[inline]
    pub(crate) fn forced_zero(&mut self) {
        if self.fast().is_none() {
            self.choice_with(0, |_| 0);
        }
    }

    /// Discards the trial unless `condition` holds: the input does not meet the property's
    /// precondition. A discarded trial is attempted (its seed is in the receipt's
    /// `attempted_seeds`, its verdict `d`) but reaches no verdict: no witness row, neither a
    /// pass nor a fail; the shrinker never adopts a discarded candidate. A run that discards
    /// more than half of its trials fails its health check (see
    /// [`too_many_discards`](crate::engine::too_many_discards)).
    ///
    /// It discards by unwinding the stack (`Stop::Discard`, caught by the executor), which
    /// costs several times a passing trial. In the property's own body, prefer
    /// [`prop_assume!`](crate::prop_assume)`(condition)`, which returns
    /// `Err(PropError::discard())` instead — the same discard, at about the cost of a pass;
    /// `assume` is for where no `PropResult` can be returned (inside a generator, a helper
    /// that returns a value).
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// fn division_inverts_multiplication(tc: &mut TestCase, _: &Fixture) -> PropResult {
    ///     let a = tc.draw_named("a", &int(0..=1000i64));
    ///     let b = tc.draw_named("b", &int(-10..=10i64));
    ///     tc.assume(b != 0);
    ///     prop_assert!((a * b) / b == a);
    ///     Ok(())
    /// }
    /// ```
    #[inline]
    pub fn assume(&mut self, condition: bool) {
        if !condition {
            stop(Stop::Discard)
        }
    }

    /// Discards the trial (`assume(false)`): what a filter does when it gives up. It unwinds
    /// (see [`TestCase::assume`]); from the property's body, `return Err(PropError::discard())`
    /// is the same discard without unwinding.
    pub fn reject(&mut self) -> ! {
        stop(Stop::Discard)
    }

    /// Number of choices made so far.
    pub fn n_choices(&self) -> usize {
        self.n_choices
    }

    /// True when this case is replaying recorded choices.
    pub fn is_replay(&self) -> bool {
        self.replay.is_some() && !self.guided
    }

    /// What the case consumed (empty unless recording).
    pub fn into_record(self) -> Record {
        let mut drawn = self.drawn;
        drawn.extend(self.notes.into_iter().map(|n| format!("note: {n}")));
        Record {
            choices: self.choices,
            maxes: self.maxes,
            spans: self.spans,
            drawn,
            events: self.events.into_iter().map(Cow::into_owned).collect(),
            targets: self.targets,
        }
    }

    /// The `Debug` renderings of the top-level draws so far (`name = value` when named).
    pub fn drawn(&self) -> &[String] {
        &self.drawn
    }
}

/// A span of a recording case, ended when dropped: when its sub-draw returns, or unwinds.
struct OpenSpan<'t> {
    tc: &'t mut TestCase,
    at: usize,
    depth: u32,
}

impl Drop for OpenSpan<'_> {
    fn drop(&mut self) {
        self.tc.depth = self.depth;
        self.tc.spans[self.at].end = self.tc.n_choices as u32;
        journal(JournalEntry::SpanEnd);
    }
}

/// Unwinds out of the property with `why`, without running the panic hook.
fn stop(why: Stop) -> ! {
    std::panic::resume_unwind(Box::new(why))
}
