//! What a computation's answer says about the data it read: each observation it dropped and why, each gap
//! its returns span, and the frequency it inferred and annualised with. A computation never drops or
//! bridges silently: a close of 0 that would make a return span two periods is named in its `warnings`.

use fiscus_data_core::rules::frequency::{self, Frequency};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// At most this many dates are listed per warning (the count says how many there are).
pub const DATES_LISTED: usize = 20;

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// A price that is missing, not a number, zero or negative, or on a date not every instrument has.
    ObservationDropped,
    /// A return or a step spans more than one period.
    GapBridged,
    /// The periods a gap misses were filled, as the request allowed.
    GapFilled,
    /// The periods per year were read from the dates.
    FrequencyInferred,
    /// The request's `periods_per_year` differs from the frequency the dates show: what the request said is
    /// used, and this says what the dates would have given.
    FrequencyOverridden,
    /// Annual figures extrapolate less than a year of returns (a compounded annual return of a few periods
    /// can be any size).
    ShortHistory,
    /// The inputs leave the answer degenerate: fewer periods than assets (a singular sample covariance), a
    /// portfolio whose estimated volatility is near zero (its Sharpe ratio means nothing).
    Degenerate,
    /// A figure defined on another frequency (a 21-trading-day window) was not computed on these dates.
    FrequencyMismatch,
}

/// One thing a computation did to its data that a reader must know.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Warning {
    pub code: WarningCode,
    /// The instrument or series concerned, when it is one.
    #[schema(example = "CL")]
    pub symbol: Option<String>,
    #[schema(example = "1 observation of CL dropped: its close is 0")]
    pub message: String,
    /// How many observations (or gaps) it concerns.
    pub count: u64,
    /// The first of them (at most 20): dates, or `from/to` intervals (ISO 8601) for gaps.
    #[schema(example = json!(["2020-04-20"]))]
    pub dates: Vec<String>,
}

/// The data's frequency and what was done to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    pub frequency: Frequency,
    pub warnings: Vec<Warning>,
}

impl Default for Quality {
    fn default() -> Quality {
        Quality { frequency: Frequency::Irregular, warnings: Vec::new() }
    }
}

impl Quality {
    /// Periods per year: the request's when it gives one, else the frequency's (252 for an irregular
    /// series, the daily convention, said so in a warning).
    pub fn periods_per_year(&mut self, requested: Option<f64>) -> f64 {
        if let Some(p) = requested {
            // Said by the request, used as said; when the dates show another frequency, the answer says so
            // rather than annualising months as trading days in silence.
            if let Some(shown) = self.frequency.periods_per_year()
                && shown != p
            {
                self.warnings.push(Warning {
                    code: WarningCode::FrequencyOverridden,
                    symbol: None,
                    message: format!(
                        "annualised with {p} periods per year as requested; the dates are {}, which is {shown}",
                        self.frequency.as_str()
                    ),
                    count: 0,
                    dates: Vec::new(),
                });
            }
            return p;
        }
        match self.frequency.periods_per_year() {
            Some(p) => {
                self.warnings.push(Warning {
                    code: WarningCode::FrequencyInferred,
                    symbol: None,
                    message: format!("the dates are {}: annualised with {p} periods per year", self.frequency.as_str()),
                    count: 0,
                    dates: Vec::new(),
                });
                p
            }
            None => {
                self.warnings.push(Warning {
                    code: WarningCode::FrequencyInferred,
                    symbol: None,
                    message: "the dates are irregular: annualised with 252 periods per year (give periods_per_year)"
                        .into(),
                    count: 0,
                    dates: Vec::new(),
                });
                252.0
            }
        }
    }

    /// Says that annual figures extrapolate `returns` returns when they are fewer than a year's `periods`.
    pub fn short_history(&mut self, returns: usize, periods: f64) {
        if (returns as f64) < periods {
            self.warnings.push(Warning {
                code: WarningCode::ShortHistory,
                symbol: None,
                message: format!(
                    "annual figures extrapolate {returns} return{} to a year of {periods} periods",
                    plural(returns as u64)
                ),
                count: returns as u64,
                dates: Vec::new(),
            });
        }
    }

    /// Adds a warning of `code` about the whole computation.
    pub fn note(&mut self, code: WarningCode, message: String) {
        self.warnings.push(Warning { code, symbol: None, message, count: 0, dates: Vec::new() });
    }

    /// The warning naming the gaps the dates have, if they have any.
    pub fn gaps(&self) -> Option<&Warning> {
        self.warnings.iter().find(|w| w.code == WarningCode::GapBridged)
    }

    /// Names the gaps between consecutive dates that the computation steps over.
    pub fn bridge(&mut self, dates: &[String], symbol: Option<&str>) {
        let (f, gaps) = frequency::gaps(dates);
        self.frequency = f;
        if gaps.is_empty() {
            return;
        }
        let missing: u64 = gaps.iter().map(|g| g.missing).sum();
        self.warnings.push(Warning {
            code: WarningCode::GapBridged,
            symbol: symbol.map(str::to_string),
            message: format!(
                "{} step{} of the {} dates span{} a gap (about {missing} period{} missing): each is one return or step",
                gaps.len(),
                plural(gaps.len() as u64),
                f.as_str(),
                if gaps.len() == 1 { "s" } else { "" },
                plural(missing),
            ),
            count: gaps.len() as u64,
            dates: gaps.iter().take(DATES_LISTED).map(|g| format!("{}/{}", g.from, g.to)).collect(),
        });
    }

    /// Records observations dropped for one reason.
    pub fn dropped(&mut self, symbol: &str, why: &str, dates: &[&str]) {
        if dates.is_empty() {
            return;
        }
        let n = dates.len() as u64;
        self.warnings.push(Warning {
            code: WarningCode::ObservationDropped,
            symbol: Some(symbol.to_string()),
            message: format!("{n} observation{} of {symbol} dropped: {why}", plural(n)),
            count: n,
            dates: dates.iter().take(DATES_LISTED).map(|d| d.to_string()).collect(),
        });
    }

    /// Adds `warnings` and `frequency` to a computation's output object (and `periods_per_year` when it
    /// annualised), leaving members it already has.
    pub fn annotate(&self, output: &mut Value, periods_per_year: Option<f64>) {
        let Some(map) = output.as_object_mut() else { return };
        map.entry("warnings").or_insert_with(|| serde_json::to_value(&self.warnings).unwrap_or_default());
        map.entry("frequency").or_insert_with(|| Value::from(self.frequency.as_str()));
        if let Some(p) = periods_per_year {
            map.entry("periods_per_year").or_insert_with(|| Value::from(p));
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
