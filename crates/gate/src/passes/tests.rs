//! The readings in passes over files in memory: they decide as the folds over the lines do,
//! stop when a file changed between two passes, and keep what they spill exactly.

use super::own_rows::{Known, OwnRecord, OwnRows};
use super::*;
use crate::cite::{Deferred, row_fingerprint};
use crate::fold::{expected, id_fingerprint, random_files, streamed};
use crate::review::same_seed_review;
use crate::source::MemorySpill;
use crate::test_rng::Rng;
use seedledger_format::{LinesRead, ParallelLines, Runner, Verdict, WitnessRow};

/// Files in memory, read as the command line reads files (on worker threads, in small chunks
/// so that a file is many), counting the passes over each.
struct Memory {
    files: Vec<Vec<u8>>,
    passes: Vec<usize>,
    /// This file reads as changed once it has been read this many times.
    changes: Option<(usize, usize)>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MemoryError {
    Changed(usize),
    Spill(String),
    Read(String),
}

impl From<SpillError> for MemoryError {
    fn from(e: SpillError) -> MemoryError {
        MemoryError::Spill(e.to_string())
    }
}

impl Memory {
    fn new(files: Vec<Vec<u8>>) -> Memory {
        let passes = vec![0; files.len()];
        Memory {
            files,
            passes,
            changes: None,
        }
    }
}

impl WitnessFiles for Memory {
    type Error = MemoryError;

    fn count(&self) -> usize {
        self.files.len()
    }

    fn pass<X: Default + Send>(
        &mut self,
        file: usize,
        skip: impl Fn(&[u8]) -> bool + Sync,
        prepare: impl Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
        each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> Result<LinesRead, MemoryError> {
        self.passes[file] += 1;
        ParallelLines::new()
            .workers(2)
            .chunk(64)
            .read(self.files[file].as_slice(), skip, prepare, each)
            .map_err(|e| MemoryError::Read(e.to_string()))
    }

    fn unchanged(&mut self, file: usize, read: LinesRead) -> Result<(), MemoryError> {
        let changed = self
            .changes
            .is_some_and(|(f, after)| f == file && self.passes[file] >= after);
        if changed || read.bytes != self.files[file].len() as u64 {
            return Err(MemoryError::Changed(file));
        }
        Ok(())
    }
}

/// Files of lines already read (no bytes: nothing is authenticated), for a reading that is
/// tested against a fold over the same lines.
pub(crate) struct LineFiles(pub(crate) Vec<Vec<WitnessLine>>);

impl WitnessFiles for LineFiles {
    type Error = MemoryError;

    fn count(&self) -> usize {
        self.0.len()
    }

    fn pass<X: Default + Send>(
        &mut self,
        file: usize,
        _: impl Fn(&[u8]) -> bool + Sync,
        prepare: impl Fn(&mut WitnessLine, &[u8], &mut X) + Sync,
        mut each: impl FnMut(Streamed<'_, X>) -> bool,
    ) -> Result<LinesRead, MemoryError> {
        for line in &self.0[file] {
            let mut line = line.clone();
            let mut x = X::default();
            prepare(&mut line, b"", &mut x);
            if !each(Streamed::Line(&line, b"", &x)) {
                return Ok(LinesRead {
                    bytes: 0,
                    stopped: true,
                });
            }
        }
        Ok(LinesRead {
            bytes: 0,
            stopped: false,
        })
    }

    fn unchanged(&mut self, _: usize, _: LinesRead) -> Result<(), MemoryError> {
        Ok(())
    }
}

/// `gate decide`'s reading gives the decision and the review the folds over the batch's
/// lines in memory give, names the file of a rule-1 refusal, and reads no file more than
/// three times.
#[test]
fn decide_files_decides_and_reviews_as_over_lines_in_memory() {
    let mut rng = Rng(0x0dec_1de5);
    let mut admits = 0;
    let mut culprits = 0;
    for case in 0..3_000 {
        let files = random_files(&mut rng);
        let lines = streamed(&files, false);
        let mut memory = Memory::new(files.clone());
        let got = decide_files::<MemorySpill, _>(&mut memory, &expected(), None).unwrap();
        let want = crate::decide_freeze(&lines, &expected());
        assert_eq!(got.decision, want, "case {case}");
        assert_eq!(
            got.review,
            same_seed_review(&lines, &expected(), None, false),
            "case {case}"
        );
        assert_eq!(got.lines, lines.len(), "case {case}");
        // The culprit is the file that holds the rejected row.
        let mut starts = Vec::new();
        let mut index = 0;
        for bytes in &files {
            starts.push(index);
            index += streamed(std::slice::from_ref(bytes), false).len();
        }
        let file = want
            .rejected_row
            .and_then(|row| starts.iter().rposition(|&s| s <= row));
        assert_eq!(got.culprit, file, "case {case}");
        assert!(memory.passes.iter().all(|&n| n <= 3), "case {case}");
        admits += usize::from(want.admit);
        culprits += usize::from(file.is_some());
    }
    assert!(
        admits > 20 && culprits > 100,
        "{admits} admits, {culprits} culprits"
    );
}

fn row(id: &str, seed: u64, verdict: &str, runner: &str) -> String {
    format!(
        r#"{{"witness_id":"{id}","property_id":"p","property_digest":"{}","fixture_pin":"{}","bound":"b","seed":{seed},"verdict":"{verdict}","signature":"{}","runner":"{runner}","freeze_writer":false}}"#,
        "d".repeat(64),
        "e".repeat(64),
        if verdict == "fail" { "assert:x" } else { "ok" }
    )
}

/// A file that changed between two passes stops the reading with the caller's error, in
/// whichever pass finds it; a batch read in one pass is never asked again.
#[test]
fn a_file_changed_between_two_passes_stops_the_reading() {
    let batch = vec![
        format!("{}\n", row("l-1", 1, "fail", "local")).into_bytes(),
        format!("{}\n", row("r-1", 1, "pass", "remote")).into_bytes(),
    ];
    // Fails and passes in scope: the review reads the batch again.
    let mut memory = Memory::new(batch.clone());
    memory.changes = Some((1, 2));
    let err = decide_files::<MemorySpill, _>(&mut memory, &expected(), None).unwrap_err();
    assert_eq!(err, MemoryError::Changed(1));
    let mut memory = Memory::new(batch.clone());
    let d = decide_files::<MemorySpill, _>(&mut memory, &expected(), None).unwrap();
    assert!(d.decision.admit && d.review.passed(), "{d:?}");
    assert_eq!(memory.passes, vec![3, 3]);
    // Passes alone: one pass.
    let passes = vec![
        format!(
            "{}\n{}\n",
            row("a", 1, "pass", "local"),
            row("b", 2, "pass", "remote")
        )
        .into_bytes(),
    ];
    let mut memory = Memory::new(passes);
    memory.changes = Some((0, 2));
    decide_files::<MemorySpill, _>(&mut memory, &expected(), None).unwrap();
    assert_eq!(memory.passes, vec![1]);
}

/// Past its budget the fingerprints go to scratch room and are read back in shares; a
/// repeat is found wherever it lies, and none is invented.
#[test]
fn spilled_fingerprints_find_exactly_the_repeats() {
    for budget in [1, 3, 1000] {
        let mut fps = Fingerprints::<MemorySpill> {
            budget,
            ..Fingerprints::default()
        };
        for fp in [5u64, u64::MAX, 0, 1 << 63, 77, 5, 9, u64::MAX] {
            fps.push(fp).unwrap();
        }
        assert_eq!(fps.spilled.is_some(), budget < 8, "budget {budget}");
        let repeated: Vec<u64> = fps.repeated().unwrap().into_iter().collect();
        assert_eq!(repeated, vec![5, u64::MAX], "budget {budget}");
        let mut unique = Fingerprints::<MemorySpill> {
            budget,
            ..Fingerprints::default()
        };
        for fp in 0..50u64 {
            unique.push(fp.wrapping_mul(0x9e37_79b9_7f4a_7c15)).unwrap();
        }
        assert!(unique.repeated().unwrap().is_empty(), "budget {budget}");
    }
}

fn own_row(id: &str, seed: u64, verdict: Verdict) -> WitnessRow {
    WitnessRow {
        witness_id: id.to_string(),
        property_id: "p".to_string(),
        property_digest: "d".to_string(),
        fixture_pin: "e".to_string(),
        bound: "b".to_string(),
        seed,
        verdict,
        signature: "ok".to_string(),
        runner: Runner::Local,
        freeze_writer: false,
        run_id: Some("run".to_string()),
        patch_id: Some("pr-7".to_string()),
        code: Some("diff:c0de".to_string()),
        replayed_signature: None,
        rng: None,
        attempt: None,
    }
}

/// The records read back are the rows written (less the ones truncated away); the rows
/// asked about are answered alike from memory and, past the budget, share by share from
/// scratch room; an id written twice differently is found, one written twice alike is not.
#[test]
fn own_rows_answer_alike_in_memory_and_from_scratch_room() {
    let rows: Vec<WitnessRow> = (0..40u64)
        .map(|s| {
            let verdict = if s % 3 == 0 {
                Verdict::Fail
            } else {
                Verdict::Pass
            };
            let mut r = own_row(&format!("run-{s}"), s, verdict);
            // Rows of each scheme, and without `rng`.
            r.rng = match s % 3 {
                0 => Some("chacha8-v2".to_string()),
                1 => Some("chacha8-v1".to_string()),
                _ => None,
            };
            r
        })
        .collect();
    let mut own = OwnRows::<MemorySpill>::new().unwrap();
    for r in &rows[..30] {
        own.push(1, r).unwrap();
    }
    let mark = own.count();
    for r in &rows[30..] {
        own.push(2, r).unwrap();
    }
    own.truncate(mark).unwrap();
    // Written again after the truncation, and one of them twice, alike.
    for r in &rows[30..35] {
        own.push(3, r).unwrap();
    }
    own.push(3, &rows[0]).unwrap();
    let back: Vec<OwnRecord> = own.records().unwrap().map(Result::unwrap).collect();
    assert_eq!(back.len(), 36);
    assert_eq!(
        (back[0].receipt, back[0].seed, back[0].verdict),
        (1, 0, Verdict::Fail)
    );
    assert_eq!(
        (back[31].receipt, back[31].seed, back[31].verdict),
        (3, 31, Verdict::Pass)
    );
    assert_eq!(back[7].print, row_fingerprint(&rows[7]));
    // Each record names its row's scheme (a row without `rng`: chacha8-v1).
    for (b, r) in back[..30].iter().zip(&rows) {
        assert_eq!(own.scheme(b.scheme), r.scheme(), "seed {}", b.seed);
    }
    assert_eq!(back[7].id, id_fingerprint("run-7"));
    assert!(own.edited().unwrap().is_empty());

    // Asked about: rows written, rows truncated away, rows edited.
    let mut asked: Vec<WitnessRow> = rows.clone();
    let mut edited = rows[4].clone();
    edited.verdict = Verdict::Fail;
    asked.push(edited);
    let expect: Vec<bool> = (0..asked.len()).map(|i| i < 35).collect();
    for budget in [1, 2, 7, 36, 1000] {
        let mut known = own.known(budget).unwrap();
        assert_eq!(
            matches!(known, Known::Shares(_)),
            budget < 36,
            "budget {budget}"
        );
        let deferred = |i: usize| Deferred {
            index: i as u64 * 3,
            seed: i as u64 + 100,
            at: if i.is_multiple_of(4) {
                u32::MAX
            } else {
                i as u32 * 5
            },
            verdict: asked[i].verdict,
        };
        for (i, r) in asked.iter().enumerate() {
            known.note(row_fingerprint(r), deferred(i)).unwrap();
        }
        known.resolve(&mut own).unwrap();
        // The answers the first pass deferred, in order, then again for a second pass.
        let mut answered = Vec::new();
        known
            .each_deferred(|d, cited| answered.push((d, cited)))
            .unwrap();
        if budget < 36 {
            let want: Vec<(Deferred, bool)> =
                (0..asked.len()).map(|i| (deferred(i), expect[i])).collect();
            assert_eq!(answered, want, "budget {budget}");
        }
        let got: Vec<bool> = asked
            .iter()
            .map(|r| known.contains_print(row_fingerprint(r)).unwrap())
            .collect();
        assert_eq!(got, expect, "budget {budget}");
    }

    // Another run's row under an id already written, with other content.
    let mut other = rows[2].clone();
    other.run_id = Some("run-b".to_string());
    own.push(4, &other).unwrap();
    assert_eq!(
        own.edited().unwrap().into_iter().collect::<Vec<_>>(),
        vec![id_fingerprint("run-2")]
    );
}
