//! Asking to execute an approved action (a bearer application, or a signed client through the
//! agent-execution gateway); the governed layer checks every execution gate.

use crate::rules::delegation::MachineAuthority;
use crate::views::ExecutionAccepted;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::steps::execute::Execution;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::OptionalJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// The optional body of an execution request: machine authority evidence, required for
/// `machine_delegated` actions.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteRequest {
    #[serde(default)]
    pub machine_authority: Option<MachineAuthority>,
}

/// Requests execution of an authorised action (application route).
///
/// Every gate is evaluated on the locked action: `authorised` (quorum approval of the current envelope hash and
/// check set; a `machine_delegated` action need only be pending approval or approved, its authority being the
/// delegation), `pre_trade_checks`, `environment`, `connector`, and for `machine_delegated` actions `delegation`,
/// `machine_authority` (fresh evidence signed by the delegated identity) and `budget`. If all pass the action
/// becomes `executing`, the budget is reserved and settlement queued; else 422 `execution_refused` names each
/// failed gate and only a validly signed nonce is spent. An action nobody authorised (a draft, one a person
/// has not approved, denied) is 422 `execution_refused` with the `authorised` gate, before any other gate or
/// evidence is read; one already executing or ended is 409 `action_state_conflict` with its `state`. Needs
/// `actions:execute`, which approves nothing.
#[utoipa::path(
    post,
    path = "/api/v2/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 409, description = "The action is already executing or has ended (`action_state_conflict`, with its `state`)"),
        (status = 422, description = "Not authorised (a draft, pending a person's approval, denied: the `authorised` gate) or a control gate failed (`execution_refused`); `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// Requests execution of an authorised action (agent gateway route).
///
/// The same gates and outcome as `POST /actions/{uid}/execute`: all pass and the action becomes `executing` with
/// its settlement queued, or 422 `execution_refused` with `failed_gates`. Needs `agent:execution:execute`; a
/// signed client's grant must also name the action's kind (422 `outside_grant`). A request signature proves which
/// client asks and counts neither as an approval nor as machine authority: a `machine_delegated` action still
/// needs evidence signed by its delegated identity. Acceptance is not completion; reconciliation is.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
    responses(
        (status = 200, description = "Execution request accepted; completion comes with reconciliation", body = ExecutionAccepted),
        (status = 409, description = "The action is already executing or has ended (`action_state_conflict`, with its `state`)"),
        (status = 422, description = "Not authorised (a draft, pending a person's approval, denied: the `authorised` gate) or a control gate failed (`execution_refused`); `failed_gates` names each"),
        (status = 404, description = "Not in this workspace")
    )
)]
pub async fn post_agent_execute(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// Every gate is evaluated by the application layer inside the transaction that would record the acceptance.
/// A refusal keeps what must persist (a spent machine-authority nonce) and changes nothing else.
async fn execute(ctx: Ctx, state: AppState, uid: String, body: ExecuteRequest) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let outcome = crate::steps::execute::execute(
        &mut tx,
        &state.settings,
        ctx.tenant(),
        &ctx.caller(),
        &uid,
        body.machine_authority.as_ref(),
    )
    .await?;
    match outcome {
        Execution::Refused(failed) => {
            tx.commit().await?;
            Err(execution_refused(&failed))
        }
        Execution::Accepted(accepted) => {
            let body = ExecutionAccepted {
                object: "execution_request".into(),
                action_id: accepted.action_id,
                accepted: true,
                control_state: accepted.state,
                completion: "the action completes when its settlement is reconciled".into(),
            };
            ctx.respond(tx, StatusCode::OK, &body).await
        }
    }
}

/// 422 `execution_refused`, naming every failed gate.
fn execution_refused(failed: &[crate::rules::gates::FailedGate]) -> ApiError {
    let names: Vec<&str> = failed.iter().map(|g| g.gate.as_str()).collect();
    ApiError::new(ErrorCode::ExecutionRefused)
        .detail(format!("failed gates: {}", names.join(", ")))
        .with("failed_gates", serde_json::to_value(failed).unwrap_or_default())
}
