//! Counterparties and bank accounts over the API: an application creates counterparties and proposes
//! accounts and changes of their details; a person approves them at the console (no route here can). Each
//! version is sealed, and what payments bind is its `content_hash`.

use crate::rules::bank_accounts::{ProposedDetails, VersionState};
use crate::steps::bank_accounts::{NewCounterparty, create_counterparty, propose};
use crate::tables::bank_accounts::{self as store, Counterparty, Version};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::bank_accounts::{AccountNumber, Owner, PostalAddress};
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

/// A counterparty as a caller creates it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CounterpartyRequest {
    #[schema(value_type = fiscus_domain::fields::Text<1, 140>, inline, example = "Lieferant GmbH")]
    pub name: String,
    /// Your own reference for it (a supplier number): unique in the workspace and environment.
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 64>>, inline, example = "SUP-0042")]
    pub reference: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct CounterpartyView {
    #[schema(example = "counterparty")]
    pub object: &'static str,
    #[schema(example = "cpt_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    pub name: String,
    pub reference: Option<String>,
    /// `sha256:` of the sealed record (RFC 8785).
    pub content_hash: String,
    /// `kind:id` of who created it.
    #[schema(example = "application:app_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub created_by: String,
    pub created_at: String,
    /// Its bank accounts (on a single read; empty in lists).
    pub accounts: Vec<BankAccountView>,
}

/// One version of an account's details.
#[derive(Serialize, ToSchema)]
pub struct BankAccountVersionView {
    #[schema(example = "bank_account_version")]
    pub object: &'static str,
    #[schema(example = "bav_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    pub version: i64,
    pub state: VersionState,
    #[schema(example = "EUR")]
    pub currency: String,
    pub holder_name: String,
    pub iban: Option<String>,
    pub local_number: Option<String>,
    pub local_scheme: Option<String>,
    pub bic: Option<String>,
    pub clearing_system: Option<String>,
    pub clearing_member: Option<String>,
    pub address: Option<AddressView>,
    /// `sha256:` of the version's sealed details (RFC 8785): what a payment to or from this account binds.
    pub content_hash: String,
    pub proposed_by: String,
    pub proposed_at: String,
    /// The person who decided it, when decided.
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    pub decision_note: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct AddressView {
    pub street: Option<String>,
    pub building: Option<String>,
    pub postcode: Option<String>,
    pub town: String,
    pub country: String,
}

/// An account: its active version (what payments use), a change waiting for a person, and every version.
#[derive(Serialize, ToSchema)]
pub struct BankAccountView {
    #[schema(example = "bank_account")]
    pub object: &'static str,
    #[schema(example = "bac_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    pub owner: Owner,
    pub counterparty_id: Option<String>,
    /// `active` once a person approved a version; `inactive` until then (nothing is paid to or from it).
    #[schema(example = "inactive")]
    pub status: &'static str,
    pub active_version: Option<String>,
    pub pending_version: Option<String>,
    /// Oldest first.
    pub versions: Vec<BankAccountVersionView>,
}

fn counterparty_view(c: Counterparty, accounts: Vec<BankAccountView>) -> CounterpartyView {
    CounterpartyView {
        object: "counterparty",
        name: c.body.name,
        reference: c.body.reference,
        content_hash: c.content_hash,
        created_by: c.created_by.label(),
        created_at: rfc3339(c.created_at),
        id: c.id,
        accounts,
    }
}

fn version_view(v: Version) -> BankAccountVersionView {
    let b = v.record.body;
    let (iban, local_number, local_scheme) = match b.number {
        AccountNumber::Iban(i) => (Some(i.as_str().to_string()), None, None),
        AccountNumber::Local { number, scheme } => (None, Some(number), scheme),
    };
    let (clearing_system, clearing_member) = b.clearing.map_or((None, None), |(s, m)| (Some(s), Some(m)));
    let (decided_by, decided_at, decision_note) =
        v.decision.map_or((None, None, None), |(by, at, note)| (Some(by.label()), Some(rfc3339(at)), note));
    BankAccountVersionView {
        object: "bank_account_version",
        id: v.record.id,
        version: b.version,
        state: v.state,
        currency: b.currency.code().to_string(),
        holder_name: b.holder_name,
        iban,
        local_number,
        local_scheme,
        bic: b.bic.map(String::from),
        clearing_system,
        clearing_member,
        address: b.address.map(|a: PostalAddress| AddressView {
            street: a.street,
            building: a.building,
            postcode: a.postcode,
            town: a.town,
            country: a.country,
        }),
        content_hash: v.record.content_hash,
        proposed_by: v.record.created_by.label(),
        proposed_at: rfc3339(v.record.created_at),
        decided_by,
        decided_at,
        decision_note,
    }
}

/// An account from its versions (oldest first, at least one).
fn account_view(versions: Vec<Version>) -> Option<BankAccountView> {
    let first = versions.first()?.record.body.clone();
    let of = |state: VersionState| versions.iter().find(|v| v.state == state).map(|v| v.record.id.clone());
    let active_version = of(VersionState::Active);
    Some(BankAccountView {
        object: "bank_account",
        id: first.account_id,
        owner: first.owner,
        counterparty_id: first.counterparty_id,
        status: if active_version.is_some() { "active" } else { "inactive" },
        active_version,
        pending_version: of(VersionState::Pending),
        versions: versions.into_iter().map(version_view).collect(),
    })
}

/// Creates a counterparty: whom payments go to.
///
/// The counterparty is sealed and audited in the caller's workspace and environment; a `reference` already
/// used there is 409 `conflict`. It pays nothing by itself: its bank accounts are proposed with
/// `POST /bank-accounts` and become usable only once a person approves them at the console. Needs
/// `actions:create`.
#[utoipa::path(
    post,
    path = "/api/v2/counterparties",
    request_body(content = CounterpartyRequest, example = json!({ "name": "Lieferant GmbH", "reference": "SUP-0042" })),
    responses((status = 201, description = "Created", body = CounterpartyView))
)]
pub async fn post_counterparty(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CounterpartyRequest>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let new = NewCounterparty { name: body.name, reference: body.reference };
    let created = create_counterparty(&mut tx, ctx.tenant(), &ctx.caller(), new).await?;
    ctx.respond(tx, StatusCode::CREATED, &counterparty_view(created, Vec::new())).await
}

/// Lists counterparties, newest first.
///
/// Every counterparty of the caller's workspace and environment, each checked against its seal. Needs
/// `actions:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/counterparties",
    params(PageParams),
    responses((status = 200, description = "A page of counterparties", body = ListPage<CounterpartyView>))
)]
pub async fn list_counterparties(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<CounterpartyView>>, ApiError> {
    params.only(&[])?;
    let cursor = params.page.after_id.as_deref();
    let mut conn = state.store.read().await?;
    let rows =
        store::list_counterparties(&mut conn, state.store.seal_key(), ctx.tenant(), cursor, params.page.limit).await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |c| c.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(|c| counterparty_view(c, Vec::new())).collect(),
    }))
}

/// Reads a counterparty with its bank accounts.
///
/// Each account with every version of its details, oldest first, and which is active and which waits for a
/// person. Another workspace's or environment's counterparty is 404. Needs `actions:read`.
#[utoipa::path(
    get,
    path = "/api/v2/counterparties/{id}",
    params(("id" = String, Path, pattern = "^cpt_[0-9A-Za-z]{26}$", description = "The counterparty")),
    responses((status = 200, description = "The counterparty", body = CounterpartyView))
)]
pub async fn get_counterparty(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<CounterpartyView>, ApiError> {
    let mut conn = state.store.read().await?;
    let key = state.store.seal_key();
    let c = store::get_counterparty(&mut conn, key, ctx.tenant(), &id).await?;
    let mut by_account: std::collections::BTreeMap<String, Vec<Version>> = Default::default();
    for v in store::versions_of_counterparty(&mut conn, key, ctx.tenant(), &id).await? {
        by_account.entry(v.record.body.account_id.clone()).or_default().push(v);
    }
    let accounts = by_account
        .into_values()
        .filter_map(|mut vs| {
            vs.sort_by_key(|v| v.record.body.version);
            account_view(vs)
        })
        .collect();
    Ok(Json(counterparty_view(c, accounts)))
}

/// Proposes a bank account: the workspace's own, or a counterparty's.
///
/// The details are checked (an IBAN's ISO 13616 check digits, a BIC's ISO 9362 form, a local number with its
/// bank) and sealed as the account's version 1, `pending`: the account is `inactive` until a person approves
/// the version at the console (another person than its proposer, when a person proposed it). A
/// `counterparty_id` of no counterparty here is 409 `reference_not_found`. Needs `actions:create`.
#[utoipa::path(
    post,
    path = "/api/v2/bank-accounts",
    request_body(content = ProposedDetails, example = json!({
        "owner": "counterparty",
        "counterparty_id": "cpt_01KBTA0C4GZ2Q5R8V1XWJ3N6M9",
        "currency": "EUR",
        "holder_name": "Lieferant GmbH",
        "iban": "DE89 3704 0044 0532 0130 00",
        "bic": "COBADEFFXXX",
        "address": { "street": "Königstraße", "building": "12a", "postcode": "70173", "town": "Stuttgart", "country": "DE" }
    })),
    responses((status = 201, description = "Proposed: inactive until a person approves it", body = BankAccountView))
)]
pub async fn post_bank_account(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposedDetails>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let v = propose(&mut tx, ctx.tenant(), &ctx.caller(), None, body).await?;
    let view = account_view(vec![v]).ok_or_else(ApiError::internal)?;
    ctx.respond(tx, StatusCode::CREATED, &view).await
}

/// Proposes a change of a bank account's details.
///
/// The change is the account's next version, `pending` beside the active one, which payments keep using
/// until a person approves the change at the console; payments already approved keep the details they were
/// approved with (they bind the version's hash). An account keeps its owner and counterparty (otherwise 422),
/// and has at most one pending change (otherwise 409 `conflict`). Needs `actions:create`.
#[utoipa::path(
    post,
    path = "/api/v2/bank-accounts/{id}/versions",
    params(("id" = String, Path, pattern = "^bac_[0-9A-Za-z]{26}$", description = "The account")),
    request_body(content = ProposedDetails, example = json!({
        "owner": "counterparty",
        "counterparty_id": "cpt_01KBTA0C4GZ2Q5R8V1XWJ3N6M9",
        "currency": "EUR",
        "holder_name": "Lieferant GmbH",
        "iban": "GB29 NWBK 6016 1331 9268 19",
        "bic": "NWBKGB2L"
    })),
    responses((status = 201, description = "The change, pending beside the active version", body = BankAccountView))
)]
pub async fn post_bank_account_version(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ProposedDetails>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    propose(&mut tx, ctx.tenant(), &ctx.caller(), Some(&id), body).await?;
    let key = tx.seal_key().clone();
    let versions = store::versions_of(tx.conn(), &key, ctx.tenant(), &id).await?;
    let view = account_view(versions).ok_or_else(ApiError::internal)?;
    ctx.respond(tx, StatusCode::CREATED, &view).await
}

/// Reads a bank account with every version of its details.
///
/// Which version is active (what payments use) and which waits for a person, each checked against its seal.
/// Another workspace's or environment's account is 404. Needs `actions:read`.
#[utoipa::path(
    get,
    path = "/api/v2/bank-accounts/{id}",
    params(("id" = String, Path, pattern = "^bac_[0-9A-Za-z]{26}$", description = "The account")),
    responses((status = 200, description = "The account", body = BankAccountView))
)]
pub async fn get_bank_account(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<BankAccountView>, ApiError> {
    let mut conn = state.store.read().await?;
    let versions = store::versions_of(&mut conn, state.store.seal_key(), ctx.tenant(), &id).await?;
    account_view(versions).map(Json).ok_or_else(ApiError::not_found)
}
