//! The property API: a named function that draws its input from a [`TestCase`], receives the
//! pinned fixture bytes, and returns `Ok(())`, returns an error, or panics.
//!
//! ```
//! use seedledger_runner::prelude::*;
//!
//! fn sum_is_order_independent(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {
//!     let xs = tc.draw(&vec(int(0..=1000u64), 0..=20));
//!     let reversed: u64 = xs.iter().rev().sum();
//!     prop_assert!(xs.iter().sum::<u64>() == reversed, "xs = {xs:?}");
//!     Ok(())
//! }
//!
//! const PROPERTIES: &[Property] = &[Property::new("sum_is_order_independent", sum_is_order_independent)];
//! ```

use crate::case::TestCase;
use std::any::Any;
use std::cell::OnceCell;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

/// What a property returns.
pub type PropResult = Result<(), PropError>;

/// The signature of a property's test: draw from the test case, read the fixture, return.
pub type PropFn = fn(&mut TestCase, &Fixture) -> PropResult;

/// A property bound to its spec file `props/<id>.md`: a plain function ([`Property::new`],
/// usable in `const` suites) or a closure capturing its configuration or parameters
/// ([`Property::from_fn`]). Cloning is cheap (a closure is shared, not copied).
///
/// Properties run on worker threads and in worker processes, so a closure must be
/// `Send + Sync`; what it captures is part of the property, and the property's spec file
/// should say what the parameters are (the receipt pins the spec, not the captured values).
#[derive(Clone)]
pub struct Property {
    /// The property's id: its spec file is `props/<id>.md`, its evidence is named after it.
    pub id: &'static str,
    test: Test,
}

/// A closure property's test, shared between the clones of its [`Property`].
type SharedFn = Arc<dyn Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync>;

#[derive(Clone)]
enum Test {
    Fn(PropFn),
    Closure(SharedFn),
}

impl Property {
    /// A property that is a plain function (or a closure capturing nothing).
    pub const fn new(id: &'static str, test: PropFn) -> Property {
        Property {
            id,
            test: Test::Fn(test),
        }
    }

    /// A property that is a closure, for example one capturing a parameter:
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// fn below(limit: u64) -> Property {
    ///     Property::from_fn("below_limit", move |tc, _fixture| {
    ///         let x = tc.draw(&int(0..=limit));
    ///         prop_assert!(x <= limit, "x = {x}");
    ///         Ok(())
    ///     })
    /// }
    /// let properties = vec![below(10)];
    /// # assert_eq!(properties[0].id, "below_limit");
    /// ```
    pub fn from_fn(
        id: &'static str,
        test: impl Fn(&mut TestCase, &Fixture) -> PropResult + Send + Sync + 'static,
    ) -> Property {
        Property {
            id,
            test: Test::Closure(Arc::new(test)),
        }
    }

    /// Runs the property's test once (no panic capture: see [`crate::engine::execute`]).
    pub fn call(&self, tc: &mut TestCase, fixture: &Fixture) -> PropResult {
        match &self.test {
            Test::Fn(test) => test(tc, fixture),
            Test::Closure(test) => test(tc, fixture),
        }
    }
}

// Properties run on worker threads, and boxed generators are shared between them.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Property>();
    send_sync::<crate::BoxedGen<()>>();
};

impl fmt::Debug for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Property").field("id", &self.id).finish()
    }
}

/// The pinned fixture bytes a property receives (never a path to re-read), with a cache for
/// one parsed form so that a property need not re-parse the fixture on every trial.
pub struct Fixture {
    bytes: Vec<u8>,
    parsed: OnceCell<Box<dyn Any>>,
}

impl Fixture {
    /// The fixture of `bytes` (nothing parsed yet).
    pub fn new(bytes: Vec<u8>) -> Fixture {
        Fixture {
            bytes,
            parsed: OnceCell::new(),
        }
    }

    /// The exact bytes whose pin the receipt records.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The fixture parsed by `parse`, computed on first use and cached for every later
    /// trial. The cache holds one type: asking for a second type parses again each time.
    pub fn parsed<T: 'static, E: fmt::Display>(
        &self,
        parse: impl Fn(&[u8]) -> Result<T, E>,
    ) -> Result<&T, PropError> {
        if self.parsed.get().is_none() {
            let value = parse(&self.bytes).map_err(|e| PropError::fixture(e.to_string()))?;
            let _ = self.parsed.set(Box::new(value));
        }
        self.parsed
            .get()
            .and_then(|b| b.downcast_ref::<T>())
            .ok_or_else(|| {
                PropError::fixture("fixture was already parsed as another type".to_string())
            })
    }
}

impl fmt::Debug for Fixture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fixture({} bytes)", self.bytes.len())
    }
}

/// Why a property failed without panicking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropError {
    /// What failed: an assertion, an error returned, or the fixture.
    pub kind: PropErrorKind,
    /// Human-readable message, with the values involved.
    pub message: String,
    /// Where, `file:line:column`, when known.
    pub location: Option<String>,
    /// The two values a failed comparison compared (`prop_assert_eq!`, `prop_assert_ne!`);
    /// boxed to keep a `PropResult` small.
    pub compared: Option<Box<seedledger_format::Compared>>,
}

/// The kind of a [`PropError`], which its failure signature names. New kinds may come:
/// match with a `_` arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PropErrorKind {
    /// A `prop_assert*!` failed.
    Assertion {
        /// The asserted expression as written.
        check: String,
    },
    /// The property returned an error.
    Err {
        /// The error's type and variant (`<type>::<variant>`).
        mode: String,
    },
    /// The fixture bytes could not be used.
    Fixture,
    /// A plain failure with a message ([`PropError::msg`], [`fail`](crate::fail),
    /// [`prop_fail!`](crate::prop_fail)): the signature is `fail:<file>:<text>`, the text
    /// being the first line of the message with its values masked as in a panic's (or, from
    /// `prop_fail!`, of the format string as written).
    Message {
        /// `<file>:<text>`: the machine-independent file of the call and the masked text.
        mode: String,
    },
    /// Not a failure: the input does not meet the property's precondition, and the trial is
    /// discarded (`prop_assume!`, [`PropError::discard`]). [`execute`](crate::engine::execute)
    /// gives [`Outcome::Discard`](crate::engine::Outcome::Discard), as for `tc.assume(false)`,
    /// without unwinding.
    Discard,
}

impl PropError {
    /// An assertion failure (used by the `prop_assert*!` macros).
    #[track_caller]
    pub fn assertion(check: impl Into<String>, message: String) -> PropError {
        PropError {
            kind: PropErrorKind::Assertion {
                check: check.into(),
            },
            message,
            location: Some(location(Location::caller())),
            compared: None,
        }
    }

    /// A failed comparison (used by `prop_assert_eq!` and `prop_assert_ne!`): an assertion
    /// failure that also keeps both values' `Debug` text, which the receipt records for the
    /// minimal input.
    #[track_caller]
    pub fn comparison(
        check: impl Into<String>,
        message: String,
        left: &dyn fmt::Debug,
        right: &dyn fmt::Debug,
    ) -> PropError {
        PropError {
            compared: Some(Box::new(seedledger_format::Compared {
                left: format!("{left:?}"),
                right: format!("{right:?}"),
            })),
            ..PropError::assertion(check, message)
        }
    }

    /// A plain failure with `message` (values included, for people), whose signature is
    /// stable: `fail:<file of the call>:<first line of the message, values masked>` — digits
    /// as `#` without their sign, `NaN` and `inf` as `#`, every quoted string as `"…"` (stricter
    /// than a panic's signature, see the book's failure signatures). No made-up assertion label is needed. Masking hides values, not
    /// a message's shape: for a message that prints data of varying size (a list, a tree),
    /// use `prop_fail!`, whose signature is its format string, or every smaller shrink
    /// candidate is another failure mode.
    ///
    /// ```
    /// use seedledger_runner::prelude::*;
    ///
    /// let e = PropError::msg(format!("balance {} went below {}", -5, 0));
    /// assert_eq!(e.message, "balance -5 went below 0");
    /// assert!(e.signature().ends_with(":balance # went below #"), "{}", e.signature());
    /// assert!(e.signature().starts_with("fail:"));
    /// ```
    #[track_caller]
    pub fn msg(message: impl Into<String>) -> PropError {
        let message = message.into();
        let at = Location::caller();
        let text = crate::signature::normalize_message(message.lines().next().unwrap_or(""));
        PropError::message_mode(at, &text, message)
    }

    /// The failure `prop_fail!` returns: its signature's text is the format string as written
    /// (`format`), so no value can reach it.
    #[doc(hidden)]
    #[track_caller]
    pub fn msg_as_written(format: &str, message: String) -> PropError {
        let text = crate::signature::fold_whitespace(format.lines().next().unwrap_or(""));
        PropError::message_mode(Location::caller(), &text, message)
    }

    fn message_mode(at: &Location<'_>, text: &str, message: String) -> PropError {
        PropError {
            kind: PropErrorKind::Message {
                mode: format!("{}:{text}", crate::signature::stable_path(at.file())),
            },
            message,
            location: Some(location(at)),
            compared: None,
        }
    }

    /// The input does not meet the property's precondition: returned from a property
    /// (`return Err(PropError::discard())`, or `prop_assume!(cond)`), the trial is
    /// discarded exactly as by `tc.assume(false)` — verdict `d`, no witness row, counted by
    /// the discard health check, never adopted by the shrinker — but without unwinding the
    /// stack, so a discard costs about what a passing trial does.
    pub const fn discard() -> PropError {
        PropError {
            kind: PropErrorKind::Discard,
            message: String::new(),
            location: None,
            compared: None,
        }
    }

    /// This error discards the trial instead of failing it ([`PropError::discard`]).
    pub fn is_discard(&self) -> bool {
        matches!(self.kind, PropErrorKind::Discard)
    }

    fn fixture(message: String) -> PropError {
        PropError {
            kind: PropErrorKind::Fixture,
            message,
            location: None,
            compared: None,
        }
    }

    /// The stable failure signature of this error (see the runner's `signature.rs`).
    pub fn signature(&self) -> String {
        match &self.kind {
            PropErrorKind::Assertion { check } => {
                format!("assert:{}", crate::signature::fold_whitespace(check))
            }
            PropErrorKind::Err { mode } => format!("err:{mode}"),
            PropErrorKind::Fixture => "fixture:unusable".to_string(),
            PropErrorKind::Message { mode } => format!("fail:{mode}"),
            // Never a failure's: `execute` makes it a discard.
            PropErrorKind::Discard => "discard".to_string(),
        }
    }
}

/// Any error a property returns with `?` becomes a failure whose mode is the error's type
/// and variant, read from its `Debug` form (see the runner's `signature.rs` for the rules, and
/// [`ErrorVariant`] for errors whose `Debug` does not name the variant).
impl<E: std::error::Error> From<E> for PropError {
    #[track_caller]
    fn from(err: E) -> PropError {
        let mode = crate::signature::error_mode(std::any::type_name::<E>(), &format!("{err:?}"));
        PropError::err(mode, err.to_string())
    }
}

/// An error type that names its own failure mode: the variant (or any stable name of the
/// kind of failure, never a value), so that two variants whose `Debug` reads as prose
/// (`Invalid padding`, `Invalid length 5`) are told apart. Its failures have the signature
/// `err:<type>::<variant>` — what a derived `Debug` of the variant gives, so implementing it
/// for an enum with a derived `Debug` changes no signature.
///
/// ```
/// use seedledger_runner::prelude::*;
/// use std::borrow::Cow;
///
/// #[derive(Debug)]
/// enum DecodeError {
///     Padding,
///     Length(usize),
/// }
/// # impl std::fmt::Display for DecodeError {
/// #     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("bad") }
/// # }
/// # impl std::error::Error for DecodeError {}
///
/// impl ErrorVariant for DecodeError {
///     fn variant(&self) -> Cow<'_, str> {
///         match self {
///             DecodeError::Padding => "Padding".into(),
///             DecodeError::Length(_) => "Length".into(),
///         }
///     }
/// }
///
/// fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
///     if text.len() % 4 != 0 { Err(DecodeError::Length(text.len())) } else { Ok(Vec::new()) }
/// }
///
/// fn property(text: &str) -> PropResult {
///     let _bytes = decode(text).by_variant()?; // err:<crate>::DecodeError::Length
///     Ok(())
/// }
/// # let e = property("abc").unwrap_err();
/// # assert!(e.signature().ends_with("DecodeError::Length"), "{}", e.signature());
/// ```
pub trait ErrorVariant {
    /// The name of this error's failure mode (a variant name): the same for every value of
    /// the mode, different between modes.
    fn variant(&self) -> std::borrow::Cow<'_, str>;
}

/// `result.by_variant()?`: returns an [`ErrorVariant`] error from a property with the mode its
/// `variant` names (`err:<type>::<variant>`), instead of the one read from its `Debug`.
pub trait ByVariant<T> {
    /// The value, or the error as a [`PropError`] whose mode its [`ErrorVariant`] names.
    fn by_variant(self) -> Result<T, PropError>;
}

impl<T, E: std::error::Error + ErrorVariant> ByVariant<T> for Result<T, E> {
    #[track_caller]
    fn by_variant(self) -> Result<T, PropError> {
        match self {
            Ok(value) => Ok(value),
            Err(e) => Err(PropError::with_variant(&e)),
        }
    }
}

impl PropError {
    /// The failure of `err`, whose mode is `<type>::<variant>` as its [`ErrorVariant`] says.
    #[track_caller]
    pub fn with_variant<E: std::error::Error + ErrorVariant>(err: &E) -> PropError {
        let variant = crate::signature::fold_whitespace(&err.variant());
        PropError::err(
            format!("{}::{variant}", std::any::type_name::<E>()),
            err.to_string(),
        )
    }

    #[track_caller]
    fn err(mode: String, message: String) -> PropError {
        PropError {
            kind: PropErrorKind::Err { mode },
            message,
            location: Some(location(Location::caller())),
            compared: None,
        }
    }
}

pub(crate) fn location(at: &Location<'_>) -> String {
    format!("{}:{}:{}", at.file(), at.line(), at.column())
}

/// Fails the property unless `cond` holds. The failure message shows the condition and the
/// optional formatted message; the signature is `assert:<condition as written>`.
#[macro_export]
macro_rules! prop_assert {
    ($cond:expr $(,)?) => {
        if !$cond {
            return Err($crate::PropError::assertion(stringify!($cond), format!("assertion failed: {}", stringify!($cond))));
        }
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::PropError::assertion(
                stringify!($cond),
                format!("assertion failed: {}: {}", stringify!($cond), format_args!($($fmt)+)),
            ));
        }
    };
}

/// Fails the property with a plain message: `return fail(format!(...))`, an
/// `Err(`[`PropError::msg`]`)` whose signature is stable (no value of the message in it).
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// fn no_negative_balance(tc: &mut TestCase) -> PropResult {
///     let balance = tc.draw(&int(-3..=3i64));
///     if balance < 0 {
///         return fail(format!("balance {balance} is negative"));
///     }
///     Ok(())
/// }
/// let report = run(no_negative_balance, &RunOptions::cases(50).shrink(None)).unwrap();
/// let failure = &report.first_failure.unwrap().failure;
/// assert!(failure.signature.ends_with(":balance # is negative"), "{}", failure.signature);
/// ```
#[track_caller]
pub fn fail(message: impl Into<String>) -> PropResult {
    Err(PropError::msg(message))
}

/// Fails the property with a formatted message (`prop_fail!("balance {b} is negative")`):
/// returns `Err` from the enclosing function. The signature is
/// `fail:<file>:<the format string as written>`, so no value reaches it.
#[macro_export]
macro_rules! prop_fail {
    ($fmt:literal $($args:tt)*) => {
        return Err($crate::PropError::msg_as_written($fmt, format!($fmt $($args)*)))
    };
}

/// Discards the trial unless `cond` holds, by returning `Err(PropError::discard())` from the
/// enclosing function: the trial is discarded exactly as by `tc.assume(cond)` (verdict `d`,
/// no witness row, the discard health check, never a shrink candidate), without unwinding
/// the stack — a discard then costs about what a passing trial does. `tc.assume` and a filter
/// that gives up inside a generator still unwind (they cannot return from the property).
///
/// ```
/// use seedledger_runner::prelude::*;
///
/// fn division_inverts_multiplication(tc: &mut TestCase, _: &Fixture) -> PropResult {
///     let a = tc.draw_named("a", &int(0..=1000i64));
///     let b = tc.draw_named("b", &int(-10..=10i64));
///     prop_assume!(b != 0);
///     prop_assert!((a * b) / b == a);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! prop_assume {
    ($cond:expr $(,)?) => {
        if !$cond {
            return Err($crate::PropError::discard());
        }
    };
}

/// Fails the property unless `left == right`, showing both values (`Debug`).
#[macro_export]
macro_rules! prop_assert_eq {
    ($left:expr, $right:expr $(,)?) => {
        $crate::prop_assert_eq!($left, $right, "")
    };
    ($left:expr, $right:expr, $($fmt:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    let extra = format!($($fmt)+);
                    return Err($crate::PropError::comparison(
                        concat!(stringify!($left), " == ", stringify!($right)),
                        format!(
                            "assertion failed: {} == {}\n  left: {:?}\n right: {:?}{}{}",
                            stringify!($left), stringify!($right), left, right,
                            if extra.is_empty() { "" } else { "\n  note: " }, extra,
                        ),
                        left,
                        right,
                    ));
                }
            }
        }
    };
}

/// Fails the property if `left == right`, showing both values (`Debug`).
#[macro_export]
macro_rules! prop_assert_ne {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    return Err($crate::PropError::comparison(
                        concat!(stringify!($left), " != ", stringify!($right)),
                        format!(
                            "assertion failed: {} != {}\n  left: {:?}\n right: {:?}",
                            stringify!($left),
                            stringify!($right),
                            left,
                            right,
                        ),
                        left,
                        right,
                    ));
                }
            }
        }
    };
}
