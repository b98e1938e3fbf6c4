//! Robust z-scores `z_i = (x_i − median) / MAD_n`, with `MAD_n = median(|x − median|) / Φ⁻¹(0.75)` so that
//! MAD_n estimates σ for normal data. Dividing by 0.6744897501960817 (rather than multiplying by a rounded
//! 1.4826) is what scipy's `median_abs_deviation(scale='normal')` does, and keeps results bit-comparable.

use crate::error::{QuantError, Result};
use crate::input;
use crate::output;
use crate::stats::median;

/// Φ⁻¹(0.75), the literal scipy divides by.
const NORMAL_MAD_DIVISOR: f64 = 0.674_489_750_196_081_7;

/// Scores and the centre/scale they were measured from.
#[derive(Debug, Clone, PartialEq)]
pub struct RobustZ {
    pub median: f64,
    /// The normal-consistent MAD.
    pub scale: f64,
    pub scores: Vec<f64>,
}

impl RobustZ {
    /// Indices whose |z| exceeds `threshold` (3.5 is the Iglewicz-Hoaglin rule of thumb).
    pub fn outliers(&self, threshold: f64) -> Vec<usize> {
        self.scores.iter().enumerate().filter(|(_, z)| z.abs() > threshold).map(|(i, _)| i).collect()
    }
}

/// Robust z-scores of every value against the whole sample.
pub fn robust_z_scores(xs: &[f64]) -> Result<RobustZ> {
    input::finite("values", xs)?;
    let med = median(xs);
    let deviations: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let scale = output::finite("robust z-score", median(&deviations) / NORMAL_MAD_DIVISOR)?;
    if scale == 0.0 {
        return Err(QuantError::Undefined {
            what: "robust z-score",
            reason: "the median absolute deviation is zero (more than half the values are equal)",
        });
    }
    let scores: Vec<f64> = xs.iter().map(|x| (x - med) / scale).collect();
    output::all_finite("robust z-score", &scores)?;
    Ok(RobustZ { median: med, scale, scores })
}

/// Each point of a series scored against the `window` points before it (so a point never hides itself).
/// The first `window` points have no score (`None`), nor has a point whose trailing MAD is zero.
pub fn trailing_robust_z_scores(series: &[f64], window: usize) -> Result<Vec<Option<f64>>> {
    input::finite("series", series)?;
    input::at_least("window", 3, window)?;
    let scores: Vec<Option<f64>> = (0..series.len())
        .map(|t| {
            if t < window {
                return None;
            }
            let past = &series[t - window..t];
            let med = median(past);
            let dev: Vec<f64> = past.iter().map(|x| (x - med).abs()).collect();
            let scale = median(&dev) / NORMAL_MAD_DIVISOR;
            (scale > 0.0).then(|| (series[t] - med) / scale)
        })
        .collect();
    output::all_finite_or_none("trailing robust z-score", &scores)?;
    Ok(scores)
}
