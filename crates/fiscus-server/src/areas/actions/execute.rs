use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::delegation::MachineAuthority;
use fiscus_domain::api::actions::ExecutionAccepted;
use serde::Deserialize;

use crate::governed;
use crate::governed::actions::execute::Execution;
use crate::http::ctx::Ctx;
use crate::http::json::OptionalJson;
use crate::http::problem::{ApiError, execution_refused};
use crate::http::query::ApiPath;
use crate::state::AppState;

/// The optional body of an execution request: machine authority evidence, required for
/// `machine_delegated` actions.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteRequest {
    #[serde(default)]
    pub machine_authority: Option<MachineAuthority>,
}

/// Requests execution of an authorised action (application route).
#[utoipa::path(
    post,
    path = "/api/v2/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
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
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// Requests execution of an authorised action (agent gateway route).
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/execute",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    request_body(content = Option<ExecuteRequest>, description = "Optional; machine authority evidence for machine-delegated actions", example = json!({})),
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
    OptionalJson(body): OptionalJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute(ctx, state, uid, body.unwrap_or_default()).await
}

/// Every gate is evaluated by the application layer inside the transaction that would record the acceptance.
/// A refusal keeps what must persist (a spent machine-authority nonce) and changes nothing else.
async fn execute(ctx: Ctx, state: AppState, uid: String, body: ExecuteRequest) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let outcome = governed::actions::execute::execute(
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
