//! A key-value store that versions every key, checked against a map of `(value, version)`.
//!
//! Every put answers the key's new version: 1 when the key is created, one more at each put
//! after. A delete ends the key's history, so a put after it creates the key again at
//! version 1 (etcd's `version` field works so). The planted bug: the store keeps its version
//! counters apart from the values, and a delete removes the value but forgets the counter.
//! The least failing sequence:
//!
//! ```text
//! initial model: {}, 1. Put(0, 0) -> 1, 2. Delete(0) -> true, 3. Put(0, 0) -> 2, model: {}
//! ```
//!
//! Step 3 must answer version 1. Why this is the least: a wrong version needs a put of a key
//! that was deleted, so a put, a delete and a put, three steps at the least; every key and
//! value is `0`, and no sequence of three steps with smaller choices fails (the commands are
//! drawn in the order get, put, delete, so a get in any place of the three would need a
//! fourth step).

use crate::Variant;
use crate::corpus::Planted;
use seedledger_runner::prelude::*;
use seedledger_runner::stateful::StateMachine;
use std::collections::BTreeMap;
use std::fmt;

/// A key.
pub type Key = u8;
/// A value.
pub type Value = u8;

/// The system under test: values and, apart from them, each key's version counter.
#[derive(Debug, Clone)]
pub struct VersionedStore {
    values: BTreeMap<Key, Value>,
    versions: BTreeMap<Key, u64>,
    variant: Variant,
}

impl VersionedStore {
    /// An empty store.
    pub fn new(variant: Variant) -> VersionedStore {
        VersionedStore {
            values: BTreeMap::new(),
            versions: BTreeMap::new(),
            variant,
        }
    }

    /// Sets `key` to `value`; the key's new version.
    pub fn put(&mut self, key: Key, value: Value) -> u64 {
        self.values.insert(key, value);
        let version = self.versions.entry(key).or_insert(0);
        *version += 1;
        *version
    }

    /// The value of `key` and its version.
    pub fn get(&self, key: Key) -> Option<(Value, u64)> {
        let value = *self.values.get(&key)?;
        Some((value, self.versions.get(&key).copied().unwrap_or(0)))
    }

    /// Removes `key`; whether it was there.
    pub fn delete(&mut self, key: Key) -> bool {
        let existed = self.values.remove(&key).is_some();
        // The planted bug: the version counter outlives the key.
        if self.variant == Variant::Correct {
            self.versions.remove(&key);
        }
        existed
    }
}

/// A command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvOp {
    /// Read a key.
    Get(Key),
    /// Write a key.
    Put(Key, Value),
    /// Delete a key.
    Delete(Key),
}

/// What the store answers, shown as the value itself (`Put(0, 1) -> 2`).
#[derive(Clone, PartialEq, Eq)]
pub enum KvReply {
    /// A get's value and version.
    Got(Option<(Value, u64)>),
    /// A put's new version.
    Version(u64),
    /// Whether a delete found the key.
    Deleted(bool),
}

impl fmt::Debug for KvReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KvReply::Got(r) => r.fmt(f),
            KvReply::Version(v) => v.fmt(f),
            KvReply::Deleted(b) => b.fmt(f),
        }
    }
}

/// The model: each key's value and version.
pub type KvModel = BTreeMap<Key, (Value, u64)>;

/// The state machine: a [`VersionedStore`] checked against a [`KvModel`].
#[derive(Debug, Clone, Copy)]
pub struct VersionedKv {
    variant: Variant,
}

impl VersionedKv {
    /// The machine over the `variant` store.
    pub fn new(variant: Variant) -> VersionedKv {
        VersionedKv { variant }
    }

    /// What the model says the store answers to `op`.
    fn expected(model: &KvModel, op: &KvOp) -> KvReply {
        match op {
            KvOp::Get(key) => KvReply::Got(model.get(key).copied()),
            KvOp::Put(key, _) => KvReply::Version(model.get(key).map_or(1, |(_, v)| v + 1)),
            KvOp::Delete(key) => KvReply::Deleted(model.contains_key(key)),
        }
    }
}

impl StateMachine for VersionedKv {
    type Model = KvModel;
    type System = VersionedStore;
    type Command = KvOp;
    type Response = KvReply;

    fn init_model(&self, _tc: &mut TestCase) -> KvModel {
        KvModel::new()
    }

    fn init_system(&self, _model: &KvModel) -> VersionedStore {
        VersionedStore::new(self.variant)
    }

    /// Four keys, so that keys come back; ten values.
    fn command(&self, _model: &KvModel, tc: &mut TestCase) -> Option<KvOp> {
        let key = |tc: &mut TestCase| tc.draw(&int(0..=3u8));
        Some(match tc.draw(&int(0..=2u8)) {
            0 => KvOp::Get(key(tc)),
            1 => KvOp::Put(key(tc), tc.draw(&int(0..=9u8))),
            _ => KvOp::Delete(key(tc)),
        })
    }

    fn run(&self, store: &mut VersionedStore, op: &KvOp) -> KvReply {
        match op {
            KvOp::Get(key) => KvReply::Got(store.get(*key)),
            KvOp::Put(key, value) => KvReply::Version(store.put(*key, *value)),
            KvOp::Delete(key) => KvReply::Deleted(store.delete(*key)),
        }
    }

    fn postcondition(&self, model: &KvModel, op: &KvOp, reply: &KvReply) -> PropResult {
        prop_assert_eq!(*reply, VersionedKv::expected(model, op));
        Ok(())
    }

    fn next(&self, model: &mut KvModel, op: &KvOp) {
        match op {
            KvOp::Get(_) => {}
            KvOp::Put(key, value) => {
                let version = model.get(key).map_or(1, |(_, v)| v + 1);
                model.insert(*key, (*value, version));
            }
            KvOp::Delete(key) => {
                model.remove(key);
            }
        }
    }

    fn command_names(&self) -> &'static [&'static str] {
        &["Get", "Put", "Delete"]
    }
}

impl Planted for VersionedKv {
    const NAME: &'static str = "versioned_kv";
    const BUG: &'static str = "a deleted key keeps its version";
    const MINIMAL: &'static str =
        "initial model: {}, 1. Put(0, 0) -> 1, 2. Delete(0) -> true, 3. Put(0, 0) -> 2, model: {}";

    fn new(variant: Variant) -> VersionedKv {
        VersionedKv::new(variant)
    }
}
