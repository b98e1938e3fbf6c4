//! Parsing observed values: dates in the formats real exports use, decimals, amounts in minor units.
//!
//! Every parser refuses rather than guesses: a date format is fixed for a whole file (a file mixing
//! `1/2/1999` and `1999-01-02` is refused at the first row that differs), a decimal must be finite and
//! plain, and an amount must fit its currency's exponent exactly.

use fiscus_domain::money::{Currency, MAX_AMOUNT_MINOR};
use time::{Date, Month};

/// How a file writes its dates. Periods (a month, a quarter) are stored as their first day, as FRED does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DateFormat {
    /// `2019-01-31`
    Iso,
    /// `1/31/2019` (month first, as US exports write it)
    MonthDayYear,
    /// `201901`: a month
    YearMonth,
    /// `2019` and a quarter `1`..`4` from two columns
    YearQuarter,
    /// A strftime-style pattern given with the file (`%b %-d %Y` reads `Jan 1 2000`): year, month and day.
    Strftime(Strftime),
}

/// A strftime-style date pattern, as the `time` crate reads it (`%Y %m %d %b %B %e %j`, `%-d` for no
/// padding, …): parsed once for the whole file.
#[derive(Clone, Debug)]
pub struct Strftime {
    pattern: String,
    items: time::format_description::OwnedFormatItem,
}

impl PartialEq for Strftime {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Strftime {}

/// The longest pattern accepted (a date pattern is a few directives).
const MAX_PATTERN: usize = 40;

impl DateFormat {
    pub fn as_str(&self) -> &str {
        match self {
            DateFormat::Iso => "iso",
            DateFormat::MonthDayYear => "mdy",
            DateFormat::YearMonth => "yyyymm",
            DateFormat::YearQuarter => "year+quarter",
            DateFormat::Strftime(s) => &s.pattern,
        }
    }

    /// A built-in format by name (`iso`, `mdy`, `yyyymm`, `year+quarter`), or a strftime-style pattern (any
    /// text with a `%`) that names a year, a month and a day; the error says what is wrong with a pattern.
    pub fn parse_name(s: &str) -> Result<DateFormat, String> {
        if let Some(f) = [DateFormat::Iso, DateFormat::MonthDayYear, DateFormat::YearMonth, DateFormat::YearQuarter]
            .into_iter()
            .find(|f| f.as_str() == s)
        {
            return Ok(f);
        }
        if !s.contains('%') {
            return Err(format!("`{}` is neither iso, mdy, yyyymm, year+quarter nor a strftime pattern", clip(s)));
        }
        if s.len() > MAX_PATTERN {
            return Err(format!("a date pattern is at most {MAX_PATTERN} characters"));
        }
        let items = time::format_description::parse_strftime_owned(s)
            .map_err(|e| format!("`{}` is not a strftime pattern: {e}", clip(s)))?;
        // A pattern must name a day of a year (a month alone is not a date): a year, and a month with a day of
        // it or a day of the year.
        let any = |directives: &[&str]| directives.iter().any(|d| s.contains(d));
        let year = any(&["%Y", "%y", "%-y"]);
        let month_day = any(&["%m", "%-m", "%b", "%B", "%h"]) && any(&["%d", "%-d", "%e"]);
        if !(year && (month_day || any(&["%j", "%-j"]))) {
            return Err(format!("`{}` must name a year, a month and a day (e.g. `%b %-d %Y`)", clip(s)));
        }
        Ok(DateFormat::Strftime(Strftime { pattern: s.to_string(), items }))
    }

    /// The format of a file's first date cell; `None` if it is none of the built-in ones.
    pub fn detect(sample: &str) -> Option<DateFormat> {
        [DateFormat::Iso, DateFormat::MonthDayYear, DateFormat::YearMonth].into_iter().find(|f| f.date(sample).is_ok())
    }

    /// Strftime patterns a cell that no built-in format reads looks like (`Jan 1 2000`: `%b %-d %Y`), each
    /// of which reads it: what an error names so that the right `date_format` is one copy away.
    pub fn guesses(sample: &str) -> Vec<String> {
        guess_patterns(sample)
            .into_iter()
            .filter(|p| DateFormat::parse_name(p).is_ok_and(|f| f.date(sample).is_ok()))
            .collect()
    }

    /// The date a cell says in this format, as `YYYY-MM-DD`.
    pub fn date(&self, s: &str) -> Result<String, String> {
        let parsed = match self {
            DateFormat::Strftime(f) => Date::parse(s, &f.items)
                .ok()
                .filter(|d| DATA_YEARS.contains(&u32::try_from(d.year()).unwrap_or(0)))
                .map(|d| format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())),
            DateFormat::Iso => iso(s).filter(|d| in_data_years(d)),
            DateFormat::MonthDayYear => {
                let mut parts = s.split('/');
                match (parts.next(), parts.next(), parts.next(), parts.next()) {
                    (Some(m), Some(d), Some(y), None) if y.len() == 4 && m.len() <= 2 && d.len() <= 2 => {
                        ymd(number(y), number(m), number(d))
                    }
                    _ => None,
                }
            }
            DateFormat::YearMonth if s.len() == 6 => ymd(number(&s[..4]), number(&s[4..]), Some(1)),
            DateFormat::YearMonth | DateFormat::YearQuarter => None,
        };
        parsed.ok_or_else(|| format!("`{}` is not a date in the file's format ({})", clip(s), self.as_str()))
    }

    /// The first day of a quarter given as a year and a quarter number.
    pub fn quarter(year: &str, quarter: &str) -> Result<String, String> {
        let q = number(quarter).filter(|q| (1..=4).contains(q));
        match (number(year).filter(|_| year.len() == 4), q) {
            (Some(y), Some(q)) => {
                ymd(Some(y), Some(q * 3 - 2), Some(1)).ok_or_else(|| format!("`{}` is not a year", clip(year)))
            }
            _ => Err(format!("`{}` and `{}` are not a year and a quarter 1-4", clip(year), clip(quarter))),
        }
    }
}

/// Candidate patterns from a cell's shape: runs of letters are month names (`%b`, `%B`), four digits a year,
/// one or two digits a day or a month (both orders offered when no month name settles it).
fn guess_patterns(sample: &str) -> Vec<String> {
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let mut runs: Vec<(char, String)> = Vec::new();
    for c in sample.trim().chars().take(40) {
        let class = if c.is_ascii_digit() {
            'd'
        } else if c.is_alphabetic() {
            'a'
        } else {
            'o'
        };
        match runs.last_mut() {
            Some((k, s)) if *k == class && class != 'o' => s.push(c),
            _ => runs.push((class, c.to_string())),
        }
    }
    let named_month = runs.iter().any(|(k, s)| *k == 'a' && MONTHS.iter().any(|m| s.to_lowercase().starts_with(m)));
    let mut orders: Vec<Vec<&str>> = vec![vec![]];
    if !named_month {
        orders = vec![vec!["%d", "%m"], vec!["%m", "%d"]];
    }
    let mut out = Vec::new();
    for order in orders {
        let mut small = order.into_iter();
        let mut pattern = String::new();
        for (k, s) in &runs {
            match *k {
                'd' if s.len() == 4 => pattern.push_str("%Y"),
                'd' if s.len() <= 2 => {
                    let directive = if named_month { "%d" } else { small.next().unwrap_or("%d") };
                    // One digit: no padding, so that `1` and `15` both read.
                    pattern.push_str(&if s.len() == 1 { directive.replace('%', "%-") } else { directive.to_string() });
                }
                'a' if s.len() == 3 => pattern.push_str("%b"),
                'a' => pattern.push_str("%B"),
                'o' if s == "%" => pattern.push_str("%%"),
                'o' => pattern.push_str(s),
                _ => return out,
            }
        }
        out.push(pattern);
    }
    out
}

fn number(s: &str) -> Option<u32> {
    (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// Years a data file's date may carry (1800 to 2200): a cell outside them is a typo or another column, not
/// an observation, and refusing it keeps such files from importing silently.
const DATA_YEARS: std::ops::RangeInclusive<u32> = 1800..=2200;

fn in_data_years(date: &str) -> bool {
    date[..4].parse().is_ok_and(|y: u32| DATA_YEARS.contains(&y))
}

fn ymd(y: Option<u32>, m: Option<u32>, d: Option<u32>) -> Option<String> {
    ymd_any_year(y.filter(|y| DATA_YEARS.contains(y)), m, d)
}

fn ymd_any_year(y: Option<u32>, m: Option<u32>, d: Option<u32>) -> Option<String> {
    let (y, m, d) = (y?, m?, d?);
    let month = Month::try_from(u8::try_from(m).ok()?).ok()?;
    let date = Date::from_calendar_date(i32::try_from(y).ok()?, month, u8::try_from(d).ok()?).ok()?;
    Some(format!("{:04}-{:02}-{:02}", date.year(), u8::from(date.month()), date.day()))
}

/// A `YYYY-MM-DD` date of any year RFC 3339's `full-date` allows (0000 to 9999), normalised; `None`
/// otherwise. What the API's `format: date` parameters take: a date with no data is answered as one, never
/// refused as malformed. (Data files are held to 1800 to 2200: `DateFormat::date`.)
pub fn iso(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    ymd_any_year(number(&s[..4]), number(&s[5..7]), number(&s[8..]))
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// A plain decimal as observed (`-12.5`, `1228.099976`, `877000000`): optional sign, digits, optional
/// fraction; no exponent, no thousands separators, no `NaN` or `inf`, at most 30 characters. Returned as
/// the shortest text of its nearest double, which reads back to the same double and is what the API
/// serves as a JSON number.
pub fn decimal(s: &str) -> Result<String, String> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let plain = s.len() <= 30
        && !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
        && (!body.contains('.') || !frac.is_empty());
    if !plain {
        return Err(format!("`{}` is not a plain decimal number", clip(s)));
    }
    if let Some(canonical) = short_plain(s.starts_with('-'), int, frac) {
        return Ok(canonical);
    }
    let v: f64 = s.parse().map_err(|_| format!("`{}` is not a number", clip(s)))?;
    if !v.is_finite() {
        return Err(format!("`{}` is not finite", clip(s)));
    }
    Ok(shortest(v))
}

/// The shortest text of a plain decimal of at most 15 significant digits, without going through a double:
/// its digits without leading or trailing zeros. Any two decimals of 15 digits or fewer are different
/// doubles (IEEE 754 binary64 holds 15 decimal digits exactly, and 30 characters stay far from the
/// subnormal range), so no shorter text reads back to the same double and this is what `shortest` would
/// write. Longer ones go through the double (`None`).
fn short_plain(negative: bool, int: &str, frac: &str) -> Option<String> {
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let significant = if int.is_empty() { frac.trim_start_matches('0').len() } else { int.len() + frac.len() };
    if significant > 15 {
        return None;
    }
    if significant == 0 {
        return Some(String::from("0"));
    }
    let mut out = String::with_capacity(int.len() + frac.len() + 3);
    if negative {
        out.push('-');
    }
    out.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    Some(out)
}

/// The shortest decimal text that reads back to `v` (Rust's `Display` for `f64`), with `-0` as `0`.
pub fn shortest(v: f64) -> String {
    if v == 0.0 { String::from("0") } else { format!("{v}") }
}

/// A decimal that must not be negative (prices, volumes).
pub fn non_negative(s: &str) -> Result<String, String> {
    let d = decimal(s)?;
    if d.starts_with('-') { Err(format!("`{}` is negative", clip(s))) } else { Ok(d) }
}

/// An amount in major units (`1250.00`, `-3.5`) as exact minor units of `currency`: more fraction digits
/// than the currency's exponent (`12.345` USD) or more than 2^53 − 1 minor units is refused.
pub fn amount_minor(s: &str, currency: Currency) -> Result<i64, String> {
    let negative = s.starts_with('-');
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let exp = usize::from(currency.exponent());
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (body.contains('.') && frac.is_empty()) {
        return Err(format!("`{}` is not an amount", clip(s)));
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > exp {
        return Err(format!("`{}` has more decimals than {} allows ({exp})", clip(s), currency.code()));
    }
    let scaled = format!("{int}{frac:0<exp$}");
    let minor: i64 = scaled
        .trim_start_matches('0')
        .parse::<i64>()
        .or_else(|_| if scaled.bytes().all(|b| b == b'0') { Ok(0) } else { Err(()) })
        .map_err(|_| format!("`{}` is too large", clip(s)))?;
    if minor > MAX_AMOUNT_MINOR {
        return Err(format!("`{}` is too large", clip(s)));
    }
    Ok(if negative { -minor } else { minor })
}

/// A currency code the money table accepts.
pub fn currency(s: &str) -> Result<Currency, String> {
    Currency::parse(s).ok_or_else(|| format!("`{}` is not an accepted ISO 4217 currency code", clip(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strftime_pattern_reads_what_the_built_in_formats_do_not_and_an_unread_cell_is_guessed() {
        assert!(DateFormat::detect("Jan 1 2000").is_none());
        assert_eq!(DateFormat::guesses("Jan 1 2000"), vec!["%b %-d %Y".to_string()]);
        let f = DateFormat::parse_name("%b %-d %Y").expect("pattern");
        assert_eq!(f.date("Jan 1 2000").as_deref(), Ok("2000-01-01"));
        assert_eq!(f.date("Dec 15 2001").as_deref(), Ok("2001-12-15"));
        assert!(f.date("2000-01-01").is_err());
        // Day and month in an unnamed order are both offered; each one offered reads the cell.
        assert_eq!(DateFormat::guesses("31.01.2000"), vec!["%d.%m.%Y".to_string()]);
        assert_eq!(DateFormat::guesses("01.02.2000").len(), 2);
        assert_eq!(DateFormat::parse_name("%d.%m.%Y").and_then(|f| f.date("31.01.2000")).as_deref(), Ok("2000-01-31"));
        assert_eq!(
            DateFormat::parse_name("%B %d, %Y").and_then(|f| f.date("March 05, 1999")).as_deref(),
            Ok("1999-03-05")
        );
        // A pattern that is not one, or names no day, is refused with why.
        for bad in ["%Y-%m", "%Q", "weekly", &"%Y".repeat(30)] {
            assert!(DateFormat::parse_name(bad).is_err(), "{bad}");
        }
        assert_eq!(DateFormat::parse_name("mdy"), Ok(DateFormat::MonthDayYear));
        // Outside the data years, as with the built-in formats.
        assert!(DateFormat::parse_name("%Y%m%d").and_then(|f| f.date("17000101")).is_err());
    }

    /// The short path writes what the double's shortest text is, for plain decimals of every shape.
    #[test]
    fn short_decimals_are_their_doubles_shortest_text() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let digits = |rng: &mut rand::rngs::StdRng, n: usize| -> String {
            (0..n).map(|_| char::from(b'0' + rng.gen_range(0..10u8))).collect()
        };
        for _ in 0..200_000 {
            let (int_len, frac_len) = (rng.gen_range(1..14), rng.gen_range(0..16));
            let int = digits(&mut rng, int_len);
            let frac = digits(&mut rng, frac_len);
            let text = match (rng.gen_bool(0.2), frac.is_empty()) {
                (neg, true) => format!("{}{int}", if neg { "-" } else { "" }),
                (neg, false) => format!("{}{int}.{frac}", if neg { "-" } else { "" }),
            };
            if text.len() > 30 {
                continue;
            }
            let expected = shortest(text.parse::<f64>().expect("a plain decimal parses"));
            assert_eq!(decimal(&text).ok(), Some(expected), "{text}");
        }
        for (text, expected) in [("-0.000", "0"), ("007.50", "7.5"), ("0.00012", "0.00012"), ("1e5", "")] {
            assert_eq!(decimal(text).unwrap_or_default(), expected, "{text}");
        }
    }

    #[test]
    fn dates_in_each_format() {
        assert_eq!(DateFormat::detect("1999-01-04"), Some(DateFormat::Iso));
        assert_eq!(DateFormat::detect("1/4/1999"), Some(DateFormat::MonthDayYear));
        assert_eq!(DateFormat::detect("192607"), Some(DateFormat::YearMonth));
        assert_eq!(DateFormat::detect("04.01.1999"), None);
        assert_eq!(DateFormat::MonthDayYear.date("12/31/2018").as_deref(), Ok("2018-12-31"));
        assert_eq!(DateFormat::YearMonth.date("192607").as_deref(), Ok("1926-07-01"));
        assert_eq!(DateFormat::quarter("1959", "3").as_deref(), Ok("1959-07-01"));
        assert!(DateFormat::Iso.date("1/4/1999").is_err());
        assert!(DateFormat::Iso.date("2019-02-29").is_err());
        assert!(DateFormat::quarter("1959", "5").is_err());
        // A file's dates stay within 1800 to 2200; the API's dates are any RFC 3339 full-date.
        assert!(DateFormat::Iso.date("2300-01-01").is_err());
        assert_eq!(iso("2300-01-01").as_deref(), Some("2300-01-01"));
        assert_eq!(iso("0000-01-01").as_deref(), Some("0000-01-01"));
        assert_eq!(iso("9999-12-31").as_deref(), Some("9999-12-31"));
        assert!(iso("2023-02-29").is_none());
    }

    #[test]
    fn decimals_are_plain_and_finite() {
        assert_eq!(decimal("1228.099976").as_deref(), Ok("1228.099976"));
        assert_eq!(decimal("-0.0").as_deref(), Ok("0"));
        assert_eq!(decimal("877000000").as_deref(), Ok("877000000"));
        for bad in ["NaN", "inf", "1e5", "1,000", "", "-", ".5", "5.", "0x10", " 1"] {
            assert!(decimal(bad).is_err(), "{bad}");
        }
        assert!(non_negative("-1.5").is_err());
    }

    #[test]
    fn amounts_fit_the_currency_exactly() {
        let usd = Currency::parse("USD").expect("usd");
        let jpy = Currency::parse("JPY").expect("jpy");
        assert_eq!(amount_minor("1250.00", usd), Ok(125_000));
        assert_eq!(amount_minor("-3.5", usd), Ok(-350));
        assert_eq!(amount_minor("0", usd), Ok(0));
        assert_eq!(amount_minor("1250", jpy), Ok(1250));
        assert!(amount_minor("12.345", usd).is_err());
        assert!(amount_minor("1.5", jpy).is_err());
        assert!(amount_minor("99999999999999999999", usd).is_err());
        assert!(amount_minor("1e3", usd).is_err());
    }
}
