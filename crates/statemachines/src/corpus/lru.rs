//! A least-recently-used cache of two entries, checked against a list in order of use.
//!
//! The cache stamps every entry with the time of its last use and, when full, evicts the
//! entry with the oldest stamp; a put answers the entry it evicted. The planted bug: a get
//! does not refresh the stamp, so the cache evicts the least recently *written* entry. The
//! least failing sequence:
//!
//! ```text
//! initial model: [], 1. Put(0, 0) -> None, 2. Put(1, 0) -> None, 3. Get(0) -> Some(0),
//! 4. Put(2, 0) -> Some((0, 0)), model: [(1, 0), (0, 0)]
//! ```
//!
//! Step 4 must evict `(1, 0)`: key 0 was used last. Why this is the least: the two orders
//! differ only after a get of the older of two entries, and only a put of a third key shows
//! it; keys 0, 1, 0, 2 are the least that do (a get is the first command kind, but a get
//! cannot evict).

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::collections::BTreeMap;
use std::fmt;

/// How many entries the cache holds.
pub const CAPACITY: usize = 2;

/// The system under test: each key's value and the time it was last used.
#[derive(Debug, Clone)]
pub struct StampedCache {
    entries: BTreeMap<u8, (u8, u64)>,
    clock: u64,
    variant: Variant,
}

impl StampedCache {
    /// An empty cache.
    pub fn new(variant: Variant) -> StampedCache {
        StampedCache {
            entries: BTreeMap::new(),
            clock: 0,
            variant,
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The value of `key`, a use of it.
    pub fn get(&mut self, key: u8) -> Option<u8> {
        let now = self.tick();
        let (value, stamp) = self.entries.get_mut(&key)?;
        // The planted bug: a read is not a use.
        if self.variant == Variant::Correct {
            *stamp = now;
        }
        Some(*value)
    }

    /// Sets `key` to `value`, a use of it; the entry evicted to make room.
    pub fn put(&mut self, key: u8, value: u8) -> Option<(u8, u8)> {
        let now = self.tick();
        if let Some(entry) = self.entries.get_mut(&key) {
            *entry = (value, now);
            return None;
        }
        let mut evicted = None;
        if self.entries.len() == CAPACITY {
            let oldest = self.entries.iter().min_by_key(|(_, (_, stamp))| *stamp);
            if let Some((&old, &(old_value, _))) = oldest {
                self.entries.remove(&old);
                evicted = Some((old, old_value));
            }
        }
        self.entries.insert(key, (value, now));
        evicted
    }
}

/// A command (keys 0 to 3, values 0 to 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LruOp {
    /// Read a key.
    Get(u8),
    /// Write a key.
    Put(u8, u8),
}

/// What the cache answers, shown as the value itself (`Put(2, 0) -> Some((1, 0))`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LruReply {
    /// A get's value.
    Got(Option<u8>),
    /// The entry a put evicted.
    Evicted(Option<(u8, u8)>),
}

impl fmt::Debug for LruReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LruReply::Got(value) => value.fmt(f),
            LruReply::Evicted(entry) => entry.fmt(f),
        }
    }
}

/// The model: the entries `(key, value)`, least recently used first.
pub type LruModel = Vec<(u8, u8)>;

/// The state machine: a [`StampedCache`] checked against an [`LruModel`].
#[derive(Debug, Clone, Copy)]
pub struct LruCache {
    variant: Variant,
}

impl LruCache {
    /// What the model says the cache answers to `op`, and the model after it.
    fn step(model: &LruModel, op: LruOp) -> (LruReply, LruModel) {
        let mut after = model.clone();
        let used = |after: &mut LruModel, key: u8| {
            let at = after.iter().position(|(k, _)| *k == key)?;
            Some(after.remove(at))
        };
        match op {
            LruOp::Get(key) => {
                let entry = used(&mut after, key);
                after.extend(entry);
                (LruReply::Got(entry.map(|(_, v)| v)), after)
            }
            LruOp::Put(key, value) => {
                let evicted = match used(&mut after, key) {
                    Some(_) => None,
                    None if after.len() == CAPACITY => Some(after.remove(0)),
                    None => None,
                };
                after.push((key, value));
                (LruReply::Evicted(evicted), after)
            }
        }
    }
}

impl StateMachine for LruCache {
    type Model = LruModel;
    type System = StampedCache;
    type Command = LruOp;
    type Response = LruReply;

    fn init_model(&self, _tc: &mut TestCase) -> LruModel {
        LruModel::new()
    }

    fn init_system(&self, _model: &LruModel) -> StampedCache {
        StampedCache::new(self.variant)
    }

    fn command(&self, _model: &LruModel, tc: &mut TestCase) -> Option<LruOp> {
        let kind = tc.draw(&int(0..=1u8));
        let key = tc.draw(&int(0..=3u8));
        Some(if kind == 0 {
            LruOp::Get(key)
        } else {
            LruOp::Put(key, tc.draw(&int(0..=3u8)))
        })
    }

    fn run(&self, cache: &mut StampedCache, op: &LruOp) -> LruReply {
        match op {
            LruOp::Get(key) => LruReply::Got(cache.get(*key)),
            LruOp::Put(key, value) => LruReply::Evicted(cache.put(*key, *value)),
        }
    }

    fn postcondition(&self, model: &LruModel, op: &LruOp, reply: &LruReply) -> PropResult {
        prop_assert_eq!(*reply, LruCache::step(model, *op).0);
        Ok(())
    }

    fn next(&self, model: &mut LruModel, op: &LruOp) {
        *model = LruCache::step(model, *op).1;
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Get", "Put"]
    }
}

impl Planted for LruCache {
    const NAME: &'static str = "lru_cache";
    const BUG: &'static str = "a read does not refresh the entry: the wrong entry is evicted";
    const MINIMAL: &'static str = "initial model: [], 1. Put(0, 0) -> None, 2. Put(1, 0) -> None, \
        3. Get(0) -> Some(0), 4. Put(2, 0) -> Some((0, 0)), model: [(1, 0), (0, 0)]";

    fn new(variant: Variant) -> LruCache {
        LruCache { variant }
    }
}
