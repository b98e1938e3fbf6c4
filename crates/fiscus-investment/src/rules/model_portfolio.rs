//! Model portfolios drawn from a thematic universe, and the rebalance that would move a portfolio onto one.
//!
//! A model portfolio is a draft until a person approves it: created `approval_required` with the hash of
//! its content, decided once at the console (`approved` or `rejected`), never edited. Its weights are
//! integer parts per million that sum to exactly 1,000,000 (largest remainder), so the hashed content is
//! exact and any two computations agree to the last digit.

use serde::{Deserialize, Serialize};

/// Parts per million: the unit of a model weight.
pub const WEIGHT_UNIT: i64 = 1_000_000;

/// The most members a model portfolio may hold.
pub const MAX_LIMIT: i64 = 500;

/// How members are weighted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// In proportion to the research relevance score.
    Relevance,
    /// Equally.
    Equal,
}

impl Weighting {
    pub fn as_str(self) -> &'static str {
        match self {
            Weighting::Relevance => "relevance",
            Weighting::Equal => "equal",
        }
    }

    pub fn parse(s: &str) -> Option<Weighting> {
        [Weighting::Relevance, Weighting::Equal].into_iter().find(|w| w.as_str() == s)
    }
}

/// Where a model portfolio stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    /// A draft: nothing may use it until a person approves it.
    ApprovalRequired,
    Approved,
    Rejected,
}

impl ModelState {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelState::ApprovalRequired => "approval_required",
            ModelState::Approved => "approved",
            ModelState::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<ModelState> {
        [ModelState::ApprovalRequired, ModelState::Approved, ModelState::Rejected].into_iter().find(|m| m.as_str() == s)
    }
}

/// A person's decision on a draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelDecision {
    Approve,
    Reject,
}

/// Why a decision was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelRefusal {
    /// Only a draft awaiting approval can be decided; the state it is in.
    NotAwaitingDecision(ModelState),
}

impl ModelRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            ModelRefusal::NotAwaitingDecision(_) => "not_awaiting_decision",
        }
    }
}

impl std::fmt::Display for ModelRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelRefusal::NotAwaitingDecision(s) => {
                write!(f, "the model portfolio is {}; only a draft awaiting approval is decided", s.as_str())
            }
        }
    }
}

/// The state a decision moves a model portfolio to.
pub fn decide(state: ModelState, decision: ModelDecision) -> Result<ModelState, ModelRefusal> {
    match (state, decision) {
        (ModelState::ApprovalRequired, ModelDecision::Approve) => Ok(ModelState::Approved),
        (ModelState::ApprovalRequired, ModelDecision::Reject) => Ok(ModelState::Rejected),
        (other, _) => Err(ModelRefusal::NotAwaitingDecision(other)),
    }
}

/// A universe member as research handed it off.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub symbol: String,
    /// Relevance score, 0 to 1.
    pub relevance: f64,
}

/// A member of a model portfolio.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ModelHolding {
    pub symbol: String,
    /// The relevance score it was chosen on (decimal text as handed off).
    pub relevance: String,
    /// Weight in parts per million (the holdings' weights sum to exactly 1,000,000).
    pub weight_ppm: i64,
}

/// Picks the `limit` most relevant members (ties by symbol) and weights them. `None` when no member can be
/// weighted (an empty universe, or relevance weighting with no positive score).
pub fn construct(members: &[Candidate], limit: usize, weighting: Weighting) -> Option<Vec<(String, f64, i64)>> {
    let mut ranked: Vec<&Candidate> = members.iter().filter(|m| m.relevance.is_finite()).collect();
    ranked.sort_by(|a, b| b.relevance.total_cmp(&a.relevance).then(a.symbol.cmp(&b.symbol)));
    let chosen: Vec<&Candidate> =
        ranked.into_iter().filter(|m| weighting == Weighting::Equal || m.relevance > 0.0).take(limit).collect();
    if chosen.is_empty() {
        return None;
    }
    let scores: Vec<f64> = match weighting {
        Weighting::Equal => vec![1.0; chosen.len()],
        Weighting::Relevance => chosen.iter().map(|m| m.relevance).collect(),
    };
    let weights = largest_remainder(&scores, WEIGHT_UNIT);
    Some(chosen.iter().zip(weights).map(|(m, w)| (m.symbol.clone(), m.relevance, w)).collect())
}

/// Integer shares of `total` in proportion to `scores` (all positive), summing to exactly `total`: each
/// gets its floor, then the largest remainders one more unit (ties to the earlier one).
pub fn largest_remainder(scores: &[f64], total: i64) -> Vec<i64> {
    let sum: f64 = scores.iter().sum();
    let exact: Vec<f64> = scores.iter().map(|s| s / sum * total as f64).collect();
    let mut out: Vec<i64> = exact.iter().map(|e| e.floor() as i64).collect();
    let mut left = total - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    for i in order.into_iter().cycle() {
        if left <= 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}

/// A holding of the portfolio to rebalance, in its base currency.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub symbol: String,
    pub quantity_micros: i64,
    /// Price per whole unit, minor units of the base currency.
    pub price_minor: i64,
}

/// Which way an order trades.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        }
    }
}

/// One order of a rebalance proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Order {
    pub symbol: String,
    pub side: Side,
    /// Whole units (decimal text).
    pub quantity: String,
    /// Price used, minor units per unit.
    pub price_minor: i64,
    /// Quantity × price, minor units.
    pub notional_minor: i64,
    /// Weight before and after, parts per million of the portfolio's value (holdings and cash).
    pub weight_before_ppm: i64,
    pub weight_after_ppm: i64,
}

/// The orders that move holdings onto target weights (whole units, rounded toward zero so a buy never
/// spends past the target), with the portfolio's value (holdings at their prices plus `cash_minor`).
/// A holding absent from the targets is sold whole.
pub fn rebalance(held: &[Held], targets: &[(String, i64, i64)], cash_minor: i64) -> (Vec<Order>, i64) {
    let value_of = |q: i64, p: i64| (i128::from(q) * i128::from(p) / 1_000_000) as i64;
    let holdings: i64 = held.iter().map(|h| value_of(h.quantity_micros, h.price_minor)).sum();
    let nav = holdings + cash_minor;
    let mut symbols: Vec<&str> =
        held.iter().map(|h| h.symbol.as_str()).chain(targets.iter().map(|t| t.0.as_str())).collect();
    symbols.sort_unstable();
    symbols.dedup();
    let mut orders = Vec::new();
    if nav <= 0 {
        return (orders, nav);
    }
    let ppm = |v: i64| (i128::from(v) * i128::from(WEIGHT_UNIT) / i128::from(nav)) as i64;
    for s in symbols {
        let h = held.iter().find(|h| h.symbol == s);
        let t = targets.iter().find(|t| t.0 == s);
        let price = t.map(|t| t.2).or(h.map(|h| h.price_minor)).unwrap_or(0);
        if price <= 0 {
            continue;
        }
        let current_units = h.map_or(0, |h| h.quantity_micros / 1_000_000);
        let current_micros = h.map_or(0, |h| h.quantity_micros);
        let target_value = t.map_or(0, |t| (i128::from(nav) * i128::from(t.1) / i128::from(WEIGHT_UNIT)) as i64);
        let target_units = target_value / price;
        let units = match t {
            // Sold whole, fractions included, when the model does not hold it.
            None => -current_micros,
            Some(_) => (target_units - current_units) * 1_000_000,
        };
        if units == 0 {
            continue;
        }
        let notional = value_of(units.abs(), price);
        let before = value_of(current_micros, price);
        let after = value_of(current_micros + units, price);
        orders.push(Order {
            symbol: s.to_string(),
            side: if units > 0 { Side::Buy } else { Side::Sell },
            quantity: fiscus_data_core::book::quantity_text(units.abs()),
            price_minor: price,
            notional_minor: notional,
            weight_before_ppm: ppm(before),
            weight_after_ppm: ppm(after),
        });
    }
    (orders, nav)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(symbol: &str, relevance: f64) -> Candidate {
        Candidate { symbol: symbol.into(), relevance }
    }

    #[test]
    fn weights_sum_exactly_and_follow_relevance_or_equality() {
        let members = [c("A", 0.9), c("B", 0.6), c("C", 0.3), c("D", 0.0), c("E", 0.3)];
        let r = construct(&members, 3, Weighting::Relevance).expect("weights");
        assert_eq!(r.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["A", "B", "C"]);
        assert_eq!(r.iter().map(|x| x.2).sum::<i64>(), WEIGHT_UNIT);
        assert_eq!(r[0].2, 500_000);
        let e = construct(&members, 3, Weighting::Equal).expect("weights");
        assert_eq!(e.iter().map(|x| x.2).collect::<Vec<_>>(), [333_334, 333_333, 333_333]);
        // Zero relevance is never chosen for relevance weighting.
        assert_eq!(construct(&members, 10, Weighting::Relevance).expect("w").len(), 4);
        assert!(construct(&[c("Z", 0.0)], 5, Weighting::Relevance).is_none());
        assert!(construct(&[], 5, Weighting::Equal).is_none());
    }

    #[test]
    fn only_a_draft_is_decided() {
        assert_eq!(decide(ModelState::ApprovalRequired, ModelDecision::Approve), Ok(ModelState::Approved));
        assert_eq!(decide(ModelState::ApprovalRequired, ModelDecision::Reject), Ok(ModelState::Rejected));
        assert!(decide(ModelState::Approved, ModelDecision::Reject).is_err());
        for s in [ModelState::ApprovalRequired, ModelState::Approved, ModelState::Rejected] {
            assert_eq!(ModelState::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn a_rebalance_moves_onto_the_targets_in_whole_units() {
        // 10 A at 100.00 and 1,000.00 cash: value 2,000.00; target 50 % A, 50 % B at 50.00.
        let held = [Held { symbol: "A".into(), quantity_micros: 10_000_000, price_minor: 10_000 }];
        let targets = [("A".to_string(), 500_000, 10_000), ("B".to_string(), 500_000, 5_000)];
        let (orders, nav) = rebalance(&held, &targets, 100_000);
        assert_eq!(nav, 200_000);
        assert_eq!(orders.len(), 1, "A is on target already");
        assert_eq!((orders[0].symbol.as_str(), orders[0].side, orders[0].quantity.as_str()), ("B", Side::Buy, "20"));
        assert_eq!(orders[0].notional_minor, 100_000);
        // A holding the model leaves out is sold whole.
        let (orders, _) = rebalance(&held, &[("B".to_string(), 1_000_000, 5_000)], 0);
        assert_eq!(
            orders.iter().map(|o| (o.symbol.as_str(), o.side)).collect::<Vec<_>>(),
            [("A", Side::Sell), ("B", Side::Buy)]
        );
    }
}
