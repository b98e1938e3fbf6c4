//! Collateral valuation: positions are valued from observed prices and FX rates into a base currency, then
//! eligibility rules decide which count and with what haircut.
//!
//! A missing price or FX rate is an error naming what is missing; nothing is ever carried forward, averaged
//! or filled in, because a collateral figure built on an invented observation is worse than none.
//! Values are integer minor units of the base currency: market value is rounded half-even, and the
//! post-haircut (lendable) value is rounded DOWN, so rounding never increases what can be borrowed.

use std::collections::BTreeMap;

use crate::error::{QuantError, Result};

/// A holding to value.
#[derive(Debug, Clone, PartialEq)]
pub struct CollateralPosition {
    pub instrument: String,
    /// Units held (may be fractional; negative positions are refused as collateral).
    pub quantity: f64,
    /// Currency the instrument is priced in (ISO 4217).
    pub currency: String,
    /// Class an eligibility rule matches, e.g. "govt_bond", "equity", "cash".
    pub asset_class: String,
}

/// A haircut for an eligible asset class.
#[derive(Debug, Clone, PartialEq)]
pub struct EligibilityRule {
    pub asset_class: String,
    /// Fraction removed from market value, in [0, 1).
    pub haircut: f64,
    /// Optional restriction to these pricing currencies (empty = any).
    pub currencies: Vec<String>,
}

/// Observed inputs: prices per unit in the instrument's currency, and FX rates as base units per one unit of
/// the foreign currency.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observations {
    pub prices: BTreeMap<String, f64>,
    pub fx_to_base: BTreeMap<String, f64>,
}

/// One position's valuation.
#[derive(Debug, Clone, PartialEq)]
pub struct ValuedPosition {
    pub instrument: String,
    pub market_value: i64,
    pub eligible: bool,
    pub haircut: f64,
    pub collateral_value: i64,
}

/// The whole valuation.
#[derive(Debug, Clone, PartialEq)]
pub struct CollateralValuation {
    pub base_currency: String,
    pub positions: Vec<ValuedPosition>,
    pub total_market_value: i64,
    pub total_collateral_value: i64,
}

/// Values `positions` in `base_currency` with `minor_digits` decimals (2 for USD/EUR, 0 for JPY).
pub fn value(
    positions: &[CollateralPosition],
    observations: &Observations,
    rules: &[EligibilityRule],
    base_currency: &str,
    minor_digits: u32,
) -> Result<CollateralValuation> {
    if minor_digits > 6 {
        return Err(QuantError::InvalidParameter { name: "minor_digits", reason: "at most 6".into() });
    }
    for r in rules {
        if !(r.haircut.is_finite() && (0.0..1.0).contains(&r.haircut)) {
            return Err(QuantError::InvalidParameter {
                name: "haircut",
                reason: format!("rule for {} has haircut {}", r.asset_class, r.haircut),
            });
        }
    }
    let scale = 10f64.powi(minor_digits as i32);
    let mut out = Vec::with_capacity(positions.len());
    for (i, p) in positions.iter().enumerate() {
        if !p.quantity.is_finite() {
            return Err(QuantError::NonFinite { what: "quantity", index: i });
        }
        if p.quantity < 0.0 {
            return Err(QuantError::InvalidParameter {
                name: "quantity",
                reason: format!("{} is a short position and cannot be pledged", p.instrument),
            });
        }
        let price = *observations
            .prices
            .get(&p.instrument)
            .ok_or_else(|| QuantError::MissingObservation { what: format!("price of {}", p.instrument) })?;
        if !(price.is_finite() && price >= 0.0) {
            return Err(QuantError::InvalidParameter {
                name: "price",
                reason: format!("{} has price {price}", p.instrument),
            });
        }
        let fx = if p.currency == base_currency {
            1.0
        } else {
            *observations.fx_to_base.get(&p.currency).ok_or_else(|| QuantError::MissingObservation {
                what: format!("FX rate {}/{base_currency}", p.currency),
            })?
        };
        if !(fx.is_finite() && fx > 0.0) {
            return Err(QuantError::InvalidParameter { name: "fx", reason: format!("{} has rate {fx}", p.currency) });
        }
        let mv = (p.quantity * price * fx * scale).round_ties_even();
        if !(mv.abs() < 9.0e18) {
            return Err(QuantError::InvalidParameter { name: "quantity", reason: "market value overflows i64".into() });
        }
        let market_value = mv as i64;
        let rule = rules.iter().find(|r| {
            r.asset_class == p.asset_class && (r.currencies.is_empty() || r.currencies.contains(&p.currency))
        });
        let (eligible, haircut, collateral_value) = match rule {
            Some(r) => (true, r.haircut, (market_value as f64 * (1.0 - r.haircut)).floor() as i64),
            None => (false, 1.0, 0),
        };
        out.push(ValuedPosition {
            instrument: p.instrument.clone(),
            market_value,
            eligible,
            haircut,
            collateral_value,
        });
    }
    Ok(CollateralValuation {
        base_currency: base_currency.to_string(),
        total_market_value: out.iter().map(|p| p.market_value).sum(),
        total_collateral_value: out.iter().map(|p| p.collateral_value).sum(),
        positions: out,
    })
}
