//! ETNA's red-black tree workload, re-implemented: Okasaki's insertion (`ins`, `balance`,
//! blacken the root) and Kahrs's deletion (`del` with `delLeft`/`delRight`, `balLeft`,
//! `balRight`, `join` of the two subtrees of a deleted node, blacken the root) over `i32`
//! keys and values; ETNA's fifteen mutants (documented on [`M`]) and ten properties:
//! validity (BST order, black root, no red node with a red child, one black height), the
//! `find` postconditions and the sorted-list models of `insert` and `delete`, and the four
//! metamorphic laws of `insert` and `delete` (either order gives the same map).
//!
//! Inputs are unbiased as upstream: trees are built by inserting pairs drawn from all of
//! `i32` with the unmutated `insert` (always valid, nothing discarded); keys from all of
//! `i32`.

use crate::bst::spec;
use crate::map_laws::{self, OrderedMap};
use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, any_int, vec};

/// A node's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// Red.
    R,
    /// Black.
    B,
}
use Color::{B, R};

/// A tree: empty, or colour, left subtree, key, value, right subtree.
#[derive(Clone, PartialEq, Eq)]
pub enum Tree {
    /// The empty tree.
    E,
    /// A node.
    T(Color, Box<Tree>, i32, i32, Box<Tree>),
}
use Tree::E;

impl std::fmt::Debug for Tree {
    /// ETNA's S-expression form: `E`, `(T c l k v r)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            E => write!(f, "E"),
            Tree::T(c, l, k, v, r) => write!(f, "(T {c:?} {l:?} {k} {v} {r:?})"),
        }
    }
}

/// The mutants (ETNA variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// `insert_1`: `ins` on a non-empty tree returns a red singleton.
    Insert1,
    /// `insert_2`: no "go right" branch in `ins`; a larger key overwrites the node's value.
    Insert2,
    /// `insert_3`: `ins` of an existing key keeps the old value.
    Insert3,
    /// `delete_4`: `del` recurses without its `delLeft`/`delRight` wrapper (drops a side).
    Delete4,
    /// `delete_5`: `del`'s two comparisons swapped.
    Delete5,
    /// `miscolor_insert`: `ins` creates black leaves.
    MiscolorInsert,
    /// `miscolor_delete`: `delete` does not blacken the root.
    MiscolorDelete,
    /// `miscolor_balLeft`: `balLeft`'s third case does not redden `c`.
    MiscolorBalLeft,
    /// `miscolor_balRight`: `balRight`'s third case does not redden `a`.
    MiscolorBalRight,
    /// `miscolor_join_1`: `join` of two red trees paints the middle nodes black.
    MiscolorJoin1,
    /// `miscolor_join_2`: `join` of two black trees paints the middle nodes red.
    MiscolorJoin2,
    /// `no_balance_insert_1`: `ins` going left does not `balance`.
    NoBalanceInsert1,
    /// `no_balance_insert_2`: `ins` going right does not `balance`.
    NoBalanceInsert2,
    /// `swap_cd`: `balance`'s left-left case swaps `c` and `d`.
    SwapCd,
    /// `swap_bc`: `balance`'s right-left case swaps `b` and `c`.
    SwapBc,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("insert_1", M::Insert1),
        ("insert_2", M::Insert2),
        ("insert_3", M::Insert3),
        ("delete_4", M::Delete4),
        ("delete_5", M::Delete5),
        ("miscolor_insert", M::MiscolorInsert),
        ("miscolor_delete", M::MiscolorDelete),
        ("miscolor_balLeft", M::MiscolorBalLeft),
        ("miscolor_balRight", M::MiscolorBalRight),
        ("miscolor_join_1", M::MiscolorJoin1),
        ("miscolor_join_2", M::MiscolorJoin2),
        ("no_balance_insert_1", M::NoBalanceInsert1),
        ("no_balance_insert_2", M::NoBalanceInsert2),
        ("swap_cd", M::SwapCd),
        ("swap_bc", M::SwapBc),
    ];
}

fn t(c: Color, l: Tree, k: i32, v: i32, r: Tree) -> Tree {
    Tree::T(c, Box::new(l), k, v, Box::new(r))
}

fn is_red(t: &Tree) -> bool {
    matches!(t, Tree::T(R, ..))
}

fn red_child(t: &Tree) -> bool {
    matches!(t, Tree::T(R, l, _, _, r) if is_red(l) || is_red(r))
}

/// Okasaki's `balance`: a black node with a red child that has a red child becomes a red
/// node with two black children.
fn balance(m: M, c: Color, l: Tree, k: i32, v: i32, r: Tree) -> Tree {
    if c == B && red_child(&l) {
        let Tree::T(_, a, x, vx, b) = l else {
            unreachable!("red_child matched a node")
        };
        if is_red(&a) {
            // Left-left: (T R (T R a1 x1 b1) x b) z d.
            let Tree::T(_, a1, x1, v1, b1) = *a else {
                unreachable!("is_red matched a node")
            };
            let (c3, d3) = if m == M::SwapCd { (r, *b) } else { (*b, r) };
            return t(R, t(B, *a1, x1, v1, *b1), x, vx, t(B, c3, k, v, d3));
        }
        // Left-right: (T R a x (T R b1 y c1)) z d.
        let Tree::T(_, b1, y, vy, c1) = *b else {
            unreachable!("red_child matched a red right child")
        };
        return t(R, t(B, *a, x, vx, *b1), y, vy, t(B, *c1, k, v, r));
    }
    if c == B && red_child(&r) {
        let Tree::T(_, b, y, vy, d) = r else {
            unreachable!("red_child matched a node")
        };
        if is_red(&b) {
            // Right-left: a x (T R (T R b1 y1 c1) y d).
            let Tree::T(_, b1, y1, v1, c1) = *b else {
                unreachable!("is_red matched a node")
            };
            let (bb, cc) = if m == M::SwapBc {
                (*c1, *b1)
            } else {
                (*b1, *c1)
            };
            return t(R, t(B, l, k, v, bb), y1, v1, t(B, cc, y, vy, *d));
        }
        // Right-right: a x (T R b y (T R c1 z d1)).
        let Tree::T(_, c1, z, vz, d1) = *d else {
            unreachable!("red_child matched a red right child")
        };
        return t(R, t(B, l, k, v, *b), y, vy, t(B, *c1, z, vz, *d1));
    }
    t(c, l, k, v, r)
}

fn blacken(tree: Tree) -> Tree {
    match tree {
        Tree::T(_, l, k, v, r) => Tree::T(B, l, k, v, r),
        E => E,
    }
}

fn redden(tree: Tree) -> Tree {
    match tree {
        Tree::T(B, l, k, v, r) => Tree::T(R, l, k, v, r),
        other => other,
    }
}

fn ins(m: M, k: i32, v: i32, tree: Tree) -> Tree {
    let Tree::T(c, l, y, vy, r) = tree else {
        return t(if m == M::MiscolorInsert { B } else { R }, E, k, v, E);
    };
    match m {
        M::Insert1 => t(R, E, k, v, E),
        M::Insert2 if k < y => balance(m, c, ins(m, k, v, *l), y, vy, *r),
        M::Insert2 => t(c, *l, y, v, *r),
        M::NoBalanceInsert1 if k < y => t(c, ins(m, k, v, *l), y, vy, *r),
        M::NoBalanceInsert2 if y < k => t(c, *l, y, vy, ins(m, k, v, *r)),
        _ if k < y => balance(m, c, ins(m, k, v, *l), y, vy, *r),
        _ if y < k => balance(m, c, *l, y, vy, ins(m, k, v, *r)),
        M::Insert3 => t(c, *l, y, vy, *r),
        _ => t(c, *l, y, v, *r),
    }
}

/// `insert k v t` with mutant `m`.
pub fn insert(m: M, k: i32, v: i32, tree: Tree) -> Tree {
    blacken(ins(m, k, v, tree))
}

fn bal_left(m: M, l: Tree, k: i32, v: i32, r: Tree) -> Tree {
    if let Tree::T(R, a, x, vx, b) = l {
        return t(R, t(B, *a, x, vx, *b), k, v, r);
    }
    match r {
        Tree::T(B, a, y, vy, b) => balance(m, B, l, k, v, t(R, *a, y, vy, *b)),
        Tree::T(R, a, z, vz, c) if matches!(*a, Tree::T(B, ..)) => {
            let Tree::T(_, a1, y, vy, b1) = *a else {
                unreachable!("matched a black node")
            };
            let c = if m == M::MiscolorBalLeft {
                *c
            } else {
                redden(*c)
            };
            t(R, t(B, l, k, v, *a1), y, vy, balance(m, B, *b1, z, vz, c))
        }
        r => t(R, l, k, v, r),
    }
}

fn bal_right(m: M, l: Tree, k: i32, v: i32, r: Tree) -> Tree {
    if let Tree::T(R, b, y, vy, c) = r {
        return t(R, l, k, v, t(B, *b, y, vy, *c));
    }
    match l {
        Tree::T(B, a, x, vx, b) => balance(m, B, t(R, *a, x, vx, *b), k, v, r),
        Tree::T(R, a, x, vx, b) if matches!(*b, Tree::T(B, ..)) => {
            let Tree::T(_, b1, y, vy, c1) = *b else {
                unreachable!("matched a black node")
            };
            let a = if m == M::MiscolorBalRight {
                *a
            } else {
                redden(*a)
            };
            t(R, balance(m, B, a, x, vx, *b1), y, vy, t(B, *c1, k, v, r))
        }
        l => t(R, l, k, v, r),
    }
}

fn join(m: M, l: Tree, r: Tree) -> Tree {
    match (l, r) {
        (E, r) => r,
        (l, E) => l,
        (Tree::T(R, a, x, vx, b), Tree::T(R, c, y, vy, d)) => match join(m, *b, *c) {
            Tree::T(R, b2, z, vz, c2) => {
                let inner = if m == M::MiscolorJoin1 { B } else { R };
                t(R, t(inner, *a, x, vx, *b2), z, vz, t(inner, *c2, y, vy, *d))
            }
            bc => t(R, *a, x, vx, t(R, bc, y, vy, *d)),
        },
        (Tree::T(B, a, x, vx, b), Tree::T(B, c, y, vy, d)) => match join(m, *b, *c) {
            Tree::T(R, b2, z, vz, c2) => {
                let inner = if m == M::MiscolorJoin2 { R } else { B };
                t(R, t(inner, *a, x, vx, *b2), z, vz, t(inner, *c2, y, vy, *d))
            }
            bc => bal_left(m, *a, x, vx, t(B, bc, y, vy, *d)),
        },
        (a, Tree::T(R, b, x, vx, c)) => t(R, join(m, a, *b), x, vx, *c),
        (Tree::T(R, a, x, vx, b), c) => t(R, *a, x, vx, join(m, *b, c)),
    }
}

fn del(m: M, k: i32, tree: Tree) -> Tree {
    let Tree::T(_, l, y, vy, r) = tree else {
        return E;
    };
    let (goes_left, goes_right) = if m == M::Delete5 {
        (y < k, k < y)
    } else {
        (k < y, y < k)
    };
    if m == M::Delete4 && goes_left {
        return del(m, k, *l);
    }
    if m == M::Delete4 && goes_right {
        return del(m, k, *r);
    }
    if goes_left {
        let black = matches!(*l, Tree::T(B, ..));
        let l = del(m, k, *l);
        return if black {
            bal_left(m, l, y, vy, *r)
        } else {
            t(R, l, y, vy, *r)
        };
    }
    if goes_right {
        let black = matches!(*r, Tree::T(B, ..));
        let r = del(m, k, *r);
        return if black {
            bal_right(m, *l, y, vy, r)
        } else {
            t(R, *l, y, vy, r)
        };
    }
    join(m, *l, *r)
}

/// `delete k t` with mutant `m`.
pub fn delete(m: M, k: i32, tree: Tree) -> Tree {
    let out = del(m, k, tree);
    if m == M::MiscolorDelete {
        out
    } else {
        blacken(out)
    }
}

/// The value of `k` in `t`.
pub fn find(k: i32, tree: &Tree) -> Option<i32> {
    match tree {
        E => None,
        Tree::T(_, l, y, _, _) if k < *y => find(k, l),
        Tree::T(_, _, y, _, r) if *y < k => find(k, r),
        Tree::T(_, _, _, v, _) => Some(*v),
    }
}

/// The pairs of `t` in key order.
pub fn to_list(tree: &Tree) -> Vec<(i32, i32)> {
    fn walk(tree: &Tree, out: &mut Vec<(i32, i32)>) {
        if let Tree::T(_, l, k, v, r) = tree {
            walk(l, out);
            out.push((*k, *v));
            walk(r, out);
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut out);
    out
}

/// The black height of `t` when every path has the same one and no red node has a red
/// child; `None` otherwise.
fn black_height(tree: &Tree) -> Option<u32> {
    match tree {
        E => Some(1),
        Tree::T(c, l, _, _, r) => {
            if *c == R && (is_red(l) || is_red(r)) {
                return None;
            }
            let (hl, hr) = (black_height(l)?, black_height(r)?);
            (hl == hr).then_some(hl + u32::from(*c == B))
        }
    }
}

/// A valid red-black tree: keys strictly ordered, black root, no red-red, one black height.
pub fn is_rbt(tree: &Tree) -> bool {
    let keys: Vec<i32> = to_list(tree).into_iter().map(|(k, _)| k).collect();
    keys.windows(2).all(|w| w[0] < w[1]) && !is_red(tree) && black_height(tree).is_some()
}

/// The tree of `pairs` inserted in order by the unmutated `insert`.
pub fn build(pairs: Vec<(i32, i32)>) -> Tree {
    pairs
        .into_iter()
        .fold(E, |tree, (k, v)| insert(M::Base, k, v, tree))
}

/// The red-black tree as the map the shared laws ([`map_laws`]) test.
pub struct Rbt;

impl OrderedMap for Rbt {
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

// ------------------------------------------------------------------------ the properties

type Ins = (Tree, i32, i32);
type Del = (Tree, i32);

fn insert_valid((tree, k, v): &Ins, m: M) -> Verdict {
    let out = insert(m, *k, *v, tree.clone());
    Verdict::check(is_rbt(&out), || format!("not a red-black tree: {out:?}"))
}

fn delete_valid((tree, k): &Del, m: M) -> Verdict {
    let out = delete(m, *k, tree.clone());
    Verdict::check(is_rbt(&out), || format!("not a red-black tree: {out:?}"))
}

// ------------------------------------------------------------------------ the generators

fn sl_tree() -> BoxedGen<Tree> {
    vec(
        (any_int::<i32>(), any_int::<i32>()),
        0..=crate::bst::MAX_PAIRS,
    )
    .map(build)
    .boxed()
}

fn pt_tree() -> BoxedStrategy<Tree> {
    proptest::collection::vec((any::<i32>(), any::<i32>()), 0..=crate::bst::MAX_PAIRS)
        .prop_map(build)
        .boxed()
}

fn sl_key() -> BoxedGen<i32> {
    any_int::<i32>().boxed()
}

fn pt_key() -> BoxedStrategy<i32> {
    any::<i32>().boxed()
}

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        spec!(
            "RbtInsertValid",
            insert_valid,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "RbtDeleteValid",
            delete_valid,
            (sl_tree, sl_key),
            (pt_tree, pt_key)
        ),
        spec!(
            "RbtInsertPost",
            map_laws::insert_post::<Rbt>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "RbtDeletePost",
            map_laws::delete_post::<Rbt>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "RbtInsertModel",
            map_laws::insert_model::<Rbt>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
        spec!(
            "RbtDeleteModel",
            map_laws::delete_model::<Rbt>,
            (sl_tree, sl_key),
            (pt_tree, pt_key)
        ),
        spec!(
            "RbtInsertInsert",
            map_laws::insert_insert::<Rbt>,
            (sl_tree, sl_key, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key, pt_key)
        ),
        spec!(
            "RbtInsertDelete",
            map_laws::insert_delete::<Rbt>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "RbtDeleteInsert",
            map_laws::delete_insert::<Rbt>,
            (sl_tree, sl_key, sl_key, sl_key),
            (pt_tree, pt_key, pt_key, pt_key)
        ),
        spec!(
            "RbtDeleteDelete",
            map_laws::delete_delete::<Rbt>,
            (sl_tree, sl_key, sl_key),
            (pt_tree, pt_key, pt_key)
        ),
    ]
}

/// The red-black tree workload.
pub const WORKLOAD: Workload = Workload {
    name: "rbt",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        (
            "insert_1",
            &[
                "RbtInsertPost",
                "RbtInsertModel",
                "RbtInsertInsert",
                "RbtDeleteInsert",
            ],
        ),
        (
            "insert_2",
            &[
                "RbtInsertPost",
                "RbtInsertModel",
                "RbtInsertInsert",
                "RbtInsertDelete",
                "RbtDeleteInsert",
            ],
        ),
        (
            "insert_3",
            &[
                "RbtInsertPost",
                "RbtInsertModel",
                "RbtInsertInsert",
                "RbtInsertDelete",
            ],
        ),
        (
            "delete_4",
            &[
                "RbtDeletePost",
                "RbtDeleteModel",
                "RbtInsertDelete",
                "RbtDeleteInsert",
                "RbtDeleteDelete",
            ],
        ),
        (
            "delete_5",
            &[
                "RbtDeletePost",
                "RbtDeleteModel",
                "RbtInsertDelete",
                "RbtDeleteInsert",
            ],
        ),
        ("miscolor_insert", &["RbtInsertValid"]),
        ("miscolor_delete", &["RbtDeleteValid"]),
        ("miscolor_balLeft", &["RbtDeleteValid"]),
        ("miscolor_balRight", &["RbtDeleteValid"]),
        ("miscolor_join_1", &["RbtDeleteValid"]),
        ("miscolor_join_2", &["RbtDeleteValid"]),
        ("no_balance_insert_1", &["RbtInsertValid"]),
        ("no_balance_insert_2", &["RbtInsertValid"]),
        (
            "swap_cd",
            &[
                "RbtInsertValid",
                "RbtDeleteValid",
                "RbtInsertPost",
                "RbtInsertModel",
                "RbtDeleteModel",
                "RbtInsertInsert",
                "RbtInsertDelete",
                "RbtDeleteInsert",
                "RbtDeleteDelete",
            ],
        ),
        (
            "swap_bc",
            &[
                "RbtInsertValid",
                "RbtDeleteValid",
                "RbtInsertPost",
                "RbtInsertModel",
                "RbtDeleteModel",
                "RbtInsertInsert",
                "RbtInsertDelete",
                "RbtDeleteInsert",
            ],
        ),
    ],
};
