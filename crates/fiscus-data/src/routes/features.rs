//! Quant features: derived series computed on read with `fiscus-quant` from an instrument's observed
//! prices, each page naming the dataset version (and its content hash) the values come from. Nothing is
//! stored: the same dataset version always gives the same values.

use axum::Json;
use axum::extract::{OriginalUri, State};
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::features::{FEATURES, FeatureDefinition, find};
use fiscus_data_core::tables::market::{self, Rows};
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::columnar::{ColumnSpec, ColumnType, Representation, Table, Values};
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use super::instruments::DatasetRef;
use super::{date, range};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

#[derive(Serialize, utoipa::ToSchema)]
pub struct FeatureView {
    /// Always `feature`.
    pub object: &'static str,
    #[serde(flatten)]
    pub definition: FeatureDefinition,
    /// What it is computed from.
    #[schema(example = "the adjusted close of an instrument's prices (the close when a dataset has none)")]
    pub input: &'static str,
}

fn view(d: &FeatureDefinition) -> FeatureView {
    FeatureView {
        object: "feature",
        definition: *d,
        input: "the adjusted close of an instrument's prices (the close when a dataset has none)",
    }
}

/// The features this deployment computes.
///
/// The catalogue is fixed in this build: each feature's key, title,
/// description, `unit`, `warmup` (the observations it needs before its first value) and the same computation
/// in pandas, all computed from an instrument's adjusted close (its close when a dataset has none). Needs
/// `quant:features:read`; reads no workspace data and stores nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/features",
    responses((status = 200, description = "Every feature", body = ListPage<FeatureView>))
)]
pub async fn get_features(_ctx: Ctx) -> Json<ListPage<FeatureView>> {
    Json(ListPage::complete(FEATURES.iter().map(view).collect()))
}

fn feature(key: &str) -> Result<&'static FeatureDefinition, ApiError> {
    find(key).ok_or_else(|| ApiError::not_found().detail("no such feature"))
}

/// One feature's definition.
///
/// The definition `GET /quant/features` lists, by key; an unknown key is 404. Needs `quant:features:read`;
/// reads no workspace data and stores nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/features/{key}",
    params(("key" = String, Path, description = "The feature's key", example = "volatility_21d")),
    responses((status = 200, description = "The feature", body = FeatureView), (status = 404, description = "No such feature"))
)]
pub async fn get_feature(_ctx: Ctx, ApiPath(key): ApiPath<String>) -> Result<Json<FeatureView>, ApiError> {
    Ok(Json(view(feature(&key)?)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ValuesQuery {
    /// The instrument, by id (`ins_…`) or symbol.
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "AAPL")]
    pub instrument: String,
    /// First date (inclusive). Values are computed over the whole series, so a window near `start` still
    /// sees its history.
    #[param(format = Date, example = "2020-01-01")]
    pub start: Option<String>,
    /// Last date (inclusive).
    #[param(format = Date, example = "2020-12-31")]
    pub end: Option<String>,
    /// The prices dataset to compute from (default: the newest holding the instrument).
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
    /// Values per page, 1 to 10000 (default 1000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
    /// Values after this date (exclusive): the previous page's `next_after_id`.
    #[param(format = Date)]
    pub after_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct FeatureValue {
    #[schema(format = Date)]
    pub date: String,
    pub value: f64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct FeatureValuesPage {
    /// Always `list`.
    pub object: &'static str,
    pub feature: &'static str,
    pub instrument: String,
    pub symbol: String,
    /// The price field computed from: `adj_close` or `close`.
    pub input: &'static str,
    /// The dataset version the values were computed from (none when the instrument has no prices).
    pub dataset: Option<DatasetRef>,
    /// Dates before the feature's warm-up have no value and are absent.
    pub data: Vec<FeatureValue>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

/// A feature's values for one instrument, in date order.
///
/// Computed on read with `fiscus-quant` over the whole price series of one prices dataset (the newest holding
/// the instrument unless `dataset` names one), so a window near `start` still sees its history; dates inside
/// the warm-up have no value and are absent. A feature defined on daily prices (its `frequency`) is refused on
/// prices of another frequency (409 `conflict` with the prices' `frequency`), never computed over windows
/// stretched to months. The page names the dataset (with its `provenance` and content
/// hash) and the price field used, and the same dataset version always gives the same values. Needs
/// `quant:features:read`; nothing is stored, and an instrument without prices gives an empty page. A price
/// that is not positive (a close of 0) is left out of the series, as computations leave it out. `Accept:
/// text/csv`, an Arrow IPC stream or column JSON give the same page in columns (`date`, `value`).
#[utoipa::path(
    get,
    path = "/api/v2/quant/features/{key}/values",
    params(("key" = String, Path, description = "The feature's key", example = "volatility_21d"), ValuesQuery),
    responses(
        (status = 200, description = "Values", body = FeatureValuesPage),
        (status = 404, description = "No such feature, or no such instrument in this workspace"),
        (status = 409, description = "The feature is defined on prices of another frequency than this instrument's (`conflict`, with the prices' `frequency` and the `feature_frequency`)")
    )
)]
pub async fn get_feature_values(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiPath(key): ApiPath<String>,
    ApiQuery(q): ApiQuery<ValuesQuery>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let ws = ctx.principal.workspace_id();
    // The values are computed from prices: the workspace must be entitled to them, as their own read is.
    fiscus_kernel::inputs::entitled(&state, ws, Kind::Prices).await?;
    let definition = feature(&key)?;
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::POINTS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = date("after_id", q.after_id.as_deref())?;
    let asked = super::dataset_param(q.dataset)?;
    if !fiscus_data_core::rules::is_name(&q.instrument) {
        return Err(
            ApiError::new(ErrorCode::InvalidParameter).field("instrument", "must be an instrument id or symbol")
        );
    }
    let mut conn = state.store.read().await?;
    let i = market::get_instrument(&mut conn, ws, &q.instrument).await?;
    let number = match asked {
        Some(n) => Some(n),
        None => market::latest_dataset(&mut conn, ws, Rows::Prices, &i.id).await?,
    };
    let mut page = FeatureValuesPage {
        object: "list",
        feature: definition.key,
        instrument: i.id.clone(),
        symbol: i.symbol.clone(),
        input: "adj_close",
        dataset: None,
        data: Vec::new(),
        has_more: false,
        next_after_id: None,
    };
    let Some(number) = number else { return respond(representation, &uri, page) };
    let d = super::datasets::of_kind(&mut conn, state.store.seal_key(), ws, number, &[Kind::Prices]).await?;
    page.dataset = Some(super::instruments::dataset_ref(&d));
    // The whole series: a rolling window near `start` needs the observations before it.
    drop(conn);
    let series = state.series.series(&state.store, ws, &i.id, d.number).await?;
    let bars = &series.bars;
    let adjusted = bars.iter().any(|b| b.adj_close.is_some());
    page.input = if adjusted { "adj_close" } else { "close" };
    let (dates, prices): (Vec<&str>, Vec<f64>) = bars
        .iter()
        .filter_map(|b| {
            let p = if adjusted { b.adj_close.as_deref() } else { b.close.as_deref() };
            p.map(|p| (b.date.as_str(), super::number(p))).filter(|(_, p)| *p > 0.0)
        })
        .unzip();
    if prices.len() < 2 {
        return respond(representation, &uri, page);
    }
    // A window counted in trading days is not stretched over months.
    let frequency = fiscus_data_core::rules::frequency::Frequency::of_dates(dates.iter().copied());
    if let Some(why) = definition.refuses(frequency) {
        return Err(ApiError::new(ErrorCode::Conflict)
            .detail(why)
            .with("frequency", frequency.as_str())
            .with("feature_frequency", definition.frequency.map(|f| f.as_str())));
    }
    let values = fiscus_kernel::inputs::feature_values(definition.formula, &prices).map_err(|e| {
        // Stored prices are checked positive and finite at import; anything else is corrupt data.
        tracing::error!(error = %e, dataset = d.number, "a feature could not be computed from stored prices");
        ApiError::internal()
    })?;
    let lower = std::cmp::max(start.as_deref().unwrap_or(""), after.as_deref().unwrap_or(""));
    let exclusive = after.as_deref().is_some_and(|a| a >= start.as_deref().unwrap_or(""));
    let upper = end.as_deref().unwrap_or("9999-12-31");
    let selected: Vec<FeatureValue> = dates
        .iter()
        .zip(values)
        .filter(|(day, _)| (if exclusive { **day > lower } else { **day >= lower }) && **day <= upper)
        .filter_map(|(day, v)| v.map(|value| FeatureValue { date: (*day).to_string(), value }))
        .take(limit as usize + 1)
        .collect();
    let p = ListPage::from_overfetch(selected, limit, |v| v.date.clone());
    page.has_more = p.has_more;
    page.next_after_id = p.next_after_id;
    page.data = p.data;
    respond(representation, &uri, page)
}

/// The columns of a feature values page in CSV, Arrow and column JSON.
pub const VALUE_COLUMNS: &[ColumnSpec] = &[("date", ColumnType::Date), ("value", ColumnType::Float)];

fn respond(
    representation: Representation,
    uri: &axum::http::Uri,
    mut page: FeatureValuesPage,
) -> Result<Response, ApiError> {
    let headers = super::bulk::headers(uri, page.next_after_id.as_deref(), page.dataset.as_ref());
    let table = match representation {
        Representation::Json => Table::new(),
        _ => {
            let rows = std::mem::take(&mut page.data);
            Table::new()
                .column("date", Values::Date(rows.iter().map(|v| v.date.clone()).collect()))
                .column("value", Values::Float(rows.iter().map(|v| Some(v.value)).collect()))
        }
    };
    super::bulk::render(representation, headers, &page, table)
}
