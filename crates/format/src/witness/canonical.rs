//! The fastest reading of a witness line: a byte scanner for the flat JSON objects a runner
//! writes (string, integer, boolean and `null` members, no escapes), straight into an
//! existing [`WitnessRow`] whose strings are reused (no allocation once they are large
//! enough). It accepts a line only when the exact reading would accept it with the same row;
//! anything else — an escape, a nested value, a float, a repeated key, a field missing,
//! empty or of another type, a control character, bytes that are not UTF-8, text after the
//! object — makes it give up (`false`), and the slower readings decide (the serde fast path,
//! then the exact reading, which names the problem).

use super::{Runner, Verdict, WitnessRow};

/// The members a row is read from (the order of [`Field`]'s discriminants).
const KEYS: [&[u8]; 16] = [
    b"witness_id",
    b"property_id",
    b"property_digest",
    b"fixture_pin",
    b"bound",
    b"seed",
    b"verdict",
    b"signature",
    b"runner",
    b"freeze_writer",
    b"run_id",
    b"patch_id",
    b"code",
    b"replayed_signature",
    b"rng",
    b"attempt",
];

/// Unknown members a line may have before the scanner gives up (their keys are compared to
/// find a repeat).
const MAX_OTHERS: usize = 8;

/// Members every row must have: `witness_id` ..= `freeze_writer`.
const REQUIRED: u16 = (1 << 10) - 1;

struct Cursor<'a> {
    b: &'a [u8],
    /// `b` as text (all of it printable ASCII).
    text: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// A string after its opening quote: its text (the line has no `\\`, so the next `"`
    /// ends it).
    fn string_body(&mut self) -> Option<&'a str> {
        let end = self.i + memchr::memchr(b'"', &self.b[self.i..])?;
        let text = self.text.get(self.i..end)?;
        self.i = end + 1;
        Some(text)
    }

    /// A member's key, after its opening quote: the index of one of [`KEYS`] (`guess` and
    /// the key after it are tried first: the runner writes them in order, leaving out the
    /// extensions a row does not have, such as `replayed_signature` before `rng`), or the
    /// key's bytes.
    fn key(&mut self, guess: usize) -> Option<Result<usize, &'a [u8]>> {
        let rest = &self.b[self.i..];
        for guess in [guess, guess + 1] {
            if let Some(k) = KEYS.get(guess)
                && rest.len() > k.len()
                && rest.starts_with(k)
                && rest[k.len()] == b'"'
            {
                self.i += k.len() + 1;
                return Some(Ok(guess));
            }
        }
        let key = self.string_body()?.as_bytes();
        Some(KEYS.iter().position(|k| *k == key).ok_or(key))
    }

    fn string(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        self.string_body()
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    /// An unsigned integer as JSON writes it (`0` or no leading zero), within `u64`, not
    /// followed by a fraction or an exponent.
    fn u64(&mut self) -> Option<u64> {
        let start = self.i;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 || (digits > 1 && self.b[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return None;
        }
        Some(n)
    }

    /// A member value that is not one of the row's typed fields: a string (`Some(text)`), or
    /// an integer, a boolean or `null` (`Some("")`, ignored). `None`: give up (an object, an
    /// array, a float, anything unusual).
    fn scalar(&mut self) -> Option<&'a str> {
        match self.peek()? {
            b'"' => self.string(),
            b't' => self.literal(b"true").then_some(""),
            b'f' => self.literal(b"false").then_some(""),
            b'n' => self.literal(b"null").then_some(""),
            b'-' => {
                self.i += 1;
                self.small_int().then_some("")
            }
            b'0'..=b'9' => self.small_int().then_some(""),
            _ => None,
        }
    }

    /// An integer of at most 18 digits (so every reader holds it exactly).
    fn small_int(&mut self) -> bool {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        let digits = self.i - start;
        digits > 0
            && digits <= 18
            && !(digits > 1 && self.b[start] == b'0')
            && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))
    }
}

fn set(field: &mut String, text: &str) {
    field.clear();
    field.push_str(text);
}

fn set_option(field: &mut Option<String>, text: &str) {
    if text.is_empty() {
        *field = None;
        return;
    }
    match field {
        Some(s) => set(s, text),
        None => *field = Some(text.to_string()),
    }
}

/// Reads `line` into `row`, reusing its strings, when the line is a flat row the scanner can
/// vouch for; `false`: it gave up, and `row` holds nothing meaningful.
pub(super) fn row_into(line: &[u8], row: &mut WitnessRow) -> bool {
    scan(line, row).is_some()
}

/// The scan of one line: the object's braces and commas here, each member read by
/// [`Members::read`], then the checks on the row as a whole.
fn scan(line: &[u8], row: &mut WitnessRow) -> Option<()> {
    // Only plain lines: then no string holds an escape, a control character or bytes that
    // are not UTF-8, and a string ends at the next `"`.
    if !plain(line) {
        return None;
    }
    let text = std::str::from_utf8(line).ok()?;
    let mut c = Cursor {
        b: line,
        text,
        i: 0,
    };
    c.ws();
    if !c.eat(b'{') {
        return None;
    }
    let mut members = Members {
        guess: 0,
        seen: 0,
        others: [&[]; MAX_OTHERS],
        n_others: 0,
    };
    loop {
        members.read(&mut c, row)?;
        c.ws();
        if c.eat(b',') {
            continue;
        }
        if c.eat(b'}') {
            break;
        }
        return None;
    }
    c.ws();
    if c.i != line.len() || members.seen & REQUIRED != REQUIRED {
        return None;
    }
    members.clear_absent(row);
    Some(())
}

/// What the scan of a line has seen of its members so far.
struct Members<'a> {
    /// The index in [`KEYS`] of the key expected next (the one after the last read).
    guess: usize,
    /// One bit per key of [`KEYS`] read.
    seen: u16,
    /// The unknown keys read, to find a repeat.
    others: [&'a [u8]; MAX_OTHERS],
    n_others: usize,
}

impl<'a> Members<'a> {
    /// Reads one member (`"key": value`, from its opening quote) into `row`; `None`: give up.
    #[inline(always)]
    fn read(&mut self, c: &mut Cursor<'a>, row: &mut WitnessRow) -> Option<()> {
        c.ws();
        if !c.eat(b'"') {
            return None;
        }
        let key = c.key(self.guess)?;
        c.ws();
        if !c.eat(b':') {
            return None;
        }
        c.ws();
        match key {
            Ok(i) => {
                self.guess = i + 1;
                let bit = 1u16 << i;
                if self.seen & bit != 0 {
                    return None;
                }
                self.seen |= bit;
                field(c, i, row)
            }
            Err(key) => {
                if self.others[..self.n_others].contains(&key) || self.n_others == MAX_OTHERS {
                    return None;
                }
                self.others[self.n_others] = key;
                self.n_others += 1;
                c.scalar().map(|_| ())
            }
        }
    }

    /// Extensions a row does not name are absent.
    #[inline]
    fn clear_absent(&self, row: &mut WitnessRow) {
        let extensions = [
            &mut row.run_id,
            &mut row.patch_id,
            &mut row.code,
            &mut row.replayed_signature,
            &mut row.rng,
        ];
        for (i, field) in extensions.into_iter().enumerate() {
            if self.seen & (1 << (10 + i)) == 0 {
                *field = None;
            }
        }
        if self.seen & (1 << 15) == 0 {
            row.attempt = None;
        }
    }
}

/// Reads the value of the member of key `KEYS[i]` into its field of `row`; `None`: give up
/// (a value of another type, or empty where the exact reading wants a non-empty string).
#[inline(always)]
fn field(c: &mut Cursor<'_>, i: usize, row: &mut WitnessRow) -> Option<()> {
    match i {
        0..=4 | 7 => {
            let text = c.string()?;
            if text.is_empty() {
                return None;
            }
            let field = match i {
                0 => &mut row.witness_id,
                1 => &mut row.property_id,
                2 => &mut row.property_digest,
                3 => &mut row.fixture_pin,
                4 => &mut row.bound,
                _ => &mut row.signature,
            };
            set(field, text);
        }
        5 => row.seed = c.u64()?,
        6 => {
            row.verdict = match c.string()? {
                "pass" => Verdict::Pass,
                "fail" => Verdict::Fail,
                _ => return None,
            }
        }
        8 => {
            row.runner = match c.string()? {
                "local" => Runner::Local,
                "remote" => Runner::Remote,
                _ => return None,
            }
        }
        9 => {
            row.freeze_writer = if c.literal(b"true") {
                true
            } else if c.literal(b"false") {
                false
            } else {
                return None;
            }
        }
        14 => {
            // Present, `rng` must be a non-empty string (else the exact reading names the
            // row malformed).
            let text = c.string()?;
            if text.is_empty() {
                return None;
            }
            set_option(&mut row.rng, text);
        }
        15 => {
            // Present, `attempt` must be a replay number (else the exact reading names the
            // row malformed).
            let n = c.u64()?;
            row.attempt = Some(u32::try_from(n).ok().filter(|&n| n >= 1)?);
        }
        _ => {
            let text = c.scalar()?;
            let field = match i {
                10 => &mut row.run_id,
                11 => &mut row.patch_id,
                12 => &mut row.code,
                _ => &mut row.replayed_signature,
            };
            set_option(field, text);
        }
    }
    Some(())
}

/// Whether `line` is printable ASCII without a backslash (so no string in it holds an
/// escape, and a `"` always opens or closes a string). One pass the compiler can vectorise.
#[inline]
fn plain(line: &[u8]) -> bool {
    !line.iter().fold(false, |bad, &b| {
        bad | !(0x20..0x7f).contains(&b) | (b == b'\\')
    })
}

/// The seed of a line, from its bytes alone, when they can tell: the line is [`plain`] and
/// its first `"seed"` is followed by spaces, a `:`, spaces and an integer within `u64` (no
/// fraction or exponent). Then the line is either not a row (its reading fails) or a row of
/// that seed: in a plain line a `"seed"` followed by `:` is the key `seed` unless the line is
/// not JSON, and a second `seed` key makes it not a row.
pub(super) fn plain_seed(line: &[u8]) -> Option<u64> {
    if !plain(line) {
        return None;
    }
    // One searcher for every line (`memmem::find` builds one per call).
    static SEED: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"seed\""));
    let at = SEED.find(line)?;
    let mut c = Cursor {
        b: line,
        text: "",
        i: at + 6,
    };
    while c.eat(b' ') {}
    if !c.eat(b':') {
        return None;
    }
    while c.eat(b' ') {}
    c.u64()
}
