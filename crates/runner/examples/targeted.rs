//! The targeted search of the book's "Targeted search" page: a property whose failing
//! region (within 10 of 500 000 in a million) the default plan of 256 seeds does not reach,
//! run without and with a targeted budget. `cargo run -p seedledger-runner --example targeted`.

use seedledger_runner::engine::RunError;
use seedledger_runner::prelude::*;

fn near_the_middle(tc: &mut TestCase) -> PropResult {
    let x = tc.draw_named("x", &int(0..=1_000_000u64));
    let distance = x.abs_diff(500_000);
    tc.target(-(distance as f64), "closeness");
    prop_assert!(distance >= 10, "x = {x}");
    Ok(())
}

fn main() -> Result<(), RunError> {
    for budget in [0, 1000] {
        let report = run(
            near_the_middle,
            &RunOptions::default().target_budget(budget),
        )?;
        println!("target budget {budget}:");
        let kept = report.targeted.iter().filter(|t| t.kept).count();
        println!(
            "  planned trials {}, failing {}; targeted trials {}, kept {kept}",
            report.tests_run(),
            report.verdicts().matches('F').count(),
            report.targeted.len(),
        );
        for line in report.targets.lines() {
            println!("  best: {line}");
        }
        if let Some(failure) = &report.first_failure {
            println!("  first failure: seed {} ({})", failure.seed, failure.input);
            println!("  minimal: {}", report.counterexample().unwrap_or(""));
        }
    }
    Ok(())
}
