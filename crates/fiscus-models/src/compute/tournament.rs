//! Model tournaments (`/quant/model-tournaments`): candidate forecasting methods evaluated by rolling origin
//! on one series with the M4 competition's measures (Makridakis, Spiliotis and Assimakopoulos 2020): sMAPE,
//! MASE (scaled by the in-sample seasonal naïve error) and OWA, the mean of both relative to Naïve 2. The
//! result ranks the candidates by OWA.
//!
//! Naïve 2 is the naïve forecast of the seasonally adjusted series (classical multiplicative decomposition,
//! the seasonal indices reapplied), as in M4; unlike M4 it adjusts whenever `seasonal_period` > 1, without
//! M4's 90 % autocorrelation test for seasonality.

use crate::compute::Computation;
use fiscus_domain::compute::JobKind;
use fiscus_quant::forecast::arima::{self, ArimaSpec, ArimaTrend};
use fiscus_quant::forecast::holt_winters::HoltWintersSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::forecast::{Loaded, Source};
use super::{Control, Refusal};
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    /// The last value.
    Naive,
    /// The value one season earlier.
    SeasonalNaive,
    /// The naïve forecast of the seasonally adjusted series (M4's benchmark).
    Naive2,
    /// Simple exponential smoothing.
    Ses,
    /// Holt's linear trend.
    Holt,
    /// Damped trend.
    Damped,
    /// ARIMA(1,1,0) with drift.
    Arima,
}

impl Candidate {
    fn as_str(self) -> &'static str {
        match self {
            Candidate::Naive => "naive",
            Candidate::SeasonalNaive => "seasonal_naive",
            Candidate::Naive2 => "naive2",
            Candidate::Ses => "ses",
            Candidate::Holt => "holt",
            Candidate::Damped => "damped",
            Candidate::Arima => "arima",
        }
    }
}

/// A tournament to run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"series": "cpilfesl", "start": "2006-01-01", "candidates": ["naive", "ses", "holt", "damped", "arima"], "horizon": 6, "origins": 4, "seasonal_period": 12}))]
pub struct TournamentRequest {
    /// An economic series of the data plane.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "cpilfesl")]
    pub series: Option<String>,
    /// Or an instrument: its adjusted closes.
    pub instrument: Option<String>,
    /// Or values given inline, oldest first.
    #[schema(value_type = Option<Vec<fiscus_domain::fields::Magnitude>>, min_items = 12, max_items = 5000)]
    pub values: Option<Vec<f64>>,
    /// Or a finance-core account's net movement per period (as `POST /planning/forecasts` reads it).
    pub ledger_account: Option<super::forecast::LedgerAccountRequest>,
    #[schema(format = Date)]
    pub start: Option<String>,
    #[schema(format = Date)]
    pub end: Option<String>,
    /// The methods competing (default all); Naïve 2 always runs, as the benchmark OWA is relative to.
    #[schema(min_items = 1, max_items = 7)]
    pub candidates: Option<Vec<Candidate>>,
    /// Periods forecast from each origin (default 6).
    #[schema(minimum = 1, maximum = 48)]
    pub horizon: Option<u32>,
    /// Rolling origins, each one period later (default 4).
    #[schema(minimum = 1, maximum = 24)]
    pub origins: Option<u32>,
    /// Season length for MASE's scale, the seasonal naïve and Naïve 2 (default 1: none).
    #[schema(minimum = 1, maximum = 52)]
    pub seasonal_period: Option<u32>,
}

/// A tournament as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    pub source: Source,
    pub candidates: Vec<Candidate>,
    pub horizon: u32,
    pub origins: u32,
    pub seasonal_period: u32,
}

pub async fn pin(services: &Services, workspace_id: &str, r: TournamentRequest) -> Result<Tournament, Failure> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let (horizon, origins, m) = (r.horizon.unwrap_or(6), r.origins.unwrap_or(4), r.seasonal_period.unwrap_or(1));
    if !(1..=48).contains(&horizon) {
        errors.push(("horizon", "from 1 to 48".into()));
    }
    if !(1..=24).contains(&origins) {
        errors.push(("origins", "from 1 to 24".into()));
    }
    if !(1..=52).contains(&m) {
        errors.push(("seasonal_period", "from 1 to 52".into()));
    }
    let mut candidates = r.candidates.unwrap_or_else(|| {
        vec![
            Candidate::Naive,
            Candidate::SeasonalNaive,
            Candidate::Naive2,
            Candidate::Ses,
            Candidate::Holt,
            Candidate::Damped,
            Candidate::Arima,
        ]
    });
    if candidates.is_empty() || candidates.len() > 7 {
        errors.push(("candidates", "from 1 to 7 methods".into()));
    }
    if !candidates.contains(&Candidate::Naive2) {
        candidates.push(Candidate::Naive2);
    }
    // Each method once, in the order given (a method named twice would run, and be charged, twice).
    let mut seen = Vec::with_capacity(candidates.len());
    candidates.retain(|c| {
        !seen.contains(c) && {
            seen.push(*c);
            true
        }
    });
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    // Values given inline are counted now; a data plane series when it is read. Too few for the horizon,
    // origins and season is too little data (409 `insufficient_data`), as for a series read from a window.
    let needed = (2 * m as usize).max(8) + horizon as usize + origins as usize - 1;
    if let Some(v) = &r.values
        && v.len() < needed
    {
        return Err(Failure::insufficient_data(format!(
            "{} values given; {needed} are needed for this horizon, origins and season",
            v.len()
        )));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    // The series is read and pinned as a forecast's is.
    let f = super::forecast::pin(
        services,
        workspace_id,
        super::forecast::ForecastRequest {
            series: r.series,
            instrument: r.instrument,
            values: r.values,
            ledger_account: r.ledger_account,
            start: r.start,
            end: r.end,
            model: None,
            horizon: Some(horizon),
            level: None,
            seasonal_period: None,
            fill_gaps: None,
        },
    )
    .await?;
    Ok(Tournament { source: f.source, candidates, horizon, origins, seasonal_period: m })
}

impl Computation for Tournament {
    type Inputs = Loaded;
    const KIND: JobKind = JobKind::Tournament;

    fn size(&self) -> u64 {
        self.candidates.len() as u64
    }

    fn small(&self) -> bool {
        !self.candidates.contains(&Candidate::Arima) && self.origins <= 8
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        let f = super::forecast::Forecast {
            source: self.source.clone(),
            model: super::forecast::ForecastModel::Arima,
            horizon: self.horizon,
            level: 0.9,
            seasonal_period: None,
            fill_gaps: None,
        };
        f.load(services, workspace_id).await
    }

    fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        let y = &data.values;
        let (h, k, m) = (self.horizon as usize, self.origins as usize, self.seasonal_period as usize);
        // The first origin leaves `k - 1 + h` observations to evaluate on; training needs two seasons.
        let first = y.len().checked_sub(h + k - 1).filter(|n| *n >= (2 * m).max(8)).ok_or(Refusal::Engine(
            fiscus_quant::QuantError::InsufficientData {
                what: "series",
                needed: (2 * m).max(8) + h + k - 1,
                got: y.len(),
            },
        ))?;
        let mut scores: Vec<(Candidate, Vec<f64>, Vec<f64>)> =
            self.candidates.iter().map(|c| (*c, Vec::new(), Vec::new())).collect();
        for origin in 0..k {
            control.check()?;
            let n = first + origin;
            let (train, test) = (&y[..n], &y[n..n + h]);
            let scale = mase_scale(train, m);
            for (c, smapes, mases) in scores.iter_mut() {
                let f = forecast(*c, train, h, m)?;
                smapes.push(smape(test, &f));
                mases.push(mase(test, &f, scale));
            }
            control.set_progress(origin as u64 + 1, k as u64);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (bs, bm) = scores
            .iter()
            .find(|(c, _, _)| *c == Candidate::Naive2)
            .map(|(_, s, m)| (mean(s), mean(m)))
            .unwrap_or((f64::NAN, f64::NAN));
        let mut ranked: Vec<(Candidate, f64, f64, f64)> = scores
            .iter()
            .map(|(c, s, mm)| {
                let (s, mm) = (mean(s), mean(mm));
                (*c, s, mm, 0.5 * (s / bs + mm / bm))
            })
            .collect();
        ranked.sort_by(|a, b| a.3.total_cmp(&b.3));
        let table: Vec<Value> = ranked
            .iter()
            .enumerate()
            .map(|(i, (c, s, mm, owa))| json!({"rank": i + 1, "candidate": c.as_str(), "smape": s, "mase": mm, "owa": owa}))
            .collect();
        Ok(json!({
            "horizon": h, "origins": k, "seasonal_period": m, "observations": y.len(),
            "first_origin": first, "benchmark": "naive2",
            "winner": ranked.first().map(|r| r.0.as_str()),
            "ranking": table,
        }))
    }
}

/// `h` forecasts of `c` from `train`.
fn forecast(c: Candidate, train: &[f64], h: usize, m: usize) -> Result<Vec<f64>, Refusal> {
    let last = train[train.len() - 1];
    Ok(match c {
        Candidate::Naive => vec![last; h],
        Candidate::SeasonalNaive => (0..h).map(|i| train[train.len() - m + (i % m)]).collect(),
        Candidate::Naive2 => {
            let index = seasonal_indices(train, m);
            let at = |t: usize| index[t % m];
            let adjusted_last = last / at(train.len() - 1);
            (0..h).map(|i| adjusted_last * at(train.len() + i)).collect()
        }
        Candidate::Ses | Candidate::Holt | Candidate::Damped => {
            let spec = HoltWintersSpec { trend: c != Candidate::Ses, damped: c == Candidate::Damped, season: None };
            fiscus_quant::forecast::fit_holt_winters(train, spec)?.forecast(h)
        }
        Candidate::Arima => {
            let spec = ArimaSpec {
                p: 1,
                d: 1,
                q: 0,
                seasonal_p: 0,
                seasonal_d: 0,
                seasonal_q: 0,
                period: 0,
                trend: ArimaTrend::Drift,
            };
            arima::fit(train, spec)?.forecast(h, 0.9)?.mean
        }
    })
}

/// Classical multiplicative seasonal indices (centred moving average, ratios averaged per season,
/// normalised to mean 1); all ones without a season or with a non-positive value.
fn seasonal_indices(y: &[f64], m: usize) -> Vec<f64> {
    if m <= 1 || y.len() < 2 * m || y.iter().any(|v| *v <= 0.0) {
        return vec![1.0; m.max(1)];
    }
    let half = m / 2;
    let mut sums = vec![0.0; m];
    let mut counts = vec![0usize; m];
    for t in half..y.len() - half {
        let trend = if m.is_multiple_of(2) {
            (0.5 * y[t - half] + y[t - half + 1..t + half].iter().sum::<f64>() + 0.5 * y[t + half]) / m as f64
        } else {
            y[t - half..=t + half].iter().sum::<f64>() / m as f64
        };
        sums[t % m] += y[t] / trend;
        counts[t % m] += 1;
    }
    let raw: Vec<f64> = sums.iter().zip(&counts).map(|(s, c)| if *c > 0 { s / *c as f64 } else { 1.0 }).collect();
    let mean = raw.iter().sum::<f64>() / m as f64;
    raw.iter().map(|r| r / mean).collect()
}

/// M4's sMAPE in percent.
fn smape(actual: &[f64], forecast: &[f64]) -> f64 {
    let h = actual.len() as f64;
    200.0 / h
        * actual
            .iter()
            .zip(forecast)
            .map(|(a, f)| {
                let d = a.abs() + f.abs();
                if d == 0.0 { 0.0 } else { (a - f).abs() / d }
            })
            .sum::<f64>()
}

/// MASE's in-sample scale: the mean absolute seasonal difference of the training data.
fn mase_scale(train: &[f64], m: usize) -> f64 {
    let m = m.min(train.len() - 1).max(1);
    let diffs: Vec<f64> = (m..train.len()).map(|t| (train[t] - train[t - m]).abs()).collect();
    diffs.iter().sum::<f64>() / diffs.len().max(1) as f64
}

fn mase(actual: &[f64], forecast: &[f64], scale: f64) -> f64 {
    let mae = actual.iter().zip(forecast).map(|(a, f)| (a - f).abs()).sum::<f64>() / actual.len() as f64;
    if scale > 0.0 { mae / scale } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m4_measures_and_benchmarks() {
        assert!((smape(&[100.0, 110.0], &[90.0, 110.0]) - 200.0 / 2.0 * (10.0 / 190.0)).abs() < 1e-12);
        assert_eq!(mase_scale(&[1.0, 2.0, 4.0, 7.0], 1), 2.0);
        assert_eq!(mase(&[3.0, 5.0], &[2.0, 2.0], 2.0), 1.0);
        // A purely seasonal positive series: Naïve 2 repeats the season.
        let y: Vec<f64> = (0..24).map(|t| [10.0, 20.0, 30.0, 40.0][t % 4]).collect();
        let f = forecast(Candidate::Naive2, &y, 4, 4).ok().unwrap_or_default();
        for (a, b) in f.iter().zip([10.0, 20.0, 30.0, 40.0]) {
            assert!((a - b).abs() < 1e-9, "{f:?}");
        }
        assert_eq!(forecast(Candidate::SeasonalNaive, &y, 5, 4).ok(), Some(vec![10.0, 20.0, 30.0, 40.0, 10.0]));
    }
}
