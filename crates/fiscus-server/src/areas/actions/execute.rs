use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::gates::{GateFacts, evaluate};
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::api::actions::ExecutionAccepted;
use fiscus_domain::credentials::Environment;
use fiscus_domain::error_code::ErrorCode;
use serde_json::json;

use super::service::{self, Actor};
use crate::http::ctx::Ctx;
use crate::http::problem::ApiError;
use crate::http::query::ApiPath;
use crate::state::AppState;

/// Requests execution of an authorised action (application route).
#[utoipa::path(
    post,
    path = "/api/v2/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 422, description = "Not authorised or a control gate failed; `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid).await
}

/// Requests execution of an authorised action (agent gateway route).
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 422, description = "Not authorised or a control gate failed; `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_agent_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid).await
}

/// Every gate is evaluated inside the transaction that would record the acceptance, on the locked action,
/// so nothing can change between the decision and its effect. Any error on the way refuses.
async fn execute(ctx: Ctx, state: AppState, uid: String) -> Result<Response, ApiError> {
    let tenant = ctx.tenant().clone();
    let mut tx = state.store.begin().await?;
    let row = fiscus_store::actions::get_for_decision(&mut tx, &tenant, &uid).await?;
    let loaded = service::load(tx.conn(), &tenant, row).await?;
    let workspace = fiscus_store::workspaces::get(tx.conn(), &tenant.workspace_id).await?;
    let required = loaded.required_checks()?;
    let quorum = service::quorum(&state.settings, service::risk_tier(&loaded.row)?);
    // The sandbox connector serves the sandbox; production connectors are configured, never simulated, and
    // none is configured yet, so production execution fails this gate.
    let connector_available = tenant.environment == Environment::Sandbox && loaded.row.connector == "sandbox";
    let failed = evaluate(&GateFacts {
        state: loaded.state,
        quorum_met_on_current: loaded.current_approvals() >= quorum,
        required_checks: &required,
        latest_checks: &loaded.latest,
        environment: tenant.environment,
        production_access: workspace.production_access(),
        connector_available,
        execution_mode: loaded.execution_mode()?,
        // Machine delegations are not established yet: these gates fail closed for delegated actions.
        delegation: None,
        machine_authority: None,
        budget: None,
    });
    if !failed.is_empty() {
        let names: Vec<&str> = failed.iter().map(|g| g.gate.as_str()).collect();
        return Err(ApiError::new(ErrorCode::ExecutionRefused)
            .detail(format!("failed gates: {}", names.join(", ")))
            .with("failed_gates", serde_json::to_value(&failed).unwrap_or_default()));
    }
    let next = loaded.state.on(Event::ExecutionAccepted).map_err(|_| ApiError::new(ErrorCode::ExecutionRefused))?;
    let actor = Actor { kind: "application", id: &ctx.principal.application_id };
    service::record_transition(
        &mut tx,
        &tenant,
        &uid,
        Some(loaded.state),
        next,
        "action.executed",
        &actor,
        json!({ "envelope_hash": loaded.row.envelope_hash, "check_set_hash": loaded.check_set_hash, "connector": loaded.row.connector }),
    )
    .await?;
    fiscus_store::settlement::enqueue(
        &mut tx,
        &tenant,
        &uid,
        &loaded.row.connector,
        fiscus_domain::clock::now_micros(),
    )
    .await?;
    ctx.audit(
        &mut tx,
        Some(&uid),
        json!({ "accepted": true, "envelope_hash": loaded.row.envelope_hash, "check_set_hash": loaded.check_set_hash }),
    )
    .await?;
    let body = ExecutionAccepted {
        object: "execution_request".into(),
        action_id: uid.clone(),
        accepted: true,
        control_state: ControlState::Executing,
        completion: "the action completes when its settlement is reconciled".into(),
    };
    ctx.respond(tx, StatusCode::OK, &body).await
}
