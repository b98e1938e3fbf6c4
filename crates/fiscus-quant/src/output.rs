//! The other half of [`crate::input`]: no public function returns a NaN or an infinity as `Ok`. Finite
//! inputs can still overflow (the square of 1e200, the product of many large growth factors, a difference
//! of ±1e308), and a zero denominator that slipped past a function's own checks gives NaN; these checks turn
//! either into [`QuantError::Undefined`] where the result leaves the crate.

use crate::error::{QuantError, Result};

const NOT_FINITE: &str = "the result is not a finite number for inputs of this magnitude (the arithmetic overflowed)";

/// `x`, or `Undefined` when it is NaN or infinite.
pub(crate) fn finite(what: &'static str, x: f64) -> Result<f64> {
    if x.is_finite() { Ok(x) } else { Err(QuantError::Undefined { what, reason: NOT_FINITE }) }
}

/// Refuses a result holding any NaN or infinity.
pub(crate) fn all_finite(what: &'static str, xs: &[f64]) -> Result<()> {
    if crate::input::none_of(xs, |x| !x.is_finite()) {
        Ok(())
    } else {
        Err(QuantError::Undefined { what, reason: NOT_FINITE })
    }
}

/// Refuses a result holding any NaN or infinity in its `Some` entries (`None` marks a missing window).
pub(crate) fn all_finite_or_none(what: &'static str, xs: &[Option<f64>]) -> Result<()> {
    if xs.iter().flatten().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(QuantError::Undefined { what, reason: NOT_FINITE })
    }
}
