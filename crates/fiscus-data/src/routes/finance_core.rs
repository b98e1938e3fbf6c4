//! Finance core, read-only (the seed's rule): legal entities and posted journals, with the seed's query
//! parameters `limit`, `after_id` (integer), `uid`, `status` and `general_ledger_id`, all exact.

use axum::Json;
use axum::extract::{OriginalUri, State};
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_data_core::tables::finance_core::{self, Filter};
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::columnar::{ColumnSpec, ColumnType, Representation, Table, Values};
use fiscus_http::list::NumberedPage;
use serde::{Deserialize, Serialize};

use super::positive;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FinanceCoreQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Objects after this id (exclusive; ids ascend in import order).
    #[param(minimum = 0)]
    pub after_id: Option<i64>,
    /// Only the object with this uid (`ent_…` entities, `jnl_…` journals).
    #[param(pattern = "^[a-z]{3}_[0-9A-Z]{26}$")]
    pub uid: Option<String>,
    /// Only objects in this status (entities: `active`, `inactive`; journals: `posted`).
    #[param(pattern = "^(active|inactive|posted)$")]
    pub status: Option<String>,
    /// Only objects of this general ledger.
    #[param(minimum = 0)]
    pub general_ledger_id: Option<i64>,
}

/// The filters as the document states them; a well-formed value matching nothing finds nothing (a journal
/// filtered by `status=active` is an empty page, not an error).
fn filter(q: &FinanceCoreQuery) -> Result<(Filter<'_>, u32), ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    if let Some(s) = q.status.as_deref()
        && !["active", "inactive", "posted"].contains(&s)
    {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("status", "must be active, inactive or posted"));
    }
    if let Some(u) = q.uid.as_deref() {
        let b = u.as_bytes();
        let ok = b.len() == 30
            && b[..3].iter().all(u8::is_ascii_lowercase)
            && b[3] == b'_'
            && b[4..].iter().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase());
        if !ok {
            return Err(
                ApiError::new(ErrorCode::InvalidParameter).field("uid", "must be an object id such as ent_… or jnl_…")
            );
        }
    }
    Ok((
        Filter {
            uid: q.uid.as_deref(),
            status: q.status.as_deref(),
            general_ledger_id: positive("general_ledger_id", q.general_ledger_id)?,
            after_id: positive("after_id", q.after_id)?,
        },
        limit,
    ))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct EntityView {
    /// Always `finance_entity`.
    pub object: &'static str,
    pub id: i64,
    #[schema(example = "ent_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub uid: String,
    #[schema(example = "SAMPLE-US-OPCO")]
    pub code: String,
    pub name: String,
    /// `active` or `inactive`
    pub status: String,
    pub general_ledger_id: i64,
    /// The entity's functional currency.
    pub currency: String,
    pub country: String,
    /// The dataset that imported it.
    pub dataset: i64,
}

/// Legal entities of the workspace's finance core.
///
/// Entities as imported into the workspace's finance core (`fiscus import` or `POST /data/imports`), in id
/// order: code, name, `status`, general ledger, functional currency, country and the importing dataset.
/// `uid`, `status` and `general_ledger_id` filter exactly. Needs `finance-core:read`: a workspace not entitled
/// to it gets 403 `entitlement_missing`, a credential without the scope 403 `scope_missing`. Read-only, as
/// the seed requires: it never posts journals, locks periods, moves cash or executes a Financial Action.
#[utoipa::path(
    get,
    path = "/api/v2/finance-core/entities",
    params(FinanceCoreQuery),
    responses(
        (status = 200, description = "A page of entities", body = NumberedPage<EntityView>),
        (status = 403, description = "The workspace is not entitled to finance core, or the credential lacks finance-core:read")
    )
)]
pub async fn get_entities(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<FinanceCoreQuery>,
) -> Result<Json<NumberedPage<EntityView>>, ApiError> {
    let (f, limit) = filter(&q)?;
    let mut conn = state.store.read().await?;
    let rows = finance_core::list_entities(&mut conn, ctx.principal.workspace_id(), &f, limit).await?;
    let p = NumberedPage::from_overfetch(rows, limit, |e| e.id);
    Ok(Json(NumberedPage {
        object: p.object,
        has_more: p.has_more,
        next_after_id: p.next_after_id,
        data: p
            .data
            .into_iter()
            .map(|e| EntityView {
                object: "finance_entity",
                id: e.id,
                uid: e.uid,
                code: e.code,
                name: e.name,
                status: e.status,
                general_ledger_id: e.general_ledger_id,
                currency: e.currency,
                country: e.country,
                dataset: e.dataset_number,
            })
            .collect(),
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct JournalLineView {
    pub line: i64,
    #[schema(example = "1000")]
    pub account: String,
    pub description: String,
    /// Minor units of `currency` (ISO 4217 exponent).
    pub debit_minor: i64,
    pub credit_minor: i64,
    pub currency: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct JournalView {
    /// Always `journal`.
    pub object: &'static str,
    pub id: i64,
    #[schema(example = "jnl_01M876Y0Q8E1VN7S3GZ4WDXK2P")]
    pub uid: String,
    pub general_ledger_id: i64,
    pub entity_id: i64,
    /// The entry's number in its ledger.
    #[schema(example = "JE-2024-0001")]
    pub entry: String,
    #[schema(format = Date)]
    pub posting_date: String,
    /// `posted`
    pub status: String,
    /// The dataset that imported it.
    pub dataset: i64,
    /// Its lines; debits equal credits in every currency.
    pub lines: Vec<JournalLineView>,
}

/// Posted journals of the workspace's finance core, with their lines.
///
/// Journals as imported (every stored entry is `posted`), in id order, each with its lines: account,
/// description, and debit and credit in minor units of the line's currency; each entry balances in every
/// currency (checked at import). `uid`, `status` and `general_ledger_id` filter exactly. Needs
/// `finance-core:read` (403 `entitlement_missing` or `scope_missing` otherwise). Read-only: it never posts or
/// reverses a journal, locks a period, moves cash or executes a Financial Action.
#[utoipa::path(
    get,
    path = "/api/v2/finance-core/journals",
    params(FinanceCoreQuery),
    responses(
        (status = 200, description = "A page of journals", body = NumberedPage<JournalView>),
        (status = 403, description = "The workspace is not entitled to finance core, or the credential lacks finance-core:read")
    )
)]
pub async fn get_journals(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiQuery(q): ApiQuery<FinanceCoreQuery>,
) -> Result<Response, ApiError> {
    let representation = Representation::negotiate(&headers)?;
    let (f, limit) = filter(&q)?;
    let mut conn = state.store.read().await?;
    let rows = finance_core::list_journals(&mut conn, ctx.principal.workspace_id(), &f, limit).await?;
    let p = NumberedPage::from_overfetch(rows, limit, |(j, _)| j.id);
    let mut page = NumberedPage {
        object: p.object,
        has_more: p.has_more,
        next_after_id: p.next_after_id,
        data: p
            .data
            .into_iter()
            .map(|(j, lines)| JournalView {
                object: "journal",
                id: j.id,
                uid: j.uid,
                general_ledger_id: j.general_ledger_id,
                entity_id: j.entity_id,
                entry: j.entry,
                posting_date: j.posting_date,
                status: j.status,
                dataset: j.dataset_number,
                lines: lines
                    .into_iter()
                    .map(|l| JournalLineView {
                        line: l.line_no,
                        account: l.account,
                        description: l.description,
                        debit_minor: l.debit_minor,
                        credit_minor: l.credit_minor,
                        currency: l.currency,
                    })
                    .collect(),
            })
            .collect(),
    };
    let next = page.next_after_id.map(|n| n.to_string());
    let headers = super::bulk::headers(&uri, next.as_deref(), None);
    let table = match representation {
        Representation::Json => Table::new(),
        _ => journal_table(&std::mem::take(&mut page.data)),
    };
    super::bulk::render(representation, headers, &page, table)
}

/// The columns of a journals page in CSV, Arrow and column JSON: one row per journal line, its journal's
/// members first.
pub const JOURNAL_COLUMNS: &[ColumnSpec] = &[
    ("id", ColumnType::Int),
    ("uid", ColumnType::Text),
    ("general_ledger_id", ColumnType::Int),
    ("entity_id", ColumnType::Int),
    ("entry", ColumnType::Text),
    ("posting_date", ColumnType::Date),
    ("status", ColumnType::Text),
    ("dataset", ColumnType::Int),
    ("line", ColumnType::Int),
    ("account", ColumnType::Text),
    ("description", ColumnType::Text),
    ("debit_minor", ColumnType::Int),
    ("credit_minor", ColumnType::Int),
    ("currency", ColumnType::Text),
];

fn journal_table(journals: &[JournalView]) -> Table {
    type Row<'a> = (&'a JournalView, &'a JournalLineView);
    let rows: Vec<Row<'_>> = journals.iter().flat_map(|j| j.lines.iter().map(move |l| (j, l))).collect();
    let int = |get: fn(&Row<'_>) -> i64| Values::Int(rows.iter().map(|r| Some(get(r))).collect());
    let text =
        |get: for<'a> fn(&'a Row<'a>) -> &'a str| Values::Text(rows.iter().map(|r| Some(get(r).to_string())).collect());
    Table::new()
        .column("id", int(|(j, _)| j.id))
        .column("uid", text(|(j, _)| &j.uid))
        .column("general_ledger_id", int(|(j, _)| j.general_ledger_id))
        .column("entity_id", int(|(j, _)| j.entity_id))
        .column("entry", text(|(j, _)| &j.entry))
        .column("posting_date", Values::Date(rows.iter().map(|(j, _)| j.posting_date.clone()).collect()))
        .column("status", text(|(j, _)| &j.status))
        .column("dataset", int(|(j, _)| j.dataset))
        .column("line", int(|(_, l)| l.line))
        .column("account", text(|(_, l)| &l.account))
        .column("description", text(|(_, l)| &l.description))
        .column("debit_minor", int(|(_, l)| l.debit_minor))
        .column("credit_minor", int(|(_, l)| l.credit_minor))
        .column("currency", text(|(_, l)| &l.currency))
}
