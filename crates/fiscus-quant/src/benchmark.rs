//! Statistics of a return series relative to a benchmark of the same length (aligned period by period), with
//! empyrical-reloaded 0.7.1's conventions where empyrical has the statistic:
//!
//! - active returns are `a_t = r_t - b_t`; sample statistics use ddof = 1;
//! - [`excess_sharpe`] is empyrical's: `mean(a)/std(a)`, not annualised;
//! - [`tracking_error`] and [`information_ratio`] are not in empyrical 0.7.1; they are the annualised
//!   `std(a)·√ppy` and `mean(a)·ppy / tracking_error` (= `excess_sharpe·√ppy`), checked against numpy;
//! - up and down capture are empyrical's: the CAGR of the series over the periods where the benchmark rose
//!   (fell) divided by the benchmark's CAGR over the same periods, each subset annualised over its own
//!   length. A period where the benchmark is exactly 0 is in neither subset.
//!
//! Where empyrical returns NaN (every active return equal; no up or no down period in the benchmark) these
//! functions refuse with [`QuantError::Undefined`]. The capture ratios and [`relative_summary`] compound the
//! returns, so they also refuse a return or benchmark return below −1; the tracking error and the two ratios
//! of active-return moments accept any finite pair.

use crate::error::{QuantError, Result};
use crate::input;
use crate::output;
use crate::risk;
use crate::stats::{mean, variance};

/// Annualised tracking error `std(r - b, ddof=1)·√ppy`. empyrical 0.7.1 has no tracking error; this is the
/// denominator of its `excess_sharpe`, annualised. It is exactly 0 when every active return is equal (as
/// empyrical treats the dispersion of a constant column), not a rounding residue of the mean.
pub fn tracking_error(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<f64> {
    check(returns, benchmark, 2)?;
    input::positive("periods_per_year", periods_per_year)?;
    let (_, sd) = active_moments(returns, benchmark)?;
    output::finite("tracking error", sd * periods_per_year.sqrt())
}

/// empyrical's `excess_sharpe`: `mean(r - b)/std(r - b, ddof=1)` per period, NOT annualised (vectorbt calls
/// the same number `information_ratio`). Undefined when every active return is equal.
pub fn excess_sharpe(returns: &[f64], benchmark: &[f64]) -> Result<f64> {
    check(returns, benchmark, 2)?;
    let (m, sd) = active_moments(returns, benchmark)?;
    ratio_of_moments(m, sd)
}

/// Annualised information ratio `mean(r - b)·ppy / tracking_error`, computed as `excess_sharpe·√ppy`.
/// Undefined when every active return is equal.
pub fn information_ratio(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<f64> {
    check(returns, benchmark, 2)?;
    input::positive("periods_per_year", periods_per_year)?;
    let (m, sd) = active_moments(returns, benchmark)?;
    output::finite("information ratio", ratio_of_moments(m, sd)? * periods_per_year.sqrt())
}

/// empyrical's `up_capture`: `CAGR(r[b > 0]) / CAGR(b[b > 0])`, each CAGR `(Π(1 + x))^(ppy/len(x)) - 1`
/// over the up-market periods only. Undefined when the benchmark never rose (empyrical: NaN), or when its
/// up-market CAGR rounds to 0.
pub fn up_capture(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<f64> {
    check_compounding(returns, benchmark, periods_per_year)?;
    capture(returns, benchmark, periods_per_year, Market::Up)
}

/// empyrical's `down_capture`: as [`up_capture`] over the periods where the benchmark fell (`b < 0`).
/// Undefined when the benchmark never fell (empyrical: NaN), or when its down-market CAGR rounds to 0.
pub fn down_capture(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<f64> {
    check_compounding(returns, benchmark, periods_per_year)?;
    capture(returns, benchmark, periods_per_year, Market::Down)
}

/// empyrical's `up_down_capture`: `up_capture / down_capture`. Undefined when either is, or when the down
/// capture is 0 (the series gained nothing and lost nothing over the down-market periods).
pub fn up_down_capture(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<f64> {
    check_compounding(returns, benchmark, periods_per_year)?;
    up_over_down(
        capture(returns, benchmark, periods_per_year, Market::Up)?,
        capture(returns, benchmark, periods_per_year, Market::Down)?,
    )
}

/// Every benchmark-relative statistic of one series, computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct RelativeSummary {
    pub beta: Option<f64>,
    pub alpha: Option<f64>,
    pub tracking_error: f64,
    pub excess_sharpe: Option<f64>,
    pub information_ratio: Option<f64>,
    pub up_capture: Option<f64>,
    pub down_capture: Option<f64>,
    pub up_down_capture: Option<f64>,
}

/// Computes a [`RelativeSummary`]. The inputs are checked once, as the single functions check them (at least
/// two aligned, finite returns, none below −1); a statistic that is undefined for this pair (a benchmark
/// with zero variance, equal active returns, no up or no down period) is `None` rather than an error, as in
/// [`risk::summary`]. `risk_free` (per period) enters alpha and beta only: the other statistics are of
/// `r - b`, where it cancels.
pub fn relative_summary(
    returns: &[f64],
    benchmark: &[f64],
    risk_free: f64,
    periods_per_year: f64,
) -> Result<RelativeSummary> {
    check_compounding(returns, benchmark, periods_per_year)?;
    input::at_least("returns", 2, returns.len())?;
    input::finite_scalar("risk_free", risk_free)?;
    let (m, sd) = active_moments(returns, benchmark)?;
    let excess_sharpe = ratio_of_moments(m, sd).ok();
    let information_ratio =
        excess_sharpe.and_then(|es| output::finite("information ratio", es * periods_per_year.sqrt()).ok());
    let up = capture(returns, benchmark, periods_per_year, Market::Up).ok();
    let down = capture(returns, benchmark, periods_per_year, Market::Down).ok();
    Ok(RelativeSummary {
        beta: risk::beta(returns, benchmark, risk_free).ok(),
        alpha: risk::alpha(returns, benchmark, risk_free, periods_per_year).ok(),
        tracking_error: output::finite("tracking error", sd * periods_per_year.sqrt())?,
        excess_sharpe,
        information_ratio,
        up_capture: up,
        down_capture: down,
        up_down_capture: up.zip(down).and_then(|(u, d)| up_over_down(u, d).ok()),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Market {
    Up,
    Down,
}

fn check(returns: &[f64], benchmark: &[f64], needed: usize) -> Result<()> {
    input::finite("returns", returns)?;
    input::finite("benchmark", benchmark)?;
    input::same_len("benchmark", returns.len(), benchmark.len())?;
    input::at_least("returns", needed, returns.len())
}

/// The checks of the capture ratios, which compound both series: one aligned pair is enough.
fn check_compounding(returns: &[f64], benchmark: &[f64], periods_per_year: f64) -> Result<()> {
    check(returns, benchmark, 1)?;
    input::no_total_loss("returns", returns)?;
    input::no_total_loss("benchmark", benchmark)?;
    input::positive("periods_per_year", periods_per_year)
}

/// Mean and sample standard deviation (ddof = 1) of the active returns; the deviation is exactly 0 when they
/// are all equal, where the two-pass formula can leave a residue of ~1e-18 around a mean that differs from
/// them in the last bit.
fn active_moments(returns: &[f64], benchmark: &[f64]) -> Result<(f64, f64)> {
    let active: Vec<f64> = returns.iter().zip(benchmark).map(|(r, b)| r - b).collect();
    output::all_finite("active returns", &active)?;
    let first = active[0];
    let sd = if active.iter().all(|a| *a == first) { 0.0 } else { variance(&active, 1).sqrt() };
    Ok((output::finite("active returns", mean(&active))?, output::finite("tracking error", sd)?))
}

fn ratio_of_moments(m: f64, sd: f64) -> Result<f64> {
    if sd == 0.0 {
        return Err(QuantError::Undefined {
            what: "excess Sharpe ratio",
            reason: "every active return is equal (zero tracking error)",
        });
    }
    output::finite("excess Sharpe ratio", m / sd)
}

/// One capture ratio; the inputs are already checked.
fn capture(returns: &[f64], benchmark: &[f64], periods_per_year: f64, market: Market) -> Result<f64> {
    let (what, none, flat) = match market {
        Market::Up => (
            "up capture",
            "the benchmark has no period with a positive return",
            "the benchmark's annualised return over its up periods rounds to 0",
        ),
        Market::Down => (
            "down capture",
            "the benchmark has no period with a negative return",
            "the benchmark's annualised return over its down periods rounds to 0",
        ),
    };
    let (r, b): (Vec<f64>, Vec<f64>) = returns
        .iter()
        .zip(benchmark)
        .filter(|(_, b)| match market {
            Market::Up => **b > 0.0,
            Market::Down => **b < 0.0,
        })
        .unzip();
    if b.is_empty() {
        return Err(QuantError::Undefined { what, reason: none });
    }
    let denominator = risk::annual_return(&b, periods_per_year)?;
    if denominator == 0.0 {
        return Err(QuantError::Undefined { what, reason: flat });
    }
    output::finite(what, risk::annual_return(&r, periods_per_year)? / denominator)
}

fn up_over_down(up: f64, down: f64) -> Result<f64> {
    if down == 0.0 {
        return Err(QuantError::Undefined {
            what: "up/down capture",
            reason: "the down capture is 0 (the series' annualised return over the down periods is 0)",
        });
    }
    output::finite("up/down capture", up / down)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: [f64; 6] = [0.02, -0.01, 0.005, 0.03, -0.02, 0.01];
    const B: [f64; 6] = [0.01, -0.005, 0.0, 0.02, -0.01, 0.004];

    #[test]
    fn misaligned_short_and_non_finite_inputs_are_refused() {
        let short = &B[..5];
        for e in [
            tracking_error(&R, short, 252.0).unwrap_err(),
            excess_sharpe(&R, short).unwrap_err(),
            information_ratio(&R, short, 252.0).unwrap_err(),
            up_capture(&R, short, 252.0).unwrap_err(),
            down_capture(&R, short, 252.0).unwrap_err(),
            up_down_capture(&R, short, 252.0).unwrap_err(),
            relative_summary(&R, short, 0.0, 252.0).unwrap_err(),
        ] {
            assert_eq!(e, QuantError::LengthMismatch { what: "benchmark", expected: 6, got: 5 });
        }
        let one = [0.01];
        for e in [
            tracking_error(&one, &one, 252.0).unwrap_err(),
            excess_sharpe(&one, &one).unwrap_err(),
            information_ratio(&one, &one, 252.0).unwrap_err(),
            relative_summary(&one, &one, 0.0, 252.0).unwrap_err(),
        ] {
            assert_eq!(e, QuantError::InsufficientData { what: "returns", needed: 2, got: 1 });
        }
        // A capture ratio needs one up (down) period, not two observations.
        let want = (1.03_f64.powf(12.0) - 1.0) / (1.01_f64.powf(12.0) - 1.0);
        assert_eq!(up_capture(&[0.03], &[0.01], 12.0).unwrap(), want);
        assert!(matches!(up_capture(&[], &[], 252.0), Err(QuantError::Empty { what: "returns" })));
        let mut nan = B;
        nan[3] = f64::NAN;
        assert_eq!(excess_sharpe(&R, &nan).unwrap_err(), QuantError::NonFinite { what: "benchmark", index: 3 });
        let mut inf = R;
        inf[1] = f64::INFINITY;
        assert_eq!(up_capture(&inf, &B, 252.0).unwrap_err(), QuantError::NonFinite { what: "returns", index: 1 });
        for ppy in [0.0, -252.0, f64::NAN] {
            assert!(matches!(tracking_error(&R, &B, ppy), Err(QuantError::InvalidParameter { .. })));
            assert!(matches!(down_capture(&R, &B, ppy), Err(QuantError::InvalidParameter { .. })));
        }
        assert!(matches!(relative_summary(&R, &B, f64::NAN, 252.0), Err(QuantError::NonFinite { .. })));
    }

    #[test]
    fn a_loss_of_more_than_everything_is_refused_by_the_compounding_statistics() {
        let mut b = B;
        b[4] = -1.5;
        for e in [up_capture(&R, &b, 252.0), down_capture(&R, &b, 252.0), up_down_capture(&R, &b, 252.0)] {
            assert!(matches!(e, Err(QuantError::InvalidParameter { name: "benchmark", .. })));
        }
        assert!(matches!(relative_summary(&R, &b, 0.0, 252.0), Err(QuantError::InvalidParameter { .. })));
    }

    #[test]
    fn no_up_or_no_down_benchmark_period_is_undefined_not_nan() {
        let never_down = B.map(f64::abs);
        assert!(up_capture(&R, &never_down, 252.0).is_ok());
        let down = down_capture(&R, &never_down, 252.0).unwrap_err();
        assert!(matches!(down, QuantError::Undefined { what: "down capture", .. }));
        assert!(matches!(up_down_capture(&R, &never_down, 252.0), Err(QuantError::Undefined { .. })));
        let never_up = B.map(|b| -b.abs());
        assert!(matches!(up_capture(&R, &never_up, 252.0), Err(QuantError::Undefined { what: "up capture", .. })));
        // A benchmark that never moves is in neither market.
        let flat = [0.0; 6];
        assert!(matches!(up_capture(&R, &flat, 252.0), Err(QuantError::Undefined { .. })));
        assert!(matches!(down_capture(&R, &flat, 252.0), Err(QuantError::Undefined { .. })));
        let s = relative_summary(&R, &never_down, 0.0, 252.0).unwrap();
        assert!(s.up_capture.is_some() && s.down_capture.is_none() && s.up_down_capture.is_none());
    }

    #[test]
    fn equal_active_returns_have_zero_tracking_error_and_no_excess_sharpe() {
        // The mean of three 0.1s is 0.1 + 1 ulp, so the two-pass variance leaves a residue of ~3e-34 and a
        // ratio of ~6e15; the dispersion of equal values is taken as exactly 0 instead, as empyrical does.
        let (r, zero) = ([0.1; 3], [0.0; 3]);
        assert!(variance(&r, 1) > 0.0);
        assert_eq!(tracking_error(&r, &zero, 252.0).unwrap(), 0.0);
        assert!(matches!(excess_sharpe(&r, &zero), Err(QuantError::Undefined { .. })));
        let b = [0.01, 0.02, -0.03, 0.005];
        assert_eq!(tracking_error(&b, &b, 252.0).unwrap(), 0.0);
        assert!(matches!(excess_sharpe(&b, &b), Err(QuantError::Undefined { .. })));
        assert!(matches!(information_ratio(&b, &b, 252.0), Err(QuantError::Undefined { .. })));
        let s = relative_summary(&b, &b, 0.0, 252.0).unwrap();
        assert_eq!((s.tracking_error, s.excess_sharpe, s.information_ratio), (0.0, None, None));
        assert_eq!((s.up_capture, s.down_capture, s.up_down_capture), (Some(1.0), Some(1.0), Some(1.0)));
    }

    #[test]
    fn a_series_flat_over_the_down_periods_has_no_up_down_capture() {
        let r = [0.02, 0.0, 0.01, 0.0];
        let b = [0.01, -0.01, 0.02, -0.02];
        assert_eq!(down_capture(&r, &b, 252.0).unwrap(), 0.0);
        assert!(matches!(up_down_capture(&r, &b, 252.0), Err(QuantError::Undefined { what: "up/down capture", .. })));
    }

    #[test]
    fn information_ratio_is_the_annualised_excess_sharpe_and_matches_its_definition() {
        let es = excess_sharpe(&R, &B).unwrap();
        let ir = information_ratio(&R, &B, 252.0).unwrap();
        assert_eq!(ir, es * 252.0_f64.sqrt());
        let a: Vec<f64> = R.iter().zip(&B).map(|(r, b)| r - b).collect();
        let by_definition = mean(&a) * 252.0 / tracking_error(&R, &B, 252.0).unwrap();
        assert!((ir - by_definition).abs() <= 1e-14 * ir.abs());
    }
}
