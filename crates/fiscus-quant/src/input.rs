//! Checks shared by every public entry point: the crate refuses empty, non-finite and misaligned input up
//! front so that no computation can panic or quietly produce NaN downstream.

use crate::error::{QuantError, Result};

/// Refuses an empty slice or one holding NaN/infinity.
pub(crate) fn finite(what: &'static str, xs: &[f64]) -> Result<()> {
    if xs.is_empty() {
        return Err(QuantError::Empty { what });
    }
    all_finite(what, xs)
}

/// Refuses NaN/infinity but accepts an empty slice.
pub(crate) fn all_finite(what: &'static str, xs: &[f64]) -> Result<()> {
    if none_of(xs, |x| !x.is_finite()) {
        return Ok(());
    }
    match xs.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(QuantError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// Whether no element satisfies `bad`. Unlike `iter().any`, which stops at the first hit and so runs one
/// element at a time, this folds whole chunks without a branch (the compiler turns each chunk into a few
/// vector compares) and only stops between chunks; the callers look for the index only once something
/// was found, which on valid input never happens.
pub(crate) fn none_of(xs: &[f64], bad: impl Fn(f64) -> bool) -> bool {
    xs.chunks(256).all(|c| !c.iter().fold(false, |found, x| found | bad(*x)))
}

/// Refuses a non-finite scalar (a rate, a required return), reported like a one-element input.
pub(crate) fn finite_scalar(what: &'static str, x: f64) -> Result<()> {
    if x.is_finite() { Ok(()) } else { Err(QuantError::NonFinite { what, index: 0 }) }
}

/// Refuses simple returns that are non-finite or below −1, a loss of more than everything invested:
/// compounded, such a return makes wealth negative, and an even number of them makes it positive again,
/// so every statistic built on it would be meaningless.
pub(crate) fn simple_returns(what: &'static str, xs: &[f64]) -> Result<()> {
    all_finite(what, xs)?;
    no_total_loss(what, xs)
}

/// The second half of [`simple_returns`], for returns already known to be finite.
pub(crate) fn no_total_loss(what: &'static str, xs: &[f64]) -> Result<()> {
    if none_of(xs, |r| r < -1.0) {
        return Ok(());
    }
    match xs.iter().position(|r| *r < -1.0) {
        Some(i) => Err(QuantError::InvalidParameter {
            name: what,
            reason: format!("the return at index {i} is {}, a loss of more than 100 %", xs[i]),
        }),
        None => Ok(()),
    }
}

/// Refuses two lengths that must agree.
pub(crate) fn same_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got { Ok(()) } else { Err(QuantError::LengthMismatch { what, expected, got }) }
}

/// Refuses fewer than `needed` observations.
pub(crate) fn at_least(what: &'static str, needed: usize, got: usize) -> Result<()> {
    if got >= needed { Ok(()) } else { Err(QuantError::InsufficientData { what, needed, got }) }
}

/// Refuses a parameter that is not finite and strictly positive.
pub(crate) fn positive(name: &'static str, x: f64) -> Result<()> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(QuantError::InvalidParameter { name, reason: format!("must be finite and > 0, got {x}") })
    }
}

/// Refuses a probability level outside the open interval (0, 1).
pub(crate) fn open_unit(name: &'static str, x: f64) -> Result<()> {
    if x.is_finite() && x > 0.0 && x < 1.0 {
        Ok(())
    } else {
        Err(QuantError::InvalidParameter { name, reason: format!("must lie in (0, 1), got {x}") })
    }
}
