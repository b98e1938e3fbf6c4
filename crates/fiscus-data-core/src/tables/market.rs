//! Instruments (identities and their reference data per dataset version), prices, corporate actions and
//! fundamentals.

use super::{
    MAX_DATE, Result, RowSink, RowTable, StoreError, WriteTx, insert_mapped, insert_rows, opt_text, or_min, text,
};
use crate::rules::records::{CorporateActionRecord, FundamentalRecord, InstrumentRecord, PriceRecord};
use fiscus_domain::integrity::Stored;
use sqlx::AnyConnection;
use std::collections::HashMap;

pub const INSTRUMENT_REFS: RowTable = RowTable {
    table: "instrument_refs",
    columns: &[
        "instrument_id",
        "dataset_number",
        "symbol",
        "name",
        "asset_class",
        "currency",
        "exchange",
        "country",
        "sector",
        "isin",
    ],
};

pub const PRICES: RowTable = RowTable {
    table: "prices",
    columns: &["instrument_id", "dataset_number", "date", "open", "high", "low", "close", "adj_close", "volume"],
};

pub const CORPORATE_ACTIONS: RowTable = RowTable {
    table: "corporate_actions",
    columns: &["instrument_id", "dataset_number", "ex_date", "action", "pay_date", "ratio", "amount", "currency"],
};

pub const FUNDAMENTALS: RowTable = RowTable {
    table: "fundamentals",
    columns: &["instrument_id", "dataset_number", "period_end", "fiscal_period", "metric", "value", "currency"],
};

/// Every instrument of a workspace by symbol → id.
pub async fn ids_by_symbol(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT symbol, id FROM instruments WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_all(conn)
        .await?;
    Ok(rows.into_iter().collect())
}

/// Writes an instruments dataset: new symbols get an identity (`ins_…`), and every record becomes this
/// version's reference row.
pub async fn insert_instruments(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    records: &[InstrumentRecord],
    created_at: i64,
    lines: &mut impl RowSink,
) -> Result<()> {
    let mut known = ids_by_symbol(tx.conn(), workspace_id).await?;
    let mut identities = Vec::new();
    for r in records {
        if !known.contains_key(&r.symbol) {
            let id = fiscus_domain::ids::new_id("ins");
            identities.push(vec![text(&id), text(&r.symbol), Stored::Integer(created_at)]);
            known.insert(r.symbol.clone(), id);
        }
    }
    const IDENTITIES: RowTable = RowTable { table: "instruments", columns: &["id", "symbol", "created_at"] };
    // Identities are not dataset rows (a later version refers to the same identity), so they stay out of
    // the content hash.
    insert_rows(tx, workspace_id, &IDENTITIES, &identities, &mut Vec::new()).await?;
    let rows: Vec<Vec<Stored>> = records
        .iter()
        .map(|r| {
            vec![
                text(&known[&r.symbol]),
                Stored::Integer(number),
                text(&r.symbol),
                text(&r.name),
                text(&r.asset_class),
                text(r.currency.code()),
                text(&r.exchange),
                text(&r.country),
                text(&r.sector),
                text(&r.isin),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &INSTRUMENT_REFS, &rows, lines).await
}

/// A bar as the prices table stores it (in `PRICES.columns` order), taking its values: what a streamed
/// import sends to [`super::Bulk`].
pub fn price_row(instrument_id: String, number: i64, b: PriceRecord) -> Vec<Stored> {
    let value = |v: Option<String>| v.map_or(Stored::Null, Stored::Text);
    vec![
        Stored::Text(instrument_id),
        Stored::Integer(number),
        Stored::Text(b.date),
        value(b.open),
        value(b.high),
        value(b.low),
        value(b.close),
        value(b.adj_close),
        value(b.volume),
    ]
}

/// Writes a prices dataset; each bar comes with its instrument's id.
pub async fn insert_prices(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    bars: &[(String, PriceRecord)],
    lines: &mut impl RowSink,
) -> Result<()> {
    insert_mapped(tx, workspace_id, &PRICES, bars, |(id, b)| price_row(id.clone(), number, b.clone()), lines).await
}

pub async fn insert_corporate_actions(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    actions: &[(String, CorporateActionRecord)],
    lines: &mut impl RowSink,
) -> Result<()> {
    let rows: Vec<Vec<Stored>> = actions
        .iter()
        .map(|(id, a)| {
            vec![
                text(id),
                Stored::Integer(number),
                text(&a.ex_date),
                text(a.action.as_str()),
                opt_text(a.pay_date.as_deref()),
                opt_text(a.ratio.as_deref()),
                opt_text(a.amount.as_deref()),
                opt_text(a.currency.map(|c| c.code())),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &CORPORATE_ACTIONS, &rows, lines).await
}

pub async fn insert_fundamentals(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    figures: &[(String, FundamentalRecord)],
    lines: &mut impl RowSink,
) -> Result<()> {
    let rows: Vec<Vec<Stored>> = figures
        .iter()
        .map(|(id, f)| {
            vec![
                text(id),
                Stored::Integer(number),
                text(&f.period_end),
                text(&f.fiscal_period),
                text(&f.metric),
                text(&f.value),
                opt_text(f.currency.map(|c| c.code())),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &FUNDAMENTALS, &rows, lines).await
}

fiscus_store::row! {
    /// An instrument with the reference data of its newest instruments dataset.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Instrument {
        pub id: String,
        pub symbol: String,
        pub dataset_number: i64,
        pub name: String,
        pub asset_class: String,
        pub currency: String,
        pub exchange: String,
        pub country: String,
        pub sector: String,
        pub isin: String,
        pub created_at: i64,
    }
}

const INSTRUMENT_SELECT: &str = "SELECT i.id, i.symbol, r.dataset_number, r.name, r.asset_class, r.currency, \
     r.exchange, r.country, r.sector, r.isin, i.created_at FROM instruments i JOIN instrument_refs r \
     ON r.workspace_id = i.workspace_id AND r.instrument_id = i.id AND r.dataset_number = \
     (SELECT MAX(r2.dataset_number) FROM instrument_refs r2 WHERE r2.workspace_id = i.workspace_id AND r2.instrument_id = i.id)";

#[derive(Clone, Debug, Default)]
pub struct InstrumentFilter<'a> {
    pub symbol: Option<&'a str>,
    pub asset_class: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub exchange: Option<&'a str>,
}

pub async fn list_instruments(
    conn: &mut AnyConnection,
    workspace_id: &str,
    filter: &InstrumentFilter<'_>,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<Instrument>> {
    let mut sql = format!("{INSTRUMENT_SELECT} WHERE i.workspace_id = $1 AND i.id > $2");
    let mut binds = Vec::new();
    for (column, value) in [
        ("i.symbol", filter.symbol),
        ("r.asset_class", filter.asset_class),
        ("r.currency", filter.currency),
        ("r.exchange", filter.exchange),
    ] {
        if let Some(v) = value {
            binds.push(v);
            sql.push_str(&format!(" AND {column} = ${}", binds.len() + 2));
        }
    }
    sql.push_str(&format!(" ORDER BY i.id LIMIT ${}", binds.len() + 3));
    let mut q = sqlx::query_as::<_, Instrument>(&sql).bind(workspace_id).bind(or_min(after));
    for b in binds {
        q = q.bind(b);
    }
    Ok(q.bind(i64::from(limit) + 1).fetch_all(conn).await?)
}

/// Every instrument of a workspace with its newest reference data, by symbol.
pub async fn instruments_by_symbol(
    conn: &mut AnyConnection,
    workspace_id: &str,
) -> Result<HashMap<String, Instrument>> {
    let rows = sqlx::query_as::<_, Instrument>(&format!("{INSTRUMENT_SELECT} WHERE i.workspace_id = $1"))
        .bind(workspace_id)
        .fetch_all(conn)
        .await?;
    Ok(rows.into_iter().map(|i| (i.symbol.clone(), i)).collect())
}

/// An instrument by its id (`ins_…`) or, failing that, its symbol.
pub async fn get_instrument(conn: &mut AnyConnection, workspace_id: &str, id_or_symbol: &str) -> Result<Instrument> {
    let column = if fiscus_domain::ids::is_id_of("ins", id_or_symbol) { "i.id" } else { "i.symbol" };
    sqlx::query_as::<_, Instrument>(&format!("{INSTRUMENT_SELECT} WHERE i.workspace_id = $1 AND {column} = $2"))
        .bind(workspace_id)
        .bind(id_or_symbol)
        .fetch_optional(conn)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Which table of instrument rows a dataset question is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    Prices,
    CorporateActions,
    Fundamentals,
}

impl Rows {
    fn table(self) -> &'static str {
        match self {
            Rows::Prices => "prices",
            Rows::CorporateActions => "corporate_actions",
            Rows::Fundamentals => "fundamentals",
        }
    }
}

/// The datasets holding rows of this kind for the instrument, newest first.
pub async fn datasets_for(
    conn: &mut AnyConnection,
    workspace_id: &str,
    rows: Rows,
    instrument_id: &str,
) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT DISTINCT dataset_number FROM {} WHERE workspace_id = $1 AND instrument_id = $2 ORDER BY dataset_number DESC",
        rows.table()
    ))
    .bind(workspace_id)
    .bind(instrument_id)
    .fetch_all(conn)
    .await?)
}

/// The newest dataset holding rows of this kind for the instrument.
pub async fn latest_dataset(
    conn: &mut AnyConnection,
    workspace_id: &str,
    rows: Rows,
    instrument_id: &str,
) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT MAX(dataset_number) FROM {} WHERE workspace_id = $1 AND instrument_id = $2",
        rows.table()
    ))
    .bind(workspace_id)
    .bind(instrument_id)
    .fetch_one(conn)
    .await?)
}

fiscus_store::row! {
    /// One stored bar.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Bar {
        pub date: String,
        pub open: Option<String>,
        pub high: Option<String>,
        pub low: Option<String>,
        pub close: Option<String>,
        pub adj_close: Option<String>,
        pub volume: Option<String>,
    }
}

/// The newest bar of one instrument in one dataset.
pub async fn last_bar(
    conn: &mut AnyConnection,
    workspace_id: &str,
    instrument_id: &str,
    dataset_number: i64,
) -> Result<Option<Bar>> {
    Ok(sqlx::query_as::<_, Bar>(
        "SELECT date, open, high, low, close, adj_close, volume FROM prices WHERE workspace_id = $1 AND \
         instrument_id = $2 AND dataset_number = $3 ORDER BY date DESC LIMIT 1",
    )
    .bind(workspace_id)
    .bind(instrument_id)
    .bind(dataset_number)
    .fetch_optional(conn)
    .await?)
}

/// A date window: `from` and `to` inclusive (`YYYY-MM-DD`), `after` an exclusive cursor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window<'a> {
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// Bars of one instrument from one dataset in date order, `limit + 1` of them.
pub async fn bars(
    conn: &mut AnyConnection,
    workspace_id: &str,
    instrument_id: &str,
    dataset_number: i64,
    window: Window<'_>,
    limit: u32,
) -> Result<Vec<Bar>> {
    let lower = std::cmp::max(or_min(window.from), or_min(window.after));
    let exclusive = window.after.is_some_and(|a| a >= or_min(window.from));
    Ok(sqlx::query_as::<_, Bar>(&format!(
        "SELECT date, open, high, low, close, adj_close, volume FROM prices WHERE workspace_id = $1 AND \
         instrument_id = $2 AND dataset_number = $3 AND date {} $4 AND date <= $5 ORDER BY date LIMIT $6",
        if exclusive { ">" } else { ">=" }
    ))
    .bind(workspace_id)
    .bind(instrument_id)
    .bind(dataset_number)
    .bind(lower)
    .bind(window.to.unwrap_or(MAX_DATE))
    .bind(i64::from(limit) + 1)
    .fetch_all(conn)
    .await?)
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct CorporateAction {
        pub ex_date: String,
        pub action: String,
        pub pay_date: Option<String>,
        pub ratio: Option<String>,
        pub amount: Option<String>,
        pub currency: Option<String>,
    }
}

/// Corporate actions of one instrument from one dataset by ex-date; the cursor is `{ex_date}_{action}`.
pub async fn corporate_actions(
    conn: &mut AnyConnection,
    workspace_id: &str,
    instrument_id: &str,
    dataset_number: i64,
    action: Option<&str>,
    window: Window<'_>,
    limit: u32,
) -> Result<Vec<CorporateAction>> {
    let mut sql = String::from(
        "SELECT ex_date, action, pay_date, ratio, amount, currency FROM corporate_actions WHERE workspace_id = $1 \
         AND instrument_id = $2 AND dataset_number = $3 AND ex_date >= $4 AND ex_date <= $5 \
         AND (ex_date > $6 OR (ex_date = $6 AND action > $7))",
    );
    if action.is_some() {
        sql.push_str(" AND action = $9");
    }
    // The cursor compares the ORDER BY columns themselves, so it agrees with the order under any collation.
    sql.push_str(" ORDER BY ex_date, action LIMIT $8");
    let (after_date, after_action) = or_min(window.after).split_once('_').unwrap_or((or_min(window.after), ""));
    let mut q = sqlx::query_as::<_, CorporateAction>(&sql)
        .bind(workspace_id)
        .bind(instrument_id)
        .bind(dataset_number)
        .bind(or_min(window.from))
        .bind(window.to.unwrap_or(MAX_DATE))
        .bind(after_date)
        .bind(after_action)
        .bind(i64::from(limit) + 1);
    if let Some(a) = action {
        q = q.bind(a);
    }
    Ok(q.fetch_all(conn).await?)
}

fiscus_store::row! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Fundamental {
        pub period_end: String,
        pub fiscal_period: String,
        pub metric: String,
        pub value: String,
        pub currency: Option<String>,
    }
}

/// Fundamentals of one instrument from one dataset; the cursor is `{period_end}_{fiscal_period}_{metric}`.
/// (The filters and the window are separate because each is optional on its own.)
#[allow(clippy::too_many_arguments)]
pub async fn fundamentals(
    conn: &mut AnyConnection,
    workspace_id: &str,
    instrument_id: &str,
    dataset_number: i64,
    metric: Option<&str>,
    fiscal_period: Option<&str>,
    window: Window<'_>,
    limit: u32,
) -> Result<Vec<Fundamental>> {
    let mut sql = String::from(
        "SELECT period_end, fiscal_period, metric, value, currency FROM fundamentals WHERE workspace_id = $1 \
         AND instrument_id = $2 AND dataset_number = $3 AND period_end >= $4 AND period_end <= $5 \
         AND (period_end > $6 OR (period_end = $6 AND (fiscal_period > $7 OR (fiscal_period = $7 AND metric > $8))))",
    );
    let mut binds = Vec::new();
    for (column, value) in [("metric", metric), ("fiscal_period", fiscal_period)] {
        if let Some(v) = value {
            binds.push(v);
            sql.push_str(&format!(" AND {column} = ${}", binds.len() + 9));
        }
    }
    sql.push_str(" ORDER BY period_end, fiscal_period, metric LIMIT $9");
    let after = or_min(window.after);
    let (after_end, rest) = after.split_once('_').unwrap_or((after, ""));
    let (after_period, after_metric) = rest.split_once('_').unwrap_or((rest, ""));
    let mut q = sqlx::query_as::<_, Fundamental>(&sql)
        .bind(workspace_id)
        .bind(instrument_id)
        .bind(dataset_number)
        .bind(or_min(window.from))
        .bind(window.to.unwrap_or(MAX_DATE))
        .bind(after_end)
        .bind(after_period)
        .bind(after_metric)
        .bind(i64::from(limit) + 1);
    for b in binds {
        q = q.bind(b);
    }
    Ok(q.fetch_all(conn).await?)
}
