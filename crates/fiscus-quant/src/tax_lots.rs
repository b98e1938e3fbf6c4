//! Tax lots: relieving a sale against lots (FIFO, LIFO, HIFO or specific lots), realised and unrealised
//! gains split into short and long term, and loss-harvest candidates that respect the 30-day wash-sale
//! window.
//!
//! Units: money is `i64` minor units (cents) and quantities are `i64` micro-units (1 share = 1,000,000), so
//! relief is exact and repeatable — no float drift in cost basis. When part of a lot (or of a sale's
//! proceeds) is allocated, the amount is rounded half-even in proportion to quantity, and the last piece
//! takes whatever remains, so pieces always sum to the whole.
//!
//! Holding period: long term when the sale date is after the first anniversary of acquisition (held more
//! than one year); an acquisition on 29 February has its anniversary on 28 February.

use crate::calendar::Date;
use crate::error::{QuantError, Result};

/// Quantity units per share.
pub const MICROS_PER_UNIT: i64 = 1_000_000;

/// An open lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lot {
    pub id: u64,
    pub acquired: Date,
    /// Micro-units held.
    pub quantity: i64,
    /// Total cost basis of `quantity`, minor units.
    pub cost: i64,
}

/// How a sale picks its lots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReliefMethod {
    Fifo,
    Lifo,
    /// Highest cost per unit first (ties: earliest acquired).
    Hifo,
    /// Exactly these (lot id, micro-units) pieces, which must add up to the sale quantity.
    Specific(Vec<(u64, i64)>),
}

/// A sale to relieve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sale {
    pub date: Date,
    /// Micro-units sold.
    pub quantity: i64,
    /// Total net proceeds, minor units.
    pub proceeds: i64,
}

/// Short or long term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Short,
    Long,
}

/// The part of one lot a sale closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealisedPiece {
    pub lot_id: u64,
    pub acquired: Date,
    pub quantity: i64,
    pub cost: i64,
    pub proceeds: i64,
    pub gain: i64,
    pub term: Term,
}

/// The outcome of relieving one sale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relief {
    pub realised: Vec<RealisedPiece>,
    /// Lots still open afterwards (fully closed lots removed).
    pub remaining: Vec<Lot>,
    pub short_term_gain: i64,
    pub long_term_gain: i64,
}

/// The holding-period classification of a lot sold on `sold`.
pub fn term(acquired: Date, sold: Date) -> Term {
    if sold > acquired.one_year_later() { Term::Long } else { Term::Short }
}

/// Relieves `sale` against `lots` (only lots acquired on or before the sale date are eligible).
pub fn relieve(lots: &[Lot], sale: &Sale, method: &ReliefMethod) -> Result<Relief> {
    check_lots(lots)?;
    if sale.quantity <= 0 {
        return Err(QuantError::InvalidParameter { name: "sale.quantity", reason: "must be > 0".into() });
    }
    if sale.proceeds < 0 {
        return Err(QuantError::InvalidParameter { name: "sale.proceeds", reason: "must be >= 0".into() });
    }
    let eligible: Vec<usize> = (0..lots.len()).filter(|&i| lots[i].acquired <= sale.date).collect();
    // Summed in 128 bits: lots near i64::MAX must not overflow the check that guards the relief.
    let held: i128 = eligible.iter().map(|&i| i128::from(lots[i].quantity)).sum();
    if held < i128::from(sale.quantity) {
        return Err(QuantError::Rejected(format!(
            "sale of {} micro-units exceeds the {held} held on the sale date",
            sale.quantity
        )));
    }
    // The plan: (lot index, micro-units) in relief order.
    let plan: Vec<(usize, i64)> = match method {
        ReliefMethod::Specific(pieces) => {
            let mut plan = Vec::new();
            let mut taken = std::collections::HashMap::new();
            for &(id, q) in pieces {
                let Some(&i) = eligible.iter().find(|&&i| lots[i].id == id) else {
                    return Err(QuantError::Rejected(format!("lot {id} is not open on the sale date")));
                };
                let t = taken.entry(id).or_insert(0_i128);
                *t += i128::from(q);
                if q <= 0 || *t > i128::from(lots[i].quantity) {
                    return Err(QuantError::Rejected(format!("lot {id} cannot supply {q} micro-units")));
                }
                plan.push((i, q));
            }
            let total: i128 = pieces.iter().map(|p| i128::from(p.1)).sum();
            if total != i128::from(sale.quantity) {
                return Err(QuantError::Rejected(format!(
                    "specific lots add up to {total} micro-units, the sale is {}",
                    sale.quantity
                )));
            }
            plan
        }
        ordered => {
            let mut order = eligible.clone();
            match ordered {
                ReliefMethod::Fifo => order.sort_by_key(|&i| (lots[i].acquired, lots[i].id)),
                ReliefMethod::Lifo => {
                    order.sort_by_key(|&i| (std::cmp::Reverse(lots[i].acquired), std::cmp::Reverse(lots[i].id)))
                }
                _ => order.sort_by(|&a, &b| {
                    // cost_a/qty_a > cost_b/qty_b without division.
                    let lhs = i128::from(lots[a].cost) * i128::from(lots[b].quantity);
                    let rhs = i128::from(lots[b].cost) * i128::from(lots[a].quantity);
                    rhs.cmp(&lhs).then(lots[a].acquired.cmp(&lots[b].acquired)).then(lots[a].id.cmp(&lots[b].id))
                }),
            }
            let mut left = sale.quantity;
            let mut plan = Vec::new();
            for i in order {
                if left == 0 {
                    break;
                }
                let q = left.min(lots[i].quantity);
                plan.push((i, q));
                left -= q;
            }
            plan
        }
    };

    let mut remaining: Vec<Lot> = lots.to_vec();
    let mut realised = Vec::with_capacity(plan.len());
    let mut proceeds_left = sale.proceeds;
    let mut qty_left = sale.quantity;
    for &(i, q) in &plan {
        let lot = &mut remaining[i];
        let cost = if q == lot.quantity { lot.cost } else { pro_rata(lot.cost, q, lot.quantity) };
        let proceeds = if q == qty_left { proceeds_left } else { pro_rata(proceeds_left, q, qty_left) };
        lot.quantity -= q;
        lot.cost -= cost;
        proceeds_left -= proceeds;
        qty_left -= q;
        realised.push(RealisedPiece {
            lot_id: lot.id,
            acquired: lot.acquired,
            quantity: q,
            cost,
            proceeds,
            gain: proceeds.saturating_sub(cost),
            term: term(lot.acquired, sale.date),
        });
    }
    remaining.retain(|l| l.quantity > 0);
    let sum = |t: Term| realised.iter().filter(|p| p.term == t).fold(0_i64, |acc, p| acc.saturating_add(p.gain));
    Ok(Relief { short_term_gain: sum(Term::Short), long_term_gain: sum(Term::Long), realised, remaining })
}

/// An open lot marked to a price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnrealisedLot {
    pub lot_id: u64,
    pub market_value: i64,
    pub gain: i64,
    pub term: Term,
}

/// Unrealised gain of every lot at `price` (minor units per whole unit) on `date`.
pub fn unrealised(lots: &[Lot], price: i64, date: Date) -> Result<Vec<UnrealisedLot>> {
    check_lots(lots)?;
    if price < 0 {
        return Err(QuantError::InvalidParameter { name: "price", reason: "must be >= 0".into() });
    }
    Ok(lots
        .iter()
        .map(|l| {
            let market_value = pro_rata(price, l.quantity, MICROS_PER_UNIT);
            UnrealisedLot { lot_id: l.id, market_value, gain: market_value - l.cost, term: term(l.acquired, date) }
        })
        .collect())
}

/// A lot whose sale would realise a loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarvestCandidate {
    pub lot_id: u64,
    pub loss: i64,
    pub term: Term,
    /// The purchase inside the ±30-day window that would make the loss a wash sale, if any.
    pub wash_sale_conflict: Option<Date>,
    /// First date on which a sale would be clear of that purchase (the conflict + 31 days).
    pub clear_from: Option<Date>,
}

/// The days either side of a sale inside which a purchase of the same security washes the loss.
pub const WASH_SALE_WINDOW_DAYS: i32 = 30;

/// Lots showing a loss of at least `min_loss` at `price` on `date`. A candidate conflicts with a wash sale
/// when any OTHER lot was acquired, or any `planned_purchases` falls, within 30 days before or after
/// `date`; conflicting lots are returned too, flagged, because the caller may choose to wait.
pub fn harvest_candidates(
    lots: &[Lot],
    price: i64,
    date: Date,
    min_loss: i64,
    planned_purchases: &[Date],
) -> Result<Vec<HarvestCandidate>> {
    let marks = unrealised(lots, price, date)?;
    let mut out = Vec::new();
    for (lot, mark) in lots.iter().zip(&marks) {
        let loss = -mark.gain;
        if loss < min_loss.max(1) {
            continue;
        }
        let in_window = |d: Date| (date.days_until(d)).abs() <= WASH_SALE_WINDOW_DAYS;
        let conflict = lots
            .iter()
            .filter(|o| o.id != lot.id)
            .map(|o| o.acquired)
            .chain(planned_purchases.iter().copied())
            .filter(|d| in_window(*d))
            .max();
        out.push(HarvestCandidate {
            lot_id: lot.id,
            loss,
            term: mark.term,
            wash_sale_conflict: conflict,
            clear_from: conflict.map(|d| d.add_days(WASH_SALE_WINDOW_DAYS + 1)),
        });
    }
    out.sort_by(|a, b| b.loss.cmp(&a.loss).then(a.lot_id.cmp(&b.lot_id)));
    Ok(out)
}

/// `amount · part / whole` rounded half to even, in 128-bit so it cannot overflow.
fn pro_rata(amount: i64, part: i64, whole: i64) -> i64 {
    let num = i128::from(amount) * i128::from(part);
    let den = i128::from(whole);
    let q = num.div_euclid(den);
    let r = num.rem_euclid(den);
    let twice = 2 * r;
    let rounded = if twice > den || (twice == den && q % 2 != 0) { q + 1 } else { q };
    i64::try_from(rounded).unwrap_or(if rounded > 0 { i64::MAX } else { i64::MIN })
}

fn check_lots(lots: &[Lot]) -> Result<()> {
    for l in lots {
        if l.quantity <= 0 || l.cost < 0 {
            return Err(QuantError::InvalidParameter {
                name: "lots",
                reason: format!("lot {} needs a positive quantity and a non-negative cost", l.id),
            });
        }
    }
    let mut ids: Vec<u64> = lots.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return Err(QuantError::InvalidParameter { name: "lots", reason: "lot ids must be unique".into() });
    }
    Ok(())
}
