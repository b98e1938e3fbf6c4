//! `/quant/models*`, `/quant/model-runs`, `/quant/statistical-models`: the model catalogue and its runs
//! (compute jobs of kind `model_run`; see `crate::compute::models`).

use crate::tables::compute::JobFilter;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_domain::compute::JobKind;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compute::{ComputeJobView, submit_and_answer};
use crate::compute::Request;
use crate::compute::models::{self, InputShape, ModelInfo, ModelRunRequest};
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};
use fiscus_kernel::governed::Failure;

/// A model of the catalogue.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ModelView {
    /// Always `model`.
    pub object: &'static str,
    /// The engine family's key, or a promoted LQM's model id (`lqm_…`).
    #[schema(example = "holt_winters")]
    pub key: String,
    pub name: String,
    /// `statistical` (the engine's families) or `lqm` (a checkpoint an operator promoted).
    pub kind: &'static str,
    /// `forecasting`, `anomaly_detection`, `covariance` or `risk`.
    pub family: &'static str,
    pub input: InputShape,
    /// What it does (a promoted LQM's intended use).
    pub description: String,
    /// The Python library its numbers (its engine family's, for an LQM) are checked against.
    pub peer: &'static str,
    /// A promoted LQM: the exact checkpoint it serves, by hash; null for the engine's families.
    pub checkpoint_hash: Option<String>,
    /// JSON Schema of the `parameters` of a run.
    #[schema(value_type = Object)]
    pub parameters: Value,
    /// Where to run it.
    pub run: String,
}

/// A model family of the engine as the API shows it.
pub fn view(m: &ModelInfo) -> ModelView {
    ModelView {
        object: "model",
        key: m.key.to_string(),
        name: m.name.to_string(),
        kind: "statistical",
        family: m.family,
        input: m.input,
        description: m.description.to_string(),
        peer: m.peer,
        checkpoint_hash: None,
        parameters: (m.parameters)(),
        run: format!("/api/v2/quant/models/{}/run", m.key),
    }
}

/// A promoted LQM as the catalogue lists it: its model id is its key, and it runs the checkpoint promoted.
fn lqm_view(
    m: &crate::tables::lqm::models::Model,
    p: &crate::tables::lqm::supply_chain::Promotion,
    algorithm: &str,
) -> ModelView {
    let forecasting = m.body.task_family == crate::rules::lqm::family::TaskFamily::Forecasting;
    ModelView {
        object: "model",
        key: m.id.clone(),
        name: m.body.name.clone(),
        kind: "lqm",
        family: m.body.task_family.as_str(),
        input: InputShape::Series,
        description: m.body.intended_use.clone(),
        peer: models::find(algorithm).map_or("", |s| s.peer),
        checkpoint_hash: Some(p.record.body.checkpoint_hash.clone()),
        parameters: if forecasting {
            serde_json::json!({"type": "object", "additionalProperties": false, "properties": {
                "horizon": {"type": "integer", "minimum": 1, "maximum": 500, "default": 12, "description": "Periods forecast"}}})
        } else {
            serde_json::json!({"type": "object", "additionalProperties": false, "properties": {}})
        },
        run: format!("/api/v2/quant/models/{}/run", m.id),
    }
}

/// The promoted LQMs of the tenant, with the checkpoint each serves.
pub async fn promoted(
    state: &AppState,
    tenant: &fiscus_domain::tenancy::Tenant,
) -> Result<Vec<(ModelView, crate::tables::lqm::training::Checkpoint)>, ApiError> {
    let mut out = Vec::new();
    for (m, p) in crate::lqm::promotion::in_state(state, tenant, fiscus_domain::lqm::PromotionState::Active).await? {
        let (c, _) = crate::lqm::training::checkpoint(state, tenant, &p.record.body.checkpoint_id).await?;
        if c.content_hash != p.record.body.checkpoint_hash {
            return Err(fiscus_kernel::governed::Failure::internal(format!(
                "checkpoint {} is not the one promoted",
                c.id
            ))
            .into());
        }
        out.push((lqm_view(&m, &p, c.body.algorithm.as_str()), c));
    }
    Ok(out)
}

/// A promoted LQM of the tenant by model id, with the checkpoint it serves; 404 when none is promoted.
async fn promoted_one(
    state: &AppState,
    tenant: &fiscus_domain::tenancy::Tenant,
    key: &str,
) -> Result<(ModelView, crate::tables::lqm::training::Checkpoint), ApiError> {
    let Some((m, p)) = crate::lqm::promotion::serving(state, tenant, key).await.map_err(|e| match e {
        fiscus_kernel::governed::Failure::NotFound => ApiError::not_found().detail("no such model"),
        other => other.into(),
    })?
    else {
        return Err(ApiError::not_found().detail("the model serves no promoted checkpoint"));
    };
    let (c, _) = crate::lqm::training::checkpoint(state, tenant, &p.record.body.checkpoint_id).await?;
    if c.content_hash != p.record.body.checkpoint_hash {
        return Err(
            fiscus_kernel::governed::Failure::internal(format!("checkpoint {} is not the one promoted", c.id)).into()
        );
    }
    Ok((lqm_view(&m, &p, c.body.algorithm.as_str()), c))
}

/// Every model that can be run: the engine's statistical families, then the LQMs an operator promoted
/// in this workspace and environment (each serving one exact checkpoint).
///
/// The statistical families are compiled into this build; each promoted LQM comes with the `checkpoint_hash` its
/// active promotion serves, checked against the stored checkpoint. Needs `quant:models:read`; listing runs
/// nothing. Only an admin's or approver's promotion at the console adds an LQM to it.
#[utoipa::path(get, path = "/api/v2/quant/models", responses((status = 200, description = "The catalogue", body = ListPage<ModelView>)))]
pub async fn get_models(ctx: Ctx, State(state): State<AppState>) -> Result<Json<ListPage<ModelView>>, ApiError> {
    let mut all: Vec<ModelView> = models::CATALOGUE.iter().map(view).collect();
    all.extend(promoted(&state, ctx.tenant()).await?.into_iter().map(|(v, _)| v));
    Ok(Json(ListPage::complete(all)))
}

/// The engine's statistical model families, with their parameters and peers.
///
/// The same list in every workspace, compiled into this build: each family's key, input shape, JSON Schema of
/// its parameters and the Python peer its numbers are checked against. Promoted LQMs are listed by
/// `GET /quant/models`. Needs `quant:models:read`; it reads no workspace data.
#[utoipa::path(get, path = "/api/v2/quant/statistical-models", responses((status = 200, description = "The statistical models", body = ListPage<ModelView>)))]
pub async fn get_statistical_models() -> Json<ListPage<ModelView>> {
    Json(ListPage::complete(models::CATALOGUE.iter().map(view).collect()))
}

fn model(key: &str) -> Result<&'static ModelInfo, ApiError> {
    models::find(key).ok_or_else(|| ApiError::not_found().detail("no such model"))
}

/// One model, with the JSON Schema of its parameters.
///
/// A key starting `lqm_` is a model of this workspace and environment whose promoted checkpoint serves (404 when
/// none serves), shown with that checkpoint's hash; any other key is an engine family (404 when unknown). Needs
/// `quant:models:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/models/{key}",
    params(("key" = String, Path, description = "The model's key (a promoted LQM's is its model id)", example = "holt_winters")),
    responses((status = 200, description = "The model", body = ModelView), (status = 404, description = "No such model"))
)]
pub async fn get_model(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(key): ApiPath<String>,
) -> Result<Json<ModelView>, ApiError> {
    if key.starts_with("lqm_") {
        return Ok(Json(promoted_one(&state, ctx.tenant(), &key).await?.0));
    }
    Ok(Json(view(model(&key)?)))
}

/// Runs a model on a series or a panel of returns: answered in the request (201) except ARIMA fits, which
/// are queued (202), as any run is with `Prefer: respond-async`.
///
/// Needs `quant:models:run`. The input is pinned as any compute job's (instruments to their newest prices
/// dataset) and priced in AI credits (402 `credits_exhausted` writes nothing); a run past the in-request budget
/// is queued too. An `lqm_…` key runs the checkpoint its active promotion serves, pinned whole (fitted
/// parameters and hash) in the stored request, with `horizon` its only parameter. A run trains, promotes and
/// changes no model, and creates no order.
#[utoipa::path(
    post,
    path = "/api/v2/quant/models/{key}/run",
    params(("key" = String, Path, description = "The model's key", example = "robust_z"),
           ("Prefer" = Option<String>, Header, description = "`respond-async` queues the run and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    request_body(content = ModelRunRequest, example = json!({
        "input": { "values": [0.012, -0.004, 0.008, 0.003, -0.011, 0.094, 0.002, -0.006, 0.005, 0.001] },
        "parameters": { "threshold": 3.5 }
    })),
    responses(
        (status = 201, description = "Run in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover the run (`credits_exhausted`)"),
        (status = 404, description = "No such model"),
        (status = 409, description = "`conflict`: the parameters or the input are another model's, not this one's (the body's schema is every model's; each model's own is its catalogue entry); `insufficient_data`: too few observations"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_model_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(key): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ModelRunRequest>,
) -> Result<Response, ApiError> {
    let lqm = key.starts_with("lqm_");
    let pinned = if lqm {
        let (_, checkpoint) = promoted_one(&state, ctx.tenant(), &key).await?;
        if let Some(detail) = models::conflict(&key, true, &body) {
            return Err(Failure::refused(ErrorCode::Conflict, detail).into());
        }
        models::pin_lqm(&state, ctx.principal.workspace_id(), &checkpoint, body).await?
    } else {
        if let Some(detail) = models::conflict(&key, false, &body) {
            return Err(Failure::refused(ErrorCode::Conflict, detail).into());
        }
        models::pin(&state, ctx.principal.workspace_id(), model(&key)?, body).await?
    };
    submit_and_answer(&state, &ctx, &headers, Request::ModelRun(pinned)).await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RunsQuery {
    /// Runs per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Runs older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The workspace's model runs in this environment, newest first (compute jobs of kind `model_run`).
///
/// Runs of the catalogue's models and of promoted LQMs, including those `/ml/anomaly` created, each with its
/// sealed result. Needs `quant:models:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/quant/model-runs",
    params(RunsQuery),
    responses((status = 200, description = "Model runs", body = ListPage<ComputeJobView>))
)]
pub async fn get_model_runs(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<RunsQuery>,
) -> Result<Json<ListPage<ComputeJobView>>, ApiError> {
    let filter = JobFilter { kind: Some(JobKind::ModelRun), state: None };
    super::compute::list(&ctx, &state, filter, q.limit, q.after_id.as_deref()).await
}
