//! A proleptic-Gregorian civil date as days since 1970-01-01, enough for holding periods and wash-sale
//! windows without pulling a date crate into a numerics library.

use crate::error::{QuantError, Result};

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i32);

impl Date {
    /// Builds a date from year (1-9999), month (1-12) and day, refusing impossible dates.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Self> {
        if !(1..=9999).contains(&year) || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return Err(QuantError::InvalidParameter { name: "date", reason: format!("{year}-{month:02}-{day:02}") });
        }
        Ok(Self(days_from_civil(year, month, day)))
    }

    /// The date `days` later (or earlier, if negative), saturating at the ends of the representable range.
    pub fn add_days(self, days: i32) -> Self {
        Self(self.0.saturating_add(days).clamp(MIN_DAY, MAX_DAY))
    }

    /// Whole days from `self` to `later`.
    pub fn days_until(self, later: Date) -> i32 {
        later.0.saturating_sub(self.0)
    }

    /// (year, month, day).
    pub fn ymd(self) -> (i32, u32, u32) {
        civil_from_days(self.0)
    }

    /// The same month and day one year later; 29 February maps to 28 February.
    pub fn one_year_later(self) -> Self {
        let (y, m, d) = self.ymd();
        let d = d.min(days_in_month(y + 1, m));
        Self(days_from_civil(y + 1, m, d))
    }
}

/// 0001-01-01 and 9999-12-31 as days since 1970-01-01: the range every `Date` stays within, so that the
/// civil-calendar arithmetic below can never overflow.
const MIN_DAY: i32 = -719_162;
const MAX_DAY: i32 = 2_932_896;

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

// Howard Hinnant's days_from_civil / civil_from_days.
fn days_from_civil(y: i32, m: u32, d: u32) -> i32 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i32;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i32 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i32) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_count_days() {
        let a = Date::from_ymd(2024, 2, 29).unwrap();
        assert_eq!(a.ymd(), (2024, 2, 29));
        assert_eq!(Date::from_ymd(1970, 1, 1).unwrap().days_until(a), 19_782);
        assert_eq!(a.one_year_later().ymd(), (2025, 2, 28));
        assert!(Date::from_ymd(2023, 2, 29).is_err());
    }
}
