//! Strings from a regular expression: the pattern is parsed by `regex-syntax` (the `regex`
//! crate's own parser) into its high-level form, which is compiled into a small tree that
//! generates whole-string matches.
//!
//! # Encoding
//!
//! * a literal draws nothing;
//! * a character class draws one choice, its rank in the class: the class's printable ASCII
//!   characters first, in [`crate::char_any`]'s order (`a`..`z`, `A`..`Z`, `0`..`9`, space,
//!   punctuation), then its other characters in code point order, so a class shrinks to
//!   its simplest character;
//! * a repetition draws like a collection: a "continue?" flag before each element past the
//!   minimum (a forced 0 where a full repetition's end flag would be), each element in a
//!   span labelled `regex_repeat`, so deleting an element deletes its block of choices;
//! * an alternation draws the branch index first; branches are ordered by the length of
//!   their shortest match (in pattern order when equal), so the first is the shortest.
//!
//! So shrinking moves toward the shortest match made of the simplest characters.
//!
//! # Distribution (random draws)
//!
//! * a class is one choice over its ranks: under `chacha8-v3` (the default) a class of at
//!   most 64 characters is uniform, and a larger class that holds printable ASCII draws one of
//!   those uniformly half the time, else a biased choice over the whole class (see
//!   `integers.rs`); under v1 / v2 always the biased choice;
//! * a repetition's count is a collection's hidden size (see `collections.rs`): under v3 its
//!   maximum 1 time in 8, `min + 1..=min + 3` 1 time in 8, else uniform (`a*`, capped at
//!   [`REGEX_REPEAT_CAP`] more, is empty 1 time in 12); under v1 / v2 its minimum about 1
//!   time in 4;
//! * an alternation picks each branch with probability `1 / n` (every scheme).

use crate::case::TestCase;
use crate::errors::RegexError;
use crate::generators::Gen;
use crate::generators::scalars::ASCII_ORDER;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use std::fmt;
use std::sync::Arc;

/// How many elements past its minimum an unbounded repetition (`*`, `+`, `{n,}`) draws at
/// most.
pub const REGEX_REPEAT_CAP: u32 = 8;

/// The longest string (in characters) a pattern may generate; a pattern whose longest
/// match under [`REGEX_REPEAT_CAP`] is longer is refused.
pub const REGEX_MAX_LEN: u64 = 1 << 16;

/// Strings matching a regular expression; see [`string_matching`].
#[derive(Clone)]
pub struct RegexGen {
    pattern: Arc<str>,
    root: Arc<Node>,
}

impl fmt::Debug for RegexGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "string_matching({:?})", self.pattern)
    }
}

/// Strings that `pattern` matches as a whole (as if it were anchored at both ends), in the
/// syntax of the `regex` crate. Unbounded repetitions draw at most [`REGEX_REPEAT_CAP`]
/// elements past their minimum. Shrinks toward the shortest match of the simplest
/// characters (see the module docs).
///
/// Refused with a [`RegexError`]: a pattern that does not parse, one that matches nothing,
/// one whose longest match (under the cap) exceeds [`REGEX_MAX_LEN`] characters, word
/// boundaries (`\b`, `\B`, `\<`, `\>`), and anchors (`^`, `$`, `\A`, `\z`) anywhere but at
/// the start or end of the pattern (where they are satisfied by construction).
pub fn string_matching(pattern: &str) -> Result<RegexGen, RegexError> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| syntax_error(pattern, &e))?;
    let compiler = Compiler { pattern };
    let root = compiler
        .compile(&hir, true, true)?
        .ok_or_else(|| RegexError::Empty {
            pattern: pattern.to_string(),
        })?;
    let longest = root.longest();
    if longest > REGEX_MAX_LEN {
        return Err(compiler.unsupported(format!(
            "matches strings of up to {longest} characters, more than {REGEX_MAX_LEN}"
        )));
    }
    Ok(RegexGen {
        pattern: Arc::from(pattern),
        root: Arc::new(root),
    })
}

fn syntax_error(pattern: &str, err: &regex_syntax::Error) -> RegexError {
    let (offset, message) = match err {
        regex_syntax::Error::Parse(e) => (e.span().start.offset, e.kind().to_string()),
        regex_syntax::Error::Translate(e) => (e.span().start.offset, e.kind().to_string()),
        other => (0, other.to_string()),
    };
    RegexError::Syntax {
        pattern: pattern.to_string(),
        offset,
        message,
    }
}

/// The compiled pattern.
#[derive(Debug)]
enum Node {
    Literal(String),
    Class(CharClass),
    Concat(Vec<Node>),
    /// Branches, shortest match first.
    Alternation(Vec<Node>),
    Repeat {
        sub: Box<Node>,
        min: u32,
        max: u32,
    },
}

struct Compiler<'a> {
    pattern: &'a str,
}

impl Compiler<'_> {
    fn unsupported(&self, what: impl Into<String>) -> RegexError {
        RegexError::Unsupported {
            pattern: self.pattern.to_string(),
            what: what.into(),
        }
    }

    /// `None` for a sub-pattern that matches nothing. `at_start` / `at_end`: nothing can
    /// stand before / after this sub-pattern in a match, so an anchor there holds.
    fn compile(&self, hir: &Hir, at_start: bool, at_end: bool) -> Result<Option<Node>, RegexError> {
        Ok(Some(match hir.kind() {
            HirKind::Empty => Node::Literal(String::new()),
            HirKind::Literal(lit) => match std::str::from_utf8(&lit.0) {
                Ok(s) => Node::Literal(s.to_string()),
                Err(_) => return Err(self.unsupported("a literal that is not UTF-8")),
            },
            HirKind::Class(class) => match self.class(class)? {
                Some(class) => Node::Class(class),
                None => return Ok(None),
            },
            HirKind::Look(look) => {
                let (start, end) = (
                    matches!(look, Look::Start | Look::StartLF | Look::StartCRLF),
                    matches!(look, Look::End | Look::EndLF | Look::EndCRLF),
                );
                if (start && at_start) || (end && at_end) {
                    Node::Literal(String::new())
                } else if start || end {
                    return Err(self.unsupported(
                        "an anchor (`^`, `$`, `\\A`, `\\z`) elsewhere than at the start or end of the pattern",
                    ));
                } else {
                    return Err(self.unsupported("word boundaries (`\\b`, `\\B`, `\\<`, `\\>`)"));
                }
            }
            HirKind::Capture(capture) => return self.compile(&capture.sub, at_start, at_end),
            HirKind::Repetition(rep) => {
                let once = rep.max.is_some_and(|m| m <= 1);
                let sub = self.compile(&rep.sub, at_start && once, at_end && once)?;
                let max = rep
                    .max
                    .unwrap_or_else(|| rep.min.saturating_add(REGEX_REPEAT_CAP))
                    .max(rep.min);
                match sub {
                    Some(sub) => Node::Repeat {
                        sub: Box::new(sub),
                        min: rep.min,
                        max,
                    },
                    None if rep.min == 0 => Node::Literal(String::new()),
                    None => return Ok(None),
                }
            }
            HirKind::Concat(subs) => {
                let is_look = |h: &Hir| matches!(h.kind(), HirKind::Look(_));
                let mut nodes = Vec::with_capacity(subs.len());
                for (i, sub) in subs.iter().enumerate() {
                    let start = at_start && subs[..i].iter().all(is_look);
                    let end = at_end && subs[i + 1..].iter().all(is_look);
                    match self.compile(sub, start, end)? {
                        Some(node) => nodes.push(node),
                        None => return Ok(None),
                    }
                }
                Node::Concat(nodes)
            }
            HirKind::Alternation(subs) => {
                let mut branches = Vec::with_capacity(subs.len());
                for sub in subs {
                    if let Some(node) = self.compile(sub, at_start, at_end)? {
                        branches.push(node);
                    }
                }
                branches.sort_by_key(Node::shortest);
                match branches.len() {
                    0 => return Ok(None),
                    1 => branches.pop().unwrap_or(Node::Literal(String::new())),
                    _ => Node::Alternation(branches),
                }
            }
        }))
    }

    fn class(&self, class: &Class) -> Result<Option<CharClass>, RegexError> {
        let ranges: Vec<(u32, u32)> = match class {
            Class::Unicode(c) => c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect(),
            Class::Bytes(c) => {
                if c.ranges().iter().any(|r| r.end() > 0x7F) {
                    return Err(self.unsupported("a byte class beyond ASCII"));
                }
                c.ranges()
                    .iter()
                    .map(|r| (u32::from(r.start()), u32::from(r.end())))
                    .collect()
            }
        };
        Ok(CharClass::new(&ranges))
    }
}

impl Node {
    /// Characters in the shortest match.
    fn shortest(&self) -> u64 {
        match self {
            Node::Literal(s) => s.chars().count() as u64,
            Node::Class(_) => 1,
            Node::Concat(nodes) => nodes.iter().map(Node::shortest).sum(),
            Node::Alternation(nodes) => nodes.iter().map(Node::shortest).min().unwrap_or(0),
            Node::Repeat { sub, min, .. } => sub.shortest().saturating_mul(u64::from(*min)),
        }
    }

    /// Characters in the longest match this tree generates.
    fn longest(&self) -> u64 {
        match self {
            Node::Literal(s) => s.chars().count() as u64,
            Node::Class(_) => 1,
            Node::Concat(nodes) => nodes
                .iter()
                .fold(0u64, |n, node| n.saturating_add(node.longest())),
            Node::Alternation(nodes) => nodes.iter().map(Node::longest).max().unwrap_or(0),
            Node::Repeat { sub, max, .. } => sub.longest().saturating_mul(u64::from(*max)),
        }
    }

    fn generate_into(&self, tc: &mut TestCase, out: &mut String) {
        match self {
            Node::Literal(s) => out.push_str(s),
            Node::Class(class) => {
                let prefix = class.ascii.len() as u64;
                out.push(class.nth(tc.choice_preferring(class.len() - 1, prefix)));
            }
            Node::Concat(nodes) => {
                for node in nodes {
                    node.generate_into(tc, out);
                }
            }
            Node::Alternation(nodes) => {
                let i = tc.uniform_choice(nodes.len() as u64 - 1) as usize;
                nodes[i.min(nodes.len() - 1)].generate_into(tc, out);
            }
            Node::Repeat { sub, min, max } => {
                let (min, max) = (u64::from(*min), u64::from(*max));
                let target = tc.hidden_size(min, max);
                let element = Element(sub.as_ref());
                let mut n = 0;
                while n < max {
                    if n >= min && !tc.flag(target.is_some_and(|t| n < t)) {
                        break;
                    }
                    out.push_str(&tc.draw(&element));
                    n += 1;
                }
                if n == max && min < max {
                    tc.forced_zero();
                }
            }
        }
    }
}

/// One element of a repetition, drawn in its own span.
struct Element<'a>(&'a Node);

impl Gen for Element<'_> {
    type Value = String;
    fn generate(&self, tc: &mut TestCase) -> String {
        let mut out = String::new();
        self.0.generate_into(tc, &mut out);
        out
    }
    fn label(&self) -> &'static str {
        "regex_repeat"
    }
}

/// A non-empty set of characters, ranked: its printable ASCII characters in
/// [`ASCII_ORDER`], then the rest in code point order.
#[derive(Debug)]
struct CharClass {
    ascii: Vec<char>,
    /// The other ranges (inclusive code points) and the number of characters before each.
    rest: Vec<(u32, u32, u64)>,
    len: u64,
}

impl CharClass {
    /// `None` for an empty set.
    fn new(ranges: &[(u32, u32)]) -> Option<CharClass> {
        let contains = |c: u32| ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
        let ascii: Vec<char> = ASCII_ORDER
            .iter()
            .filter(|&&b| contains(u32::from(b)))
            .map(|&b| char::from(b))
            .collect();
        let mut rest = Vec::new();
        let mut before = ascii.len() as u64;
        let mut push = |lo: u32, hi: u32| {
            if lo <= hi {
                rest.push((lo, hi, before));
                before += u64::from(hi - lo) + 1;
            }
        };
        for &(lo, hi) in ranges {
            // Printable ASCII (0x20..=0x7E) is ranked above; surrogates are not characters.
            for (gap_lo, gap_hi) in [(0, 0x1F), (0x7F, 0xD7FF), (0xE000, 0x10FFFF)] {
                push(lo.max(gap_lo), hi.min(gap_hi));
            }
        }
        (before > 0).then_some(CharClass {
            ascii,
            rest,
            len: before,
        })
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// The character of rank `index` (the last one past the end).
    fn nth(&self, index: u64) -> char {
        let index = index.min(self.len - 1);
        if let Some(&c) = self.ascii.get(index as usize) {
            return c;
        }
        let at = self.rest.partition_point(|&(_, _, before)| before <= index);
        let (lo, _, before) = self.rest[at.saturating_sub(1)];
        char::from_u32(lo + (index - before) as u32).unwrap_or('\u{FFFD}')
    }
}

impl Gen for RegexGen {
    type Value = String;
    fn generate(&self, tc: &mut TestCase) -> String {
        let mut out = String::new();
        self.root.generate_into(tc, &mut out);
        out
    }
    fn label(&self) -> &'static str {
        "string_matching"
    }
}
