//! A series' frequency, read from its dates: the one rule behind a dataset's `frequency`, the periods a
//! computation annualises with and the gaps a quality report or a computation's `warnings` name.
//!
//! The median step between consecutive dates decides (so a few holidays or one missing month do not change
//! a series' frequency), and a step longer than the frequency's longest ordinary one is a gap: more than
//! five calendar days for daily data (a weekend with a holiday on both sides is four), ten for weekly, 35
//! for monthly (31 and the few days a month-end date moves), 100 for quarterly and 380 for annual.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Annual,
    Irregular,
}

impl Frequency {
    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Daily => "daily",
            Frequency::Weekly => "weekly",
            Frequency::Monthly => "monthly",
            Frequency::Quarterly => "quarterly",
            Frequency::Annual => "annual",
            Frequency::Irregular => "irregular",
        }
    }

    /// The frequency of ascending days (Julian day numbers) by their median step.
    pub fn of_days(days: &[i64]) -> Frequency {
        let mut steps: Vec<i64> = days.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            return Frequency::Irregular;
        }
        steps.sort_unstable();
        match steps[steps.len() / 2] {
            1..=4 => Frequency::Daily,
            5..=8 => Frequency::Weekly,
            28..=31 => Frequency::Monthly,
            89..=92 => Frequency::Quarterly,
            365..=366 => Frequency::Annual,
            _ => Frequency::Irregular,
        }
    }

    /// The frequency of ascending `YYYY-MM-DD` dates (others are skipped).
    pub fn of_dates<'a>(dates: impl IntoIterator<Item = &'a str>) -> Frequency {
        Frequency::of_days(&julian_days(dates))
    }

    /// Periods per year for annualising: trading days (252, the engine's and empyrical's convention), weeks,
    /// months, quarters, years; none for an irregular series.
    pub fn periods_per_year(self) -> Option<f64> {
        match self {
            Frequency::Daily => Some(252.0),
            Frequency::Weekly => Some(52.0),
            Frequency::Monthly => Some(12.0),
            Frequency::Quarterly => Some(4.0),
            Frequency::Annual => Some(1.0),
            Frequency::Irregular => None,
        }
    }

    /// The longest step, in calendar days, that is not a gap (see the module documentation).
    pub fn longest_step(self) -> Option<i64> {
        match self {
            Frequency::Daily => Some(5),
            Frequency::Weekly => Some(10),
            Frequency::Monthly => Some(35),
            Frequency::Quarterly => Some(100),
            Frequency::Annual => Some(380),
            Frequency::Irregular => None,
        }
    }

    /// The typical step in calendar days (a month is 30.44), to count the periods a gap misses.
    fn step(self) -> f64 {
        match self {
            Frequency::Daily => 365.25 / 252.0,
            Frequency::Weekly => 7.0,
            Frequency::Monthly => 365.25 / 12.0,
            Frequency::Quarterly => 365.25 / 4.0,
            Frequency::Annual => 365.25,
            Frequency::Irregular => 1.0,
        }
    }
}

/// A step longer than the frequency allows: the dates on both sides and about how many periods it misses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// Index of the date after the gap (the one before it is `after - 1`).
    pub after: usize,
    pub from: String,
    pub to: String,
    pub missing: u64,
}

/// The gaps in ascending dates at the frequency they show.
pub fn gaps(dates: &[String]) -> (Frequency, Vec<Gap>) {
    let days = julian_days(dates.iter().map(String::as_str));
    let frequency = Frequency::of_days(&days);
    let (Some(longest), true) = (frequency.longest_step(), days.len() == dates.len()) else {
        return (frequency, Vec::new());
    };
    let mut out = Vec::new();
    for (i, w) in days.windows(2).enumerate() {
        let step = w[1] - w[0];
        if step > longest {
            out.push(Gap {
                after: i + 1,
                from: dates[i].clone(),
                to: dates[i + 1].clone(),
                missing: ((step as f64 / frequency.step()).round() as u64).saturating_sub(1).max(1),
            });
        }
    }
    (frequency, out)
}

fn julian_days<'a>(dates: impl IntoIterator<Item = &'a str>) -> Vec<i64> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    dates.into_iter().filter_map(|d| time::Date::parse(d, format).ok()).map(|d| i64::from(d.to_julian_day())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn months(from_year: i32, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{:04}-{:02}-01", from_year + (i / 12) as i32, i % 12 + 1)).collect()
    }

    #[test]
    fn frequencies_come_from_the_median_step() {
        assert_eq!(Frequency::of_dates(months(2000, 24).iter().map(String::as_str)), Frequency::Monthly);
        let weekdays = ["2024-01-05", "2024-01-08", "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12"];
        assert_eq!(Frequency::of_dates(weekdays), Frequency::Daily);
        assert_eq!(Frequency::of_dates(["2000-01-01", "2000-04-01", "2000-07-01"]), Frequency::Quarterly);
        assert_eq!(Frequency::of_dates(["2000-01-01"]), Frequency::Irregular);
        assert_eq!(Frequency::Monthly.periods_per_year(), Some(12.0));
        assert_eq!(Frequency::Irregular.periods_per_year(), None);
    }

    #[test]
    fn a_missing_run_of_months_is_one_gap_counting_them_and_a_long_weekend_is_none() {
        let mut dates = months(2000, 120);
        dates.drain(30..86);
        let (f, g) = gaps(&dates);
        assert_eq!(f, Frequency::Monthly);
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].from.as_str(), g[0].to.as_str(), g[0].missing), ("2002-06-01", "2007-03-01", 56));
        // Thursday to the Tuesday after Easter Monday: five days, not a gap.
        let easter = ["2024-03-25", "2024-03-26", "2024-03-27", "2024-03-28", "2024-04-02", "2024-04-03"];
        assert!(gaps(&easter.map(String::from)).1.is_empty());
    }
}
