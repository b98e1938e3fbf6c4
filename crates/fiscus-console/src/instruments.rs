//! Instruments as people look at them: the workspace's instruments with their latest close, and one
//! instrument's reference data with its price history drawn (adjusted close where the data has it).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_data_core::tables::market::{self, InstrumentFilter, Rows, Window};

use super::charts;
use super::html::{self, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_http::AppState;

/// At most this many instruments are listed (a workspace's universe, not a market's).
const LISTED: u32 = 2_000;
/// At most this many daily bars are drawn (five years of every calendar day, for what trades every day).
const DRAWN: u32 = 1_830;

/// `YYYY-MM-DD` five years earlier (the 29th of February becomes the 28th).
fn five_years_before(date: &str) -> Option<String> {
    let year: i32 = date.get(..4)?.parse().ok()?;
    let rest = date.get(4..)?;
    Some(format!("{:04}{}", year - 5, if rest == "-02-29" { "-02-28" } else { rest }))
}

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// The price a person reads for a bar: the adjusted close where the dataset has one, else the close.
fn price(bar: &market::Bar) -> Option<f64> {
    bar.adj_close.as_deref().or(bar.close.as_deref()).and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite())
}

pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let none = InstrumentFilter { symbol: None, asset_class: None, currency: None, exchange: None };
    let Ok(instruments) = market::list_instruments(&mut conn, &op.workspace_id, &none, None, LISTED).await else {
        return unavailable();
    };
    let mut classes: Vec<String> = instruments.iter().map(|i| i.asset_class.clone()).collect();
    classes.sort();
    classes.dedup();
    let mut rows = Vec::with_capacity(instruments.len());
    for i in &instruments {
        let latest = match market::latest_dataset(&mut conn, &op.workspace_id, Rows::Prices, &i.id).await {
            Ok(Some(dataset)) => {
                let Ok(last) = market::last_bar(&mut conn, &op.workspace_id, &i.id, dataset).await else {
                    return unavailable();
                };
                last.and_then(|b| price(&b).map(|p| format!("{p} {} on {}", escape(&i.currency), escape(&b.date))))
            }
            Ok(None) => None,
            Err(_) => return unavailable(),
        };
        let cells = vec![
            format!("<a href=\"/console/instruments/{}\">{}</a>", escape(&i.id), escape(&i.symbol)),
            escape(&i.name),
            escape(&i.asset_class),
            escape(&i.exchange),
            latest.unwrap_or_else(|| "no prices".to_string()),
        ];
        let words = [i.symbol.as_str(), &i.name, &i.exchange, &i.sector, &i.country, &i.isin, &i.currency];
        rows.push(Row::new(cells, &i.asset_class, &words));
    }
    let facets: Vec<&str> = classes.iter().map(String::as_str).collect();
    let queue = Queue {
        id: "instruments",
        caption: "Instruments",
        headers: &["Symbol", "Name", "Asset class", "Exchange", "Latest price"],
        facet: ("Asset class", &facets),
        empty: "No instruments yet: import an instruments dataset (or run `fiscus demo`).",
    };
    page("Instruments", op.nav(), &queue.render("/console/instruments", &filter, rows))
}

pub async fn detail(State(state): State<AppState>, op: OperatorSession, Path(id): Path<String>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let i = match market::get_instrument(&mut conn, &op.workspace_id, &id).await {
        Ok(i) => i,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such instrument in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    let dataset = match market::latest_dataset(&mut conn, &op.workspace_id, Rows::Prices, &i.id).await {
        Ok(d) => d,
        Err(_) => return unavailable(),
    };
    let mut bars = Vec::new();
    let mut quality = String::new();
    if let Some(dataset) = dataset {
        quality = match fiscus_data_core::tables::datasets::quality(
            &mut conn,
            state.store.seal_key(),
            &op.workspace_id,
            dataset,
        )
        .await
        {
            Ok(report) => quality_section(&i.symbol, dataset, report.as_ref()),
            Err(_) => return unavailable(),
        };
        let Ok(last) = market::last_bar(&mut conn, &op.workspace_id, &i.id, dataset).await else {
            return unavailable();
        };
        // The five years up to the newest bar.
        let from = last.as_ref().and_then(|b| five_years_before(&b.date));
        let window = Window { from: from.as_deref(), ..Window::default() };
        match market::bars(&mut conn, &op.workspace_id, &i.id, dataset, window, DRAWN).await {
            Ok(b) => bars = b,
            Err(_) => return unavailable(),
        }
    }
    let points: Vec<(i64, f64)> = bars
        .iter()
        .filter_map(|b| {
            let at = fiscus_domain::clock::parse_rfc3339(&format!("{}T00:00:00Z", b.date))?;
            Some((at, price(b)?))
        })
        .collect();
    let chart = charts::time_line(&charts::TimeLine {
        title: &format!("{} price history (five years)", i.symbol),
        y_label: &format!("{} per unit (adjusted close)", i.currency),
        points: &points,
        limit: None,
    });
    let body = format!(
        "<dl><dt>Symbol</dt><dd>{symbol}</dd><dt>Name</dt><dd>{name}</dd><dt>Asset class</dt><dd>{class}</dd>\
         <dt>Exchange</dt><dd>{exchange}</dd><dt>Currency</dt><dd>{currency}</dd><dt>Country</dt><dd>{country}</dd>\
         <dt>Sector</dt><dd>{sector}</dd><dt>ISIN</dt><dd>{isin}</dd><dt>Reference data</dt><dd>dataset {dataset}</dd></dl>\
         <h2>Price history</h2>{chart}{quality}",
        symbol = escape(&i.symbol),
        name = escape(&i.name),
        class = escape(&i.asset_class),
        exchange = escape(&i.exchange),
        currency = escape(&i.currency),
        country = escape(&i.country),
        sector = escape(&i.sector),
        isin = escape(&i.isin),
        dataset = i.dataset_number,
    );
    page(&format!("Instrument {}", i.symbol), op.nav(), &body)
}

/// What the prices dataset's quality report (written at import) found in this instrument's series: each kind
/// of finding with its count and first dates, or that there is none, or that the dataset predates reports.
fn quality_section(
    symbol: &str,
    dataset: i64,
    report: Option<&fiscus_data_core::rules::quality::QualityReport>,
) -> String {
    let head =
        format!("<h2>Data quality</h2><p>From the quality report of prices dataset {dataset}, written at import.</p>");
    let Some(report) = report else {
        return format!(
            "<h2>Data quality</h2><p>Prices dataset {dataset} was imported before quality reports were written.</p>"
        );
    };
    let Some(f) = report.findings.iter().find(|f| f.series == symbol) else {
        return format!("{head}<p>Nothing to report: no gaps, zero or negative values, stale runs or outliers.</p>");
    };
    let mut items = String::new();
    for (what, x) in [
        ("Gaps", &f.gaps),
        ("Zero values", &f.zero_values),
        ("Negative values", &f.negative_values),
        ("Missing values", &f.missing_values),
        ("Stale runs", &f.stale_runs),
        ("Outliers", &f.outliers),
    ] {
        if x.count > 0 {
            let dates: Vec<String> = x.dates.iter().take(5).map(|d| escape(d)).collect();
            items.push_str(&format!("<dt>{what}</dt><dd>{} (first: {})</dd>", x.count, dates.join(", ")));
        }
    }
    format!("{head}<p>{} dates, {}.</p><dl>{items}</dl>", f.observations, f.frequency.as_str())
}
