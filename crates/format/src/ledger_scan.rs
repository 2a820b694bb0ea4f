//! A receipt's decision fields read as a stream, for a gate that streams: the seed lists
//! are never held. Each list is summarised as it is read — its length and a SHA-256 per block
//! of [`LedgerScan::BLOCK`] seeds (two lists are equal exactly when their lengths and block
//! hashes are, short of a SHA-256 collision) — and a second read can capture one block of
//! both lists (where they first differ) or say whether a seed is attempted.
//!
//! Only a receipt that [`LedgerView`](crate::LedgerView) would read without complaint is
//! scanned: UTF-8, JSON that `serde_json` reads, no repeated key at any depth, an object,
//! every decision field well formed. Anything else is [`NotScanned`], and the caller reads the
//! file exactly instead (`LedgerView::parse`): every error and every `incomplete_fields`
//! detail comes from that one exact reading, word for word.

use crate::fields::Fields;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fmt;
use std::io::Read;

/// The decision fields of a receipt, with its seed lists summarised (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerScan {
    /// `planned_seeds`, summarised.
    pub planned_seeds: SeedList,
    /// `attempted_seeds`, summarised (and read as [`Wanted`] asks).
    pub attempted_seeds: SeedList,
    /// `stopped_early`.
    pub stopped_early: bool,
    /// `shrink_stable`.
    pub shrink_stable: bool,
    /// `oracle_source`, any non-empty string.
    pub oracle_source: String,
    /// `fixture_hash`, any non-empty string.
    pub fixture_hash: String,
    /// `failing_seed`.
    pub failing_seed: Option<u64>,
    /// How many `failing_seeds` the receipt lists (an extension), when it is a list of seeds.
    pub failing_seeds: Option<u64>,
    /// Their hash ([`SeedsHasher`]), when it is.
    pub failing_seeds_hash: Option<[u8; 32]>,
    /// `verdicts`, when asked for ([`Wanted::keep_verdicts`]) and it is a string.
    pub verdicts: Option<String>,
    /// Every other top-level member, read whole (they are small: extensions such as
    /// `patch_id`, `run_id`, `failure_modes`); `verdicts` is left out.
    pub others: Map<String, Value>,
    /// What stands in for the members left out (`failing_seeds`, `verdicts`) in
    /// [`LedgerScan::receipt_without_lists`]: an empty list or string where the receipt has
    /// a well-typed one, the value itself (`null`, a number, ...) where it does not.
    left_out: Map<String, Value>,
}

/// One seed list, summarised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeedList {
    /// How many seeds the list holds.
    pub len: u64,
    /// SHA-256 of each block of [`LedgerScan::BLOCK`] seeds (as 8 little-endian bytes each).
    pub blocks: Vec<[u8; 32]>,
    /// The seeds of the block asked for ([`Wanted::block`]), when there is one.
    pub captured: Vec<u64>,
    /// Whether the seed asked for ([`Wanted::member`]) is in the list.
    pub contains: bool,
    /// SHA-256 of the whole list, as [`SeedsHasher`] computes it.
    pub hash: [u8; 32],
    /// The list read beside the receipt's `verdicts` ([`Wanted::verdicts`]).
    pub judged: Option<Judged>,
    /// The hash ([`SeedsHasher`]) of its first [`Wanted::prefix`] seeds — of those with a
    /// verdict, when read beside `verdicts` — when it has that many.
    pub prefix_hash: Option<[u8; 32]>,
    /// The first seed, when the list is not empty and each seed is the one before plus one
    /// (a plan of `--cases N` or `a..=b`).
    pub consecutive_from: Option<u64>,
    /// With [`Wanted::parts`] and [`Wanted::prefix`]: the first `prefix` seeds with a
    /// verdict (every seed, read without `verdicts`) split by part, by seed alone (each
    /// hashed as a pass, `.`).
    pub prefix_parts: Option<JudgedParts>,
}

/// `attempted_seeds` read beside `verdicts` (one character per attempted seed): what a
/// receipt says its run's witness rows are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Judged {
    /// The seeds `verdicts` marks `d` (discarded: no row), sorted.
    pub discarded: Vec<u64>,
    /// The seeds with a verdict (`.` or `F`), in order, hashed with their verdict by
    /// [`JudgedHasher`], and how many there are.
    pub hash: [u8; 32],
    /// How many seeds have a verdict.
    pub count: u64,
    /// `verdicts` holds a character that is none of `.`, `F` and `d`, or is shorter than
    /// the list.
    pub bad: bool,
    /// The judged seeds split by the part of a whole plan each falls in
    /// ([`Wanted::parts`]), for a merged receipt.
    pub parts: Option<JudgedParts>,
}

/// A whole consecutive plan (`first`, `first + 1`, ... `len` seeds) split in parts
/// ([`crate::Partition::part_of`]): a merged receipt's judged seeds read part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanParts {
    /// How the plan is split.
    pub kind: crate::PartitionKind,
    /// The number of parts.
    pub total: u64,
    /// The plan's first seed.
    pub first: u64,
    /// How many seeds the plan holds.
    pub len: u64,
}

impl PlanParts {
    /// The position of `seed` in the plan, when the plan holds it.
    pub fn position(&self, seed: u64) -> Option<u64> {
        seed.checked_sub(self.first).filter(|&d| d < self.len)
    }

    /// The part (from 1) of the seed at `position`.
    pub fn part_of(&self, position: u64, seed: u64) -> u64 {
        crate::Partition::part_of(self.kind, self.total, position as usize, seed)
    }
}

/// A merged receipt's judged seeds, part by part: what its parts' rows must be.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JudgedParts {
    /// Per part (from 1) that holds judged seeds: how many, and their hash with their
    /// verdicts ([`JudgedHasher`]) in order.
    pub by_part: std::collections::BTreeMap<u64, (u64, [u8; 32])>,
    /// Every judged seed is in the plan, each after the one before in plan order.
    pub in_plan_order: bool,
    /// The seeds `verdicts` marks `F`, in order: how many and their hash ([`SeedsHasher`]).
    pub failing: (u64, [u8; 32]),
    /// The first seed `verdicts` marks `F`.
    pub first_failing: Option<u64>,
}

/// The hash of a sequence of seeds, each with a verdict character (`.` pass, `F` fail): a
/// receipt's judged seeds and its run's rows hash alike when they agree.
#[derive(Debug, Clone, Default)]
pub struct JudgedHasher(Sha256);

impl JudgedHasher {
    /// Adds a seed with its verdict character.
    pub fn push(&mut self, seed: u64, verdict: u8) {
        self.0.update(seed.to_le_bytes());
        self.0.update([verdict]);
    }
    /// The hash of the seeds pushed.
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// The hash of a sequence of seeds (8 little-endian bytes each).
#[derive(Debug, Clone, Default)]
pub struct SeedsHasher(Sha256);

impl SeedsHasher {
    /// Adds a seed.
    pub fn push(&mut self, seed: u64) {
        self.0.update(seed.to_le_bytes());
    }
    /// The hash of the seeds pushed.
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// What a read should capture besides the summaries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wanted {
    /// Capture this block of both seed lists.
    pub block: Option<u64>,
    /// Say whether `attempted_seeds` holds this seed.
    pub member: Option<u64>,
    /// Keep `verdicts` ([`LedgerScan::verdicts`]): one byte per attempted seed.
    pub keep_verdicts: bool,
    /// Read `attempted_seeds` beside these verdicts (kept by an earlier read):
    /// [`SeedList::judged`].
    pub verdicts: Option<String>,
    /// Hash the first this many seeds of `attempted_seeds`: [`SeedList::prefix_hash`].
    pub prefix: Option<u64>,
    /// With `verdicts`: split the judged seeds by part ([`Judged::parts`]); with `prefix`
    /// instead, the first `prefix` judged seeds (with or without `verdicts`) by seed alone
    /// ([`SeedList::prefix_parts`]).
    pub parts: Option<PlanParts>,
}

/// The receipt cannot be scanned: read it the exact way instead (see the module docs). Also
/// an I/O error while reading.
#[derive(Debug)]
pub enum NotScanned {
    /// Reading failed.
    Io(std::io::Error),
    /// Not one of the receipts a scan reads; the reason is for tests and notes only.
    ReadExactly(String),
}

impl fmt::Display for NotScanned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotScanned::Io(e) => write!(f, "{e}"),
            NotScanned::ReadExactly(why) => write!(f, "not scanned: {why}"),
        }
    }
}

impl LedgerScan {
    /// Seeds per block.
    pub const BLOCK: u64 = 4096;

    /// The receipt as [`crate::Receipt::parse`] reads it, with `planned_seeds`,
    /// `attempted_seeds` and `failing_seeds` empty and `verdicts` an empty string: `Ok`
    /// exactly when [`crate::Receipt::parse`] over the whole text is (the lists left out are
    /// well typed or stand in as what they are). Errors name no line.
    pub fn receipt_without_lists(&self) -> Result<crate::Receipt, crate::ParseError> {
        let mut value = self.others.clone();
        value.insert("planned_seeds".into(), Value::Array(Vec::new()));
        value.insert("attempted_seeds".into(), Value::Array(Vec::new()));
        value.extend(self.left_out.clone());
        crate::Receipt::from_json(&Value::Object(value), None)
    }

    /// The largest receipt a caller should scan from memory ([`LedgerScan::read_bytes`])
    /// rather than from a reader: a receipt of up to about two million seeds of seven
    /// digits, or 700,000 of twenty.
    pub const IN_MEMORY: u64 = 1 << 25;

    /// [`LedgerScan::read`] over a receipt's bytes held in memory: the same scan, read several
    /// times faster (a reader is parsed a byte at a time).
    pub fn read_bytes(bytes: &[u8], wanted: Wanted) -> Result<LedgerScan, NotScanned> {
        if std::str::from_utf8(bytes).is_err() {
            return Err(NotScanned::ReadExactly("not UTF-8".to_string()));
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let top = de::Deserializer::deserialize_any(&mut de, TopVisitor { wanted: &wanted })
            .and_then(|top| de.end().map(|()| top))
            .map_err(|e| NotScanned::ReadExactly(e.to_string()))?;
        top.into_scan()
    }

    /// Scans a receipt's bytes from `reader` (buffer it: it is read in small pieces).
    pub fn read<R: Read>(reader: R, wanted: Wanted) -> Result<LedgerScan, NotScanned> {
        let wanted = &wanted;
        let mut checked = Utf8Check::new(reader);
        let parsed = {
            let buffered = std::io::BufReader::with_capacity(1 << 16, &mut checked);
            let mut de = serde_json::Deserializer::from_reader(buffered);
            let top = de::Deserializer::deserialize_any(&mut de, TopVisitor { wanted });
            top.and_then(|top| de.end().map(|()| top))
        };
        if let Some(e) = checked.io_error.take() {
            return Err(NotScanned::Io(e));
        }
        if !checked.finish() {
            return Err(NotScanned::ReadExactly("not UTF-8".to_string()));
        }
        let top = parsed.map_err(|e| NotScanned::ReadExactly(e.to_string()))?;
        top.into_scan()
    }
}

/// What the top-level object held.
struct Top {
    planned: Option<SeedList>,
    attempted: Option<SeedList>,
    failing_seeds: Option<(u64, [u8; 32])>,
    verdicts: Option<String>,
    others: Map<String, Value>,
    left_out: Map<String, Value>,
}

impl Top {
    fn into_scan(self) -> Result<LedgerScan, NotScanned> {
        let bad = |what: &str| NotScanned::ReadExactly(what.to_string());
        let planned_seeds = self.planned.ok_or_else(|| bad("planned_seeds"))?;
        let attempted_seeds = self.attempted.ok_or_else(|| bad("attempted_seeds"))?;
        let value = Value::Object(self.others);
        let f = Fields::of(&value).map_err(|e| bad(&e.to_string()))?;
        let stopped_early = f.flag("stopped_early").map_err(|e| bad(&e.to_string()))?;
        let shrink_stable = f.flag("shrink_stable").map_err(|e| bad(&e.to_string()))?;
        let oracle_source = f.text("oracle_source").map_err(|e| bad(&e.to_string()))?;
        let fixture_hash = f.text("fixture_hash").map_err(|e| bad(&e.to_string()))?;
        let failing_seed = f
            .optional_seed("failing_seed")
            .map_err(|e| bad(&e.to_string()))?;
        let (oracle_source, fixture_hash) = (oracle_source.to_string(), fixture_hash.to_string());
        let Value::Object(others) = value else {
            return Err(bad("not an object"));
        };
        Ok(LedgerScan {
            planned_seeds,
            attempted_seeds,
            stopped_early,
            shrink_stable,
            oracle_source,
            fixture_hash,
            failing_seed,
            failing_seeds: self.failing_seeds.map(|(n, _)| n),
            failing_seeds_hash: self.failing_seeds.map(|(_, h)| h),
            verdicts: self.verdicts,
            others,
            left_out: self.left_out,
        })
    }
}

struct TopVisitor<'w> {
    wanted: &'w Wanted,
}

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a receipt (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top {
            planned: None,
            attempted: None,
            failing_seeds: None,
            verdicts: None,
            others: Map::new(),
            left_out: Map::new(),
        };
        let mut keys: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
            }
            match key.as_str() {
                "planned_seeds" => {
                    let wanted = ListWanted {
                        block: self.wanted.block,
                        member: None,
                        verdicts: None,
                        prefix: None,
                        parts: None,
                    };
                    top.planned = Some(map.next_value_seed(wanted)?);
                }
                "attempted_seeds" => {
                    let wanted = ListWanted {
                        block: self.wanted.block,
                        member: self.wanted.member,
                        verdicts: self.wanted.verdicts.as_deref().map(str::as_bytes),
                        prefix: self.wanted.prefix,
                        parts: self.wanted.parts,
                    };
                    top.attempted = Some(map.next_value_seed(wanted)?);
                }
                "failing_seeds" => {
                    let list = map.next_value_seed(OptionalList)?;
                    top.failing_seeds = list;
                    let stand_in = match list {
                        Some(_) => Value::Array(Vec::new()),
                        None => Value::Bool(false),
                    };
                    top.left_out.insert(key, stand_in);
                }
                "verdicts" => {
                    let (stand_in, kept) = map.next_value_seed(Unchecked {
                        keep: self.wanted.keep_verdicts,
                    })?;
                    top.verdicts = kept;
                    top.left_out.insert(key, stand_in);
                }
                _ => {
                    let crate::json::Unique(v) = map.next_value()?;
                    top.others.insert(key, v);
                }
            }
        }
        Ok(top)
    }
}

/// A seed list's value: an array of seeds, or an error (the caller then reads exactly).
struct ListWanted<'v> {
    block: Option<u64>,
    member: Option<u64>,
    verdicts: Option<&'v [u8]>,
    prefix: Option<u64>,
    parts: Option<PlanParts>,
}

impl<'de> DeserializeSeed<'de> for ListWanted<'_> {
    type Value = SeedList;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<SeedList, D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListWanted<'_> {
    type Value = SeedList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of seeds")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SeedList, A::Error> {
        let mut reading = ListReading::new(self);
        while let Some(seed) = seq.next_element::<u64>()? {
            reading.push(seed);
        }
        Ok(reading.finish())
    }
}

/// One seed list as it is read, seed by seed ([`ListReading::push`]): the summaries so far.
struct ListReading<'v> {
    wanted: ListWanted<'v>,
    list: SeedList,
    /// The hash of the block being read, and how many of its seeds are in.
    block: Sha256,
    in_block: u64,
    whole: SeedsHasher,
    judged: Option<(Judged, JudgedHasher)>,
    /// The prefix hashed so far, and how many seeds it holds.
    prefix: (SeedsHasher, u64),
    split: Option<PartSplit>,
    consecutive: bool,
}

/// The judged seeds split by part as they are read ([`Wanted::parts`]).
struct PartSplit {
    plan: PlanParts,
    /// Per part: how many judged seeds and their hash.
    by_part: std::collections::BTreeMap<u64, (u64, JudgedHasher)>,
    parts: JudgedParts,
    /// The last judged seed's position in the plan.
    last: Option<u64>,
    failing: SeedsHasher,
    /// How many judged seeds were taken (a prefix takes at most that many).
    taken: u64,
}

impl<'v> ListReading<'v> {
    fn new(wanted: ListWanted<'v>) -> ListReading<'v> {
        let mut list = SeedList::default();
        if wanted.prefix == Some(0) {
            list.prefix_hash = Some(SeedsHasher::default().finish());
        }
        let split_wanted = wanted.verdicts.is_some() || wanted.prefix.is_some();
        let split = wanted.parts.filter(|_| split_wanted).map(|plan| PartSplit {
            plan,
            by_part: std::collections::BTreeMap::new(),
            parts: JudgedParts {
                in_plan_order: true,
                ..JudgedParts::default()
            },
            last: None,
            failing: SeedsHasher::default(),
            taken: 0,
        });
        ListReading {
            judged: wanted
                .verdicts
                .map(|_| (Judged::default(), JudgedHasher::default())),
            wanted,
            list,
            block: Sha256::new(),
            in_block: 0,
            whole: SeedsHasher::default(),
            prefix: (SeedsHasher::default(), 0),
            split,
            consecutive: true,
        }
    }

    /// Takes the list's next seed into every summary.
    #[inline]
    fn push(&mut self, seed: u64) {
        let list = &mut self.list;
        if let Some(first) = list.consecutive_from {
            self.consecutive &= first.checked_add(list.len) == Some(seed);
        } else if list.len == 0 {
            list.consecutive_from = Some(seed);
        }
        self.block.update(seed.to_le_bytes());
        self.whole.push(seed);
        let verdict = self
            .wanted
            .verdicts
            .map(|v| v.get(list.len as usize).copied());
        let counts = match verdict {
            Some(c) => matches!(c, Some(b'.' | b'F')),
            None => true,
        };
        if let Some(n) = self.wanted.prefix
            && counts
            && self.prefix.1 < n
        {
            self.prefix.0.push(seed);
            self.prefix.1 += 1;
            if self.prefix.1 == n {
                list.prefix_hash = Some(std::mem::take(&mut self.prefix.0).finish());
            }
        }
        if counts && let Some(split) = &mut self.split {
            split.push(seed, verdict.flatten().unwrap_or(b'.'), self.wanted.prefix);
        }
        if let (Some(c), Some((j, h))) = (verdict, &mut self.judged) {
            match c {
                Some(b'd') => j.discarded.push(seed),
                Some(c @ (b'.' | b'F')) => {
                    h.push(seed, c);
                    j.count += 1;
                }
                _ => j.bad = true,
            }
        }
        if self.wanted.block == Some(list.len / LedgerScan::BLOCK) {
            list.captured.push(seed);
        }
        if self.wanted.member == Some(seed) {
            list.contains = true;
        }
        list.len += 1;
        self.in_block += 1;
        if self.in_block == LedgerScan::BLOCK {
            list.blocks.push(self.block.finalize_reset().into());
            self.in_block = 0;
        }
    }

    /// The list's summaries, once every seed is read.
    fn finish(self) -> SeedList {
        let mut list = self.list;
        if self.in_block > 0 {
            list.blocks.push(self.block.finalize().into());
        }
        list.hash = self.whole.finish();
        if !self.consecutive {
            list.consecutive_from = None;
        }
        let split = self.split.map(PartSplit::finish);
        let mut split = match self.wanted.prefix {
            Some(_) => {
                list.prefix_parts = split;
                None
            }
            None => split,
        };
        if let Some((mut j, h)) = self.judged {
            j.hash = h.finish();
            j.parts = split.take();
            j.discarded.sort_unstable();
            list.judged = Some(j);
        }
        list
    }
}

impl PartSplit {
    /// Takes a judged seed (without verdicts: every seed) of verdict `c`: all of them with
    /// their verdicts, or, with a prefix wanted, the first that many by seed alone.
    #[inline]
    fn push(&mut self, seed: u64, c: u8, prefix: Option<u64>) {
        if prefix.is_some_and(|n| self.taken >= n) {
            return;
        }
        self.taken += 1;
        match self.plan.position(seed) {
            Some(at) if self.last.is_none_or(|l| l < at) => {
                self.last = Some(at);
                let part = self.by_part.entry(self.plan.part_of(at, seed)).or_default();
                part.0 += 1;
                part.1.push(seed, if prefix.is_some() { b'.' } else { c });
            }
            _ => self.parts.in_plan_order = false,
        }
        if c == b'F' {
            self.failing.push(seed);
            self.parts.failing.0 += 1;
            self.parts.first_failing.get_or_insert(seed);
        }
    }

    fn finish(self) -> JudgedParts {
        let mut parts = self.parts;
        parts.by_part = self
            .by_part
            .into_iter()
            .map(|(part, (n, h))| (part, (n, h.finish())))
            .collect();
        parts.failing.1 = self.failing.finish();
        parts
    }
}

/// `failing_seeds`: its length when it is a list of seeds, else `None` (whatever it is, read
/// with duplicate keys refused).
struct OptionalList;

impl<'de> DeserializeSeed<'de> for OptionalList {
    type Value = Option<(u64, [u8; 32])>;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OptionalList {
    type Value = Option<(u64, [u8; 32])>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut n = 0u64;
        let mut all_seeds = true;
        let mut hash = SeedsHasher::default();
        while let Some(it) = seq.next_element::<crate::json::Unique>()? {
            match crate::seed::seed_from_json(&it.0) {
                Some(seed) => hash.push(seed),
                None => all_seeds = false,
            }
            n += 1;
        }
        Ok(all_seeds.then(|| (n, hash.finish())))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        crate::json::UniqueVisitor.visit_map(map).map(|_| None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// `verdicts`, read and dropped: a string is not kept (one character per attempted seed);
/// anything else is read with duplicate keys refused. Returns what stands in for it: an
/// empty string for a string, `null` for `null`, `false` for anything else.
struct Unchecked {
    keep: bool,
}

impl<'de> DeserializeSeed<'de> for Unchecked {
    type Value = (Value, Option<String>);
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unchecked {
    type Value = (Value, Option<String>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        crate::json::UniqueVisitor
            .visit_seq(seq)
            .map(|_| (Value::Bool(false), None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        crate::json::UniqueVisitor
            .visit_map(map)
            .map(|_| (Value::Bool(false), None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(false), None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok((Value::Bool(false), None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok((Value::Bool(false), None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok((Value::Bool(false), None))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok((
            Value::String(String::new()),
            self.keep.then(|| v.to_string()),
        ))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, None))
    }
}

/// A reader that checks that the bytes passing through are UTF-8.
struct Utf8Check<R> {
    inner: R,
    /// The bytes of a character cut by the end of a read, carried to the next.
    carry: Vec<u8>,
    valid: bool,
    io_error: Option<std::io::Error>,
}

impl<R: Read> Utf8Check<R> {
    fn new(inner: R) -> Utf8Check<R> {
        Utf8Check {
            inner,
            carry: Vec::new(),
            valid: true,
            io_error: None,
        }
    }

    /// Reads what is left (a parse may stop early) and says whether every byte was UTF-8.
    fn finish(&mut self) -> bool {
        let mut sink = [0u8; 1 << 14];
        while self.valid {
            match self.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        self.valid && self.carry.is_empty()
    }

    fn check(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        // Complete the character the previous read cut.
        while !self.carry.is_empty() && !rest.is_empty() {
            self.carry.push(rest[0]);
            rest = &rest[1..];
            match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.clear(),
                Err(e) if e.error_len().is_some() => {
                    self.valid = false;
                    return;
                }
                Err(_) => {}
            }
        }
        match std::str::from_utf8(rest) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                self.carry.extend_from_slice(&rest[e.valid_up_to()..]);
            }
            Err(_) => self.valid = false,
        }
    }
}

impl<R: Read> Read for Utf8Check<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.check(&buf[..n]);
                Ok(n)
            }
            Err(e) => {
                let kind = e.kind();
                self.io_error = Some(e);
                Err(std::io::Error::from(kind))
            }
        }
    }
}

#[cfg(test)]
mod tests;
