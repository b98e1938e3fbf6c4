//! Planning forecasts (`POST /planning/forecasts`): a forecast of an economic series, an instrument's
//! prices or given values, with prediction intervals, the model chosen and its fit statistics.
//!
//! `auto` fits ARIMA(p, 1, q) for p, q in 0..=2 (with a drift) and keeps the lowest AICc, the way
//! forecast::auto.arima compares orders within one likelihood (Holt-Winters' least-squares AIC is not on
//! the same scale, so it is chosen by name only). Intervals: ARIMA's Gaussian ψ-weight intervals;
//! Holt-Winters' simulated ones (seeded).
//!
//! It is long because its tests (the model choice and the intervals against their definitions) sit beside
//! the code they check; the fitting itself is in the engine.

use crate::compute::Computation;
use fiscus_data_core::rules::Kind;
use fiscus_domain::compute::JobKind;
use fiscus_quant::forecast::arima::{self, ArimaSpec, ArimaTrend};
use fiscus_quant::forecast::holt_winters::{HoltWintersSpec, Season};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Control, Refusal};
use fiscus_domain::error_code::ErrorCode;
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;
use fiscus_kernel::inputs::{PinnedPrices, check_range};

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
    #[schema(value_type = Option<Vec<fiscus_domain::fields::Magnitude>>, min_items = 8, max_items = 5000)]
    pub values: Option<Vec<f64>>,
    /// Or a finance-core account: its net movement per period from the posted journals.
    pub ledger_account: Option<LedgerAccountRequest>,
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
    /// Season length for Holt-Winters (12 for monthly data); none by default. A seasonal model on a series
    /// with gaps is refused (422) unless `fill_gaps` allows filling them.
    #[schema(minimum = 2, maximum = 52)]
    pub seasonal_period: Option<u32>,
    /// How to fill the periods a gap misses before fitting (`previous`: the last value before it, `linear`:
    /// a straight line across it); the filled gaps are named in the output's `warnings`. Default: no filling
    /// (a non-seasonal model steps over a gap, named in `warnings`).
    pub fill_gaps: Option<Fill>,
}

/// How the periods a gap misses are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    Previous,
    Linear,
}

/// How long a period of a ledger account's series is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Monthly,
    Quarterly,
}

/// A finance-core account's series: the net movement (debits minus credits, in major units of its currency)
/// of one account of one general ledger per calendar month or quarter of posting, months without postings
/// counted as zero.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerAccountRequest {
    /// The general ledger (its integer id, as `GET /finance-core/journals` shows it).
    #[schema(minimum = 1, example = 1)]
    pub general_ledger_id: i64,
    /// The account code of the journal lines.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "4000")]
    pub account: String,
    /// Only this entity's journals (its integer id).
    #[schema(minimum = 1)]
    pub entity_id: Option<i64>,
    /// `monthly` (default) or `quarterly`.
    pub frequency: Option<Period>,
    /// The currency of the lines summed; required only when the account has lines in several.
    #[schema(value_type = Option<fiscus_domain::fields::CurrencyCode>, inline, example = "USD")]
    pub currency: Option<String>,
}

/// The series as pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Source {
    Economic {
        key: String,
        dataset: i64,
        content_hash: String,
        start: Option<String>,
        end: Option<String>,
    },
    Instrument(PinnedPrices),
    Inline {
        values: Vec<f64>,
    },
    /// The journal datasets holding the account's lines when the forecast was made, each with its content
    /// hash: lines imported later are not read.
    LedgerAccount {
        general_ledger_id: i64,
        account: String,
        entity_id: Option<i64>,
        frequency: Period,
        currency: String,
        datasets: Vec<PinnedDataset>,
        start: Option<String>,
        end: Option<String>,
    },
}

/// A dataset read, by number and content hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedDataset {
    pub dataset: i64,
    pub content_hash: String,
}

/// A forecast as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    pub source: Source,
    pub model: ForecastModel,
    pub horizon: u32,
    pub level: f64,
    pub seasonal_period: Option<u32>,
    #[serde(default)]
    pub fill_gaps: Option<Fill>,
}

pub async fn pin(services: &Services, workspace_id: &str, r: ForecastRequest) -> Result<Forecast, Failure> {
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
    let source = match (r.series, r.instrument, r.values, r.ledger_account) {
        (None, None, None, Some(a)) => pin_ledger_account(services, workspace_id, a, r.start, r.end).await?,
        (Some(key), None, None, None) => {
            fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Economics).await?;
            if !fiscus_data_core::rules::is_name(&key) {
                return Err(Failure::missing("series", format!("no series `{key}` in this workspace")));
            }
            let mut conn = services.store.read().await?;
            let s = match fiscus_data_core::tables::economics::get(&mut conn, workspace_id, &key, None).await {
                Ok(s) => s,
                Err(fiscus_store::StoreError::NotFound) => {
                    return Err(Failure::missing("series", format!("no series `{key}` in this workspace")));
                }
                Err(e) => return Err(e.into()),
            };
            let d = fiscus_data_core::tables::datasets::get(
                &mut conn,
                services.store.seal_key(),
                workspace_id,
                s.dataset_number,
            )
            .await?;
            fiscus_kernel::inputs::observed("series", &d)?;
            Source::Economic {
                key,
                dataset: s.dataset_number,
                content_hash: d.content_hash,
                start: r.start,
                end: r.end,
            }
        }
        (None, Some(uid), None, None) => Source::Instrument(
            fiscus_kernel::inputs::pin(services, workspace_id, "instrument", &[uid], r.start, r.end).await?,
        ),
        (None, None, Some(values), None) => {
            if r.start.is_some() || r.end.is_some() {
                return Err(Failure::Invalid(vec![(
                    "start",
                    "a date range applies to a series or an instrument".into(),
                )]));
            }
            Source::Inline { values }
        }
        _ => {
            return Err(Failure::Invalid(vec![(
                "series",
                "give one of series, instrument, values or ledger_account".into(),
            )]));
        }
    };
    let forecast = Forecast {
        source,
        model: r.model.unwrap_or(ForecastModel::Auto),
        horizon,
        level,
        seasonal_period: r.seasonal_period,
        fill_gaps: r.fill_gaps,
    };
    // A season is counted in periods: across a gap it would be out of step. Refused here, before anything
    // is queued, unless filling was allowed.
    if forecast.seasonal() && forecast.fill_gaps.is_none() {
        let loaded = forecast.load(services, workspace_id).await?;
        if let Some(g) = loaded.quality.as_ref().and_then(|q| q.gaps()) {
            return Err(Failure::Invalid(vec![(
                "seasonal_period",
                format!(
                    "a seasonal model needs consecutive periods, and the series has {} gap{} (first {}); allow filling them with \
                     fill_gaps `previous` or `linear`, or fit without a season",
                    g.count,
                    if g.count == 1 { "" } else { "s" },
                    g.dates.first().map_or("", String::as_str)
                ),
            )]));
        }
    }
    // An automatic choice is queued (it fits nine models); what would make every one of them fail is refused
    // here with the engine's problem, as a single model answered in the request is, never a 202 whose job
    // fails later: one answer per cause (issue 55).
    if forecast.model == ForecastModel::Auto {
        let loaded = forecast.load(services, workspace_id).await?;
        if loaded.values.len() < MIN_OBSERVATIONS {
            return Err(crate::compute::refused_by_engine(fiscus_quant::QuantError::InsufficientData {
                what: "series",
                needed: MIN_OBSERVATIONS,
                got: loaded.values.len(),
            }));
        }
        arima::check(&loaded.values, auto_spec(0, 0)).map_err(crate::compute::refused_by_engine)?;
    }
    Ok(forecast)
}

/// Observations a forecast needs.
const MIN_OBSERVATIONS: usize = 8;

/// The automatic choice's ARIMA(p, 1, q) with drift.
fn auto_spec(p: usize, q: usize) -> ArimaSpec {
    ArimaSpec { p, d: 1, q, seasonal_p: 0, seasonal_d: 0, seasonal_q: 0, period: 0, trend: ArimaTrend::Drift }
}

impl Forecast {
    /// Fits a season (only Holt-Winters takes one).
    fn seasonal(&self) -> bool {
        self.seasonal_period.is_some() && self.model == ForecastModel::HoltWinters
    }
}

/// Fills the periods each gap misses (`gaps` from the data's quality), recording what was filled.
fn fill(values: &mut Vec<f64>, dates: &mut Vec<String>, how: Fill, quality: &mut fiscus_kernel::inputs::Quality) {
    let (_, gaps) = fiscus_data_core::rules::frequency::gaps(dates);
    if gaps.is_empty() {
        return;
    }
    let mut filled_values = Vec::with_capacity(values.len());
    let mut filled_dates = Vec::with_capacity(dates.len());
    let mut next = gaps.iter().peekable();
    let mut inserted = 0u64;
    for i in 0..values.len() {
        if let Some(g) = next.next_if(|g| g.after == i) {
            let (a, b) = (values[i - 1], values[i]);
            for k in 1..=g.missing {
                filled_values.push(match how {
                    Fill::Previous => a,
                    Fill::Linear => a + (b - a) * k as f64 / (g.missing + 1) as f64,
                });
                // A filled period has no date of its own: it is named by the gap it fills.
                filled_dates.push(format!("{}/{}", g.from, g.to));
            }
            inserted += g.missing;
        }
        filled_values.push(values[i]);
        filled_dates.push(dates[i].clone());
    }
    quality.warnings.retain(|w| w.code != fiscus_kernel::inputs::WarningCode::GapBridged);
    quality.warnings.push(fiscus_kernel::inputs::Warning {
        code: fiscus_kernel::inputs::WarningCode::GapFilled,
        symbol: None,
        message: format!(
            "{inserted} missing period{} in {} gap{} filled with the {} value{}",
            if inserted == 1 { "" } else { "s" },
            gaps.len(),
            if gaps.len() == 1 { "" } else { "s" },
            match how {
                Fill::Previous => "previous",
                Fill::Linear => "linearly interpolated",
            },
            if inserted == 1 { "" } else { "s" },
        ),
        count: inserted,
        dates: gaps.iter().take(fiscus_kernel::quality::DATES_LISTED).map(|g| format!("{}/{}", g.from, g.to)).collect(),
    });
    *values = filled_values;
    *dates = filled_dates;
}

async fn pin_ledger_account(
    services: &Services,
    workspace_id: &str,
    a: LedgerAccountRequest,
    start: Option<String>,
    end: Option<String>,
) -> Result<Source, Failure> {
    fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Journals).await?;
    let bad = |m: String| Failure::Invalid(vec![("ledger_account", m)]);
    if a.general_ledger_id < 1 || a.entity_id.is_some_and(|e| e < 1) {
        return Err(bad("general_ledger_id and entity_id are positive integers".into()));
    }
    if !fiscus_data_core::rules::is_name(&a.account) {
        return Err(bad("account: 1 to 64 of A-Z, a-z, 0-9, `.`, `_`, `-`".into()));
    }
    if a.currency.as_deref().is_some_and(|c| fiscus_domain::money::Currency::parse(c).is_none()) {
        return Err(bad("currency: an ISO 4217 code Fiscus accepts".into()));
    }
    let lines = fiscus_data_core::tables::finance_core::AccountLines {
        general_ledger_id: a.general_ledger_id,
        account: &a.account,
        entity_id: a.entity_id,
    };
    let mut conn = services.store.read().await?;
    let found = fiscus_data_core::tables::finance_core::account_datasets(&mut conn, workspace_id, &lines).await?;
    let mut currencies: Vec<&str> = found.iter().map(|(_, c)| c.as_str()).collect();
    currencies.dedup();
    let currency = match (a.currency.as_deref(), currencies.as_slice()) {
        // What the ledger holds is the workspace's state, not a rule of the body: 409, never 422.
        (_, []) => {
            return Err(Failure::missing(
                "ledger_account",
                format!("no posted lines of account `{}` in that ledger", a.account),
            ));
        }
        (Some(c), _) if currencies.contains(&c) => c.to_string(),
        (Some(c), _) => {
            return Err(Failure::missing("ledger_account", format!("account `{}` has no lines in {c}", a.account)));
        }
        (None, [one]) => one.to_string(),
        (None, several) => {
            let detail = format!("account `{}` has lines in {}: name the currency", a.account, several.join(", "));
            return Err(Failure::Refused {
                code: ErrorCode::Conflict,
                detail,
                members: vec![("currencies", json!(several))],
            });
        }
    };
    let mut datasets: Vec<PinnedDataset> = Vec::new();
    for (number, _) in found.iter().filter(|(_, c)| *c == currency) {
        if datasets.iter().any(|d| d.dataset == *number) {
            continue;
        }
        let d = fiscus_data_core::tables::datasets::get(&mut conn, services.store.seal_key(), workspace_id, *number)
            .await?;
        fiscus_kernel::inputs::observed("ledger_account", &d)?;
        datasets.push(PinnedDataset { dataset: *number, content_hash: d.content_hash });
    }
    Ok(Source::LedgerAccount {
        general_ledger_id: a.general_ledger_id,
        account: a.account,
        entity_id: a.entity_id,
        frequency: a.frequency.unwrap_or(Period::Monthly),
        currency,
        datasets,
        start,
        end,
    })
}

/// Monthly movements in minor units, gaps filled with zero from the first month to the last, summed into
/// quarters when asked, in major units: (period label, value).
fn periods(months: &[(String, i64)], frequency: Period, exponent: u8) -> Vec<(String, f64)> {
    let index = |m: &str| -> Option<i64> {
        let (y, mo) = m.split_once('-')?;
        Some(y.parse::<i64>().ok()? * 12 + mo.parse::<i64>().ok()? - 1)
    };
    let Some(first) = months.first().and_then(|(m, _)| index(m)) else { return Vec::new() };
    let Some(last) = months.last().and_then(|(m, _)| index(m)) else { return Vec::new() };
    let (first, last) = match frequency {
        Period::Monthly => (first, last),
        Period::Quarterly => (first - first % 3, last - last % 3 + 2),
    };
    let mut minor = vec![0i64; usize::try_from(last - first + 1).unwrap_or(0)];
    for (m, v) in months {
        if let Some(i) = index(m) {
            let slot = &mut minor[usize::try_from(i - first).unwrap_or(0)];
            *slot = slot.saturating_add(*v);
        }
    }
    let scale = 10f64.powi(i32::from(exponent));
    let label = |i: i64| format!("{:04}-{:02}", i.div_euclid(12), i.rem_euclid(12) + 1);
    match frequency {
        Period::Monthly => {
            minor.iter().enumerate().map(|(k, v)| (label(first + k as i64), *v as f64 / scale)).collect()
        }
        Period::Quarterly => minor
            .chunks(3)
            .enumerate()
            .map(|(k, q)| {
                let start = first + 3 * k as i64;
                let name = format!("{:04}-Q{}", start.div_euclid(12), start.rem_euclid(12) / 3 + 1);
                (name, q.iter().fold(0i64, |a, v| a.saturating_add(*v)) as f64 / scale)
            })
            .collect(),
    }
}

/// The series read, with its dates when it has them and what reading it dropped and bridged.
pub struct Loaded {
    pub values: Vec<f64>,
    pub dates: Option<Vec<String>>,
    pub quality: Option<fiscus_kernel::inputs::Quality>,
}

impl Computation for Forecast {
    type Inputs = Loaded;
    const KIND: JobKind = JobKind::Forecast;

    /// One series, one fit: priced as one.
    fn size(&self) -> u64 {
        1
    }

    fn small(&self) -> bool {
        // An automatic choice fits nine models; one model is quick.
        self.model != ForecastModel::Auto
    }

    fn quality(data: &Loaded) -> Option<fiscus_kernel::inputs::Quality> {
        data.quality.clone()
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        let mut loaded = self.read(services, workspace_id).await?;
        if let (Some(how), Some(dates), Some(quality)) =
            (self.fill_gaps, loaded.dates.as_mut(), loaded.quality.as_mut())
        {
            fill(&mut loaded.values, dates, how, quality);
        }
        Ok(loaded)
    }

    fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        self.fit(data, control)
    }
}

impl Forecast {
    /// The series as stored, before any filling.
    async fn read(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        match &self.source {
            Source::Inline { values } => Ok(Loaded { values: values.clone(), dates: None, quality: None }),
            Source::Instrument(p) => {
                let panel = fiscus_kernel::inputs::load(services, workspace_id, p).await?;
                Ok(Loaded {
                    values: panel.prices.iter().map(|r| r[0]).collect(),
                    dates: Some(panel.dates),
                    quality: Some(panel.quality),
                })
            }
            Source::Economic { key, dataset, start, end, .. } => {
                fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Economics).await?;
                let mut conn = services.store.read().await?;
                let window = fiscus_data_core::tables::market::Window {
                    from: start.as_deref(),
                    to: end.as_deref(),
                    after: None,
                };
                let rows = fiscus_data_core::tables::economics::observations(
                    &mut conn,
                    workspace_id,
                    key,
                    *dataset,
                    window,
                    100_000,
                )
                .await?;
                let mut quality = fiscus_kernel::inputs::Quality::default();
                let mut unread = Vec::new();
                let mut dates = Vec::with_capacity(rows.len());
                let mut values = Vec::with_capacity(rows.len());
                for o in &rows {
                    match o.value.parse::<f64>() {
                        Ok(v) if v.is_finite() => {
                            dates.push(o.date.clone());
                            values.push(v);
                        }
                        _ => unread.push(o.date.as_str()),
                    }
                }
                quality.dropped(key, "its value is not a number", &unread);
                quality.bridge(&dates, Some(key));
                Ok(Loaded { values, dates: Some(dates), quality: Some(quality) })
            }
            Source::LedgerAccount {
                general_ledger_id,
                account,
                entity_id,
                frequency,
                currency,
                datasets,
                start,
                end,
            } => {
                fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Journals).await?;
                let lines = fiscus_data_core::tables::finance_core::AccountLines {
                    general_ledger_id: *general_ledger_id,
                    account,
                    entity_id: *entity_id,
                };
                let numbers: Vec<i64> = datasets.iter().map(|d| d.dataset).collect();
                let mut conn = services.store.read().await?;
                let months = fiscus_data_core::tables::finance_core::account_movements(
                    &mut conn,
                    workspace_id,
                    &lines,
                    currency,
                    &numbers,
                    start.as_deref(),
                    end.as_deref(),
                )
                .await?;
                let exponent = fiscus_domain::money::Currency::parse(currency).map_or(2, |c| c.exponent());
                let (dates, values) = periods(&months, *frequency, exponent).into_iter().unzip();
                Ok(Loaded { values, dates: Some(dates), quality: None })
            }
        }
    }

    fn fit(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        if data.values.len() < MIN_OBSERVATIONS {
            return Err(Refusal::Engine(fiscus_quant::QuantError::InsufficientData {
                what: "series",
                needed: MIN_OBSERVATIONS,
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
                    match arima::fit(y, auto_spec(p, q)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_without_postings_count_as_zero_and_quarters_sum_their_months() {
        let months = vec![("2023-11".to_string(), 150), ("2024-01".to_string(), -25), ("2024-04".to_string(), 1000)];
        let monthly = periods(&months, Period::Monthly, 2);
        assert_eq!(monthly.len(), 6);
        assert_eq!(monthly[0], ("2023-11".to_string(), 1.5));
        assert_eq!(monthly[1], ("2023-12".to_string(), 0.0));
        assert_eq!(monthly[2], ("2024-01".to_string(), -0.25));
        assert_eq!(monthly[5], ("2024-04".to_string(), 10.0));
        let quarterly = periods(&months, Period::Quarterly, 2);
        assert_eq!(
            quarterly,
            vec![("2023-Q4".to_string(), 1.5), ("2024-Q1".to_string(), -0.25), ("2024-Q2".to_string(), 10.0)]
        );
        assert_eq!(periods(&[("2024-01".to_string(), 7)], Period::Monthly, 0), vec![("2024-01".to_string(), 7.0)]);
        assert!(periods(&[], Period::Monthly, 2).is_empty());
    }
}
