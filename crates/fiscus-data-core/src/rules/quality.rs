//! A dataset's quality report, written at import from the rows it holds: per series (an instrument's closes,
//! an economic series' values) the gaps against its frequency's calendar, zero and negative values, stale
//! runs and outliers. Nothing is changed or dropped because of it: the report says what a computation will
//! meet (and each computation's `warnings` say what it did about it).
//!
//! Rules, chosen to be explainable in one line each:
//! - a gap is a step longer than the frequency's longest ordinary one (`frequency`);
//! - a stale run is five or more consecutive observations of the same value (a feed that stopped updating);
//! - an outlier is a change (the log change of a positive series, else the difference) further from the
//!   median change than 8 robust standard deviations (1.4826 × the median absolute deviation), the rule of
//!   Hampel's identifier with a wide threshold so that ordinary fat tails are not flagged.
//!
//! Duplicates are refused at import (a key twice is an error naming both lines), so a report never has any.

use super::frequency::{Frequency, gaps};
use serde::{Deserialize, Serialize};

/// At most this many dates (or intervals) are listed per finding; its count says how many there are.
pub const LISTED: usize = 20;
/// Consecutive equal values that make a stale run.
pub const STALE_RUN: usize = 5;
/// Robust standard deviations from the median change that make an outlier.
pub const OUTLIER_SIGMAS: f64 = 8.0;

/// What was found, with the first dates where.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Finding {
    pub count: u64,
    /// The first dates, or `from/to` intervals (ISO 8601) for gaps and stale runs, at most 20.
    pub dates: Vec<String>,
}

impl Finding {
    fn add(&mut self, what: String) {
        self.count += 1;
        if self.dates.len() < LISTED {
            self.dates.push(what);
        }
    }
}

/// One series' report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SeriesQuality {
    /// The instrument's symbol or the economic series' key.
    #[schema(example = "CL")]
    pub series: String,
    pub frequency: Frequency,
    pub observations: u64,
    /// Steps longer than the frequency allows.
    pub gaps: Finding,
    /// About how many periods the gaps miss in all.
    pub missing_periods: u64,
    pub zero_values: Finding,
    pub negative_values: Finding,
    /// Observations with no value, or one that is not a number.
    pub missing_values: Finding,
    pub stale_runs: Finding,
    pub outliers: Finding,
}

impl SeriesQuality {
    pub fn issues(&self) -> u64 {
        self.gaps.count
            + self.zero_values.count
            + self.negative_values.count
            + self.missing_values.count
            + self.stale_runs.count
            + self.outliers.count
    }
}

/// A dataset's report: every series with at least one finding, and how many series were checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QualityReport {
    /// Series checked.
    pub series: u64,
    /// Findings across all series (0: nothing to report).
    pub issues: u64,
    /// The series with findings (at most 100, the most findings first).
    pub findings: Vec<SeriesQuality>,
}

/// The report of series given as (name, ascending `(date, value)`), a value `None` when missing or not a
/// number.
pub fn report<'a>(series: impl IntoIterator<Item = (String, Vec<(&'a str, Option<f64>)>)>) -> QualityReport {
    let mut out = QualityReport::default();
    for (name, points) in series {
        out.series += 1;
        let q = check(name, &points);
        if q.issues() > 0 {
            out.issues += q.issues();
            out.findings.push(q);
        }
    }
    out.findings.sort_by(|a, b| b.issues().cmp(&a.issues()).then(a.series.cmp(&b.series)));
    out.findings.truncate(100);
    out
}

fn check(series: String, points: &[(&str, Option<f64>)]) -> SeriesQuality {
    let dates: Vec<String> = points.iter().map(|(d, _)| d.to_string()).collect();
    let (frequency, found) = gaps(&dates);
    let mut q = SeriesQuality {
        series,
        frequency,
        observations: points.len() as u64,
        gaps: Finding::default(),
        missing_periods: found.iter().map(|g| g.missing).sum(),
        zero_values: Finding::default(),
        negative_values: Finding::default(),
        missing_values: Finding::default(),
        stale_runs: Finding::default(),
        outliers: Finding::default(),
    };
    for g in &found {
        q.gaps.add(format!("{}/{}", g.from, g.to));
    }
    for (d, v) in points {
        match v {
            None => q.missing_values.add(d.to_string()),
            Some(v) if *v == 0.0 => q.zero_values.add(d.to_string()),
            Some(v) if *v < 0.0 => q.negative_values.add(d.to_string()),
            Some(_) => {}
        }
    }
    let values: Vec<(&str, f64)> = points.iter().filter_map(|(d, v)| v.map(|v| (*d, v))).collect();
    let mut run = 1;
    for i in 1..=values.len() {
        if i < values.len() && values[i].1 == values[i - 1].1 {
            run += 1;
            continue;
        }
        if run >= STALE_RUN {
            q.stale_runs.add(format!("{}/{}", values[i - run].0, values[i - 1].0));
        }
        run = 1;
    }
    let positive = values.iter().all(|(_, v)| *v > 0.0);
    let changes: Vec<(&str, f64)> = values
        .windows(2)
        .map(|w| (w[1].0, if positive { (w[1].1 / w[0].1).ln() } else { w[1].1 - w[0].1 }))
        .filter(|(_, c)| c.is_finite())
        .collect();
    if changes.len() >= 10 {
        let median = median(changes.iter().map(|(_, c)| *c).collect());
        let mad = median_of_deviation(&changes, median);
        let scale = 1.4826 * mad;
        if scale > 0.0 {
            for (d, c) in &changes {
                if (c - median).abs() > OUTLIER_SIGMAS * scale {
                    q.outliers.add(d.to_string());
                }
            }
        }
    }
    q
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

fn median_of_deviation(changes: &[(&str, f64)], m: f64) -> f64 {
    median(changes.iter().map(|(_, c)| (c - m).abs()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_close_a_stale_run_a_gap_and_a_jump_are_each_found_and_a_clean_series_is_not_listed() {
        let dates: Vec<String> = (0..40).map(|i| format!("{:04}-{:02}-01", 2000 + i / 12, i % 12 + 1)).collect();
        let mut points: Vec<(&str, Option<f64>)> =
            dates.iter().enumerate().map(|(i, d)| (d.as_str(), Some(100.0 + 5.0 * (i as f64 * 1.7).sin()))).collect();
        let clean = points.clone();
        points[3].1 = Some(0.0);
        for p in &mut points[10..16] {
            p.1 = Some(101.5);
        }
        points[20].1 = Some(10_000.0);
        points.remove(30);
        let r = report([("CL".to_string(), points), ("SPX".to_string(), clean)]);
        assert_eq!((r.series, r.findings.len()), (2, 1));
        let q = &r.findings[0];
        assert_eq!(q.frequency, Frequency::Monthly);
        assert_eq!(q.zero_values.dates, vec!["2000-04-01"]);
        assert_eq!(q.stale_runs.dates, vec!["2000-11-01/2001-04-01"]);
        assert_eq!(q.gaps.dates, vec!["2002-06-01/2002-08-01"]);
        assert_eq!(q.missing_periods, 1);
        assert!(q.outliers.dates.contains(&"2001-09-01".to_string()), "{:?}", q.outliers);
    }
}
