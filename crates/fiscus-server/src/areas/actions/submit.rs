use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::api::actions::ActionView;
use fiscus_domain::error_code::ErrorCode;
use serde_json::json;

use super::service::{self, Actor};
use crate::http::ctx::Ctx;
use crate::http::problem::ApiError;
use crate::http::query::ApiPath;
use crate::state::AppState;

/// Submits an external agent's draft into the normal approval lifecycle. The client gains no approval
/// authority.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/submit",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "Submitted; awaiting approval", body = ActionView), (status = 422, description = "Rejected by controls"))
)]
pub async fn post_submit(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let tenant = ctx.tenant();
    let mut tx = state.store.begin().await?;
    let row = fiscus_store::actions::get_for_decision(&mut tx, tenant, &uid).await?;
    let current = service::parse_state(&row.control_state)?;
    if row.origin != "external_agent" {
        return Err(
            ApiError::new(ErrorCode::SubmissionRejected).detail("only external agents' proposals are submitted")
        );
    }
    let next = current.on(Event::Submit).map_err(|_| {
        ApiError::new(ErrorCode::SubmissionRejected).detail(format!("the action is {}, not a draft", current.as_str()))
    })?;
    let actor = Actor { kind: "application", id: &ctx.principal.application_id };
    service::record_transition(&mut tx, tenant, &uid, Some(current), next, "action.submitted", &actor, json!({}))
        .await?;
    ctx.audit(&mut tx, Some(&uid), json!({ "from": current.as_str(), "to": ControlState::PendingApproval.as_str() }))
        .await?;
    let row = fiscus_store::actions::get(tx.conn(), tenant, &uid).await?;
    let view = service::load(tx.conn(), tenant, row).await?.view(&state.settings, None)?;
    ctx.respond(tx, StatusCode::OK, &view).await
}
