//! Payment files and bank messages over the API: the `pain.001` files the `iso20022` connector wrote (read
//! only: files are made by the bank file worker, never by a request), and the import of the bank's
//! `pain.002` status reports and `camt.053`/`camt.054` statements, as the inbound directory and
//! `fiscus import bank-message` take them.

use crate::rules::bank_files::{FileState, MessageKind, Outcome};
use crate::tables::bank_files::{self as store, File, Message};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use fiscus_domain::pagination::PageParams;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::list::ListPage;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ListParams};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bank_messages::import_in;

#[derive(Serialize, ToSchema)]
pub struct PaymentFileView {
    #[schema(example = "payment_file")]
    pub object: &'static str,
    /// Also the file's `MsgId` and `PmtInfId`.
    #[schema(example = "pmf_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    /// The file's name in the outbound directory.
    #[schema(example = "pmf_01KBTA0C4GZ2Q5R8V1XWJ3N6M9.xml")]
    pub name: String,
    #[schema(example = "pain.001.001.09")]
    pub message: String,
    pub state: FileState,
    /// The own account debited (`bac_…`) and the approved version of its details used.
    pub debtor_account_id: String,
    pub debtor_version_id: String,
    #[schema(example = "EUR")]
    pub currency: String,
    #[schema(example = "2026-11-28")]
    pub requested_execution_date: String,
    pub payments: u32,
    /// The sum of the payments, in minor units (the file's `CtrlSum`).
    pub control_sum_minor: i64,
    /// `sha256:` of the file's bytes.
    pub sha256: String,
    /// The actions paid, each the `EndToEndId` of its credit transfer.
    pub action_ids: Vec<String>,
    pub created_at: String,
    pub published_at: Option<String>,
    /// The file itself (UTF-8 XML), on a single read; absent in lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

fn file_view(f: File, content: Option<String>) -> PaymentFileView {
    let b = f.record.body;
    PaymentFileView {
        object: "payment_file",
        id: f.record.id,
        name: b.name,
        message: b.message,
        state: f.state,
        debtor_account_id: b.debtor_account_id,
        debtor_version_id: b.debtor_version_id,
        currency: b.currency.code().to_string(),
        requested_execution_date: b.requested_date,
        payments: b.payments,
        control_sum_minor: b.control_sum_minor,
        sha256: b.sha256,
        action_ids: b.action_ids,
        created_at: rfc3339(f.record.created_at),
        published_at: f.published_at.map(rfc3339),
        content,
    }
}

/// Lists the payment files, newest first.
///
/// Every `pain.001` file the `iso20022` connector wrote for the caller's workspace and environment, each
/// checked against its seal. Needs `actions:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/payment-files",
    params(PageParams),
    responses((status = 200, description = "A page of payment files", body = ListPage<PaymentFileView>))
)]
pub async fn list_payment_files(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<PaymentFileView>>, ApiError> {
    params.only(&[])?;
    let cursor = params.page.after_id.as_deref();
    let mut conn = state.store.read().await?;
    let rows = store::list_files(&mut conn, state.store.seal_key(), ctx.tenant(), cursor, params.page.limit).await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |f| f.record.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(|f| file_view(f, None)).collect(),
    }))
}

/// Reads a payment file with its bytes.
///
/// The file as recorded, with its XML, whose SHA-256 is checked against the sealed record before it is
/// shown (edited bytes are refused, never served). Another workspace's or environment's file is 404. Needs
/// `actions:read`.
#[utoipa::path(
    get,
    path = "/api/v2/payment-files/{id}",
    params(("id" = String, Path, pattern = "^pmf_[0-9A-Za-z]{26}$", description = "The file")),
    responses((status = 200, description = "The file", body = PaymentFileView))
)]
pub async fn get_payment_file(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<PaymentFileView>, ApiError> {
    let mut conn = state.store.read().await?;
    let f = store::get_file(&mut conn, state.store.seal_key(), ctx.tenant(), &id).await?;
    let content = store::content(&mut conn, ctx.tenant(), &f).await?;
    Ok(Json(file_view(f, Some(content))))
}

/// A bank message to import.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BankMessageRequest {
    /// The message as the bank sent it: a `pain.002` (`.001.03`, `.001.10`, `.001.12`) status report, or a
    /// `camt.053.001.08` statement or `camt.054.001.08` notification, UTF-8 XML.
    #[schema(
        min_length = 1,
        max_length = 900000,
        example = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.054.001.08\">…</Document>"
    )]
    pub document: String,
}

/// One item of a message and what it did.
#[derive(Serialize, ToSchema)]
pub struct BankMessageItemView {
    /// The status code (`ACCP`, `RJCT`, …) or `BOOK` for a booked entry.
    #[schema(example = "BOOK")]
    pub code: String,
    /// A rejection's ISO reason code (`AC04`, `AM04`, …).
    pub reason: Option<String>,
    pub end_to_end_id: Option<String>,
    /// The action it was applied to.
    pub action_id: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub outcome: Outcome,
}

#[derive(Serialize, ToSchema)]
pub struct BankMessageView {
    #[schema(example = "bank_message")]
    pub object: &'static str,
    #[schema(example = "bkm_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    pub kind: MessageKind,
    #[schema(example = "camt.054.001.08")]
    pub message: String,
    /// The bank's id for the message (`MsgId`).
    pub message_id: String,
    /// `sha256:` of the bytes: a message is imported once per workspace and environment.
    pub sha256: String,
    /// These bytes were imported before: this is what that import did, and nothing changed now.
    pub duplicate: bool,
    pub items: Vec<BankMessageItemView>,
    pub imported_by: String,
    pub imported_at: String,
}

fn message_view(m: Message, duplicate: bool) -> BankMessageView {
    BankMessageView {
        object: "bank_message",
        kind: m.body.kind,
        message: m.body.message,
        message_id: m.body.message_id,
        sha256: m.body.sha256,
        duplicate,
        items: m
            .body
            .items
            .into_iter()
            .map(|i| BankMessageItemView {
                code: i.code,
                reason: i.reason,
                end_to_end_id: i.end_to_end_id,
                action_id: i.action_id,
                amount_minor: i.amount_minor,
                currency: i.currency.map(|c| c.code().to_string()),
                outcome: i.outcome,
            })
            .collect(),
        imported_by: m.created_by.label(),
        imported_at: rfc3339(m.created_at),
        id: m.id,
    }
}

/// Imports a message from the bank: a status report or a statement.
///
/// A `pain.002` rejection (`RJCT`) fails the payments it names, with the bank's reason code; a `camt.053` or
/// `camt.054` booked debit entry completes the payment it matches (by `EndToEndId`, or else by amount,
/// account and the reference in its remittance lines), or moves it to `reconciliation_exception` when the
/// amount or currency disagree; an entry matching nothing is kept for a person. A statement whose balances
/// do not add up is 422 and changes nothing; so is a document that is not one of these messages. The same
/// bytes again answer 200 with what the first import did, and change nothing. Needs `actions:execute`.
#[utoipa::path(
    post,
    path = "/api/v2/bank-messages",
    request_body(content = BankMessageRequest, example = json!({
        "document": "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.054.001.08\"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>NTF-2026-1201</MsgId><CreDtTm>2026-12-01T11:30:00Z</CreDtTm></GrpHdr><Ntfctn><Id>NTF-2026-1201-1</Id><Acct><Id><IBAN>FR1420041010050500013M02606</IBAN></Id><Ccy>EUR</Ccy></Acct><Ntry><Amt Ccy=\"EUR\">1250.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-12-01</Dt></BookgDt><AcctSvcrRef>BANK-N1</AcctSvcrRef><BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd><NtryDtls><TxDtls><Refs><EndToEndId>act_01KBTA0C4GZ2Q5R8V1XWJ3N6M9</EndToEndId></Refs><Amt Ccy=\"EUR\">1250.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><RmtInf><Ustrd>INV-2026-0107</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"
    })),
    responses(
        (status = 201, description = "Imported", body = BankMessageView),
        (status = 200, description = "These bytes were imported before: that import's result", body = BankMessageView)
    )
)]
pub async fn post_bank_message(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<BankMessageRequest>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let imported = import_in(&mut tx, state.book.as_ref(), ctx.tenant(), &ctx.caller(), &body.document).await?;
    let status = if imported.duplicate { StatusCode::OK } else { StatusCode::CREATED };
    ctx.respond(tx, status, &message_view(imported.message, imported.duplicate)).await
}

/// Reads an imported bank message and what each of its items did.
///
/// Another workspace's or environment's message is 404. Needs `actions:read`.
#[utoipa::path(
    get,
    path = "/api/v2/bank-messages/{id}",
    params(("id" = String, Path, pattern = "^bkm_[0-9A-Za-z]{26}$", description = "The message")),
    responses((status = 200, description = "The message", body = BankMessageView))
)]
pub async fn get_bank_message(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<BankMessageView>, ApiError> {
    let mut conn = state.store.read().await?;
    let m = store::get_message(&mut conn, state.store.seal_key(), ctx.tenant(), &id).await?;
    Ok(Json(message_view(m, false)))
}
