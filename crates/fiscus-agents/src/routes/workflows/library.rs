//! `/workflows/library…`: the templates shipped with Fiscus, and installing one.

use crate::rules::workflows::definition::Definition;
use crate::rules::workflows::library::TEMPLATES;
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_http::list::ListPage;
use serde::Serialize;

use super::views::{WorkflowVersionView, version_view};
use crate::workflows::library;
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// A template of the library.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowTemplateView {
    /// Always `workflow_template`.
    pub object: &'static str,
    /// The key to install it by.
    #[schema(example = "model_monitoring")]
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// The template's version (raised whenever its definition changes).
    pub version: u32,
    /// `sha256:` of the definition (RFC 8785); an installed version names it.
    pub definition_hash: String,
    pub definition: Definition,
}

/// The workflow templates shipped with Fiscus (month-end close review, liquidity report, model
/// monitoring), each with its definition and hash.
///
/// The templates are compiled into this build and the same in every workspace; `definition_hash` is what an
/// installed version cites. Needs `workflow:read`; reading installs nothing and reads no workspace data.
#[utoipa::path(
    get,
    path = "/api/v2/workflows/library",
    responses((status = 200, description = "The templates, by key", body = ListPage<WorkflowTemplateView>))
)]
pub async fn get_library(_ctx: Ctx) -> Result<Json<ListPage<WorkflowTemplateView>>, ApiError> {
    let mut data = Vec::with_capacity(TEMPLATES.len());
    for t in &TEMPLATES {
        data.push(WorkflowTemplateView {
            object: "workflow_template",
            key: t.key,
            name: t.name,
            description: t.description,
            version: t.version,
            definition_hash: library::definition_hash(t)?,
            definition: t.definition(),
        });
    }
    Ok(Json(ListPage::complete(data)))
}

/// Installs a template into this workspace and environment: a workflow named after it, with the
/// template's definition as its version 1 (citing the template's key, version and definition hash).
///
/// Needs `workflow:manage`. A template installs once per workspace and environment (409 `conflict`, with
/// `workflow_uid`), and not over a workflow of the same name (409 `conflict`). Installing starts no run and
/// reads no data: a run is `POST /workflows/runs` with the version's id.
#[utoipa::path(
    post,
    path = "/api/v2/workflows/library/{key}/install",
    params(("key" = String, Path, description = "The template's key", example = "model_monitoring")),
    responses(
        (status = 201, description = "Installed: the workflow's first version", body = WorkflowVersionView,
         headers(("Location" = String, description = "The version"))),
        (status = 404, description = "No such template"),
        (status = 409, description = "Installed already in this workspace and environment (`conflict`, with `workflow_uid`)")
    )
)]
pub async fn post_install(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(key): ApiPath<String>,
) -> Result<Response, ApiError> {
    let (workflow, version) = library::install(&state, &ctx.caller(), ctx.tenant(), &key).await?;
    let location = format!("/api/v2/workflow-studio/versions/{}", version.id);
    Ok(created(Some(location), version_view(&workflow, version)))
}
