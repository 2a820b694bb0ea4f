//! Telling which run ended the process when several were in a trial: each one's trial
//! replayed alone, one at a time, in an `--isolate` trial worker.

use super::crash::Crash;
use super::*;

/// How long a trial replayed alone to tell which run ended the process may take.
pub(super) const REPLAY_ALONE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// What the trial a run was in when the process died did when replayed alone, in a process
/// of its own.
pub(super) enum Alone {
    /// It ended its process: the signature (`crash:SIGABRT`, `exit:0`, ...).
    Ended { seed: u64, signature: String },
    /// It ran to its end: `ok`, or the signature of its failure.
    Returned { seed: u64, signature: String },
    /// It could not be told: why.
    Untold(String),
}

impl Crash {
    /// Replays the trial this run was in (its last attempted seed, which has no row) alone in
    /// an `--isolate` trial worker, under the receipt's scheme and on the fixture the receipt
    /// pinned.
    pub(super) fn replay_alone(&self, selected: &[Property], config: &RunConfig) -> Alone {
        use seedledger_runner::engine::TrialExecutor as _;
        let Some(seed) = self.last_attempted() else {
            return Alone::Untold("it was not in a trial".to_string());
        };
        if self.rows.last().is_some_and(|row| row.seed == seed) {
            return Alone::Untold("it was between two trials".to_string());
        }
        let (Ok(receipt), Some(property)) = (
            &self.receipt,
            selected.iter().find(|p| p.id == self.property_id),
        ) else {
            return Alone::Untold("its receipt cannot be read".to_string());
        };
        let fixture = seedledger_runner::engine::load_spec(&config.root, property.id)
            .and_then(|spec| seedledger_runner::engine::load_fixture(&config.root, &spec))
            .map_err(|e| e.to_string())
            .and_then(|(bytes, pin)| {
                if seedledger_format::fixture_hash_from_pin(&pin) == receipt.fixture_hash {
                    Ok(bytes)
                } else {
                    Err("its fixture changed".to_string())
                }
            });
        let rng = seedledger_runner::Scheme::of_receipt(receipt.rng.as_deref())
            .map_err(|e| e.to_string());
        let executor = crate::prop::isolate::Isolated::this_program(Some(REPLAY_ALONE_TIMEOUT));
        let (fixture, rng, executor) = match (fixture, rng, executor) {
            (Ok(fixture), Ok(rng), Ok(executor)) => (fixture, rng, executor),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Alone::Untold(e),
        };
        let input = seedledger_runner::engine::TrialInput::Random { seed, rng };
        // On a thread of its own: the trial worker it starts ends with the thread.
        let evaluated = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let fixture = seedledger_runner::Fixture::new(fixture);
                    executor.run_trial(property, &fixture, &input)
                })
                .join()
                .unwrap_or_else(|_| Err("the replay panicked".to_string()))
        });
        match evaluated.map(|e| e.outcome.failure().map(|f| f.signature.clone())) {
            Ok(Some(signature)) if signature == "timeout" => Alone::Untold(format!(
                "it ran longer than {} s",
                REPLAY_ALONE_TIMEOUT.as_secs()
            )),
            Ok(Some(signature))
                if signature.starts_with("crash:") || signature.starts_with("exit:") =>
            {
                Alone::Ended { seed, signature }
            }
            Ok(signature) => Alone::Returned {
                seed,
                signature: signature.unwrap_or_else(|| "ok".to_string()),
            },
            Err(e) => Alone::Untold(e),
        }
    }
}

/// The run whose trial alone ended its process when replayed, when every other one's ran to
/// its end: the culprit is then certain.
pub(super) fn culprit_of<'a>(replays: &[(&'a Crash, Alone)]) -> Option<&'a Crash> {
    let mut ended = replays
        .iter()
        .filter(|(_, a)| matches!(a, Alone::Ended { .. }));
    let culprit = ended.next()?;
    let others_returned = replays
        .iter()
        .all(|(c, a)| c.run_id == culprit.0.run_id || matches!(a, Alone::Returned { .. }));
    (ended.next().is_none() && others_returned).then_some(culprit.0)
}

/// What the replays told, for every crashed run's message: `; replayed alone, one at a time:
/// ...`, then who caused it, or that any of them may have.
pub(super) fn told_by_replays(replays: &[(&Crash, Alone)], culprit: Option<&Crash>) -> String {
    let each: Vec<String> = replays
        .iter()
        .map(|(crash, alone)| match alone {
            Alone::Ended { seed, signature } => format!(
                "`{}` seed {seed} ended its process [{signature}]",
                crash.property_id
            ),
            Alone::Returned { seed, signature } => format!(
                "`{}` seed {seed} ran to its end [{signature}]",
                crash.property_id
            ),
            Alone::Untold(why) => format!("`{}` not told: {why}", crash.property_id),
        })
        .collect();
    let replayed = if each.is_empty() {
        String::new()
    } else {
        format!("; replayed alone, one at a time: {}", each.join(", "))
    };
    match culprit {
        Some(c) => format!("{replayed}; so `{}` ended it", c.property_id),
        None => format!(
            "{replayed}; any of them may have caused it (run with --jobs 1 or one --property to tell)"
        ),
    }
}
