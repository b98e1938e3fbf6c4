//! Running a pinned model run: loading its input and calling the engine.

use super::*;
use crate::compute::Computation;
use fiscus_domain::compute::JobKind;

/// The engine's model for a run's ARIMA parameters.
fn arima_spec(order: [usize; 3], seasonal: [usize; 4], trend: &str) -> ArimaSpec {
    let trend = match trend {
        "constant" => ArimaTrend::Constant,
        "drift" => ArimaTrend::Drift,
        _ => ArimaTrend::None,
    };
    let [p, d, q] = order;
    let [seasonal_p, seasonal_d, seasonal_q, period] = seasonal;
    ArimaSpec { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend }
}

impl ModelRun {
    /// Refuses before anything is queued what the run's series would make fail: an ARIMA model against its
    /// series (too few observations after differencing for its lags and parameters, a constant series), by
    /// the engine's own rules (`arima::check`, which the fit applies first), and a seasonal model against
    /// an instrument's dates with gaps (422). So a run is refused at submission with the engine's problem,
    /// never accepted (202) to fail later. Other models are answered in the request, where the engine's
    /// refusal is the answer.
    pub(super) async fn preflight(&self, services: &Services, workspace_id: &str) -> Result<(), Failure> {
        let seasonal = match &self.parameters {
            Parameters::HoltWinters { seasonal, .. } => seasonal != "none",
            Parameters::Arima { seasonal_p, seasonal_d, seasonal_q, period, .. } => {
                *period > 0 && seasonal_p + seasonal_d + seasonal_q > 0
            }
            _ => false,
        };
        let arima = matches!(self.parameters, Parameters::Arima { .. });
        if !(seasonal || arima) {
            return Ok(());
        }
        let Loaded::Series { values, quality, .. } = self.load(services, workspace_id).await? else {
            return Ok(());
        };
        // A season is counted in periods: across a gap in the dates it would be out of step.
        if seasonal && let Some(g) = quality.as_ref().and_then(|q| q.gaps()) {
            return Err(Failure::Invalid(vec![(
                "parameters",
                format!(
                    "a seasonal model needs consecutive periods, and the series has {} gap{} (first {}); fit without a season, or give \
                     the series inline with its gaps filled",
                    g.count,
                    if g.count == 1 { "" } else { "s" },
                    g.dates.first().map_or("", String::as_str)
                ),
            )]));
        }
        let Parameters::Arima { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend, .. } = &self.parameters
        else {
            return Ok(());
        };
        let spec = arima_spec([*p, *d, *q], [*seasonal_p, *seasonal_d, *seasonal_q, *period], trend);
        arima::check(&values, spec).map_err(crate::compute::refused_by_engine)
    }
}

impl Computation for ModelRun {
    type Inputs = Loaded;
    const KIND: JobKind = JobKind::ModelRun;

    fn size(&self) -> u64 {
        1
    }

    /// Model runs are answered in the request, except ARIMA fits (their likelihood search can take seconds).
    fn small(&self) -> bool {
        !matches!(self.parameters, Parameters::Arima { .. })
    }

    fn quality(data: &Loaded) -> Option<fiscus_kernel::inputs::Quality> {
        match data {
            Loaded::Series { quality, .. } => quality.clone(),
            Loaded::Panel(returns) => returns.quality.clone(),
            Loaded::Features { .. } => None,
        }
    }

    async fn load(&self, services: &Services, workspace_id: &str) -> Result<Loaded, Failure> {
        match &self.input {
            Input::Series(Series::Inline { values }) => {
                Ok(Loaded::Series { values: values.clone(), dates: None, quality: None })
            }
            Input::Series(Series::DataPlane { prices, transform }) => {
                let panel = fiscus_kernel::inputs::load(services, workspace_id, prices).await?;
                let quality = Some(panel.quality.clone());
                let (values, dates) = match transform {
                    Transform::Price => (panel.prices.iter().map(|r| r[0]).collect(), panel.dates),
                    Transform::Return => {
                        (panel.returns().iter().map(|r| r[0]).collect(), panel.dates.into_iter().skip(1).collect())
                    }
                };
                Ok(Loaded::Series { values, dates: Some(dates), quality })
            }
            Input::Panel(returns) => Ok(Loaded::Panel(returns.load(services, workspace_id).await?)),
            Input::Features(FeatureSet::Inline { columns, rows }) => {
                Ok(Loaded::Features { columns: columns.clone(), rows: rows.clone(), dates: None })
            }
            Input::Features(FeatureSet::DataPlane { prices, features }) => {
                load_features(services, workspace_id, prices, features).await
            }
        }
    }

    fn run(&self, data: Loaded, control: &Control) -> Result<Value, Refusal> {
        control.check()?;
        let out = match (&self.parameters, data) {
            (
                Parameters::HoltWinters { trend, damped, seasonal, period, horizon },
                Loaded::Series { values, dates, .. },
            ) => {
                let season = match seasonal.as_str() {
                    "additive" => Some(Season::Additive { period: *period }),
                    "multiplicative" => Some(Season::Multiplicative { period: *period }),
                    _ => None,
                };
                let spec = HoltWintersSpec { trend: *trend, damped: *damped, season };
                let fit = fiscus_quant::forecast::fit_holt_winters(&values, spec)?;
                json!({
                    "forecast": fit.forecast(*horizon),
                    "smoothing": {"alpha": fit.smoothing.alpha, "beta": fit.smoothing.beta, "gamma": fit.smoothing.gamma, "phi": fit.smoothing.phi},
                    "sse": fit.sse, "aic": fit.aic(), "observations": values.len(),
                    "last_date": dates.and_then(|d| d.last().cloned()),
                })
            }
            (
                Parameters::Arima { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend, level, horizon },
                Loaded::Series { values, dates, .. },
            ) => {
                let spec = arima_spec([*p, *d, *q], [*seasonal_p, *seasonal_d, *seasonal_q, *period], trend);
                let fit = arima::fit(&values, spec)?;
                control.check()?;
                let f = fit.forecast(*horizon, *level)?;
                json!({
                    "forecast": f.mean, "standard_error": f.standard_error, "lower": f.lower, "upper": f.upper,
                    "level": level,
                    "coefficients": {"trend": fit.trend_coefficient, "ar": fit.ar, "ma": fit.ma,
                                     "seasonal_ar": fit.seasonal_ar, "seasonal_ma": fit.seasonal_ma, "sigma2": fit.sigma2},
                    "log_likelihood": fit.log_likelihood, "aic": fit.aic(), "bic": fit.bic(), "observations": fit.nobs,
                    "work": fit.work,
                    "last_date": dates.and_then(|d| d.last().cloned()),
                })
            }
            (Parameters::IsolationForest { trees, max_samples, seed, top }, Loaded::Series { values, dates, .. }) => {
                let x = Matrix::from_rows(&values.iter().map(|v| vec![*v]).collect::<Vec<_>>())?;
                let forest = IsolationForest::fit(
                    &x,
                    IsolationForestConfig { trees: *trees, max_samples: *max_samples, seed: *seed },
                )?;
                let scores = forest.scores(&x)?;
                let most = IsolationForest::top_k(&scores, *top);
                let anomalies: Vec<Value> = most
                    .iter()
                    .map(|i| json!({"index": i, "value": values[*i], "score": scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))}))
                    .collect();
                json!({"scores": scores, "most_anomalous": anomalies, "observations": values.len()})
            }
            (
                Parameters::IsolationForest { trees, max_samples, seed, top },
                Loaded::Features { columns, rows, dates },
            ) => {
                let x = Matrix::from_rows(&rows)?;
                let forest = IsolationForest::fit(
                    &x,
                    IsolationForestConfig { trees: *trees, max_samples: *max_samples, seed: *seed },
                )?;
                let scores = forest.scores(&x)?;
                let most = IsolationForest::top_k(&scores, *top);
                let anomalies: Vec<Value> = most
                    .iter()
                    .map(|i| {
                        let values: serde_json::Map<String, Value> =
                            columns.iter().zip(&rows[*i]).map(|(c, v)| (c.clone(), json!(v))).collect();
                        json!({"index": i, "values": values, "score": scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))})
                    })
                    .collect();
                json!({
                    "columns": columns, "scores": scores, "most_anomalous": anomalies, "observations": rows.len(),
                    "first_date": dates.as_ref().and_then(|d| d.first()), "last_date": dates.as_ref().and_then(|d| d.last()),
                })
            }
            (Parameters::RobustZ { threshold }, Loaded::Series { values, dates, .. }) => {
                let z = fiscus_quant::anomaly::robust_z::robust_z_scores(&values)?;
                let outliers: Vec<Value> = z
                    .outliers(*threshold)
                    .iter()
                    .map(|i| json!({"index": i, "value": values[*i], "z": z.scores[*i], "date": dates.as_ref().and_then(|d| d.get(*i))}))
                    .collect();
                json!({"median": z.median, "scale": z.scale, "scores": z.scores, "outliers": outliers})
            }
            (Parameters::LedoitWolf {}, Loaded::Panel(data)) => {
                let m = Matrix::from_rows(&data.rows)?;
                let s = fiscus_quant::covariance::ledoit_wolf(&m)?;
                let rows: Vec<Vec<f64>> = (0..s.matrix.rows()).map(|r| s.matrix.row(r).to_vec()).collect();
                json!({
                    "assets": data.assets.iter().map(|(a, _)| a).collect::<Vec<_>>(), "covariance": rows,
                    "shrinkage": s.shrinkage, "target_mean_variance": s.target_mean_variance, "periods": data.rows.len(),
                })
            }
            (Parameters::HistoricalVar { cutoff }, Loaded::Series { values, .. }) => {
                let t = fiscus_quant::value_at_risk::historical(&values, *cutoff)?;
                json!({"cutoff": cutoff, "var": t.var, "cvar": t.cvar, "observations": values.len()})
            }
            (Parameters::ParametricVar { cutoff }, Loaded::Series { values, .. }) => {
                let t = fiscus_quant::value_at_risk::parametric(&values, *cutoff)?;
                json!({"cutoff": cutoff, "var": t.var, "cvar": t.cvar, "observations": values.len()})
            }
            (
                Parameters::Lqm { algorithm, hyperparameters, fitted, horizon, checkpoint_hash, .. },
                Loaded::Series { values, dates, .. },
            ) => {
                let mut out = crate::lqm::fit::apply(*algorithm, hyperparameters, fitted, &values, *horizon)?;
                out["checkpoint_hash"] = json!(checkpoint_hash);
                out["last_date"] = json!(dates.and_then(|d| d.last().cloned()));
                out
            }
            _ => return Err(Refusal::Failure(Failure::internal("a model run's input does not fit its model"))),
        };
        control.set_progress(1, 1);
        Ok(out)
    }
}
