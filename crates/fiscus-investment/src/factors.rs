//! Factor exposures of current holdings: the portfolio's monthly excess returns (its daily returns on
//! today's weights, compounded by month, less the risk-free rate) regressed on the Fama-French three
//! factors (market excess, SMB, HML) with the engine's OLS, which is checked against statsmodels. The
//! factors are economic series of the workspace (`ff3_mkt_rf`, `ff3_smb`, `ff3_hml`, `ff3_rf`, in percent,
//! as the French data library publishes them); without them, or without 24 months in common, there are no
//! exposures to report, and the report says why rather than inventing any.

use std::collections::BTreeMap;

use fiscus_data_core::rules::Provenance;
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::regression;
use serde::{Deserialize, Serialize};

use super::analytics::{Valued, history};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

/// Months of returns the regression uses at most.
pub const MONTHS: usize = 60;
/// Months it needs at least.
pub const MIN_MONTHS: usize = 24;

const SERIES: [&str; 4] = ["ff3_mkt_rf", "ff3_smb", "ff3_hml", "ff3_rf"];

/// A factor loading with its standard error and t-value.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Loading {
    pub estimate: f64,
    pub std_error: f64,
    pub t_value: f64,
}

/// The regression's result.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FactorExposures {
    /// Always `fama_french_3`.
    pub model: String,
    /// First and last month regressed (`YYYY-MM`) and how many.
    pub window_start: String,
    pub window_end: String,
    pub observations: usize,
    /// Monthly alpha (the intercept), as a return.
    pub alpha: Loading,
    pub market: Loading,
    pub smb: Loading,
    pub hml: Loading,
    pub r_squared: f64,
    pub adj_r_squared: f64,
}

/// Exposures, or why there are none.
pub enum Exposures {
    Estimated(FactorExposures),
    Unavailable(String),
}

/// One factor series by month (`YYYY-MM`), as a fraction; `None` when the workspace has no observed series.
async fn factor(services: &Services, workspace_id: &str, key: &str) -> Result<Option<BTreeMap<String, f64>>, Failure> {
    let mut conn = services.store.read().await?;
    let series = match fiscus_data_core::tables::economics::get(&mut conn, workspace_id, key, None).await {
        Ok(s) => s,
        Err(fiscus_store::StoreError::NotFound) => return Ok(None),
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
        return Ok(None);
    }
    let rows = fiscus_data_core::tables::economics::observations(
        &mut conn,
        workspace_id,
        key,
        series.dataset_number,
        fiscus_data_core::tables::market::Window::default(),
        100_000,
    )
    .await?;
    Ok(Some(
        rows.into_iter()
            .filter_map(|o| Some((o.date.get(..7)?.to_string(), o.value.parse::<f64>().ok()? / 100.0)))
            .collect(),
    ))
}

pub async fn exposures(services: &Services, tenant: &Tenant, valued: &Valued) -> Result<Exposures, Failure> {
    let mut factors = Vec::with_capacity(4);
    for key in SERIES {
        match factor(services, &tenant.workspace_id, key).await? {
            Some(f) => factors.push(f),
            None => {
                return Ok(Exposures::Unavailable(format!("the workspace has no observed economic series `{key}`")));
            }
        }
    }
    let as_of_month = valued.as_of.get(..7).unwrap_or_default().to_string();
    let Some(last) = factors[0].keys().filter(|m| **m <= as_of_month).max().cloned() else {
        return Ok(Exposures::Unavailable(format!("no factor month on or before {as_of_month}")));
    };
    // The window: up to 60 months ending at the last factor month on or before the valuation date.
    let months: Vec<String> = factors[0].keys().filter(|m| **m <= last).rev().take(MONTHS).cloned().collect();
    let first = months.last().cloned().unwrap_or_default();
    // From a few days before the window, so that its first month's first return is there too.
    let start = super::analytics::window_start(&format!("{first}-01"), 10);
    let super::analytics::History { dates, portfolio: daily, .. } =
        history(services, tenant, valued, None, Some(start), &format!("{last}-31")).await?;
    let mut by_month: BTreeMap<String, f64> = BTreeMap::new();
    for (d, r) in dates.iter().zip(&daily) {
        if d[..7] < *first.as_str() {
            continue;
        }
        let g = by_month.entry(d[..7].to_string()).or_insert(1.0);
        *g *= 1.0 + r;
    }
    let (mut y, mut mkt, mut smb, mut hml, mut used) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (month, growth) in &by_month {
        let (Some(m), Some(s), Some(h), Some(rf)) =
            (factors[0].get(month), factors[1].get(month), factors[2].get(month), factors[3].get(month))
        else {
            continue;
        };
        y.push(growth - 1.0 - rf);
        mkt.push(*m);
        smb.push(*s);
        hml.push(*h);
        used.push(month.clone());
    }
    if y.len() < MIN_MONTHS {
        return Ok(Exposures::Unavailable(format!(
            "{} months of portfolio returns and factors in common; at least {MIN_MONTHS} are needed",
            y.len()
        )));
    }
    let fit = regression::ols(&y, &[mkt, smb, hml], true).map_err(fiscus_kernel::engine::refused_by_engine)?;
    let loading =
        |i: usize| Loading { estimate: fit.coefficients[i], std_error: fit.std_errors[i], t_value: fit.t_values[i] };
    Ok(Exposures::Estimated(FactorExposures {
        model: "fama_french_3".to_string(),
        window_start: used.first().cloned().unwrap_or_default(),
        window_end: used.last().cloned().unwrap_or_default(),
        observations: fit.observations,
        alpha: loading(0),
        market: loading(1),
        smb: loading(2),
        hml: loading(3),
        r_squared: fit.r_squared,
        adj_r_squared: fit.adj_r_squared,
    }))
}
