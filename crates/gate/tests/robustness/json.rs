//! The oracle's own JSON: a reader written from RFC 8259 (grammar) and RFC 7493 (I-JSON, for
//! what a reader may refuse), and a writer the generator uses to spell documents in many
//! ways. Nothing here uses serde_json: a parser quirk shared by the product and its model
//! could not show up as a disagreement otherwise.
//!
//! The reader keeps what serde_json's `Value` loses: every member of an object in text order
//! (a repeated key stays visible), and every number as written (`1101`, `1101.0`, `-0` and
//! `18446744073709551616` stay different). It is iterative, so a million nested `[` cannot
//! overflow the stack; past [`DEPTH_BOUND`] levels it stops building the tree and only checks
//! the syntax, so that "too deep" can still be told from "not JSON".
//!
//! Readings (RFC 8259 leaves these to the reader):
//! * Whitespace between tokens is space, tab, LF and CR only (RFC 8259 §2); a byte order mark
//!   is not whitespace, so text that starts with one is not JSON (§8.1 lets a reader refuse).
//! * Text must be UTF-8 (§8.1).
//! * A `\u` escape that leaves a surrogate unpaired is not JSON (I-JSON §2.1: MUST NOT).
//! * A number whose magnitude overflows an IEEE 754 double is not JSON (RFC 8259 §6 lets a
//!   reader limit the range; I-JSON §2.2 says not to expect more than a double). Tiny numbers
//!   that underflow to zero and integers of any length that fit a double's range are fine.
//! * Precedence: text that is not JSON anywhere is not JSON, even when it is also too deep;
//!   otherwise text nested deeper than the bound is too deep.

/// How deeply arrays and objects may nest (a top-level object is level 1). The product
/// documents its readers' bound as "nested more than 128 levels deep" is refused
/// (`ParseError::TooDeep`), so 128 levels are readable and 129 are not.
pub const DEPTH_BOUND: usize = 128;

/// A JSON value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number's text, exactly as written.
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    /// Members in text order; a repeated key is kept, not merged.
    Obj(Vec<(String, Json)>),
    /// Text the writer emits verbatim: the generator's way of putting anything at all (deep
    /// nesting, a lone surrogate, a huge number) where a value goes. The reader never makes one.
    Raw(String),
}

/// What the reader makes of some bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// Not JSON: why, and at which byte.
    NotJson(&'static str, usize),
    /// Valid JSON nested deeper than [`DEPTH_BOUND`].
    TooDeep,
    Doc(Json),
}

impl Json {
    /// The members of an object named `key` (none, one, or several when the key repeats).
    pub fn members<'a, 'k>(&'a self, key: &'k str) -> impl Iterator<Item = &'a Json> + use<'a, 'k> {
        let members: &[(String, Json)] = match self {
            Json::Obj(m) => m,
            _ => &[],
        };
        members
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The member `key` when the object has exactly one of that name.
    pub fn get(&self, key: &str) -> Option<&Json> {
        let mut it = self.members(key);
        match (it.next(), it.next()) {
            (Some(v), None) => Some(v),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_))
    }

    /// True when some object, at any depth, names a key twice.
    pub fn repeats_a_key(&self) -> bool {
        match self {
            Json::Obj(members) => {
                let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
                keys.sort_unstable();
                keys.windows(2).any(|w| w[0] == w[1])
                    || members.iter().any(|(_, v)| v.repeats_a_key())
            }
            Json::Arr(items) => items.iter().any(Json::repeats_a_key),
            _ => false,
        }
    }

    /// The string, if this is one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn boolean(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value as a seed: an integer written with digits only (no sign, fraction or
    /// exponent) whose value is at most 2^64-1. SPEC: "a seed is a JSON integer in
    /// 0..=2^64-1; `1101.0`, `"1101"` and `-1` are not seeds". Reading: `-0` and `1e3` are
    /// not written as integers in that range either, so they are not seeds.
    pub fn seed(&self) -> Option<u64> {
        match self {
            Json::Num(t) if t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok(),
            _ => None,
        }
    }

    /// The items of an array, if this is one.
    pub fn items(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(items) => Some(items),
            _ => None,
        }
    }

    /// Sets member `key` (replacing every member of that name in place of the first), or
    /// appends it.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Obj(members) = self {
            match members.iter().position(|(k, _)| k == key) {
                Some(at) => {
                    members[at].1 = value;
                    let mut seen = 0;
                    members.retain(|(k, _)| {
                        seen += usize::from(k == key);
                        k != key || seen == 1
                    });
                }
                None => members.push((key.to_string(), value)),
            }
        }
    }

    /// Removes every member named `key`.
    pub fn remove(&mut self, key: &str) {
        if let Json::Obj(members) = self {
            members.retain(|(k, _)| k != key);
        }
    }
}

/// Reads `bytes` as one JSON text.
pub fn read(bytes: &[u8]) -> Read {
    read_with_facts(bytes).0
}

/// Facts about a text met while reading it (up to its first error, if any): what known
/// differences between this reader and the product's depend on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// The deepest nesting reached.
    pub max_depth: usize,
    /// Some object repeated a key (checked as each key is read).
    pub repeated_key: bool,
    /// Some number rounds to the largest finite double, `±1.7976931348623157e308`.
    pub largest_double: bool,
}

/// [`read`], with the [`Facts`] met on the way.
pub fn read_with_facts(bytes: &[u8]) -> (Read, Facts) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return (Read::NotJson("not UTF-8", 0), Facts::default());
    };
    let mut reader = Reader {
        s: text.as_bytes(),
        i: 0,
        facts: Facts::default(),
    };
    let read = reader.document();
    (read, reader.facts)
}

/// A container being read. Past the depth bound, containers are only counted.
enum Open {
    Arr(Vec<Json>),
    /// Members so far and the key of the member whose value is being read.
    Obj(Vec<(String, Json)>, String),
    /// A container past the bound: only whether it is an object matters.
    Skipped {
        object: bool,
    },
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    facts: Facts,
}

type Step<T> = Result<T, (&'static str, usize)>;

impl Reader<'_> {
    fn document(&mut self) -> Read {
        match self.run() {
            Err((why, at)) => Read::NotJson(why, at),
            Ok((_, true)) => Read::TooDeep,
            Ok((doc, false)) => Read::Doc(doc),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn fail<T>(&self, why: &'static str) -> Step<T> {
        Err((why, self.i))
    }

    fn eat(&mut self, b: u8, why: &'static str) -> Step<()> {
        self.ws();
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            self.fail(why)
        }
    }

    /// The whole text: one value and nothing but whitespace after it. Returns the value
    /// and whether some container was nested past the bound.
    fn run(&mut self) -> Step<(Json, bool)> {
        let mut stack: Vec<Open> = Vec::new();
        let mut too_deep = false;
        'value: loop {
            self.ws();
            let mut value = match self.peek() {
                None => return self.fail("end of text where a value belongs"),
                Some(open @ (b'[' | b'{')) => {
                    self.i += 1;
                    let object = open == b'{';
                    let close = if object { b'}' } else { b']' };
                    let depth = stack.len() + 1;
                    too_deep |= depth > DEPTH_BOUND;
                    self.facts.max_depth = self.facts.max_depth.max(depth);
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                        match (depth > DEPTH_BOUND, object) {
                            (true, _) => Json::Null,
                            (false, true) => Json::Obj(Vec::new()),
                            (false, false) => Json::Arr(Vec::new()),
                        }
                    } else {
                        let frame = if depth > DEPTH_BOUND {
                            if object {
                                self.key()?;
                            }
                            Open::Skipped { object }
                        } else if object {
                            Open::Obj(Vec::new(), self.key()?)
                        } else {
                            Open::Arr(Vec::new())
                        };
                        stack.push(frame);
                        continue 'value;
                    }
                }
                Some(b'"') => Json::Str(self.string()?),
                Some(b't') => self.literal("true", Json::Bool(true))?,
                Some(b'f') => self.literal("false", Json::Bool(false))?,
                Some(b'n') => self.literal("null", Json::Null)?,
                Some(b'-' | b'0'..=b'9') => Json::Num(self.number()?),
                Some(_) => return self.fail("a byte that starts no value"),
            };
            // A value is complete: hand it to the open container, which either wants
            // another value or closes (and is itself a complete value).
            loop {
                let Some(top) = stack.last_mut() else {
                    self.ws();
                    return match self.peek() {
                        None => Ok((value, too_deep)),
                        Some(_) => self.fail("text after the value"),
                    };
                };
                let object = match top {
                    Open::Arr(items) => {
                        items.push(value);
                        false
                    }
                    Open::Obj(members, key) => {
                        members.push((std::mem::take(key), value));
                        true
                    }
                    Open::Skipped { object } => *object,
                };
                self.ws();
                match (self.peek(), object) {
                    (Some(b','), _) => {
                        self.i += 1;
                        if object {
                            // A repeated key is noted before its colon is read: what a
                            // reader that checks keys as it meets them sees first.
                            let key = self.key_string()?;
                            if let Some(Open::Obj(members, slot)) = stack.last_mut() {
                                self.facts.repeated_key |= members.iter().any(|(k, _)| *k == key);
                                *slot = key.clone();
                            }
                            self.eat(b':', "expected `:` after a key")?;
                        }
                        continue 'value;
                    }
                    (Some(b']'), false) | (Some(b'}'), true) => {
                        self.i += 1;
                        value = match stack.pop() {
                            Some(Open::Arr(items)) => Json::Arr(items),
                            Some(Open::Obj(members, _)) => Json::Obj(members),
                            _ => Json::Null,
                        };
                    }
                    (None, _) => return self.fail("end of text inside a container"),
                    (Some(_), _) => return self.fail("expected `,` or the closing bracket"),
                }
            }
        }
    }

    /// An object key and the colon after it.
    fn key(&mut self) -> Step<String> {
        let key = self.key_string()?;
        self.eat(b':', "expected `:` after a key")?;
        Ok(key)
    }

    /// An object key.
    fn key_string(&mut self) -> Step<String> {
        self.ws();
        if self.peek() != Some(b'"') {
            return self.fail("a key that is not a string");
        }
        self.string()
    }

    fn literal(&mut self, word: &str, value: Json) -> Step<Json> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(value)
        } else {
            self.fail("a misspelt literal")
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, within a double's range.
    fn number(&mut self) -> Step<String> {
        let start = self.i;
        let digits = |r: &mut Self| {
            let from = r.i;
            while r.peek().is_some_and(|b| b.is_ascii_digit()) {
                r.i += 1;
            }
            r.i - from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return self.fail("a number without digits"),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return self.fail("a fraction without digits");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return self.fail("an exponent without digits");
            }
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => {
                self.facts.largest_double |= x.abs() == f64::MAX;
                Ok(text)
            }
            _ => Err(("a number beyond a double's range", start)),
        }
    }

    /// A string, escapes decoded. The opening quote is at `self.i`.
    fn string(&mut self) -> Step<String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return self.fail("end of text inside a string");
            };
            self.i += 1;
            match b {
                b'"' => break,
                0x00..=0x1f => return Err(("a control character in a string", self.i - 1)),
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return self.fail("end of text inside an escape");
                    };
                    self.i += 1;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => return self.fail("an unknown escape"),
                    };
                    let c = match simple {
                        Some(c) => char::from(c),
                        None => self.unicode_escape()?,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(b),
            }
        }
        // The input is UTF-8 and escapes add whole characters, so this never fails.
        String::from_utf8(out).map_err(|_| ("not UTF-8", self.i))
    }

    /// The character of a `\uXXXX` escape (the `\u` already read), pairing surrogates.
    fn unicode_escape(&mut self) -> Step<char> {
        let first = self.hex4()?;
        let code = match first {
            0xd800..=0xdbff => {
                if !self.s[self.i..].starts_with(b"\\u") {
                    return self.fail("an unpaired high surrogate");
                }
                self.i += 2;
                let low = self.hex4()?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return self.fail("a high surrogate without its low half");
                }
                0x10000 + ((first - 0xd800) << 10) + (low - 0xdc00)
            }
            0xdc00..=0xdfff => return self.fail("an unpaired low surrogate"),
            other => other,
        };
        char::from_u32(code).ok_or(("an escape that is no character", self.i))
    }

    fn hex4(&mut self) -> Step<u32> {
        let Some(digits) = self.s.get(self.i..self.i + 4) else {
            return self.fail("a short `\\u` escape");
        };
        let mut code = 0;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return self.fail("a `\\u` escape that is not hex"),
            };
            code = code * 16 + u32::from(v);
        }
        self.i += 4;
        Ok(code)
    }
}

// ---------------------------------------------------------------------------------------
// Writing.

/// How the writer spells a document. Every spelling means the same JSON.
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
    /// Percent of token gaps that get whitespace.
    pub gaps: u64,
    /// Whether that whitespace may include line breaks (never for JSON Lines rows).
    pub newlines: bool,
    /// Percent of string characters written as `\uXXXX` (or `\/`).
    pub escapes: u64,
}

impl Spelling {
    pub const PLAIN: Spelling = Spelling {
        gaps: 0,
        newlines: false,
        escapes: 0,
    };
}

/// Anything that can draw the writer's choices.
pub trait Choices {
    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool;
    fn below(&mut self, n: usize) -> usize;
}

/// No choices: the plain spelling.
struct Plain;

impl Choices for Plain {
    fn chance(&mut self, _: u64) -> bool {
        false
    }
    fn below(&mut self, _: usize) -> usize {
        0
    }
}

/// `value` in the plain, compact spelling.
pub fn plain(value: &Json) -> String {
    let mut out = String::new();
    write(value, Spelling::PLAIN, &mut Plain, &mut out);
    out
}

/// Appends `value` to `out`, spelt as `spelling` and `choices` say.
pub fn write(value: &Json, spelling: Spelling, choices: &mut dyn Choices, out: &mut String) {
    let gap = |c: &mut dyn Choices, out: &mut String| {
        if spelling.gaps > 0 && c.chance(spelling.gaps) {
            let pool: &[&str] = if spelling.newlines {
                &[" ", "  ", "\t", "\n", "\r\n", "\n    "]
            } else {
                &[" ", "  ", "\t", "\r"]
            };
            out.push_str(pool[c.below(pool.len())]);
        }
    };
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Num(t) | Json::Raw(t) => out.push_str(t),
        Json::Str(s) => write_str(s, spelling, choices, out),
        Json::Arr(items) => {
            out.push('[');
            for (n, it) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                gap(choices, out);
                write(it, spelling, choices, out);
                gap(choices, out);
            }
            out.push(']');
        }
        Json::Obj(members) => {
            out.push('{');
            for (n, (k, v)) in members.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                gap(choices, out);
                write_str(k, spelling, choices, out);
                gap(choices, out);
                out.push(':');
                gap(choices, out);
                write(v, spelling, choices, out);
                gap(choices, out);
            }
            out.push('}');
        }
    }
}

fn write_str(s: &str, spelling: Spelling, choices: &mut dyn Choices, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            '/' if spelling.escapes > 0 && choices.chance(spelling.escapes) => {
                out.push_str("\\/");
            }
            c if spelling.escapes > 0 && choices.chance(spelling.escapes) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if choices.chance(50) {
                        out.push_str(&format!("\\u{u:04X}"));
                    } else {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
