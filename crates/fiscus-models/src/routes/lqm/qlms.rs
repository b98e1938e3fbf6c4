//! `/qlms…`: QLMs composed from promoted LQM checkpoints, their versions, invocations and evaluations.

use crate::rules::lqm::records::Pin;
use crate::tables::lqm::qlms::{Qlm, Run, Version};
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lqm::qlm::{self, CreateQlm, EvaluateInput, InvokeInput};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// A QLM with its newest version's pins.
#[derive(Serialize, utoipa::ToSchema)]
pub struct QlmView {
    /// Always `qlm`.
    pub object: &'static str,
    #[schema(example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub name: String,
    pub description: String,
    /// The newest version, its hash and the exact checkpoints it pins.
    pub version: i64,
    pub version_hash: String,
    pub pins: Vec<Pin>,
    pub created_by: String,
    pub created_at: String,
}

fn qlm_view(q: Qlm, newest: &Version) -> QlmView {
    QlmView {
        object: "qlm",
        id: q.id,
        name: q.body.name,
        description: q.body.description,
        version: newest.body.version,
        version_hash: newest.content_hash.clone(),
        pins: newest.body.pins.clone(),
        created_by: q.created_by.label(),
        created_at: rfc3339(q.created_at),
    }
}

/// A version of a QLM.
#[derive(Serialize, utoipa::ToSchema)]
pub struct QlmVersionView {
    /// Always `qlm_version`.
    pub object: &'static str,
    #[schema(example = "qlv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub qlm_id: String,
    pub version: i64,
    pub pins: Vec<Pin>,
    /// The version it replaced (null for the first).
    pub previous_version_hash: Option<String>,
    /// `composed`, or which role was rebound from which checkpoint to which.
    pub reason: String,
    /// `sha256:` of the version (RFC 8785), which the previous version's hash is part of.
    pub version_hash: String,
    /// Who composed it (an application) or rebound it (an operator).
    pub created_by: String,
    pub created_at: String,
}

fn version_view(v: Version) -> QlmVersionView {
    QlmVersionView {
        object: "qlm_version",
        id: v.id,
        qlm_id: v.body.qlm_id,
        version: v.body.version,
        pins: v.body.pins,
        previous_version_hash: v.body.previous_version_hash,
        reason: v.body.reason,
        version_hash: v.content_hash,
        created_by: v.created_by.label(),
        created_at: rfc3339(v.created_at),
    }
}

/// An invocation or an evaluation of a QLM version.
#[derive(Serialize, utoipa::ToSchema)]
pub struct QlmRunView {
    /// `qlm_invocation` or `qlm_evaluation`.
    pub object: &'static str,
    #[schema(example = "qlr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub qlm_id: String,
    pub version: i64,
    pub version_hash: String,
    /// `sha256:` of the request as run (RFC 8785).
    pub request_hash: String,
    /// One per component: its role, model, checkpoint and hash, and its `output` (an invocation) or
    /// `metrics`, `criteria` and `passed` (an evaluation).
    #[schema(value_type = Vec<Object>)]
    pub outputs: Value,
    /// `sha256:` of the run's record; the row is sealed.
    pub run_hash: String,
    pub created_by: String,
    pub created_at: String,
}

fn run_view(object: &'static str, r: Run) -> QlmRunView {
    QlmRunView {
        object,
        id: r.id,
        qlm_id: r.body.qlm_id,
        version: r.body.version,
        version_hash: r.body.version_hash,
        request_hash: r.body.request_hash,
        outputs: r.body.outputs,
        run_hash: r.content_hash,
        created_by: r.created_by.label(),
        created_at: rfc3339(r.created_at),
    }
}

/// Composes a QLM from models whose promoted checkpoints serve; its version 1 pins exactly those
/// checkpoints. Moving a role to another checkpoint later is an operator's decision at the console.
///
/// Needs `lqm:build:write`. Each component names a role (unique in the QLM) and a model of this workspace; its
/// pin is the checkpoint, checkpoint hash and promotion the model's active promotion has now (409
/// `lifecycle_gate_closed`, `not_promoted`, when it has none). The name is unique in this workspace and
/// environment (409 `conflict`). Composing runs and promotes nothing; only an admin or approver rebinds a role,
/// at `/console/qlms`, as a new version.
#[utoipa::path(
    post,
    path = "/api/v2/qlms",
    request_body(content = CreateQlm, example = json!({
        "name": "Treasury liquidity profile", "description": "S&P 500 level forecasts for liquidity planning",
        "components": {"forecast": {"model_uid": "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD"}}
    })),
    responses(
        (status = 201, description = "Composed", body = QlmView, headers(("Location" = String, description = "The QLM"))),
        (status = 409, description = "A component's model serves no promoted checkpoint (`lifecycle_gate_closed`, `not_promoted`), or the name is taken"),
        (status = 422, description = "Bad input; an unknown model is 409 `reference_not_found`")
    )
)]
pub async fn post_qlm(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CreateQlm>,
) -> Result<Response, ApiError> {
    let (q, first) = qlm::create(&state, &ctx.caller(), ctx.tenant(), body).await?;
    Ok(created(Some(format!("/api/v2/qlms/{}", q.id)), qlm_view(q, &first)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct QlmsQuery {
    /// Per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^qlm_[0-9A-HJKMNP-TV-Z]{26}$", example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The QLMs of this workspace and environment, newest first, each with its newest version's pins.
///
/// Each QLM with its name, description, newest `version`, `version_hash` and pins (role, model, checkpoint,
/// checkpoint hash, promotion). Needs `qlm:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/qlms",
    params(QlmsQuery),
    responses((status = 200, description = "QLMs", body = ListPage<QlmView>), (status = 422, description = "Bad query parameter"))
)]
pub async fn get_qlms(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<QlmsQuery>,
) -> Result<Json<ListPage<QlmView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "qlm", "a QLM")?;
    let key = state.store.seal_key();
    let mut conn = state.store.read().await?;
    let rows = crate::tables::lqm::qlms::list_qlms(&mut conn, key, ctx.tenant(), q.after_id.as_deref(), limit).await?;
    let page = ListPage::from_overfetch(rows, limit, |q| q.id.clone());
    let mut data = Vec::with_capacity(page.data.len());
    for q in page.data {
        let versions = crate::tables::lqm::qlms::versions_of(&mut conn, key, ctx.tenant(), &q.id).await?;
        let newest = versions
            .last()
            .ok_or_else(|| ApiError::from(fiscus_kernel::governed::Failure::internal("a QLM without a version")))?;
        data.push(qlm_view(q, newest));
    }
    Ok(Json(ListPage { object: "list", data, has_more: page.has_more, next_after_id: page.next_after_id }))
}

/// One QLM with its newest version's pins.
///
/// The newest version's pins say which exact checkpoint each role runs (what `invoke` runs by default), whatever
/// the models' promotions serve now. Needs `qlm:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/qlms/{uid}",
    params(("uid" = String, Path, description = "The QLM (`qlm_…`)", example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The QLM", body = QlmView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_qlm(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<QlmView>, ApiError> {
    let (q, versions) = qlm::load(&state, ctx.tenant(), &uid).await?;
    let newest = versions.last().ok_or_else(ApiError::not_found)?;
    Ok(Json(qlm_view(q, newest)))
}

/// Every version of a QLM, oldest first: each pins exact checkpoints and names the version it replaced.
///
/// Version 1 is the composition (`reason`: `composed`); each later one is an operator's rebinding of one role,
/// with `previous_version_hash` chaining it to the version it replaced. Needs `qlm:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/qlms/{uid}/versions",
    params(("uid" = String, Path, description = "The QLM (`qlm_…`)", example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "Versions, oldest first", body = ListPage<QlmVersionView>), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_versions(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ListPage<QlmVersionView>>, ApiError> {
    let (_, versions) = qlm::load(&state, ctx.tenant(), &uid).await?;
    Ok(Json(ListPage::complete(versions.into_iter().map(version_view).collect())))
}

/// Runs the pinned checkpoints of a version (the newest unless `version` names one) on the input; each
/// output carries its checkpoint's hash and the version's. Refused while a pinned checkpoint is revoked.
///
/// Needs `qlm:invoke`. `values` (3 to 20,000, oldest first) go to every component; forecasting ones forecast
/// `horizon` periods (default 12). Each pinned checkpoint is checked against the hash the version pins before it
/// runs. The run is sealed and audited with the outputs and only the hash of the request. Invoking trains,
/// promotes and rebinds nothing, and costs no AI credits.
#[utoipa::path(
    post,
    path = "/api/v2/qlms/{uid}/invoke",
    params(("uid" = String, Path, description = "The QLM (`qlm_…`)", example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = InvokeInput, example = json!({"values": [4012.5, 4030.1, 4018.9, 4055.0, 4071.3, 4066.2], "horizon": 5})),
    responses(
        (status = 200, description = "The outputs, recorded", body = QlmRunView),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "A pinned checkpoint was revoked (`checkpoint_revoked`, with its `role`): an operator must rebind"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused`)")
    )
)]
pub async fn post_invoke(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<InvokeInput>,
) -> Result<Json<QlmRunView>, ApiError> {
    let (_, run) = qlm::invoke(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(Json(run_view("qlm_invocation", run)))
}

/// Runs the evaluation suite of a version on a contracted dataset: each pinned checkpoint on the
/// contract's held-out observations against its family's criterion.
///
/// Needs `qlm:evaluate`. `contract_uid` names a contract of this workspace and environment; its observations
/// are read again and checked against its data hash, and each component is held to its family's default
/// criterion. The sealed run records the contract and holdout hashes with each component's metrics and verdict.
/// It changes no checkpoint's own evaluation, and promotes or rebinds nothing.
#[utoipa::path(
    post,
    path = "/api/v2/qlms/{uid}/evaluate",
    params(("uid" = String, Path, description = "The QLM (`qlm_…`)", example = "qlm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = EvaluateInput, example = json!({"contract_uid": "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD"})),
    responses(
        (status = 200, description = "The evaluation, recorded", body = QlmRunView),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "A pinned checkpoint was revoked (`checkpoint_revoked`)"),
        (status = 422, description = "Bad input (an unknown version), or the engine refused (`computation_refused`); an unknown contract is 409 `reference_not_found`")
    )
)]
pub async fn post_evaluate(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<EvaluateInput>,
) -> Result<Json<QlmRunView>, ApiError> {
    let (_, run) = qlm::evaluate(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(Json(run_view("qlm_evaluation", run)))
}
