//! Seed plans: the list of seeds a run will attempt, fixed before the first trial.
//!
//! Spellings: `1101..=1104` (inclusive range), `1101..1105` (half-open), `1101,1102,1104`
//! (a list, in that order), a single seed `1101`, or `--cases N --base-seed S` (the seeds
//! `S, S+1, ..., S+N-1`). Duplicate seeds are refused: a plan names each seed once.

use std::collections::BTreeSet;

/// The default plan of `cargo xtask prop run`: [`DEFAULT_CASES`] seeds from
/// [`DEFAULT_BASE_SEED`].
pub const DEFAULT_CASES: u64 = 256;
/// The first seed of the default plan (and of `--cases N` without `--base-seed`).
pub const DEFAULT_BASE_SEED: u64 = 1;

/// Largest plan accepted (a receipt lists every seed).
pub(crate) const MAX_PLAN: u64 = 10_000_000;

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The text is not a seed, a list or a range of seeds.
    #[error(
        "`{text}` is not a seed, a list `a,b,c` or a range `a..=b` of seeds (seeds are integers in 0..=18446744073709551615)"
    )]
    Syntax {
        /// The text as given.
        text: String,
    },
    /// The text names no seed (`5..5`, say).
    #[error("the plan is empty: `{text}`")]
    Empty {
        /// The text as given.
        text: String,
    },
    /// A seed is named twice.
    #[error("seed {seed} appears twice in the plan; a plan names each seed once")]
    Duplicate {
        /// The seed.
        seed: u64,
    },
    /// More seeds than a receipt may list.
    #[error("the plan has more than {MAX_PLAN} seeds")]
    TooLarge,
    /// `--cases` seeds from `--base-seed` go past `u64::MAX`.
    #[error("--cases {cases} from --base-seed {base} runs past the largest seed")]
    Overflow {
        /// The number of seeds asked for.
        cases: u64,
        /// The first seed.
        base: u64,
    },
}

/// Parses a `--seeds` argument.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, PlanError> {
    let syntax = || PlanError::Syntax {
        text: text.to_string(),
    };
    let t = text.trim();
    let seeds = if let Some((lo, hi)) = t.split_once("..=") {
        let (lo, hi) = (seed(lo).ok_or_else(syntax)?, seed(hi).ok_or_else(syntax)?);
        if hi < lo {
            return Err(PlanError::Empty {
                text: text.to_string(),
            });
        }
        range(lo, (hi - lo).checked_add(1).ok_or(PlanError::TooLarge)?)?
    } else if let Some((lo, hi)) = t.split_once("..") {
        let (lo, hi) = (seed(lo).ok_or_else(syntax)?, seed(hi).ok_or_else(syntax)?);
        if hi <= lo {
            return Err(PlanError::Empty {
                text: text.to_string(),
            });
        }
        range(lo, hi - lo)?
    } else {
        t.split(',')
            .map(|s| seed(s).ok_or_else(syntax))
            .collect::<Result<Vec<_>, _>>()?
    };
    check(seeds)
}

/// The plan `base, base+1, ..., base+cases-1`.
pub fn cases(cases: u64, base: u64) -> Result<Vec<u64>, PlanError> {
    if cases == 0 {
        return Err(PlanError::Empty {
            text: "--cases 0".to_string(),
        });
    }
    if base.checked_add(cases - 1).is_none() {
        return Err(PlanError::Overflow { cases, base });
    }
    range(base, cases)
}

/// Refuses empty plans and duplicate seeds.
pub(crate) fn check(seeds: Vec<u64>) -> Result<Vec<u64>, PlanError> {
    if seeds.is_empty() {
        return Err(PlanError::Empty {
            text: String::new(),
        });
    }
    if seeds.len() as u64 > MAX_PLAN {
        return Err(PlanError::TooLarge);
    }
    // A list in increasing order (a range, most lists) has no seed twice: told in one pass.
    if seeds.windows(2).all(|w| w[0] < w[1]) {
        return Ok(seeds);
    }
    let mut seen = BTreeSet::new();
    if let Some(&dup) = seeds.iter().find(|s| !seen.insert(**s)) {
        return Err(PlanError::Duplicate { seed: dup });
    }
    Ok(seeds)
}

fn range(lo: u64, n: u64) -> Result<Vec<u64>, PlanError> {
    if n > MAX_PLAN {
        return Err(PlanError::TooLarge);
    }
    Ok((0..n).map(|i| lo + i).collect())
}

fn seed(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(parse_seeds("1101..=1104"), Ok(vec![1101, 1102, 1103, 1104]));
        assert_eq!(parse_seeds("1101..1104"), Ok(vec![1101, 1102, 1103]));
        assert_eq!(parse_seeds("1101,1102,1104"), Ok(vec![1101, 1102, 1104]));
        assert_eq!(parse_seeds(" 7 "), Ok(vec![7]));
        assert_eq!(parse_seeds("18446744073709551615"), Ok(vec![u64::MAX]));
        assert_eq!(cases(3, 10), Ok(vec![10, 11, 12]));
    }

    #[test]
    fn refusals() {
        assert_eq!(parse_seeds("1,2,1"), Err(PlanError::Duplicate { seed: 1 }));
        for bad in [
            "",
            "x",
            "-1",
            "1.0",
            "1,,2",
            "18446744073709551616",
            "1..=x",
            "+3",
        ] {
            assert!(
                matches!(parse_seeds(bad), Err(PlanError::Syntax { .. })),
                "{bad}"
            );
        }
        assert!(matches!(parse_seeds("5..=4"), Err(PlanError::Empty { .. })));
        assert!(matches!(parse_seeds("5..5"), Err(PlanError::Empty { .. })));
        assert!(matches!(
            parse_seeds("0..=18446744073709551615"),
            Err(PlanError::TooLarge)
        ));
        assert!(matches!(cases(0, 1), Err(PlanError::Empty { .. })));
        assert_eq!(
            cases(2, u64::MAX),
            Err(PlanError::Overflow {
                cases: 2,
                base: u64::MAX
            })
        );
    }
}
