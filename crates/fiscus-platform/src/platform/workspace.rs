//! `GET /workspace`: the workspace of the calling credential.

use crate::views::{CallerView, ProductionAccessView, WorkspaceView};
use axum::Json;
use axum::extract::State;
use fiscus_domain::clock::rfc3339;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

/// The calling credential's workspace.
///
/// Its id, name, creation time, whether production access is enabled, whether it is a demo, and `entitlement` (the
/// scopes it may grant its applications); and the caller: application, credential and its kind, effective scopes,
/// service class and environment. Needs `workspace:read`. It shows no secret and changes nothing: production
/// access is turned on only by two distinct admins at the console.
#[utoipa::path(get, path = "/api/v2/workspace", responses((status = 200, description = "The workspace of the calling credential", body = WorkspaceView)))]
pub async fn get_workspace(ctx: Ctx, State(state): State<AppState>) -> Result<Json<WorkspaceView>, ApiError> {
    let ws = state.store.workspace(ctx.principal.workspace_id()).await?;
    Ok(Json(WorkspaceView {
        object: "workspace".into(),
        production_access: ProductionAccessView { enabled: ws.production_access() },
        entitlement: ws.entitlement().iter().collect(),
        demo: ws.is_demo == 1,
        created_at: rfc3339(ws.created_at),
        environment: ctx.principal.tenant.environment,
        caller: CallerView {
            application_id: ctx.principal.application_id.clone(),
            credential_id: ctx.principal.credential_id.clone(),
            credential_kind: ctx.principal.credential_kind.as_str().into(),
            scopes: ctx.principal.scopes.iter().collect(),
            service_class: ctx.principal.service_class.clone(),
        },
        id: ws.id.clone(),
        name: ws.name.clone(),
    }))
}
