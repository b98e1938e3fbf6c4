//! Instruments and what is observed of them: prices, corporate actions, fundamentals. Each read names the
//! dataset version it served, so a number can be traced to the import it came from.
//!
//! It is long because the instrument reads share one view, one query shape and the dataset-version rule; split
//! per read, each file would repeat them.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use fiscus_data_core::rules::Kind;
use fiscus_data_core::rules::records::CorporateActionType;
use fiscus_data_core::tables::market::{self, Instrument, InstrumentFilter, Rows, Window};
use fiscus_domain::clock::rfc3339;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use super::{bulk, date, name, number, range};
use fiscus_http::AppState;
use fiscus_http::columnar::{ColumnSpec, ColumnType, CsvRow, Representation, Table, Values, csv_header};
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

#[derive(Serialize, utoipa::ToSchema)]
pub struct InstrumentView {
    /// Always `instrument`.
    pub object: &'static str,
    #[schema(example = "ins_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub id: String,
    #[schema(example = "AAPL")]
    pub symbol: String,
    #[schema(example = "Apple Inc.")]
    pub name: String,
    /// equity, etf, index, fund, bond, commodity, fx or crypto
    pub asset_class: String,
    #[schema(example = "USD")]
    pub currency: String,
    pub exchange: String,
    pub country: String,
    pub sector: String,
    pub isin: String,
    /// The instruments dataset this reference data comes from (its newest version holding the instrument).
    pub reference_dataset: i64,
    pub created_at: String,
}

/// Which datasets hold an instrument's rows, newest first (the first is what reads use by default).
#[derive(Serialize, utoipa::ToSchema)]
pub struct InstrumentDatasets {
    pub prices: Vec<i64>,
    pub corporate_actions: Vec<i64>,
    pub fundamentals: Vec<i64>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct InstrumentDetailView {
    #[serde(flatten)]
    pub instrument: InstrumentView,
    pub datasets: InstrumentDatasets,
}

fn view(i: Instrument) -> InstrumentView {
    InstrumentView {
        object: "instrument",
        id: i.id,
        symbol: i.symbol,
        name: i.name,
        asset_class: i.asset_class,
        currency: i.currency,
        exchange: i.exchange,
        country: i.country,
        sector: i.sector,
        isin: i.isin,
        reference_dataset: i.dataset_number,
        created_at: rfc3339(i.created_at),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct InstrumentsQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Instruments after this id (exclusive).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub after_id: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "AAPL")]
    pub symbol: Option<String>,
    /// equity, etf, index, fund, bond, commodity, fx or crypto.
    #[param(pattern = "^[a-z]{1,16}$", example = "equity")]
    pub asset_class: Option<String>,
    #[param(pattern = "^[A-Z]{3}$", example = "USD")]
    pub currency: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "NYSE")]
    pub exchange: Option<String>,
}

/// The workspace's instruments with their newest reference data; filters are exact.
///
/// One entry per instrument identity (`ins_…`, given at the first import of its symbol), with the reference
/// data of the newest instruments dataset holding it (`reference_dataset`). `symbol`, `asset_class`,
/// `currency` and `exchange` filter exactly; paged by id. Needs `data:reference:read`. A read: nothing is
/// imported or changed.
#[utoipa::path(
    get,
    path = "/api/v2/data/instruments",
    params(InstrumentsQuery),
    responses((status = 200, description = "A page of instruments", body = ListPage<InstrumentView>))
)]
pub async fn get_instruments(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<InstrumentsQuery>,
) -> Result<Json<ListPage<InstrumentView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let after = super::object_cursor(q.after_id.as_deref())?;
    let symbol = name("symbol", q.symbol.as_deref())?;
    let exchange = name("exchange", q.exchange.as_deref())?;
    let asset_class = super::token("asset_class", q.asset_class.as_deref(), 16, |b| b.is_ascii_lowercase())?;
    let currency = super::currency(q.currency.as_deref())?;
    let filter = InstrumentFilter { symbol: symbol.as_deref(), asset_class, currency, exchange: exchange.as_deref() };
    let mut conn = state.store.read().await?;
    let rows = market::list_instruments(&mut conn, ctx.principal.workspace_id(), &filter, after, limit).await?;
    let page = ListPage::from_overfetch(rows, limit, |i| i.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(view).collect(),
    }))
}

async fn instrument(
    conn: &mut fiscus_store::Connection,
    workspace_id: &str,
    uid: &str,
) -> Result<Instrument, ApiError> {
    if !fiscus_data_core::rules::is_name(uid) {
        return Err(ApiError::not_found().detail("no such instrument"));
    }
    Ok(market::get_instrument(conn, workspace_id, uid).await?)
}

/// One instrument, by id (`ins_…`) or symbol, with the datasets that hold its rows.
///
/// The path takes an `ins_…` id or a symbol. Besides the reference data, `datasets` lists the dataset versions
/// holding its prices, corporate actions and fundamentals, newest first (the first is what the other reads
/// use by default). Needs `data:reference:read`; an instrument of another workspace is 404. Changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/data/instruments/{uid}",
    params(("uid" = String, Path, description = "The instrument's id (`ins_…`) or its symbol", example = "AAPL")),
    responses((status = 200, description = "The instrument", body = InstrumentDetailView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_instrument(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<InstrumentDetailView>, ApiError> {
    let ws = ctx.principal.workspace_id();
    let mut conn = state.store.read().await?;
    let i = instrument(&mut conn, ws, &uid).await?;
    let datasets = InstrumentDatasets {
        prices: market::datasets_for(&mut conn, ws, Rows::Prices, &i.id).await?,
        corporate_actions: market::datasets_for(&mut conn, ws, Rows::CorporateActions, &i.id).await?,
        fundamentals: market::datasets_for(&mut conn, ws, Rows::Fundamentals, &i.id).await?,
    };
    Ok(Json(InstrumentDetailView { instrument: view(i), datasets }))
}

/// The dataset a read serves: the one asked for (of the right kind, in this workspace), else the newest
/// holding the instrument's rows.
async fn serving(
    conn: &mut fiscus_store::Connection,
    key: &fiscus_domain::integrity::SealKey,
    ws: &str,
    rows: Rows,
    kind: Kind,
    instrument_id: &str,
    asked: Option<i64>,
) -> Result<Option<fiscus_data_core::tables::datasets::Dataset>, ApiError> {
    let number = match asked {
        Some(n) => Some(n),
        None => market::latest_dataset(conn, ws, rows, instrument_id).await?,
    };
    match number {
        Some(n) => Ok(Some(super::datasets::of_kind(conn, key, ws, n, &[kind]).await?)),
        None => Ok(None),
    }
}

/// The dataset version a page of rows came from.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DatasetRef {
    pub id: i64,
    pub name: String,
    pub version: i64,
    pub provenance: fiscus_data_core::rules::Provenance,
    pub content_hash: String,
}

/// The version a page was served from, as every data read names it.
pub(crate) fn dataset_ref(d: &fiscus_data_core::tables::datasets::Dataset) -> DatasetRef {
    DatasetRef {
        id: d.number,
        name: d.name.clone(),
        version: d.version,
        provenance: d.provenance,
        content_hash: d.content_hash.clone(),
    }
}

/// Bar intervals: daily as observed, or weekly (ISO weeks) and monthly bars built from the daily ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Interval {
    #[serde(rename = "1d")]
    Day,
    #[serde(rename = "1wk")]
    Week,
    #[serde(rename = "1mo")]
    Month,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PricesQuery {
    /// First date (inclusive).
    #[param(format = Date, example = "2020-01-01")]
    pub start: Option<String>,
    /// Last date (inclusive).
    #[param(format = Date, example = "2020-12-31")]
    pub end: Option<String>,
    /// Split- and dividend-adjusted bars: open, high, low and close scaled by the day's adjusted close over
    /// its close, close replaced by the adjusted close (as `auto_adjust` does in common Python tools).
    pub adjusted: Option<bool>,
    /// `1d` (default), `1wk` or `1mo`; a week's or month's bar is dated by its last observed day.
    pub interval: Option<Interval>,
    /// The prices dataset to read (default: the newest holding this instrument).
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
    /// Bars per page, 1 to 10000 (default 1000).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
    /// Bars after this date (exclusive): the previous page's `next_after_id`.
    #[param(format = Date)]
    pub after_id: Option<String>,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
pub struct BarView {
    #[schema(format = Date, example = "2020-01-02")]
    pub date: String,
    pub open: Option<f64>,
    pub high: Option<f64>,
    pub low: Option<f64>,
    pub close: Option<f64>,
    pub adj_close: Option<f64>,
    pub volume: Option<f64>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct PricesPage {
    /// Always `list`.
    pub object: &'static str,
    pub instrument: String,
    pub symbol: String,
    pub currency: String,
    pub interval: Interval,
    pub adjusted: bool,
    /// The dataset version served (none when the instrument has no prices).
    pub dataset: Option<DatasetRef>,
    pub data: Vec<BarView>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

fn bar_view(b: &market::Bar, adjusted: bool) -> BarView {
    let v = |s: &Option<String>| s.as_deref().map(number);
    let (open, high, low, close, adj) = (v(&b.open), v(&b.high), v(&b.low), v(&b.close), v(&b.adj_close));
    if !adjusted {
        return BarView { date: b.date.clone(), open, high, low, close, adj_close: adj, volume: v(&b.volume) };
    }
    let ratio = match (close, adj) {
        (Some(c), Some(a)) if c > 0.0 => Some(a / c),
        _ => None,
    };
    let scale = |x: Option<f64>| match (x, ratio) {
        (Some(x), Some(r)) => Some(x * r),
        _ => None,
    };
    BarView {
        date: b.date.clone(),
        open: scale(open),
        high: scale(high),
        low: scale(low),
        close: adj.or(close),
        adj_close: adj,
        volume: v(&b.volume),
    }
}

/// Weekly or monthly bars from daily ones, in date order: first open, highest high, lowest low, last close
/// and adjusted close, summed volume; dated by the period's last observed day.
fn resample(daily: Vec<BarView>, interval: Interval) -> Vec<BarView> {
    let period = |d: &str| -> String {
        match interval {
            Interval::Month => d[..7].to_string(),
            _ => time::Date::parse(d, time::macros::format_description!("[year]-[month]-[day]"))
                .map(|x| {
                    let (y, w, _) = x.to_iso_week_date();
                    format!("{y}-W{w:02}")
                })
                .unwrap_or_default(),
        }
    };
    let mut out: Vec<(String, BarView)> = Vec::new();
    for b in daily {
        let p = period(&b.date);
        match out.last_mut() {
            Some((q, agg)) if *q == p => {
                agg.high = match (agg.high, b.high) {
                    (Some(a), Some(c)) => Some(a.max(c)),
                    (a, c) => a.or(c),
                };
                agg.low = match (agg.low, b.low) {
                    (Some(a), Some(c)) => Some(a.min(c)),
                    (a, c) => a.or(c),
                };
                agg.open = agg.open.or(b.open);
                agg.volume = match (agg.volume, b.volume) {
                    (Some(a), Some(c)) => Some(a + c),
                    (a, c) => a.or(c),
                };
                agg.close = b.close.or(agg.close);
                agg.adj_close = b.adj_close.or(agg.adj_close);
                agg.date = b.date;
            }
            _ => out.push((p, b)),
        }
    }
    out.into_iter().map(|(_, b)| b).collect()
}

/// An instrument's bars from one dataset version, in date order.
///
/// Daily bars as observed (split- and dividend-adjusted with `adjusted=true`), or weekly (`1wk`, ISO weeks)
/// and monthly (`1mo`) bars built from them, from one prices dataset: the newest holding the instrument
/// unless `dataset` names one (a dataset of another kind is 404). The page names that dataset with its
/// `provenance` and `content_hash`, and the rows are checked against that hash before they are served (500
/// `integrity_failure` if they were changed). Needs `data:market:read`; no bar is stored or filled in.
#[utoipa::path(
    get,
    path = "/api/v2/data/instruments/{uid}/prices",
    params(("uid" = String, Path, description = "The instrument's id (`ins_…`) or its symbol", example = "AAPL"), PricesQuery),
    responses((status = 200, description = "Bars", body = PricesPage), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_prices(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiPath(uid): ApiPath<String>,
    ApiQuery(q): ApiQuery<PricesQuery>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let ws = ctx.principal.workspace_id();
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::POINTS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = date("after_id", q.after_id.as_deref())?;
    let asked = super::dataset_param(q.dataset)?;
    let interval = q.interval.unwrap_or(Interval::Day);
    let adjusted = q.adjusted.unwrap_or(false);
    let mut conn = state.store.read().await?;
    let i = instrument(&mut conn, ws, &uid).await?;
    let dataset = serving(&mut conn, state.store.seal_key(), ws, Rows::Prices, Kind::Prices, &i.id, asked).await?;
    let mut page = PricesPage {
        object: "list",
        instrument: i.id.clone(),
        symbol: i.symbol.clone(),
        currency: i.currency.clone(),
        interval,
        adjusted,
        dataset: dataset.as_ref().map(dataset_ref),
        data: Vec::new(),
        has_more: false,
        next_after_id: None,
    };
    let Some(d) = dataset else {
        let headers = bulk::headers(&uri, None, None);
        return bulk::render(representation, headers, &page, bar_table(&[]));
    };
    // The cache takes its own connection: never hold one while waiting for another.
    drop(conn);
    let series = state.series.series(&state.store, ws, &i.id, d.number).await?;
    let window = Window { from: start.as_deref(), to: end.as_deref(), after: after.as_deref() };
    if interval == Interval::Day {
        // The page is a slice of the series' rendered bars between a head and a tail (`series_cache`).
        let found = fiscus_kernel::series_cache::window(&series.bars, window, limit as usize + 1);
        page.has_more = found.len() > limit as usize;
        let shown = found.start..std::cmp::min(found.end, found.start + limit as usize);
        page.next_after_id = page.has_more.then(|| series.bars[shown.end - 1].date.clone());
        let headers = bulk::headers(&uri, page.next_after_id.as_deref(), page.dataset.as_ref());
        match representation {
            Representation::Json => {}
            Representation::Csv => {
                let rows = series.rendered_rows(adjusted, |b, out| bar_row(&bar_view(b, adjusted), out));
                let body = [Bytes::from(csv_header(PRICE_COLUMNS)), rows.slice(shown)];
                return Ok(fiscus_http::columnar::respond_chunks(representation, headers, body));
            }
            Representation::Arrow => return arrow_page(&series, adjusted, shown, headers),
            Representation::Columns => {
                let bars: Vec<BarView> = series.bars[shown].iter().map(|b| bar_view(b, adjusted)).collect();
                return bulk::render(representation, headers, &page, bar_table(&bars));
            }
        }
        let rendered = series.rendered(adjusted, |b, out| {
            // Writing a plain struct to a Vec cannot fail.
            let _ = serde_json::to_writer(out, &bar_view(b, adjusted));
        });
        let mut response = rendered_page(&page, rendered.slice(shown));
        response.headers_mut().extend(headers);
        return Ok(response);
    }
    // A period's bar needs all its days: take the window whole, then page the periods.
    let rows = &series.bars[fiscus_kernel::series_cache::window(&series.bars, window, usize::MAX)];
    let periods = resample(rows.iter().map(|b| bar_view(b, adjusted)).collect(), interval);
    let p = ListPage::from_overfetch(periods, limit, |b| b.date.clone());
    page.has_more = p.has_more;
    page.next_after_id = p.next_after_id;
    let headers = bulk::headers(&uri, page.next_after_id.as_deref(), page.dataset.as_ref());
    if representation != Representation::Json {
        let table = bar_table(&p.data);
        return bulk::render(representation, headers, &page, table);
    }
    page.data = p.data;
    bulk::render(representation, headers, &page, Table::new())
}

/// A daily page as an Arrow stream: a slice of the whole series' batch, kept with the series, and the whole
/// series' stream itself kept too (the read of a whole history is the common one).
fn arrow_page(
    series: &fiscus_kernel::series_cache::Series,
    adjusted: bool,
    shown: std::ops::Range<usize>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let batch = series.derived(if adjusted { "arrow_adjusted" } else { "arrow" }, |bars| {
        let views: Vec<BarView> = bars.iter().map(|b| bar_view(b, adjusted)).collect();
        bar_table(&views).batch().map_err(|e| e.to_string())
    });
    let batch = batch.as_ref().as_ref().map_err(|e| {
        tracing::error!(error = %e, "a series' Arrow batch could not be built");
        ApiError::internal()
    })?;
    let failed = |e: fiscus_http::columnar::ArrowError| {
        tracing::error!(error = %e, "an Arrow stream could not be written");
        ApiError::internal()
    };
    let body = if shown == (0..series.bars.len()) {
        let whole = series.derived(if adjusted { "arrow_stream_adjusted" } else { "arrow_stream" }, |_| {
            fiscus_http::columnar::stream(batch).map(Bytes::from).map_err(|e| e.to_string())
        });
        whole.as_ref().clone().map_err(|e| {
            tracing::error!(error = %e, "an Arrow stream could not be written");
            ApiError::internal()
        })?
    } else {
        Bytes::from(fiscus_http::columnar::stream(&batch.slice(shown.start, shown.len())).map_err(failed)?)
    };
    Ok(fiscus_http::columnar::respond(Representation::Arrow, headers, body))
}

/// One bar as a CSV row, its columns as `bar_table`'s.
fn bar_row(b: &BarView, out: &mut Vec<u8>) {
    let mut row = CsvRow::new(out);
    row.date(&b.date);
    for x in [b.open, b.high, b.low, b.close, b.adj_close, b.volume] {
        row.float(x);
    }
    row.end();
}

/// The columns of a prices page in CSV, Arrow and column JSON, in the order of `BarView`'s members.
pub const PRICE_COLUMNS: &[ColumnSpec] = &[
    ("date", ColumnType::Date),
    ("open", ColumnType::Float),
    ("high", ColumnType::Float),
    ("low", ColumnType::Float),
    ("close", ColumnType::Float),
    ("adj_close", ColumnType::Float),
    ("volume", ColumnType::Float),
];

/// The columns of a prices page (`PRICE_COLUMNS`).
fn bar_table(bars: &[BarView]) -> Table {
    let f = |get: fn(&BarView) -> Option<f64>| Values::Float(bars.iter().map(get).collect());
    Table::new()
        .column("date", Values::Date(bars.iter().map(|b| b.date.clone()).collect()))
        .column("open", f(|b| b.open))
        .column("high", f(|b| b.high))
        .column("low", f(|b| b.low))
        .column("close", f(|b| b.close))
        .column("adj_close", f(|b| b.adj_close))
        .column("volume", f(|b| b.volume))
}

/// A prices page whose `data` is already rendered: the page (with empty `data`) serialised and split
/// around its `[]`, the bars between, sent without being copied.
fn rendered_page(page: &PricesPage, bars: Bytes) -> Response {
    let mut head = serde_json::to_vec(page).unwrap_or_default();
    let marker = b"\"data\":[]";
    let Some(at) = head.windows(marker.len()).position(|w| w == marker) else {
        // Cannot happen (the page serialises its empty `data` as `"data":[]`); a whole page instead.
        return Json(page).into_response();
    };
    let tail = Bytes::copy_from_slice(&head[at + marker.len() - 1..]);
    head.truncate(at + marker.len() - 1);
    let body = fiscus_http::body::Chunks::new([Bytes::from(head), bars, tail]);
    ([(header::CONTENT_TYPE, "application/json")], axum::body::Body::new(body)).into_response()
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CorporateActionsQuery {
    /// Only this type of action: `split` or `cash_dividend`.
    #[serde(rename = "type")]
    #[param(rename = "type", pattern = "^(split|cash_dividend)$")]
    pub action: Option<String>,
    /// First ex-date (inclusive).
    #[param(format = Date)]
    pub start: Option<String>,
    /// Last ex-date (inclusive).
    #[param(format = Date)]
    pub end: Option<String>,
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Actions after this cursor (`{ex_date}_{type}`, the previous page's `next_after_id`).
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}_[a-z_]{1,20}$")]
    pub after_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CorporateActionView {
    #[schema(format = Date)]
    pub ex_date: String,
    #[serde(rename = "type")]
    pub action: String,
    #[schema(format = Date)]
    pub pay_date: Option<String>,
    /// New shares per old share (splits).
    pub ratio: Option<f64>,
    /// Cash per share (dividends), in `currency`.
    pub amount: Option<f64>,
    pub currency: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CorporateActionsPage {
    /// Always `list`.
    pub object: &'static str,
    pub instrument: String,
    pub dataset: Option<DatasetRef>,
    pub data: Vec<CorporateActionView>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

/// `NNNN-NN-NN`: the shape the cursors' patterns state (the cursor is compared, never parsed as a date).
fn is_date_shaped(d: &str) -> bool {
    d.len() == 10 && d.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
}

fn cursor(raw: Option<&str>, field: &'static str, shape: fn(&str) -> bool) -> Result<Option<String>, ApiError> {
    match raw {
        Some(s) if !shape(s) => {
            Err(ApiError::new(ErrorCode::InvalidParameter).field(field, "is not a cursor this list returned"))
        }
        other => Ok(other.map(str::to_string)),
    }
}

/// Splits and cash dividends of an instrument, by ex-date.
///
/// Splits (`ratio`: new shares per old share) and cash dividends (`amount` per share in `currency`, with the
/// pay date), from one corporate-actions dataset: the newest holding the instrument unless `dataset` names
/// one. `type` and the ex-date range filter exactly; the page names the dataset with its `provenance` and
/// content hash. Needs `data:market:read`. A read: nothing is changed.
#[utoipa::path(
    get,
    path = "/api/v2/data/instruments/{uid}/corporate-actions",
    params(("uid" = String, Path, description = "The instrument's id (`ins_…`) or its symbol", example = "AAPL"), CorporateActionsQuery),
    responses((status = 200, description = "Corporate actions", body = CorporateActionsPage), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_corporate_actions(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiQuery(q): ApiQuery<CorporateActionsQuery>,
) -> Result<Json<CorporateActionsPage>, ApiError> {
    let ws = ctx.principal.workspace_id();
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = cursor(q.after_id.as_deref(), "after_id", |s| {
        s.split_once('_').is_some_and(|(d, a)| {
            is_date_shaped(d) && (1..=20).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        })
    })?;
    let asked = super::dataset_param(q.dataset)?;
    let action = match q.action.as_deref() {
        None => None,
        Some(a) => Some(CorporateActionType::parse(a).filter(|t| t.as_str() == a).ok_or_else(|| {
            ApiError::new(ErrorCode::InvalidParameter).field("type", "must be split or cash_dividend")
        })?),
    };
    let mut conn = state.store.read().await?;
    let i = instrument(&mut conn, ws, &uid).await?;
    let dataset =
        serving(&mut conn, state.store.seal_key(), ws, Rows::CorporateActions, Kind::CorporateActions, &i.id, asked)
            .await?;
    let mut page = CorporateActionsPage {
        object: "list",
        instrument: i.id.clone(),
        dataset: dataset.as_ref().map(dataset_ref),
        data: Vec::new(),
        has_more: false,
        next_after_id: None,
    };
    if let Some(d) = dataset {
        let window = Window { from: start.as_deref(), to: end.as_deref(), after: after.as_deref() };
        let rows = market::corporate_actions(&mut conn, ws, &i.id, d.number, action.map(|a| a.as_str()), window, limit)
            .await?;
        let p = ListPage::from_overfetch(rows, limit, |a| format!("{}_{}", a.ex_date, a.action));
        page.has_more = p.has_more;
        page.next_after_id = p.next_after_id;
        page.data = p
            .data
            .into_iter()
            .map(|a| CorporateActionView {
                ex_date: a.ex_date,
                action: a.action,
                pay_date: a.pay_date,
                ratio: a.ratio.as_deref().map(number),
                amount: a.amount.as_deref().map(number),
                currency: a.currency,
            })
            .collect();
    }
    Ok(Json(page))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FundamentalsQuery {
    /// Only this metric (`revenue`, `net_income`, …).
    #[param(pattern = "^[a-z0-9_]{1,64}$", example = "revenue")]
    pub metric: Option<String>,
    /// FY, Q1, Q2, Q3, Q4 or TTM.
    #[param(pattern = "^(FY|Q1|Q2|Q3|Q4|TTM)$")]
    pub fiscal_period: Option<String>,
    /// First period end (inclusive).
    #[param(format = Date)]
    pub start: Option<String>,
    /// Last period end (inclusive).
    #[param(format = Date)]
    pub end: Option<String>,
    #[param(minimum = 1)]
    pub dataset: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Figures after this cursor (`{period_end}_{fiscal_period}_{metric}`, the previous page's `next_after_id`).
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}_[A-Z0-9]{2,3}_[a-z0-9_]{1,64}$")]
    pub after_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct FundamentalView {
    #[schema(format = Date)]
    pub period_end: String,
    pub fiscal_period: String,
    pub metric: String,
    pub value: f64,
    /// For money figures; none for ratios and counts.
    pub currency: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct FundamentalsPage {
    /// Always `list`.
    pub object: &'static str,
    pub instrument: String,
    pub dataset: Option<DatasetRef>,
    pub data: Vec<FundamentalView>,
    pub has_more: bool,
    pub next_after_id: Option<String>,
}

/// Reported figures of an instrument's issuer, by period.
///
/// Figures by period end, fiscal period (`FY`, `Q1` to `Q4`, `TTM`) and metric, as imported, from one
/// fundamentals dataset: the newest holding the instrument unless `dataset` names one. `metric`,
/// `fiscal_period` and the period-end range filter exactly; money figures carry their currency. The page
/// names the dataset with its `provenance` and content hash. Needs `data:fundamentals:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/data/instruments/{uid}/fundamentals",
    params(("uid" = String, Path, description = "The instrument's id (`ins_…`) or its symbol", example = "AAPL"), FundamentalsQuery),
    responses((status = 200, description = "Fundamentals", body = FundamentalsPage), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_fundamentals(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiQuery(q): ApiQuery<FundamentalsQuery>,
) -> Result<Json<FundamentalsPage>, ApiError> {
    let ws = ctx.principal.workspace_id();
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = cursor(q.after_id.as_deref(), "after_id", |s| {
        let mut parts = s.splitn(3, '_');
        matches!((parts.next(), parts.next(), parts.next()), (Some(d), Some(p), Some(m))
            if d.len() == 10 && d.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
                && (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                && !m.is_empty() && m.len() <= 64 && m.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
    })?;
    if let Some(m) = q.metric.as_deref()
        && (m.is_empty()
            || m.len() > 64
            || !m.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
    {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("metric", "must be 1 to 64 of a-z 0-9 _"));
    }
    if let Some(p) = q.fiscal_period.as_deref()
        && !fiscus_data_core::rules::records::FISCAL_PERIODS.contains(&p)
    {
        return Err(
            ApiError::new(ErrorCode::InvalidParameter).field("fiscal_period", "must be FY, Q1, Q2, Q3, Q4 or TTM")
        );
    }
    let asked = super::dataset_param(q.dataset)?;
    let mut conn = state.store.read().await?;
    let i = instrument(&mut conn, ws, &uid).await?;
    let dataset =
        serving(&mut conn, state.store.seal_key(), ws, Rows::Fundamentals, Kind::Fundamentals, &i.id, asked).await?;
    let mut page = FundamentalsPage {
        object: "list",
        instrument: i.id.clone(),
        dataset: dataset.as_ref().map(dataset_ref),
        data: Vec::new(),
        has_more: false,
        next_after_id: None,
    };
    if let Some(d) = dataset {
        let window = Window { from: start.as_deref(), to: end.as_deref(), after: after.as_deref() };
        let rows = market::fundamentals(
            &mut conn,
            ws,
            &i.id,
            d.number,
            q.metric.as_deref(),
            q.fiscal_period.as_deref(),
            window,
            limit,
        )
        .await?;
        let p = ListPage::from_overfetch(rows, limit, |f| format!("{}_{}_{}", f.period_end, f.fiscal_period, f.metric));
        page.has_more = p.has_more;
        page.next_after_id = p.next_after_id;
        page.data = p
            .data
            .into_iter()
            .map(|f| FundamentalView {
                period_end: f.period_end,
                fiscal_period: f.fiscal_period,
                metric: f.metric,
                value: number(&f.value),
                currency: f.currency,
            })
            .collect();
    }
    Ok(Json(page))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiscus_kernel::series_cache::Series;

    #[test]
    fn a_prices_table_has_the_documented_columns() {
        assert_eq!(bar_table(&[]).spec(), PRICE_COLUMNS);
    }

    fn bar(date: &str, close: &str, adj: &str) -> market::Bar {
        market::Bar {
            date: date.to_string(),
            open: Some("10.5".into()),
            high: Some("11".into()),
            low: None,
            close: Some(close.into()),
            adj_close: Some(adj.into()),
            volume: Some("1200".into()),
        }
    }

    /// A page sent as head + cached slice + tail is the page serde writes, for every shape of window.
    #[tokio::test]
    async fn a_rendered_page_is_the_serialised_page() {
        let series = Series::new(vec![
            bar("2020-01-02", "10", "9"),
            bar("2020-01-03", "12", "11"),
            bar("2020-01-06", "13", "12.5"),
        ]);
        for adjusted in [false, true] {
            for (range, has_more) in [(0..3, false), (0..2, true), (1..2, true), (0..0, false)] {
                let page = || PricesPage {
                    object: "list",
                    instrument: "ins_1".into(),
                    symbol: "X\"Y".into(),
                    currency: "USD".into(),
                    interval: Interval::Day,
                    adjusted,
                    dataset: None,
                    data: Vec::new(),
                    has_more,
                    next_after_id: has_more.then(|| "2020-01-03".to_string()),
                };
                let mut whole = page();
                whole.data = series.bars[range.clone()].iter().map(|b| bar_view(b, adjusted)).collect();
                let rendered = series.rendered(adjusted, |b, out| {
                    let _ = serde_json::to_writer(out, &bar_view(b, adjusted));
                });
                let response = rendered_page(&page(), rendered.slice(range.clone()));
                let sent = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("a body in memory");
                assert_eq!(
                    sent,
                    serde_json::to_vec(&whole).expect("a page serialises"),
                    "{range:?} adjusted={adjusted}"
                );
            }
        }
    }
}
