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

/// Parses an RFC 3339 timestamp (any offset) into UTC microseconds.
pub fn parse_rfc3339(s: &str) -> Option<Micros> {
    OffsetDateTime::parse(s, &Rfc3339).ok().map(micros_of)
}

/// The UTC calendar day (`YYYY-MM-DD`) of a timestamp; usage is counted per day.
pub fn utc_day(micros: Micros) -> String {
    rfc3339(micros)[..10].to_string()
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
    }
}
