//! The typed rows of each kind of import, as checked and stored, and the rules that span rows (a key once
//! per file, journals that balance).
//!
//! Every value here has already been parsed (`values`): dates are `YYYY-MM-DD`, decimals are the shortest
//! text of their double, amounts are minor units of a known currency.

use fiscus_domain::money::Currency;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct InstrumentRecord {
    pub symbol: String,
    pub name: String,
    /// `equity`, `etf`, `index`, `fund`, `bond`, `commodity`, `fx`, `crypto`
    pub asset_class: String,
    pub currency: Currency,
    pub exchange: String,
    pub country: String,
    pub sector: String,
    pub isin: String,
}

/// The asset classes an instrument may have.
pub const ASSET_CLASSES: [&str; 8] = ["equity", "etf", "index", "fund", "bond", "commodity", "fx", "crypto"];

/// One day's bar. A file of adjusted closes only has `adj_close`; an OHLCV file has all of them. At least
/// one of `close` and `adj_close` is present, and `low ≤ open, close ≤ high` when they are.
#[derive(Clone, Debug, PartialEq)]
pub struct PriceRecord {
    pub symbol: String,
    pub date: String,
    pub open: Option<String>,
    pub high: Option<String>,
    pub low: Option<String>,
    pub close: Option<String>,
    pub adj_close: Option<String>,
    pub volume: Option<String>,
}

impl PriceRecord {
    /// The bar's own consistency; the message names the field that is wrong.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.close.is_none() && self.adj_close.is_none() {
            return Err(("close", String::from("a bar needs a close or an adjusted close")));
        }
        let v = |s: &Option<String>| s.as_deref().and_then(|s| s.parse::<f64>().ok());
        if let (Some(low), Some(high)) = (v(&self.low), v(&self.high)) {
            if low > high {
                return Err(("low", format!("low {low} is above high {high}")));
            }
            for (name, x) in [("open", v(&self.open)), ("close", v(&self.close))] {
                if let Some(x) = x
                    && (x < low || x > high)
                {
                    return Err((name, format!("{name} {x} is outside the day's range {low}..{high}")));
                }
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CorporateActionType {
    Split,
    CashDividend,
}

impl CorporateActionType {
    pub fn as_str(self) -> &'static str {
        match self {
            CorporateActionType::Split => "split",
            CorporateActionType::CashDividend => "cash_dividend",
        }
    }

    pub fn parse(s: &str) -> Option<CorporateActionType> {
        match s {
            "split" => Some(CorporateActionType::Split),
            "cash_dividend" | "dividend" => Some(CorporateActionType::CashDividend),
            _ => None,
        }
    }
}

/// A split (`ratio` new shares for `1`, e.g. `4` for a 4-for-1, `0.5` for a 1-for-2 reverse split) or a
/// cash dividend (`amount` per share in `currency`).
#[derive(Clone, Debug, PartialEq)]
pub struct CorporateActionRecord {
    pub symbol: String,
    pub action: CorporateActionType,
    pub ex_date: String,
    pub pay_date: Option<String>,
    pub ratio: Option<String>,
    pub amount: Option<String>,
    pub currency: Option<Currency>,
}

/// One reported figure: `metric` (e.g. `revenue`, `net_income`, `eps_diluted`) for the period ending
/// `period_end`, `fiscal_period` `FY`, `Q1`..`Q4` or `TTM`; `currency` for money, none for ratios and counts.
#[derive(Clone, Debug, PartialEq)]
pub struct FundamentalRecord {
    pub symbol: String,
    pub period_end: String,
    pub fiscal_period: String,
    pub metric: String,
    pub value: String,
    pub currency: Option<Currency>,
}

pub const FISCAL_PERIODS: [&str; 6] = ["FY", "Q1", "Q2", "Q3", "Q4", "TTM"];

/// One observation of an economic series.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservationRecord {
    pub key: String,
    pub date: String,
    pub value: String,
}

/// A general ledger: the book journals are posted to, in its base currency.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerRecord {
    pub code: String,
    pub name: String,
    pub currency: Currency,
}

/// A legal entity posting to a general ledger.
#[derive(Clone, Debug, PartialEq)]
pub struct EntityRecord {
    pub code: String,
    pub name: String,
    /// `active` or `inactive`
    pub status: String,
    pub ledger: String,
    pub currency: Currency,
    pub country: String,
}

pub const ENTITY_STATUSES: [&str; 2] = ["active", "inactive"];

/// One line of a journal entry; the lines of one `entry` make a journal.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalLineRecord {
    pub entry: String,
    pub date: String,
    pub ledger: String,
    pub entity: String,
    pub account: String,
    pub description: String,
    pub debit_minor: i64,
    pub credit_minor: i64,
    pub currency: Currency,
}

/// A booked bank transaction: `amount_minor` is signed (credit to the account positive).
#[derive(Clone, Debug, PartialEq)]
pub struct TransactionRecord {
    pub account: String,
    pub external_id: String,
    pub booking_date: String,
    pub value_date: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub counterparty: String,
    pub description: String,
    pub reference: String,
}

/// A balance of an account on a date, with the ISO 20022 (camt.053) balance type it reports.
#[derive(Clone, Debug, PartialEq)]
pub struct BalanceRecord {
    pub account: String,
    pub date: String,
    pub balance_type: String,
    pub amount_minor: i64,
    pub currency: Currency,
}

/// ISO 20022 balance type codes, as snake case: OPBD, CLBD, OPAV, CLAV, ITBD.
pub const BALANCE_TYPES: [&str; 5] =
    ["opening_booked", "closing_booked", "opening_available", "closing_available", "interim_booked"];

/// A journal entry whose debits and credits differ in one currency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unbalanced {
    pub entry: String,
    pub currency: &'static str,
    pub debits_minor: i64,
    pub credits_minor: i64,
}

/// Entries whose debits do not equal their credits in some currency, in minor units (each entry is judged
/// per currency: a multi-currency entry must balance in every one of them). Sums are checked; an overflow
/// is reported as unbalanced rather than wrapped.
pub fn unbalanced(lines: &[JournalLineRecord]) -> Vec<Unbalanced> {
    // (entry, currency) → (debits, credits); `None` once a sum overflowed.
    type Sums<'a> = BTreeMap<(&'a str, &'static str), (Option<i64>, Option<i64>)>;
    let mut sums: Sums<'_> = BTreeMap::new();
    for l in lines {
        let e = sums.entry((l.entry.as_str(), l.currency.code())).or_insert((Some(0), Some(0)));
        e.0 = e.0.and_then(|d| d.checked_add(l.debit_minor));
        e.1 = e.1.and_then(|c| c.checked_add(l.credit_minor));
    }
    sums.into_iter()
        .filter(|(_, (d, c))| d.is_none() || c.is_none() || d != c)
        .map(|((entry, currency), (d, c))| Unbalanced {
            entry: entry.to_string(),
            currency,
            debits_minor: d.unwrap_or(i64::MAX),
            credits_minor: c.unwrap_or(i64::MAX),
        })
        .collect()
}

/// The fingerprint of a ledger-kind row: `sha256:` of its imported values as an RFC 8785 JSON array. Two
/// imports of the same row have the same fingerprint; a changed row does not.
pub fn fingerprint(values: &[&str]) -> String {
    let array = serde_json::Value::Array(values.iter().map(|v| serde_json::Value::String((*v).to_string())).collect());
    fiscus_domain::evidence::seal(&array).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(entry: &str, currency: &str, debit: i64, credit: i64) -> JournalLineRecord {
        JournalLineRecord {
            entry: entry.into(),
            date: "2024-01-31".into(),
            ledger: "GL1".into(),
            entity: "E1".into(),
            account: "1000".into(),
            description: String::new(),
            debit_minor: debit,
            credit_minor: credit,
            currency: Currency::parse(currency).expect("currency"),
        }
    }

    #[test]
    fn journals_balance_per_entry_and_currency() {
        let ok =
            [line("J1", "USD", 100, 0), line("J1", "USD", 0, 100), line("J2", "EUR", 5, 0), line("J2", "EUR", 0, 5)];
        assert!(unbalanced(&ok).is_empty());
        // Balanced in total, not per currency.
        let mixed = [line("J1", "USD", 100, 0), line("J1", "EUR", 0, 100)];
        assert_eq!(unbalanced(&mixed).len(), 2);
        let off = [line("J1", "USD", 100, 0), line("J1", "USD", 0, 99)];
        assert_eq!(
            unbalanced(&off),
            vec![Unbalanced { entry: "J1".into(), currency: "USD", debits_minor: 100, credits_minor: 99 }]
        );
    }

    #[test]
    fn a_bar_outside_its_range_is_refused() {
        let mut bar = PriceRecord {
            symbol: "SPX".into(),
            date: "1999-01-04".into(),
            open: Some("1229.22998".into()),
            high: Some("1248.810059".into()),
            low: Some("1219.099976".into()),
            close: Some("1228.099976".into()),
            adj_close: Some("1228.099976".into()),
            volume: Some("877000000".into()),
        };
        assert!(bar.check().is_ok());
        bar.close = Some("1300".into());
        assert_eq!(bar.check().map_err(|e| e.0), Err("close"));
        bar.close = None;
        bar.adj_close = None;
        assert_eq!(bar.check().map_err(|e| e.0), Err("close"));
    }
}
