//! The properties the BST and red-black tree workloads share, written once over
//! [`OrderedMap`]: each workload's `insert`, `delete`, `find` and `to_list` under a mutant.
//! (ETNA keeps a copy per workload; the laws are the same, so here they are one.)

use crate::Verdict;
use std::fmt::Debug;

/// A map from `i32` keys to `i32` values as a workload implements it, with its mutants.
pub trait OrderedMap {
    /// The tree.
    type Tree: Clone + Debug;
    /// The workload's mutant selector.
    type M: Copy;
    /// `insert k v t` under mutant `m`.
    fn insert(m: Self::M, k: i32, v: i32, t: Self::Tree) -> Self::Tree;
    /// `delete k t` under mutant `m`.
    fn delete(m: Self::M, k: i32, t: Self::Tree) -> Self::Tree;
    /// The value of `k`.
    fn find(k: i32, t: &Self::Tree) -> Option<i32>;
    /// The bindings in key order.
    fn to_list(t: &Self::Tree) -> Vec<(i32, i32)>;
}

/// `(tree, k, k2, v)`.
pub type Post<T> = (T, i32, i32, i32);
/// `(tree, k, k2)`.
pub type DPost<T> = (T, i32, i32);
/// `(tree, k, v)`.
pub type One<T> = (T, i32, i32);
/// `(tree, k)`.
pub type Del<T> = (T, i32);
/// `(tree, k, k2, v, v2)`.
pub type InsIns<T> = (T, i32, i32, i32, i32);

/// After inserting `k`, `find k2` is `v` for `k`, else what it was.
pub fn insert_post<W: OrderedMap>((t, k, k2, v): &Post<W::Tree>, m: W::M) -> Verdict {
    let got = W::find(*k2, &W::insert(m, *k, *v, t.clone()));
    let want = if k == k2 { Some(*v) } else { W::find(*k2, t) };
    Verdict::check(got == want, || {
        format!("find {k2}: {got:?}, expected {want:?}")
    })
}

/// After deleting `k`, `find k2` is nothing for `k`, else what it was.
pub fn delete_post<W: OrderedMap>((t, k, k2): &DPost<W::Tree>, m: W::M) -> Verdict {
    let got = W::find(*k2, &W::delete(m, *k, t.clone()));
    let want = if k == k2 { None } else { W::find(*k2, t) };
    Verdict::check(got == want, || {
        format!("find {k2}: {got:?}, expected {want:?}")
    })
}

/// Inserting is inserting into the sorted list of bindings.
pub fn insert_model<W: OrderedMap>((t, k, v): &One<W::Tree>, m: W::M) -> Verdict {
    let got = W::to_list(&W::insert(m, *k, *v, t.clone()));
    let want = model_insert(*k, *v, &W::to_list(t));
    Verdict::check(got == want, || format!("{got:?} != {want:?}"))
}

/// Deleting is filtering the sorted list of bindings.
pub fn delete_model<W: OrderedMap>((t, k): &Del<W::Tree>, m: W::M) -> Verdict {
    let got = W::to_list(&W::delete(m, *k, t.clone()));
    let want: Vec<_> = W::to_list(t).into_iter().filter(|(x, _)| x != k).collect();
    Verdict::check(got == want, || format!("{got:?} != {want:?}"))
}

/// The sorted bindings with `(k, v)` in place of any binding of `k`.
pub fn model_insert(k: i32, v: i32, xs: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut out: Vec<_> = xs.iter().copied().filter(|(x, _)| *x != k).collect();
    let at = out.partition_point(|(x, _)| *x < k);
    out.insert(at, (k, v));
    out
}

/// The two trees hold the same bindings.
pub fn same<W: OrderedMap>(a: &W::Tree, b: &W::Tree) -> Verdict {
    let (la, lb) = (W::to_list(a), W::to_list(b));
    Verdict::check(la == lb, || format!("{la:?} != {lb:?}"))
}

/// Two inserts commute (the later one wins on the same key).
pub fn insert_insert<W: OrderedMap>((t, k, k2, v, v2): &InsIns<W::Tree>, m: W::M) -> Verdict {
    let lhs = W::insert(m, *k, *v, W::insert(m, *k2, *v2, t.clone()));
    let rhs = if k == k2 {
        W::insert(m, *k, *v, t.clone())
    } else {
        W::insert(m, *k2, *v2, W::insert(m, *k, *v, t.clone()))
    };
    same::<W>(&lhs, &rhs)
}

/// An insert and a delete commute on different keys; on the same key the insert wins.
pub fn insert_delete<W: OrderedMap>((t, k, k2, v): &Post<W::Tree>, m: W::M) -> Verdict {
    let lhs = W::insert(m, *k, *v, W::delete(m, *k2, t.clone()));
    let rhs = if k == k2 {
        W::insert(m, *k, *v, t.clone())
    } else {
        W::delete(m, *k2, W::insert(m, *k, *v, t.clone()))
    };
    same::<W>(&lhs, &rhs)
}

/// A delete and an insert commute on different keys; on the same key the delete wins.
pub fn delete_insert<W: OrderedMap>((t, k, k2, v2): &Post<W::Tree>, m: W::M) -> Verdict {
    let lhs = W::delete(m, *k, W::insert(m, *k2, *v2, t.clone()));
    let rhs = if k == k2 {
        W::delete(m, *k, t.clone())
    } else {
        W::insert(m, *k2, *v2, W::delete(m, *k, t.clone()))
    };
    same::<W>(&lhs, &rhs)
}

/// Two deletes commute.
pub fn delete_delete<W: OrderedMap>((t, k, k2): &DPost<W::Tree>, m: W::M) -> Verdict {
    let lhs = W::delete(m, *k, W::delete(m, *k2, t.clone()));
    let rhs = W::delete(m, *k2, W::delete(m, *k, t.clone()));
    same::<W>(&lhs, &rhs)
}
