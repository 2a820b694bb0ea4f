//! Splitting one seed plan across machines (`prop run --partition slice:M/N | hash:M/N`), the
//! receipt extensions that say which part of which plan a run was, and the record a merged
//! receipt keeps of its parts (`gate merge`).
//!
//! The meaning of `M/N` follows cargo-nextest's `--partition`: `N` parts numbered from 1, and
//! `1 <= M <= N`; a run of part `M` attempts exactly the seeds of the plan that fall in it,
//! in plan order. The rules:
//!
//! * `slice:M/N` — round robin over the plan's positions: the seed at 0-based position `i`
//!   of the plan is in part `(i mod N) + 1` (nextest's sliced partitioning, over the plan
//!   instead of the test list). Parts differ in size by at most one seed.
//! * `hash:M/N` — by the seed's value alone: seed `s` is in part `(seed_hash(s) mod N) + 1`,
//!   where [`seed_hash`] is the SplitMix64 finalizer (below). A seed stays in its part
//!   whatever else the plan holds (nextest's hashed sharding: deterministic per item).
//!
//! Either way every seed of the plan is in exactly one part, and each part keeps plan order.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod ci;
pub use ci::{CiShard, SHARD_VARIABLES, ShardEnvError, ShardVariables, shard_from_env};

/// How a plan is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionKind {
    /// Round robin by plan position.
    Slice,
    /// By [`seed_hash`] of the seed.
    Hash,
}

impl PartitionKind {
    /// The kind's name in `kind:M/N` and in records (`slice`, `hash`).
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionKind::Slice => "slice",
            PartitionKind::Hash => "hash",
        }
    }
}

/// One part of a split plan: `kind:index/total`, `1 <= index <= total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Partition {
    /// How the plan is split.
    pub kind: PartitionKind,
    /// This part, counting from 1.
    pub index: u64,
    /// The number of parts.
    pub total: u64,
}

/// Why a `--partition` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a partition: expected `slice:M/N` or `hash:M/N` with integers 1 <= M <= N"
)]
pub struct PartitionParseError {
    /// The value as given.
    pub text: String,
}

impl Partition {
    /// Parses `slice:M/N` or `hash:M/N`.
    pub fn parse(text: &str) -> Result<Partition, PartitionParseError> {
        let bad = || PartitionParseError {
            text: text.to_string(),
        };
        let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
        let kind = match kind {
            "slice" => PartitionKind::Slice,
            "hash" => PartitionKind::Hash,
            _ => return Err(bad()),
        };
        let (m, n) = rest.split_once('/').ok_or_else(bad)?;
        let number = |s: &str| -> Option<u64> {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let (index, total) = (number(m).ok_or_else(bad)?, number(n).ok_or_else(bad)?);
        if index == 0 || index > total {
            return Err(bad());
        }
        Ok(Partition { kind, index, total })
    }

    /// The part (1-based) the seed `seed` at 0-based plan position `position` falls in.
    pub fn part_of(kind: PartitionKind, total: u64, position: usize, seed: u64) -> u64 {
        let total = total.max(1);
        match kind {
            PartitionKind::Slice => (position as u64 % total) + 1,
            PartitionKind::Hash => (seed_hash(seed) % total) + 1,
        }
    }

    /// Whether the seed at `position` is in this part.
    pub fn contains(&self, position: usize, seed: u64) -> bool {
        Partition::part_of(self.kind, self.total, position, seed) == self.index
    }

    /// This part's seeds of `plan`, in plan order.
    pub fn select(&self, plan: &[u64]) -> Vec<u64> {
        plan.iter()
            .enumerate()
            .filter(|(i, s)| self.contains(*i, **s))
            .map(|(_, s)| *s)
            .collect()
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}/{}", self.kind.as_str(), self.index, self.total)
    }
}

/// The hash `hash:M/N` partitions by: the SplitMix64 finalizer (Steele, Lea and Flood;
/// Vigna's `splitmix64.c`) of the seed, in wrapping 64-bit arithmetic, so the same on every
/// platform and forever:
///
/// ```text
/// z = seed + 0x9E3779B97F4A7C15
/// z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
/// z = (z ^ (z >> 27)) * 0x94D049BB133111EB
/// hash = z ^ (z >> 31)
/// ```
pub fn seed_hash(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The digest of a whole plan, in order: `sha256:` + lowercase hex of
/// `sha256(b"seedledger-plan-v1\n" ++ for each seed: its decimal digits ++ b"\n")`.
pub fn plan_digest(plan: &[u64]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"seedledger-plan-v1\n");
    let mut buf = String::with_capacity(24);
    for seed in plan {
        use std::fmt::Write as _;
        buf.clear();
        let _ = writeln!(buf, "{seed}");
        hasher.update(buf.as_bytes());
    }
    format!("sha256:{}", crate::sha256_hex_of(hasher))
}

/// The receipt extension `partition` of a run that ran one part of a plan.
///
/// # Format
///
/// `{"kind": "slice" | "hash", "index": M, "total": N, "plan_len": L, "plan_digest":
/// "sha256:…", "plan_first": S}` or, instead of `plan_first`, `"plan_seeds": [...]`. The whole
/// plan is `S, S+1, ..., S+L-1` when `plan_first` is given (a `--cases` plan or a range), else
/// `plan_seeds`, in order; `plan_digest` is [`plan_digest`] of it. The receipt's own
/// `planned_seeds` are the part's seeds ([`Partition::select`] of the whole plan), so the part
/// closes on its own; `gate merge` combines the parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionRecord {
    /// How the plan is split.
    pub kind: PartitionKind,
    /// This part, counting from 1.
    pub index: u64,
    /// The number of parts.
    pub total: u64,
    /// How many seeds the whole plan holds.
    pub plan_len: u64,
    /// [`plan_digest`] of the whole plan.
    pub plan_digest: String,
    /// The whole plan's first seed, when it is consecutive (`S, S+1, ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_first: Option<u64>,
    /// The whole plan's seeds, when it is not consecutive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_seeds: Vec<u64>,
}

impl PartitionRecord {
    /// The record of `partition` of `plan`: a consecutive ascending plan is kept as its first
    /// seed, any other as its list.
    pub fn new(partition: Partition, plan: &[u64]) -> PartitionRecord {
        let consecutive = plan.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
        PartitionRecord {
            kind: partition.kind,
            index: partition.index,
            total: partition.total,
            plan_len: plan.len() as u64,
            plan_digest: plan_digest(plan),
            plan_first: consecutive.then(|| plan.first().copied()).flatten(),
            plan_seeds: if consecutive {
                Vec::new()
            } else {
                plan.to_vec()
            },
        }
    }

    /// The part this record names.
    pub fn partition(&self) -> Partition {
        Partition {
            kind: self.kind,
            index: self.index,
            total: self.total,
        }
    }

    /// The whole plan, regenerated, checked against `plan_len` and `plan_digest`.
    pub fn whole_plan(&self) -> Result<Vec<u64>, String> {
        let plan = match self.plan_first {
            Some(first) => {
                if self.plan_len == 0 || first.checked_add(self.plan_len - 1).is_none() {
                    return Err(format!(
                        "plan_first {first} with plan_len {} runs past the largest seed",
                        self.plan_len
                    ));
                }
                (0..self.plan_len).map(|i| first + i).collect()
            }
            None => self.plan_seeds.clone(),
        };
        if plan.len() as u64 != self.plan_len {
            return Err(format!(
                "the plan has {} seeds but plan_len says {}",
                plan.len(),
                self.plan_len
            ));
        }
        if plan_digest(&plan) != self.plan_digest {
            return Err("the plan's seeds do not have its plan_digest".to_string());
        }
        if self.index == 0 || self.index > self.total {
            return Err(format!(
                "part {}/{} is not a part (1 <= M <= N)",
                self.index, self.total
            ));
        }
        Ok(plan)
    }
}

/// The receipt extension `merge` of a receipt `gate merge` combined from parts.
///
/// # Format
///
/// `{"kind", "total", "plan_len", "plan_digest", "plan_first" | "plan_seeds"` (as in
/// [`PartitionRecord`]), `"parts": [{"index", "run_id", "receipt_digest", "file"}...]` (the
/// parts found, by index), `"missing": [indices]` (parts not given: their seeds stay
/// unattempted, so the receipt closes as `seed_gap`), `"merged_at"`}. The receipt's own
/// `run_id` is new; its witness rows are its parts' rows, under the parts' run ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// How the plan was split.
    pub kind: PartitionKind,
    /// The number of parts.
    pub total: u64,
    /// How many seeds the whole plan holds.
    pub plan_len: u64,
    /// [`plan_digest`] of the whole plan.
    pub plan_digest: String,
    /// The whole plan's first seed, when it is consecutive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_first: Option<u64>,
    /// The whole plan's seeds, when it is not consecutive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_seeds: Vec<u64>,
    /// The parts given, by index.
    pub parts: Vec<PartRecord>,
    /// The indices of the parts not given (their seeds stay unattempted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u64>,
    /// When the parts were merged (RFC 3339 UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<String>,
}

/// One part a merged receipt was combined from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRecord {
    /// The part's index, from 1.
    pub index: u64,
    /// The part's `run_id` (its witness rows carry it).
    pub run_id: String,
    /// `sha256:` + lowercase hex of the part receipt file's bytes.
    pub receipt_digest: String,
    /// The part receipt's path as `gate merge` was given it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Whether the part had stopped early.
    pub stopped_early: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_follows_nextest() {
        assert_eq!(
            Partition::parse("slice:1/3"),
            Ok(Partition {
                kind: PartitionKind::Slice,
                index: 1,
                total: 3
            })
        );
        assert_eq!(
            Partition::parse("hash:4/4")
                .map(|p| p.to_string())
                .as_deref(),
            Ok("hash:4/4")
        );
        for bad in [
            "slice:0/3",
            "slice:4/3",
            "count:1/2",
            "slice:1",
            "hash:/2",
            "hash:1/",
            "hash:-1/2",
            "slice:1/0",
            "slice: 1/2",
            "",
        ] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slice_is_round_robin_by_position() {
        let plan = [10, 11, 12, 13, 14, 15, 16];
        let part = |m| {
            Partition {
                kind: PartitionKind::Slice,
                index: m,
                total: 3,
            }
            .select(&plan)
        };
        assert_eq!(part(1), vec![10, 13, 16]);
        assert_eq!(part(2), vec![11, 14]);
        assert_eq!(part(3), vec![12, 15]);
    }

    /// Golden values of the SplitMix64 finalizer (the first outputs of Vigna's `splitmix64.c`
    /// seeded with 0 are this function of 0, 0x9E37..15, 2*0x9E37..15, ...).
    #[test]
    fn seed_hash_golden() {
        assert_eq!(seed_hash(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(seed_hash(0x9E37_79B9_7F4A_7C15), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(seed_hash(0x3C6E_F372_FE94_F82A), 0x06C4_5D18_8009_454F);
        let parts: Vec<u64> = (1..=12)
            .map(|s| Partition::part_of(PartitionKind::Hash, 4, 0, s))
            .collect();
        assert_eq!(parts, GOLDEN_HASH_PARTS_1_TO_12_OF_4);
    }

    /// Pinned: `hash:M/4` of seeds 1..=12 (also computed by an independent Python script of
    /// the formula in the rustdoc of `seed_hash`). Never change these.
    const GOLDEN_HASH_PARTS_1_TO_12_OF_4: [u64; 12] = [2, 3, 2, 3, 3, 1, 4, 3, 1, 3, 2, 4];

    #[test]
    fn plan_digest_golden() {
        assert_eq!(
            plan_digest(&[1, 2]),
            format!(
                "sha256:{}",
                crate::sha256_hex(b"seedledger-plan-v1\n1\n2\n")
            )
        );
    }

    #[test]
    fn records_regenerate_the_plan() {
        let p = Partition::parse("hash:2/3").unwrap();
        let range: Vec<u64> = (5..105).collect();
        let r = PartitionRecord::new(p, &range);
        assert_eq!(r.plan_first, Some(5));
        assert_eq!(r.whole_plan(), Ok(range));
        let list = vec![9, 3, 7];
        let r = PartitionRecord::new(p, &list);
        assert_eq!(r.plan_first, None);
        assert_eq!(r.whole_plan(), Ok(list));
        let mut bad = r.clone();
        bad.plan_seeds[0] = 8;
        assert!(bad.whole_plan().is_err());
    }
}
