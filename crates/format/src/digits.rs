//! Decimal digits of a `u64` written straight into a byte buffer: two digits per division,
//! no intermediate buffer, no UTF-8 check (the bytes are ASCII digits by construction).
//! The receipt's seed lists (10^7 seeds at scale) and the open receipt's per-trial entry
//! are written with these.
//!
//! Seeds mostly come in plan order, one after the other: [`DecimalRun`] turns `n + 1` into
//! digits by adding one to the digits of `n` (one byte changed, nine times in ten), so a
//! 20-digit seed costs about what a 7-digit one does.

/// `"00" "01" .. "99"`: the two digits of every number below 100.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// How many decimal digits `n` has (1 for 0; at most 20).
#[inline(always)]
pub fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Writes the decimal digits of `n` at the start of `out` and returns how many (see
/// [`decimal_len`]). Panics if `out` is shorter than that (20 bytes always suffice).
#[inline(always)]
pub fn write_decimal(out: &mut [u8], n: u64) -> usize {
    let len = decimal_len(n);
    fill_decimal(&mut out[..len], n);
    len
}

/// Fills `out`, exactly [`decimal_len`]`(n)` bytes long, with the digits of `n`, four at a
/// time from the right, then two, then one.
#[inline(always)]
pub(crate) fn fill_decimal(out: &mut [u8], mut n: u64) {
    let mut i = out.len();
    while n >= 10_000 {
        let four = (n % 10_000) as usize;
        n /= 10_000;
        let (hi, lo) = (four / 100 * 2, four % 100 * 2);
        out[i - 4..i - 2].copy_from_slice(&PAIRS[hi..hi + 2]);
        out[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
        i -= 4;
    }
    let mut n = n as usize;
    if n >= 100 {
        let lo = n % 100 * 2;
        n /= 100;
        out[i - 2..i].copy_from_slice(&PAIRS[lo..lo + 2]);
        i -= 2;
    }
    if n >= 10 {
        out[i - 2..i].copy_from_slice(&PAIRS[n * 2..n * 2 + 2]);
    } else {
        out[i - 1] = b'0' + n as u8;
    }
}

/// The digits of a run of numbers: [`DecimalRun::digits`] of `n` right after the digits of
/// `n - 1` adds one to those digits in place; any other number is formatted anew. The bytes
/// are always exactly [`write_decimal`]'s.
#[derive(Debug, Clone, Copy)]
pub struct DecimalRun {
    /// The digits of `last` at `buf[start..]` (nothing yet when `start == 20`).
    buf: [u8; 20],
    start: u8,
    last: u64,
}

impl Default for DecimalRun {
    fn default() -> DecimalRun {
        DecimalRun::new()
    }
}

impl DecimalRun {
    /// A run with no number yet.
    pub const fn new() -> DecimalRun {
        DecimalRun {
            buf: [b'0'; 20],
            start: 20,
            last: 0,
        }
    }

    /// The decimal digits of `n`.
    #[inline(always)]
    pub fn digits(&mut self, n: u64) -> &[u8] {
        let start = usize::from(self.start);
        if start < 20 && self.last.checked_add(1) == Some(n) {
            self.last = n;
            // Add one: trailing nines become zeros, the digit before them goes up (a new
            // leading `1` when they were all nines; 20 nines exceed `u64::MAX`, so there is
            // always room for it).
            let mut i = 19;
            while self.buf[i] == b'9' {
                self.buf[i] = b'0';
                if i == start {
                    self.start -= 1;
                    self.buf[start - 1] = b'1';
                    return &self.buf[start - 1..];
                }
                i -= 1;
            }
            self.buf[i] += 1;
            return &self.buf[start..];
        }
        let len = decimal_len(n);
        fill_decimal(&mut self.buf[20 - len..], n);
        self.start = (20 - len) as u8;
        self.last = n;
        &self.buf[20 - len..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_numbers_has_the_standard_digits() {
        let mut run = DecimalRun::new();
        let mut check = |n: u64| {
            assert_eq!(run.digits(n), n.to_string().as_bytes(), "{n}");
        };
        // Every carry into a new digit, from 1 to 20 digits, and runs across them.
        for p in 0..20u32 {
            let t = 10u64.pow(p);
            for n in t.saturating_sub(3)..=t.saturating_add(3) {
                check(n);
            }
        }
        for n in u64::MAX - 1_005..=u64::MAX {
            check(n);
        }
        // Wrapping from u64::MAX to 0 is not "the next number".
        check(0);
        for n in 0..120_000 {
            check(n);
        }
        // Jumps back and forth, then runs again.
        for n in [5, 4, 99, 1_000, 999, 999, 1_000, 1_001, 17, u64::MAX, 1] {
            check(n);
        }
        for n in 999_999_999_999_990..1_000_000_000_000_010 {
            check(n);
        }
    }

    #[test]
    fn digits_are_the_standard_ones() {
        let mut edges = vec![
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            999,
            1000,
            u64::MAX,
            u64::MAX - 1,
        ];
        for p in 1..20u32 {
            let t = 10u64.pow(p);
            edges.extend([t - 1, t, t + 1]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            edges.push(x);
            edges.push(x >> (x % 64));
        }
        for n in edges {
            let mut out = [b'x'; 24];
            let len = write_decimal(&mut out, n);
            assert_eq!(&out[..len], n.to_string().as_bytes(), "{n}");
            assert_eq!(len, decimal_len(n));
            assert!(out[len..].iter().all(|&b| b == b'x'));
        }
    }
}
