//! Link-time registration: `register!` beside each property, `registered()` collects them
//! by id, and an id registered twice is refused naming both places.

use seedledger_runner::{Fixture, PropResult, Property, TestCase, int, prop_assert, register};

fn small(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw(&int(0..=9u8));
    prop_assert!(x < 10);
    Ok(())
}

fn bounded(limit: u32) -> Property {
    Property::from_fn("bounded", move |tc, _| {
        let x = tc.draw(&int(0..=limit));
        prop_assert!(x <= limit);
        Ok(())
    })
}

register!(Property::new("zeta_small", small));
register!(bounded(7));
mod nested {
    use super::*;
    register!(Property::new("alpha_small", small));
    // A second property under the id of the first: a mistake the collection must refuse.
    register!(Property::new("zeta_small", small));
}

#[test]
fn an_id_registered_twice_is_refused_naming_both_places() {
    let err = seedledger_runner::registered().err().unwrap();
    assert_eq!(err.id, "zeta_small");
    assert!(
        err.first.starts_with("crates/runner/tests/register.rs:"),
        "{err}"
    );
    assert!(
        err.second.starts_with("crates/runner/tests/register.rs:"),
        "{err}"
    );
    assert_ne!(err.first, err.second);
    let message = err.to_string();
    assert!(message.contains("registered twice"), "{message}");
    assert!(message.contains("props/zeta_small.md"), "{message}");
}

#[test]
fn another_crate_s_properties_are_not_this_crate_s_suite() {
    assert_eq!(
        seedledger_runner::registered_in("seedledger_orders").map(|s| s.len()),
        Ok(0)
    );
}

#[test]
fn a_crate_s_own_suite_refuses_its_duplicate_too() {
    // `registered_in` sees this test crate's properties; the duplicate makes it refuse, so
    // build each registration through the public list of another crate name: none.
    let err = seedledger_runner::registered_in(module_path!())
        .err()
        .unwrap();
    assert_eq!(err.id, "zeta_small");
    let property = bounded(7);
    let mut tc = TestCase::random(1);
    assert!(property.call(&mut tc, &Fixture::new(Vec::new())).is_ok());
}
