//! What a recording test case tells as it happens ([`JournalEntry`]), to the observer of its
//! thread: how a crash-isolating worker keeps the record of a trial that ends its process.

use std::cell::Cell;

/// What a recording test case does, told as it happens to the [`set_journal`] observer of
/// its thread: what a crash-isolating worker sends its parent so that a trial that ends the
/// process still leaves its record (choices, bounds, spans) behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalEntry<'a> {
    /// A choice was made: its value and bound.
    Choice {
        /// The choice.
        value: u64,
        /// Its bound.
        max: u64,
    },
    /// A labelled sub-draw starts at the current choice, at this depth.
    SpanStart {
        /// The generator's label.
        label: &'static str,
        /// Its nesting depth (top-level draws: 0).
        depth: u32,
    },
    /// The innermost open sub-draw ends at the current choice.
    SpanEnd,
    /// A top-level draw's `Debug` rendering (capturing cases only).
    Drawn(&'a str),
}

thread_local! {
    static JOURNAL: Cell<Option<fn(JournalEntry<'_>)>> = const { Cell::new(None) };
}

/// Sets (or, with `None`, clears) the observer of the recording test cases of this thread.
/// Random-mode cases (the main run's fast path) record nothing and tell nothing.
pub fn set_journal(observer: Option<fn(JournalEntry<'_>)>) {
    JOURNAL.with(|j| j.set(observer));
}

#[inline]
pub(super) fn journal(entry: JournalEntry<'_>) {
    if let Some(f) = JOURNAL.with(Cell::get) {
        f(entry);
    }
}
