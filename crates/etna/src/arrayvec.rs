//! A fixed-capacity vector modelled on ETNA's `arrayvec` workload (alpaylan/arrayvec-etna):
//! our own `ArrayVec` of capacity [`CAP`] with `try_push`, `try_insert`, `try_extend` and
//! `pop` (overflow is an error value where arrayvec panics), and the two historical bugs:
//!
//! * `extend_silent_truncate` (after a554ea2, ".extend() should panic when out of
//!   capacity"): extending past the capacity stops silently at the capacity. Caught by
//!   `ArrayVecExtendOverflow` and by the model-based `ArrayVecOpsModel`.
//! * `insert_bound_off_by_one` (after 2a1378d, "Allow insertion at index == length"):
//!   inserting at the length (an append) is refused as out of bounds. Caught by
//!   `ArrayVecInsertAtLength`, `ArrayVecInsertModel` and `ArrayVecOpsModel`.

use crate::bst::spec;
use crate::{Mutant, Property, Spec, Verdict, Workload};
use proptest::prelude::*;
use seedledger_runner::{BoxedGen, Gen, any_int, int, one_of, vec};

/// The capacity.
pub const CAP: usize = 4;

/// The mutants (variant names in [`Mutant::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// No mutant.
    Base,
    /// `extend` truncates at the capacity instead of failing.
    ExtendSilentTruncate,
    /// `insert` at the length is refused.
    InsertBoundOffByOne,
}

impl Mutant for M {
    const BASE: M = M::Base;
    const ALL: &'static [(&'static str, M)] = &[
        ("extend_silent_truncate", M::ExtendSilentTruncate),
        ("insert_bound_off_by_one", M::InsertBoundOffByOne),
    ];
}

/// Why an operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The vector is full.
    Capacity,
    /// The index is past the length.
    OutOfBounds,
}

/// A vector of at most [`CAP`] values, stored inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayVec {
    items: [i32; CAP],
    len: usize,
}

impl ArrayVec {
    /// The empty vector.
    pub fn new() -> ArrayVec {
        ArrayVec {
            items: [0; CAP],
            len: 0,
        }
    }

    /// The values, in order.
    pub fn as_slice(&self) -> &[i32] {
        &self.items[..self.len]
    }

    /// Appends `x`, or refuses when full.
    pub fn try_push(&mut self, x: i32) -> Result<(), Refused> {
        if self.len == CAP {
            return Err(Refused::Capacity);
        }
        self.items[self.len] = x;
        self.len += 1;
        Ok(())
    }

    /// Inserts `x` at `index` (`index == len` appends).
    pub fn try_insert(&mut self, m: M, index: usize, x: i32) -> Result<(), Refused> {
        let out_of_bounds = if m == M::InsertBoundOffByOne {
            index >= self.len
        } else {
            index > self.len
        };
        if out_of_bounds {
            return Err(Refused::OutOfBounds);
        }
        if self.len == CAP {
            return Err(Refused::Capacity);
        }
        self.items.copy_within(index..self.len, index + 1);
        self.items[index] = x;
        self.len += 1;
        Ok(())
    }

    /// Appends every value of `xs`, or refuses (changing nothing) when they do not fit.
    pub fn try_extend(&mut self, m: M, xs: &[i32]) -> Result<(), Refused> {
        if self.len + xs.len() > CAP && m != M::ExtendSilentTruncate {
            return Err(Refused::Capacity);
        }
        for x in xs {
            if self.try_push(*x).is_err() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Removes the last value.
    pub fn pop(&mut self) -> Option<i32> {
        self.len = self.len.checked_sub(1)?;
        Some(self.items[self.len])
    }
}

impl Default for ArrayVec {
    fn default() -> ArrayVec {
        ArrayVec::new()
    }
}

fn from_slice(xs: &[i32]) -> ArrayVec {
    let mut v = ArrayVec::new();
    for x in xs.iter().take(CAP) {
        let _ = v.try_push(*x);
    }
    v
}

/// One operation of the model-based property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `try_push(x)`.
    Push(i32),
    /// `try_insert(index, x)`.
    Insert(usize, i32),
    /// `try_extend(xs)`.
    Extend(Vec<i32>),
    /// `pop()`.
    Pop,
}

fn extend_overflow((start, xs): &(Vec<i32>, Vec<i32>), m: M) -> Verdict {
    let mut v = from_slice(start);
    let before = v.clone();
    let result = v.try_extend(m, xs);
    if before.len + xs.len() > CAP {
        return Verdict::check(result.is_err() && v == before, || {
            format!(
                "extending {} by {} gave {result:?} and {:?}",
                before.len,
                xs.len(),
                v.as_slice()
            )
        });
    }
    let want: Vec<i32> = before.as_slice().iter().chain(xs).copied().collect();
    Verdict::check(result.is_ok() && v.as_slice() == want, || {
        format!("{:?} != {want:?}", v.as_slice())
    })
}

fn insert_at_length((start, x): &(Vec<i32>, i32), m: M) -> Verdict {
    let mut v = from_slice(&start[..start.len().min(CAP - 1)]);
    let len = v.len;
    let result = v.try_insert(m, len, *x);
    Verdict::check(result.is_ok() && v.as_slice().last() == Some(x), || {
        format!("insert at {len}: {result:?}, {:?}", v.as_slice())
    })
}

fn insert_model((start, index, x): &(Vec<i32>, usize, i32), m: M) -> Verdict {
    let mut v = from_slice(start);
    let mut model = v.as_slice().to_vec();
    let result = v.try_insert(m, *index, *x);
    let fits = *index <= model.len() && model.len() < CAP;
    if fits {
        model.insert(*index, *x);
    }
    Verdict::check(result.is_ok() == fits && v.as_slice() == model, || {
        format!(
            "insert {x} at {index}: {result:?}, {:?}, expected {model:?}",
            v.as_slice()
        )
    })
}

// A property's input is the generated value itself (`check: fn(&I, M)`), so `&Vec` / `&String`.
#[allow(clippy::ptr_arg)]
fn ops_model(ops: &Vec<Op>, m: M) -> Verdict {
    let (mut v, mut model) = (ArrayVec::new(), Vec::new());
    for op in ops {
        let ok = match op {
            Op::Push(x) => {
                v.try_push(*x).is_ok() == (model.len() < CAP) && {
                    if model.len() < CAP {
                        model.push(*x);
                    }
                    true
                }
            }
            Op::Insert(i, x) => {
                let fits = *i <= model.len() && model.len() < CAP;
                if fits {
                    model.insert(*i, *x);
                }
                v.try_insert(m, *i, *x).is_ok() == fits
            }
            Op::Extend(xs) => {
                let fits = model.len() + xs.len() <= CAP;
                if fits {
                    model.extend(xs);
                }
                v.try_extend(m, xs).is_ok() == fits
            }
            Op::Pop => v.pop() == model.pop(),
        };
        if !ok || v.as_slice() != model {
            return Verdict::Fail(format!(
                "after {op:?}: {:?}, expected {model:?}",
                v.as_slice()
            ));
        }
    }
    Verdict::Pass
}

fn sl_values() -> BoxedGen<Vec<i32>> {
    vec(any_int::<i32>(), 0..=CAP).boxed()
}

fn pt_values() -> BoxedStrategy<Vec<i32>> {
    proptest::collection::vec(any::<i32>(), 0..=CAP).boxed()
}

fn sl_more() -> BoxedGen<Vec<i32>> {
    vec(any_int::<i32>(), 0..=2 * CAP).boxed()
}

fn pt_more() -> BoxedStrategy<Vec<i32>> {
    proptest::collection::vec(any::<i32>(), 0..=2 * CAP).boxed()
}

fn sl_value() -> BoxedGen<i32> {
    any_int::<i32>().boxed()
}

fn pt_value() -> BoxedStrategy<i32> {
    any::<i32>().boxed()
}

fn sl_index() -> BoxedGen<usize> {
    int(0..=CAP + 1).boxed()
}

fn pt_index() -> BoxedStrategy<usize> {
    (0..=CAP + 1).boxed()
}

fn sl_ops() -> BoxedGen<Vec<Op>> {
    let op = one_of(vec![
        sl_value().map(Op::Push).boxed(),
        (sl_index(), sl_value())
            .map(|(i, x)| Op::Insert(i, x))
            .boxed(),
        vec(any_int::<i32>(), 0..=CAP).map(Op::Extend).boxed(),
        seedledger_runner::just(Op::Pop).boxed(),
    ]);
    vec(op, 0..=10).boxed()
}

fn pt_ops() -> BoxedStrategy<Vec<Op>> {
    let op = prop_oneof![
        any::<i32>().prop_map(Op::Push),
        (pt_index(), any::<i32>()).prop_map(|(i, x)| Op::Insert(i, x)),
        proptest::collection::vec(any::<i32>(), 0..=CAP).prop_map(Op::Extend),
        Just(Op::Pop),
    ];
    proptest::collection::vec(op, 0..=10).boxed()
}

fn properties() -> Vec<Box<dyn Property>> {
    vec![
        spec!(
            "ArrayVecExtendOverflow",
            extend_overflow,
            (sl_values, sl_more),
            (pt_values, pt_more)
        ),
        spec!(
            "ArrayVecInsertAtLength",
            insert_at_length,
            (sl_values, sl_value),
            (pt_values, pt_value)
        ),
        spec!(
            "ArrayVecInsertModel",
            insert_model,
            (sl_values, sl_index, sl_value),
            (pt_values, pt_index, pt_value)
        ),
        spec!("ArrayVecOpsModel", ops_model, (sl_ops), (pt_ops)),
    ]
}

/// The arrayvec workload.
pub const WORKLOAD: Workload = Workload {
    name: "arrayvec",
    properties,
    mutants: crate::mutant_names::<M>,
    tasks: &[
        (
            "extend_silent_truncate",
            &["ArrayVecExtendOverflow", "ArrayVecOpsModel"],
        ),
        (
            "insert_bound_off_by_one",
            &[
                "ArrayVecInsertAtLength",
                "ArrayVecInsertModel",
                "ArrayVecOpsModel",
            ],
        ),
    ],
};
