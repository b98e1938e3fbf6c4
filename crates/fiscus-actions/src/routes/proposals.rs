//! Creating actions: by an application (`POST /actions`) or by an external agent
//! (`POST /agent-execution/proposals`, then `…/submit`). Creating executes nothing.

use crate::rules::envelope::{Envelope, Origin, ProposalRequest};
use crate::views::ActionView;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;

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
    body.validate().map_err(ApiError::invalid_fields)
}

/// Proposes a Financial Action on behalf of an application. The action awaits operator approval; nothing
/// executes.
///
/// The envelope is validated (amount in minor units, currency, counterparty, connector, risk tier, reference, up
/// to 32 `required_checks`, metadata up to 16 KiB, and `delegation_id` exactly when `machine_delegated`), sealed
/// into `envelope_hash` bound to the action, workspace and environment, and recorded `pending_approval` with its
/// `action.proposed` event. Needs `actions:create`. Proposing executes nothing (`executes_on_creation` is false)
/// and approves nothing: the people the workspace's approval policy names decide at the console, never a
/// credential. The action's `approvals.requirement` is what the policy in force required of it (at least the risk
/// tier's quorum: a proposer may raise the bar, never lower it); a rule that refuses it is 422 `policy_refused`,
/// naming the rule (`POST /actions/approval-policies/dry-run` tells beforehand).
#[utoipa::path(
    post,
    path = "/api/v2/actions",
    request_body(content = ProposalRequest, example = json!(example())),
    responses(
        (status = 201, description = "Proposed; awaiting approval; nothing executed", body = ActionView),
        (status = 422, description = "Invalid (`invalid_request`), or refused by a rule of the approval policy (`policy_refused`, with `rule` and `policy`)")
    )
)]
pub async fn post_action(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposalRequest>,
) -> Result<Response, ApiError> {
    let envelope = validate(body)?;
    create(&ctx, &state, envelope, Origin::Application).await
}

/// Records an external agent's proposal as a draft. It enters the approval lifecycle only when submitted
/// (`POST /agent-execution/actions/{uid}/submit`); the agent gains no approval authority.
///
/// The envelope is validated and sealed as for `POST /actions`, and the action recorded `draft` with origin
/// `external_agent` and its `action.proposed` event. Needs `agent:execution:propose`; a signed client's grant must
/// name the action's kind (422 `outside_grant`). A draft awaits no review and passes no execution gate until it is
/// submitted; proposing executes nothing, and the agent never gains approval authority.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/proposals",
    request_body(content = ProposalRequest, example = json!(example())),
    responses((status = 201, description = "Proposal recorded as a draft", body = ActionView), (status = 422, description = "Rejected: invalid (`invalid_request`), outside the client's grant (`outside_grant`), or refused by a rule of the approval policy (`policy_refused`)"))
)]
pub async fn post_proposal(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposalRequest>,
) -> Result<Response, ApiError> {
    let envelope = validate(body)?;
    create(&ctx, &state, envelope, Origin::ExternalAgent).await
}

async fn create(ctx: &Ctx, state: &AppState, envelope: Envelope, origin: Origin) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let loaded =
        crate::steps::propose::propose(&mut tx, &state.settings, ctx.tenant(), &ctx.caller(), envelope, origin).await?;
    ctx.respond(tx, StatusCode::CREATED, &loaded.view(&state.settings, None)).await
}
