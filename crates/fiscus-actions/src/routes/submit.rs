//! A signed execution client's submission of a proposed action for approval, through the governed layer.

use crate::views::ActionView;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// Submits an external agent's draft into the normal approval lifecycle. The client gains no approval
/// authority.
///
/// Moves an `external_agent` draft to `pending_approval` with its `action.submitted` event, on the locked,
/// seal-checked action. An action no longer a draft (with its `state`) and a draft an application proposed are
/// 422 `submission_rejected`; a kind the signed client's grant does not name is 422
/// `outside_grant`. Needs `agent:execution:submit`.
/// Submitting approves and executes nothing: a quorum of operators decides at the console.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/actions/{uid}/submit",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "Submitted; awaiting approval", body = ActionView), (status = 404, description = "Not in this workspace"), (status = 422, description = "Rejected by controls (`submission_rejected`: not a draft, with its `state`, or not an external agent's proposal; `outside_grant`)"))
)]
pub async fn post_submit(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let loaded = crate::steps::submit::submit(&mut tx, ctx.tenant(), &ctx.caller(), &uid).await?;
    ctx.respond(tx, StatusCode::OK, &loaded.view(&state.settings, None)).await
}
