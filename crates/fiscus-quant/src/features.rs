//! Derived series ("features") of one price series, aligned with it: element `t` is the feature on the
//! date of price `t`, `None` where the window does not have enough history yet, exactly where pandas gives
//! NaN for the same expression (the peer is `peers/generate.py`, `features.json`):
//!
//! | function | pandas |
//! |---|---|
//! | [`simple_return`] | `p.pct_change()` |
//! | [`log_return`] | `np.log(p).diff()` |
//! | [`rolling_volatility`] | `p.pct_change().rolling(w).std() * sqrt(periods_per_year)` (ddof 1) |
//! | [`momentum`] | `p.shift(skip) / p.shift(lookback) - 1` |
//! | [`drawdown`] | `p / p.cummax() - 1` |

use crate::error::Result;
use crate::input;
use crate::output;
use crate::returns::check_prices;

/// `p_t / p_{t-1} - 1`.
pub fn simple_return(prices: &[f64]) -> Result<Vec<Option<f64>>> {
    check_prices(prices)?;
    finite("simple return", lagged(prices, 1, |now, then| now / then - 1.0))
}

/// `ln(p_t / p_{t-1})`.
pub fn log_return(prices: &[f64]) -> Result<Vec<Option<f64>>> {
    check_prices(prices)?;
    finite("log return", lagged(prices, 1, |now, then| (now / then).ln()))
}

fn finite(what: &'static str, xs: Vec<Option<f64>>) -> Result<Vec<Option<f64>>> {
    output::all_finite_or_none(what, &xs)?;
    Ok(xs)
}

fn lagged(prices: &[f64], lag: usize, f: impl Fn(f64, f64) -> f64) -> Vec<Option<f64>> {
    (0..prices.len()).map(|t| (t >= lag).then(|| f(prices[t], prices[t - lag]))).collect()
}

/// The sample standard deviation (n − 1) of the last `window` simple returns, annualised by
/// `sqrt(periods_per_year)`. The first value is at index `window` (the first return is at index 1).
pub fn rolling_volatility(prices: &[f64], window: usize, periods_per_year: f64) -> Result<Vec<Option<f64>>> {
    check_prices(prices)?;
    input::at_least("window", 2, window)?;
    input::positive("periods_per_year", periods_per_year)?;
    let returns: Vec<f64> = prices.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let scale = periods_per_year.sqrt();
    let mut out = vec![None; prices.len()];
    for end in window..=returns.len() {
        let slice = &returns[end - window..end];
        let mean = slice.iter().sum::<f64>() / window as f64;
        let var = slice.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>() / (window - 1) as f64;
        // Return `end - 1` is the change into price `end`.
        out[end] = Some(var.sqrt() * scale);
    }
    finite("rolling volatility", out)
}

/// `p_{t-skip} / p_{t-lookback} - 1`: the return over `lookback` periods leaving out the latest `skip`
/// (12-1 momentum on daily data is `skip = 21`, `lookback = 252`).
pub fn momentum(prices: &[f64], skip: usize, lookback: usize) -> Result<Vec<Option<f64>>> {
    check_prices(prices)?;
    if skip >= lookback {
        return Err(crate::QuantError::InvalidParameter {
            name: "skip",
            reason: format!("must be shorter than the lookback ({lookback})"),
        });
    }
    finite(
        "momentum",
        (0..prices.len()).map(|t| (t >= lookback).then(|| prices[t - skip] / prices[t - lookback] - 1.0)).collect(),
    )
}

/// `p_t / max(p_0..=p_t) - 1`: how far below its running peak the price is (0 at a new high).
pub fn drawdown(prices: &[f64]) -> Result<Vec<Option<f64>>> {
    check_prices(prices)?;
    let mut peak = f64::MIN;
    Ok(prices
        .iter()
        .map(|p| {
            peak = peak.max(*p);
            Some(p / peak - 1.0)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_start_where_pandas_gives_the_first_value() {
        let p = [100.0, 110.0, 99.0, 120.0, 60.0];
        let r = simple_return(&p).unwrap();
        assert_eq!(r[0], None);
        assert!((r[1].unwrap() - 0.1).abs() < 1e-15);
        let v = rolling_volatility(&p, 3, 252.0).unwrap();
        assert_eq!(&v[..3], &[None, None, None]);
        assert!(v[3].is_some());
        let m = momentum(&p, 1, 3).unwrap();
        assert_eq!(m[2], None);
        assert!((m[3].unwrap() - (99.0 / 100.0 - 1.0)).abs() < 1e-15);
        assert_eq!(drawdown(&p).unwrap()[4], Some(60.0 / 120.0 - 1.0));
        assert!(simple_return(&[1.0, -1.0]).is_err());
        assert!(momentum(&p, 3, 3).is_err());
    }
}
