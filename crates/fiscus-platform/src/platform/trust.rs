//! `GET /trust/audit-head`: the workspace's audit chain head (sequence and hash), what anything sealed can be
//! checked against.

use crate::views::AuditHeadView;
use axum::Json;
use axum::extract::State;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

/// The head of the workspace's hash-chained audit log, so a client can pin it and later prove that the log
/// it is shown extends what it saw.
///
/// `seq` and `hash` of the last event in the workspace's audit chain (one chain for both environments), which
/// every governed change extends. Needs `trust:read`. Reading the head appends nothing to the chain and returns no
/// event.
#[utoipa::path(get, path = "/api/v2/trust/audit-head", responses((status = 200, description = "Sequence number and hash of the last audit event", body = AuditHeadView)))]
pub async fn get_audit_head(ctx: Ctx, State(state): State<AppState>) -> Result<Json<AuditHeadView>, ApiError> {
    let mut conn = state.store.read().await?;
    let (seq, hash, _) = fiscus_store::audit::head(&mut conn, ctx.principal.workspace_id()).await?;
    Ok(Json(AuditHeadView {
        object: "audit_head".into(),
        workspace_id: ctx.principal.workspace_id().to_string(),
        seq,
        hash,
    }))
}
