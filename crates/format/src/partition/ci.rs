//! The shard variables test engines and CI services set, read as a part of the plan: a run
//! that sees them runs exactly the part `--partition slice:M/N` would (SPEC, "Exports and
//! shard protocols").
//!
//! | engine | total | index | numbering |
//! |---|---|---|---|
//! | Bazel (test encyclopedia) | `TEST_TOTAL_SHARDS` | `TEST_SHARD_INDEX` | from 0 |
//! | GitLab CI (`parallel:`) | `CI_NODE_TOTAL` | `CI_NODE_INDEX` | from 1 |
//! | Buildkite (`parallelism`) | `BUILDKITE_PARALLEL_JOB_COUNT` | `BUILDKITE_PARALLEL_JOB` | from 0 |
//! | CircleCI (`parallelism`) | `CIRCLE_NODE_TOTAL` | `CIRCLE_NODE_INDEX` | from 0 |
//!
//! The pairs are read in that order and the first one set is the part; a pair of which only
//! one variable is set, a value that is not a whole number, a total of 0 or an index out of
//! range is an error and nothing runs — running the whole plan instead would let every shard
//! pass while each proves the same thing. One exception, documented by GitLab: a job without
//! `parallel:` has `CI_NODE_TOTAL=1` and no `CI_NODE_INDEX`; that is the whole plan. A value
//! set but empty counts as unset.

use super::{Partition, PartitionKind};

/// One engine's pair of shard variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardVariables {
    /// The engine, for people (`Bazel`, `GitLab CI`, ...).
    pub engine: &'static str,
    /// The variable holding the number of shards.
    pub total: &'static str,
    /// The variable holding this shard's index.
    pub index: &'static str,
    /// The index of the first shard (0 or 1).
    pub first: u64,
}

/// Every pair this build reads, in the order it reads them.
pub const SHARD_VARIABLES: [ShardVariables; 4] = [
    ShardVariables {
        engine: "Bazel",
        total: "TEST_TOTAL_SHARDS",
        index: "TEST_SHARD_INDEX",
        first: 0,
    },
    ShardVariables {
        engine: "GitLab CI",
        total: "CI_NODE_TOTAL",
        index: "CI_NODE_INDEX",
        first: 1,
    },
    ShardVariables {
        engine: "Buildkite",
        total: "BUILDKITE_PARALLEL_JOB_COUNT",
        index: "BUILDKITE_PARALLEL_JOB",
        first: 0,
    },
    ShardVariables {
        engine: "CircleCI",
        total: "CIRCLE_NODE_TOTAL",
        index: "CIRCLE_NODE_INDEX",
        first: 0,
    },
];

/// The part of the plan a CI's shard variables name, and which variables named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CiShard {
    /// The part (always `slice:M/N`, M counted from 1).
    pub partition: Partition,
    /// The variables it was read from.
    pub from: ShardVariables,
}

impl std::fmt::Display for CiShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} from {}'s {}/{}",
            self.partition, self.from.engine, self.from.index, self.from.total
        )
    }
}

/// Why the shard variables cannot be read as a part of the plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{engine}'s shard variables: {problem}; no trial runs (a shard that ran the whole plan would prove nothing about its part)"
)]
pub struct ShardEnvError {
    /// The engine whose variables are wrong.
    pub engine: &'static str,
    /// What is wrong, naming the variables and their values.
    pub problem: String,
}

/// The part the shard variables `get` returns name (`None`: no pair set: the whole plan).
/// `get(name)` is the variable's value, `None` when unset.
pub fn shard_from_env(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<CiShard>, ShardEnvError> {
    let get = |name: &str| get(name).filter(|v| !v.is_empty());
    for vars in SHARD_VARIABLES {
        let problem = |problem: String| ShardEnvError {
            engine: vars.engine,
            problem,
        };
        let number = |name: &str, text: &str| {
            text.trim()
                .parse::<u64>()
                .map_err(|_| problem(format!("{name}={text:?} is not a whole number")))
        };
        let (total, index) = match (get(vars.total), get(vars.index)) {
            (None, None) => continue,
            // GitLab's job without `parallel:`: the whole plan.
            (Some(total), None) if vars.first == 1 && number(vars.total, &total)? == 1 => {
                return Ok(None);
            }
            (Some(total), Some(index)) => {
                (number(vars.total, &total)?, number(vars.index, &index)?)
            }
            (Some(total), None) => {
                return Err(problem(format!(
                    "{}={total:?} is set but {} is not",
                    vars.total, vars.index
                )));
            }
            (None, Some(index)) => {
                return Err(problem(format!(
                    "{}={index:?} is set but {} is not",
                    vars.index, vars.total
                )));
            }
        };
        let last = total.saturating_add(vars.first).saturating_sub(1);
        if total == 0 || index < vars.first || index > last {
            return Err(problem(format!(
                "{}={index} is out of range for {}={total} (shards are numbered {}..={last})",
                vars.index, vars.total, vars.first
            )));
        }
        let partition = Partition {
            kind: PartitionKind::Slice,
            index: index - vars.first + 1,
            total,
        };
        return Ok(Some(CiShard {
            partition,
            from: vars,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Option<CiShard>, ShardEnvError> {
        shard_from_env(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    fn part(vars: &[(&str, &str)]) -> (u64, u64) {
        let shard = read(vars).unwrap().unwrap();
        assert_eq!(shard.partition.kind, PartitionKind::Slice);
        (shard.partition.index, shard.partition.total)
    }

    #[test]
    fn each_engine_numbers_its_shards_its_own_way() {
        for n in [1u64, 2, 3, 8, 13] {
            for m in 1..=n {
                let (zero, one) = ((m - 1).to_string(), m.to_string());
                let total = n.to_string();
                assert_eq!(
                    part(&[("TEST_TOTAL_SHARDS", &total), ("TEST_SHARD_INDEX", &zero)]),
                    (m, n)
                );
                assert_eq!(
                    part(&[("CI_NODE_TOTAL", &total), ("CI_NODE_INDEX", &one)]),
                    (m, n)
                );
                assert_eq!(
                    part(&[
                        ("BUILDKITE_PARALLEL_JOB_COUNT", &total),
                        ("BUILDKITE_PARALLEL_JOB", &zero)
                    ]),
                    (m, n)
                );
                assert_eq!(
                    part(&[("CIRCLE_NODE_TOTAL", &total), ("CIRCLE_NODE_INDEX", &zero)]),
                    (m, n)
                );
            }
        }
    }

    #[test]
    fn no_variables_is_the_whole_plan_and_so_is_gitlab_without_parallel() {
        assert_eq!(read(&[]).unwrap(), None);
        assert_eq!(read(&[("CI_NODE_TOTAL", "1")]).unwrap(), None);
        assert_eq!(
            read(&[("CI_NODE_TOTAL", ""), ("CI_NODE_INDEX", "")]).unwrap(),
            None
        );
    }

    #[test]
    fn half_a_pair_a_bad_number_or_an_index_out_of_range_is_refused() {
        for (vars, says) in [
            (&[("TEST_TOTAL_SHARDS", "4")][..], "TEST_SHARD_INDEX is not"),
            (&[("TEST_SHARD_INDEX", "0")][..], "TEST_TOTAL_SHARDS is not"),
            (&[("CI_NODE_TOTAL", "3")][..], "CI_NODE_INDEX is not"),
            (&[("CI_NODE_INDEX", "1")][..], "CI_NODE_TOTAL is not"),
            (
                &[("CIRCLE_NODE_TOTAL", "4"), ("CIRCLE_NODE_INDEX", "4")][..],
                "out of range",
            ),
            (
                &[("CI_NODE_TOTAL", "4"), ("CI_NODE_INDEX", "0")][..],
                "numbered 1..=4",
            ),
            (
                &[
                    ("BUILDKITE_PARALLEL_JOB_COUNT", "0"),
                    ("BUILDKITE_PARALLEL_JOB", "0"),
                ][..],
                "out of range",
            ),
            (
                &[("TEST_TOTAL_SHARDS", "two"), ("TEST_SHARD_INDEX", "0")][..],
                "not a whole number",
            ),
            (
                &[("TEST_TOTAL_SHARDS", "2"), ("TEST_SHARD_INDEX", "-1")][..],
                "not a whole number",
            ),
        ] {
            let e = read(vars).unwrap_err();
            assert!(e.to_string().contains(says), "{vars:?}: {e}");
            assert!(e.to_string().contains("no trial runs"), "{e}");
        }
    }

    #[test]
    fn the_first_pair_set_wins_and_is_named() {
        // Bazel inside a Buildkite job with parallelism: Bazel's shard is the test's.
        let shard = read(&[
            ("BUILDKITE_PARALLEL_JOB_COUNT", "2"),
            ("BUILDKITE_PARALLEL_JOB", "1"),
            ("TEST_TOTAL_SHARDS", "3"),
            ("TEST_SHARD_INDEX", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(shard.partition.to_string(), "slice:1/3");
        assert_eq!(
            shard.to_string(),
            "slice:1/3 from Bazel's TEST_SHARD_INDEX/TEST_TOTAL_SHARDS"
        );
    }
}
