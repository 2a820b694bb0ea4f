//! Targeted search: scores a trial reports ([`TestCase::target`](crate::TestCase::target),
//! like Hypothesis' `target()`), the best per label of a run, and the optional targeted
//! phase that hill-climbs toward higher scores after the planned seeds.
//!
//! # The targeted phase
//!
//! With a budget of `N` ([`RunOptions::target_budget`](crate::RunOptions::target_budget)),
//! once the planned seeds have run and if any trial reported a score, `N` more trials run,
//! one after another:
//!
//! * **Their seeds** are fixed before the first trial: the `N` seeds after the plan's last
//!   seed that are not in the plan ([`targeted_seeds`]).
//! * **The base** of each label is the choice sequence of the trial with its best score: at
//!   the start the best planned seed's, re-run recording its choices (not a trial of the
//!   run); then any targeted trial that beats it for that label.
//! * **Trial `i`** climbs label `i mod L` (the `L` labels in label order, round-robin): it
//!   mutates that label's base with a stream seeded by its own seed ([`mutate`]: one choice
//!   nudged by ±1, one nudged by a log-uniform step, one redrawn, or a run of up to four
//!   nudged by ±1, each value kept within the bound it was drawn under), and runs the
//!   property on the mutation as a prefix: a value above the bound now asked for is taken as
//!   the bound, and past the prefix the choices come from the seed's stream, so every
//!   mutation is an input. The choices the trial made replay it exactly
//!   ([`TargetedTrial::choices`], `TestCase::replay`).
//! * **Kept** when a score beats its label's base (for any label it reported): it becomes
//!   that label's base.
//!
//! Everything is a function of the plan, the seeds and the property: the same run twice
//! runs the same targeted trials on the same inputs with the same verdicts. A targeted trial
//! that fails is a failure of the run like any other (the first failure when no planned seed
//! failed, shrunk from the choices it made). Its scores and events count in the run's.

use crate::exec::{Outcome, evaluate};
use crate::lib_run::Verdict;
use crate::property::{Fixture, Property};
use crate::rng::{Scheme, SeedRng};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

/// Most distinct labels a run keeps a best score for: scores for labels first told after
/// that many are not kept.
pub const MAX_TARGET_LABELS: usize = 1000;

/// The best score of one label in a run, and the trial that reported it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BestScore {
    /// The highest score reported for the label.
    pub score: f64,
    /// The seed of the first trial that reported it (in plan order, then targeted order).
    pub seed: u64,
}

/// The best score per label ([`TestCase::target`](crate::TestCase::target)) of a run's
/// trials, planned and targeted, kept as each trial is committed (in plan order: the same
/// with any number of `seed_jobs` workers).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetScores {
    /// Each label's best score, in label order.
    pub best: BTreeMap<String, BestScore>,
}

impl TargetScores {
    /// True when no trial reported a score.
    pub fn is_empty(&self) -> bool {
        self.best.is_empty()
    }

    /// The best score reported for `label`.
    pub fn best(&self, label: &str) -> Option<f64> {
        self.best.get(label).map(|b| b.score)
    }

    /// Keeps the scores of one trial (`seed`'s): a score above its label's best replaces it.
    pub(crate) fn add_trial(&mut self, seed: u64, scores: &[(String, f64)]) {
        for (label, score) in scores {
            let room = self.best.len() < MAX_TARGET_LABELS;
            match self.best.get_mut(label.as_str()) {
                Some(best) if *score > best.score => {
                    *best = BestScore {
                        score: *score,
                        seed,
                    }
                }
                Some(_) => {}
                None if room => {
                    self.best.insert(
                        label.clone(),
                        BestScore {
                            score: *score,
                            seed,
                        },
                    );
                }
                None => {}
            }
        }
    }

    /// The lines of the summary's targets block, in label order: the best score, the seed
    /// that reported it and the label, aligned: `  999993  seed 257  distance`.
    pub fn lines(&self) -> Vec<String> {
        let scores: Vec<String> = self.best.values().map(|b| b.score.to_string()).collect();
        let width = scores.iter().map(String::len).max().unwrap_or(1);
        let seeds: Vec<String> = self.best.values().map(|b| b.seed.to_string()).collect();
        let seed_width = seeds.iter().map(String::len).max().unwrap_or(1);
        (self.best.keys().zip(scores).zip(seeds))
            .map(|((label, score), seed)| {
                format!("{score:>width$}  seed {seed:<seed_width$}  {label}")
            })
            .collect()
    }
}

/// One trial of the targeted phase.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetedTrial {
    /// Its seed (after the plan's: [`targeted_seeds`]).
    pub seed: u64,
    /// The label it climbed.
    pub label: String,
    /// The choices it made: `TestCase::replay(choices, ..)` is its input.
    pub choices: Vec<u64>,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its scores, the highest per label.
    pub scores: Vec<(String, f64)>,
    /// It beat a label's best and became that label's base.
    pub kept: bool,
}

/// The `budget` seeds of the targeted phase: the seeds after the plan's last one (wrapping
/// past `u64::MAX`) that are not in the plan.
pub fn targeted_seeds(plan: &[u64], budget: usize) -> Vec<u64> {
    let planned: HashSet<u64> = plan.iter().copied().collect();
    let mut next = plan.last().map_or(0, |&s| s.wrapping_add(1));
    let mut out = Vec::with_capacity(budget);
    while out.len() < budget {
        if !planned.contains(&next) {
            out.push(next);
        }
        next = next.wrapping_add(1);
    }
    out
}

/// The targeted seeds of a run with evidence and `budget` targeted trials, and its whole
/// plan (the plan's seeds, then the targeted ones): refused with a partition, whose parts
/// would each plan the same targeted seeds.
pub(crate) fn evidence_plan(
    config: &crate::run::RunConfig,
    budget: usize,
) -> Result<(Vec<u64>, Cow<'_, [u64]>), crate::errors::RunError> {
    if budget > 0 && config.partition.is_some() {
        return Err(crate::errors::RunError::Unsupported(
            "a target budget with a partition: each part would plan the same targeted seeds (run the targeted phase without --partition)".to_string(),
        ));
    }
    let targeted = targeted_seeds(&config.seeds, budget);
    if targeted.is_empty() {
        return Ok((targeted, Cow::Borrowed(&config.seeds)));
    }
    let planned = [config.seeds.as_slice(), &targeted].concat();
    Ok((targeted, Cow::Owned(planned)))
}

/// The closed receipt of a run whose whole plan is `planned`: its targeted seeds planned and
/// attempted after the plan's (a run without them keeps what `close_receipt` wrote).
pub(crate) fn close_plan(
    receipt: &mut seedledger_format::Receipt,
    planned: Cow<'_, [u64]>,
    targeted: &[u64],
) {
    if !targeted.is_empty() {
        receipt.planned_seeds = planned.to_vec();
        receipt.attempted_seeds = planned.into_owned();
    }
}

/// The mutation of `choices` (each drawn under the bound in `maxes`) a targeted trial runs,
/// from `rng` (seeded by its seed): one of four moves, see the module docs. An empty base
/// stays empty (the trial then draws from its seed's stream alone).
pub fn mutate(choices: &[u64], maxes: &[u64], rng: &mut SeedRng) -> Vec<u64> {
    let mut out = choices.to_vec();
    if out.is_empty() {
        return out;
    }
    let at = rng.below(out.len() as u64) as usize;
    let max_at = |i: usize| maxes.get(i).copied().unwrap_or(u64::MAX);
    let nudge = |v: u64, step: u64, up: bool, max: u64| {
        if up {
            v.saturating_add(step).min(max)
        } else {
            v.saturating_sub(step)
        }
    };
    match rng.below(4) {
        0 => out[at] = nudge(out[at], 1, rng.below(2) == 1, max_at(at)),
        1 => {
            let bits = 64 - max_at(at).leading_zeros() as u64;
            let step = 1 + (rng.next_u64() >> (64 - rng.below(bits.max(1)).max(1)));
            out[at] = nudge(out[at], step, rng.below(2) == 1, max_at(at));
        }
        2 => out[at] = rng.upto(max_at(at)),
        _ => {
            let up = rng.below(2) == 1;
            for i in at..(at + 4).min(out.len()) {
                out[i] = nudge(out[i], 1, up, max_at(i));
            }
        }
    }
    out
}

/// A label's base: the choices (and their bounds) of the trial with its best score.
struct Base {
    choices: Vec<u64>,
    maxes: Vec<u64>,
    score: f64,
}

/// The state of a targeted phase: each label's base, and which label is climbed next.
pub(crate) struct Climber {
    labels: Vec<String>,
    bases: BTreeMap<String, Base>,
    rng: Scheme,
    done: usize,
}

/// One targeted trial as it ran: how it ended, and what it recorded.
pub(crate) struct Climbed {
    pub outcome: Outcome,
    pub record: crate::case::Record,
    pub label: String,
    pub kept: bool,
}

impl Climber {
    /// The phase after planned trials whose best scores are `best`: each label's base is
    /// its best seed's input, re-run recording its choices (not a trial of the run).
    pub(crate) fn start(
        property: &Property,
        fixture: &Fixture,
        rng: Scheme,
        best: &TargetScores,
    ) -> Climber {
        let labels: Vec<String> = best.best.keys().cloned().collect();
        let mut bases = BTreeMap::new();
        for label in &labels {
            let seed = best.best[label].seed;
            let input = crate::control::TrialInput::Recording { seed, rng };
            let record = crate::control::evaluate_watched(property, fixture, input).record;
            let score = score_of(&record.targets, label).unwrap_or(f64::NEG_INFINITY);
            let (choices, maxes) = (record.choices, record.maxes);
            bases.insert(
                label.clone(),
                Base {
                    choices,
                    maxes,
                    score,
                },
            );
        }
        Climber {
            labels,
            bases,
            rng,
            done: 0,
        }
    }

    /// The next targeted trial, on `seed`: the next label's base mutated by a stream keyed
    /// by `seed`, run as a prefix; a score above a label's base makes it that label's base.
    /// Without a label, the trial is `seed`'s own input.
    pub(crate) fn trial(&mut self, property: &Property, fixture: &Fixture, seed: u64) -> Climbed {
        let label = match self.labels.len() {
            0 => String::new(),
            n => self.labels[self.done % n].clone(),
        };
        self.done += 1;
        let prefix = match self.bases.get(&label) {
            Some(base) => {
                let mut mutation = SeedRng::new(seed ^ MUTATION_KEY);
                mutate(&base.choices, &base.maxes, &mut mutation)
            }
            None => Vec::new(),
        };
        let tc = crate::TestCase::guided(self.rng, seed, prefix);
        let evaluation = evaluate(property, tc, fixture);
        let record = evaluation.record;
        let mut kept = false;
        for (l, score) in &record.targets {
            if let Some(base) = self.bases.get_mut(l)
                && *score > base.score
            {
                *base = Base {
                    choices: record.choices.clone(),
                    maxes: record.maxes.clone(),
                    score: *score,
                };
                kept = true;
            }
        }
        Climbed {
            outcome: evaluation.outcome,
            record,
            label,
            kept,
        }
    }
}

/// What the targeted phase did: its trials in order, and the scores and events they added.
pub(crate) struct Phase {
    pub trials: Vec<TargetedTrial>,
    /// The first failing targeted trial and its failure.
    pub first_failure: Option<(u64, crate::exec::Failure, Vec<u64>)>,
}

/// Runs the targeted phase of a run without evidence (see the module docs) after the
/// planned trials whose best scores are `best`, adding each targeted trial's scores and
/// events to `best` and `events`.
pub(crate) fn climb(
    property: &Property,
    fixture: &Fixture,
    rng: Scheme,
    (seeds, stop): (&[u64], &dyn Fn() -> bool),
    best: &mut TargetScores,
    events: &mut crate::events::EventCounts,
) -> Phase {
    let mut phase = Phase {
        trials: Vec::new(),
        first_failure: None,
    };
    let mut climber = Climber::start(property, fixture, rng, best);
    for &seed in seeds {
        if stop() {
            break;
        }
        let climbed = climber.trial(property, fixture, seed);
        best.add_trial(seed, &climbed.record.targets);
        events.add_trial(climbed.record.events.iter().map(String::as_str));
        if let Outcome::Fail(failure) = &climbed.outcome
            && phase.first_failure.is_none()
        {
            let choices = climbed.record.choices.clone();
            phase.first_failure = Some((seed, failure.clone(), choices));
        }
        phase.trials.push(climbed.into_trial(seed));
    }
    phase
}

impl Climbed {
    /// The trial's record in a report.
    pub(crate) fn into_trial(self, seed: u64) -> TargetedTrial {
        TargetedTrial {
            seed,
            label: self.label,
            choices: self.record.choices,
            verdict: match self.outcome {
                Outcome::Pass => Verdict::Pass,
                Outcome::Fail(_) => Verdict::Fail,
                // A guided case never runs out of choices nor reads one above its bound.
                Outcome::Discard | Outcome::Overrun | Outcome::Invalid => Verdict::Discard,
            },
            scores: self.record.targets,
            kept: self.kept,
        }
    }
}

/// What the mutation stream of a targeted trial is keyed by, with its seed: not the seed's
/// own stream, which the trial draws from past its prefix.
const MUTATION_KEY: u64 = 0x7461_7267_6574_6564;

fn score_of(scores: &[(String, f64)], label: &str) -> Option<f64> {
    scores.iter().find(|(l, _)| l == label).map(|(_, s)| *s)
}
