//! `/lqm/models…`: registration, the model list and the developer manifest.

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_http::list::ListPage;
use serde::Deserialize;

use super::views::{self, LqmModelView, ManifestView, PromotionView};
use crate::lqm::registry::{self, RegisterRequest};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// Registers a model: a canonical identity in the model registry with its LQM profile (task family,
/// intended use, licence). Nothing is trained: training stays gated behind a dataset contract and an
/// approved retraining request.
///
/// The name must be unique among the workspace's models in this environment (409 `conflict`), the licence an SPDX
/// identifier; `commercial_use` (default `true`) decides which data licences a contract accepts later. The
/// registration is sealed and audited (`lqm.model.registered`). Needs `lqm:build:write`. It contracts no data,
/// trains nothing and serves nothing: a model reaches the Quant Models catalogue only when an admin or approver
/// approves the promotion of one of its checkpoints at the console.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/models",
    request_body(content = RegisterRequest, example = json!({
        "name": "S&P 500 level forecaster", "task_family": "forecasting",
        "intended_use": "Next-day S&P 500 level forecasts for treasury liquidity planning; not for trading.",
        "license": "Apache-2.0"
    })),
    responses(
        (status = 201, description = "Registered; training stays gated", body = LqmModelView,
         headers(("Location" = String, description = "The model"))),
        (status = 409, description = "A model of this name is registered already"),
        (status = 422, description = "Invalid registration (unknown task family, licence not an SPDX identifier, empty intended use)")
    )
)]
pub async fn post_model(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<RegisterRequest>,
) -> Result<Response, ApiError> {
    let m = registry::register(&state, &ctx.caller(), ctx.tenant(), body).await?;
    Ok(created(Some(format!("/api/v2/lqm/models/{}", m.id)), views::model(m)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ModelsQuery {
    /// Per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^lqm_[0-9A-HJKMNP-TV-Z]{26}$", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The models registered in this workspace and environment, newest first.
///
/// Each entry is the sealed registration (name, task family, intended use, licence, `commercial_use`,
/// `content_hash`, who registered it), its seal checked as it is read. Needs `lqm:build:read`; it changes
/// nothing. Where each model stands in its lifecycle is its developer manifest's.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/models",
    params(ModelsQuery),
    responses(
        (status = 200, description = "Models", body = ListPage<LqmModelView>),
        (status = 422, description = "Bad query parameter")
    )
)]
pub async fn get_models(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ModelsQuery>,
) -> Result<Json<ListPage<LqmModelView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "lqm", "a model")?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::lqm::models::list_models(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, limit, |m| m.id.clone());
    Ok(Json(ListPage {
        object: "list",
        data: page.data.into_iter().map(views::model).collect(),
        has_more: page.has_more,
        next_after_id: page.next_after_id,
    }))
}

/// One model, its seal checked.
///
/// The registration as sealed: name, task family, intended use, licence, `commercial_use`, `content_hash`, who
/// registered it and when. A row that fails its seal is not served (500 `integrity_failure`). Needs
/// `lqm:build:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/models/{uid}",
    params(("uid" = String, Path, description = "The model (`lqm_…`)", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The model", body = LqmModelView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_model(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<LqmModelView>, ApiError> {
    Ok(Json(views::model(registry::model(&state, ctx.tenant(), &uid).await?)))
}

/// The developer manifest: the model's lifecycle stage, its contracts, requests and checkpoints, and for
/// each gated operation (training, evaluation, evidence-packet issuance, model-hub publishing, promotion,
/// QLM composition) whether it is open, with every reason code when it is not.
///
/// Computed on each read from the model's sealed records: `stage`, its contracts, retraining requests and their
/// states, checkpoints (verdict, evidence packet, publication), `serving_checkpoint`, and in `operations` each
/// gate as the operation itself judges it: training and QLM composition for the model, the others for its
/// newest checkpoint (`checkpoint_id`), with the reasons a 409 `lifecycle_gate_closed` would name. Needs
/// `lqm:build:read`; reading it opens no gate and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/models/{uid}/developer-manifest",
    params(("uid" = String, Path, description = "The model (`lqm_…`)", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The manifest", body = ManifestView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_manifest(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ManifestView>, ApiError> {
    Ok(Json(views::manifest(registry::dossier(&state, ctx.tenant(), &uid).await?)))
}

/// A model's promotion history with its control evidence: every request, the operator's decision, and
/// which promotion serves, was superseded or was revoked.
///
/// Oldest first: each promotion's state (`pending`, `active`, `superseded`, `revoked`, `denied`), the exact
/// checkpoint and the evaluation, evidence-packet and publication hashes it was requested on, `promotion_hash`,
/// the operator's decision and who ended it. Needs `lqm:build:read`; it changes nothing. Promotions are decided
/// and revoked only by an admin or approver at the console (`/console/lqm-promotions`), never over the API.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/models/{uid}/promotions",
    params(("uid" = String, Path, description = "The model (`lqm_…`)", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "Promotion history and control evidence, oldest first", body = ListPage<PromotionView>),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_promotions(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ListPage<PromotionView>>, ApiError> {
    let history = crate::lqm::promotion::history(&state, ctx.tenant(), &uid).await?;
    Ok(Json(ListPage::complete(history.into_iter().map(views::promotion).collect())))
}
