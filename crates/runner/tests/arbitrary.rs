//! `any::<T>()` and `#[derive(Arbitrary)]`: what each type draws (the same as the
//! generator it names), the spans a derived type's fields get, and shrink targets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
use support::{minimal, minimals};

use seedledger_runner::{
    Arbitrary, Gen, TestCase, any, any_f32, any_f64, any_int, boolean, btree_map, btree_set,
    char_any, int, option, string, string_matching, vec_of,
};
use std::collections::{BTreeMap, BTreeSet};

/// The draw and the recorded choices of `g` for `seed`.
fn recorded<G: Gen>(g: &G, seed: u64) -> (String, Vec<u64>) {
    let mut tc = TestCase::recording(seed);
    let value = format!("{:?}", tc.draw(g));
    (value, tc.into_record().choices)
}

/// `a` and `b` draw the same values from the same choices for many seeds.
fn same<A: Gen, B: Gen>(a: &A, b: &B) {
    for seed in 0..300 {
        assert_eq!(recorded(a, seed), recorded(b, seed), "seed {seed}");
    }
}

#[test]
fn any_draws_what_the_generator_it_names_draws() {
    same(&any::<u8>(), &any_int::<u8>());
    same(&any::<i128>(), &any_int::<i128>());
    same(&any::<usize>(), &any_int::<usize>());
    same(&any::<bool>(), &boolean());
    same(&any::<char>(), &char_any());
    same(&any::<f64>(), &any_f64());
    same(&any::<f32>(), &any_f32());
    same(&any::<String>(), &string());
    same(&any::<Vec<u16>>(), &vec_of(any_int::<u16>()));
    same(&any::<Option<i8>>(), &option(any_int::<i8>()));
    same(&any::<(u8, bool)>(), &(any_int::<u8>(), boolean()));
    same(&any::<Box<u32>>(), &any_int::<u32>().map(Box::new));
    same(&any::<BTreeSet<u8>>(), &btree_set(any_int::<u8>(), ..));
    same(
        &any::<BTreeMap<u8, bool>>(),
        &btree_map(any_int::<u8>(), boolean(), ..),
    );
    same(
        &any::<[u8; 3]>(),
        &(any_int::<u8>(), any_int::<u8>(), any_int::<u8>()).map(|(a, b, c)| [a, b, c]),
    );
    same(&any::<()>(), &seedledger_runner::just(()));
    assert_eq!(any::<u8>().label(), "int");
    assert_eq!(any::<Vec<u8>>().label(), "vec");
    assert_eq!(any::<Box<f64>>().label(), "f64");
}

fn short_names() -> impl Gen<Value = String> {
    string_matching("[a-z]{1,4}").expect("a valid pattern")
}

#[derive(Debug, Clone, PartialEq, Arbitrary)]
struct Point {
    x: i32,
    #[seedledger(gen = "int(0..=9u8)")]
    y: u8,
    #[seedledger(with = short_names)]
    name: String,
}

#[derive(Debug, Clone, PartialEq, Arbitrary)]
struct Pair(u8, bool);

#[derive(Debug, Clone, PartialEq, Arbitrary)]
struct Unit;

#[derive(Debug, Clone, PartialEq, Arbitrary)]
enum Shape {
    Dot,
    Circle { r: u16 },
    Rect(u8, u8),
}

#[derive(Debug, Clone, PartialEq, Arbitrary)]
struct Wrapper<T> {
    inner: T,
    many: Vec<T>,
    r#type: Option<Shape>,
}

#[test]
fn derived_types_draw_every_field_and_variant() {
    let points: Vec<Point> = (0..500)
        .map(|s| TestCase::random(s).draw(&any::<Point>()))
        .collect();
    assert!(points.iter().all(|p| p.y <= 9));
    assert!(
        points
            .iter()
            .all(|p| (1..=4).contains(&p.name.len())
                && p.name.chars().all(|c| c.is_ascii_lowercase()))
    );
    assert!(points.iter().any(|p| p.x < 0) && points.iter().any(|p| p.x > 1000));

    let shapes: Vec<Shape> = (0..300)
        .map(|s| TestCase::random(s).draw(&any::<Shape>()))
        .collect();
    assert!(shapes.contains(&Shape::Dot));
    assert!(shapes.iter().any(|s| matches!(s, Shape::Circle { .. })));
    assert!(shapes.iter().any(|s| matches!(s, Shape::Rect(..))));
    assert_eq!(TestCase::random(3).draw(&any::<Unit>()), Unit);

    // The variant index comes first, the first variant at 0.
    assert_eq!(
        TestCase::replay(vec![0], false).draw(&any::<Shape>()),
        Shape::Dot
    );
    assert_eq!(
        TestCase::replay(vec![2, 3, 1], false).draw(&any::<Shape>()),
        Shape::Rect(3, 1)
    );
    assert_eq!(
        TestCase::replay(vec![5, 1], false).draw(&any::<Pair>()),
        Pair(5, true)
    );

    let w: Wrapper<Pair> = TestCase::random(9).draw(&any::<Wrapper<Pair>>());
    assert!(w.many.len() <= seedledger_runner::DEFAULT_MAX_SIZE);
    assert_eq!(any::<Wrapper<Pair>>().label(), "Wrapper");
}

#[test]
fn each_field_is_a_span_named_after_it_inside_its_generators_span() {
    let mut tc = TestCase::replay(vec![2, 7, 0, 0], false);
    let p = tc.draw(&any::<Point>());
    assert_eq!(
        p,
        Point {
            x: -1,
            y: 7,
            name: "a".into()
        }
    );
    let spans: Vec<(&str, u32, u32, u32)> = tc
        .into_record()
        .spans
        .iter()
        .map(|s| (s.label, s.start, s.end, s.depth))
        .collect();
    assert_eq!(
        spans[..7],
        [
            ("Point", 0, 4, 0),
            ("int", 0, 1, 1),
            ("x", 0, 1, 2),
            ("int", 1, 2, 1),
            ("y", 1, 2, 2),
            ("string_matching", 2, 4, 1),
            ("name", 2, 4, 2),
        ]
    );
}

#[test]
fn derived_types_shrink_field_by_field_toward_the_first_variant() {
    assert_eq!(minimal(any::<Shape>(), |_| true), "Dot");
    assert_eq!(
        minimal(any::<Shape>(), |s| matches!(s, Shape::Rect(..))),
        "Rect(0, 0)"
    );
    assert_eq!(
        minimal(any::<Point>(), |p| p.x > 100),
        "Point { x: 101, y: 0, name: \"a\" }"
    );
    // Two fields of one kind are siblings of one label: value moves between them.
    assert_eq!(
        minimal(
            any::<Shape>(),
            |s| matches!(s, Shape::Rect(a, b) if u16::from(*a) + u16::from(*b) >= 10)
        ),
        "Rect(0, 10)"
    );
    assert_eq!(
        minimal(any::<Wrapper<Pair>>(), |w| w.many.len() >= 2),
        "Wrapper { inner: Pair(0, false), many: [Pair(0, false), Pair(0, false)], type: None }"
    );
}

#[derive(Debug, Clone, PartialEq, Arbitrary)]
struct Three {
    a: u8,
    b: u8,
    c: u8,
}

#[test]
fn fields_of_one_kind_shrink_together_as_a_tuple_does() {
    // The outer span of each field carries its generator's label, so the pair passes see
    // `a`, `b`, `c` as siblings of one kind. (With the field name outside instead, 50 starts
    // ended on 49 different local minima when we measured it.)
    let sum = |t: &Three| u16::from(t.a) + u16::from(t.b) + u16::from(t.c);
    let results = minimals(any::<Three>(), move |t| sum(t) >= 300, 30);
    assert_eq!(
        results.keys().collect::<Vec<_>>(),
        ["Three { a: 0, b: 45, c: 255 }"],
        "{results:?}"
    );
    let tuple = minimals(
        any::<(u8, u8, u8)>(),
        |t| u16::from(t.0) + u16::from(t.1) + u16::from(t.2) >= 300,
        30,
    );
    assert_eq!(tuple.keys().collect::<Vec<_>>(), ["(0, 45, 255)"]);
}
