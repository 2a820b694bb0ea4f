//! A read-through cache in front of a store, checked against a plain map.
//!
//! A get answers from the cache, or reads the store and caches what it found; a put writes
//! the store and drops the key's cache entry; a delete removes the key from the store and
//! must drop its cache entry too. The planted bug: the delete forgets the cache, so a key
//! read before its delete is still read after it. The least failing sequence:
//!
//! ```text
//! initial model: {}, 1. Put(0, 0) -> None, 2. Get(0) -> Some(0), 3. Delete(0) -> Some(0),
//! 4. Get(0) -> Some(0), model: {}
//! ```
//!
//! Step 4 must answer `None`. Why this is the least: a stale read needs a cached key (a put,
//! then a get that caches it), then a delete, then the read: four steps; key and value `0`.

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::collections::BTreeMap;

/// The system under test: a store, and a cache of the entries read from it.
#[derive(Debug, Clone)]
pub struct CachedMap {
    store: BTreeMap<u8, u8>,
    cache: BTreeMap<u8, u8>,
    variant: Variant,
}

impl CachedMap {
    /// An empty store, nothing cached.
    pub fn new(variant: Variant) -> CachedMap {
        CachedMap {
            store: BTreeMap::new(),
            cache: BTreeMap::new(),
            variant,
        }
    }

    /// The value of `key`, from the cache when it holds the key.
    pub fn get(&mut self, key: u8) -> Option<u8> {
        if let Some(value) = self.cache.get(&key) {
            return Some(*value);
        }
        let value = *self.store.get(&key)?;
        self.cache.insert(key, value);
        Some(value)
    }

    /// Sets `key` to `value`; the value before.
    pub fn put(&mut self, key: u8, value: u8) -> Option<u8> {
        self.cache.remove(&key);
        self.store.insert(key, value)
    }

    /// Removes `key`; its value.
    pub fn delete(&mut self, key: u8) -> Option<u8> {
        // The planted bug: the cache entry outlives the key.
        if self.variant == Variant::Correct {
            self.cache.remove(&key);
        }
        self.store.remove(&key)
    }
}

/// A command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheOp {
    /// Read a key.
    Get(u8),
    /// Write a key.
    Put(u8, u8),
    /// Delete a key.
    Delete(u8),
}

/// The state machine: a [`CachedMap`] checked against a `BTreeMap` (every reply is an
/// `Option<u8>`: the value read, or the value before).
#[derive(Debug, Clone, Copy)]
pub struct CachedStore {
    variant: Variant,
}

impl StateMachine for CachedStore {
    type Model = BTreeMap<u8, u8>;
    type System = CachedMap;
    type Command = CacheOp;
    type Response = Option<u8>;

    fn init_model(&self, _tc: &mut TestCase) -> BTreeMap<u8, u8> {
        BTreeMap::new()
    }

    fn init_system(&self, _model: &BTreeMap<u8, u8>) -> CachedMap {
        CachedMap::new(self.variant)
    }

    fn command(&self, _model: &BTreeMap<u8, u8>, tc: &mut TestCase) -> Option<CacheOp> {
        let key = |tc: &mut TestCase| tc.draw(&int(0..=3u8));
        Some(match tc.draw(&int(0..=2u8)) {
            0 => CacheOp::Get(key(tc)),
            1 => CacheOp::Put(key(tc), tc.draw(&int(0..=9u8))),
            _ => CacheOp::Delete(key(tc)),
        })
    }

    fn run(&self, map: &mut CachedMap, op: &CacheOp) -> Option<u8> {
        match op {
            CacheOp::Get(key) => map.get(*key),
            CacheOp::Put(key, value) => map.put(*key, *value),
            CacheOp::Delete(key) => map.delete(*key),
        }
    }

    /// A get, a put and a delete all answer the key's value before the command.
    fn postcondition(
        &self,
        model: &BTreeMap<u8, u8>,
        op: &CacheOp,
        reply: &Option<u8>,
    ) -> PropResult {
        let (CacheOp::Get(key) | CacheOp::Put(key, _) | CacheOp::Delete(key)) = op;
        prop_assert_eq!(*reply, model.get(key).copied());
        Ok(())
    }

    fn next(&self, model: &mut BTreeMap<u8, u8>, op: &CacheOp) {
        match op {
            CacheOp::Get(_) => {}
            CacheOp::Put(key, value) => {
                model.insert(*key, *value);
            }
            CacheOp::Delete(key) => {
                model.remove(key);
            }
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Get", "Put", "Delete"]
    }
}

impl Planted for CachedStore {
    const NAME: &'static str = "cached_store";
    const BUG: &'static str = "a delete leaves the key's cache entry behind";
    const MINIMAL: &'static str = "initial model: {}, 1. Put(0, 0) -> None, 2. Get(0) -> Some(0), \
        3. Delete(0) -> Some(0), 4. Get(0) -> Some(0), model: {}";

    fn new(variant: Variant) -> CachedStore {
        CachedStore { variant }
    }
}
