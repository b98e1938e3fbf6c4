//! A company as an investor looks it up: its reference data, its newest fundamentals (the latest period of
//! each metric) and a summary of its observed prices over the past year.

use fiscus_data_core::tables::market::{self, Rows, Window};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::risk;
use serde::Serialize;

use super::analytics::{DAYS_PER_YEAR, window_start};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct CompanyView {
    /// Always `company`.
    pub object: &'static str,
    #[schema(example = "AAPL")]
    pub symbol: String,
    /// The instrument (`ins_…`).
    pub instrument: String,
    pub name: String,
    pub asset_class: String,
    pub currency: String,
    pub exchange: String,
    pub country: String,
    pub sector: String,
    pub isin: String,
    /// The newest value of each metric (its latest period), by metric name.
    pub fundamentals: Vec<CompanyFundamental>,
    pub prices: Option<PriceSummary>,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct CompanyFundamental {
    pub metric: String,
    pub period_end: String,
    pub fiscal_period: String,
    /// Decimal text as observed.
    pub value: String,
    pub currency: Option<String>,
}

/// The newest observed price and the year (365 calendar days) before it.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct PriceSummary {
    /// The prices dataset (integer id).
    pub dataset: i64,
    pub last_date: String,
    /// The newest price (close, else adjusted close), decimal text as observed.
    pub last_price: String,
    pub field: String,
    pub year_high: f64,
    pub year_low: f64,
    /// Simple return over the year (first to last price of the window).
    pub year_return: Option<f64>,
    /// Annualised volatility of the year's returns (sample, × √periods_per_year).
    pub year_volatility: Option<f64>,
    pub observations: usize,
    /// The frequency of the year's dates, and the periods per year it annualises with (252 daily, 52
    /// weekly, 12 monthly, 4 quarterly, 1 annual; 252 for irregular dates).
    pub frequency: fiscus_data_core::rules::frequency::Frequency,
    #[schema(example = 252.0)]
    pub periods_per_year: f64,
}

fn price_of(b: &market::Bar) -> Option<(&str, &'static str)> {
    b.close.as_deref().map(|p| (p, "close")).or_else(|| b.adj_close.as_deref().map(|p| (p, "adj_close")))
}

pub async fn company(services: &Services, tenant: &Tenant, symbol: &str) -> Result<CompanyView, Failure> {
    if !fiscus_data_core::rules::is_name(symbol) {
        return Err(Failure::NotFound);
    }
    let ws = &tenant.workspace_id;
    let mut conn = services.store.read().await?;
    let i = market::get_instrument(&mut conn, ws, symbol).await?;
    let mut fundamentals: Vec<CompanyFundamental> = Vec::new();
    if let Some(number) = market::latest_dataset(&mut conn, ws, Rows::Fundamentals, &i.id).await? {
        let rows = market::fundamentals(&mut conn, ws, &i.id, number, None, None, Window::default(), 100_000).await?;
        // Rows come by period, oldest first: the last of each metric is its newest.
        for f in rows {
            match fundamentals.iter_mut().find(|x| x.metric == f.metric) {
                Some(x) => {
                    *x = CompanyFundamental {
                        metric: f.metric,
                        period_end: f.period_end,
                        fiscal_period: f.fiscal_period,
                        value: f.value,
                        currency: f.currency,
                    }
                }
                None => fundamentals.push(CompanyFundamental {
                    metric: f.metric,
                    period_end: f.period_end,
                    fiscal_period: f.fiscal_period,
                    value: f.value,
                    currency: f.currency,
                }),
            }
        }
        fundamentals.sort_by(|a, b| a.metric.cmp(&b.metric));
    }
    let mut prices = None;
    if let Some(number) = market::latest_dataset(&mut conn, ws, Rows::Prices, &i.id).await? {
        drop(conn);
        let series = services.series.series(&services.store, ws, &i.id, number).await?;
        if let Some((last, (last_price, field))) = series.bars.iter().rev().find_map(|b| price_of(b).map(|p| (b, p))) {
            let from = window_start(&last.date, 365);
            let (dates, year): (Vec<&str>, Vec<f64>) = series
                .bars
                .iter()
                .filter(|b| b.date >= from && b.date <= last.date)
                .filter_map(|b| Some((b.date.as_str(), price_of(b).and_then(|(p, _)| p.parse::<f64>().ok())?)))
                .filter(|(_, p)| p.is_finite() && *p > 0.0)
                .unzip();
            let frequency = fiscus_data_core::rules::frequency::Frequency::of_dates(dates.iter().copied());
            let periods = frequency.periods_per_year().unwrap_or(DAYS_PER_YEAR);
            let returns: Vec<f64> = year.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
            prices = Some(PriceSummary {
                dataset: number,
                last_date: last.date.clone(),
                last_price: last_price.to_string(),
                field: field.to_string(),
                year_high: year.iter().copied().fold(f64::MIN, f64::max),
                year_low: year.iter().copied().fold(f64::MAX, f64::min),
                year_return: (year.len() >= 2).then(|| year[year.len() - 1] / year[0] - 1.0),
                year_volatility: risk::annual_volatility(&returns, periods).ok(),
                observations: year.len(),
                frequency,
                periods_per_year: periods,
            });
        }
    }
    Ok(CompanyView {
        object: "company",
        symbol: i.symbol,
        instrument: i.id,
        name: i.name,
        asset_class: i.asset_class,
        currency: i.currency,
        exchange: i.exchange,
        country: i.country,
        sector: i.sector,
        isin: i.isin,
        fundamentals,
        prices,
    })
}
