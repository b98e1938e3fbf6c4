//! A portfolio's book as a tenant sees it, marked to observed prices: holdings (open lots summed by
//! instrument), cash by currency, and the marks and FX rates that value them in the base currency.

use std::collections::HashMap;

use fiscus_data_core::rules::Provenance;
use fiscus_data_core::tables::book::{self, OpenLot, Portfolio};
use fiscus_data_core::tables::market::{self, Rows};
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;

use super::unavailable;
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

/// An observed price used as a mark.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub symbol: String,
    /// The date of the bar the price comes from (the newest on or before the valuation date).
    pub date: String,
    /// The price as observed (decimal text).
    pub price: String,
    /// The price in minor units of the instrument's currency per whole unit, rounded half to even (the
    /// book's and the engine's unit).
    pub price_minor: i64,
    /// `close`, or `adj_close` where the dataset has no close.
    pub field: &'static str,
    /// The prices dataset (integer id) it was read from.
    pub dataset: i64,
    /// The price is older than daily prices allow on the valuation date (more than [`STALE_AFTER_DAYS`]
    /// calendar days before it): the holding is valued, and the reader is told the price is old.
    pub stale: bool,
}

/// Daily prices: a weekend and a holiday leave at most four days without a bar; a week without one means the
/// series stopped.
pub const STALE_AFTER_DAYS: i64 = 7;

/// The book's date: the requested valuation date, or today (UTC). What a book holds on a date is every lot
/// acquired on or before it, so a settled trade always counts; each holding is valued at its newest observed
/// price on or before that date, whose own date is shown beside it.
pub fn book_date(as_of: Option<&str>) -> String {
    as_of.map_or_else(|| fiscus_domain::clock::utc_day(fiscus_domain::clock::now_micros()), str::to_string)
}

/// Calendar days from `earlier` to `later` (`YYYY-MM-DD`), if both are dates.
fn days_between(earlier: &str, later: &str) -> Option<i64> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let a = time::Date::parse(earlier, &format).ok()?;
    let b = time::Date::parse(later, &format).ok()?;
    Some((b - a).whole_days())
}

/// A portfolio with its open lots and cash, in the tenant's environment.
pub struct Book {
    pub portfolio: Portfolio,
    pub lots: Vec<OpenLot>,
    pub cash: Vec<(Currency, i64)>,
}

impl Book {
    /// The instruments held on `as_of` (every open lot's when `None`) as (id, symbol), in symbol order, each
    /// once.
    pub fn instruments(&self, as_of: Option<&str>) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for l in self.lots.iter().filter(|l| as_of.is_none_or(|a| l.acquired.as_str() <= a)) {
            if out.last().is_none_or(|(id, _)| *id != l.instrument_id) {
                out.push((l.instrument_id.clone(), l.symbol.clone()));
            }
        }
        out
    }
}

/// Loads a portfolio of the workspace (`NotFound` for another workspace's or an unknown id) as it stood at
/// the end of `as_of` (every acquisition, disposal and cash movement dated on or before it, and nothing
/// after), or with everything recorded when `None`.
pub async fn load(
    services: &Services,
    tenant: &Tenant,
    portfolio_id: i64,
    as_of: Option<&str>,
) -> Result<Book, Failure> {
    let mut conn = services.store.read().await?;
    let portfolio = book::get_portfolio(&mut conn, &tenant.workspace_id, portfolio_id).await?;
    let lots = book::open_lots(&mut conn, tenant, portfolio_id, as_of).await?;
    let cash = book::cash_balances(&mut conn, tenant, portfolio_id, as_of).await?;
    Ok(Book { portfolio, lots, cash })
}

/// The mark of each instrument on or before `as_of` (every instrument's newest bar when `None`), from its
/// newest prices dataset, which must be observed.
pub async fn marks(
    services: &Services,
    workspace_id: &str,
    instruments: &[(String, String)],
    as_of: Option<&str>,
) -> Result<HashMap<String, Mark>, Failure> {
    let mut conn = services.store.read().await?;
    let mut out = HashMap::with_capacity(instruments.len());
    for (id, symbol) in instruments {
        let Some(number) = market::latest_dataset(&mut conn, workspace_id, Rows::Prices, id).await? else {
            return Err(unavailable(format!("`{symbol}` has no observed prices in this workspace")));
        };
        let d =
            fiscus_data_core::tables::datasets::get(&mut conn, services.store.seal_key(), workspace_id, number).await?;
        if d.provenance != Provenance::Observed {
            return Err(unavailable(format!(
                "the newest prices of `{symbol}` (dataset {number}) are synthetic; a mark is observed or absent"
            )));
        }
        let series = services.series.series(&services.store, workspace_id, id, number).await?;
        let instrument = market::get_instrument(&mut conn, workspace_id, id).await?;
        let currency = Currency::parse(&instrument.currency).ok_or_else(|| {
            Failure::internal(format!("instrument {symbol}: stored currency `{}`", instrument.currency))
        })?;
        let bar = series.bars.iter().rev().filter(|b| as_of.is_none_or(|a| b.date.as_str() <= a)).find_map(|b| {
            b.close.as_deref().map(|p| (b, p, "close")).or_else(|| b.adj_close.as_deref().map(|p| (b, p, "adj_close")))
        });
        let Some((bar, price, field)) = bar else {
            return Err(unavailable(match as_of {
                Some(a) => format!("`{symbol}` has no observed price on or before {a}"),
                None => format!("`{symbol}` has no observed price"),
            }));
        };
        let price_minor = minor_units(price, currency)
            .ok_or_else(|| Failure::internal(format!("{symbol} {}: stored price `{price}`", bar.date)))?;
        out.insert(
            id.clone(),
            Mark {
                symbol: symbol.clone(),
                date: bar.date.clone(),
                price: price.to_string(),
                price_minor,
                field,
                dataset: number,
                stale: as_of.and_then(|on| days_between(&bar.date, on)).is_some_and(|d| d > STALE_AFTER_DAYS),
            },
        );
    }
    Ok(out)
}

/// Each instrument's mark converted into `base` (minor units per unit, rounded to the nearest), at the
/// observed FX rate on or before `on`; by instrument id.
pub async fn prices_in_base(
    services: &Services,
    workspace_id: &str,
    marks: &HashMap<String, Mark>,
    base: Currency,
    on: &str,
) -> Result<HashMap<String, i64>, Failure> {
    let mut out = HashMap::with_capacity(marks.len());
    for (id, mark) in marks {
        let mut conn = services.store.read().await?;
        let i = market::get_instrument(&mut conn, workspace_id, id).await?;
        drop(conn);
        let currency = Currency::parse(&i.currency)
            .ok_or_else(|| Failure::internal(format!("instrument {}: currency `{}`", i.symbol, i.currency)))?;
        let rate = fx_rate(services, workspace_id, currency, base, on).await?;
        out.insert(id.clone(), (mark.price_minor as f64 * rate).round() as i64);
    }
    Ok(out)
}

/// A non-negative decimal price in minor units of `currency`, rounded half to even; `None` if it is not a
/// plain decimal or too large.
pub fn minor_units(price: &str, currency: Currency) -> Option<i64> {
    let (int, frac) = price.split_once('.').unwrap_or((price, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let exp = usize::from(currency.exponent());
    let digits = format!("{int}{frac}");
    let value: i128 = digits.parse().ok()?;
    let scale = frac.len();
    let scaled = if scale <= exp {
        value.checked_mul(10i128.checked_pow((exp - scale) as u32)?)?
    } else {
        let div = 10i128.checked_pow((scale - exp) as u32)?;
        let (q, r) = (value / div, value % div);
        if 2 * r > div || (2 * r == div && q % 2 != 0) { q + 1 } else { q }
    };
    i64::try_from(scaled).ok()
}

/// The observed rate that converts `from` into `to` on or before `date`: 1 for the same currency, else the
/// newest observation of the economic series `fx_<from><to>` (units of `to` per `from`, e.g. `fx_eurusd`),
/// or the inverse of `fx_<to><from>`. Absent is `market_data_unavailable`.
pub async fn fx_rate(
    services: &Services,
    workspace_id: &str,
    from: Currency,
    to: Currency,
    date: &str,
) -> Result<f64, Failure> {
    if from == to {
        return Ok(1.0);
    }
    let mut conn = services.store.read().await?;
    for (key, invert) in [
        (format!("fx_{}{}", from.code(), to.code()).to_ascii_lowercase(), false),
        (format!("fx_{}{}", to.code(), from.code()).to_ascii_lowercase(), true),
    ] {
        let series = match fiscus_data_core::tables::economics::get(&mut conn, workspace_id, &key, None).await {
            Ok(s) => s,
            Err(fiscus_store::StoreError::NotFound) => continue,
            Err(e) => return Err(e.into()),
        };
        let d = fiscus_data_core::tables::datasets::get(
            &mut conn,
            services.store.seal_key(),
            workspace_id,
            series.dataset_number,
        )
        .await?;
        if d.provenance != Provenance::Observed {
            continue;
        }
        let observed = fiscus_data_core::tables::economics::observations(
            &mut conn,
            workspace_id,
            &key,
            series.dataset_number,
            market::Window { from: None, to: Some(date), after: None },
            100_000,
        )
        .await?;
        if let Some(rate) = observed.last().and_then(|o| o.value.parse::<f64>().ok()).filter(|r| *r > 0.0) {
            return Ok(if invert { 1.0 / rate } else { rate });
        }
    }
    Err(unavailable(format!(
        "no observed {}/{} rate on or before {date} (an economic series fx_{}{} is expected)",
        from.code(),
        to.code(),
        from.code().to_ascii_lowercase(),
        to.code().to_ascii_lowercase()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_round_half_even_to_minor_units() {
        let usd = Currency::parse("USD").expect("USD");
        let jpy = Currency::parse("JPY").expect("JPY");
        assert_eq!(minor_units("125.674", usd), Some(12567));
        assert_eq!(minor_units("0.125", usd), Some(12));
        assert_eq!(minor_units("0.135", usd), Some(14));
        assert_eq!(minor_units("3783.22", usd), Some(378322));
        assert_eq!(minor_units("62", usd), Some(6200));
        assert_eq!(minor_units("150.5", jpy), Some(150));
        assert_eq!(minor_units("-1", usd), None);
        assert_eq!(minor_units("1e3", usd), None);
    }
}
