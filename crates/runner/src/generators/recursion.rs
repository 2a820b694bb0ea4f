//! Trees with several kinds of leaf and several kinds of branch: [`recursive_tree`].
//!
//! # Encoding
//!
//! A tree is built from levels, the bottom one first: every level is one labelled draw (the
//! span label `recursive`) that records one choice, the node's *kind*, followed by the
//! kind's own draws. Kinds are numbered leaves first, in the order they were added, then
//! branches in theirs, so 0 (the first leaf) is the simplest node and a leaf is simpler
//! than any branch. The bottom level offers the leaves only: its kind has the same meaning
//! as at every other level (a subtree's choices mean the same subtree at any depth), and
//! when there is one leaf it is a forced 0 as in [`crate::recursive`].
//!
//! A branch draws each child from the level below through [`TestCase::draw`], so every
//! child is a span labelled `recursive` nested in its parent's: the shrinker's
//! `pass_to_descendant` replaces a node by one of its descendants (a subtree moves up a
//! level), `delete_spans` and `zero_spans` see whole subtrees, and lowering a kind turns a
//! branch into a simpler branch of the same shape or into a leaf.
//!
//! Random draws pick a leaf or a branch with equal probability (then each leaf, or each
//! branch, uniformly), or with the weights given to [`RecursiveTree::leaf_weighted`] and
//! [`RecursiveTree::branch_weighted`].

use crate::case::TestCase;
use crate::generators::{BoxedGen, Gen};
use std::fmt::Debug;
use std::sync::Arc;

/// A branch kind: builds one node from the generator of the level below.
type BranchFn<T> = Arc<dyn Fn(BoxedGen<T>) -> BoxedGen<T> + Send + Sync>;

/// A tree generator being described; see [`recursive_tree`].
pub struct RecursiveTree<T> {
    max_depth: u32,
    leaves: Vec<(Option<u32>, BoxedGen<T>)>,
    branches: Vec<(Option<u32>, BranchFn<T>)>,
}

/// Trees of at most `max_depth` levels of branches over leaves, with any number of leaf
/// kinds and branch kinds:
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// #[derive(Debug)]
/// enum Expr {
///     Num(u8),
///     Neg(Box<Expr>),
///     Add(Box<Expr>, Box<Expr>),
/// }
///
/// let expr = recursive_tree(4)
///     .leaf(int(0..=9u8).map(Expr::Num))
///     .branch(|e| e.map(|a| Expr::Neg(Box::new(a))))
///     .branch(|e| (e.clone(), e).map(|(a, b)| Expr::Add(Box::new(a), Box::new(b))))
///     .build();
/// let tree = TestCase::random(7).draw(&expr);
/// # let _ = tree;
/// ```
///
/// A branch must draw each child from the generator it is given (directly, in a tuple, a
/// `vec`, or with `tc.draw` inside a `from_fn`), so that each child is a labelled span; see
/// the module docs for the encoding and why it shrinks well.
pub fn recursive_tree<T: Debug + 'static>(max_depth: u32) -> RecursiveTree<T> {
    RecursiveTree {
        max_depth,
        leaves: Vec::new(),
        branches: Vec::new(),
    }
}

impl<T: Debug + 'static> RecursiveTree<T> {
    /// Adds a leaf kind (the first one added is the simplest node).
    pub fn leaf(mut self, g: impl Gen<Value = T> + Send + Sync + 'static) -> Self {
        self.leaves.push((None, g.boxed()));
        self
    }

    /// Adds a leaf kind drawn with `weight` (relative to the other leaves' weights, which
    /// default to 1) when a random draw picks a leaf.
    pub fn leaf_weighted(
        mut self,
        weight: u32,
        g: impl Gen<Value = T> + Send + Sync + 'static,
    ) -> Self {
        self.leaves.push((Some(weight), g.boxed()));
        self
    }

    /// Adds a branch kind: `f` makes the node's generator from the generator of the level
    /// below (its children).
    pub fn branch<G, F>(mut self, f: F) -> Self
    where
        G: Gen<Value = T> + Send + Sync + 'static,
        F: Fn(BoxedGen<T>) -> G + Send + Sync + 'static,
    {
        self.branches
            .push((None, Arc::new(move |sub| f(sub).boxed())));
        self
    }

    /// Adds a branch kind drawn with `weight` (relative to the other branches' weights,
    /// which default to 1) when a random draw picks a branch.
    pub fn branch_weighted<G, F>(mut self, weight: u32, f: F) -> Self
    where
        G: Gen<Value = T> + Send + Sync + 'static,
        F: Fn(BoxedGen<T>) -> G + Send + Sync + 'static,
    {
        self.branches
            .push((Some(weight), Arc::new(move |sub| f(sub).boxed())));
        self
    }

    /// The generator. Without a leaf it can build nothing: a draw from it rejects the test
    /// case as invalid (as a filter that gives up does), so no input ever comes of it.
    pub fn build(self) -> BoxedGen<T> {
        let leaf_weights = weights(self.leaves.iter().map(|(w, _)| *w));
        let branch_weights = weights(self.branches.iter().map(|(w, _)| *w));
        let leaves: Vec<BoxedGen<T>> = self.leaves.into_iter().map(|(_, g)| g).collect();
        // Leaves and branches are equally likely overall: scale each side by the other's
        // total weight.
        let (leaf_total, branch_total) = (sum(&leaf_weights), sum(&branch_weights));
        let mut level = Level {
            kinds: leaves.clone(),
            weights: leaf_weights.clone(),
        }
        .boxed();
        for _ in 0..self.max_depth {
            let mut kinds = leaves.clone();
            kinds.extend(self.branches.iter().map(|(_, f)| f(level.clone())));
            let weights = if leaf_total == 0 || branch_total == 0 {
                leaf_weights
                    .iter()
                    .chain(&branch_weights)
                    .copied()
                    .collect()
            } else {
                leaf_weights
                    .iter()
                    .map(|&w| scale(w, branch_total))
                    .chain(branch_weights.iter().map(|&w| scale(w, leaf_total)))
                    .collect()
            };
            level = Level { kinds, weights }.boxed();
        }
        level
    }
}

fn weights(given: impl Iterator<Item = Option<u32>>) -> Vec<u32> {
    given.map(|w| w.unwrap_or(1)).collect()
}

fn sum(weights: &[u32]) -> u64 {
    weights.iter().map(|&w| u64::from(w)).sum()
}

/// `w * total`, saturated to `u32`.
fn scale(w: u32, total: u64) -> u32 {
    u32::try_from(u64::from(w).saturating_mul(total)).unwrap_or(u32::MAX)
}

/// One level: the kind, then the kind's draws.
struct Level<T> {
    kinds: Vec<BoxedGen<T>>,
    weights: Vec<u32>,
}

impl<T: Debug> Gen for Level<T> {
    type Value = T;
    fn generate(&self, tc: &mut TestCase) -> T {
        let total = sum(&self.weights);
        if self.kinds.is_empty() {
            tc.reject();
        }
        let kind = if total == 0 {
            tc.uniform_choice(self.kinds.len() as u64 - 1)
        } else {
            tc.weighted_choice(&self.weights, total)
        };
        let kind = (kind as usize).min(self.kinds.len() - 1);
        tc.draw(&self.kinds[kind])
    }
    fn label(&self) -> &'static str {
        "recursive"
    }
}
