//! Properties registered where they are written: [`register!`](crate::register) beside the
//! function, collected at link time ([`registered`]) — no hand-edited list of properties.
//!
//! Collection is done by the `inventory` crate: each `register!` puts a static
//! [`Registration`] into the binary, and [`registered`] iterates them when the program
//! runs. A crate's registrations are in a binary when the binary links the crate: the
//! `xtask` that runs a suite names the suite's crate once (`use my_properties as _;`), and
//! every property added to that crate later is found without touching `xtask` again.

use crate::Property;
use std::collections::BTreeMap;

/// One registered property: how to build it and where it was registered (for the error
/// that names both places of a duplicate id). Built by [`register!`](crate::register).
pub struct Registration {
    build: fn() -> Property,
    module: &'static str,
    file: &'static str,
    line: u32,
}

impl Registration {
    #[doc(hidden)]
    pub const fn new(
        build: fn() -> Property,
        module: &'static str,
        file: &'static str,
        line: u32,
    ) -> Registration {
        Registration {
            build,
            module,
            file,
            line,
        }
    }

    /// The crate the `register!` is in (the first segment of its module path).
    pub fn crate_name(&self) -> &'static str {
        self.module.split("::").next().unwrap_or(self.module)
    }

    /// Where the `register!` is: `file:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

inventory::collect!(Registration);

/// Registers a property with the binary that links this crate: the argument is an
/// expression building the [`Property`] — a plain function, or a constructor of a
/// parameterised one (evaluated when the suite is collected, once per [`registered`] call).
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// fn small_stays_small(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
///     let x = tc.draw(&int(0..=100u32));
///     prop_assert!(x <= 100, "x = {x}");
///     Ok(())
/// }
/// register!(Property::new("small_stays_small", small_stays_small));
///
/// fn below(limit: u64) -> Property {
///     Property::from_fn("below_limit", move |tc, _| {
///         let x = tc.draw(&int(0..=limit));
///         prop_assert!(x <= limit);
///         Ok(())
///     })
/// }
/// register!(below(10));
///
/// let ids: Vec<&str> = registered().unwrap().iter().map(|p| p.id).collect();
/// assert_eq!(ids, ["below_limit", "small_stays_small"]);
/// ```
#[macro_export]
macro_rules! register {
    ($property:expr $(,)?) => {
        $crate::__inventory::submit! {
            $crate::engine::Registration::new(|| $property, module_path!(), file!(), line!())
        }
    };
}

/// Two registrations of one property id (each id has one spec file, so one property).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "property `{id}` is registered twice: at {first} and at {second}; each id names one spec file (props/{id}.md), so rename one of them"
)]
pub struct DuplicateProperty {
    /// The property id.
    pub id: &'static str,
    /// One `register!`, as `file:line` (the first in that order).
    pub first: String,
    /// The other.
    pub second: String,
}

/// Every property registered in this binary, ordered by id (the order `prop run` runs and
/// lists them; link order is not stable, ids are). Refuses an id registered twice.
pub fn registered() -> Result<Vec<Property>, DuplicateProperty> {
    collect(|_| true)
}

/// The properties registered by one crate (`seedledger_orders`, or `module_path!()` from
/// inside it), ordered by id: a crate's own suite, whatever else the binary links.
pub fn registered_in(krate: &str) -> Result<Vec<Property>, DuplicateProperty> {
    let krate = krate.split("::").next().unwrap_or(krate);
    collect(|r| r.crate_name() == krate)
}

fn collect(keep: impl Fn(&Registration) -> bool) -> Result<Vec<Property>, DuplicateProperty> {
    let mut by_id: BTreeMap<&'static str, (Property, String)> = BTreeMap::new();
    for registration in inventory::iter::<Registration>
        .into_iter()
        .filter(|r| keep(r))
    {
        let property = (registration.build)();
        let here = registration.location();
        if let Some((_, first)) = by_id.get(property.id) {
            let (first, second) = if *first <= here {
                (first.clone(), here)
            } else {
                (here, first.clone())
            };
            return Err(DuplicateProperty {
                id: property.id,
                first,
                second,
            });
        }
        by_id.insert(property.id, (property, here));
    }
    Ok(by_id.into_values().map(|(property, _)| property).collect())
}
