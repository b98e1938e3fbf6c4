//! `/ml/*`: anomaly detection and scenario generation on observed history, each a sealed compute job (an
//! anomaly detection is a run of an anomaly model of the catalogue; scenarios are a job of their own).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::compute::Request;
use crate::compute::models::{self, ModelInput, ModelRunRequest};
use crate::compute::scenarios::{self, ScenarioRequest};
use crate::routes::quant::compute::{ComputeJobView, submit_and_answer};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_models))
}

pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(post_anomaly)).routes(routes!(post_scenarios))
}

/// An ML method.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MlModelView {
    /// Always `ml_model`.
    pub object: &'static str,
    #[schema(example = "isolation_forest")]
    pub key: &'static str,
    pub name: &'static str,
    /// `anomaly_detection` or `scenario_generation`.
    pub task: &'static str,
    /// The operation that runs it.
    pub operation: &'static str,
    pub description: &'static str,
    /// The Python library its numbers are checked against.
    pub peer: &'static str,
    /// JSON Schema of its parameters.
    #[schema(value_type = Object)]
    pub parameters: Value,
}

/// The ML methods: anomaly detection (isolation forest, robust z) and scenario generation (block bootstrap,
/// stress shocks).
///
/// A fixed list in this build: each method's key, task, the operation that runs it, the Python library its
/// numbers are checked against and the JSON Schema of its parameters. Needs `ml:read`; reads no workspace
/// data and runs nothing.
#[utoipa::path(get, path = "/api/v2/ml/models", responses((status = 200, description = "The methods", body = ListPage<MlModelView>)))]
pub async fn get_models() -> Json<ListPage<MlModelView>> {
    let mut out: Vec<MlModelView> = ["isolation_forest", "robust_z"]
        .iter()
        .filter_map(|k| models::find(k))
        .map(|m| MlModelView {
            object: "ml_model",
            key: m.key,
            name: m.name,
            task: "anomaly_detection",
            operation: "POST /api/v2/ml/anomaly",
            description: m.description,
            peer: m.peer,
            parameters: (m.parameters)(),
        })
        .collect();
    out.push(MlModelView {
        object: "ml_model",
        key: "block_bootstrap",
        name: "Moving-block bootstrap",
        task: "scenario_generation",
        operation: "POST /api/v2/ml/scenarios",
        description: "Paths of returns resampled from observed history in blocks of consecutive periods, keeping each day's cross-section, short-range autocorrelation and volatility clustering; seeded.",
        peer: "arch.bootstrap.MovingBlockBootstrap",
        parameters: json!({"type": "object", "properties": {
            "steps": {"type": "integer", "minimum": 1, "maximum": 2520, "default": 21},
            "paths": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 1000},
            "block_length": {"type": "integer", "minimum": 1, "maximum": 252, "default": 5},
            "seed": {"type": "integer", "minimum": 0, "maximum": 9007199254740991_u64}}}),
    });
    out.push(MlModelView {
        object: "ml_model",
        key: "stress",
        name: "Stress shocks",
        task: "scenario_generation",
        operation: "POST /api/v2/ml/scenarios",
        description: "Stated relative price moves per asset applied to the portfolio, with each position's profit and loss.",
        peer: "none (arithmetic revaluation)",
        parameters: json!({"type": "object", "properties": {"shocks": {"type": "array", "minItems": 1, "maxItems": 50,
            "items": {"type": "object", "required": ["name", "moves"], "additionalProperties": false, "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 100},
                "moves": {"type": "object", "minProperties": 1, "maxProperties": 500,
                    "additionalProperties": {"type": "number", "minimum": -1, "maximum": 10}}}}}}}),
    });
    Json(ListPage::complete(out))
}

#[derive(Clone, Copy, Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyMethod {
    IsolationForest,
    RobustZ,
}

/// An anomaly detection: a method, a series, and the method's parameters.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnomalyRequest {
    pub method: AnomalyMethod,
    pub input: ModelInput,
    /// The method's parameters (see `GET /ml/models`).
    #[schema(value_type = Option<Object>)]
    pub parameters: Option<Value>,
}

/// Scores every observation of a series for anomaly (isolation forest, scikit-learn's conventions with the
/// sign flipped so higher is more anomalous; or robust z against the median), naming the most anomalous.
///
/// The input is given inline (values, or for `isolation_forest` columns and rows) or read from one
/// instrument's observed prices (its prices, daily returns or catalogue features), pinned by dataset and
/// content hash; a synthetic dataset is 422. The run is a sealed compute job of kind `model_run` that debits
/// AI credits (201 scored in the request, 202 queued). Needs `ml:inference`. It only scores: nothing is
/// flagged, blocked or changed in the data.
#[utoipa::path(
    post,
    path = "/api/v2/ml/anomaly",
    request_body(content = AnomalyRequest, example = json!({
        "method": "robust_z",
        "input": { "values": [0.012, -0.004, 0.008, 0.003, -0.011, 0.094, 0.002, -0.006, 0.005, 0.001] },
        "parameters": { "threshold": 3.5 }
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Scored in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_anomaly(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AnomalyRequest>,
) -> Result<Response, ApiError> {
    let key = match body.method {
        AnomalyMethod::IsolationForest => "isolation_forest",
        AnomalyMethod::RobustZ => "robust_z",
    };
    let model = models::find(key).ok_or_else(ApiError::internal)?;
    let run = ModelRunRequest { input: body.input, parameters: body.parameters };
    let pinned = models::pin(&state, ctx.principal.workspace_id(), model, run).await?;
    submit_and_answer(&state, &ctx, &headers, Request::ModelRun(pinned)).await
}

/// Generates scenarios from observed history: block-bootstrap paths (return quantiles per asset and for the
/// portfolio) or stated stress shocks (the portfolio's profit and loss per shock).
///
/// The history is instruments' observed daily returns (pinned by dataset and content hash; a synthetic
/// dataset is 422) or `returns` given inline. `block_bootstrap` gives quantiles of each asset's and the
/// portfolio's compounded return (rebalanced each period; equal weights by default); `stress` applies each
/// shock's moves to the weights. A sealed compute job of kind `scenarios` that debits AI credits (201 in
/// the request, 202 queued). Needs `ml:inference`; nothing trades and no dataset is written.
#[utoipa::path(
    post,
    path = "/api/v2/ml/scenarios",
    request_body(content = ScenarioRequest, example = json!({
        "method": "stress",
        "returns": { "BONDS": [0.002, 0.004, -0.001], "EQUITY": [0.01, -0.02, 0.015] },
        "weights": { "BONDS": 0.4, "EQUITY": 0.6 },
        "shocks": [
            { "name": "equity crash", "moves": { "BONDS": 0.05, "EQUITY": -0.35 } },
            { "name": "rates up", "moves": { "BONDS": -0.06, "EQUITY": -0.08 } }
        ]
    })),
    params(("Prefer" = Option<String>, Header, description = "`respond-async` queues the job and answers 202 at once; `return=minimal` leaves the request just sent out of the answer (RFC 7240)")),
    responses(
        (status = 201, description = "Generated in the request: the job with its sealed result", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`return=minimal` when the request preferred it"))),
        (status = 202, description = "Queued: poll the job", body = ComputeJobView,
         headers(("Location" = String, description = "The job"),
                 ("Preference-Applied" = String, description = "`respond-async` and/or `return=minimal` when the request preferred them"))),
        (status = 402, description = "The AI credit balance does not cover it (`credits_exhausted`)"),
        (status = 422, description = "Bad input, or the engine refused it (`computation_refused` with `engine_error`)")
    )
)]
pub async fn post_scenarios(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ScenarioRequest>,
) -> Result<Response, ApiError> {
    let pinned = scenarios::pin(&state, ctx.principal.workspace_id(), body).await?;
    submit_and_answer(&state, &ctx, &headers, Request::Scenarios(pinned)).await
}
