//! Machine identities and their delegations. A delegation is created as a draft; only an operator (at the
//! console) activates, suspends or revokes it.

use crate::rules::delegation::{DelegationRequest, IdentityRequest};
use crate::rules::delegation::{DelegationStatus, IdentityStatus};
use crate::rules::envelope::{ExecutionMode, RiskTier};
use crate::tables::delegations::{Delegation, Identity};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::Serialize;
use serde_json::json;

use fiscus_domain::pagination::PageParams;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ListParams};

#[derive(Serialize, utoipa::ToSchema)]
pub struct IdentityView {
    /// Always `machine_identity`.
    pub object: String,
    pub id: String,
    pub environment: Environment,
    pub name: String,
    /// Ed25519 public key, base64.
    pub public_key: String,
    /// Whether the key is an Ed25519 curve point: `false` means nothing this identity signs can verify, so
    /// no delegation to it can ever execute (register a new identity with the right key).
    pub key_usable: bool,
    pub status: IdentityStatus,
    pub created_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct DelegationView {
    /// Always `delegation`.
    pub object: String,
    pub id: String,
    pub identity_id: String,
    pub action: ActionKind,
    pub counterparty: String,
    pub connector: String,
    pub currency: String,
    pub execution_mode: ExecutionMode,
    pub risk_tier: RiskTier,
    pub per_action_budget_minor: i64,
    pub daily_budget_minor: i64,
    pub monthly_budget_minor: i64,
    pub expires_at: String,
    /// `draft` needs an operator's activation.
    pub status: DelegationStatus,
    /// `sha256:` of the terms; an operator's activation covers exactly this.
    pub terms_hash: String,
    pub decided_by: Option<String>,
    pub created_at: String,
}

fn identity_view(r: Identity) -> IdentityView {
    IdentityView {
        object: "machine_identity".into(),
        created_at: rfc3339(r.created_at),
        id: r.id,
        environment: r.environment,
        name: r.name,
        key_usable: fiscus_domain::public_keys::decode_public_key(&r.public_key).is_some(),
        public_key: r.public_key,
        status: r.status,
    }
}

pub fn delegation_view(d: Delegation) -> DelegationView {
    let t = d.terms;
    DelegationView {
        object: "delegation".into(),
        expires_at: rfc3339(t.expires_at),
        created_at: rfc3339(d.created_at),
        id: d.id,
        identity_id: d.identity_id,
        action: t.action,
        counterparty: t.counterparty,
        connector: t.connector,
        currency: t.currency.code().to_string(),
        execution_mode: ExecutionMode::MachineDelegated,
        risk_tier: t.risk_tier,
        per_action_budget_minor: t.per_action,
        daily_budget_minor: t.daily,
        monthly_budget_minor: t.monthly,
        status: d.status,
        terms_hash: d.terms_hash,
        decided_by: d.decided_by,
    }
}

/// Registers a machine (agentic) identity by its Ed25519 public key.
///
/// The identity is stored `active` in the caller's workspace and environment, with the application as its creator,
/// and audited; a key that is not 32 bytes of Ed25519 in base64 is 422 `invalid_request`. Needs `actions:create`.
/// Only the public key is sent: Fiscus never holds the private key. An identity authorises nothing by itself: it
/// can only sign machine authority evidence for a `machine_delegated` action, under a delegation an operator
/// activated.
#[utoipa::path(
    post,
    path = "/api/v2/actions/agentic/identities",
    request_body(content = IdentityRequest, example = json!({ "name": "treasury-agent-1", "public_key": "11qYAYKxCrfVS/7TyWQHOg7hcvPaoiMlrwIaaPcHURo=" })),
    responses((status = 201, description = "Registered", body = IdentityView))
)]
pub async fn post_identity(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<IdentityRequest>,
) -> Result<Response, ApiError> {
    body.validate().map_err(ApiError::invalid_fields)?;
    let row = Identity {
        id: fiscus_domain::ids::new_id("mid"),
        environment: ctx.tenant().environment,
        name: body.name.trim().to_string(),
        public_key: body.public_key.trim().to_string(),
        status: IdentityStatus::Active,
        created_by: ctx.principal.application_id.clone(),
        created_at: now_micros(),
    };
    let mut tx = state.store.begin().await?;
    crate::tables::delegations::insert_identity(&mut tx, ctx.tenant(), &row).await?;
    ctx.audit(&mut tx, Some(&row.id), json!({ "name": row.name, "public_key": row.public_key })).await?;
    ctx.respond(tx, StatusCode::CREATED, &identity_view(row)).await
}

/// Lists machine identities.
///
/// Every machine identity of the caller's workspace and environment, whichever application registered it, oldest
/// first, each checked against its seal before it is shown (a record changed outside Fiscus refuses the read with
/// 500 `integrity_failure`). Needs `actions:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/agentic/identities",
    params(PageParams),
    responses((status = 200, description = "A page of identities", body = ListPage<IdentityView>))
)]
pub async fn list_identities(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<IdentityView>>, ApiError> {
    params.only(&[])?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::delegations::list_identities(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        params.page.after_id.as_deref(),
        params.page.limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |r| r.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(identity_view).collect(),
    }))
}

/// One machine identity.
///
/// Its name, Ed25519 public key, status and environment, checked against its seal before it is shown (500
/// `integrity_failure` otherwise); another workspace's or environment's identity is 404. Needs `actions:read`;
/// changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/agentic/identities/{uid}",
    params(("uid" = String, Path, description = "Identity id (mid_…)")),
    responses((status = 200, description = "The identity", body = IdentityView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_identity(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<IdentityView>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(identity_view(
        crate::tables::delegations::get_identity(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?,
    )))
}

/// Creates a draft delegation for the identity. It is usable only after an operator activates it.
///
/// Validates the terms (action kind, counterparty, connector, currency, `machine_delegated` mode, risk tier,
/// per-action ≤ daily ≤ monthly budgets in integer minor units, an expiry in the future and at most a year away),
/// seals them into `terms_hash` and stores the delegation `draft`, audited; budgets that do not nest are 409
/// `conflict` naming each field, a revoked identity is 422 `invalid_request`. Needs `actions:create`. The independent approval is an operator's (admin or approver)
/// activation at the console, covering exactly `terms_hash`: no credential activates, suspends or revokes a
/// delegation, and a draft reserves no budget and executes nothing.
#[utoipa::path(
    post,
    path = "/api/v2/actions/agentic/identities/{uid}/delegations",
    params(("uid" = String, Path, description = "Identity id (mid_…)")),
    request_body(content = DelegationRequest, example = json!({
        "action": "payment", "counterparty": "cp_acme_supplies", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": 50000,
        "daily_budget_minor": 200000, "monthly_budget_minor": 1000000, "valid_for_days": 180
    })),
    responses(
        (status = 201, description = "Draft delegation; needs independent approval", body = DelegationView),
        (status = 409, description = "The budgets do not nest, per action ≤ daily ≤ monthly (`conflict`, with `errors` naming each field)")
    )
)]
pub async fn post_delegation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<DelegationRequest>,
) -> Result<Response, ApiError> {
    let now = now_micros();
    let unnested = body.unnested_budgets();
    let terms = body.validate(now).map_err(ApiError::invalid_fields)?;
    if !unnested.is_empty() {
        let detail = format!("the budgets contradict each other: {}", unnested[0].1);
        let refusal = ApiError::new(ErrorCode::Conflict).detail(detail);
        return Err(unnested.into_iter().fold(refusal, |e, (field, why)| e.field(field, why)));
    }
    let mut tx = state.store.begin().await?;
    let key = tx.seal_key().clone();
    let identity = crate::tables::delegations::get_identity(tx.conn(), &key, ctx.tenant(), &uid).await?;
    if identity.status != IdentityStatus::Active {
        return Err(ApiError::invalid_request("identity", "the identity is revoked"));
    }
    let id = fiscus_domain::ids::new_id("dlg");
    let row = Delegation {
        terms_hash: terms.hash(&id, &identity.id),
        id: id.clone(),
        environment: ctx.tenant().environment,
        identity_id: identity.id,
        terms,
        status: DelegationStatus::Draft,
        created_by: ctx.principal.application_id.clone(),
        decided_by: None,
        decided_at: None,
        created_at: now,
    };
    crate::tables::delegations::insert_delegation(&mut tx, ctx.tenant(), &row).await?;
    ctx.audit(&mut tx, Some(&id), json!({ "terms_hash": row.terms_hash, "status": "draft" })).await?;
    ctx.respond(tx, StatusCode::CREATED, &delegation_view(row)).await
}

/// One delegation with its status.
///
/// Its terms, budgets, `terms_hash` and status: `draft` until an operator activates it at the console, then
/// `active`, `suspended` or `revoked` as operators decide, with `decided_by`. Checked against its seal before it
/// is shown (500 `integrity_failure` otherwise). Needs `actions:read`; reading it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/agentic/delegations/{uid}",
    params(("uid" = String, Path, description = "Delegation id (dlg_…)")),
    responses((status = 200, description = "The delegation", body = DelegationView), (status = 404, description = "Not in this workspace"))
)]
pub async fn get_delegation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<DelegationView>, ApiError> {
    let mut conn = state.store.read().await?;
    Ok(Json(delegation_view(
        crate::tables::delegations::get_delegation(&mut conn, state.store.seal_key(), ctx.tenant(), &uid).await?,
    )))
}
