//! `gate flake`'s reading (SPEC: Flake rate): witness rows of any number of runs folded into,
//! per property, rng scheme, seed and failure signature S, each runner role's replays and
//! fails with S, the class, and when S was first and last seen failing on that seed.
//!
//! Keys. A seed means its input under one rng scheme (`WitnessRow::scheme`), so rows of the
//! same seed under two schemes are two inputs and two keys. For a seed, the signatures S are
//! those of every fail row on it (a run's trial or a replay) and the `replayed_signature` of
//! its replay rows; per S and role, `replays` counts the replay rows of the seed on the role
//! whatever their verdict, `fails` those that failed with S.
//!
//! Passes. Only seeds with replay rows get a line, so the first pass
//! ([`FlakeReading::first`]) reads replay rows alone and keeps counters for their seeds; a
//! second pass ([`FlakeReading::second`], needed only when the first found replay rows) adds
//! the signatures and sightings of the runs' fail rows on those seeds, and a reader may pass
//! over every line whose seed is not one of [`FlakeReading::wanted_seeds`] unread. Memory:
//! counters per replayed seed and one entry per distinct property, scheme, signature and run;
//! never a row, and nothing for a seed without replays, however many seeds failed.
//!
//! First and last seen. The runs' receipts are fed first ([`FlakeReading::run`]: `run_id`,
//! `started_at`). A fail row with S on the seed, of a run whose receipt was fed, is a
//! sighting at that run's `started_at`; replay rows count as sightings too when their run
//! (a `prop reproduce`) has a receipt. A row whose run has no receipt is no sighting (a run's
//! row is then counted in [`FlakeNotes::unknown_runs`]; a replay's is not, `prop reproduce`
//! writing no receipt); a key without sightings has neither.

use seedledger_format::flake::{FlakeClass, Tally, replays_short};
use seedledger_format::{Runner, Verdict, WitnessRow, parse_rfc3339};
use std::collections::{BTreeMap, HashMap};

/// The runner roles, in the order every view lists them.
pub const FLAKE_ROLES: [Runner; 2] = [Runner::Local, Runner::Remote];

/// What a reading keeps and leaves out.
#[derive(Debug, Clone, Default)]
pub struct FlakeConfig {
    /// Only rows carrying this `patch_id` (a row without one is left out too).
    pub patch_id: Option<String>,
}

/// A run's start, from its receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// Seconds since the epoch.
    pub at: i64,
    /// `started_at` as the receipt spells it.
    pub text: String,
}

/// Counts a reading reports besides its lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlakeNotes {
    /// Rows folded into a line: replay rows, and the runs' rows on replayed seeds (every
    /// verdict when a second pass read them, the fails when the first pass held them).
    pub rows: u64,
    /// Replay rows among them.
    pub replay_rows: u64,
    /// Rows left out because they are not of [`FlakeConfig::patch_id`].
    pub other_patch: u64,
    /// Runs' fail rows (not replays) of a kept key whose `run_id` names no receipt fed (no
    /// sighting).
    pub unknown_runs: u64,
    /// Receipts fed whose `started_at` is missing or not RFC 3339 (their runs are unknown).
    pub undated_runs: u64,
}

/// The fold: feed receipts ([`FlakeReading::run`]), then every row to
/// [`FlakeReading::first`], then, when [`FlakeReading::needs_second_pass`], every row again
/// to [`FlakeReading::second`]; [`FlakeReading::finish`] gives the lines.
#[derive(Debug, Default)]
pub struct FlakeReading {
    config: FlakeConfig,
    runs: Vec<Started>,
    run_index: HashMap<String, u32>,
    names: Interned<(String, String)>,
    signatures: Interned<String>,
    seeds: BTreeMap<(u32, u64), SeedState>,
    notes: FlakeNotes,
    /// The last property and scheme met, and their number: rows come in runs of one
    /// property, so most rows are numbered without a hash or an allocation.
    last_name: Option<(String, String, u32)>,
    /// The runs' fail rows (not replays) of the first pass, held so that the second pass is
    /// needed only when there are more than `held_cap` of them.
    run_fails: Vec<RunFail>,
    /// More than `held_cap` run fail rows were met: the second pass reads them.
    run_fails_overflowed: bool,
    held_cap: usize,
}

/// How many of the runs' fail rows the first pass holds (24 bytes each) before it leaves
/// them to a second pass.
pub const RUN_FAILS_HELD: usize = 1 << 18;

/// A run's fail row met in the first pass: its property and scheme, seed, signature, and
/// its run when a receipt fed names it.
#[derive(Debug, Clone, Copy)]
struct RunFail {
    name: u32,
    seed: u64,
    sig: u32,
    run: Option<u32>,
}

/// One line of `gate flake`: one property, scheme, seed and signature.
#[derive(Debug, Clone, PartialEq)]
pub struct FlakeLine<'a> {
    /// The property.
    pub property: &'a str,
    /// The rng scheme of the rows (`chacha8-v1`, ...).
    pub scheme: &'a str,
    /// The seed.
    pub seed: u64,
    /// The failure signature S.
    pub signature: &'a str,
    /// Per role of [`FLAKE_ROLES`]: its replays and fails with S, `None` when it did not
    /// replay the seed.
    pub roles: [Option<Tally>; 2],
    /// The class (SPEC: Flake rate).
    pub class: FlakeClass,
    /// Per role of [`FLAKE_ROLES`]: how many more replays it needs before the class can be
    /// more than `insufficient` (0: none).
    pub short: [u64; 2],
    /// The earliest and latest start of a run that showed S failing on the seed.
    pub first_seen: Option<&'a Started>,
    /// See `first_seen`.
    pub last_seen: Option<&'a Started>,
}

/// A seed that has replay rows but no failure signature (no fail row, no
/// `replayed_signature`): it gets no line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsigned<'a> {
    /// The property.
    pub property: &'a str,
    /// The rng scheme.
    pub scheme: &'a str,
    /// The seed.
    pub seed: u64,
    /// Its replay rows, all roles.
    pub replays: u64,
}

#[derive(Debug, Default, Clone)]
struct SeedState {
    replays: [u64; 2],
    sigs: Vec<SigState>,
}

#[derive(Debug, Clone, Copy)]
struct SigState {
    sig: u32,
    fails: [u64; 2],
    seen: Option<(u32, u32)>,
}

/// Values numbered in the order first met, each kept once.
#[derive(Debug)]
struct Interned<T> {
    all: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T> Default for Interned<T> {
    fn default() -> Interned<T> {
        Interned {
            all: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: std::hash::Hash + Eq + Clone> Interned<T> {
    fn get(&self, value: &T) -> Option<u32> {
        self.index.get(value).copied()
    }

    fn add(&mut self, value: &T) -> u32 {
        if let Some(i) = self.get(value) {
            return i;
        }
        let i = u32::try_from(self.all.len()).unwrap_or(u32::MAX);
        self.all.push(value.clone());
        self.index.insert(value.clone(), i);
        i
    }
}

fn role_index(runner: Runner) -> usize {
    match runner {
        Runner::Local => 0,
        Runner::Remote => 1,
    }
}

impl FlakeReading {
    /// A reading under `config`.
    pub fn new(config: FlakeConfig) -> FlakeReading {
        FlakeReading {
            config,
            held_cap: RUN_FAILS_HELD,
            ..FlakeReading::default()
        }
    }

    /// A reading that holds at most `cap` run fail rows in its first pass (tests: 0 forces
    /// the second pass).
    #[cfg(test)]
    pub(crate) fn holding(mut self, cap: usize) -> FlakeReading {
        self.held_cap = cap;
        self
    }

    /// A run's receipt: its `run_id` and `started_at` (RFC 3339). A second receipt of the
    /// same run keeps the first's time.
    pub fn run(&mut self, run_id: &str, started_at: Option<&str>) {
        let Some((text, at)) = started_at.and_then(|t| parse_rfc3339(t).map(|at| (t, at))) else {
            self.notes.undated_runs += 1;
            return;
        };
        if self.run_index.contains_key(run_id) {
            return;
        }
        let i = u32::try_from(self.runs.len()).unwrap_or(u32::MAX);
        self.runs.push(Started {
            at,
            text: text.to_string(),
        });
        self.run_index.insert(run_id.to_string(), i);
    }

    /// The first pass: replay rows are counted; a run's fail row is held (up to
    /// [`RUN_FAILS_HELD`]) for the seeds that turn out to be replayed, beyond that it waits
    /// for the second pass.
    pub fn first(&mut self, row: &WitnessRow) {
        if !self.kept(row) {
            return;
        }
        if row.attempt.is_none() {
            if row.verdict == Verdict::Fail {
                self.hold(row);
            }
            return;
        }
        self.notes.rows += 1;
        self.notes.replay_rows += 1;
        let name = self.name(row);
        let role = role_index(row.runner);
        let replayed = row
            .replayed_signature
            .as_ref()
            .map(|s| self.signatures.add(s));
        let failed = (row.verdict == Verdict::Fail).then(|| self.signatures.add(&row.signature));
        // A replay's run has no receipt (`prop reproduce` writes none): not worth a note.
        let seen = failed.and_then(|_| self.run_of(row));
        let state = self.seeds.entry((name, row.seed)).or_default();
        state.replays[role] += 1;
        if let Some(sig) = replayed {
            sig_state(state, sig);
        }
        if let Some(sig) = failed {
            let it = sig_state(state, sig);
            it.fails[role] += 1;
            it.see(seen, &self.runs);
        }
    }

    /// The number of the row's property and scheme.
    fn name(&mut self, row: &WitnessRow) -> u32 {
        if let Some((property, scheme, i)) = &self.last_name
            && *property == row.property_id
            && scheme == row.scheme()
        {
            return *i;
        }
        let key = (row.property_id.clone(), row.scheme().to_string());
        let i = self.names.add(&key);
        self.last_name = Some((key.0, key.1, i));
        i
    }

    /// Holds a run's fail row of the first pass, or gives up holding them when there are
    /// too many (the second pass then reads them all).
    fn hold(&mut self, row: &WitnessRow) {
        if self.run_fails_overflowed {
            return;
        }
        if self.run_fails.len() >= self.held_cap {
            self.run_fails_overflowed = true;
            self.run_fails = Vec::new();
            return;
        }
        let name = self.name(row);
        let sig = self.signatures.add(&row.signature);
        let run = row
            .run_id
            .as_deref()
            .and_then(|id| self.run_index.get(id).copied());
        self.run_fails.push(RunFail {
            name,
            seed: row.seed,
            sig,
            run,
        });
    }

    /// After the first pass: whether a second pass can add anything — some seed has replay
    /// rows, and the runs' fail rows were too many to hold. When they were held, they are
    /// folded in here (as the second pass would: signatures and sightings of the replayed
    /// seeds) and no second pass is needed.
    pub fn needs_second_pass(&mut self) -> bool {
        if self.seeds.is_empty() {
            return false;
        }
        if self.run_fails_overflowed {
            return true;
        }
        for f in std::mem::take(&mut self.run_fails) {
            let Some(state) = self.seeds.get_mut(&(f.name, f.seed)) else {
                continue;
            };
            self.notes.rows += 1;
            if f.run.is_none() {
                self.notes.unknown_runs += 1;
            }
            sig_state(state, f.sig).see(f.run, &self.runs);
        }
        false
    }

    /// The seeds the second pass wants, sorted, each once (whatever their property or
    /// scheme): a line whose seed is not among them can be passed over unread.
    pub fn wanted_seeds(&self) -> Vec<u64> {
        let mut seeds: Vec<u64> = self.seeds.keys().map(|&(_, seed)| seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        seeds
    }

    /// The second pass: a run's fail row (not a replay) on a replayed seed adds its signature
    /// and a sighting. (Rows of another patch were counted in the first pass.)
    pub fn second(&mut self, row: &WitnessRow) {
        let other_patch = self
            .config
            .patch_id
            .as_ref()
            .is_some_and(|p| row.patch_id.as_ref() != Some(p));
        if row.attempt.is_some() || other_patch {
            return;
        }
        self.notes.rows += 1;
        if row.verdict != Verdict::Fail {
            return;
        }
        let name = (row.property_id.clone(), row.scheme().to_string());
        let Some(name) = self.names.get(&name) else {
            return;
        };
        if !self.seeds.contains_key(&(name, row.seed)) {
            return;
        }
        let sig = self.signatures.add(&row.signature);
        let seen = self.sighting(row);
        if let Some(state) = self.seeds.get_mut(&(name, row.seed)) {
            sig_state(state, sig).see(seen, &self.runs);
        }
    }

    /// The row is of the patch asked for (every row is, without one); counts the others.
    fn kept(&mut self, row: &WitnessRow) -> bool {
        let Some(patch) = &self.config.patch_id else {
            return true;
        };
        let kept = row.patch_id.as_ref() == Some(patch);
        if !kept {
            self.notes.other_patch += 1;
        }
        kept
    }

    /// The run of a fail row, when its receipt was fed; counts the others.
    fn sighting(&mut self, row: &WitnessRow) -> Option<u32> {
        let run = self.run_of(row);
        if run.is_none() {
            self.notes.unknown_runs += 1;
        }
        run
    }

    /// The run of a row, when its receipt was fed.
    fn run_of(&self, row: &WitnessRow) -> Option<u32> {
        row.run_id
            .as_deref()
            .and_then(|id| self.run_index.get(id).copied())
    }

    /// What the reading left out or could not date.
    pub fn notes(&self) -> FlakeNotes {
        self.notes
    }

    /// Every line, sorted by property, scheme, seed and signature.
    pub fn lines(&self) -> impl Iterator<Item = FlakeLine<'_>> + '_ {
        self.seeds.iter().flat_map(move |(&(name, seed), state)| {
            let (property, scheme) = &self.names.all[name as usize];
            let mut sigs: Vec<&SigState> = state.sigs.iter().collect();
            sigs.sort_by_key(|s| &self.signatures.all[s.sig as usize]);
            sigs.into_iter()
                .map(move |s| self.line(property, scheme, seed, state, s))
        })
    }

    /// Every seed with replay rows and no signature.
    pub fn unsigned(&self) -> impl Iterator<Item = Unsigned<'_>> + '_ {
        self.seeds
            .iter()
            .filter(|(_, state)| state.sigs.is_empty())
            .map(|(&(name, seed), state)| {
                let (property, scheme) = &self.names.all[name as usize];
                Unsigned {
                    property,
                    scheme,
                    seed,
                    replays: state.replays.iter().sum(),
                }
            })
    }

    fn line<'a>(
        &'a self,
        property: &'a str,
        scheme: &'a str,
        seed: u64,
        state: &SeedState,
        sig: &SigState,
    ) -> FlakeLine<'a> {
        let roles = [0, 1].map(|r| {
            (state.replays[r] > 0).then_some(Tally {
                replays: state.replays[r],
                fails: sig.fails[r],
            })
        });
        let replayed: Vec<Tally> = roles.iter().flatten().copied().collect();
        let run = |i: u32| self.runs.get(i as usize);
        FlakeLine {
            property,
            scheme,
            seed,
            signature: &self.signatures.all[sig.sig as usize],
            roles,
            class: FlakeClass::of(&replayed),
            short: roles.map(|t| t.map_or(0, |t| replays_short(&t))),
            first_seen: sig.seen.and_then(|(first, _)| run(first)),
            last_seen: sig.seen.and_then(|(_, last)| run(last)),
        }
    }
}

impl SigState {
    /// Widens the sighting span with the run at `run` (an index into `runs`): the earliest
    /// and the latest start (the first fed of two runs started at the same second).
    fn see(&mut self, run: Option<u32>, runs: &[Started]) {
        let Some(run) = run else { return };
        let at = |i: u32| runs.get(i as usize).map_or(i64::MIN, |s| s.at);
        self.seen = Some(match self.seen {
            None => (run, run),
            Some((first, last)) => (
                if at(run) < at(first) { run } else { first },
                if at(run) > at(last) { run } else { last },
            ),
        });
    }
}

fn sig_state(state: &mut SeedState, sig: u32) -> &mut SigState {
    let at = match state.sigs.iter().position(|s| s.sig == sig) {
        Some(at) => at,
        None => {
            state.sigs.push(SigState {
                sig,
                fails: [0; 2],
                seen: None,
            });
            state.sigs.len() - 1
        }
    };
    &mut state.sigs[at]
}

#[cfg(test)]
mod tests;
