//! A receipt's text read back quickly: its two long lists (`planned_seeds`,
//! `attempted_seeds`: 10^6 seeds and more) parsed by hand, everything else by `serde_json`.
//!
//! `serde_json` turns a 20-digit seed into a `u64` at about 16 instructions a digit; the
//! supervisor of `prop run` reads back every receipt a run wrote (its two seed lists: 2 × 10^6
//! seeds for a plan of 10^6), so seeds near 2^64 cost it twice what seeds below 10^7 do.
//! Here the top-level members are found by a scan that lexes JSON as `serde_json` does (strings
//! with their escapes, nesting); the value of each of the two lists, when it is an array of
//! plain integers in `0..=2^64-1`, is parsed by hand and stands in as `[]` for `serde_json`,
//! which reads the rest of the receipt as it reads any, errors and all.

use crate::Receipt;

/// JSON's whitespace.
#[inline(always)]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | b'\r')
}

#[inline(always)]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_ws) {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string starting at `b[i] == b'"'`, and
/// whether it holds an escape.
fn skip_string(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    i += 1;
    let mut escaped = false;
    loop {
        match *b.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
}

/// The end of the value starting at `b[i]` (not whitespace), were the text valid JSON (it is
/// not checked here: `serde_json` reads every byte skipped).
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => Some(skip_string(b, i)?.0),
        b'[' | b'{' => {
            let mut depth = 0usize;
            loop {
                match *b.get(i)? {
                    b'"' => {
                        i = skip_string(b, i)?.0;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        // A scalar: up to the next structural byte or whitespace.
        _ => {
            while let Some(&c) = b.get(i) {
                if matches!(c, b'"' | b'[' | b'{' | b']' | b'}' | b',' | b':') || is_ws(c) {
                    break;
                }
                i += 1;
            }
            Some(i)
        }
    }
}

/// `10^k` for `k` digits.
const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The integer at `b[i..]` and where it ends, when `serde_json` reads it as a `u64`: `0`, or a
/// digit 1-9 and more digits, at most `u64::MAX` (what follows is the caller's to check).
/// Eight bytes at a time: which of them are digits, and their value, with a few shifts and
/// multiplications (the bytes past the last digit are dropped).
#[inline]
fn integer(b: &[u8], start: usize) -> Option<(usize, u64)> {
    let mut i = start;
    let mut n: u64 = 0;
    loop {
        let Some(chunk) = b.get(i..i + 8) else {
            return integer_bytewise(b, start);
        };
        let chunk = u64::from_le_bytes(chunk.try_into().ok()?);
        // Each byte minus `0`: a digit is 0..=9; the lowest byte that is not has its high bit
        // set in `t` or in `t + 0x76` (no borrow or carry comes from the digits below it).
        let t = chunk.wrapping_sub(0x3030_3030_3030_3030);
        let not_digit = (t | t.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
        let k = (not_digit.trailing_zeros() / 8) as usize;
        if k > 0 {
            // The k digits into the top bytes (the first digit the most significant), then
            // pairs, fours and eight combined.
            let mut v = t << (8 * (8 - k));
            v = (v.wrapping_mul(2561) >> 8) & 0x00FF_00FF_00FF_00FF;
            v = (v.wrapping_mul(6_553_601) >> 16) & 0x0000_FFFF_0000_FFFF;
            v = (v.wrapping_mul(42_949_672_960_001) >> 32) & 0xFFFF_FFFF;
            i += k;
            n = if i - start < 20 {
                // At most 19 digits: below 10^19, which fits.
                n * POW10[k] + v
            } else {
                n.checked_mul(POW10[k])?.checked_add(v)?
            };
        }
        if k < 8 {
            break;
        }
    }
    let len = i - start;
    if len == 0 || (len > 1 && b[start] == b'0') {
        return None;
    }
    Some((i, n))
}

/// [`integer`] a byte at a time (fewer than eight bytes left).
fn integer_bytewise(b: &[u8], start: usize) -> Option<(usize, u64)> {
    let mut i = start;
    let mut n: u64 = 0;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
        i += 1;
    }
    let len = i - start;
    if len == 0 || (len > 1 && b[start] == b'0') {
        return None;
    }
    Some((i, n))
}

/// The seeds of the array at `b[i] == b'['` and where it ends, when it is an array of
/// integers `serde_json` reads as `u64` (`0` or a digit 1-9 then digits, at most
/// `u64::MAX`); `None` for anything else.
fn seed_list(b: &[u8], mut i: usize) -> Option<(usize, Vec<u64>)> {
    i = skip_ws(b, i + 1);
    let mut seeds = Vec::new();
    if b.get(i) == Some(&b']') {
        return Some((i + 1, seeds));
    }
    loop {
        let (end, n) = integer(b, i)?;
        i = end;
        seeds.push(n);
        // `, ` between elements as the runner writes them; any JSON whitespace is accepted.
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b']' => return Some((i + 1, seeds)),
            c if is_ws(c) => {
                i = skip_ws(b, i);
                match *b.get(i)? {
                    b',' => i = skip_ws(b, i + 1),
                    b']' => return Some((i + 1, seeds)),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

impl Receipt {
    /// `serde_json::from_str::<Receipt>(text)`, faster on long seed lists (see the module
    /// docs). `Some` only with the receipt `serde_json` reads; `None` tells nothing but that
    /// this way did not read it (a receipt that is not valid, a seed list with anything but
    /// plain integers, a member named with an escape, ...): the caller reads `text` the usual
    /// way then.
    pub fn from_str_fast(text: &str) -> Option<Receipt> {
        let b = text.as_bytes();
        let mut i = skip_ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i = skip_ws(b, i + 1);
        // (start, end, seeds) of each list's value.
        let mut planned: Option<(usize, usize, Vec<u64>)> = None;
        let mut attempted: Option<(usize, usize, Vec<u64>)> = None;
        if b.get(i) != Some(&b'}') {
            loop {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let (key_end, escaped) = skip_string(b, i)?;
                let key = &b[i + 1..key_end - 1];
                i = skip_ws(b, key_end);
                if b.get(i) != Some(&b':') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                let list = match key {
                    b"planned_seeds" if !escaped => Some(&mut planned),
                    b"attempted_seeds" if !escaped => Some(&mut attempted),
                    _ => None,
                };
                match list {
                    Some(list) if b.get(i) == Some(&b'[') => {
                        if list.is_some() {
                            // A repeated member: serde_json refuses it.
                            return None;
                        }
                        let (end, seeds) = seed_list(b, i)?;
                        *list = Some((i, end, seeds));
                        i = end;
                    }
                    _ => i = skip_value(b, i)?,
                }
                i = skip_ws(b, i);
                match *b.get(i)? {
                    b',' => i = skip_ws(b, i + 1),
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        let (planned, attempted) = (planned?, attempted?);
        let (first, second) = if planned.0 < attempted.0 {
            (&planned, &attempted)
        } else {
            (&attempted, &planned)
        };
        let mut rest =
            String::with_capacity(text.len() - (first.1 - first.0) - (second.1 - second.0) + 4);
        rest.push_str(&text[..first.0]);
        rest.push_str("[]");
        rest.push_str(&text[first.1..second.0]);
        rest.push_str("[]");
        rest.push_str(&text[second.1..]);
        let mut receipt: Receipt = serde_json::from_str(&rest).ok()?;
        if !receipt.planned_seeds.is_empty() || !receipt.attempted_seeds.is_empty() {
            return None;
        }
        receipt.planned_seeds = planned.2;
        receipt.attempted_seeds = attempted.2;
        Some(receipt)
    }
}

#[cfg(test)]
mod tests;
