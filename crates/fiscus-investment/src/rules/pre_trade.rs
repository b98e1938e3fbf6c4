//! The pre-trade checks an investment order requires, decided from facts the application gathers from the
//! book: no sale beyond what is held and buys paid from cash and the sales' proceeds (`limits`), no buy of a
//! restricted instrument (`restricted_list`), and no holding above 25 % after the trades (`concentration`).
//! Each decision carries the facts it was made on, which become the check's evidence. A fact that cannot
//! be read (an unparsable quantity) counts against the order, never for it.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::rules::model_portfolio::{ModelHolding, Order, Side, WEIGHT_UNIT};
use fiscus_data_core::book::quantity_micros;

/// The checks an investment order requires before execution, by key.
pub const CHECKS: [&str; 3] = ["pre_trade.limits", "pre_trade.restricted_list", "pre_trade.concentration"];

/// The most one holding may weigh after the trades (parts per million).
pub const MAX_WEIGHT_PPM: i64 = 250_000;

/// What the checks are decided on.
pub struct Facts<'a> {
    pub orders: &'a [Order],
    /// Micro-units held now, by symbol.
    pub held: &'a HashMap<String, i64>,
    /// Cash in the orders' currency, minor units.
    pub cash_minor: i64,
    /// The workspace's restricted list: (symbol, reason).
    pub restricted: &'a [(String, String)],
    /// The model portfolio the orders move onto: a member with no order is already at its weight.
    pub targets: &'a [ModelHolding],
}

/// One check decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Decided {
    pub key: &'static str,
    pub passed: bool,
    pub facts: Value,
}

pub fn evaluate(f: &Facts<'_>) -> [Decided; 3] {
    let of = |side: Side| f.orders.iter().filter(move |o| o.side == side);
    let oversold: Vec<&str> = of(Side::Sell)
        .filter(|o| quantity_micros(&o.quantity).unwrap_or(i64::MAX) > f.held.get(&o.symbol).copied().unwrap_or(0))
        .map(|o| o.symbol.as_str())
        .collect();
    let sells: i64 = of(Side::Sell).map(|o| o.notional_minor).sum();
    let buys: i64 = of(Side::Buy).map(|o| o.notional_minor).sum();
    let funded = buys <= f.cash_minor.saturating_add(sells);
    let restricted: Vec<Value> = f
        .restricted
        .iter()
        .filter(|(s, _)| of(Side::Buy).any(|o| &o.symbol == s))
        .map(|(s, r)| json!({ "symbol": s, "reason": r }))
        .collect();
    // After the trades: a traded holding weighs what its order leaves; a model member with no order is
    // already at its target weight (a holding the model leaves out is always sold).
    let after: Vec<(&str, i64)> = f
        .orders
        .iter()
        .map(|o| (o.symbol.as_str(), o.weight_after_ppm))
        .chain(
            f.targets
                .iter()
                .filter(|t| !f.orders.iter().any(|o| o.symbol == t.symbol))
                .map(|t| (t.symbol.as_str(), t.weight_ppm)),
        )
        .collect();
    let heavy: Vec<&str> = after.iter().filter(|(_, w)| *w > MAX_WEIGHT_PPM).map(|(s, _)| *s).collect();
    [
        Decided {
            key: CHECKS[0],
            passed: oversold.is_empty() && funded,
            facts: json!({ "oversold": oversold, "buys_minor": buys, "sells_minor": sells, "cash_minor": f.cash_minor, "funded": funded }),
        },
        Decided {
            key: CHECKS[1],
            passed: restricted.is_empty(),
            facts: json!({ "restricted_list_size": f.restricted.len(), "restricted_buys": restricted }),
        },
        Decided {
            key: CHECKS[2],
            passed: heavy.is_empty(),
            facts: json!({
                "limit_ppm": MAX_WEIGHT_PPM, "unit_ppm": WEIGHT_UNIT,
                "largest_after_ppm": after.iter().map(|(_, w)| *w).max().unwrap_or(0),
                "above_limit": heavy,
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(symbol: &str, side: Side, quantity: &str, notional: i64, after: i64) -> Order {
        Order {
            symbol: symbol.into(),
            side,
            quantity: quantity.into(),
            price_minor: 100,
            notional_minor: notional,
            weight_before_ppm: 0,
            weight_after_ppm: after,
        }
    }

    #[test]
    fn oversales_unfunded_buys_restricted_buys_and_heavy_holdings_fail() {
        let held = HashMap::from([("A".to_string(), 10_000_000)]);
        let targets = vec![ModelHolding { symbol: "C".into(), relevance: "0.9".into(), weight_ppm: 300_000 }];
        let restricted = vec![("B".to_string(), "wall-crossed".to_string())];
        let orders = [order("A", Side::Sell, "5", 500, 0), order("B", Side::Buy, "1", 400, 200_000)];
        let facts = Facts { orders: &orders, held: &held, cash_minor: 0, restricted: &[], targets: &[] };
        assert!(evaluate(&facts).iter().all(|d| d.passed));
        // A model member already at 30 % and not traded is still too heavy: concentration fails.
        let f = Facts { targets: &targets, ..facts };
        assert!(!evaluate(&f)[2].passed);
        let f = Facts { restricted: &restricted, targets: &[], ..f };
        assert!(!evaluate(&f)[1].passed);
        let oversold = [order("A", Side::Sell, "11", 500, 0)];
        let unreadable = [order("A", Side::Sell, "lots", 500, 0)];
        let unfunded = [order("B", Side::Buy, "1", 400, 0)];
        for orders in [&oversold[..], &unreadable[..], &unfunded[..]] {
            let f = Facts { orders, held: &held, cash_minor: 0, restricted: &[], targets: &[] };
            assert!(!evaluate(&f)[0].passed, "{orders:?}");
        }
    }
}
