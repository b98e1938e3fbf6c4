//! Bank transactions and balance snapshots (ISO 20022 camt.053 balance types), as imported from
//! statements.

use axum::Json;
use axum::extract::{OriginalUri, State};
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_data_core::tables::banking::{self, Filter};
use fiscus_http::columnar::{ColumnSpec, ColumnType, Representation, Table, Values};
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use super::{name, range};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TransactionsQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Transactions after this id (exclusive).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub after_id: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "US-OPERATING-001")]
    pub account: Option<String>,
    #[param(pattern = "^[A-Z]{3}$", example = "USD")]
    pub currency: Option<String>,
    /// First booking date (inclusive).
    #[param(format = Date)]
    pub start: Option<String>,
    /// Last booking date (inclusive).
    #[param(format = Date)]
    pub end: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TransactionView {
    /// Always `financial_transaction`.
    pub object: &'static str,
    #[schema(example = "ftx_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub id: String,
    pub account: String,
    /// The bank's id of the transaction.
    pub external_id: String,
    #[schema(format = Date)]
    pub booking_date: String,
    #[schema(format = Date)]
    pub value_date: String,
    /// Signed minor units of `currency`: credits to the account positive, debits negative.
    pub amount_minor: i64,
    pub currency: String,
    pub counterparty: String,
    pub description: String,
    pub reference: String,
    /// The dataset that imported it.
    pub dataset: i64,
}

/// Booked bank transactions, oldest import first; filters are exact.
///
/// Transactions as imported from bank statements (`fiscus import` or `POST /data/imports`), in id order:
/// account, the bank's id, booking and value dates, a signed amount in minor units (credits positive),
/// counterparty, description, reference and the importing dataset. `account`, `currency` and the
/// booking-date range filter exactly. Needs `financial:read`. A read: it initiates no payment, moves no cash
/// and changes no record.
#[utoipa::path(
    get,
    path = "/api/v2/financial/transactions",
    params(TransactionsQuery),
    responses((status = 200, description = "A page of transactions", body = ListPage<TransactionView>))
)]
pub async fn get_transactions(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiQuery(q): ApiQuery<TransactionsQuery>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = super::object_cursor(q.after_id.as_deref())?;
    let account = name("account", q.account.as_deref())?;
    let currency = super::currency(q.currency.as_deref())?;
    let f = Filter {
        account: account.as_deref(),
        currency,
        balance_type: None,
        from: start.as_deref(),
        to: end.as_deref(),
        after_id: after,
    };
    let mut conn = state.store.read().await?;
    let rows = banking::list_transactions(&mut conn, ctx.principal.workspace_id(), &f, limit).await?;
    let p = ListPage::from_overfetch(rows, limit, |t| t.id.clone());
    let mut page = ListPage {
        object: p.object,
        has_more: p.has_more,
        next_after_id: p.next_after_id,
        data: p
            .data
            .into_iter()
            .map(|t| TransactionView {
                object: "financial_transaction",
                id: t.id,
                account: t.account,
                external_id: t.external_id,
                booking_date: t.booking_date,
                value_date: t.value_date,
                amount_minor: t.amount_minor,
                currency: t.currency,
                counterparty: t.counterparty,
                description: t.description,
                reference: t.reference,
                dataset: t.dataset_number,
            })
            .collect(),
    };
    // A page spans the datasets its rows came from (each row names its own): no one dataset in the headers.
    let headers = super::bulk::headers(&uri, page.next_after_id.as_deref(), None);
    let table = match representation {
        Representation::Json => Table::new(),
        _ => transaction_table(&std::mem::take(&mut page.data)),
    };
    super::bulk::render(representation, headers, &page, table)
}

/// The columns of a transactions page in CSV, Arrow and column JSON, in the order of `TransactionView`.
pub const TRANSACTION_COLUMNS: &[ColumnSpec] = &[
    ("id", ColumnType::Text),
    ("account", ColumnType::Text),
    ("external_id", ColumnType::Text),
    ("booking_date", ColumnType::Date),
    ("value_date", ColumnType::Date),
    ("amount_minor", ColumnType::Int),
    ("currency", ColumnType::Text),
    ("counterparty", ColumnType::Text),
    ("description", ColumnType::Text),
    ("reference", ColumnType::Text),
    ("dataset", ColumnType::Int),
];

fn transaction_table(rows: &[TransactionView]) -> Table {
    let text = |get: fn(&TransactionView) -> &String| Values::Text(rows.iter().map(|t| Some(get(t).clone())).collect());
    Table::new()
        .column("id", text(|t| &t.id))
        .column("account", text(|t| &t.account))
        .column("external_id", text(|t| &t.external_id))
        .column("booking_date", Values::Date(rows.iter().map(|t| t.booking_date.clone()).collect()))
        .column("value_date", Values::Date(rows.iter().map(|t| t.value_date.clone()).collect()))
        .column("amount_minor", Values::Int(rows.iter().map(|t| Some(t.amount_minor)).collect()))
        .column("currency", text(|t| &t.currency))
        .column("counterparty", text(|t| &t.counterparty))
        .column("description", text(|t| &t.description))
        .column("reference", text(|t| &t.reference))
        .column("dataset", Values::Int(rows.iter().map(|t| Some(t.dataset)).collect()))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SnapshotsQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Snapshots after this id (exclusive).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub after_id: Option<String>,
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "US-OPERATING-001")]
    pub account: Option<String>,
    /// opening_booked, closing_booked, opening_available, closing_available or interim_booked.
    #[param(pattern = "^[a-z_]{1,32}$", example = "closing_booked")]
    pub balance_type: Option<String>,
    #[param(pattern = "^[A-Z]{3}$", example = "USD")]
    pub currency: Option<String>,
    /// First date (inclusive).
    #[param(format = Date)]
    pub start: Option<String>,
    /// Last date (inclusive).
    #[param(format = Date)]
    pub end: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SnapshotView {
    /// Always `balance_snapshot`.
    pub object: &'static str,
    #[schema(example = "fsn_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub id: String,
    pub account: String,
    #[schema(format = Date)]
    pub date: String,
    /// The ISO 20022 balance type (OPBD, CLBD, OPAV, CLAV, ITBD) in snake case.
    pub balance_type: String,
    /// Signed minor units of `currency`.
    pub amount_minor: i64,
    pub currency: String,
    /// The dataset that imported it.
    pub dataset: i64,
}

/// Account balances as the bank reported them on each date.
///
/// Balances exactly as the bank's statements reported them, in id order: account, date, the ISO 20022
/// (camt.053) balance type in snake case (`opening_booked`, `closing_booked`, `opening_available`,
/// `closing_available`, `interim_booked`), a signed amount in minor units and the importing dataset; Fiscus
/// computes no balance from transactions here. `account`, `balance_type`, `currency` and the date range
/// filter exactly. Needs `financial:read`; a read that moves no cash and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/financial/snapshots",
    params(SnapshotsQuery),
    responses((status = 200, description = "A page of balance snapshots", body = ListPage<SnapshotView>))
)]
pub async fn get_snapshots(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<SnapshotsQuery>,
) -> Result<Json<ListPage<SnapshotView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let (start, end) = range(q.start.as_deref(), q.end.as_deref())?;
    let after = super::object_cursor(q.after_id.as_deref())?;
    let account = name("account", q.account.as_deref())?;
    let currency = super::currency(q.currency.as_deref())?;
    let balance_type =
        super::token("balance_type", q.balance_type.as_deref(), 32, |b| b.is_ascii_lowercase() || b == b'_')?;
    let f = Filter {
        account: account.as_deref(),
        currency,
        balance_type,
        from: start.as_deref(),
        to: end.as_deref(),
        after_id: after,
    };
    let mut conn = state.store.read().await?;
    let rows = banking::list_balances(&mut conn, ctx.principal.workspace_id(), &f, limit).await?;
    let p = ListPage::from_overfetch(rows, limit, |b| b.id.clone());
    Ok(Json(ListPage {
        object: p.object,
        has_more: p.has_more,
        next_after_id: p.next_after_id,
        data: p
            .data
            .into_iter()
            .map(|b| SnapshotView {
                object: "balance_snapshot",
                id: b.id,
                account: b.account,
                date: b.date,
                balance_type: b.balance_type,
                amount_minor: b.amount_minor,
                currency: b.currency,
                dataset: b.dataset_number,
            })
            .collect(),
    }))
}
