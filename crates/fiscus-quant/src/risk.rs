//! Return and risk statistics of one return series, with empyrical-reloaded's conventions (which vectorbt
//! matches with `year_freq='252 days'`): sample statistics use ddof = 1, annual return is the CAGR, Sharpe and
//! Sortino are arithmetic means scaled by the period count, alpha is annualised geometrically.
//!
//! Statistics that compound returns (annual return, drawdown, Calmar, the summary) refuse a return below −1,
//! and every rate argument must be finite: a NaN risk-free rate is reported as such, not as whatever the
//! arithmetic then ran into.

use crate::error::{QuantError, Result};
use crate::input;
use crate::output;
use crate::stats::{mean, variance};

/// Periods per year for daily data (trading days).
pub const DAILY: f64 = 252.0;
/// Periods per year for weekly data.
pub const WEEKLY: f64 = 52.0;
/// Periods per year for monthly data.
pub const MONTHLY: f64 = 12.0;

/// Where the wealth path of a drawdown starts. The peers disagree, so the caller chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawdownStart {
    /// The path starts at the initial investment before the first return, so a first-period loss is a
    /// drawdown (empyrical).
    BeforeFirstReturn,
    /// The path starts at the value after the first return (vectorbt's returns accessor).
    AfterFirstReturn,
}

/// Compound annual growth rate `(Π(1 + r))^(ppy/n) - 1`.
pub fn annual_return(returns: &[f64], periods_per_year: f64) -> Result<f64> {
    input::finite("returns", returns)?;
    input::simple_returns("returns", returns)?;
    input::positive("periods_per_year", periods_per_year)?;
    let growth = returns.iter().fold(1.0, |acc, r| acc * (1.0 + r));
    output::finite("annual return", growth.powf(periods_per_year / returns.len() as f64) - 1.0)
}

/// Annualised volatility `std(r, ddof=1)·√ppy`.
pub fn annual_volatility(returns: &[f64], periods_per_year: f64) -> Result<f64> {
    input::finite("returns", returns)?;
    input::at_least("returns", 2, returns.len())?;
    input::positive("periods_per_year", periods_per_year)?;
    output::finite("annual volatility", variance(returns, 1).sqrt() * periods_per_year.sqrt())
}

/// Sharpe ratio `mean(r - rf)/std(r - rf, ddof=1)·√ppy`, with `risk_free` per period.
pub fn sharpe_ratio(returns: &[f64], risk_free: f64, periods_per_year: f64) -> Result<f64> {
    input::finite("returns", returns)?;
    input::at_least("returns", 2, returns.len())?;
    input::positive("periods_per_year", periods_per_year)?;
    input::finite_scalar("risk_free", risk_free)?;
    let excess: Vec<f64> = returns.iter().map(|r| r - risk_free).collect();
    let sd = output::finite("Sharpe ratio", variance(&excess, 1).sqrt())?;
    if sd == 0.0 {
        return Err(QuantError::Undefined { what: "Sharpe ratio", reason: "returns have zero volatility" });
    }
    output::finite("Sharpe ratio", mean(&excess) / sd * periods_per_year.sqrt())
}

/// Downside deviation `sqrt(mean(min(r - required, 0)²))·√ppy`, averaged over ALL periods as empyrical does.
pub fn downside_risk(returns: &[f64], required: f64, periods_per_year: f64) -> Result<f64> {
    input::finite("returns", returns)?;
    input::positive("periods_per_year", periods_per_year)?;
    input::finite_scalar("required", required)?;
    let shortfall: f64 = returns.iter().map(|r| (r - required).min(0.0).powi(2)).sum();
    output::finite("downside risk", (shortfall / returns.len() as f64).sqrt() * periods_per_year.sqrt())
}

/// Sortino ratio `mean(r - required)·ppy / downside_risk`.
pub fn sortino_ratio(returns: &[f64], required: f64, periods_per_year: f64) -> Result<f64> {
    let dr = downside_risk(returns, required, periods_per_year)?;
    if dr == 0.0 {
        return Err(QuantError::Undefined { what: "Sortino ratio", reason: "no period fell short" });
    }
    let m = returns.iter().map(|r| r - required).sum::<f64>() / returns.len() as f64;
    output::finite("Sortino ratio", m * periods_per_year / dr)
}

/// Maximum drawdown as a non-positive fraction (e.g. -0.25 for a 25 % fall from the peak). Returns below
/// −1 are refused.
pub fn max_drawdown(returns: &[f64], start: DrawdownStart) -> Result<f64> {
    input::finite("returns", returns)?;
    input::simple_returns("returns", returns)?;
    let (mut wealth, mut peak) = (1.0_f64, 1.0_f64);
    let mut worst = 0.0_f64;
    for (i, r) in returns.iter().enumerate() {
        wealth *= 1.0 + r;
        if i == 0 && start == DrawdownStart::AfterFirstReturn {
            peak = wealth;
        }
        peak = peak.max(wealth);
        if peak == 0.0 {
            return Err(QuantError::Undefined {
                what: "max drawdown",
                reason: "the wealth path starts at zero (a first return of -1 with the path starting after it)",
            });
        }
        worst = worst.min(output::finite("max drawdown", (wealth - peak) / peak)?);
    }
    Ok(worst)
}

/// Calmar ratio: annual return over the absolute maximum drawdown (empyrical's drawdown convention).
pub fn calmar_ratio(returns: &[f64], periods_per_year: f64) -> Result<f64> {
    let dd = max_drawdown(returns, DrawdownStart::BeforeFirstReturn)?;
    if dd >= 0.0 {
        return Err(QuantError::Undefined { what: "Calmar ratio", reason: "the series never drew down" });
    }
    output::finite("Calmar ratio", annual_return(returns, periods_per_year)? / dd.abs())
}

/// Beta `cov(r - rf, b - rf)/var(b - rf)` against a benchmark of the same length.
pub fn beta(returns: &[f64], benchmark: &[f64], risk_free: f64) -> Result<f64> {
    check_pair(returns, benchmark)?;
    input::finite_scalar("risk_free", risk_free)?;
    let r: Vec<f64> = returns.iter().map(|x| x - risk_free).collect();
    let b: Vec<f64> = benchmark.iter().map(|x| x - risk_free).collect();
    let mb = mean(&b);
    let n = b.len() as f64;
    let cov = b.iter().zip(&r).map(|(bi, ri)| (bi - mb) * ri).sum::<f64>() / n;
    let var = output::finite("beta", b.iter().map(|bi| (bi - mb) * (bi - mb)).sum::<f64>() / n)?;
    if var == 0.0 {
        return Err(QuantError::Undefined { what: "beta", reason: "the benchmark has zero variance" });
    }
    output::finite("beta", cov / var)
}

/// Jensen's alpha annualised geometrically: `(1 + mean(r - rf - β(b - rf)))^ppy - 1`.
pub fn alpha(returns: &[f64], benchmark: &[f64], risk_free: f64, periods_per_year: f64) -> Result<f64> {
    input::positive("periods_per_year", periods_per_year)?;
    let b = beta(returns, benchmark, risk_free)?;
    let daily = returns.iter().zip(benchmark).map(|(r, m)| (r - risk_free) - b * (m - risk_free)).sum::<f64>()
        / returns.len() as f64;
    if daily < -1.0 {
        return Err(QuantError::Undefined {
            what: "alpha",
            reason: "the mean excess return per period is below -1, which cannot be annualised geometrically",
        });
    }
    output::finite("alpha", (1.0 + daily).powf(periods_per_year) - 1.0)
}

/// Every statistic above for one series, computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct RiskSummary {
    pub total_return: f64,
    pub annual_return: f64,
    pub annual_volatility: f64,
    pub sharpe_ratio: Option<f64>,
    pub sortino_ratio: Option<f64>,
    pub downside_risk: f64,
    pub max_drawdown: f64,
    pub calmar_ratio: Option<f64>,
    pub beta: Option<f64>,
    pub alpha: Option<f64>,
}

/// Computes a [`RiskSummary`]; ratios that are undefined for this series (zero volatility, no drawdown, no
/// benchmark) are `None` rather than an error, because a summary of a flat series is still a summary.
/// `risk_free` (per period) is also the required return of the Sortino ratio and downside risk, as when
/// empyrical is called with both set to the same value.
pub fn summary(
    returns: &[f64],
    benchmark: Option<&[f64]>,
    risk_free: f64,
    periods_per_year: f64,
) -> Result<RiskSummary> {
    input::finite("returns", returns)?;
    input::at_least("returns", 2, returns.len())?;
    input::positive("periods_per_year", periods_per_year)?;
    input::finite_scalar("risk_free", risk_free)?;
    input::simple_returns("returns", returns)?;
    let (beta, alpha) = match benchmark {
        Some(b) => {
            check_pair(returns, b)?;
            (beta(returns, b, risk_free).ok(), alpha(returns, b, risk_free, periods_per_year).ok())
        }
        None => (None, None),
    };
    Ok(RiskSummary {
        total_return: output::finite("total return", returns.iter().fold(1.0, |acc, r| acc * (1.0 + r)) - 1.0)?,
        annual_return: annual_return(returns, periods_per_year)?,
        annual_volatility: annual_volatility(returns, periods_per_year)?,
        sharpe_ratio: sharpe_ratio(returns, risk_free, periods_per_year).ok(),
        sortino_ratio: sortino_ratio(returns, risk_free, periods_per_year).ok(),
        downside_risk: downside_risk(returns, risk_free, periods_per_year)?,
        max_drawdown: max_drawdown(returns, DrawdownStart::BeforeFirstReturn)?,
        calmar_ratio: calmar_ratio(returns, periods_per_year).ok(),
        beta,
        alpha,
    })
}

fn check_pair(returns: &[f64], benchmark: &[f64]) -> Result<()> {
    input::finite("returns", returns)?;
    input::finite("benchmark", benchmark)?;
    input::same_len("benchmark", returns.len(), benchmark.len())?;
    input::at_least("returns", 2, returns.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawdown_conventions_differ_on_a_first_day_loss_as_the_peers_do() {
        let r = [-0.1, 0.05, -0.02, 0.03, 0.01];
        assert!((max_drawdown(&r, DrawdownStart::BeforeFirstReturn).unwrap() - -0.1).abs() < 1e-15);
        let v = max_drawdown(&r, DrawdownStart::AfterFirstReturn).unwrap();
        assert!((v - -0.020000000000000018).abs() < 1e-15);
    }

    #[test]
    fn sharpe_of_a_flat_series_is_undefined_not_infinite() {
        assert!(matches!(sharpe_ratio(&[0.01, 0.01, 0.01], 0.0, DAILY), Err(QuantError::Undefined { .. })));
    }
}
