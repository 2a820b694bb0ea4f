//! ETNA's STLC workload, re-implemented: the simply typed lambda calculus with booleans in
//! de Bruijn form, parallel reduction (`pstep` reduces under binders and contracts every
//! redex `App (Abs t e1) e2` into `substTop e2' e1'` of the reduced parts), the shift /
//! substitution helpers with ETNA's ten mutants (documented on [`M`]), and the two
//! preservation properties: a closed well-typed term keeps its type after one step
//! (`SinglePreserve`) or after up to 40 steps (`MultiPreserve`). Ill-typed inputs are
//! discarded.
//!
//! Inputs are unbiased: terms are drawn by their type's shape (half leaves, half branches at
//! each level, at most [`MAX_DEPTH`] levels; a variable index in `0..=3`, types of at most
//! two arrows), so most are ill-typed or open and discarded.

use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, boolean, int, recursive_tree};

/// A type: `Bool` or a function type.
#[derive(Clone, PartialEq, Eq)]
pub enum Typ {
    /// Booleans.
    TBool,
    /// Functions from the first type to the second.
    TFun(Box<Typ>, Box<Typ>),
}

/// A term; `Var n` is the de Bruijn index `n`.
#[derive(Clone, PartialEq, Eq)]
pub enum Expr {
    /// A variable.
    Var(u32),
    /// A boolean constant.
    Bool(bool),
    /// `\x: t. e`.
    Abs(Typ, Box<Expr>),
    /// Application.
    App(Box<Expr>, Box<Expr>),
}

impl std::fmt::Debug for Typ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Typ::TBool => write!(f, "TBool"),
            Typ::TFun(a, b) => write!(f, "(TFun {a:?} {b:?})"),
        }
    }
}

impl std::fmt::Debug for Expr {
    /// ETNA's S-expression form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Var(n) => write!(f, "(Var {n})"),
            Expr::Bool(b) => write!(f, "(Bool {})", if *b { "#t" } else { "#f" }),
            Expr::Abs(t, e) => write!(f, "(Abs {t:?} {e:?})"),
            Expr::App(a, b) => write!(f, "(App {a:?} {b:?})"),
        }
    }
}

/// The mutants (ETNA variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// `shift_var_none`: `shift` leaves every variable alone.
    ShiftVarNone,
    /// `shift_var_all`: `shift` shifts every variable (ignores the cutoff).
    ShiftVarAll,
    /// `shift_var_leq`: `shift` leaves a variable at the cutoff alone (`<=` for `<`).
    ShiftVarLeq,
    /// `shift_abs_no_incr`: `shift` does not raise the cutoff under a binder.
    ShiftAbsNoIncr,
    /// `subst_var_all`: `subst` replaces every variable.
    SubstVarAll,
    /// `subst_var_none`: `subst` replaces no variable.
    SubstVarNone,
    /// `subst_abs_no_shift`: `subst` does not shift the substituted term under a binder.
    SubstAbsNoShift,
    /// `subst_abs_no_incr`: `subst` does not raise the index under a binder.
    SubstAbsNoIncr,
    /// `substTop_no_shift`: `substTop` shifts neither up nor back.
    SubstTopNoShift,
    /// `substTop_no_shift_back`: `substTop` does not shift back down.
    SubstTopNoShiftBack,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("shift_var_none", M::ShiftVarNone),
        ("shift_var_all", M::ShiftVarAll),
        ("shift_var_leq", M::ShiftVarLeq),
        ("shift_abs_no_incr", M::ShiftAbsNoIncr),
        ("subst_var_all", M::SubstVarAll),
        ("subst_var_none", M::SubstVarNone),
        ("subst_abs_no_shift", M::SubstAbsNoShift),
        ("subst_abs_no_incr", M::SubstAbsNoIncr),
        ("substTop_no_shift", M::SubstTopNoShift),
        ("substTop_no_shift_back", M::SubstTopNoShiftBack),
    ];
}

/// Adds `d` to every variable of `e` at or above the cutoff (0 at the top, one more under
/// each binder); an index below 0 becomes 0 (as `Z.to_nat` upstream).
pub fn shift(m: M, d: i64, e: &Expr) -> Expr {
    fn go(m: M, d: i64, c: i64, e: &Expr) -> Expr {
        match e {
            Expr::Var(n) => {
                let n64 = i64::from(*n);
                let keep = match m {
                    M::ShiftVarNone => true,
                    M::ShiftVarAll => false,
                    M::ShiftVarLeq => n64 <= c,
                    _ => n64 < c,
                };
                if keep {
                    Expr::Var(*n)
                } else {
                    Expr::Var(u32::try_from((n64 + d).max(0)).unwrap_or(u32::MAX))
                }
            }
            Expr::Bool(b) => Expr::Bool(*b),
            Expr::Abs(t, body) => {
                let c2 = if m == M::ShiftAbsNoIncr { c } else { c + 1 };
                Expr::Abs(t.clone(), Box::new(go(m, d, c2, body)))
            }
            Expr::App(a, b) => Expr::App(Box::new(go(m, d, c, a)), Box::new(go(m, d, c, b))),
        }
    }
    go(m, d, 0, e)
}

/// Replaces variable `n` of `e` by `s`.
pub fn subst(m: M, n: u32, s: &Expr, e: &Expr) -> Expr {
    match e {
        Expr::Var(v) => match m {
            M::SubstVarAll => s.clone(),
            M::SubstVarNone => Expr::Var(*v),
            _ if *v == n => s.clone(),
            _ => Expr::Var(*v),
        },
        Expr::Bool(b) => Expr::Bool(*b),
        Expr::Abs(t, body) => {
            let body = match m {
                M::SubstAbsNoShift => subst(m, n + 1, s, body),
                M::SubstAbsNoIncr => subst(m, n, &shift(m, 1, s), body),
                _ => subst(m, n + 1, &shift(m, 1, s), body),
            };
            Expr::Abs(t.clone(), Box::new(body))
        }
        Expr::App(a, b) => Expr::App(Box::new(subst(m, n, s, a)), Box::new(subst(m, n, s, b))),
    }
}

/// The body `e` of a redex with its bound variable replaced by `s`.
pub fn subst_top(m: M, s: &Expr, e: &Expr) -> Expr {
    match m {
        M::SubstTopNoShift => subst(m, 0, s, e),
        M::SubstTopNoShiftBack => subst(m, 0, &shift(m, 1, s), e),
        _ => shift(m, -1, &subst(m, 0, &shift(m, 1, s), e)),
    }
}

/// One parallel reduction step.
pub fn pstep(m: M, e: &Expr) -> Expr {
    match e {
        Expr::Abs(t, body) => Expr::Abs(t.clone(), Box::new(pstep(m, body))),
        Expr::App(f, a) => match &**f {
            Expr::Abs(_, body) => subst_top(m, &pstep(m, a), &pstep(m, body)),
            _ => Expr::App(Box::new(pstep(m, f)), Box::new(pstep(m, a))),
        },
        other => other.clone(),
    }
}

fn size(e: &Expr) -> usize {
    match e {
        Expr::Var(_) | Expr::Bool(_) => 1,
        Expr::Abs(_, b) => 1 + size(b),
        Expr::App(a, b) => 1 + size(a) + size(b),
    }
}

/// Up to `n` steps, stopping at a normal form (or a term of over 10,000 nodes).
pub fn multistep(m: M, n: usize, e: &Expr) -> Expr {
    let mut e = e.clone();
    for _ in 0..n {
        let next = pstep(m, &e);
        if next == e || size(&next) > 10_000 {
            return next;
        }
        e = next;
    }
    e
}

/// The type of `e` in `ctx` (innermost binder last).
pub fn type_of(ctx: &mut Vec<Typ>, e: &Expr) -> Option<Typ> {
    match e {
        Expr::Var(n) => {
            let i = ctx.len().checked_sub(1 + usize::try_from(*n).ok()?)?;
            ctx.get(i).cloned()
        }
        Expr::Bool(_) => Some(Typ::TBool),
        Expr::Abs(t, body) => {
            ctx.push(t.clone());
            let tb = type_of(ctx, body);
            ctx.pop();
            Some(Typ::TFun(Box::new(t.clone()), Box::new(tb?)))
        }
        Expr::App(f, a) => match type_of(ctx, f)? {
            Typ::TFun(from, to) if type_of(ctx, a).as_ref() == Some(&*from) => Some(*to),
            _ => None,
        },
    }
}

/// `SinglePreserve`: a closed well-typed `e` has its type after one step (ill-typed: discard).
pub fn single_preserve(e: &Expr, m: M) -> Verdict {
    let Some(t) = type_of(&mut Vec::new(), e) else {
        return Verdict::Discard;
    };
    let out = pstep(m, e);
    let got = type_of(&mut Vec::new(), &out);
    Verdict::check(got.as_ref() == Some(&t), || {
        format!("{out:?} has type {got:?}, expected {t:?}")
    })
}

/// `MultiPreserve`: a closed well-typed `e` has its type after up to 40 steps.
pub fn multi_preserve(e: &Expr, m: M) -> Verdict {
    let Some(t) = type_of(&mut Vec::new(), e) else {
        return Verdict::Discard;
    };
    let out = multistep(m, 40, e);
    let got = type_of(&mut Vec::new(), &out);
    Verdict::check(got.as_ref() == Some(&t), || {
        format!("{out:?} has type {got:?}, expected {t:?}")
    })
}

// ------------------------------------------------------------------------ the generators

/// Most levels of branches in a drawn term.
pub const MAX_DEPTH: u32 = 5;
/// Most arrows nested in a drawn type.
pub const MAX_TYPE_DEPTH: u32 = 2;
/// Largest variable index drawn.
pub const MAX_VAR: u32 = 3;

fn fun(a: Typ, b: Typ) -> Typ {
    Typ::TFun(Box::new(a), Box::new(b))
}

fn sl_typ() -> BoxedGen<Typ> {
    recursive_tree(MAX_TYPE_DEPTH)
        .leaf(seedledger_runner::just(Typ::TBool))
        .branch(|t| (t.clone(), t).map(|(a, b)| fun(a, b)))
        .build()
}

fn sl_expr() -> BoxedGen<Expr> {
    let typ = sl_typ();
    recursive_tree(MAX_DEPTH)
        .leaf(int(0..=MAX_VAR).map(Expr::Var))
        .leaf(boolean().map(Expr::Bool))
        .branch(move |e| (typ.clone(), e).map(|(t, b)| Expr::Abs(t, Box::new(b))))
        .branch(|e| (e.clone(), e).map(|(a, b)| Expr::App(Box::new(a), Box::new(b))))
        .build()
}

fn pt_typ(depth: u32) -> BoxedStrategy<Typ> {
    if depth == 0 {
        return Just(Typ::TBool).boxed();
    }
    let inner = pt_typ(depth - 1);
    prop_oneof![
        Just(Typ::TBool),
        (inner.clone(), inner).prop_map(|(a, b)| fun(a, b)),
    ]
    .boxed()
}

/// Half leaves, half branches at each level, as the seedledger generator's description.
fn pt_expr_at(depth: u32) -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        (0..=MAX_VAR).prop_map(Expr::Var),
        any::<bool>().prop_map(Expr::Bool)
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let inner = pt_expr_at(depth - 1);
    prop_oneof![
        2 => leaf,
        1 => (pt_typ(MAX_TYPE_DEPTH), inner.clone()).prop_map(|(t, b)| Expr::Abs(t, Box::new(b))),
        1 => (inner.clone(), inner).prop_map(|(a, b)| Expr::App(Box::new(a), Box::new(b))),
    ]
    .boxed()
}

fn pt_expr() -> BoxedStrategy<Expr> {
    pt_expr_at(MAX_DEPTH)
}

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        Box::new(Spec {
            name: "StlcSinglePreserve",
            seedledger: sl_expr,
            proptest: pt_expr,
            check: single_preserve,
        }) as Box<dyn Property>,
        Box::new(Spec {
            name: "StlcMultiPreserve",
            seedledger: sl_expr,
            proptest: pt_expr,
            check: multi_preserve,
        }),
    ]
}

/// Both properties catch every mutant.
const BOTH: &[&str] = &["StlcSinglePreserve", "StlcMultiPreserve"];

/// The STLC workload.
pub const WORKLOAD: Workload = Workload {
    name: "stlc",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        ("shift_var_none", BOTH),
        ("shift_var_all", BOTH),
        ("shift_var_leq", BOTH),
        ("shift_abs_no_incr", BOTH),
        ("subst_var_all", BOTH),
        ("subst_var_none", BOTH),
        ("subst_abs_no_shift", BOTH),
        ("subst_abs_no_incr", BOTH),
        ("substTop_no_shift", BOTH),
        ("substTop_no_shift_back", BOTH),
    ],
};
