//! Planning forecasts (`POST /planning/forecasts`): a forecast of an economic series, an instrument's
//! prices or given values, with prediction intervals, the model chosen and its fit statistics.
//!
//! `auto` fits ARIMA(p, 1, q) for p, q in 0..=2 (with a drift) and keeps the lowest AICc, the way
//! forecast::auto.arima compares orders within one likelihood (Holt-Winters' least-squares AIC is not on
//! the same scale, so it is chosen by name only). Intervals: ARIMA's Gaussian ψ-weight intervals;
//! Holt-Winters' simulated ones (seeded).

use fiscus_quant::forecast::arima::{self, ArimaSpec, ArimaTrend};
use fiscus_quant::forecast::holt_winters::{HoltWintersSpec, Season};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::inputs::{PinnedPrices, check_range};
use super::{Control, Refusal};
use crate::governed::Failure;
use crate::state::AppState;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForecastModel {
    /// The ARIMA(p, 1, q) of lowest AICc, p and q from 0 to 2.
    Auto,
    /// Damped-trend Holt-Winters (with an additive season when `seasonal_period` is given).
    HoltWinters,
    /// ARIMA(1, 1, 1) with a drift.
    Arima,
}

/// A forecast to make.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"series": "cpilfesl", "start": "2010-01-01", "horizon": 12, "level": 0.9}))]
pub struct ForecastRequest {
    /// An economic series of the data plane (its newest dataset).
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "cpilfesl")]
    pub series: Option<String>,
    /// Or an instrument: its adjusted closes.
    pub instrument: Option<String>,
    /// Or values given inline, oldest first.
    #[schema(min_items = 8, max_items = 5000)]
    pub values: Option<Vec<f64>>,
    #[schema(format = Date, example = "2010-01-01")]
    pub start: Option<String>,
    #[schema(format = Date)]
    pub end: Option<String>,
    /// `auto` (default), `holt_winters` or `arima`.
    pub model: Option<ForecastModel>,
    /// Periods ahead (default 12).
    #[schema(minimum = 1, maximum = 120)]
    pub horizon: Option<u32>,
    /// Coverage of the prediction intervals (default 0.9).
    #[schema(minimum = 0.5, maximum = 0.99)]
    pub level: Option<f64>,
    /// Season length for Holt-Winters (12 for monthly data); none by default.
    #[schema(minimum = 2, maximum = 52)]
    pub seasonal_period: Option<u32>,
}

/// The series as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Source {
    Economic { key: String, dataset: i64, content_hash: String, start: Option<String>, end: Option<String> },
    Instrument(PinnedPrices),
    Inline { values: Vec<f64> },
}

/// A forecast as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    pub source: Source,
    pub model: ForecastModel,
    pub horizon: u32,
    pub level: f64,
    pub seasonal_period: Option<u32>,
}

pub async fn pin(state: &AppState, workspace_id: &str, r: ForecastRequest) -> Result<Forecast, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let horizon = r.horizon.unwrap_or(12);
    if !(1..=120).contains(&horizon) {
        errors.push(("horizon", "from 1 to 120".into()));
    }
    let level = r.level.unwrap_or(0.9);
    if !(level.is_finite() && (0.5..=0.99).contains(&level)) {
        errors.push(("level", "from 0.5 to 0.99".into()));
    }
    if r.seasonal_period.is_some_and(|p| !(2..=52).contains(&p)) {
        errors.push(("seasonal_period", "from 2 to 52".into()));
    }
    check_range(&mut errors, r.start.as_deref(), r.end.as_deref());
    if let Some(v) = &r.values
        && (v.len() < 8 || v.len() > 5000 || v.iter().any(|x| !x.is_finite() || x.abs() > 1e12))
    {
        errors.push(("values", "8 to 5000 finite values, at most 1e12 in size".into()));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let source = match (r.series, r.instrument, r.values) {
        (Some(key), None, None) => {
            if !fiscus_domain::data::is_name(&key) {
                return Err(Failure::Invalid(vec![("series", format!("no series `{key}` in this workspace"))]));
            }
            let mut conn = state.store.read().await?;
            let s = match fiscus_store::data::economics::get(&mut conn, workspace_id, &key, None).await {
                Ok(s) => s,
                Err(fiscus_store::StoreError::NotFound) => {
                    return Err(Failure::Invalid(vec![("series", format!("no series `{key}` in this workspace"))]));
                }
                Err(e) => return Err(e.into()),
            };
            let d = fiscus_store::data::datasets::get(&mut conn, workspace_id, s.dataset_number).await?;
            super::inputs::observed("series", &d)?;
            Source::Economic {
                key,
                dataset: s.dataset_number,
                content_hash: d.content_hash,
                start: r.start,
                end: r.end,
            }
        }
        (None, Some(uid), None) => {
            Source::Instrument(super::inputs::pin(state, workspace_id, "instrument", &[uid], r.start, r.end).await?)
        }
        (None, None, Some(values)) => {
            if r.start.is_some() || r.end.is_some() {
                return Err(Failure::Invalid(vec![(
                    "start",
                    "a date range applies to a series or an instrument".into(),
                )]));
            }
            Source::Inline { values }
        }
        _ => return Err(Failure::Invalid(vec![("series", "give one of series, instrument or values".into())])),
    };
    Ok(Forecast {
        source,
        model: r.model.unwrap_or(ForecastModel::Auto),
        horizon,
        level,
        seasonal_period: r.seasonal_period,
    })
}

/// The series read, with its dates when it has them.
pub struct Loaded {
    pub values: Vec<f64>,
    pub dates: Option<Vec<String>>,
}

impl Forecast {
    pub fn small(&self) -> bool {
        // An automatic choice fits nine models; one model is quick.
        self.model != ForecastModel::Auto
    }

    pub async fn load(&self, state: &AppState, workspace_id: &str) -> Result<Loaded, Failure> {
        match &self.source {
            Source::Inline { values } => Ok(Loaded { values: values.clone(), dates: None }),
            Source::Instrument(p) => {
                let panel = super::inputs::load(state, workspace_id, p).await?;
                Ok(Loaded { values: panel.prices.iter().map(|r| r[0]).collect(), dates: Some(panel.dates) })
            }
            Source::Economic { key, dataset, start, end, .. } => {
                let mut conn = state.store.read().await?;
                let window =
                    fiscus_store::data::market::Window { from: start.as_deref(), to: end.as_deref(), after: None };
                let rows = fiscus_store::data::economics::observations(
                    &mut conn,
                    workspace_id,
                    key,
                    *dataset,
                    window,
                    100_000,
                )
                .await?;
                let (dates, values): (Vec<String>, Vec<f64>) =
                    rows.into_iter().filter_map(|o| o.value.parse::<f64>().ok().map(|v| (o.date, v))).unzip();
                Ok(Loaded { values, dates: Some(dates) })
            }
        }
    }

    pub fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        if data.values.len() < 8 {
            return Err(Refusal::Engine(fiscus_quant::QuantError::InsufficientData {
                what: "series",
                needed: 8,
                got: data.values.len(),
            }));
        }
        let h = self.horizon as usize;
        let y = &data.values;
        let (model, point, lower, upper, fit) = match self.model {
            ForecastModel::HoltWinters => {
                let season = self.seasonal_period.map(|p| Season::Additive { period: p as usize });
                let spec = HoltWintersSpec { trend: true, damped: true, season };
                let fit = fiscus_quant::forecast::fit_holt_winters(y, spec)?;
                let bands = fit.prediction_intervals(h, self.level, 2000, 0)?;
                let stats = json!({"sse": fit.sse, "aic": fit.aic(), "smoothing": {
                    "alpha": fit.smoothing.alpha, "beta": fit.smoothing.beta, "gamma": fit.smoothing.gamma, "phi": fit.smoothing.phi}});
                (
                    "holt_winters_damped".to_string(),
                    fit.forecast(h),
                    bands.iter().map(|b| b.0).collect::<Vec<_>>(),
                    bands.iter().map(|b| b.1).collect::<Vec<_>>(),
                    stats,
                )
            }
            ForecastModel::Arima | ForecastModel::Auto => {
                let orders: Vec<(usize, usize)> = if self.model == ForecastModel::Arima {
                    vec![(1, 1)]
                } else {
                    (0..=2).flat_map(|p| (0..=2).map(move |q| (p, q))).collect()
                };
                let mut best: Option<(f64, arima::ArimaFit)> = None;
                let mut last_error = None;
                for (p, q) in orders {
                    control.check()?;
                    let spec = ArimaSpec {
                        p,
                        d: 1,
                        q,
                        seasonal_p: 0,
                        seasonal_d: 0,
                        seasonal_q: 0,
                        period: 0,
                        trend: ArimaTrend::Drift,
                    };
                    match arima::fit(y, spec) {
                        Ok(fit) if fit.aicc().is_finite() => {
                            if best.as_ref().is_none_or(|(a, _)| fit.aicc() < *a) {
                                best = Some((fit.aicc(), fit));
                            }
                        }
                        Ok(_) => {}
                        Err(e) => last_error = Some(e),
                    }
                }
                let Some((_, fit)) = best else {
                    return Err(Refusal::Engine(last_error.unwrap_or(fiscus_quant::QuantError::NoConvergence {
                        what: "arima",
                        detail: "no order could be fitted".into(),
                    })));
                };
                let f = fit.forecast(h, self.level)?;
                let s = fit.spec;
                let stats = json!({"aic": fit.aic(), "aicc": fit.aicc(), "bic": fit.bic(), "log_likelihood": fit.log_likelihood,
                    "sigma2": fit.sigma2, "coefficients": {"drift": fit.trend_coefficient, "ar": fit.ar, "ma": fit.ma}});
                (format!("arima({},{},{}) with drift", s.p, s.d, s.q), f.mean, f.lower, f.upper, stats)
            }
        };
        control.set_progress(1, 1);
        Ok(json!({
            "model": model, "horizon": h, "level": self.level, "observations": y.len(),
            "last_date": data.dates.as_ref().and_then(|d| d.last()), "last_value": y.last(),
            "forecast": point, "lower": lower, "upper": upper, "fit": fit,
        }))
    }
}
