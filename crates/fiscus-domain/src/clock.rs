//! Time as Fiscus stores it: UTC microseconds since the Unix epoch in an `i64`, rendered as RFC 3339.
//!
//! Integers compare and index the same way on SQLite and PostgreSQL, which keeps expiry and window checks
//! in portable SQL; RFC 3339 is what clients see.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Microseconds since the Unix epoch, UTC.
pub type Micros = i64;

pub const MICROS_PER_SECOND: i64 = 1_000_000;

pub fn now_micros() -> Micros {
    micros_of(OffsetDateTime::now_utc())
}

pub fn micros_of(t: OffsetDateTime) -> Micros {
    // i128 nanoseconds fit an i64 of microseconds until the year 294,247.
    (t.unix_timestamp_nanos() / 1_000) as i64
}

/// RFC 3339 in UTC with microsecond precision, e.g. `2026-11-21T13:49:14.123456Z`.
pub fn rfc3339(micros: Micros) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    t.format(&Rfc3339).unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}

/// IMF-fixdate (RFC 9110 section 5.6.7), the form of HTTP-date senders must use, e.g.
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
pub const IMF_FIXDATE: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
);

/// A timestamp as an HTTP-date (IMF-fixdate), whole seconds.
pub fn http_date(micros: Micros) -> String {
    let t =
        OffsetDateTime::from_unix_timestamp(micros.div_euclid(MICROS_PER_SECOND)).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    t.format(IMF_FIXDATE).unwrap_or_default()
}

/// Parses an RFC 3339 timestamp (any offset) into UTC microseconds.
pub fn parse_rfc3339(s: &str) -> Option<Micros> {
    OffsetDateTime::parse(s, &Rfc3339).ok().map(micros_of)
}

/// The UTC calendar day (`YYYY-MM-DD`) of a timestamp; usage is counted per day.
pub fn utc_day(micros: Micros) -> String {
    rfc3339(micros)[..10].to_string()
}

/// The UTC month (`YYYY-MM`) of a timestamp, and the start of the next month (UTC microseconds); monthly
/// request quotas are counted per calendar month.
pub fn utc_month(micros: Micros) -> (String, Micros) {
    let day = utc_day(micros);
    let (year, month) = (day[..4].parse::<i32>().unwrap_or(1970), day[5..7].parse::<u8>().unwrap_or(1));
    let (next_year, next_month) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
    let next = time::Month::try_from(next_month)
        .ok()
        .and_then(|m| time::Date::from_calendar_date(next_year, m, 1).ok())
        .map(|d| micros_of(d.midnight().assume_utc()))
        .unwrap_or(Micros::MAX);
    (day[..7].to_string(), next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_rfc3339() {
        let m = 1_795_000_000_123_456;
        let s = rfc3339(m);
        assert!(s.ends_with('Z'));
        assert_eq!(parse_rfc3339(&s), Some(m));
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_month(0), ("1970-01".to_string(), 31 * 86_400 * 1_000_000));
        let dec = parse_rfc3339("2026-12-31T23:59:59Z").expect("parse");
        assert_eq!(utc_month(dec), ("2026-12".to_string(), parse_rfc3339("2027-01-01T00:00:00Z").expect("parse")));
    }
}
