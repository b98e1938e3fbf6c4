//! Each model's parameters: their defaults, the ranges their schemas state, and how a request's parameters
//! become them.

use super::*;

/// Each model's parameters, every default applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum Parameters {
    HoltWinters {
        #[serde(default)]
        trend: bool,
        #[serde(default)]
        damped: bool,
        #[serde(default = "none")]
        seasonal: String,
        #[serde(default)]
        period: usize,
        #[serde(default = "twelve")]
        horizon: usize,
    },
    Arima {
        #[serde(default = "one")]
        p: usize,
        #[serde(default)]
        d: usize,
        #[serde(default)]
        q: usize,
        #[serde(default)]
        seasonal_p: usize,
        #[serde(default)]
        seasonal_d: usize,
        #[serde(default)]
        seasonal_q: usize,
        #[serde(default)]
        period: usize,
        #[serde(default = "none")]
        trend: String,
        #[serde(default = "ninety_five")]
        level: f64,
        #[serde(default = "twelve")]
        horizon: usize,
    },
    IsolationForest {
        #[serde(default = "hundred")]
        trees: usize,
        #[serde(default = "two_five_six")]
        max_samples: usize,
        #[serde(default)]
        seed: u64,
        #[serde(default = "five")]
        top: usize,
    },
    RobustZ {
        #[serde(default = "three_and_a_half")]
        threshold: f64,
    },
    LedoitWolf {},
    HistoricalVar {
        #[serde(default = "five_percent")]
        cutoff: f64,
    },
    ParametricVar {
        #[serde(default = "five_percent")]
        cutoff: f64,
    },
    /// A promoted LQM checkpoint, pinned whole when the run is submitted: the run uses exactly the fitted
    /// parameters an operator promoted, whatever is promoted by the time it runs. Never drawn from a
    /// request's `parameters` (the path names a model, and `lqm` is no model's key).
    Lqm {
        model_id: String,
        checkpoint_id: String,
        checkpoint_hash: String,
        algorithm: crate::rules::lqm::family::Algorithm,
        hyperparameters: Value,
        fitted: Value,
        #[serde(default = "twelve")]
        horizon: usize,
    },
}

pub(super) fn none() -> String {
    "none".into()
}
pub(super) fn one() -> usize {
    1
}
pub(super) fn five() -> usize {
    5
}
pub(super) fn twelve() -> usize {
    12
}
pub(super) fn hundred() -> usize {
    100
}
pub(super) fn two_five_six() -> usize {
    256
}
pub(super) fn ninety_five() -> f64 {
    0.95
}
pub(super) fn three_and_a_half() -> f64 {
    3.5
}
pub(super) fn five_percent() -> f64 {
    0.05
}

pub(super) fn invalid(field: &'static str, message: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, message.into())])
}

/// Checks parameters against the model's rules (the ranges its schema states).
pub(super) fn check(p: &Parameters) -> Result<(), Failure> {
    let bad = |field: &'static str, m: &str| Err(invalid(field, format!("parameters.{field}: {m}")));
    match p {
        Parameters::HoltWinters { damped, trend, seasonal, period, horizon } => {
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
            if *damped && !*trend {
                return bad("damped", "a damped model needs a trend");
            }
            match seasonal.as_str() {
                "none" => {}
                "additive" | "multiplicative" if (2..=366).contains(period) => {}
                "additive" | "multiplicative" => return bad("period", "from 2 to 366 with a season"),
                _ => return bad("seasonal", "none, additive or multiplicative"),
            }
        }
        Parameters::Arima { p, d, q, seasonal_p, seasonal_d, seasonal_q, period, trend, level, horizon } => {
            // The state dimension (max(p + P·s, q + Q·s + 1), at most 128 here) prices each likelihood at
            // O(n·r²); a model with more parameters than the series can identify is the engine's
            // `insufficient_data`, and every fit has the engine's budget.
            if *p > 12 || *q > 12 || *d > 2 || *seasonal_p > 2 || *seasonal_q > 2 || *seasonal_d > 1 || *period > 52 {
                return bad("p", "p, q at most 12; d at most 2; P, Q at most 2; D at most 1; period at most 52");
            }
            if !["none", "constant", "drift"].contains(&trend.as_str()) {
                return bad("trend", "none, constant or drift");
            }
            // The engine's rules (`fiscus_quant::forecast::arima::fit`), checked before anything is queued.
            if (*seasonal_p > 0 || *seasonal_q > 0 || *seasonal_d > 0) && *period < 2 {
                return bad("period", "a seasonal part needs a period of at least 2");
            }
            match (trend.as_str(), *d, *seasonal_d) {
                ("constant", 0, 0) | ("drift", 1, 0) | ("none", _, _) => {}
                _ => {
                    return bad("trend", "a constant needs d = seasonal_d = 0 and a drift needs d = 1, seasonal_d = 0");
                }
            }
            if !(level.is_finite() && *level > 0.0 && *level < 1.0) {
                return bad("level", "between 0 and 1");
            }
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
        }
        Parameters::IsolationForest { trees, max_samples, seed, top } => {
            if !(1..=500).contains(trees) || !(2..=4096).contains(max_samples) || *seed > (1 << 53) - 1 {
                return bad("trees", "trees 1 to 500, max_samples 2 to 4096, seed 0 to 2^53 - 1");
            }
            if !(1..=100).contains(top) {
                return bad("top", "from 1 to 100");
            }
        }
        Parameters::RobustZ { threshold } => {
            if !(threshold.is_finite() && *threshold > 0.0 && *threshold <= 100.0) {
                return bad("threshold", "above 0 and at most 100");
            }
        }
        Parameters::LedoitWolf {} => {}
        Parameters::Lqm { horizon, .. } => {
            if !(1..=500).contains(horizon) {
                return bad("horizon", "from 1 to 500");
            }
        }
        Parameters::HistoricalVar { cutoff } | Parameters::ParametricVar { cutoff } => {
            if !(cutoff.is_finite() && *cutoff > 0.0 && *cutoff < 1.0) {
                return bad("cutoff", "between 0 and 1");
            }
        }
    }
    Ok(())
}

/// The parameters of the catalogue's model `key`, every default applied and checked.
pub(super) fn parameters_of(key: &str, given: Option<Value>) -> Result<Parameters, Failure> {
    let mut given = match given {
        None => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(invalid("parameters", "must be an object")),
    };
    if given.contains_key("model") {
        return Err(invalid("parameters", "`model` is not a parameter (the path names the model)"));
    }
    given.insert("model".into(), Value::String(key.into()));
    let parameters: Parameters = serde_json::from_value(Value::Object(given))
        .map_err(|e| invalid("parameters", format!("{e} (see the model's parameters in GET /quant/models/{key})")))?;
    check(&parameters)?;
    Ok(parameters)
}

/// A promoted model's only parameter, `horizon` (default 12).
pub(super) fn lqm_horizon(given: Option<&Value>) -> Result<usize, Failure> {
    match given {
        None => Ok(12),
        Some(Value::Object(m)) => {
            if let Some(k) = m.keys().find(|k| *k != "horizon") {
                return Err(invalid(
                    "parameters",
                    format!("`{k}` is not a parameter of a promoted model (it takes horizon)"),
                ));
            }
            match m.get("horizon") {
                None => Ok(12),
                Some(v) => Ok(v
                    .as_u64()
                    .filter(|h| (1..=500).contains(h))
                    .ok_or_else(|| invalid("parameters", "horizon: from 1 to 500"))?
                    as usize),
            }
        }
        Some(_) => Err(invalid("parameters", "must be an object")),
    }
}

pub(super) fn parameters_fit(key: &str, given: Option<&Value>) -> bool {
    parameters_of(key, given.cloned()).is_ok()
}

pub(super) fn lqm_parameters_fit(given: Option<&Value>) -> bool {
    lqm_horizon(given).is_ok()
}
