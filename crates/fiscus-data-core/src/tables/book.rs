//! The portfolio book: portfolios, tax lots and cash movements (see the migration `…_portfolio_book.sql`).
//! Imported rows are never updated; a lot's open quantity is its quantity less what sales closed of it
//! (`lot_disposals`). Rows decode into typed values here: an unknown stored origin or currency is
//! [`StoreError::Corrupt`], never a default.
//!
//! It is long because the book is one set of tables (portfolios, lots, disposals, holdings) read and written
//! together.

use super::{Result, RowSink, RowTable, WriteTx, insert_rows, text};
use crate::book::LotOrigin;
use fiscus_domain::integrity::Stored;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use sqlx::AnyConnection;
use std::collections::HashMap;

pub use super::finance_core::Existing;

pub const PORTFOLIOS: RowTable = RowTable {
    table: "portfolios",
    columns: &["id", "code", "name", "base_currency", "benchmark_symbol", "fingerprint", "dataset_number"],
};

pub const TAX_LOTS: RowTable = RowTable {
    table: "tax_lots",
    columns: &[
        "id",
        "portfolio_id",
        "lot",
        "instrument_id",
        "acquired",
        "quantity_micros",
        "cost_minor",
        "currency",
        "origin",
        "environment",
        "fingerprint",
        "dataset_number",
    ],
};

pub const CASH: RowTable = RowTable {
    table: "portfolio_cash",
    columns: &[
        "id",
        "portfolio_id",
        "entry",
        "date",
        "amount_minor",
        "currency",
        "description",
        "environment",
        "fingerprint",
        "dataset_number",
    ],
};

/// Portfolios by code.
pub async fn portfolio_codes(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, Existing>> {
    let rows: Vec<(String, i64, String)> =
        sqlx::query_as("SELECT code, id, fingerprint FROM portfolios WHERE workspace_id = $1")
            .bind(workspace_id)
            .fetch_all(conn)
            .await?;
    Ok(rows.into_iter().map(|(k, id, fingerprint)| (k, Existing { id, fingerprint })).collect())
}

/// Fingerprints of stored lots by `{portfolio_id}/{lot}`.
pub async fn lot_fingerprints(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT CAST(portfolio_id AS TEXT) || '/' || lot, fingerprint FROM tax_lots WHERE workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Fingerprints of stored cash movements by `{portfolio_id}/{entry}`.
pub async fn cash_fingerprints(conn: &mut AnyConnection, workspace_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT CAST(portfolio_id AS TEXT) || '/' || entry, fingerprint FROM portfolio_cash WHERE workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().collect())
}

pub struct NewPortfolio<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub base_currency: Currency,
    pub benchmark_symbol: Option<&'a str>,
    pub fingerprint: String,
}

/// Inserts portfolios with new integer ids (the ids the API's paths use).
pub async fn insert_portfolios(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    portfolios: &[NewPortfolio<'_>],
    lines: &mut impl RowSink,
) -> Result<()> {
    if portfolios.is_empty() {
        return Ok(());
    }
    let first = super::take_numbers(tx, "portfolios", portfolios.len() as i64).await?;
    let rows: Vec<Vec<Stored>> = portfolios
        .iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                Stored::Integer(first + i as i64),
                text(p.code),
                text(p.name),
                text(p.base_currency.code()),
                super::opt_text(p.benchmark_symbol),
                text(&p.fingerprint),
                Stored::Integer(number),
            ]
        })
        .collect();
    insert_rows(tx, workspace_id, &PORTFOLIOS, &rows, lines).await
}

pub struct NewLot {
    pub id: String,
    pub portfolio_id: i64,
    pub lot: String,
    pub instrument_id: String,
    pub acquired: String,
    pub quantity_micros: i64,
    pub cost_minor: i64,
    pub currency: Currency,
    pub origin: LotOrigin,
    pub fingerprint: String,
}

/// Inserts imported lots (read in both environments).
pub async fn insert_lots(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    lots: &[NewLot],
    lines: &mut impl RowSink,
) -> Result<()> {
    super::insert_mapped(
        tx,
        workspace_id,
        &TAX_LOTS,
        lots,
        |l| {
            vec![
                text(&l.id),
                Stored::Integer(l.portfolio_id),
                text(&l.lot),
                text(&l.instrument_id),
                text(&l.acquired),
                Stored::Integer(l.quantity_micros),
                Stored::Integer(l.cost_minor),
                text(l.currency.code()),
                text(l.origin.as_str()),
                Stored::Null,
                text(&l.fingerprint),
                Stored::Integer(number),
            ]
        },
        lines,
    )
    .await
}

pub struct NewCash {
    pub id: String,
    pub portfolio_id: i64,
    pub entry: String,
    pub date: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub description: String,
    pub fingerprint: String,
}

/// Inserts imported cash movements (read in both environments).
pub async fn insert_cash(
    tx: &mut WriteTx,
    workspace_id: &str,
    number: i64,
    cash: &[NewCash],
    lines: &mut impl RowSink,
) -> Result<()> {
    super::insert_mapped(
        tx,
        workspace_id,
        &CASH,
        cash,
        |c| {
            vec![
                text(&c.id),
                Stored::Integer(c.portfolio_id),
                text(&c.entry),
                text(&c.date),
                Stored::Integer(c.amount_minor),
                text(c.currency.code()),
                text(&c.description),
                Stored::Null,
                text(&c.fingerprint),
                Stored::Integer(number),
            ]
        },
        lines,
    )
    .await
}

/// A portfolio as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Portfolio {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub base_currency: Currency,
    pub benchmark_symbol: Option<String>,
    pub dataset_number: i64,
}

fiscus_store::row! {
    struct PortfolioRow {
        id: i64,
        code: String,
        name: String,
        base_currency: String,
        benchmark_symbol: Option<String>,
        dataset_number: i64,
    }
}

impl TryFrom<PortfolioRow> for Portfolio {
    type Error = StoreError;
    fn try_from(r: PortfolioRow) -> Result<Portfolio> {
        Ok(Portfolio {
            base_currency: currency(&r.base_currency, "portfolios.base_currency")?,
            id: r.id,
            code: r.code,
            name: r.name,
            benchmark_symbol: r.benchmark_symbol,
            dataset_number: r.dataset_number,
        })
    }
}

fn currency(code: &str, column: &str) -> Result<Currency> {
    Currency::parse(code).ok_or_else(|| StoreError::Corrupt(format!("{column}: unknown currency `{code}`")))
}

const PORTFOLIO_COLUMNS: &str = "id, code, name, base_currency, benchmark_symbol, dataset_number";

/// A portfolio of the workspace; `NotFound` for another workspace's.
pub async fn get_portfolio(conn: &mut AnyConnection, workspace_id: &str, id: i64) -> Result<Portfolio> {
    let row: PortfolioRow =
        sqlx::query_as(&format!("SELECT {PORTFOLIO_COLUMNS} FROM portfolios WHERE workspace_id = $1 AND id = $2"))
            .bind(workspace_id)
            .bind(id)
            .fetch_optional(conn)
            .await?
            .ok_or(StoreError::NotFound)?;
    row.try_into()
}

/// The workspace's portfolios by id, after `after` (exclusive), at most `limit` (callers over-fetch by one).
pub async fn list_portfolios(
    conn: &mut AnyConnection,
    workspace_id: &str,
    after: i64,
    limit: i64,
) -> Result<Vec<Portfolio>> {
    let rows: Vec<PortfolioRow> = sqlx::query_as(&format!(
        "SELECT {PORTFOLIO_COLUMNS} FROM portfolios WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3"
    ))
    .bind(workspace_id)
    .bind(after)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Portfolio::try_from).collect()
}

/// A date after every date a book holds: "as of" no particular day is as of every movement recorded.
const END_OF_TIME: &str = "9999-12-31";

/// A lot still (at least partly) open, as a tenant sees it: its open quantity and the cost basis of that
/// quantity (pro rata of the lot's cost, as the disposals took theirs).
#[derive(Clone, Debug, PartialEq)]
pub struct OpenLot {
    pub id: String,
    pub lot: String,
    pub instrument_id: String,
    pub symbol: String,
    pub acquired: String,
    /// The lot's quantity when opened.
    pub original_micros: i64,
    pub open_micros: i64,
    /// Cost basis of the open quantity.
    pub open_cost_minor: i64,
    pub currency: Currency,
    pub origin: LotOrigin,
}

fiscus_store::row! {
    struct LotRow {
        id: String,
        lot: String,
        instrument_id: String,
        symbol: String,
        acquired: String,
        quantity_micros: i64,
        cost_minor: i64,
        currency: String,
        origin: String,
        disposed_micros: i64,
        disposed_cost_minor: i64,
    }
}

/// The open lots of a portfolio in the tenant's environment (imported lots, and lots its own settlements
/// opened less what its own settlements closed), by instrument symbol then acquisition date. With `as_of`,
/// the lots as they stood at the end of that day: acquired on or before it, less what was disposed of on or
/// before it, so a sale settled later leaves the lot whole (the book that existed, not today's book cut at
/// a date).
pub async fn open_lots(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    portfolio_id: i64,
    as_of: Option<&str>,
) -> Result<Vec<OpenLot>> {
    let rows: Vec<LotRow> = sqlx::query_as(
        "SELECT l.id, l.lot, l.instrument_id, i.symbol, l.acquired, l.quantity_micros, l.cost_minor, l.currency, \
         l.origin, CAST(COALESCE(SUM(d.quantity_micros), 0) AS BIGINT) AS disposed_micros, \
         CAST(COALESCE(SUM(d.cost_minor), 0) AS BIGINT) AS disposed_cost_minor \
         FROM tax_lots l JOIN instruments i ON i.workspace_id = l.workspace_id AND i.id = l.instrument_id \
         LEFT JOIN lot_disposals d ON d.workspace_id = l.workspace_id AND d.lot_id = l.id \
              AND (d.environment IS NULL OR d.environment = $3) AND d.disposed <= $4 \
         WHERE l.workspace_id = $1 AND l.portfolio_id = $2 AND (l.environment IS NULL OR l.environment = $3) \
               AND l.acquired <= $4 \
         GROUP BY l.id, l.lot, l.instrument_id, i.symbol, l.acquired, l.quantity_micros, l.cost_minor, l.currency, \
                  l.origin \
         ORDER BY i.symbol, l.acquired, l.lot",
    )
    .bind(&tenant.workspace_id)
    .bind(portfolio_id)
    .bind(tenant.environment.as_str())
    .bind(as_of.unwrap_or(END_OF_TIME))
    .fetch_all(conn)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let open_micros = r.quantity_micros - r.disposed_micros;
        if open_micros < 0 {
            return Err(StoreError::Corrupt(format!("lot {} is closed for more than it held", r.id)));
        }
        if open_micros == 0 {
            continue;
        }
        out.push(OpenLot {
            currency: currency(&r.currency, "tax_lots.currency")?,
            origin: LotOrigin::parse(&r.origin)
                .ok_or_else(|| StoreError::Corrupt(format!("tax_lots.origin: unknown `{}`", r.origin)))?,
            open_cost_minor: r.cost_minor - r.disposed_cost_minor,
            original_micros: r.quantity_micros,
            open_micros,
            id: r.id,
            lot: r.lot,
            instrument_id: r.instrument_id,
            symbol: r.symbol,
            acquired: r.acquired,
        });
    }
    Ok(out)
}

/// A portfolio's cash by currency in the tenant's environment (the sum of its movements), by currency
/// code; currencies whose movements sum to zero are kept (the book shows them). With `as_of`, the
/// movements dated on or before it.
pub async fn cash_balances(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    portfolio_id: i64,
    as_of: Option<&str>,
) -> Result<Vec<(Currency, i64)>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT currency, CAST(SUM(amount_minor) AS BIGINT) FROM portfolio_cash \
         WHERE workspace_id = $1 AND portfolio_id = $2 AND (environment IS NULL OR environment = $3) \
               AND date <= $4 \
         GROUP BY currency ORDER BY currency",
    )
    .bind(&tenant.workspace_id)
    .bind(portfolio_id)
    .bind(tenant.environment.as_str())
    .bind(as_of.unwrap_or(END_OF_TIME))
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(|(c, a)| Ok((currency(&c, "portfolio_cash.currency")?, a))).collect()
}

/// A lot a settled investment order opened (read only in its environment).
pub struct TradeLot<'a> {
    pub id: String,
    pub portfolio_id: i64,
    pub lot: String,
    pub instrument_id: &'a str,
    pub acquired: &'a str,
    pub quantity_micros: i64,
    pub cost_minor: i64,
    pub currency: Currency,
}

pub async fn insert_trade_lot(tx: &mut WriteTx, tenant: &Tenant, l: &TradeLot<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO tax_lots (workspace_id, id, portfolio_id, lot, instrument_id, acquired, quantity_micros, cost_minor, \
         currency, origin, environment, fingerprint, dataset_number) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'trade', $10, '', NULL)",
    )
    .bind(&tenant.workspace_id)
    .bind(&l.id)
    .bind(l.portfolio_id)
    .bind(&l.lot)
    .bind(l.instrument_id)
    .bind(l.acquired)
    .bind(l.quantity_micros)
    .bind(l.cost_minor)
    .bind(l.currency.code())
    .bind(tenant.environment.as_str())
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// What a settled sale closed of a lot.
pub struct Disposal<'a> {
    pub lot_id: &'a str,
    pub portfolio_id: i64,
    pub disposed: &'a str,
    pub quantity_micros: i64,
    pub cost_minor: i64,
    pub proceeds_minor: i64,
    /// `short` or `long`.
    pub term: &'a str,
    /// The action that settled it.
    pub source: &'a str,
    pub at: i64,
}

pub async fn insert_disposal(tx: &mut WriteTx, tenant: &Tenant, d: &Disposal<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO lot_disposals (workspace_id, id, lot_id, portfolio_id, disposed, quantity_micros, cost_minor, \
         proceeds_minor, term, environment, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&tenant.workspace_id)
    .bind(fiscus_domain::ids::new_id("ldp"))
    .bind(d.lot_id)
    .bind(d.portfolio_id)
    .bind(d.disposed)
    .bind(d.quantity_micros)
    .bind(d.cost_minor)
    .bind(d.proceeds_minor)
    .bind(d.term)
    .bind(tenant.environment.as_str())
    .bind(d.source)
    .bind(d.at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// A cash movement a settlement made (read only in its environment).
#[allow(clippy::too_many_arguments)]
pub async fn insert_trade_cash(
    tx: &mut WriteTx,
    tenant: &Tenant,
    portfolio_id: i64,
    entry: &str,
    date: &str,
    amount_minor: i64,
    currency: Currency,
    description: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO portfolio_cash (workspace_id, id, portfolio_id, entry, date, amount_minor, currency, description, \
         environment, fingerprint, dataset_number) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', NULL)",
    )
    .bind(&tenant.workspace_id)
    .bind(fiscus_domain::ids::new_id("pcm"))
    .bind(portfolio_id)
    .bind(entry)
    .bind(date)
    .bind(amount_minor)
    .bind(currency.code())
    .bind(description)
    .bind(tenant.environment.as_str())
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The workspace's restricted list: (symbol, reason), by symbol.
pub async fn restricted(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as("SELECT symbol, reason FROM restricted_instruments WHERE workspace_id = $1 ORDER BY symbol")
        .bind(workspace_id)
        .fetch_all(conn)
        .await?)
}

/// Puts a symbol on the restricted list (or updates its reason).
pub async fn restrict(
    tx: &mut WriteTx,
    workspace_id: &str,
    symbol: &str,
    reason: &str,
    by: &fiscus_domain::actor::Actor,
    at: i64,
) -> Result<()> {
    sqlx::query("DELETE FROM restricted_instruments WHERE workspace_id = $1 AND symbol = $2")
        .bind(workspace_id)
        .bind(symbol)
        .execute(tx.conn())
        .await?;
    sqlx::query(
        "INSERT INTO restricted_instruments (workspace_id, symbol, reason, added_by, added_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(workspace_id)
    .bind(symbol)
    .bind(reason)
    .bind(by.label())
    .bind(at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The action a rebalance proposal became, if it became one.
pub async fn order_link(conn: &mut AnyConnection, tenant: &Tenant, proposal_id: &str) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT action_id FROM investment_order_links WHERE workspace_id = $1 AND environment = $2 AND proposal_id = $3",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(proposal_id)
    .fetch_optional(conn)
    .await?)
}

/// Links a proposal to its action; a second link of the same proposal is a [`StoreError::Conflict`].
pub async fn link_order(tx: &mut WriteTx, tenant: &Tenant, proposal_id: &str, action_id: &str, at: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO investment_order_links (workspace_id, environment, proposal_id, action_id, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(proposal_id)
    .bind(action_id)
    .bind(at)
    .execute(tx.conn())
    .await?;
    Ok(())
}
