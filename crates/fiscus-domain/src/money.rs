//! Money: integer minor units and an ISO 4217 currency whose exponent says what a minor unit is.
//! Never floats.

use serde::{Deserialize, Serialize};

/// The largest amount, in minor units, that Fiscus accepts anywhere (an action's amount, any budget):
/// 2^53 − 1, the largest integer that every JSON reader represents exactly (RFC 7493 §2.2). It also keeps
/// every sum of in-budget amounts far inside `i64`, so budget arithmetic can never overflow.
pub const MAX_AMOUNT_MINOR: i64 = 9_007_199_254_740_991;

/// ISO 4217 codes Fiscus accepts, with their minor-unit exponents (ISO 4217 list one). A currency outside
/// this table is refused rather than guessed at: an exponent wrong by one is a factor of ten.
const CURRENCIES: &[(&str, u8)] = &[
    ("AED", 2),
    ("AUD", 2),
    ("BHD", 3),
    ("BRL", 2),
    ("CAD", 2),
    ("CHF", 2),
    ("CLP", 0),
    ("CNY", 2),
    ("CZK", 2),
    ("DKK", 2),
    ("EUR", 2),
    ("GBP", 2),
    ("HKD", 2),
    ("HUF", 2),
    ("IDR", 2),
    ("ILS", 2),
    ("INR", 2),
    ("ISK", 0),
    ("JOD", 3),
    ("JPY", 0),
    ("KRW", 0),
    ("KWD", 3),
    ("MXN", 2),
    ("MYR", 2),
    ("NOK", 2),
    ("NZD", 2),
    ("OMR", 3),
    ("PHP", 2),
    ("PLN", 2),
    ("QAR", 2),
    ("SAR", 2),
    ("SEK", 2),
    ("SGD", 2),
    ("THB", 2),
    ("TND", 3),
    ("TRY", 2),
    ("TWD", 2),
    ("USD", 2),
    ("VND", 0),
    ("ZAR", 2),
];

/// An ISO 4217 currency code from the accepted table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Currency(&'static str);

impl Currency {
    /// Every code Fiscus accepts.
    pub fn codes() -> Vec<&'static str> {
        CURRENCIES.iter().map(|(c, _)| *c).collect()
    }

    pub fn parse(code: &str) -> Option<Currency> {
        CURRENCIES.iter().find(|(c, _)| *c == code).map(|(c, _)| Currency(c))
    }

    pub fn code(self) -> &'static str {
        self.0
    }

    /// Digits after the decimal point of one major unit (USD 2, JPY 0, BHD 3).
    pub fn exponent(self) -> u8 {
        CURRENCIES.iter().find(|(c, _)| *c == self.0).map(|(_, e)| *e).unwrap_or(2)
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Currency::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not an accepted ISO 4217 currency code")))
    }
}

/// Formats minor units as a decimal string in major units (`12345` USD → `123.45`), for people.
pub fn format_minor(amount_minor: i64, currency: Currency) -> String {
    let exp = u32::from(currency.exponent());
    if exp == 0 {
        return amount_minor.to_string();
    }
    let scale = 10i64.pow(exp);
    let sign = if amount_minor < 0 { "-" } else { "" };
    let abs = amount_minor.unsigned_abs();
    format!("{sign}{}.{:0width$}", abs / scale as u64, abs % scale as u64, width = exp as usize)
}

/// An amount as people read it: the currency's code, then the major units with thousands grouped and exactly
/// the currency's exponent of decimals (`125000` USD → `USD 1,250.00`; JPY has none, BHD three).
pub fn format_for_people(amount_minor: i64, currency: Currency) -> String {
    let plain = format_minor(amount_minor, currency);
    let (sign, unsigned) = plain.strip_prefix('-').map_or(("", plain.as_str()), |rest| ("-", rest));
    let (whole, fraction) = unsigned.split_once('.').map_or((unsigned, None), |(w, f)| (w, Some(f)));
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    match fraction {
        Some(f) => format!("{} {sign}{grouped}.{f}", currency.code()),
        None => format!("{} {sign}{grouped}", currency.code()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_for_people_group_thousands_and_keep_the_exponent() {
        let usd = Currency::parse("USD").expect("usd");
        assert_eq!(format_for_people(125_000, usd), "USD 1,250.00");
        assert_eq!(format_for_people(5, usd), "USD 0.05");
        assert_eq!(format_for_people(-123_456_789, usd), "USD -1,234,567.89");
        assert_eq!(format_for_people(1_000_000, Currency::parse("JPY").expect("jpy")), "JPY 1,000,000");
        assert_eq!(format_for_people(1_234_567, Currency::parse("BHD").expect("bhd")), "BHD 1,234.567");
    }

    #[test]
    fn exponents_come_from_the_currency() {
        assert_eq!(Currency::parse("USD").map(Currency::exponent), Some(2));
        assert_eq!(Currency::parse("JPY").map(Currency::exponent), Some(0));
        assert_eq!(Currency::parse("BHD").map(Currency::exponent), Some(3));
        assert!(Currency::parse("usd").is_none());
        assert!(Currency::parse("XYZ").is_none());
        let usd = Currency::parse("USD").expect("usd");
        assert_eq!(format_minor(12345, usd), "123.45");
        assert_eq!(format_minor(-5, usd), "-0.05");
        assert_eq!(format_minor(1500, Currency::parse("JPY").expect("jpy")), "1500");
        assert_eq!(format_minor(1, Currency::parse("KWD").expect("kwd")), "0.001");
    }
}
