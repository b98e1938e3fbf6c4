//! Creating actions: by an application (`POST /actions`) or by an external agent
//! (`POST /agent-execution/proposals`, then `…/submit`). Creating executes nothing.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::envelope::{Envelope, ProposalRequest};
use fiscus_domain::actions::state::ControlState;
use fiscus_domain::api::actions::ActionView;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_store::actions::ActionRow;
use serde_json::json;

use super::service::{self, Actor};
use crate::http::ctx::Ctx;
use crate::http::json::ApiJson;
use crate::http::problem::ApiError;
use crate::state::AppState;

pub fn example() -> serde_json::Value {
    json!({
        "kind": "payment",
        "amount_minor": 125000,
        "currency": "USD",
        "counterparty": "cp_acme_supplies",
        "connector": "sandbox",
        "execution_mode": "human_approved",
        "risk_tier": "T1",
        "reference": "INV-2026-0042",
        "required_checks": ["sanctions_screening"],
        "metadata": { "invoice": "INV-2026-0042" }
    })
}

fn validate(body: ProposalRequest) -> Result<Envelope, ApiError> {
    body.validate().map_err(|errors| {
        errors.into_iter().fold(ApiError::new(ErrorCode::InvalidRequest), |e, (field, message)| e.field(field, message))
    })
}

/// Proposes a Financial Action on behalf of an application. The action awaits operator approval; nothing
/// executes.
#[utoipa::path(
    post,
    path = "/api/v2/actions",
    request_body(content = ProposalRequest, example = json!(example())),
    responses((status = 201, description = "Proposed; awaiting approval; nothing executed", body = ActionView))
)]
pub async fn post_action(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposalRequest>,
) -> Result<Response, ApiError> {
    let envelope = validate(body)?;
    create(&ctx, &state, envelope, "application", ControlState::PendingApproval).await
}

/// Records an external agent's proposal as a draft. It enters the approval lifecycle only when submitted
/// (`POST /agent-execution/actions/{uid}/submit`); the agent gains no approval authority.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/proposals",
    request_body(content = ProposalRequest, example = json!(example())),
    responses((status = 201, description = "Proposal recorded as a draft", body = ActionView), (status = 422, description = "Rejected"))
)]
pub async fn post_proposal(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposalRequest>,
) -> Result<Response, ApiError> {
    let envelope = validate(body)?;
    create(&ctx, &state, envelope, "external_agent", ControlState::Draft).await
}

async fn create(
    ctx: &Ctx,
    state: &AppState,
    envelope: Envelope,
    origin: &str,
    initial: ControlState,
) -> Result<Response, ApiError> {
    let tenant = ctx.tenant();
    let id = fiscus_domain::ids::new_id("act");
    let envelope_hash = envelope
        .hash(&id, &tenant.workspace_id, tenant.environment.as_str())
        .ok_or_else(|| ApiError::invalid_request("metadata", "numbers must be finite"))?;
    let now = now_micros();
    let row = ActionRow {
        id: id.clone(),
        environment: tenant.environment.as_str().into(),
        kind: envelope.kind.as_str().into(),
        amount_minor: envelope.amount_minor,
        currency: envelope.currency.code().into(),
        counterparty: envelope.counterparty.clone(),
        connector: envelope.connector.clone(),
        execution_mode: envelope.execution_mode.as_str().into(),
        delegation_id: envelope.delegation_id.clone(),
        risk_tier: envelope.risk_tier.as_str().into(),
        reference: envelope.reference.clone(),
        required_checks: serde_json::to_string(&envelope.required_checks).unwrap_or_else(|_| "[]".into()),
        metadata: envelope.metadata.to_string(),
        envelope_hash: envelope_hash.clone(),
        control_state: initial.as_str().into(),
        origin: origin.into(),
        proposed_by_kind: "application".into(),
        proposed_by_id: ctx.principal.application_id.clone(),
        created_at: now,
        updated_at: now,
    };
    let mut tx = state.store.begin().await?;
    fiscus_store::actions::insert(&mut tx, tenant, &row).await?;
    let actor = Actor { kind: "application", id: &ctx.principal.application_id };
    service::record_transition(
        &mut tx,
        tenant,
        &id,
        None,
        initial,
        "action.proposed",
        &actor,
        json!({ "origin": origin, "envelope_hash": envelope_hash }),
    )
    .await?;
    ctx.audit(
        &mut tx,
        Some(&id),
        json!({ "envelope_hash": envelope_hash, "control_state": initial.as_str(), "origin": origin }),
    )
    .await?;
    let loaded = service::load(tx.conn(), tenant, row).await?;
    let view = loaded.view(&state.settings, None)?;
    ctx.respond(tx, StatusCode::CREATED, &view).await
}
