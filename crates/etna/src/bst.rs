//! ETNA's BST workload, re-implemented: a binary search tree map from `i32` keys to `i32`
//! values with `insert`, `delete` (joining the two subtrees of a deleted node) and `union`
//! (splitting the second tree around each key of the first; the first tree's value wins on
//! equal keys), its eight mutants (what each changes is documented on [`M`]), the nine
//! validity / postcondition / model properties of ETNA's Rust BST specification, and ETNA's
//! eight metamorphic laws (two operations in either order give the same map).
//!
//! Inputs are unbiased as upstream: trees are built by inserting pairs of keys and values
//! drawn from all of `i32` (so a drawn tree is always a valid BST and nothing is
//! discarded), operation keys from all of `i32` too. A bug that needs a key already in the
//! tree is found only by a generator that repeats values.

use crate::map_laws::{self, OrderedMap};
use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, any_int, vec};

/// A tree: empty, or left subtree, key, value, right subtree.
#[derive(Clone, PartialEq, Eq)]
pub enum Tree {
    /// The empty tree.
    E,
    /// A node.
    T(Box<Tree>, i32, i32, Box<Tree>),
}

impl std::fmt::Debug for Tree {
    /// ETNA's S-expression form: `E`, `(T l k v r)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tree::E => write!(f, "E"),
            Tree::T(l, k, v, r) => write!(f, "(T {l:?} {k} {v} {r:?})"),
        }
    }
}

/// The mutants (ETNA variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// `insert_1`: inserting into a non-empty tree returns a singleton (the tree is lost).
    Insert1,
    /// `insert_2`: no "go right" branch; a key above the node's overwrites the node's value.
    Insert2,
    /// `insert_3`: inserting an existing key keeps the old value.
    Insert3,
    /// `delete_4`: both recursive cases return the recursive result without its node.
    Delete4,
    /// `delete_5`: the two comparisons are swapped (searches the wrong side).
    Delete5,
    /// `union_6`: grafts the second tree under the first root without splitting it.
    Union6,
    /// `union_7`: equal roots merge child-wise, smaller first root grafts, else sides swap
    /// (the second tree's value wins on later equal keys).
    Union7,
    /// `union_8`: like `union_7` with the graft split by `below`/`above`; sides still swap.
    Union8,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("insert_1", M::Insert1),
        ("insert_2", M::Insert2),
        ("insert_3", M::Insert3),
        ("delete_4", M::Delete4),
        ("delete_5", M::Delete5),
        ("union_6", M::Union6),
        ("union_7", M::Union7),
        ("union_8", M::Union8),
    ];
}

fn node(l: Tree, k: i32, v: i32, r: Tree) -> Tree {
    Tree::T(Box::new(l), k, v, Box::new(r))
}

/// `insert k v t` with mutant `m`.
pub fn insert(m: M, k: i32, v: i32, t: Tree) -> Tree {
    match t {
        Tree::E => node(Tree::E, k, v, Tree::E),
        Tree::T(l, k2, v2, r) => match m {
            M::Insert1 => node(Tree::E, k, v, Tree::E),
            M::Insert2 if k < k2 => node(insert(m, k, v, *l), k2, v2, *r),
            M::Insert2 => node(*l, k2, v, *r),
            _ if k < k2 => node(insert(m, k, v, *l), k2, v2, *r),
            _ if k2 < k => node(*l, k2, v2, insert(m, k, v, *r)),
            M::Insert3 => node(*l, k2, v2, *r),
            _ => node(*l, k2, v, *r),
        },
    }
}

fn join(l: Tree, r: Tree) -> Tree {
    match (l, r) {
        (Tree::E, r) => r,
        (l, Tree::E) => l,
        (Tree::T(l1, k1, v1, r1), Tree::T(l2, k2, v2, r2)) => {
            node(*l1, k1, v1, node(join(*r1, *l2), k2, v2, *r2))
        }
    }
}

/// `delete k t` with mutant `m`.
pub fn delete(m: M, k: i32, t: Tree) -> Tree {
    let Tree::T(l, k2, v2, r) = t else {
        return Tree::E;
    };
    let (goes_left, goes_right) = match m {
        M::Delete5 => (k2 < k, k < k2),
        _ => (k < k2, k2 < k),
    };
    match m {
        M::Delete4 if goes_left => delete(m, k, *l),
        M::Delete4 if goes_right => delete(m, k, *r),
        _ if goes_left => node(delete(m, k, *l), k2, v2, *r),
        _ if goes_right => node(*l, k2, v2, delete(m, k, *r)),
        _ => join(*l, *r),
    }
}

fn below(k: i32, t: &Tree) -> Tree {
    match t {
        Tree::E => Tree::E,
        Tree::T(l, k2, _, _) if k <= *k2 => below(k, l),
        Tree::T(l, k2, v, r) => node((**l).clone(), *k2, *v, below(k, r)),
    }
}

fn above(k: i32, t: &Tree) -> Tree {
    match t {
        Tree::E => Tree::E,
        Tree::T(_, k2, _, r) if *k2 <= k => above(k, r),
        Tree::T(l, k2, v, r) => node(above(k, l), *k2, *v, (**r).clone()),
    }
}

/// `union t1 t2` with mutant `m` (fuel-bounded as upstream: the mutants may not terminate).
pub fn union(m: M, t1: Tree, t2: Tree) -> Tree {
    union_fuel(m, t1, t2, 10_000)
}

fn union_fuel(m: M, t1: Tree, t2: Tree, fuel: u32) -> Tree {
    if fuel == 0 {
        return Tree::E;
    }
    let f = fuel - 1;
    match (t1, t2) {
        (Tree::E, r) => r,
        (l, Tree::E) => l,
        (Tree::T(l, k, v, r), t) if !matches!(m, M::Union6 | M::Union7 | M::Union8) => {
            let (lo, hi) = (below(k, &t), above(k, &t));
            node(union_fuel(m, *l, lo, f), k, v, union_fuel(m, *r, hi, f))
        }
        (Tree::T(l, k, v, r), Tree::T(l2, k2, v2, r2)) => match m {
            M::Union6 => node(*l, k, v, node(union_fuel(m, *r, *l2, f), k2, v2, *r2)),
            _ if k == k2 => node(union_fuel(m, *l, *l2, f), k, v, union_fuel(m, *r, *r2, f)),
            M::Union7 if k < k2 => node(*l, k, v, node(union_fuel(m, *r, *l2, f), k2, v2, *r2)),
            M::Union8 if k < k2 => {
                let (lo, hi) = (below(k, &l2), above(k, &l2));
                node(
                    union_fuel(m, *l, lo, f),
                    k,
                    v,
                    union_fuel(m, *r, node(hi, k2, v2, *r2), f),
                )
            }
            _ => union_fuel(m, node(*l2, k2, v2, *r2), node(*l, k, v, *r), f),
        },
    }
}

/// The value of `k` in `t`.
pub fn find(k: i32, t: &Tree) -> Option<i32> {
    match t {
        Tree::E => None,
        Tree::T(l, k2, _, _) if k < *k2 => find(k, l),
        Tree::T(_, k2, _, r) if *k2 < k => find(k, r),
        Tree::T(_, _, v, _) => Some(*v),
    }
}

/// The pairs of `t` in key order.
pub fn to_list(t: &Tree) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    fn walk(t: &Tree, out: &mut Vec<(i32, i32)>) {
        if let Tree::T(l, k, v, r) = t {
            walk(l, out);
            out.push((*k, *v));
            walk(r, out);
        }
    }
    walk(t, &mut out);
    out
}

/// Every key strictly between the bounds, and both subtrees valid (strict inequalities).
pub fn is_bst(t: &Tree) -> bool {
    fn within(t: &Tree, lo: Option<i32>, hi: Option<i32>) -> bool {
        match t {
            Tree::E => true,
            Tree::T(l, k, _, r) => {
                lo.is_none_or(|lo| lo < *k)
                    && hi.is_none_or(|hi| *k < hi)
                    && within(l, lo, Some(*k))
                    && within(r, Some(*k), hi)
            }
        }
    }
    within(t, None, None)
}

/// The tree of `pairs` inserted in order by the unmutated `insert`.
pub fn build(pairs: Vec<(i32, i32)>) -> Tree {
    pairs
        .into_iter()
        .fold(Tree::E, |t, (k, v)| insert(M::Base, k, v, t))
}

/// The BST as the map the shared laws ([`map_laws`]) test.
pub struct Bst;

impl OrderedMap for Bst {
    type Tree = Tree;
    type M = M;
    fn insert(m: M, k: i32, v: i32, t: Tree) -> Tree {
        insert(m, k, v, t)
    }
    fn delete(m: M, k: i32, t: Tree) -> Tree {
        delete(m, k, t)
    }
    fn find(k: i32, t: &Tree) -> Option<i32> {
        find(k, t)
    }
    fn to_list(t: &Tree) -> Vec<(i32, i32)> {
        to_list(t)
    }
}

// ------------------------------------------------------------------ the model (sorted lists)

fn model_union(xs: &[(i32, i32)], ys: &[(i32, i32)]) -> Vec<(i32, i32)> {
    ys.iter()
        .filter(|(k, _)| !xs.iter().any(|(x, _)| x == k))
        .fold(xs.to_vec(), |acc, &(k, v)| {
            map_laws::model_insert(k, v, &acc)
        })
}

// ------------------------------------------------------------------------ the properties

type One = (Tree, i32, i32);
type Two = (Tree, Tree);
type UPost = (Tree, Tree, i32);
type Del = (Tree, i32);

fn insert_valid((t, k, v): &One, m: M) -> Verdict {
    let out = insert(m, *k, *v, t.clone());
    Verdict::check(is_bst(&out), || format!("not a BST: {out:?}"))
}

fn delete_valid((t, k): &Del, m: M) -> Verdict {
    let out = delete(m, *k, t.clone());
    Verdict::check(is_bst(&out), || format!("not a BST: {out:?}"))
}

fn union_valid((t1, t2): &Two, m: M) -> Verdict {
    let out = union(m, t1.clone(), t2.clone());
    Verdict::check(is_bst(&out), || format!("not a BST: {out:?}"))
}

fn union_post((t1, t2, k): &UPost, m: M) -> Verdict {
    let got = find(*k, &union(m, t1.clone(), t2.clone()));
    let want = find(*k, t1).or(find(*k, t2));
    Verdict::check(got == want, || {
        format!("find {k}: {got:?}, expected {want:?}")
    })
}

fn union_model((t1, t2): &Two, m: M) -> Verdict {
    let got = to_list(&union(m, t1.clone(), t2.clone()));
    let want = model_union(&to_list(t1), &to_list(t2));
    Verdict::check(got == want, || format!("{got:?} != {want:?}"))
}

// ------------------------------------------------------- the metamorphic laws (same map)

type UIns = (Tree, Tree, i32, i32);
type UDel = (Tree, Tree, i32);
type Three = (Tree, Tree, Tree);

fn insert_union((t1, t2, k, v): &UIns, m: M) -> Verdict {
    let lhs = insert(m, *k, *v, union(m, t1.clone(), t2.clone()));
    let rhs = union(m, insert(m, *k, *v, t1.clone()), t2.clone());
    map_laws::same::<Bst>(&lhs, &rhs)
}

fn delete_union((t1, t2, k): &UDel, m: M) -> Verdict {
    let lhs = delete(m, *k, union(m, t1.clone(), t2.clone()));
    let rhs = union(m, delete(m, *k, t1.clone()), delete(m, *k, t2.clone()));
    map_laws::same::<Bst>(&lhs, &rhs)
}

fn union_delete_insert((t1, t2, k, v): &UIns, m: M) -> Verdict {
    let lhs = union(m, delete(m, *k, t1.clone()), insert(m, *k, *v, t2.clone()));
    let rhs = insert(m, *k, *v, union(m, t1.clone(), t2.clone()));
    map_laws::same::<Bst>(&lhs, &rhs)
}

fn union_union_assoc((t1, t2, t3): &Three, m: M) -> Verdict {
    let lhs = union(m, union(m, t1.clone(), t2.clone()), t3.clone());
    let rhs = union(m, t1.clone(), union(m, t2.clone(), t3.clone()));
    map_laws::same::<Bst>(&lhs, &rhs)
}

// ------------------------------------------------------------------------ the generators

/// Most pairs a drawn tree is built from.
pub const MAX_PAIRS: usize = 20;

fn sl_tree() -> BoxedGen<Tree> {
    vec((any_int::<i32>(), any_int::<i32>()), 0..=MAX_PAIRS)
        .map(build)
        .boxed()
}

fn pt_tree() -> BoxedStrategy<Tree> {
    proptest::collection::vec((any::<i32>(), any::<i32>()), 0..=MAX_PAIRS)
        .prop_map(build)
        .boxed()
}

fn sl_key() -> BoxedGen<i32> {
    any_int::<i32>().boxed()
}

fn pt_key() -> BoxedStrategy<i32> {
    any::<i32>().boxed()
}

macro_rules! spec {
    ($name:literal, $check:expr, ($($sl:ident),+), ($($pt:ident),+)) => {
        Box::new(Spec {
            name: $name,
            seedledger: || ($($sl()),+).boxed(),
            proptest: || ($($pt()),+).boxed(),
            check: $check,
        }) as Box<dyn Property>
    };
}
pub(crate) use spec;

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        spec!(
            "BstInsertValid",
            insert_valid,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstDeleteValid",
            delete_valid,
            (sl_tree, sl_key),
            (pt_tree, pt_key)
        ),
        spec!(
            "BstUnionValid",
            union_valid,
            (sl_tree, sl_tree),
            (pt_tree, pt_tree)
        ),
        spec!(
            "BstInsertPost",
            map_laws::insert_post::<Bst>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "BstDeletePost",
            map_laws::delete_post::<Bst>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstUnionPost",
            union_post,
            (sl_tree, sl_tree, sl_key),
            (pt_tree, pt_tree, pt_key)
        ),
        spec!(
            "BstInsertModel",
            map_laws::insert_model::<Bst>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstDeleteModel",
            map_laws::delete_model::<Bst>,
            (sl_tree, sl_key),
            (pt_tree, pt_key)
        ),
        spec!(
            "BstUnionModel",
            union_model,
            (sl_tree, sl_tree),
            (pt_tree, pt_tree)
        ),
        spec!(
            "BstInsertInsert",
            map_laws::insert_insert::<Bst>,
            (sl_tree, sl_key, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key, pt_key)
        ),
        spec!(
            "BstInsertDelete",
            map_laws::insert_delete::<Bst>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "BstDeleteInsert",
            map_laws::delete_insert::<Bst>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "BstDeleteDelete",
            map_laws::delete_delete::<Bst>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstInsertUnion",
            insert_union,
            (sl_tree, sl_tree, sl_key, sl_key),
            (pt_tree, pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstDeleteUnion",
            delete_union,
            (sl_tree, sl_tree, sl_key),
            (pt_tree, pt_tree, pt_key)
        ),
        spec!(
            "BstUnionDeleteInsert",
            union_delete_insert,
            (sl_tree, sl_tree, sl_key, sl_key),
            (pt_tree, pt_tree, pt_key, pt_key)
        ),
        spec!(
            "BstUnionUnionAssoc",
            union_union_assoc,
            (sl_tree, sl_tree, sl_tree),
            (pt_tree, pt_tree, pt_tree)
        ),
    ]
}

/// The BST workload.
pub const WORKLOAD: Workload = Workload {
    name: "bst",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        (
            "insert_1",
            &[
                "BstInsertPost",
                "BstInsertModel",
                "BstInsertInsert",
                "BstDeleteInsert",
                "BstInsertUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "insert_2",
            &[
                "BstInsertPost",
                "BstInsertModel",
                "BstInsertInsert",
                "BstInsertDelete",
                "BstDeleteInsert",
                "BstInsertUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "insert_3",
            &[
                "BstInsertPost",
                "BstInsertModel",
                "BstInsertInsert",
                "BstInsertDelete",
                "BstInsertUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "delete_4",
            &[
                "BstDeletePost",
                "BstDeleteModel",
                "BstInsertDelete",
                "BstDeleteInsert",
                "BstDeleteDelete",
                "BstDeleteUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "delete_5",
            &[
                "BstDeletePost",
                "BstDeleteModel",
                "BstDeleteInsert",
                "BstDeleteUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "union_6",
            &[
                "BstUnionValid",
                "BstUnionPost",
                "BstUnionModel",
                "BstInsertUnion",
                "BstDeleteUnion",
                "BstUnionDeleteInsert",
            ],
        ),
        (
            "union_7",
            &[
                "BstUnionValid",
                "BstUnionPost",
                "BstUnionModel",
                "BstInsertUnion",
                "BstDeleteUnion",
                "BstUnionDeleteInsert",
                "BstUnionUnionAssoc",
            ],
        ),
        (
            "union_8",
            &[
                "BstUnionPost",
                "BstUnionModel",
                "BstInsertUnion",
                "BstDeleteUnion",
                "BstUnionDeleteInsert",
                "BstUnionUnionAssoc",
            ],
        ),
    ],
};
