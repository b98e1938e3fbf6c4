//! Backtesting a value-at-risk model: Kupiec's (1995) proportion-of-failures test.
//!
//! Over `n` periods a VaR at tail probability `p` should be breached about `n·p` times. With `x` breaches,
//! the likelihood ratio `LR = −2 ln[(1−p)^(n−x) p^x] + 2 ln[(1−x/n)^(n−x) (x/n)^x]` is asymptotically
//! χ²(1) under the model, so its p-value is `P(χ²₁ > LR) = erfc(√(LR/2))`. A small p-value rejects the
//! model (too many breaches, or too few). The χ² survival function is the regularised upper incomplete
//! gamma `Q(1/2, LR/2)`, computed here by its series or continued fraction (Numerical Recipes §6.2) to
//! about 1e-15, which is what Python's `math.erfc` gives.

use crate::error::{QuantError, Result};
use crate::input;

/// The test's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kupiec {
    pub observations: usize,
    pub breaches: usize,
    /// `p`, the rate a correct model breaches at.
    pub expected_rate: f64,
    pub observed_rate: f64,
    pub likelihood_ratio: f64,
    pub p_value: f64,
}

/// Kupiec's proportion-of-failures test of `breaches` in `observations` periods at tail probability `p`.
pub fn kupiec(breaches: usize, observations: usize, p: f64) -> Result<Kupiec> {
    input::open_unit("tail probability", p)?;
    if observations == 0 {
        return Err(QuantError::InsufficientData { what: "VaR backtest", needed: 1, got: 0 });
    }
    if breaches > observations {
        return Err(QuantError::InvalidParameter {
            name: "breaches",
            reason: "there cannot be more breaches than observations".into(),
        });
    }
    let (n, x) = (observations as f64, breaches as f64);
    let rate = x / n;
    // x·ln(x/n) is taken as 0 at x = 0 (its limit), and likewise (n−x)·ln(1−x/n) at x = n.
    let term = |k: f64, q: f64| if k == 0.0 { 0.0 } else { k * q.ln() };
    let null = term(n - x, 1.0 - p) + term(x, p);
    let alternative = term(n - x, 1.0 - rate) + term(x, rate);
    let likelihood_ratio = (2.0 * (alternative - null)).max(0.0);
    Ok(Kupiec {
        observations,
        breaches,
        expected_rate: p,
        observed_rate: rate,
        likelihood_ratio,
        p_value: chi_square_1_survival(likelihood_ratio),
    })
}

/// `P(χ²₁ > x)` for x ≥ 0.
pub fn chi_square_1_survival(x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    upper_gamma_regularised(0.5, x / 2.0)
}

/// ln Γ(1/2) = ln √π: the only Γ this module needs.
const LN_GAMMA_HALF: f64 = 0.572_364_942_924_700_1;

fn upper_gamma_regularised(a: f64, x: f64) -> f64 {
    const EPS: f64 = 1e-16;
    const TINY: f64 = 1e-300;
    let prefactor = (-x + a * x.ln() - LN_GAMMA_HALF).exp();
    if x < a + 1.0 {
        // P(a, x) by its series; Q = 1 − P.
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..500 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * EPS {
                break;
            }
        }
        1.0 - sum * prefactor
    } else {
        // Q(a, x) by its continued fraction, evaluated with the modified Lentz method.
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPS {
                break;
            }
        }
        prefactor * h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol * b.abs().max(1e-300), "{a} vs {b}");
    }

    #[test]
    fn the_survival_function_matches_erfc() {
        // Python 3: math.erfc(math.sqrt(x / 2)).
        for (x, want) in [
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.317_310_507_862_914_04),
            (3.841_458_820_694_124, 0.050_000_000_000_000_08),
            (10.0, 0.001_565_402_258_002_548_8),
            (50.0, 1.537_459_794_428_035_1e-12),
        ] {
            close(chi_square_1_survival(x), want, 1e-13);
        }
        assert_eq!(chi_square_1_survival(0.0), 1.0);
    }

    #[test]
    fn kupiec_matches_its_closed_form() {
        // 8 breaches of a 99 % VaR in 250 days (Basel's yellow zone); reference values from the formula in
        // Python 3 with math.log and math.erfc.
        let k = kupiec(8, 250, 0.01).expect("valid");
        close(k.likelihood_ratio, 7.733_550_724_494_520_5, 1e-12);
        close(k.p_value, 0.005_420_405_194_127_794, 1e-11);
        let none = kupiec(0, 250, 0.01).expect("valid");
        close(none.likelihood_ratio, 5.025_167_926_750_726, 1e-12);
        close(none.p_value, 0.024_981_503_053_449_71, 1e-11);
        let exact = kupiec(5, 100, 0.05).expect("valid");
        assert!(exact.likelihood_ratio.abs() < 1e-12 && (exact.p_value - 1.0).abs() < 1e-12);
        assert!(kupiec(3, 2, 0.05).is_err());
        assert!(kupiec(0, 0, 0.05).is_err());
    }
}
