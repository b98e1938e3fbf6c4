//! The rows of the portfolio book as imported (`fiscus import portfolios|lots|positions|cash`), and the
//! parsing rules their cells follow.
//!
//! A portfolio is named by a code and holds tax lots and cash. Its *positions* are not stored apart: a
//! position is the sum of the open lots of one instrument, so the two can never disagree. A `positions`
//! file (a custodian's holdings with their cost basis, no lot detail) opens one lot per row, acquired on
//! the row's `as_of` date, which is the earliest acquisition date the file proves.

use fiscus_domain::money::Currency;

/// Quantity units per share (the engine's `MICROS_PER_UNIT`).
pub const MICROS_PER_UNIT: i64 = 1_000_000;

/// The largest quantity a lot may hold, in micro-units: 2^53 − 1, so every quantity is exact in JSON.
pub const MAX_QUANTITY_MICROS: i64 = (1 << 53) - 1;

/// A portfolio: its code (the book's natural key), name, base currency (what it is valued in) and,
/// optionally, the benchmark it is compared with.
#[derive(Clone, Debug, PartialEq)]
pub struct PortfolioRecord {
    pub code: String,
    pub name: String,
    pub base_currency: Currency,
    pub benchmark_symbol: Option<String>,
}

/// A tax lot: `quantity_micros` of `symbol` acquired on `acquired` for `cost_minor` in `currency` (the
/// total cost basis of the lot, fees included).
#[derive(Clone, Debug, PartialEq)]
pub struct LotRecord {
    pub portfolio: String,
    pub lot: String,
    pub symbol: String,
    pub acquired: String,
    pub quantity_micros: i64,
    pub cost_minor: i64,
    pub currency: Currency,
}

/// A cash movement of a portfolio (an opening balance is a movement too): `amount_minor` signed, in
/// `currency`. A portfolio's cash in a currency is the sum of its movements.
#[derive(Clone, Debug, PartialEq)]
pub struct CashRecord {
    pub portfolio: String,
    pub entry: String,
    pub date: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub description: String,
}

/// Where a lot came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LotOrigin {
    /// A `lots` import.
    Lot,
    /// A `positions` import (one lot per holding, acquired on the file's `as_of`).
    Position,
    /// A settled investment order.
    Trade,
}

impl LotOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            LotOrigin::Lot => "lot",
            LotOrigin::Position => "position",
            LotOrigin::Trade => "trade",
        }
    }

    pub fn parse(s: &str) -> Option<LotOrigin> {
        [LotOrigin::Lot, LotOrigin::Position, LotOrigin::Trade].into_iter().find(|o| o.as_str() == s)
    }
}

/// The lot a `positions` row opens is named after its instrument and date, so importing the same holding
/// again finds it.
pub fn position_lot(symbol: &str, as_of: &str) -> String {
    format!("position-{symbol}-{as_of}")
}

/// A quantity of units (`100`, `12.5`, `0.000001`) as exact micro-units: above zero, at most six decimals,
/// at most 2^53 − 1 micro-units.
pub fn quantity_micros(s: &str) -> Result<i64, String> {
    let clip: String = s.chars().take(40).collect();
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (s.contains('.') && frac.is_empty()) || int.len() > 16 {
        return Err(format!("`{clip}` is not a quantity (units, up to six decimals)"));
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > 6 {
        return Err(format!("`{clip}` has more than six decimals"));
    }
    let scaled = format!("{int}{frac:0<6}");
    let micros: i64 = scaled.parse().map_err(|_| format!("`{clip}` is too large"))?;
    if micros == 0 {
        return Err(format!("`{clip}` must be above zero"));
    }
    if micros > MAX_QUANTITY_MICROS {
        return Err(format!("`{clip}` is too large"));
    }
    Ok(micros)
}

/// Micro-units as the decimal text of units (`12500000` → `12.5`), the form the API serves.
pub fn quantity_text(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let (int, frac) = (m / MICROS_PER_UNIT as u64, m % MICROS_PER_UNIT as u64);
    if frac == 0 {
        format!("{sign}{int}")
    } else {
        let f = format!("{frac:06}");
        format!("{sign}{int}.{}", f.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_exact_micro_units() {
        assert_eq!(quantity_micros("100"), Ok(100_000_000));
        assert_eq!(quantity_micros("12.5"), Ok(12_500_000));
        assert_eq!(quantity_micros("0.000001"), Ok(1));
        assert_eq!(quantity_micros("1.2500000"), Ok(1_250_000));
        for bad in ["0", "0.0", "-1", "1.", ".5", "1e3", "1.0000001", "", "1,5", "99999999999999999"] {
            assert!(quantity_micros(bad).is_err(), "{bad}");
        }
        for q in [1, 12_500_000, 100_000_000, MAX_QUANTITY_MICROS] {
            assert_eq!(quantity_micros(&quantity_text(q)), Ok(q));
        }
        assert_eq!(quantity_text(-2_500_000), "-2.5");
    }

    #[test]
    fn lot_origins_round_trip() {
        for o in [LotOrigin::Lot, LotOrigin::Position, LotOrigin::Trade] {
            assert_eq!(LotOrigin::parse(o.as_str()), Some(o));
        }
        assert_eq!(LotOrigin::parse("gift"), None);
    }
}
