//! Period returns from prices. Simple returns `p_t/p_{t-1} - 1` are the default everywhere in the crate
//! (empyrical, PyPortfolioOpt and vectorbt all use them); log returns are offered when asked for.

use crate::error::{QuantError, Result};
use crate::input;
use crate::matrix::Matrix;
use crate::output;

/// Simple returns `p_t / p_{t-1} - 1`; the first price only seeds, so the result is one shorter.
pub fn simple_returns(prices: &[f64]) -> Result<Vec<f64>> {
    check_prices(prices)?;
    let r: Vec<f64> = prices.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    output::all_finite("simple returns", &r)?;
    Ok(r)
}

/// Log returns `ln(p_t / p_{t-1})`; the first price only seeds.
pub fn log_returns(prices: &[f64]) -> Result<Vec<f64>> {
    check_prices(prices)?;
    let r: Vec<f64> = prices.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    output::all_finite("log returns", &r)?;
    Ok(r)
}

/// Simple returns of every column of a price panel (rows = periods, columns = assets).
pub fn simple_returns_matrix(prices: &Matrix) -> Result<Matrix> {
    prices.check_finite("prices")?;
    input::at_least("prices", 2, prices.rows())?;
    if let Some(index) = prices.as_slice().iter().position(|p| *p <= 0.0) {
        return Err(QuantError::InvalidParameter {
            name: "prices",
            reason: format!("price at flat index {index} is not strictly positive"),
        });
    }
    let (t, n) = (prices.rows(), prices.cols());
    let mut out = Matrix::zeros(t - 1, n);
    for i in 1..t {
        let (prev, cur) = (prices.row(i - 1), prices.row(i));
        for (j, o) in out.row_mut(i - 1).iter_mut().enumerate() {
            *o = cur[j] / prev[j] - 1.0;
        }
    }
    output::all_finite("simple returns", out.as_slice())?;
    Ok(out)
}

/// Compounded growth `Π(1 + r_t)` of a return series (the wealth of 1 invested). Returns below −1 are
/// refused.
pub fn cumulative_growth(returns: &[f64]) -> Result<f64> {
    input::finite("returns", returns)?;
    input::simple_returns("returns", returns)?;
    output::finite("cumulative growth", returns.iter().fold(1.0, |acc, r| acc * (1.0 + r)))
}

pub(crate) fn check_prices(prices: &[f64]) -> Result<()> {
    input::finite("prices", prices)?;
    input::at_least("prices", 2, prices.len())?;
    if let Some(index) = prices.iter().position(|p| *p <= 0.0) {
        return Err(QuantError::InvalidParameter {
            name: "prices",
            reason: format!("price at index {index} is not strictly positive"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_and_log_returns_agree_through_exp() {
        let p = [100.0, 110.0, 99.0, 99.0];
        let s = simple_returns(&p).unwrap();
        let l = log_returns(&p).unwrap();
        assert_eq!(s.len(), 3);
        for (a, b) in s.iter().zip(&l) {
            assert!((b.exp() - 1.0 - a).abs() < 1e-15);
        }
    }

    #[test]
    fn returns_refuse_a_zero_price_and_a_single_price() {
        assert!(simple_returns(&[1.0, 0.0]).is_err());
        assert!(matches!(simple_returns(&[1.0]), Err(QuantError::InsufficientData { .. })));
    }
}
