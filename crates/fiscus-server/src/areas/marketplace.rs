//! `GET /marketplace/listings`: what a workspace can install or run, each with its version and the hash
//! that pins it: the workflow library's templates, the engine's model families, and the LQMs operators
//! promoted in this workspace, and the agent spaces Fiscus ships (an admin promotes one at the console).

use axum::Json;
use axum::extract::State;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_listings))
}

/// What a listing is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListingKind {
    /// A workflow template of the library (install it).
    WorkflowTemplate,
    /// One of the engine's statistical model families (run it).
    ModelFamily,
    /// An LQM whose checkpoint an operator promoted in this workspace (run it).
    PromotedModel,
    /// An agent space shipped with Fiscus (an admin promotes it at the console; then run it).
    AgentSpace,
}

/// One listing.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MarketplaceListing {
    /// Always `marketplace_listing`.
    pub object: &'static str,
    pub kind: ListingKind,
    #[schema(example = "model_monitoring")]
    pub key: String,
    pub name: String,
    pub description: String,
    /// The template's version, the engine's version, or the promoted checkpoint's id.
    pub version: String,
    /// `sha256:` of what the version is: the template's definition, the family's description and
    /// parameter schema (RFC 8785), or the promoted checkpoint.
    pub content_hash: String,
    /// Where to install or run it.
    pub path: String,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListingsQuery {
    /// Only listings of this kind.
    pub kind: Option<ListingKind>,
}

/// Everything this workspace can install or run, with versions and hashes.
///
/// The workflow library's templates, the compute engine's model families, the LQMs whose checkpoint an operator
/// promoted in this workspace, and the agent spaces Fiscus ships, optionally of one `kind`, each with the path to
/// install or run it (for a shipped space not active here, the console page where an admin promotes it). Needs
/// `marketplace:read`. Listing installs, runs and promotes nothing; doing so takes that operation's own scope.
#[utoipa::path(
    get,
    path = "/api/v2/marketplace/listings",
    params(ListingsQuery),
    responses((status = 200, description = "Listings", body = ListPage<MarketplaceListing>), (status = 422, description = "Bad query parameter"))
)]
pub async fn get_listings(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ListingsQuery>,
) -> Result<Json<ListPage<MarketplaceListing>>, ApiError> {
    let wanted = |k: ListingKind| q.kind.is_none_or(|w| w == k);
    let mut out = Vec::new();
    if wanted(ListingKind::WorkflowTemplate) {
        for t in &fiscus_agents::rules::workflows::library::TEMPLATES {
            out.push(MarketplaceListing {
                object: "marketplace_listing",
                kind: ListingKind::WorkflowTemplate,
                key: t.key.to_string(),
                name: t.name.to_string(),
                description: t.description.to_string(),
                version: t.version.to_string(),
                content_hash: fiscus_agents::workflows::library::definition_hash(t)?,
                path: format!("/api/v2/workflows/library/{}/install", t.key),
            });
        }
    }
    if wanted(ListingKind::ModelFamily) {
        for m in fiscus_models::compute::models::CATALOGUE {
            let v = fiscus_models::routes::quant::models::view(m);
            let described = serde_json::json!({
                "key": v.key, "name": v.name, "family": v.family, "description": v.description,
                "peer": v.peer, "parameters": v.parameters, "engine": fiscus_models::compute::ENGINE_VERSION,
            });
            out.push(MarketplaceListing {
                object: "marketplace_listing",
                kind: ListingKind::ModelFamily,
                key: v.key,
                name: v.name,
                description: v.description,
                version: fiscus_models::compute::ENGINE_VERSION.to_string(),
                content_hash: fiscus_kernel::governed::canonical("model family", &described)?.1,
                path: v.run,
            });
        }
    }
    if wanted(ListingKind::PromotedModel) {
        for (v, checkpoint) in fiscus_models::routes::quant::models::promoted(&state, ctx.tenant()).await? {
            out.push(MarketplaceListing {
                object: "marketplace_listing",
                kind: ListingKind::PromotedModel,
                key: v.key,
                name: v.name,
                description: v.description,
                version: checkpoint.id.clone(),
                content_hash: v.checkpoint_hash.ok_or_else(|| {
                    fiscus_kernel::governed::Failure::internal("a promoted model without its checkpoint hash")
                })?,
                path: v.run,
            });
        }
    }
    if wanted(ListingKind::AgentSpace) {
        let promoted = fiscus_agents::spaces::all(&state, ctx.tenant()).await?;
        for shipped in &fiscus_agents::rules::spaces::library::SHIPPED {
            let d = shipped.definition();
            // Where to run it once promoted here; until then, where an admin promotes it.
            let path = match promoted.iter().find(|s| s.space.body.key == d.key && !s.suspended()) {
                Some(s) => format!("/api/v2/agents/spaces/{}/runs", s.space.id),
                None => "/console/agent-spaces".to_string(),
            };
            out.push(MarketplaceListing {
                object: "marketplace_listing",
                kind: ListingKind::AgentSpace,
                content_hash: fiscus_kernel::governed::canonical("space definition", &d)?.1,
                key: d.key,
                name: d.name,
                description: d.description,
                version: d.version.to_string(),
                path,
            });
        }
    }
    Ok(Json(ListPage::complete(out)))
}
