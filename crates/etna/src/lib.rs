//! An ETNA adapter for seedledger.
//!
//! ETNA (Shi, Keles, Goldstein, Pierce, Lampropoulos, ICFP 2023) measures property-based
//! testing tools on *tasks*: a workload (a program), one injected mutant (a bug re-created by
//! a small edit), and one property that should catch it; the metric is the number of tests
//! (and the time) until the first failure. This crate holds our own re-implementations of six
//! of ETNA's Rust workloads with their mutants and properties (see [`WORKLOADS`] and the book
//! page `benchmarks/etna.md` for provenance), and runs every property with two arms over the
//! same input *description*:
//!
//! * [`Tool::Seedledger`]: the property drawn from seedledger generators and run by
//!   seedledger's engine (execute, then shrink the first failure), see [`arms`];
//! * [`Tool::Proptest`]: the same property drawn from proptest strategies of the same shape
//!   and run by proptest's `TestRunner` (its own shrinking).
//!
//! A mutant is chosen at run time (a workload-local enum passed to the code under test), so
//! one process can run every task; the `etna` binary follows ETNA's Rust adapter contract.

pub mod arms;
pub mod arrayvec;
pub mod base64;
pub mod bst;
pub mod hex;
pub mod map_laws;
pub mod rbt;
pub mod stlc;

use std::fmt::Debug;
use std::time::Duration;

/// What one evaluation of a property says about one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The property held.
    Pass,
    /// The property failed; the message says how.
    Fail(String),
    /// The input does not meet the property's precondition (no verdict).
    Discard,
}

impl Verdict {
    /// `Pass` when `ok`, else `Fail(message())`.
    pub fn check(ok: bool, message: impl FnOnce() -> String) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail(message())
        }
    }
}

/// The two property-testing tools this crate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// seedledger's generators and engine.
    Seedledger,
    /// proptest's strategies and `TestRunner`.
    Proptest,
}

impl Tool {
    /// Every tool, seedledger first.
    pub const ALL: [Tool; 2] = [Tool::Seedledger, Tool::Proptest];

    /// The name ETNA's command line passes (`seedledger`, `proptest`).
    pub fn name(self) -> &'static str {
        match self {
            Tool::Seedledger => "seedledger",
            Tool::Proptest => "proptest",
        }
    }

    /// The tool of an ETNA tool name.
    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// How a run of one property ended, as ETNA's `status` field says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No input failed within the budget.
    Passed,
    /// An input failed (the counterexample is its shrunk form).
    Failed,
    /// The run could not finish (an error, a tool that gave up).
    Aborted,
}

impl Status {
    /// `passed`, `failed` or `aborted`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Aborted => "aborted",
        }
    }
}

/// What one run of one property by one tool found.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// How the run ended.
    pub status: Status,
    /// Property invocations, discards and shrink steps included (ETNA's `tests`).
    pub tests: u64,
    /// Invocations before the first failure (or in the whole run when nothing failed) whose
    /// input was discarded.
    pub discards: u64,
    /// Invocations up to and including the first failing one (discards included): the
    /// benchmark's "tests to first failure". `None` when nothing failed.
    pub first_failure: Option<u64>,
    /// Wall time of the whole run, shrinking included.
    pub time: Duration,
    /// The shrunk failing input (`Debug`), when one failed.
    pub counterexample: Option<String>,
    /// Why the run aborted.
    pub error: Option<String>,
}

impl Report {
    /// ETNA's one JSON line for this report, its keys in the contract's order.
    pub fn json_line(&self, tool: &str, property: &str) -> String {
        let text = |s: Option<&str>| serde_json::Value::from(s).to_string();
        format!(
            "{{\"status\":{},\"tests\":{},\"discards\":{},\"time\":{},\"counterexample\":{},\"error\":{},\"tool\":{},\"property\":{}}}",
            text(Some(self.status.name())),
            self.tests,
            self.discards,
            text(Some(&format!("{}us", self.time.as_micros()))),
            text(self.counterexample.as_deref()),
            text(self.error.as_deref()),
            text(Some(tool)),
            text(Some(property)),
        )
    }

    /// An aborted run that did nothing (an unknown property, variant or tool).
    pub fn aborted(error: String) -> Report {
        Report {
            status: Status::Aborted,
            tests: 0,
            discards: 0,
            first_failure: None,
            time: Duration::ZERO,
            counterexample: None,
            error: Some(error),
        }
    }
}

/// A workload's mutant selector: `Base` (no mutant) and one variant per injected bug.
pub trait Mutant: Copy + Debug + Send + Sync + 'static {
    /// The code as shipped upstream (no mutant).
    const BASE: Self;
    /// Every mutant with its ETNA variant name (the base excluded).
    const ALL: &'static [(&'static str, Self)];
}

/// One property of a workload: how its input is drawn by each tool and what it checks under
/// a given mutant.
pub struct Spec<I, M> {
    /// The ETNA property name (`BstInsertPost`, ...), unique across workloads.
    pub name: &'static str,
    /// The input's seedledger generator.
    pub seedledger: fn() -> seedledger_runner::BoxedGen<I>,
    /// The input's proptest strategy (the same description).
    pub proptest: fn() -> proptest::strategy::BoxedStrategy<I>,
    /// The property itself, against the code with mutant `M` injected.
    pub check: fn(&I, M) -> Verdict,
}

/// A property of any workload, ready to run by either tool.
pub trait Property: Send + Sync {
    /// The ETNA property name.
    fn name(&self) -> &'static str;
    /// Runs the property with `tool` against the code with `mutant` injected (`base` or an
    /// ETNA variant name), for at most `budget` invocations before the first failure; trial
    /// `trial` uses its own seeds.
    fn run(&self, tool: Tool, mutant: &str, budget: u64, trial: u64) -> Report;
}

impl<I, M> Property for Spec<I, M>
where
    I: Debug + Clone + 'static,
    M: Mutant,
{
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&self, tool: Tool, mutant: &str, budget: u64, trial: u64) -> Report {
        let m = if mutant == "base" {
            M::BASE
        } else {
            match M::ALL.iter().find(|(n, _)| *n == mutant) {
                Some((_, m)) => *m,
                None => return Report::aborted(format!("unknown variant `{mutant}`")),
            }
        };
        let check = self.check;
        let test = move |input: &I| check(input, m);
        match tool {
            Tool::Seedledger => arms::seedledger((self.seedledger)(), test, budget, trial),
            Tool::Proptest => arms::proptest((self.proptest)(), test, budget, trial),
        }
    }
}

/// One workload: its properties, mutants, and the tasks (mutant, property) it is measured on.
pub struct Workload {
    /// Short name (`bst`, `rbt`, ...).
    pub name: &'static str,
    /// Every property.
    pub properties: fn() -> Vec<Box<dyn Property>>,
    /// Every mutant's ETNA variant name.
    pub mutants: fn() -> Vec<&'static str>,
    /// The tasks: a mutant's ETNA variant name and the properties that catch it.
    pub tasks: &'static [(&'static str, &'static [&'static str])],
}

/// The ETNA variant names of mutant type `M`.
pub fn mutant_names<M: Mutant>() -> Vec<&'static str> {
    M::ALL.iter().map(|(name, _)| *name).collect()
}

/// Every workload of the adapter.
pub const WORKLOADS: &[Workload] = &[
    bst::WORKLOAD,
    rbt::WORKLOAD,
    stlc::WORKLOAD,
    base64::WORKLOAD,
    arrayvec::WORKLOAD,
    hex::WORKLOAD,
];

/// One task: a workload, a mutant and a property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The workload's short name.
    pub workload: &'static str,
    /// The mutant's ETNA variant name.
    pub mutant: &'static str,
    /// The property's ETNA name.
    pub property: &'static str,
}

impl Task {
    /// `workload/mutant/Property`.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.workload, self.mutant, self.property)
    }
}

/// Every task of every workload, in order.
pub fn tasks() -> Vec<Task> {
    WORKLOADS
        .iter()
        .flat_map(|w| {
            w.tasks.iter().flat_map(move |(mutant, props)| {
                props.iter().map(move |property| Task {
                    workload: w.name,
                    mutant,
                    property,
                })
            })
        })
        .collect()
}

/// The property named `name`, in whichever workload holds it.
pub fn property(name: &str) -> Option<Box<dyn Property>> {
    WORKLOADS
        .iter()
        .flat_map(|w| (w.properties)())
        .find(|p| p.name() == name)
}

/// The ETNA property names, in workload order.
pub fn property_names() -> Vec<&'static str> {
    WORKLOADS
        .iter()
        .flat_map(|w| (w.properties)())
        .map(|p| p.name())
        .collect()
}
