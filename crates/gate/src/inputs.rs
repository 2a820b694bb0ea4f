//! Inputs: a seed under an rng scheme. A seed means an input only under a scheme (a row's
//! `rng`; a row without it is `chacha8-v1`), so the folds of the same-seed review key what
//! they keep per failing seed by the seed *and* the scheme. The scheme names are shared
//! (`Arc<str>`) so that a key costs no allocation of its own.

use std::collections::BTreeSet;
use std::sync::Arc;

/// A seed under a scheme, by name.
pub(crate) type Input = (u64, Arc<str>);

/// The scheme names a fold has met, handed out shared. At most a few are kept (a runner
/// writes one or two): a batch that names many more gets a fresh name per key, never a
/// lookup that grows with the batch.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schemes(Vec<Arc<str>>);

impl Schemes {
    const KEPT: usize = 8;

    pub(crate) fn input(&mut self, seed: u64, scheme: &str) -> Input {
        if let Some(n) = self.0.iter().find(|n| &***n == scheme) {
            return (seed, n.clone());
        }
        let n: Arc<str> = Arc::from(scheme);
        if self.0.len() < Self::KEPT {
            self.0.push(n.clone());
        }
        (seed, n)
    }
}

/// The name no scheme has: the least key of a seed.
pub(crate) fn least() -> Arc<str> {
    static EMPTY: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::from("")).clone()
}

/// `set` holds `seed` under `scheme` (without building a key).
pub(crate) fn holds(set: &BTreeSet<Input>, seed: u64, scheme: &str) -> bool {
    set.range((seed, least())..)
        .take_while(|(s, _)| *s == seed)
        .any(|(_, k)| &**k == scheme)
}

/// The positions in sorted `inputs` of the keys of `seed`.
pub(crate) fn of_seed(inputs: &[Input], seed: u64) -> std::ops::Range<usize> {
    let start = inputs.partition_point(|(s, _)| *s < seed);
    let len = inputs[start..]
        .iter()
        .take_while(|(s, _)| *s == seed)
        .count();
    start..start + len
}

/// The distinct seeds of sorted `inputs`, in order.
pub(crate) fn seeds_of(inputs: &[Input]) -> Vec<u64> {
    let mut seeds: Vec<u64> = inputs.iter().map(|(s, _)| *s).collect();
    seeds.dedup();
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_seeds_under_schemes() {
        let mut names = Schemes::default();
        let set: BTreeSet<Input> = [
            names.input(5, "chacha8-v2"),
            names.input(5, "chacha8-v1"),
            names.input(4, "chacha8-v2"),
            names.input(u64::MAX, ""),
        ]
        .into_iter()
        .collect();
        assert!(holds(&set, 5, "chacha8-v1") && holds(&set, 5, "chacha8-v2"));
        assert!(!holds(&set, 4, "chacha8-v1") && !holds(&set, 6, "chacha8-v2"));
        assert!(holds(&set, u64::MAX, ""));
        let inputs: Vec<Input> = set.into_iter().collect();
        assert_eq!(of_seed(&inputs, 5), 1..3);
        assert_eq!(of_seed(&inputs, 6), 3..3);
        assert_eq!(seeds_of(&inputs), [4, 5, u64::MAX]);
        for n in 0..20 {
            names.input(1, &format!("s{n}"));
        }
        assert_eq!(names.0.len(), Schemes::KEPT);
    }
}
