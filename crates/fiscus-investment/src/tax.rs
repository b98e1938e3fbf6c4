//! Tax lots marked to observed prices, and loss-harvest proposals. The lot arithmetic is the engine's
//! (`fiscus_quant::tax_lots`): holding period, unrealised gain, and the 30-day wash-sale window. A
//! proposal is never executable: it is a sealed record of what selling would realise, for a person to act
//! on through a Financial Action.

use std::collections::HashMap;

use crate::tables::investment_records::{Record, RecordKind};
use fiscus_data_core::book::quantity_text;
use fiscus_data_core::tables::book::OpenLot;
use fiscus_domain::money::{Currency, format_minor};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::calendar::Date;
use fiscus_quant::tax_lots::{self, Lot, Term};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::book::{self, Book, Mark};
use super::{invalid, is_date};
use fiscus_kernel::Services;
use fiscus_kernel::engine::refused_by_engine;
use fiscus_kernel::governed::{Caller, Failure};

/// An engine date from a `YYYY-MM-DD` the store or a checked request holds; anything else is an internal
/// error, never a default date.
pub(super) fn engine_date(s: &str) -> Result<Date, Failure> {
    let bad = || Failure::internal(format!("date `{s}`"));
    let iso = fiscus_data_core::rules::values::iso(s).ok_or_else(bad)?;
    let (y, m, d) = (iso[..4].parse::<i32>(), iso[5..7].parse::<u32>(), iso[8..].parse::<u32>());
    match (y, m, d) {
        (Ok(y), Ok(m), Ok(d)) => Date::from_ymd(y, m, d).map_err(|_| bad()),
        _ => Err(bad()),
    }
}

fn term_name(t: Term) -> &'static str {
    match t {
        Term::Short => "short",
        Term::Long => "long",
    }
}

/// One open lot, marked.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct MarkedLot {
    /// The lot's id in Fiscus (`tlt_…`).
    pub id: String,
    /// The lot's name in the book (as imported).
    pub lot: String,
    pub symbol: String,
    pub acquired: String,
    /// `lot`, `position` or `trade`: where the lot came from.
    pub origin: String,
    /// Units still open (decimal text, exact).
    #[schema(example = "150")]
    pub quantity: String,
    /// Units the lot opened with.
    pub original_quantity: String,
    pub currency: String,
    /// Cost basis of the open units, in minor units of `currency`.
    pub cost_minor: i64,
    pub market_value_minor: i64,
    /// Market value less cost basis (negative for a loss).
    pub unrealised_gain_minor: i64,
    /// `short` or `long`: sold on the valuation date, would the gain be long term (held more than a year)?
    pub term: String,
    /// Days from acquisition to the valuation date.
    pub holding_days: i64,
}

/// The mark a valuation used.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MarkView {
    pub symbol: String,
    /// The date of the observed bar.
    pub date: String,
    /// The observed price, as a decimal string.
    pub price: String,
    /// The price in minor units per unit, rounded half to even (what values are computed with).
    pub price_minor: i64,
    /// `close` or `adj_close`.
    pub field: String,
    /// The prices dataset (integer id).
    pub dataset: i64,
    /// The price is more than a week older than the valuation date (daily prices stopped).
    pub stale: bool,
}

impl From<&Mark> for MarkView {
    fn from(m: &Mark) -> MarkView {
        MarkView {
            symbol: m.symbol.clone(),
            date: m.date.clone(),
            price: m.price.clone(),
            price_minor: m.price_minor,
            stale: m.stale,
            field: m.field.to_string(),
            dataset: m.dataset,
        }
    }
}

/// A portfolio's open tax lots, marked.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct TaxLots {
    /// Always `tax_lots`.
    pub object: &'static str,
    pub portfolio_id: i64,
    pub portfolio_code: String,
    /// The valuation date: the one asked for, else the newest date any held instrument has a price.
    pub as_of: String,
    pub lots: Vec<MarkedLot>,
    pub marks: Vec<MarkView>,
}

fn engine_lot(i: usize, l: &OpenLot) -> Result<Lot, Failure> {
    Ok(Lot { id: i as u64, acquired: engine_date(&l.acquired)?, quantity: l.open_micros, cost: l.open_cost_minor })
}

/// Marks every open lot of `book` (lots acquired after the valuation date are left out: they were not
/// held then).
async fn marked(services: &Services, tenant: &Tenant, book: &Book, as_of: Option<&str>) -> Result<TaxLots, Failure> {
    let on = book::book_date(as_of);
    let marks = book::marks(services, &tenant.workspace_id, &book.instruments(Some(&on)), Some(&on)).await?;
    let sold = engine_date(&on)?;
    let mut lots = Vec::with_capacity(book.lots.len());
    for (i, l) in book.lots.iter().enumerate().filter(|(_, l)| l.acquired.as_str() <= on.as_str()) {
        let mark = &marks[&l.instrument_id];
        let engine = [engine_lot(i, l)?];
        let u = tax_lots::unrealised(&engine, mark.price_minor, sold).map_err(refused_by_engine)?;
        let u = &u[0];
        lots.push(MarkedLot {
            id: l.id.clone(),
            lot: l.lot.clone(),
            symbol: l.symbol.clone(),
            acquired: l.acquired.clone(),
            origin: l.origin.as_str().to_string(),
            quantity: quantity_text(l.open_micros),
            original_quantity: quantity_text(l.original_micros),
            currency: l.currency.code().to_string(),
            cost_minor: l.open_cost_minor,
            market_value_minor: u.market_value,
            unrealised_gain_minor: u.gain,
            term: term_name(u.term).to_string(),
            holding_days: i64::from(engine[0].acquired.days_until(sold)),
        });
    }
    let mut views: Vec<MarkView> = marks.values().map(MarkView::from).collect();
    views.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    Ok(TaxLots {
        object: "tax_lots",
        portfolio_id: book.portfolio.id,
        portfolio_code: book.portfolio.code.clone(),
        as_of: on,
        lots,
        marks: views,
    })
}

/// `GET /investment/portfolios/{portfolio}/tax-lots`.
pub async fn tax_lots(
    services: &Services,
    tenant: &Tenant,
    portfolio_id: i64,
    as_of: Option<&str>,
) -> Result<TaxLots, Failure> {
    if as_of.is_some_and(|d| !is_date(d)) {
        return Err(Failure::Invalid(vec![("as_of", "must be a date (YYYY-MM-DD)".into())]));
    }
    let book = book::load(services, tenant, portfolio_id, as_of).await?;
    marked(services, tenant, &book, as_of).await
}

/// A purchase the caller plans (a replacement buy, a reinvested dividend): inside 30 days of the sale it
/// would wash the loss, so it is weighed like a lot acquired that day.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlannedPurchase {
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "AMD")]
    pub symbol: String,
    #[schema(format = Date, example = "2022-12-30")]
    pub date: String,
}

/// `POST /investment/portfolios/{portfolio}/tax-harvest`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxHarvestRequest {
    /// The sale date the proposal is for (default: today, UTC; each lot is marked at its newest observed
    /// price on or before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
    /// Only lots losing at least this much, in minor units of the lot's currency (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 9007199254740991_i64, example = 50000)]
    pub min_loss_minor: Option<i64>,
    /// Tax rate applied to short-term losses to estimate the effect, 0 to 1 (default 0.37).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.37)]
    pub short_term_rate: Option<f64>,
    /// Tax rate applied to long-term losses, 0 to 1 (default 0.20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1, example = 0.2)]
    pub long_term_rate: Option<f64>,
    /// Purchases planned around the sale, weighed for wash sales.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub planned_purchases: Vec<PlannedPurchase>,
}

/// Default rates: the top US federal rates on ordinary income (short term) and on long-term capital
/// gains; a workspace's own rates are sent in the request.
const SHORT_TERM_RATE: f64 = 0.37;
const LONG_TERM_RATE: f64 = 0.20;

/// A lot a sale would harvest.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HarvestCandidateView {
    /// The lot (`tlt_…`) and its name in the book.
    pub lot_id: String,
    pub lot: String,
    pub symbol: String,
    pub acquired: String,
    pub quantity: String,
    pub currency: String,
    pub cost_minor: i64,
    pub market_value_minor: i64,
    /// The loss a sale on `as_of` would realise (positive).
    pub loss_minor: i64,
    pub term: String,
    /// Loss × the term's rate, rounded to the minor unit: the tax the loss would offset.
    pub estimated_tax_effect_minor: i64,
    /// The purchase (another lot, or a planned one) inside ±30 days that would wash the loss.
    pub wash_sale_conflict: Option<String>,
    /// The first date a sale would be clear of that purchase.
    pub clear_from: Option<String>,
}

/// What a harvest proposal holds (its sealed output).
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HarvestOutput {
    pub as_of: String,
    /// Candidates, largest loss first; those with a wash-sale conflict are listed, flagged, and left out
    /// of the totals.
    pub candidates: Vec<HarvestCandidateView>,
    /// Totals of the candidates clear of wash sales, per currency.
    pub totals: Vec<HarvestTotal>,
    pub marks: Vec<MarkView>,
    /// Always false: a proposal; a sale is a Financial Action a person approves.
    pub executable: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HarvestTotal {
    pub currency: String,
    pub short_term_loss_minor: i64,
    pub long_term_loss_minor: i64,
    pub estimated_tax_effect_minor: i64,
    /// The estimated effect in words (`USD 1,234.56`).
    pub estimated_tax_effect: String,
}

fn rate(field: &'static str, v: Option<f64>, default: f64) -> Result<f64, Failure> {
    match v {
        None => Ok(default),
        Some(r) if r.is_finite() && (0.0..=1.0).contains(&r) => Ok(r),
        Some(_) => Err(invalid(field, "must be a number from 0 to 1")),
    }
}

/// Builds a harvest proposal for a portfolio and records it, sealed.
pub async fn harvest(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    portfolio_id: i64,
    req: TaxHarvestRequest,
) -> Result<Record, Failure> {
    let mut errors = Vec::new();
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".to_string()));
    }
    if req.min_loss_minor.is_some_and(|m| !(0..=fiscus_domain::money::MAX_AMOUNT_MINOR).contains(&m)) {
        errors.push(("min_loss_minor", "must be from 0 to 2^53 - 1".to_string()));
    }
    if req.planned_purchases.len() > 100 {
        errors.push(("planned_purchases", "at most 100".to_string()));
    }
    for p in &req.planned_purchases {
        if !fiscus_data_core::rules::is_name(&p.symbol) {
            errors.push(("planned_purchases", format!("`{}` is not a symbol", p.symbol)));
        }
        if !is_date(&p.date) {
            errors.push(("planned_purchases", format!("`{}` is not a date (YYYY-MM-DD)", p.date)));
        }
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let short = rate("short_term_rate", req.short_term_rate, SHORT_TERM_RATE)?;
    let long = rate("long_term_rate", req.long_term_rate, LONG_TERM_RATE)?;
    let book = book::load(services, tenant, portfolio_id, req.as_of.as_deref()).await?;
    if book.lots.is_empty() {
        return Err(Failure::refused(
            fiscus_domain::error_code::ErrorCode::Conflict,
            "the portfolio holds no open lots: there is nothing to harvest",
        ));
    }
    let lots = marked(services, tenant, &book, req.as_of.as_deref()).await?;
    let sold = engine_date(&lots.as_of)?;
    let min_loss = req.min_loss_minor.unwrap_or(1);
    let mut candidates = Vec::new();
    let mut by_symbol: HashMap<&str, Vec<(usize, &MarkedLot)>> = HashMap::new();
    for (i, l) in lots.lots.iter().enumerate() {
        by_symbol.entry(l.symbol.as_str()).or_default().push((i, l));
    }
    let mut symbols: Vec<&str> = by_symbol.keys().copied().collect();
    symbols.sort_unstable();
    for symbol in symbols {
        let held = &by_symbol[symbol];
        let mark = lots.marks.iter().find(|m| m.symbol == symbol).map(|m| m.price_minor).unwrap_or_default();
        let engine: Vec<Lot> = held
            .iter()
            .map(|(i, l)| {
                let open = &book.lots.iter().find(|o| o.id == l.id).expect("marked lots come from the book");
                engine_lot(*i, open)
            })
            .collect::<Result<_, _>>()?;
        let planned: Vec<Date> = req
            .planned_purchases
            .iter()
            .filter(|p| p.symbol == symbol)
            .map(|p| engine_date(&p.date))
            .collect::<Result<_, _>>()?;
        let found = tax_lots::harvest_candidates(&engine, mark, sold, min_loss, &planned).map_err(refused_by_engine)?;
        for c in found {
            let l = lots.lots[c.lot_id as usize].clone();
            let r = if c.term == Term::Short { short } else { long };
            let ymd = |d: Date| {
                let (y, m, d) = d.ymd();
                format!("{y:04}-{m:02}-{d:02}")
            };
            candidates.push(HarvestCandidateView {
                estimated_tax_effect_minor: (c.loss as f64 * r).round() as i64,
                wash_sale_conflict: c.wash_sale_conflict.map(ymd),
                clear_from: c.clear_from.map(ymd),
                lot_id: l.id,
                lot: l.lot,
                symbol: l.symbol,
                acquired: l.acquired,
                quantity: l.quantity,
                currency: l.currency,
                cost_minor: l.cost_minor,
                market_value_minor: l.market_value_minor,
                loss_minor: c.loss,
                term: term_name(c.term).to_string(),
            });
        }
    }
    candidates.sort_by(|a, b| b.loss_minor.cmp(&a.loss_minor).then(a.lot_id.cmp(&b.lot_id)));
    let mut totals: Vec<HarvestTotal> = Vec::new();
    for c in candidates.iter().filter(|c| c.wash_sale_conflict.is_none()) {
        let at = match totals.iter().position(|t| t.currency == c.currency) {
            Some(i) => i,
            None => {
                totals.push(HarvestTotal {
                    currency: c.currency.clone(),
                    short_term_loss_minor: 0,
                    long_term_loss_minor: 0,
                    estimated_tax_effect_minor: 0,
                    estimated_tax_effect: String::new(),
                });
                totals.len() - 1
            }
        };
        let t = &mut totals[at];
        if c.term == "short" {
            t.short_term_loss_minor += c.loss_minor;
        } else {
            t.long_term_loss_minor += c.loss_minor;
        }
        t.estimated_tax_effect_minor += c.estimated_tax_effect_minor;
    }
    for t in &mut totals {
        if let Some(cur) = Currency::parse(&t.currency) {
            t.estimated_tax_effect = format!("{} {}", cur.code(), format_minor(t.estimated_tax_effect_minor, cur));
        }
    }
    totals.sort_by(|a, b| a.currency.cmp(&b.currency));
    let output = HarvestOutput { as_of: lots.as_of.clone(), candidates, totals, marks: lots.marks, executable: false };
    let request =
        json!({ "portfolio_id": portfolio_id, "request": req, "short_term_rate": short, "long_term_rate": long });
    super::records::record(services, caller, tenant, RecordKind::TaxHarvest, Some(portfolio_id), request, &output).await
}
