//! Sample moments and order statistics shared by the risk, covariance and anomaly modules.

/// Arithmetic mean (callers guarantee a non-empty slice).
pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with `ddof` degrees of freedom removed from the denominator.
pub(crate) fn variance(xs: &[f64], ddof: usize) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - ddof) as f64
}

/// Ascending sorted copy; NaN never reaches here because inputs are checked first.
pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// numpy's default ("linear") percentile of an ascending sorted slice at fraction `q` in [0, 1].
pub(crate) fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let t = h - lo as f64;
    // numpy's lerp: the two branches keep the result exact at t = 0 and t = 1. Between values of opposite
    // sign near ±f64::MAX the difference overflows; the convex combination cannot.
    let (a, b) = (sorted[lo], sorted[hi]);
    if !(b - a).is_finite() {
        return a * (1.0 - t) + b * t;
    }
    if t < 0.5 { a + (b - a) * t } else { b - (b - a) * (1.0 - t) }
}

/// numpy's median: the mean of the two middle order statistics for even n.
pub(crate) fn median(xs: &[f64]) -> f64 {
    let s = sorted(xs);
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 }
}
