//! `/investment/governed-ai-operations…` and `/investment/rebalance-proposals/{uid}/actions`: governed AI
//! operations, the rebalance proposals they draw, and a proposal turned into an investment Financial Action.

use crate::tables::themes::Operation;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use serde::Serialize;

use super::records::{RecordView, view};
use crate::governed_operations::{self, OperationRequest, RebalanceOutput, RebalanceRequest};
use crate::orders::OrderActionRequest;
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// A governed AI operation.
#[derive(Serialize, utoipa::ToSchema)]
pub struct OperationView {
    /// Always `governed_ai_operation`.
    pub object: &'static str,
    #[schema(example = "gao_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub portfolio_id: i64,
    pub model_portfolio: String,
    /// The model portfolio's content hash when the operation opened; a rebalance needs it unchanged.
    pub model_portfolio_hash: String,
    pub objective: String,
    pub agent: Option<String>,
    /// `governed_review` or `closed`.
    #[schema(example = "governed_review")]
    pub status: String,
    pub created_by: String,
    pub created_at: String,
}

fn operation_view(o: Operation) -> OperationView {
    OperationView {
        object: "governed_ai_operation",
        id: o.id,
        portfolio_id: o.portfolio_id,
        model_portfolio: o.model_portfolio_id,
        model_portfolio_hash: o.model_portfolio_hash,
        objective: o.objective,
        agent: o.agent,
        status: o.status.as_str().to_string(),
        created_by: o.created_by.label(),
        created_at: rfc3339(o.created_at),
    }
}

/// Opens a governed AI operation on a portfolio, steered by a model portfolio (whose content hash is fixed
/// now): it is under governed review from the start, and draws only proposals that people decide on.
///
/// The portfolio must be the workspace's and the model portfolio this environment's (422 otherwise). The
/// model portfolio need not be approved yet, but every rebalance is refused until a person approves it. The
/// operation starts in `governed_review` with the model portfolio's hash, and an audit event is recorded.
/// Needs `investment:run`. `agent` is kept for the record only and gains no authority; nothing is proposed
/// or traded by opening it.
#[utoipa::path(
    post,
    path = "/api/v2/investment/governed-ai-operations",
    request_body(content = OperationRequest, example = json!({
        "portfolio_id": 1, "model_portfolio": "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD",
        "objective": "Move the growth book onto the approved quality model", "agent": "portfolio-copilot v2"
    })),
    responses(
        (status = 201, description = "Opened, in governed review", body = OperationView,
         headers(("Location" = String, description = "The operation"))),
        (status = 422, description = "Bad input; a portfolio or model portfolio not in this workspace is 409 `reference_not_found`")
    )
)]
pub async fn post_operation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<OperationRequest>,
) -> Result<Response, ApiError> {
    let o = governed_operations::open_operation(&state, &ctx.caller(), ctx.tenant(), body).await?;
    Ok(created(Some(format!("/api/v2/investment/governed-ai-operations/{}", o.id)), operation_view(o)))
}

/// One governed AI operation, its seal checked.
///
/// The portfolio, the model portfolio with the hash fixed when the operation opened, the objective, the agent
/// and the status. Needs `investment:read`; an operation of the other environment is 404. A read: nothing
/// is changed.
#[utoipa::path(
    get,
    path = "/api/v2/investment/governed-ai-operations/{uid}",
    params(("uid" = String, Path, description = "The operation (`gao_…`)", example = "gao_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The operation", body = OperationView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_operation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<OperationView>, ApiError> {
    Ok(Json(operation_view(governed_operations::load_operation(&state, ctx.tenant(), &uid).await?)))
}

/// Proposes the orders that would move the operation's portfolio onto its approved model portfolio (whole
/// units at observed marks, with turnover and estimated costs). Refused (422 `rebalance_refused`, the detail
/// naming the condition) unless the operation is in governed review and its model portfolio was approved by
/// a person and still has the hash the operation opened with. Never executes anything.
///
/// Holdings are the lots held on `as_of` at their newest observed prices on or before it (by default every
/// open lot at its newest price, `as_of` then being the newest price's date), in the base currency at
/// observed FX, with cash counted in the value. `expected_model_portfolio_hash` refuses a rebalance against a
/// model portfolio other than the one reviewed. The proposal (`rbp_…`) is recorded with its `content_hash`
/// and an audit event. Needs `investment:run`; only `POST /investment/rebalance-proposals/{uid}/actions`
/// turns it into a Financial Action.
#[utoipa::path(
    post,
    path = "/api/v2/investment/governed-ai-operations/{uid}/rebalance",
    params(("uid" = String, Path, description = "The operation (`gao_…`)", example = "gao_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = RebalanceRequest, description = "Every field is optional", example = json!({"cost_bps": 10})),
    responses(
        (status = 201, description = "The proposal, sealed (never executable)", body = RecordView<RebalanceOutput>),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 422, description = "Bad input, or the operation's conditions failed (`rebalance_refused`)"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_rebalance(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<RebalanceRequest>,
) -> Result<Response, ApiError> {
    let record = governed_operations::rebalance(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(created(None, view::<RebalanceOutput>("rebalance_proposal", record)?))
}

/// Turns a rebalance proposal into an `investment_order` Financial Action awaiting approval (one per
/// proposal): its envelope carries the orders, the proposal's content hash and the approved model
/// portfolio's hash, and the pre-trade checks it requires (`pre_trade.limits`, `pre_trade.restricted_list`,
/// `pre_trade.concentration`) are computed from the book and recorded with it. People approve it at the
/// console; execution, settlement into the book and reconciliation follow the actions' lifecycle.
///
/// Needs `investment:execute`, which here only proposes: the action is `human_approved`, risk tier `T2` by
/// default (two distinct approvers) on the `sandbox` connector by default, and people decide it at
/// `/console/actions/{id}`. Each check is recorded `passed` or `failed` with its facts' hash as source; a
/// failed one blocks execution as any pre-trade check does. A second request for the same proposal is 409.
/// Nothing is executed or settled here, and the book moves only when the action settles and reconciles.
#[utoipa::path(
    post,
    path = "/api/v2/investment/rebalance-proposals/{uid}/actions",
    params(("uid" = String, Path, description = "The rebalance proposal (`rbp_…`)", example = "rbp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = OrderActionRequest, description = "Every field is optional", example = json!({"risk_tier": "T2"})),
    responses(
        (status = 201, description = "Proposed; awaiting approval; nothing executed", body = fiscus_actions::views::ActionView,
         headers(("Location" = String, description = "The action"))),
        (status = 404, description = "No such proposal in this workspace and environment"),
        (status = 409, description = "The proposal is an action already, or has no orders"),
        (status = 422, description = "Bad input")
    )
)]
pub async fn post_order_action(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<OrderActionRequest>,
) -> Result<Response, ApiError> {
    let mut tx = state.store.begin().await?;
    let loaded = crate::orders::propose(
        &mut tx,
        &state.settings,
        ctx.tenant(),
        &ctx.caller(),
        &uid,
        body,
        fiscus_actions::rules::envelope::Origin::Application,
    )
    .await?;
    let location = format!("/api/v2/actions/{}", loaded.action.id);
    let mut response = ctx.respond(tx, StatusCode::CREATED, &loaded.view(&state.settings, None)).await?;
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    Ok(response)
}
