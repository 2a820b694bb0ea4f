//! Witness rows: one JSON object per line, one line per trial (SPEC: Witness row).

mod canonical;
#[cfg(test)]
mod equivalence;
mod fast;
mod parallel;

use crate::errors::ParseError;
use crate::fields::{Fields, invalid};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

pub use parallel::{LinesRead, ParallelLines, Streamed};

/// Which runner produced a witness row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    /// The local role: the run of the patch under test; its rows need no signature.
    Local,
    /// The remote role: a second runner that replays failing seeds (`prop reproduce`); where
    /// roles are authenticated, its rows are signed.
    Remote,
}

impl Runner {
    /// The runner's name in witness rows and receipts (`local`, `remote`).
    pub fn as_str(self) -> &'static str {
        match self {
            Runner::Local => "local",
            Runner::Remote => "remote",
        }
    }
}

impl fmt::Display for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A trial's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The property held.
    Pass,
    /// The property failed.
    Fail,
}

impl Verdict {
    /// The verdict's name in witness rows (`pass`, `fail`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
        }
    }
}

/// One witness row.
///
/// # Format
///
/// One JSON object per line (JSON Lines) with exactly these fields: `witness_id` (string,
/// unique), `property_id` (string), `property_digest` (64 lowercase hex), `fixture_pin`
/// (64 lowercase hex), `bound` (string), `seed` (u64), `verdict` (`pass` | `fail`),
/// `signature` (`ok` for a pass, the stable failure signature for a fail), `runner`
/// (`local` | `remote`), `freeze_writer` (bool). Rows are appended, never rewritten.
///
/// Extensions (SPEC: Witness row extensions; `decide_freeze` ignores them, the citation-time
/// reviews use them): `run_id` (the run that wrote the row; its receipt carries the same
/// id), `patch_id` (the patch under test), `code` (the code identity the run recorded:
/// `diff:<sha256 of the base commit id and git diff BASE>` with a base revision, else `commit:<HEAD>`, see
/// `Receipt::code`). A row that lacks them, or carries them as non-strings, cannot back a
/// citation. An object that repeats a key is not a row.
///
/// `rng` (extension): the rng scheme the row's seed was turned into an input under (the
/// run's scheme, as its receipt's `rng` names it: `chacha8-v1`, `chacha8-v2`). A row
/// without it is `chacha8-v1` (the rule of receipts). A seed means different inputs under different schemes, so the same-seed
/// review pairs a fail and a pass only under one scheme. A row whose `rng` is present but
/// not a non-empty string is malformed (it must never read as `chacha8-v1`).
///
/// `attempt` (extension): on a replay row (`prop reproduce --repeat K`), which replay of its
/// seed it is, 1..=K. A row whose `attempt` is present but not an integer in
/// 1..=4294967295 is malformed (a bad count must never read as "not a replay").
///
/// `sig` (extension, written by a runner that holds a signing key): the ed25519 signature
/// of the row's canonical bytes, as 128 lowercase hex digits. Where the repository declares
/// trusted runner keys (`props/trusted-runners.jsonl`, see [`crate::TrustedKeys`]), a remote
/// row whose `sig` is missing, not 128 lowercase hex digits, or does not verify (strict
/// ed25519 verification) under a key declared for the `remote` role is malformed; local rows
/// need none. A runner signs only the rows it writes as `remote`.
///
/// # Canonical bytes
///
/// What `sig` signs, computed by [`crate::witness_canonical_bytes`] for signer and verifier
/// alike, from the row's line of JSON:
///
/// 1. the line is read as JSON (a repeated key at any depth: no canonical bytes) and must be
///    an object;
/// 2. its top-level member `sig` is removed — every other member stays, extensions and
///    unknown members included, so changing any of them breaks the signature;
/// 3. the value is written as compact JSON (no whitespace at all), object members sorted by
///    key in ascending order of the keys' UTF-8 bytes at every depth, arrays in order;
///    strings as serde_json escapes them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
///    characters below U+0020 as `\u00xx` with lowercase hex, every other character as its
///    UTF-8 bytes, `/` unescaped); integers in plain decimal (`-` only for negatives);
///    `true`, `false`, `null`. A row holding any other number (`1.5`, `1e3`, `7.0`) has no
///    canonical bytes, and so no valid signature.
///
/// So the bytes depend on the row's value, not its spelling: re-spacing, re-ordering or
/// re-escaping a line keeps its signature. For example the row
/// `{"witness_id":"r-7","seed":7,"runner":"remote","sig":"…"}` has the canonical bytes
/// `{"runner":"remote","seed":7,"witness_id":"r-7"}` (a golden test pins a whole row's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessRow {
    /// The row's id, unique in the witness store.
    pub witness_id: String,
    /// The property the row is evidence for.
    pub property_id: String,
    /// The property's digest (64 lowercase hex) when the row was written.
    pub property_digest: String,
    /// The fixture's pin (64 lowercase hex) when the row was written.
    pub fixture_pin: String,
    /// The property's bound when the row was written.
    pub bound: String,
    /// The seed the trial ran.
    pub seed: u64,
    /// The trial's outcome.
    pub verdict: Verdict,
    /// `ok` for a pass; the stable failure signature for a fail.
    pub signature: String,
    /// Which runner wrote the row.
    pub runner: Runner,
    /// Whether the row claims to write a freeze (a remote one that does is never a witness).
    pub freeze_writer: bool,
    /// The run that wrote the row (its receipt carries the same id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The patch under test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    /// The code identity the run recorded (see `Receipt::code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// On a replay row: the signature of the failure the replayed seed had in the receipt it
    /// reproduces (`prop reproduce` writes it, inside the signed bytes). A remote pass pairs
    /// only with a fail of that signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed_signature: Option<String>,
    /// The `rng` extension: the row's rng scheme; `None` (absent) is `chacha8-v1`
    /// ([`WitnessRow::scheme`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng: Option<String>,
    /// The `attempt` extension (SPEC: Flake rate): on a replay row written by `prop reproduce
    /// --repeat K`, which of the K replays of its seed it is (1-based). A row with it is a
    /// *replay row*; a row without it (a run's trial, `prop replay`) is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

/// One non-blank line of a witness file, read leniently: a bad line is kept, with what
/// could be learnt from it, so that a gate can reject the batch naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// The row's `witness_id` when it has a non-empty string one, even if the row is bad.
    pub witness_id: Option<String>,
    /// The raw object says `"runner": "remote"` and `"freeze_writer": true`, whether or not
    /// the rest of the row is well formed.
    pub remote_minting: bool,
    /// The row, or why the line is not one.
    pub row: Result<WitnessRow, ParseError>,
}

impl WitnessRow {
    /// The scheme of a row without `rng`.
    pub const SCHEME_WITHOUT_RNG: &'static str = "chacha8-v1";

    /// The rng scheme the row's seed means its input under: its `rng`, or `chacha8-v1` when
    /// it has none.
    pub fn scheme(&self) -> &str {
        self.rng.as_deref().unwrap_or(Self::SCHEME_WITHOUT_RNG)
    }

    /// The row as one line of JSON (no trailing newline).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads one row from a JSON value, naming the first missing or invalid field.
    pub fn from_value(value: &Value) -> Result<WitnessRow, ParseError> {
        let f = Fields::of(value)?;
        let witness_id = f.text("witness_id")?.to_string();
        let property_id = f.text("property_id")?.to_string();
        let property_digest = f.text("property_digest")?.to_string();
        let fixture_pin = f.text("fixture_pin")?.to_string();
        let bound = f.text("bound")?.to_string();
        let seed = f.seed("seed")?;
        let verdict = match f.text("verdict")? {
            "pass" => Verdict::Pass,
            "fail" => Verdict::Fail,
            _ => return Err(invalid("verdict", "`pass` or `fail`").into()),
        };
        let signature = f.text("signature")?.to_string();
        let runner = match f.text("runner")? {
            "local" => Runner::Local,
            "remote" => Runner::Remote,
            _ => return Err(invalid("runner", "`local` or `remote`").into()),
        };
        let freeze_writer = f.flag("freeze_writer")?;
        let extension = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        // Absent is `chacha8-v1`; anything present must name a scheme (a non-string must
        // not read as the oldest scheme).
        let rng = match value.get("rng") {
            None => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(_) => return Err(invalid("rng", "an rng scheme name (a non-empty string)").into()),
        };
        let attempt = match value.get("attempt") {
            None => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| invalid("attempt", "a replay number (an integer from 1)"))?,
            ),
        };
        Ok(WitnessRow {
            rng,
            attempt,
            run_id: extension("run_id"),
            patch_id: extension("patch_id"),
            code: extension("code"),
            replayed_signature: extension("replayed_signature"),
            witness_id,
            property_id,
            property_digest,
            fixture_pin,
            bound,
            seed,
            verdict,
            signature,
            runner,
            freeze_writer,
        })
    }
}

/// The `witness_id` of a row that repeats the key: the one value when every occurrence is
/// the same non-empty string, else `None` (two different ids name nothing).
fn agreed_id(line: &str) -> Option<String> {
    struct Ids(Vec<Option<String>>);
    impl<'de> serde::Deserialize<'de> for Ids {
        fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Ids, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Ids;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Ids, A::Error> {
                    let mut ids = Vec::new();
                    while let Some(key) = map.next_key::<String>()? {
                        if key == "witness_id" {
                            let v: Value = map.next_value()?;
                            ids.push(v.as_str().map(str::to_string));
                        } else {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    Ok(Ids(ids))
                }
            }
            de.deserialize_map(V)
        }
    }
    // A line too deep (or otherwise unreadable) to be a value names nothing either.
    serde_json::from_str::<Value>(line).ok()?;
    let Ids(ids) = serde_json::from_str(line).ok()?;
    let first = ids.first()?.clone().filter(|s| !s.is_empty())?;
    ids.iter()
        .all(|id| id.as_deref() == Some(first.as_str()))
        .then_some(first)
}

/// Reads every non-blank line of a witness file's text, keeping bad lines as errors.
pub fn parse_witness_lines(text: &str) -> Vec<WitnessLine> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| parse_witness_line(i + 1, l.as_bytes()))
        .collect()
}

/// Reads one line of a witness file: `line` is its 1-based number, `bytes` its content
/// without the line ending. `None` when the line is blank. A line that is not valid UTF-8 is
/// kept as a line that is not JSON (`invalid UTF-8`), with no id.
pub fn parse_witness_line(line: usize, bytes: &[u8]) -> Option<WitnessLine> {
    let mut out = WitnessLine::empty();
    parse_witness_line_into(line, bytes, &mut out).then_some(out)
}

impl WitnessLine {
    /// The line as read `by` lines further down its file (it was read in a piece of the file
    /// that starts after `by` lines): its number, and the line its field error names.
    pub(crate) fn renumber(&mut self, by: usize) {
        self.line += by;
        if let Err(ParseError::Field(f)) = &mut self.row
            && let Some(line) = &mut f.line
        {
            *line += by;
        }
    }

    /// A line to read into ([`parse_witness_line_into`]).
    fn empty() -> WitnessLine {
        WitnessLine {
            line: 0,
            witness_id: None,
            remote_minting: false,
            row: Ok(WitnessRow {
                witness_id: String::new(),
                property_id: String::new(),
                property_digest: String::new(),
                fixture_pin: String::new(),
                bound: String::new(),
                seed: 0,
                verdict: Verdict::Pass,
                signature: String::new(),
                runner: Runner::Local,
                freeze_writer: false,
                run_id: None,
                patch_id: None,
                code: None,
                replayed_signature: None,
                rng: None,
                attempt: None,
            }),
        }
    }
}

/// The seed of a witness line, from its bytes alone, when they can tell (printable ASCII
/// without a backslash, `"seed": <integer>`); else `None`. When it says `Some(seed)`, the
/// line is either not a row or a row of that seed: a reader that needs only the rows of some
/// seeds may pass over a line whose seed is not one of them without reading it.
pub fn witness_line_seed(bytes: &[u8]) -> Option<u64> {
    canonical::plain_seed(bytes)
}

/// [`parse_witness_line`] into `out`, reusing its strings where it can: `false` when the line
/// is blank (`out` then holds nothing meaningful).
fn parse_witness_line_into(line: usize, bytes: &[u8], out: &mut WitnessLine) -> bool {
    // The rows a runner writes take the fast paths: the scanner of flat rows first, then
    // the serde reading straight into typed fields; everything else is read exactly.
    if let Ok(row) = &mut out.row
        && canonical::row_into(bytes, row)
    {
        match &mut out.witness_id {
            Some(id) => {
                id.clear();
                id.push_str(&row.witness_id);
            }
            None => out.witness_id = Some(row.witness_id.clone()),
        }
        out.line = line;
        out.remote_minting = row.runner == Runner::Remote && row.freeze_writer;
        return true;
    }
    if let Ok(l) = std::str::from_utf8(bytes)
        && let Some(row) = fast::row(l)
    {
        *out = WitnessLine {
            line,
            witness_id: Some(row.witness_id.clone()),
            remote_minting: row.runner == Runner::Remote && row.freeze_writer,
            row: Ok(row),
        };
        return true;
    }
    match parse_witness_line_exactly(line, bytes) {
        Some(it) => {
            *out = it;
            true
        }
        None => false,
    }
}

/// [`parse_witness_line`] without its fast path: every line through a JSON value.
pub fn parse_witness_line_exactly(line: usize, bytes: &[u8]) -> Option<WitnessLine> {
    let Ok(l) = std::str::from_utf8(bytes) else {
        return Some(WitnessLine {
            line,
            witness_id: None,
            remote_minting: false,
            row: Err(ParseError::NotJson {
                line: 1,
                column: 1,
                message: "invalid UTF-8".to_string(),
            }),
        });
    };
    if l.trim().is_empty() {
        return None;
    }
    let value: Value = match crate::json::parse(l) {
        Ok(v) => v,
        Err(e) => {
            // A row that repeats a key is malformed; name it by its id when a
            // lenient read can tell it.
            // Repeated ids name the row only when they agree; the id is never taken
            // from a last-wins reading.
            let witness_id = match &e {
                ParseError::DuplicateKey { .. } => agreed_id(l),
                _ => None,
            };
            return Some(WitnessLine {
                line,
                witness_id,
                remote_minting: false,
                row: Err(e),
            });
        }
    };
    let witness_id = value
        .get("witness_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let remote_minting = value.get("runner").and_then(Value::as_str) == Some("remote")
        && value.get("freeze_writer").and_then(Value::as_bool) == Some(true);
    let row = WitnessRow::from_value(&value).map_err(|e| match e {
        ParseError::Field(mut f) => {
            f.line = Some(line);
            ParseError::Field(f)
        }
        other => other,
    });
    Some(WitnessLine {
        line,
        witness_id: witness_id.map(str::to_string),
        remote_minting,
        row,
    })
}

/// A line read and its bytes (without the line ending).
pub type LineAndText<'a> = (&'a WitnessLine, &'a [u8]);

/// Reads a witness file one line at a time, in bounded memory (a read buffer of
/// [`WitnessLineReader::BUFFER`] bytes, or one line's when a line is longer), giving the
/// same [`WitnessLine`]s as [`parse_witness_lines`] over the whole file's text: lines end at
/// `\n` (a `\r` before it is dropped), blank lines are skipped and numbered, a line that is
/// not UTF-8 is a line that is not JSON.
///
/// The file is read in big blocks and each line is read where it lies in the buffer (no
/// copy); [`WitnessLineReader::next_ref`] also reuses the previous line's strings, so a
/// stream of rows allocates nothing per row.
///
/// With [`WitnessLineReader::complete_lines_only`], a last line without its `\n` that is not
/// JSON (a torn append) is left out, as [`crate::complete_lines`] leaves it out of the bytes.
pub struct WitnessLineReader<R> {
    reader: R,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// How far `buf[start..]` is known to hold no `\n`.
    scanned: usize,
    eof: bool,
    /// The current line's content within `buf` (without the line ending).
    text: std::ops::Range<usize>,
    current: WitnessLine,
    line: usize,
    bytes: u64,
    complete_only: bool,
    /// The size of the next read: from [`WitnessLineReader::FIRST_READ`], doubled after
    /// each read that fills it, up to `max_block` ([`WitnessLineReader::BUFFER`]; smaller in
    /// tests), so that a small input costs a small buffer.
    block: usize,
    max_block: usize,
}

impl<R: std::io::Read> WitnessLineReader<R> {
    /// The size of a read (and of the buffer, unless a line is longer), once a file has
    /// proved big.
    pub const BUFFER: usize = 1 << 21;
    /// The size of the first read.
    pub const FIRST_READ: usize = 1 << 16;

    /// A reader of the witness file `reader` holds.
    pub fn new(reader: R) -> WitnessLineReader<R> {
        WitnessLineReader {
            reader,
            buf: Vec::new(),
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            text: 0..0,
            current: WitnessLine::empty(),
            line: 0,
            bytes: 0,
            complete_only: false,
            block: Self::FIRST_READ,
            max_block: Self::BUFFER,
        }
    }

    /// Reads of `block` bytes (at least 1) instead of [`WitnessLineReader::BUFFER`].
    #[cfg(test)]
    fn with_block(mut self, block: usize) -> WitnessLineReader<R> {
        self.max_block = block.max(1);
        self.block = self.block.min(self.max_block);
        self
    }

    /// Leave out a torn last line (see the type's docs).
    pub fn complete_lines_only(mut self) -> WitnessLineReader<R> {
        self.complete_only = true;
        self
    }

    /// The next non-blank line, `None` at the end of the input.
    pub fn next_line(&mut self) -> std::io::Result<Option<WitnessLine>> {
        Ok(self.next_ref()?.cloned())
    }

    /// The next non-blank line, `None` at the end of the input, as
    /// [`WitnessLineReader::next_line`] but borrowed (valid until the next call), its
    /// strings reused from line to line.
    pub fn next_ref(&mut self) -> std::io::Result<Option<&WitnessLine>> {
        Ok(self.next_with_text()?.map(|(it, _)| it))
    }

    /// [`WitnessLineReader::next_ref`] with the line's bytes (without the line ending), as
    /// [`WitnessLineReader::text`] gives them.
    pub fn next_with_text(&mut self) -> std::io::Result<Option<(&WitnessLine, &[u8])>> {
        Ok(self.next_unless(|_| false)?.flatten())
    }

    /// The next line's bytes in `buf` (without its `\n`), and whether it ended with one.
    fn raw_line(&mut self) -> std::io::Result<Option<(std::ops::Range<usize>, bool)>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start + self.scanned..self.end]) {
                let at = self.start + self.scanned + i;
                let range = self.start..at;
                self.start = at + 1;
                self.scanned = 0;
                return Ok(Some((range, true)));
            }
            self.scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let range = self.start..self.end;
                self.start = self.end;
                self.scanned = 0;
                return Ok(Some((range, false)));
            }
            // Keep the unread bytes, at the front, and read more after them.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            // Room for a read of `block` bytes after the partial line (the buffer grows only
            // with the longest line).
            if self.buf.len() < self.end + self.block {
                self.buf.resize(self.end + self.block, 0);
            }
            let n = loop {
                match self
                    .reader
                    .read(&mut self.buf[self.end..self.end + self.block])
                {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
            } else if n == self.block {
                self.block = (self.block * 2).min(self.max_block);
            }
            self.end += n;
        }
    }

    /// [`WitnessLineReader::next_with_text`], except that a line whose bytes `skip` refuses
    /// is passed over unread: `Some(None)` (it is counted, numbered and its bytes are
    /// [`WitnessLineReader::text`]). `skip` must refuse only lines that are not blank.
    pub fn next_unless(
        &mut self,
        mut skip: impl FnMut(&[u8]) -> bool,
    ) -> std::io::Result<Option<Option<LineAndText<'_>>>> {
        let skipped = loop {
            let Some((range, complete)) = self.raw_line()? else {
                return Ok(None);
            };
            self.line += 1;
            self.bytes += (range.end - range.start) as u64 + u64::from(complete);
            let Some(text) = line_text(&self.buf, range, complete, self.complete_only) else {
                return Ok(None);
            };
            self.text = text;
            let bytes = &self.buf[self.text.clone()];
            if skip(bytes) {
                break true;
            }
            if parse_witness_line_into(self.line, bytes, &mut self.current) {
                break false;
            }
        };
        if skipped {
            return Ok(Some(None));
        }
        Ok(Some(Some((&self.current, &self.buf[self.text.clone()]))))
    }

    /// The bytes of the line [`WitnessLineReader::next_line`] returned last, without the
    /// line ending.
    pub fn text(&self) -> &[u8] {
        &self.buf[self.text.clone()]
    }

    /// How many bytes were read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }
}

/// The text of the raw line `range` of `buf` (without its `\n`; `complete`: it had one):
/// without a `\r` before the `\n`. `None` for a last line without its `\n` that is not JSON
/// (a torn append) when `complete_only`: the reading ends before it.
fn line_text(
    buf: &[u8],
    range: std::ops::Range<usize>,
    complete: bool,
    complete_only: bool,
) -> Option<std::ops::Range<usize>> {
    let mut end = range.end;
    if complete {
        if end > range.start && buf[end - 1] == b'\r' {
            end -= 1;
        }
    } else if complete_only && serde_json::from_slice::<Value>(&buf[range.clone()]).is_err() {
        return None;
    }
    Some(range.start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str = r#"{"witness_id":"w-local-1","property_id":"order_total_nonneg","property_digest":"dd","fixture_pin":"pp","bound":"total>=0","seed":17,"verdict":"fail","signature":"AssertionError","runner":"local","freeze_writer":false}"#;

    #[test]
    fn reads_the_seed_documents_row() {
        let lines = parse_witness_lines(&format!("{LOCAL}\n\n"));
        assert_eq!(lines.len(), 1);
        let row = lines[0].row.clone().unwrap();
        assert_eq!(row.verdict, Verdict::Fail);
        assert_eq!(row.runner, Runner::Local);
        assert_eq!(
            WitnessRow::from_value(&serde_json::from_str(&row.to_json_line()).unwrap()).unwrap(),
            row
        );
    }

    #[test]
    fn the_rows_a_runner_writes_take_the_fast_path_and_read_the_same() {
        let signed = LOCAL.replace(
            r#""freeze_writer":false"#,
            r#""freeze_writer":false,"run_id":"r1","patch_id":"pr-7","code":"diff:c","sig":"ab""#,
        );
        for line in [LOCAL.to_string(), signed, format!(" {LOCAL}\r")] {
            let fast = fast::row(&line).expect("a runner's row takes the fast path");
            let exact = parse_witness_line_exactly(1, line.as_bytes()).unwrap();
            assert_eq!(Ok(fast), exact.row, "{line}");
        }
        // What the fast path cannot vouch for, it leaves to the exact reading.
        for line in [
            LOCAL.replace(r#""seed":17"#, r#""seed":17,"seed":17"#),
            LOCAL.replace(r#""bound":"total>=0""#, r#""bound":"""#),
            LOCAL.replace(r#""seed":17"#, r#""seed":null"#),
            LOCAL.replace(r#""runner":"local""#, r#""runner":"cloud""#),
            LOCAL.replace(
                r#""freeze_writer":false"#,
                r#""freeze_writer":false,"x":{"a":1,"a":2}"#,
            ),
        ] {
            assert!(fast::row(&line).is_none(), "{line}");
        }
    }

    /// `rng`: absent is `chacha8-v1`; a scheme name is read as written (by the scanner, the
    /// serde fast path and the exact reading alike); anything else present makes the row
    /// malformed, naming the field, on every path.
    #[test]
    fn the_rng_extension_names_the_scheme_and_a_bad_one_is_malformed() {
        let with = |v: &str| {
            LOCAL.replace(
                r#""freeze_writer":false"#,
                &format!(r#""freeze_writer":false,"run_id":"r1","rng":{v}"#),
            )
        };
        let old = parse_witness_lines(LOCAL)[0].row.clone().unwrap();
        assert_eq!((old.rng.as_deref(), old.scheme()), (None, "chacha8-v1"));
        for name in ["chacha8-v1", "chacha8-v2", "chacha8-v9"] {
            let line = with(&format!("\"{name}\""));
            let mut scanned = old.clone();
            assert!(canonical::row_into(line.as_bytes(), &mut scanned), "{line}");
            let exact = parse_witness_line_exactly(1, line.as_bytes()).unwrap().row;
            assert_eq!(Ok(scanned.clone()), exact, "{line}");
            assert_eq!(fast::row(&line).as_ref(), exact.as_ref().ok(), "{line}");
            assert_eq!(
                (scanned.rng.as_deref(), scanned.scheme()),
                (Some(name), name)
            );
        }
        for bad in ["2", "null", "true", "\"\"", "[\"chacha8-v2\"]", "{}"] {
            let line = with(bad);
            let read = parse_witness_lines(&line);
            match &read[0].row {
                Err(ParseError::Field(f)) => assert_eq!(f.field, "rng", "{line}"),
                other => panic!("{line}: {other:?}"),
            }
            assert_eq!(read[0].witness_id.as_deref(), Some("w-local-1"));
        }
    }

    /// `attempt`: absent is not a replay; a replay number is read as written (by the
    /// scanner, the serde fast path and the exact reading alike); anything else present
    /// (0, past `u32`, a float, a string, null) makes the row malformed, naming the field.
    #[test]
    fn the_attempt_extension_numbers_a_replay_and_a_bad_one_is_malformed() {
        let with = |v: &str| {
            LOCAL.replace(
                r#""freeze_writer":false"#,
                &format!(r#""freeze_writer":false,"run_id":"r1","rng":"chacha8-v2","attempt":{v}"#),
            )
        };
        let old = parse_witness_lines(LOCAL)[0].row.clone().unwrap();
        assert_eq!(old.attempt, None);
        for n in [1u32, 20, u32::MAX] {
            let line = with(&n.to_string());
            let mut scanned = old.clone();
            assert!(canonical::row_into(line.as_bytes(), &mut scanned), "{line}");
            let exact = parse_witness_line_exactly(1, line.as_bytes()).unwrap().row;
            assert_eq!(Ok(scanned.clone()), exact, "{line}");
            assert_eq!(fast::row(&line).as_ref(), exact.as_ref().ok(), "{line}");
            assert_eq!(scanned.attempt, Some(n));
            // Written back, the row keeps it.
            assert!(
                scanned
                    .to_json_line()
                    .ends_with(&format!(",\"attempt\":{n}}}"))
            );
        }
        for bad in [
            "0",
            "4294967296",
            "-1",
            "1.0",
            "\"3\"",
            "null",
            "true",
            "[1]",
        ] {
            let line = with(bad);
            let read = parse_witness_lines(&line);
            match &read[0].row {
                Err(ParseError::Field(f)) => assert_eq!(f.field, "attempt", "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_lines_are_kept_with_id_and_line() {
        let missing_sig = LOCAL.replace(r#""signature":"AssertionError","#, "");
        let minting = LOCAL.replace(
            r#""runner":"local","freeze_writer":false"#,
            r#""runner":"remote","freeze_writer":true"#,
        );
        let cloud = LOCAL.replace(r#""runner":"local""#, r#""runner":"cloud""#);
        let float_seed = LOCAL.replace(r#""seed":17"#, r#""seed":17.0"#);
        let text = format!("not json\n{missing_sig}\n{minting}\n{cloud}\n{float_seed}\n");
        let lines = parse_witness_lines(&text);
        assert_eq!(lines.len(), 5);
        assert!(matches!(lines[0].row, Err(ParseError::NotJson { .. })));
        assert_eq!(lines[0].witness_id, None);
        assert_eq!(lines[1].line, 2);
        assert_eq!(lines[1].witness_id.as_deref(), Some("w-local-1"));
        assert!(
            matches!(&lines[1].row, Err(ParseError::Field(f)) if f.field == "signature" && f.line == Some(2))
        );
        assert!(lines[2].remote_minting && lines[2].row.is_ok());
        assert!(matches!(&lines[3].row, Err(ParseError::Field(f)) if f.field == "runner"));
        assert!(matches!(&lines[4].row, Err(ParseError::Field(f)) if f.field == "seed"));
    }
}
