//! What a computation reads: instruments' prices from the data plane, pinned to dataset versions when the
//! job is created (so a job run later, or again after its node died, reads exactly the same numbers), or
//! returns given inline.

use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::features::Formula;
use fiscus_data_core::tables::market::{self, Rows};
use fiscus_domain::error_code::ErrorCode;
use fiscus_quant::QuantError;
use serde::{Deserialize, Serialize};

use crate::governed::Failure;
pub use crate::quality::{Quality, Warning, WarningCode};
use crate::services::Services;

/// One instrument's prices, pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedSeries {
    pub symbol: String,
    pub instrument: String,
    /// The prices dataset (its integer id) and its content hash.
    pub dataset: i64,
    pub content_hash: String,
}

/// Instruments and a date range, pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedPrices {
    pub instruments: Vec<PinnedSeries>,
    pub start: Option<String>,
    pub end: Option<String>,
}

/// Whether the workspace is entitled, now, to the data of `kind` a computation reads: the entitlement the
/// data routes check (its scope, `Kind::scope`), read from the cached workspace row, which a change of
/// standing clears on every node before it returns (invariant 7). Checked where the data is read, in the
/// request and again at every step of queued work, so work queued before an entitlement was withdrawn
/// reads nothing after it (issue 54).
pub async fn entitled(services: &Services, workspace_id: &str, kind: Kind) -> Result<(), Failure> {
    let scope = kind.scope();
    let held = services.store.workspace(workspace_id).await?.entitlement();
    if held.contains(scope) {
        return Ok(());
    }
    Err(Failure::refused_with(
        ErrorCode::EntitlementMissing,
        format!("this workspace is not entitled to `{scope}`, which the data this computation reads needs"),
        vec![("required_scope", serde_json::json!(scope))],
    ))
}

/// Resolves symbols (or `ins_…` ids) to their newest prices datasets; an unknown one or one without prices
/// is a field error naming it.
pub async fn pin(
    services: &Services,
    workspace_id: &str,
    field: &'static str,
    instruments: &[String],
    start: Option<String>,
    end: Option<String>,
) -> Result<PinnedPrices, Failure> {
    entitled(services, workspace_id, Kind::Prices).await?;
    let mut conn = services.store.read().await?;
    let mut pinned: Vec<PinnedSeries> = Vec::with_capacity(instruments.len());
    for uid in instruments {
        let found = if fiscus_data_core::rules::is_name(uid) {
            match market::get_instrument(&mut conn, workspace_id, uid).await {
                Ok(i) => Some(i),
                Err(fiscus_store::StoreError::NotFound) => None,
                Err(e) => return Err(e.into()),
            }
        } else {
            None
        };
        let Some(i) = found else {
            return Err(Failure::missing(field, format!("no instrument `{uid}` in this workspace")));
        };
        if pinned.iter().any(|p| p.instrument == i.id) {
            if instruments.iter().filter(|u| *u == uid).count() > 1 {
                return Err(Failure::Invalid(vec![(field, format!("`{uid}` is named twice"))]));
            }
            // Two names of one instrument (its symbol and its id): a fact of the workspace's data.
            return Err(Failure::refused(
                ErrorCode::Conflict,
                format!("`{uid}` names instrument {} ({}), which another name given names already", i.id, i.symbol),
            ));
        }
        let Some(number) = market::latest_dataset(&mut conn, workspace_id, Rows::Prices, &i.id).await? else {
            return Err(Failure::missing(field, format!("`{uid}` has no prices in this workspace")));
        };
        let d =
            fiscus_data_core::tables::datasets::get(&mut conn, services.store.seal_key(), workspace_id, number).await?;
        if d.kind != Kind::Prices {
            return Err(Failure::internal(format!("dataset {number} holds {}", d.kind.as_str())));
        }
        observed(field, &d)?;
        pinned.push(PinnedSeries { symbol: i.symbol, instrument: i.id, dataset: number, content_hash: d.content_hash });
    }
    Ok(PinnedPrices { instruments: pinned, start, end })
}

/// Computations need observations: a synthetic dataset (imported with `--synthetic`) never feeds one, and
/// the newest dataset is never silently passed over for an older observed one.
pub fn observed(field: &'static str, d: &fiscus_data_core::tables::datasets::Dataset) -> Result<(), Failure> {
    match d.provenance {
        fiscus_data_core::rules::Provenance::Observed => Ok(()),
        fiscus_data_core::rules::Provenance::Synthetic => Err(Failure::Invalid(vec![(
            field,
            format!("dataset {} ({}) is synthetic; computations read observed data only", d.number, d.name),
        )])),
    }
}

/// Prices on the dates every instrument has one (adjusted close where the dataset has it, else close),
/// inside the range, oldest first, with what was dropped to align them and the gaps the dates have.
pub struct Panel {
    pub dates: Vec<String>,
    /// Row per date, column per instrument.
    pub prices: Vec<Vec<f64>>,
    pub quality: Quality,
}

impl Panel {
    /// Simple returns `p_t / p_{t-1} - 1`, one row per date after the first.
    pub fn returns(&self) -> Vec<Vec<f64>> {
        self.prices.windows(2).map(|w| w[1].iter().zip(&w[0]).map(|(b, a)| b / a - 1.0).collect()).collect()
    }
}

/// A bar's price, or why it has none a computation can use.
fn price(b: &fiscus_data_core::tables::market::Bar) -> Result<f64, &'static str> {
    let Some(raw) = b.adj_close.as_deref().or(b.close.as_deref()) else {
        return Err("it has no close");
    };
    match raw.parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 => Ok(p),
        Ok(0.0) => Err("its close is 0 (a return across it would span two periods)"),
        Ok(p) if p < 0.0 => Err("its close is negative"),
        _ => Err("its close is not a number"),
    }
}

/// Reads the pinned series (from the series cache) and aligns them on common dates.
pub async fn load(services: &Services, workspace_id: &str, pinned: &PinnedPrices) -> Result<Panel, Failure> {
    entitled(services, workspace_id, Kind::Prices).await?;
    let mut columns = Vec::with_capacity(pinned.instruments.len());
    for p in &pinned.instruments {
        let series = services.series.series(&services.store, workspace_id, &p.instrument, p.dataset).await?;
        columns.push(series);
    }
    let from = pinned.start.as_deref().unwrap_or("");
    let to = pinned.end.as_deref().unwrap_or("9999-12-31");
    let mut quality = Quality::default();
    // Each series' usable prices in range; the ones it cannot use are named, by reason.
    let mut usable: Vec<Vec<(&str, f64)>> = Vec::with_capacity(columns.len());
    for (s, p) in columns.iter().zip(&pinned.instruments) {
        let mut ok = Vec::with_capacity(s.bars.len());
        let mut refused: Vec<(&'static str, Vec<&str>)> = Vec::new();
        for b in s.bars.iter().filter(|b| b.date.as_str() >= from && b.date.as_str() <= to) {
            match price(b) {
                Ok(v) => ok.push((b.date.as_str(), v)),
                Err(why) => match refused.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, dates)) => dates.push(b.date.as_str()),
                    None => refused.push((why, vec![b.date.as_str()])),
                },
            }
        }
        for (why, dates) in refused {
            quality.dropped(&p.symbol, why, &dates);
        }
        usable.push(ok);
    }
    // The dates every series has a usable price on: a merge of sorted dates.
    let mut dates: Vec<&str> = usable.first().map(|c| c.iter().map(|(d, _)| *d).collect()).unwrap_or_default();
    for c in usable.iter().skip(1) {
        let mut at = 0;
        dates.retain(|d| {
            while at < c.len() && c[at].0 < *d {
                at += 1;
            }
            at < c.len() && c[at].0 == *d
        });
    }
    let mut prices = vec![Vec::with_capacity(usable.len()); dates.len()];
    for (c, p) in usable.iter().zip(&pinned.instruments) {
        let mut row = 0;
        let mut unshared = Vec::new();
        for (d, v) in c {
            if dates.get(row) == Some(d) {
                prices[row].push(*v);
                row += 1;
            } else {
                unshared.push(*d);
            }
        }
        quality.dropped(&p.symbol, "not every instrument has a price on those dates", &unshared);
    }
    let dates: Vec<String> = dates.into_iter().map(str::to_string).collect();
    let one = (pinned.instruments.len() == 1).then(|| pinned.instruments[0].symbol.as_str());
    quality.bridge(&dates, one);
    Ok(Panel { dates, prices, quality })
}

/// Returns given in a request: each asset's simple periodic returns (0.01 is 1 %), oldest first, by asset
/// name (pandas' `to_dict(orient="list")`). Series of different lengths are aligned on their last value (the
/// same most recent period) and the panel is the periods every asset has, as instruments' histories are
/// aligned on the dates every one has: a return series per asset by construction, where parallel arrays
/// would need a rule no schema states. Each return is above -1 and at most 100 (`openapi/rules.rs`).
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(transparent)]
#[schema(example = json!({"ALPHA": [0.01, -0.004, 0.007], "BETA": [-0.002, 0.006, 0.001]}))]
pub struct ReturnColumns(pub std::collections::BTreeMap<String, Vec<f64>>);

impl ReturnColumns {
    /// The panel as the engine reads it (rows of periods, assets in name order), aligned on the last value.
    pub fn into_rows(self) -> InlineReturns {
        let (assets, values) = aligned(&self.0);
        InlineReturns { assets, values }
    }
}

/// Named series as rows (names in order): each series' last values, as many as the shortest has, so that
/// the last row is every series' last value.
pub fn aligned(columns: &std::collections::BTreeMap<String, Vec<f64>>) -> (Vec<String>, Vec<Vec<f64>>) {
    let periods = columns.values().map(Vec::len).min().unwrap_or(0);
    let tails: Vec<&[f64]> = columns.values().map(|c| &c[c.len() - periods..]).collect();
    (columns.keys().cloned().collect(), (0..periods).map(|t| tails.iter().map(|c| c[t]).collect()).collect())
}

/// Values by asset name (weights, shock moves) as the engine reads them, in the assets' order: a name not
/// among the assets is 409 `conflict`; an asset not named is 0.
pub fn by_asset(
    weights: &std::collections::BTreeMap<String, f64>,
    assets: &[String],
    what: &str,
) -> Result<Vec<f64>, Failure> {
    if let Some(unknown) = weights.keys().find(|k| !assets.contains(k)) {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!("{what} names `{unknown}`, which is not an asset of the request"),
        ));
    }
    Ok(assets.iter().map(|a| weights.get(a).copied().unwrap_or(0.0)).collect())
}

/// Returns as pinned in a job: one row per period, one column per asset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineReturns {
    /// The assets' names, in column order.
    #[schema(
        value_type = Vec<fiscus_domain::fields::Text<1, 64>>,
        inline,
        min_items = 1,
        max_items = 1000,
        example = json!(["ALPHA", "BETA"])
    )]
    pub assets: Vec<String>,
    /// Simple periodic returns (0.01 is 1 %), one row per period, oldest first; each above -1 and at most
    /// 100, every row as wide as `assets`.
    #[schema(min_items = 2, max_items = 10000, example = json!([[0.01, -0.002], [-0.004, 0.006], [0.007, 0.001]]))]
    pub values: Vec<Vec<f64>>,
}

impl InlineReturns {
    /// Field errors: names 1 to 64 visible characters and unique, every row as wide as `assets`.
    pub fn check(&self, field: &'static str) -> Result<(), Failure> {
        let n = self.assets.len();
        let bad = |m: String| Err(Failure::Invalid(vec![(field, m)]));
        if n == 0 || n > 1000 {
            return bad(format!("between 1 and 1000 assets, not {n}"));
        }
        if self.values.len() < 2 || self.values.len() > 10_000 {
            return bad(format!("between 2 and 10000 periods, not {}", self.values.len()));
        }
        for (i, a) in self.assets.iter().enumerate() {
            if !fiscus_domain::fields::text_ok(a, 1, 64) {
                return bad(format!("asset `{a}` must be 1 to 64 characters of text, not blank"));
            }
            if self.assets[..i].contains(a) {
                return bad(format!("asset `{a}` is named twice"));
            }
        }
        if let Some(r) = self.values.iter().position(|row| row.len() != n) {
            return bad(format!("row {} has {} values for {n} assets", r + 1, self.values[r].len()));
        }
        // A simple return below -100 % is a loss beyond everything held; above 10,000 % in one period is not a
        // return series but a unit mistake.
        for (r, row) in self.values.iter().enumerate() {
            if let Some(c) = row.iter().position(|v| !(v.is_finite() && *v > -1.0 && *v <= 100.0)) {
                return bad(format!("row {} asset {}: a return must be above -1 and at most 100", r + 1, c + 1));
            }
        }
        Ok(())
    }
}

/// Where a computation's returns come from, as pinned in its request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Returns {
    DataPlane(PinnedPrices),
    Inline(InlineReturns),
}

/// Returns loaded for computing: asset names, the matrix rows, and the dates they span (data plane only).
pub struct LoadedReturns {
    pub assets: Vec<(String, Option<String>)>,
    pub rows: Vec<Vec<f64>>,
    pub first_date: Option<String>,
    pub last_date: Option<String>,
    /// Data plane only: what was dropped and bridged, and the dates' frequency.
    pub quality: Option<Quality>,
}

impl Returns {
    pub fn assets(&self) -> usize {
        match self {
            Returns::DataPlane(p) => p.instruments.len(),
            Returns::Inline(r) => r.assets.len(),
        }
    }

    pub async fn load(&self, services: &Services, workspace_id: &str) -> Result<LoadedReturns, Failure> {
        match self {
            Returns::Inline(r) => Ok(LoadedReturns {
                assets: r.assets.iter().map(|a| (a.clone(), None)).collect(),
                rows: r.values.clone(),
                first_date: None,
                last_date: None,
                quality: None,
            }),
            Returns::DataPlane(p) => {
                let panel = load(services, workspace_id, p).await?;
                Ok(LoadedReturns {
                    assets: p.instruments.iter().map(|i| (i.symbol.clone(), Some(i.instrument.clone()))).collect(),
                    rows: panel.returns(),
                    first_date: panel.dates.first().cloned(),
                    last_date: panel.dates.last().cloned(),
                    quality: Some(panel.quality),
                })
            }
        }
    }
}

/// Field errors of a date range: dates `YYYY-MM-DD`. An `end` before `start` is an empty window, as on reads
/// (the computation then finds too few observations: 409 `insufficient_data`), since JSON Schema cannot
/// compare two fields and the document states every rule that makes a body invalid.
pub fn check_range(errors: &mut Vec<(&'static str, String)>, start: Option<&str>, end: Option<&str>) {
    let date = |d: &str| fiscus_data_core::rules::values::iso(d).as_deref() == Some(d);
    if start.is_some_and(|d| !date(d)) {
        errors.push(("start", "must be a date (YYYY-MM-DD)".into()));
    }
    if end.is_some_and(|d| !date(d)) {
        errors.push(("end", "must be a date (YYYY-MM-DD)".into()));
    }
}

/// The returns a request names: instruments (pinned now) or inline returns, exactly one of them.
pub async fn returns_of(
    services: &Services,
    workspace_id: &str,
    instruments: Option<Vec<String>>,
    start: Option<String>,
    end: Option<String>,
    inline: Option<ReturnColumns>,
) -> Result<Returns, Failure> {
    match (instruments, inline) {
        (Some(list), None) => {
            if list.is_empty() || list.len() > 500 {
                return Err(Failure::Invalid(vec![("instruments", "between 1 and 500 instruments".into())]));
            }
            Ok(Returns::DataPlane(pin(services, workspace_id, "instruments", &list, start, end).await?))
        }
        (None, Some(r)) => {
            if start.is_some() || end.is_some() {
                return Err(Failure::Invalid(vec![(
                    "start",
                    "a date range applies to instruments, not to returns".into(),
                )]));
            }
            let r = r.into_rows();
            r.check("returns")?;
            Ok(Returns::Inline(r))
        }
        _ => Err(Failure::Invalid(vec![("instruments", "give either instruments or returns".into())])),
    }
}

/// A feature of the catalogue (`GET /quant/features`) computed with the engine from prices, oldest first;
/// `None` during the feature's warm-up.
pub fn feature_values(formula: Formula, prices: &[f64]) -> Result<Vec<Option<f64>>, QuantError> {
    use fiscus_quant::features as f;
    match formula {
        Formula::SimpleReturn => f::simple_return(prices),
        Formula::LogReturn => f::log_return(prices),
        Formula::RollingVolatility { window, periods_per_year } => {
            f::rolling_volatility(prices, window, f64::from(periods_per_year))
        }
        Formula::Momentum { skip, lookback } => f::momentum(prices, skip, lookback),
        Formula::Drawdown => f::drawdown(prices),
    }
}
