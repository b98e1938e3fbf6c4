//! Economic series and their observations.

use axum::Json;
use axum::extract::{OriginalUri, State};
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::tables::economics::{self, Series};
use fiscus_data_core::tables::market::Window;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::columnar::{ColumnSpec, ColumnType, Representation, Table, Values};
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use super::instruments::DatasetRef;
use super::{date, name, number, range};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

#[derive(Serialize, utoipa::ToSchema)]
pub struct SeriesView {
    /// Always `economic_series`.
    pub object: &'static str,
    #[schema(example = "cpilfesl")]
    pub key: String,
    #[schema(example = "US CPI for all urban consumers: all items less food and energy")]
    pub title: String,
    #[schema(example = "index 1982-1984=100")]
    pub units: String,
    /// daily, weekly, monthly, quarterly, annual or irregular (from the observations' spacing). Periods
    /// are dated by their first day.
    pub frequency: String,
    pub observations: i64,
    #[schema(format = Date)]
    pub first_date: Option<String>,
    #[schema(format = Date)]
    pub last_date: Option<String>,
    /// The dataset version describing the series (the newest unless one was asked for).
    pub dataset: i64,
}

fn view(s: Series) -> SeriesView {
    SeriesView {
        object: "economic_series",
        key: s.series_key,
        title: s.title,
        units: s.units,
        frequency: s.frequency,
        observations: s.observations,
        first_date: s.first_date,
        last_date: s.last_date,
        dataset: s.dataset_number,
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SeriesListQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Series after this key (exclusive; keys in ascending order).
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    pub after_id: Option<String>,
    /// Only series of this frequency.
    #[param(pattern = "^(daily|weekly|monthly|quarterly|annual|irregular)$")]
    pub frequency: Option<String>,
}

const FREQUENCIES: [&str; 6] = ["daily", "weekly", "monthly", "quarterly", "annual", "irregular"];

/// The workspace's economic series (each as its newest dataset describes it), by key.
///
/// One entry per series key: title, units, frequency (inferred at import from the spacing of its dates), the
/// number of observations with the first and last date, and `dataset`, the newest economics dataset holding
/// it. Paged by key; `frequency` filters exactly. Needs `data:economics:read`; the workspace's sandbox and
/// production credentials see the same series. A read: nothing is imported or changed.
#[utoipa::path(
    get,
    path = "/api/v2/data/economics/series",
    params(SeriesListQuery),
    responses((status = 200, description = "A page of series", body = ListPage<SeriesView>))
)]
pub async fn get_series_list(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<SeriesListQuery>,
) -> Result<Json<ListPage<SeriesView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let after = name("after_id", q.after_id.as_deref())?;
    if let Some(f) = q.frequency.as_deref()
        && !FREQUENCIES.contains(&f)
    {
        return Err(ApiError::new(ErrorCode::InvalidParameter)
            .field("frequency", format!("must be one of {}", FREQUENCIES.join(", "))));
    }
    let mut conn = state.store.read().await?;
    let rows =
        economics::list(&mut conn, ctx.principal.workspace_id(), q.frequency.as_deref(), after.as_deref(), limit)
            .await?;
    let page = ListPage::from_overfetch(rows, limit, |s| s.series_key.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(view).collect(),
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SeriesDetailView {
    #[serde(flatten)]
    pub series: SeriesView,
    /// Every dataset version holding the series, newest first.
    pub versions: Vec<i64>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SeriesQuery {
    /// The economics dataset describing the series (default: the newest).
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
}

fn key(raw: &str) -> Result<&str, ApiError> {
    if fiscus_data_core::rules::is_name(raw) { Ok(raw) } else { Err(ApiError::not_found().detail("no such series")) }
}

/// One series with the dataset versions that hold it.
///
/// The series as one economics dataset describes it (the newest holding it, or the one `dataset` names) and
/// `versions`, every dataset version holding it, newest first. An unknown key, or a `dataset` that does not
/// hold the series, is 404. Needs `data:economics:read`. A read: nothing is imported or changed.
#[utoipa::path(
    get,
    path = "/api/v2/data/economics/series/{key}",
    params(("key" = String, Path, description = "The series key", example = "cpilfesl"), SeriesQuery),
    responses((status = 200, description = "The series", body = SeriesDetailView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_series(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(raw): ApiPath<String>,
    ApiQuery(q): ApiQuery<SeriesQuery>,
) -> Result<Json<SeriesDetailView>, ApiError> {
    let ws = ctx.principal.workspace_id();
    let k = key(&raw)?;
    let dataset = super::dataset_param(q.dataset)?;
    let mut conn = state.store.read().await?;
    let series = economics::get(&mut conn, ws, k, dataset).await?;
    let versions = economics::versions(&mut conn, ws, k).await?;
    Ok(Json(SeriesDetailView { series: view(series), versions }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ObservationsQuery {
    /// First date (inclusive).
    #[param(format = Date, example = "2000-01-01")]
    pub start: Option<String>,
    /// Last date (inclusive).
    #[param(format = Date, example = "2009-12-31")]
    pub end: Option<String>,
    /// The economics dataset to read (default: the newest holding the series).
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
    /// Observations per page, 1 to 10000 (default 1000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
    /// Observations after this date (exclusive): the previous page's `next_after_id`.
    #[param(format = Date)]
    pub after_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ObservationView {
    #[schema(format = Date)]
    pub date: String,
    pub value: f64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ObservationsPage {
    /// Always `list`.
    pub object: &'static str,
    pub key: String,
    pub units: String,
    pub frequency: String,
    pub dataset: DatasetRef,
    pub data: Vec<ObservationView>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

/// A series' observations in date order; a missing observation is absent, never filled.
///
/// Reads one dataset version (the newest holding the series unless `dataset` names one, which must be an
/// economics dataset of this workspace) between `start` and `end`, paged by date with `after_id`. The page
/// names its `dataset` with `provenance` and `content_hash`, so every value traces to the import it came
/// from; a date the source did not observe is absent, never interpolated. `Accept: text/csv`, an Arrow IPC
/// stream or column JSON give the same page in columns (`date`, `value`), paged by `Link: rel=next` and
/// naming their dataset in headers. Needs `data:economics:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/data/economics/series/{key}/observations",
    params(("key" = String, Path, description = "The series key", example = "cpilfesl"), ObservationsQuery),
    responses((status = 200, description = "Observations", body = ObservationsPage), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_observations(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiPath(raw): ApiPath<String>,
    ApiQuery(q): ApiQuery<ObservationsQuery>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let ws = ctx.principal.workspace_id();
    let k = key(&raw)?;
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::POINTS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = date("after_id", q.after_id.as_deref())?;
    let asked = super::dataset_param(q.dataset)?;
    let mut conn = state.store.read().await?;
    let series = economics::get(&mut conn, ws, k, asked).await?;
    let d = super::datasets::of_kind(&mut conn, state.store.seal_key(), ws, series.dataset_number, &[Kind::Economics])
        .await?;
    let window = Window { from: start.as_deref(), to: end.as_deref(), after: after.as_deref() };
    let rows = economics::observations(&mut conn, ws, k, d.number, window, limit).await?;
    let p = ListPage::from_overfetch(rows, limit, |o| o.date.clone());
    let mut page = ObservationsPage {
        object: "list",
        key: series.series_key,
        units: series.units,
        frequency: series.frequency,
        dataset: super::instruments::dataset_ref(&d),
        has_more: p.has_more,
        next_after_id: p.next_after_id,
        data: p.data.into_iter().map(|o| ObservationView { value: number(&o.value), date: o.date }).collect(),
    };
    let headers = super::bulk::headers(&uri, page.next_after_id.as_deref(), Some(&page.dataset));
    let table = match representation {
        Representation::Json => Table::new(),
        _ => observation_table(&std::mem::take(&mut page.data)),
    };
    super::bulk::render(representation, headers, &page, table)
}

/// The columns of an observations page in CSV, Arrow and column JSON.
pub const OBSERVATION_COLUMNS: &[ColumnSpec] = &[("date", ColumnType::Date), ("value", ColumnType::Float)];

fn observation_table(rows: &[ObservationView]) -> Table {
    Table::new()
        .column("date", Values::Date(rows.iter().map(|o| o.date.clone()).collect()))
        .column("value", Values::Float(rows.iter().map(|o| Some(o.value)).collect()))
}
