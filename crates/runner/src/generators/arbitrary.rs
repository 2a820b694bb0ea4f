//! `any::<T>()`: a default generator per type, the [`Arbitrary`] trait, and [`labelled`],
//! the named sub-draw `#[derive(Arbitrary)]` (crate `seedledger-derive`) draws each field
//! through.
//!
//! Every implementation here draws exactly what the generator it names draws (`any::<u8>()`
//! is `any_int::<u8>()`, `any::<Vec<T>>()` is `vec_of(any::<T>())`), in a span with that
//! generator's label, so a value means the same whichever way it is asked for.

use crate::case::TestCase;
use crate::generators::Gen;
use crate::generators::collections::{btree_map, btree_set, option, string, vec_of};
use crate::generators::float::{any_f32, any_f64};
use crate::generators::integers::any_int;
use crate::generators::scalars::{boolean, char_any};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::marker::PhantomData;

/// Types with a default generator, drawn by [`any`]. Implemented for the integer types,
/// `bool`, `char`, `f32`, `f64`, `String`, `()`, and for `Vec`, `Option`, `Box`, arrays,
/// `BTreeSet`, `BTreeMap` and tuples (up to six) of such types; `#[derive(Arbitrary)]`
/// implements it for structs and enums.
pub trait Arbitrary: Debug + Sized {
    /// Draws a value (sub-draws through [`TestCase::draw`], so they get spans).
    fn arbitrary(tc: &mut TestCase) -> Self;

    /// The span label of this type's draws: the label of the generator it stands for, or
    /// the type's name for a derived implementation.
    fn label() -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// The default generator of `T`: `tc.draw(&any::<u32>())`, `any::<Vec<String>>()`,
/// `any::<MyStruct>()` for a type that derives [`Arbitrary`].
pub fn any<T: Arbitrary>() -> Any<T> {
    Any(PhantomData)
}

/// What [`any`] returns.
pub struct Any<T>(PhantomData<fn() -> T>);

impl<T> Clone for Any<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Any<T> {}

impl<T> Debug for Any<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "any::<{}>()", std::any::type_name::<T>())
    }
}

impl<T: Arbitrary> Gen for Any<T> {
    type Value = T;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> T {
        T::arbitrary(tc)
    }
    fn label(&self) -> &'static str {
        T::label()
    }
}

/// `g`'s draws under a name: two spans, the outer one with `g`'s own label and, as its only
/// child, one labelled `name` around `g`'s draws. The derive draws each field as
/// `labelled("field_name", g)`. The outer span keeps what structural shrink passes match
/// on (sibling fields of one kind can be sorted, and value moved between them, as between
/// the parts of a tuple; a boxed field of a recursive type matches its ancestors), and the
/// inner one names the draw.
pub fn labelled<G: Gen>(name: &'static str, g: G) -> Labelled<G> {
    Labelled { name, inner: g }
}

/// What [`labelled`] returns.
#[derive(Debug, Clone, Copy)]
pub struct Labelled<G> {
    name: &'static str,
    inner: G,
}

impl<G: Gen> Gen for Labelled<G> {
    type Value = G::Value;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> G::Value {
        tc.draw(&Named(self))
    }
    fn label(&self) -> &'static str {
        self.inner.label()
    }
}

/// The inner span of [`Labelled`].
struct Named<'a, G>(&'a Labelled<G>);

impl<G: Gen> Gen for Named<'_, G> {
    type Value = G::Value;
    #[inline]
    fn generate(&self, tc: &mut TestCase) -> G::Value {
        self.0.inner.generate(tc)
    }
    fn label(&self) -> &'static str {
        self.0.name
    }
}

macro_rules! arbitrary_via {
    ($($t:ty => $g:expr),* $(,)?) => {$(
        impl Arbitrary for $t {
            #[inline]
            fn arbitrary(tc: &mut TestCase) -> Self {
                $g.generate(tc)
            }
            fn label() -> &'static str {
                $g.label()
            }
        }
    )*};
}

arbitrary_via!(
    u8 => any_int::<u8>(),
    u16 => any_int::<u16>(),
    u32 => any_int::<u32>(),
    u64 => any_int::<u64>(),
    u128 => any_int::<u128>(),
    usize => any_int::<usize>(),
    i8 => any_int::<i8>(),
    i16 => any_int::<i16>(),
    i32 => any_int::<i32>(),
    i64 => any_int::<i64>(),
    i128 => any_int::<i128>(),
    isize => any_int::<isize>(),
    bool => boolean(),
    char => char_any(),
    f32 => any_f32(),
    f64 => any_f64(),
    String => string(),
);

impl Arbitrary for () {
    fn arbitrary(_tc: &mut TestCase) -> Self {}
    fn label() -> &'static str {
        "unit"
    }
}

impl<T: Arbitrary> Arbitrary for Vec<T> {
    fn arbitrary(tc: &mut TestCase) -> Self {
        vec_of(any::<T>()).generate(tc)
    }
    fn label() -> &'static str {
        "vec"
    }
}

impl<T: Arbitrary> Arbitrary for Option<T> {
    fn arbitrary(tc: &mut TestCase) -> Self {
        option(any::<T>()).generate(tc)
    }
    fn label() -> &'static str {
        "option"
    }
}

/// A box draws what its content draws, with its content's label (so a recursive type's
/// boxed children match it in structural passes).
impl<T: Arbitrary> Arbitrary for Box<T> {
    fn arbitrary(tc: &mut TestCase) -> Self {
        Box::new(T::arbitrary(tc))
    }
    fn label() -> &'static str {
        T::label()
    }
}

/// `N` elements, each in its own span.
impl<T: Arbitrary, const N: usize> Arbitrary for [T; N] {
    fn arbitrary(tc: &mut TestCase) -> Self {
        std::array::from_fn(|_| tc.draw(&any::<T>()))
    }
    fn label() -> &'static str {
        "array"
    }
}

impl<T: Arbitrary + Ord> Arbitrary for BTreeSet<T> {
    fn arbitrary(tc: &mut TestCase) -> Self {
        btree_set(any::<T>(), ..).generate(tc)
    }
    fn label() -> &'static str {
        "vec"
    }
}

impl<K: Arbitrary + Ord, V: Arbitrary> Arbitrary for BTreeMap<K, V> {
    fn arbitrary(tc: &mut TestCase) -> Self {
        btree_map(any::<K>(), any::<V>(), ..).generate(tc)
    }
    fn label() -> &'static str {
        "vec"
    }
}

macro_rules! arbitrary_tuple {
    ($($name:ident),*) => {
        impl<$($name: Arbitrary),*> Arbitrary for ($($name,)*) {
            fn arbitrary(tc: &mut TestCase) -> Self {
                ($(tc.draw(&any::<$name>()),)*)
            }
            fn label() -> &'static str {
                "tuple"
            }
        }
    };
}
arbitrary_tuple!(A);
arbitrary_tuple!(A, B);
arbitrary_tuple!(A, B, C);
arbitrary_tuple!(A, B, C, D);
arbitrary_tuple!(A, B, C, D, E);
arbitrary_tuple!(A, B, C, D, E, F);
