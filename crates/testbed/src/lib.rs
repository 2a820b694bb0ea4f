//! The framework's end-to-end tests live in `tests/cli/`; they run the binaries of this
//! package (`testbed` over the example suite, `crash_suite` over properties that end their
//! own process), built for them alone.
