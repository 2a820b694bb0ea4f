//! Amounts as a customer receipt prints them, in a locale, and as the shop reads them back.
//!
//! Money is integer cents. [`format_amount`] prints cents the way a receipt in the given
//! [`Locale`] shows them: `1234.56` in the C locale, `1.234,56` in `de_DE` (decimal comma,
//! and a `.` between groups of three digits from 1000 on, as glibc's `de_DE` groups).
//! [`parse_amount`] is the shop's own amount parser, written for the C locale: digits, then
//! optionally a decimal mark and exactly two decimals. It tolerates a decimal comma (customers
//! type one) but knows no grouping separators — so a `de_DE` amount of 1000 or more does not
//! read back.

use std::fmt;

/// A locale a receipt can be printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locale {
    /// `1234.56`: decimal point, no grouping.
    #[default]
    C,
    /// `1.234,56`: decimal comma, `.` between groups of three digits.
    DeDe,
}

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::C, Locale::DeDe];

    /// The locale's name as `LANG` / `LC_ALL` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Locale::C => "C",
            Locale::DeDe => "de_DE",
        }
    }

    /// The locale named `name` (`C`, `POSIX`, `de_DE`); a codeset suffix such as `.UTF-8`
    /// is ignored. `None` for a locale this crate cannot print in.
    pub fn from_name(name: &str) -> Option<Locale> {
        let base = name.split_once('.').map_or(name, |(base, _codeset)| base);
        match base {
            "C" | "POSIX" => Some(Locale::C),
            "de_DE" => Some(Locale::DeDe),
            _ => None,
        }
    }

    fn decimal_mark(self) -> char {
        match self {
            Locale::C => '.',
            Locale::DeDe => ',',
        }
    }

    fn thousands_separator(self) -> Option<char> {
        match self {
            Locale::C => None,
            Locale::DeDe => Some('.'),
        }
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why [`parse_amount`] could not read an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("`{0}` is not an amount: expected digits, then a decimal mark and two decimals")]
    Malformed(String),
    #[error("`{0}` does not fit in i64 cents")]
    Overflow(String),
}

/// `cents` as a receipt in `locale` prints it, always with two decimals: `123456` is
/// `1234.56` in C and `1.234,56` in `de_DE`; a negative amount starts with `-`.
pub fn format_amount(cents: i64, locale: Locale) -> String {
    let magnitude = cents.unsigned_abs();
    let units = (magnitude / 100).to_string();
    let mut out = String::with_capacity(units.len() * 4 / 3 + 4);
    if cents < 0 {
        out.push('-');
    }
    for (i, digit) in units.chars().enumerate() {
        let remaining = units.len() - i;
        if let Some(sep) = locale.thousands_separator()
            && i > 0
            && remaining.is_multiple_of(3)
        {
            out.push(sep);
        }
        out.push(digit);
    }
    out.push(locale.decimal_mark());
    out.push_str(&format!("{:02}", magnitude % 100));
    out
}

/// Reads an amount in cents the way the shop's systems do (C locale): an optional `-`,
/// decimal digits, then optionally a decimal mark (`.`, or `,` as customers type it)
/// followed by exactly two digits. Grouping separators are not understood: `1.234,56` is
/// [`AmountError::Malformed`].
pub fn parse_amount(text: &str) -> Result<i64, AmountError> {
    let malformed = || AmountError::Malformed(text.to_string());
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (units, decimals) = match unsigned.rfind(['.', ',']) {
        Some(mark) => (&unsigned[..mark], &unsigned[mark + 1..]),
        None => (unsigned, "00"),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(units) || !all_digits(decimals) || decimals.len() != 2 {
        return Err(malformed());
    }
    let magnitude = units
        .bytes()
        .chain(decimals.bytes())
        .try_fold(0i128, |acc, b| {
            acc.checked_mul(10)?.checked_add(i128::from(b - b'0'))
        })
        .ok_or_else(|| AmountError::Overflow(text.to_string()))?;
    let signed = if negative { -magnitude } else { magnitude };
    i64::try_from(signed).map_err(|_| AmountError::Overflow(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_print_as_receipts_in_each_locale() {
        let cases: &[(i64, &str, &str)] = &[
            (0, "0.00", "0,00"),
            (5, "0.05", "0,05"),
            (99_999, "999.99", "999,99"),
            (100_000, "1000.00", "1.000,00"),
            (123_456, "1234.56", "1.234,56"),
            (12_345_678, "123456.78", "123.456,78"),
            (123_456_789, "1234567.89", "1.234.567,89"),
            (-123_456, "-1234.56", "-1.234,56"),
            (
                i64::MIN,
                "-92233720368547758.08",
                "-92.233.720.368.547.758,08",
            ),
        ];
        for &(cents, c, de) in cases {
            assert_eq!(format_amount(cents, Locale::C), c, "{cents}");
            assert_eq!(format_amount(cents, Locale::DeDe), de, "{cents}");
        }
    }

    #[test]
    fn the_shop_parser_reads_c_amounts_and_a_decimal_comma_but_no_grouping() {
        let malformed = |s: &str| Err(AmountError::Malformed(s.to_string()));
        let cases: &[(&str, Result<i64, AmountError>)] = &[
            ("1234.56", Ok(123_456)),
            ("1234,56", Ok(123_456)),
            ("999,99", Ok(99_999)),
            ("0.05", Ok(5)),
            ("12", Ok(1200)),
            ("-3.10", Ok(-310)),
            ("-92233720368547758.08", Ok(i64::MIN)),
            (
                "92233720368547758.08",
                Err(AmountError::Overflow("92233720368547758.08".into())),
            ),
            ("1.234,56", malformed("1.234,56")),
            ("1,234.56", malformed("1,234.56")),
            ("1.000", malformed("1.000")),
            ("12.5", malformed("12.5")),
            (".50", malformed(".50")),
            ("", malformed("")),
            ("-", malformed("-")),
            ("1 234.56", malformed("1 234.56")),
            ("+1.00", malformed("+1.00")),
        ];
        for (text, want) in cases {
            assert_eq!(&parse_amount(text), want, "{text:?}");
        }
    }

    #[test]
    fn locale_names_as_lang_spells_them() {
        let cases: &[(&str, Option<Locale>)] = &[
            ("C", Some(Locale::C)),
            ("POSIX", Some(Locale::C)),
            ("C.UTF-8", Some(Locale::C)),
            ("de_DE", Some(Locale::DeDe)),
            ("de_DE.UTF-8", Some(Locale::DeDe)),
            ("de_AT", None),
            ("de", None),
            ("", None),
        ];
        for &(name, want) in cases {
            assert_eq!(Locale::from_name(name), want, "{name:?}");
        }
        for locale in Locale::ALL {
            assert_eq!(Locale::from_name(locale.name()), Some(locale));
        }
    }
}
