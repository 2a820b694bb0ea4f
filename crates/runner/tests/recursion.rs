//! Recursive generators: how a tree's encoding decides how well it shrinks. One expression
//! type with five node kinds, a corpus of failing properties with their known minimal
//! trees, and several ways of writing the same generator; `measure_recursive_encodings`
//! (ignored: run it with `--ignored --nocapture`) prints the table that the book's
//! recursion guidance (`book/src/writing/recursive.md`) quotes, and the other tests hold the recommended encodings to it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::engine::{Outcome, evaluate, execute, shrink};
use seedledger_runner::{
    BoxedGen, Fixture, Gen, PropError, Property, ShrinkConfig, TestCase, from_fn, int, one_of,
    recursive, recursive_tree,
};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Num(u8),
    Neg(Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
}

use Expr::*;

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// The value, or `None` on a division by zero.
fn eval(e: &Expr) -> Option<i64> {
    Some(match e {
        Num(n) => i64::from(*n),
        Neg(a) => eval(a)?.wrapping_neg(),
        Add(x, y) => eval(x)?.wrapping_add(eval(y)?),
        Mul(x, y) => eval(x)?.wrapping_mul(eval(y)?),
        Div(x, y) => match eval(y)? {
            0 => return None,
            d => eval(x)?.wrapping_div(d),
        },
    })
}

fn children(e: &Expr) -> Vec<&Expr> {
    match e {
        Num(_) => vec![],
        Neg(a) => vec![a],
        Add(x, y) | Mul(x, y) | Div(x, y) => vec![x, y],
    }
}

fn any_node(e: &Expr, pred: &dyn Fn(&Expr) -> bool) -> bool {
    pred(e) || children(e).into_iter().any(|c| any_node(c, pred))
}

fn count(e: &Expr, pred: &dyn Fn(&Expr) -> bool) -> usize {
    usize::from(pred(e))
        + children(e)
            .into_iter()
            .map(|c| count(c, pred))
            .sum::<usize>()
}

fn depth(e: &Expr) -> usize {
    1 + children(e).into_iter().map(depth).max().unwrap_or(0)
}

/// A failing property (the tree fails when `fails` holds) and its minimal failing tree.
struct Case {
    name: &'static str,
    fails: fn(&Expr) -> bool,
    ideal: Expr,
}

fn corpus() -> Vec<Case> {
    vec![
        Case {
            // Hypothesis' "calculator" challenge: a division by a zero that is not a literal.
            name: "divides by a computed zero",
            fails: |e| {
                !any_node(e, &|n| matches!(n, Div(_, d) if **d == Num(0))) && eval(e).is_none()
            },
            ideal: Div(b(Num(0)), b(Neg(b(Num(0))))),
        },
        Case {
            name: "double negation",
            fails: |e| any_node(e, &|n| matches!(n, Neg(a) if matches!(**a, Neg(_)))),
            ideal: Neg(b(Neg(b(Num(0))))),
        },
        Case {
            name: "depth 4",
            fails: |e| depth(e) >= 4,
            ideal: Neg(b(Neg(b(Neg(b(Num(0))))))),
        },
        Case {
            name: "a product under a negation",
            fails: |e| any_node(e, &|n| matches!(n, Neg(a) if matches!(**a, Mul(..)))),
            ideal: Neg(b(Mul(b(Num(0)), b(Num(0))))),
        },
        Case {
            name: "a sum and a quotient",
            fails: |e| {
                any_node(e, &|n| matches!(n, Add(..))) && any_node(e, &|n| matches!(n, Div(..)))
            },
            ideal: Add(b(Num(0)), b(Div(b(Num(0)), b(Num(0))))),
        },
        Case {
            name: "a quotient of nine",
            fails: |e| any_node(e, &|n| matches!(n, Div(x, _) if **x == Num(9))),
            ideal: Div(b(Num(9)), b(Num(0))),
        },
        Case {
            name: "two negations",
            fails: |e| count(e, &|n| matches!(n, Neg(_))) >= 2,
            ideal: Neg(b(Neg(b(Num(0))))),
        },
        Case {
            name: "a nine right of a quotient",
            fails: |e| {
                any_node(
                    e,
                    &|n| matches!(n, Div(_, y) if any_node(y, &|m| *m == Num(9))),
                )
            },
            ideal: Div(b(Num(0)), b(Num(9))),
        },
        Case {
            name: "a sum right of a product",
            fails: |e| any_node(e, &|n| matches!(n, Mul(_, y) if matches!(**y, Add(..)))),
            ideal: Mul(b(Num(0)), b(Add(b(Num(0)), b(Num(0))))),
        },
        Case {
            name: "a negated nine",
            fails: |e| any_node(e, &|n| matches!(n, Neg(a) if **a == Num(9))),
            ideal: Neg(b(Num(9))),
        },
        Case {
            name: "a nine",
            fails: |e| any_node(e, &|n| *n == Num(9)),
            ideal: Num(9),
        },
    ]
}

const DEPTH: u32 = 8;

fn num() -> BoxedGen<Expr> {
    int(0..=9u8).map(Num).boxed()
}

fn neg(e: BoxedGen<Expr>) -> BoxedGen<Expr> {
    e.map(|a| Neg(b(a))).boxed()
}

fn binary(e: BoxedGen<Expr>, node: fn(Box<Expr>, Box<Expr>) -> Expr) -> BoxedGen<Expr> {
    (e.clone(), e).map(move |(x, y)| node(b(x), b(y))).boxed()
}

/// `recursive_tree`: one kind choice per node, leaves first, every child a labelled span.
fn flat_tree() -> BoxedGen<Expr> {
    recursive_tree(DEPTH)
        .leaf(int(0..=9u8).map(Num))
        .branch(|e| e.map(|a| Neg(b(a))))
        .branch(|e| binary(e, Add))
        .branch(|e| binary(e, Mul))
        .branch(|e| binary(e, Div))
        .build()
}

/// `recursive` with a `one_of` of the branch kinds: leaf or branch first, then which.
fn leaf_or_branch_then_kind() -> BoxedGen<Expr> {
    recursive(DEPTH, num(), |e| {
        one_of(vec![
            neg(e.clone()),
            binary(e.clone(), Add),
            binary(e.clone(), Mul),
            binary(e, Div),
        ])
        .boxed()
    })
}

/// A hand-written recursive function, each child drawn through a labelled `from_fn`.
fn hand_labelled(tc: &mut TestCase, depth: u32) -> Expr {
    let child =
        |tc: &mut TestCase| tc.draw(&from_fn("expr", move |tc| hand_labelled(tc, depth - 1)));
    hand_written(tc, depth, &child)
}

/// The same function with each child drawn by a plain call: no span per child.
fn hand_unlabelled(tc: &mut TestCase, depth: u32) -> Expr {
    hand_written(tc, depth, &|tc: &mut TestCase| {
        hand_unlabelled(tc, depth - 1)
    })
}

fn hand_written(tc: &mut TestCase, depth: u32, child: &dyn Fn(&mut TestCase) -> Expr) -> Expr {
    let top = if depth == 0 { 0 } else { 4 };
    match tc.draw(&int(0..=top)) {
        0 => Num(tc.draw(&int(0..=9u8))),
        1 => Neg(b(child(tc))),
        2 => Add(b(child(tc)), b(child(tc))),
        3 => Mul(b(child(tc)), b(child(tc))),
        _ => Div(b(child(tc)), b(child(tc))),
    }
}

/// Hand-written over raw choices (`tc.choice`, no span of their own); children either in a
/// labelled `from_fn` or by plain calls.
fn raw_labelled(tc: &mut TestCase, depth: u32) -> Expr {
    let child =
        |tc: &mut TestCase| tc.draw(&from_fn("expr", move |tc| raw_labelled(tc, depth - 1)));
    raw_written(tc, depth, &child)
}

fn raw_unlabelled(tc: &mut TestCase, depth: u32) -> Expr {
    raw_written(tc, depth, &|tc: &mut TestCase| {
        raw_unlabelled(tc, depth - 1)
    })
}

fn raw_written(tc: &mut TestCase, depth: u32, child: &dyn Fn(&mut TestCase) -> Expr) -> Expr {
    match tc.choice(if depth == 0 { 0 } else { 4 }) {
        0 => Num(tc.choice(9) as u8),
        1 => Neg(b(child(tc))),
        2 => Add(b(child(tc)), b(child(tc))),
        3 => Mul(b(child(tc)), b(child(tc))),
        _ => Div(b(child(tc)), b(child(tc))),
    }
}

/// Hand-written with the leaf as the last kind: the simplest choice is a branch.
fn hand_leaf_last(tc: &mut TestCase, depth: u32) -> Expr {
    let child =
        |tc: &mut TestCase| tc.draw(&from_fn("expr", move |tc| hand_leaf_last(tc, depth - 1)));
    if depth == 0 {
        return Num(tc.draw(&int(0..=9u8)));
    }
    match tc.draw(&int(0..=4u8)) {
        0 => Neg(b(child(tc))),
        1 => Add(b(child(tc)), b(child(tc))),
        2 => Mul(b(child(tc)), b(child(tc))),
        3 => Div(b(child(tc)), b(child(tc))),
        _ => Num(tc.draw(&int(0..=9u8))),
    }
}

/// Level by level by hand, with the bare leaf at the bottom: the bottom level records no
/// kind, so a subtree's choices mean something else one level up or down.
fn naive_levels(depth: u32) -> BoxedGen<Expr> {
    if depth == 0 {
        return num();
    }
    let below = naive_levels(depth - 1);
    one_of(vec![
        num(),
        neg(below.clone()),
        binary(below.clone(), Add),
        binary(below.clone(), Mul),
        binary(below, Div),
    ])
    .boxed()
}

type Encoding = (&'static str, fn() -> BoxedGen<Expr>);

fn encodings() -> Vec<Encoding> {
    vec![
        ("recursive_tree", flat_tree),
        ("recursive + one_of of branches", leaf_or_branch_then_kind),
        ("hand-written, labelled from_fn children", || {
            from_fn("expr", |tc| hand_labelled(tc, DEPTH)).boxed()
        }),
        ("hand-written, children unlabelled", || {
            from_fn("expr", |tc| hand_unlabelled(tc, DEPTH)).boxed()
        }),
        ("level by level, bare leaf at the bottom", || {
            naive_levels(DEPTH)
        }),
        ("raw choices, labelled from_fn children", || {
            from_fn("expr", |tc| raw_labelled(tc, DEPTH)).boxed()
        }),
        ("raw choices, children unlabelled", || {
            from_fn("expr", |tc| raw_unlabelled(tc, DEPTH)).boxed()
        }),
        ("hand-written, leaf last", || {
            from_fn("expr", |tc| hand_leaf_last(tc, DEPTH)).boxed()
        }),
        ("depth drawn first, then levels", || {
            int(0..=DEPTH).flat_map(naive_levels).boxed()
        }),
    ]
}

/// One encoding on one case: from each of the first `starts` failing seeds, one shrink.
#[derive(Debug)]
struct Row {
    starts: usize,
    ideal: usize,
    results: BTreeMap<String, usize>,
    evaluations: Vec<u64>,
}

fn measure(g: BoxedGen<Expr>, case: &Case, starts: usize) -> Row {
    let fails = case.fails;
    let property = Property::from_fn("tree", move |tc, _| {
        let e = tc.draw(&g);
        if fails(&e) {
            return Err(PropError::assertion("tree", format!("{e:?}")));
        }
        Ok(())
    });
    let fixture = Fixture::new(Vec::new());
    let seeds = (0..50_000).filter(|&seed| {
        matches!(
            execute(&property, &mut TestCase::random(seed), &fixture),
            Outcome::Fail(_)
        )
    });
    let ideal = format!("{:?}", case.ideal);
    let mut row = Row {
        starts: 0,
        ideal: 0,
        results: BTreeMap::new(),
        evaluations: Vec::new(),
    };
    for seed in seeds.take(starts) {
        let eval = evaluate(&property, TestCase::recording(seed), &fixture);
        let signature = eval.outcome.failure().unwrap().signature.clone();
        let pass = shrink(
            &property,
            &fixture,
            &eval.record.choices,
            &signature,
            &ShrinkConfig::default(),
        );
        let got = pass.drawn.join("; ");
        row.starts += 1;
        row.ideal += usize::from(got == ideal);
        *row.results.entry(got).or_insert(0) += 1;
        row.evaluations.push(pass.evaluations);
    }
    row.evaluations.sort_unstable();
    row
}

fn median(xs: &[u64]) -> u64 {
    xs.get(xs.len() / 2).copied().unwrap_or(0)
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn measure_recursive_encodings() {
    const STARTS: usize = 100;
    println!("| encoding | case | ideal | distinct | median evals |");
    println!("|---|---|---|---|---|");
    for (name, encoding) in encodings() {
        let (mut ideal, mut total) = (0, 0);
        for case in corpus() {
            let row = measure(encoding(), &case, STARTS);
            ideal += row.ideal;
            total += row.starts;
            println!(
                "| {name} | {} | {}/{} | {} | {} |",
                case.name,
                row.ideal,
                row.starts,
                row.results.len(),
                median(&row.evaluations)
            );
        }
        println!("| {name} | **all** | {ideal}/{total} | | |");
    }
}

/// Cases the recommended encodings must shrink to their minimal tree from every start: all
/// but "a sum and a quotient", whose second local minimum (`Div(Num(0), Add(..))`) needs a
/// parent and child swapped, which no shrink pass does yet.
fn structural_cases() -> Vec<Case> {
    corpus()
        .into_iter()
        .filter(|c| c.name != "a sum and a quotient")
        .collect()
}

#[test]
fn recursive_tree_shrinks_every_structural_case_to_its_minimal_tree() {
    for case in structural_cases() {
        let row = measure(flat_tree(), &case, 25);
        assert_eq!(row.starts, 25, "{}", case.name);
        assert_eq!(row.ideal, row.starts, "{}: {:?}", case.name, row.results);
    }
}

#[test]
fn recursive_tree_draws_every_kind_within_its_depth() {
    let g = flat_tree();
    let trees: Vec<Expr> = (0..2_000)
        .map(|seed| TestCase::random(seed).draw(&g))
        .collect();
    let root_kinds: BTreeMap<&str, usize> = trees.iter().fold(BTreeMap::new(), |mut m, e| {
        let kind = match e {
            Num(_) => "num",
            Neg(_) => "neg",
            Add(..) => "add",
            Mul(..) => "mul",
            Div(..) => "div",
        };
        *m.entry(kind).or_insert(0) += 1;
        m
    });
    assert_eq!(root_kinds.len(), 5, "{root_kinds:?}");
    // A leaf and a branch are equally likely (each branch kind a quarter of the branches).
    let leaves = root_kinds["num"] as f64 / trees.len() as f64;
    assert!((0.45..0.55).contains(&leaves), "{leaves}");
    assert!(trees.iter().all(|e| depth(e) <= DEPTH as usize + 1));
    assert!(trees.iter().any(|e| depth(e) == DEPTH as usize + 1));
    assert!(trees.iter().any(|e| any_node(e, &|n| *n == Num(9))));
}

#[test]
fn a_node_is_its_kind_then_its_draws_leaves_first() {
    let g = flat_tree();
    let replay = |choices: Vec<u64>| TestCase::replay(choices, false).draw(&g);
    assert_eq!(replay(vec![0, 3]), Num(3));
    assert_eq!(replay(vec![1, 0, 5]), Neg(b(Num(5))));
    assert_eq!(replay(vec![4, 0, 1, 0, 2]), Div(b(Num(1)), b(Num(2))));
    // Every level is one labelled span holding its kind and its children's spans.
    let mut tc = TestCase::replay(vec![2, 0, 1, 1, 0, 2], false);
    assert_eq!(tc.draw(&g), Add(b(Num(1)), b(Neg(b(Num(2))))));
    let record = tc.into_record();
    let levels: Vec<(u32, u32, u32)> = record
        .spans
        .iter()
        .filter(|s| s.label == "recursive")
        .map(|s| (s.start, s.end, s.depth))
        .collect();
    assert_eq!(levels[0], (0, 6, 0));
    assert_eq!(
        levels.len(),
        4,
        "root, two children, one grandchild: {levels:?}"
    );
    // At the bottom level only leaves are possible: a forced 0 with one leaf kind.
    let chain: Vec<u64> = std::iter::repeat_n(1, DEPTH as usize)
        .chain([0, 7])
        .collect();
    let mut tc = TestCase::replay(chain, false);
    let deepest = tc.draw(&g);
    assert_eq!(depth(&deepest), DEPTH as usize + 1);
    let record = tc.into_record();
    assert_eq!(record.maxes[DEPTH as usize], 0);
    assert_eq!(record.maxes[0], 4);
}

#[test]
fn weights_leaves_and_a_tree_without_leaves() {
    // Two leaf kinds (the bottom level chooses between them) and a branch never drawn at
    // random but still reachable by a replay.
    let g = recursive_tree(3)
        .leaf(int(0..=9u8).map(Num))
        .leaf_weighted(3, int(0..=1u8).map(|x| Neg(b(Num(x)))))
        .branch(|e| binary(e, Add))
        .branch_weighted(0, |e| binary(e, Div))
        .build();
    let trees: Vec<Expr> = (0..1_000)
        .map(|seed| TestCase::random(seed).draw(&g))
        .collect();
    assert!(
        trees
            .iter()
            .all(|e| !any_node(e, &|n| matches!(n, Div(..))))
    );
    assert!(trees.iter().any(|e| matches!(e, Add(..))));
    let negs = trees.iter().filter(|e| matches!(e, Neg(_))).count();
    let nums = trees.iter().filter(|e| matches!(e, Num(_))).count();
    assert!(negs > 2 * nums, "weights 3 : 1, {negs} : {nums}");
    assert_eq!(
        TestCase::replay(vec![3, 0, 4, 1, 1], false).draw(&g),
        Div(b(Num(4)), b(Neg(b(Num(1)))))
    );

    let empty = recursive_tree::<Expr>(3).build();
    let stop = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        TestCase::random(1).draw(&empty)
    }))
    .unwrap_err();
    assert_eq!(
        stop.downcast_ref::<seedledger_runner::Stop>(),
        // A tree without leaves rejects the case, and a rejected case is a discard.
        Some(&seedledger_runner::Stop::Discard)
    );
}
