//! The shrinker's cache: a trie of every choice prefix a run consumed, so that no candidate
//! runs twice and most hopeless candidates never run at all.
//!
//! A run of a deterministic property reads a prefix of its candidate and then finishes; any
//! other candidate with the same prefix would read the same choices and finish the same
//! way. So a run is stored under the choices it *consumed*, and a lookup walks the candidate
//! down the trie: meeting a finished node gives that run's status; ending on a node that
//! some run read past means the candidate would run out of choices (an overrun).
//!
//! Under flaky judging (`Judging::Flaky`) a cached "fails with the signature" is a fact (the
//! input can fail), while a cached "passes" is a judgement after up to `r` runs, wrong with
//! a small probability. Both stand for the rest of the pass (running the candidate again
//! would repeat the same judgement at the same cost), but never beyond it: every pass builds
//! its own cache, so the two passes of a shrink judge independently, and a miss shows up as
//! two passes that disagree (`shrink_stable: false`), never as one wrong answer both share.

use super::Status;

const NONE: u32 = u32::MAX;

/// More nodes than this and the cache stops growing (lookups keep working).
const MAX_NODES: usize = 1 << 22;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Nothing finished here (runs may have read past it).
    Open,
    /// A run read every choice up to here and asked for more.
    WantedMore,
    /// A run finished after reading exactly the choices up to here.
    Done(Status),
}

#[derive(Debug, Clone, Copy)]
struct Node {
    value: u64,
    first_child: u32,
    next_sibling: u32,
    known: Known,
}

/// A trie keyed by choice sequences.
#[derive(Debug)]
pub(super) struct Cache {
    nodes: Vec<Node>,
}

impl Cache {
    pub(super) fn new() -> Cache {
        Cache {
            nodes: vec![Node {
                value: 0,
                first_child: NONE,
                next_sibling: NONE,
                known: Known::Open,
            }],
        }
    }

    fn child(&self, node: usize, value: u64) -> Option<usize> {
        let mut at = self.nodes[node].first_child;
        while at != NONE {
            let n = &self.nodes[at as usize];
            if n.value == value {
                return Some(at as usize);
            }
            at = n.next_sibling;
        }
        None
    }

    /// The status `candidate` would have, when earlier runs determine it.
    pub(super) fn lookup(&self, candidate: &[u64]) -> Option<Status> {
        let mut node = 0;
        for &v in candidate {
            if let Known::Done(status) = self.nodes[node].known {
                return Some(status);
            }
            node = self.child(node, v)?;
        }
        let n = &self.nodes[node];
        match n.known {
            Known::Done(status) => Some(status),
            Known::WantedMore => Some(Status::Overrun),
            Known::Open if n.first_child != NONE => Some(Status::Overrun),
            Known::Open => None,
        }
    }

    /// Records that a run which consumed exactly `path` finished with `status`.
    pub(super) fn finished(&mut self, path: &[u64], status: Status) {
        if let Some(node) = self.path(path) {
            self.nodes[node].known = Known::Done(status);
        }
    }

    /// Records that a run read all of `path` and asked for more.
    pub(super) fn wanted_more(&mut self, path: &[u64]) {
        if let Some(node) = self.path(path)
            && self.nodes[node].known == Known::Open
        {
            self.nodes[node].known = Known::WantedMore;
        }
    }

    /// The node for `path`, created as needed (None once the cache is full).
    fn path(&mut self, path: &[u64]) -> Option<usize> {
        let mut node = 0;
        for &v in path {
            node = match self.child(node, v) {
                Some(c) => c,
                None => {
                    if self.nodes.len() >= MAX_NODES {
                        return None;
                    }
                    let id = self.nodes.len() as u32;
                    let first = self.nodes[node].first_child;
                    self.nodes.push(Node {
                        value: v,
                        first_child: NONE,
                        next_sibling: first,
                        known: Known::Open,
                    });
                    self.nodes[node].first_child = id;
                    id as usize
                }
            };
        }
        Some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_prefixes_answer_longer_candidates() {
        let mut cache = Cache::new();
        assert_eq!(cache.lookup(&[1, 2, 3]), None);
        cache.finished(&[1, 2], Status::Interesting);
        assert_eq!(cache.lookup(&[1, 2]), Some(Status::Interesting));
        assert_eq!(cache.lookup(&[1, 2, 3, 4]), Some(Status::Interesting));
        // A strict prefix of a consumed sequence would run out of choices.
        assert_eq!(cache.lookup(&[1]), Some(Status::Overrun));
        assert_eq!(cache.lookup(&[]), Some(Status::Overrun));
        assert_eq!(cache.lookup(&[1, 3]), None);
        cache.wanted_more(&[5]);
        assert_eq!(cache.lookup(&[5]), Some(Status::Overrun));
        assert_eq!(cache.lookup(&[5, 0]), None);
        cache.finished(&[5, 0, 1], Status::Boring);
        assert_eq!(cache.lookup(&[5, 0, 1, 9]), Some(Status::Boring));
        assert_eq!(cache.lookup(&[5, 0]), Some(Status::Overrun));
    }
}
