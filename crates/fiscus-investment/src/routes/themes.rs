//! `/investment/themes/universes…` and `/investment/model-portfolios…`: research's universes and the model
//! portfolios drawn from them (drafts until an operator approves them at the console).

use crate::rules::model_portfolio::{ModelHolding, ModelState, Weighting};
use crate::tables::themes::{Member, ModelPortfolio, Universe};
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use crate::themes::{self, HandoffRequest, ModelPortfolioRequest, UniverseRequest};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::{ApiJson, OptionalJson};
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// A thematic universe.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UniverseView {
    /// Always `thematic_universe`.
    pub object: &'static str,
    /// The integer id the seed's paths use.
    #[schema(example = 1)]
    pub id: i64,
    pub name: String,
    pub theme: String,
    pub source: String,
    /// `pending` (announced; members still to come) or `handed_off` (members fixed).
    #[schema(example = "handed_off")]
    pub status: String,
    /// `sha256:` of the members (RFC 8785), fixed at handoff.
    pub members_hash: Option<String>,
    pub members: Vec<MemberView>,
    pub created_by: String,
    pub created_at: String,
    pub handed_off_at: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct MemberView {
    pub symbol: String,
    /// The instrument (`ins_…`).
    pub instrument: String,
    /// 0 to 1.
    pub relevance: f64,
    pub rationale: String,
}

fn universe_view(u: Universe, members: Vec<Member>) -> UniverseView {
    UniverseView {
        object: "thematic_universe",
        id: u.id,
        name: u.name,
        theme: u.theme,
        source: u.source,
        status: u.status.as_str().to_string(),
        members_hash: u.members_hash,
        members: members
            .into_iter()
            .map(|m| MemberView {
                relevance: m.relevance.parse().unwrap_or(0.0),
                symbol: m.symbol,
                instrument: m.instrument_id,
                rationale: m.rationale,
            })
            .collect(),
        created_by: u.created_by.label(),
        created_at: rfc3339(u.created_at),
        handed_off_at: u.handed_off_at.map(rfc3339),
    }
}

/// Creates a thematic universe as research hands it over: with its members (scored 0 to 1 for relevance,
/// each an instrument of the workspace), or announced without them (`pending`) for a handoff to follow.
///
/// Each member must be an instrument of the workspace, named once, with a relevance from 0 to 1; the SHA-256
/// of the members (`members_hash`) is sealed with the universe, and an audit event is recorded.
/// Universes belong to the workspace: its sandbox and production credentials see the same ones. Needs
/// `investment:run`; a universe holds no weights, and nothing is proposed or traded.
#[utoipa::path(
    post,
    path = "/api/v2/investment/themes/universes",
    request_body(content = UniverseRequest, example = json!({
        "name": "Quality compounders", "theme": "quality", "source": "Equity research, thematic desk",
        "members": [
            {"symbol": "MSFT", "relevance": 0.95, "rationale": "Recurring revenue, net cash"},
            {"symbol": "AAPL", "relevance": 0.9}, {"symbol": "JNJ", "relevance": 0.8}, {"symbol": "PG", "relevance": 0.7}
        ]
    })),
    responses(
        (status = 201, description = "Created (`handed_off` with members, else `pending`)", body = UniverseView,
         headers(("Location" = String, description = "The universe"))),
        (status = 422, description = "Bad input; a symbol the workspace does not hold is 409 `reference_not_found`")
    )
)]
pub async fn post_universe(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<UniverseRequest>,
) -> Result<Response, ApiError> {
    let u = themes::create_universe(&state, &ctx.caller(), ctx.tenant(), body).await?;
    let (u, members) = themes::load_universe(&state, ctx.tenant(), u.id).await?;
    Ok(created(Some(format!("/api/v2/investment/themes/universes/{}", u.id)), universe_view(u, members)))
}

/// Hands a pending universe's members off; they are fixed from then on (their hash is sealed with it).
///
/// Only a `pending` universe takes a handoff; one handed off already is 409, so its members are never
/// replaced. Members are checked as at creation (instruments of the workspace, relevance from 0 to 1), and
/// their hash is sealed with an audit event. Needs `investment:run`. No model portfolio is drawn by it.
#[utoipa::path(
    post,
    path = "/api/v2/investment/themes/universes/{universe}/handoff",
    params(("universe" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The universe's integer id", example = 1)),
    request_body(content = HandoffRequest, example = json!({
        "members": [{"symbol": "MSFT", "relevance": 0.95}, {"symbol": "AAPL", "relevance": 0.9}]
    })),
    responses(
        (status = 200, description = "Handed off", body = UniverseView),
        (status = 404, description = "No such universe in this workspace"),
        (status = 409, description = "Handed off already"),
        (status = 422, description = "Bad input")
    )
)]
pub async fn post_handoff(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(universe): ApiPath<i64>,
    ApiJson(body): ApiJson<HandoffRequest>,
) -> Result<Json<UniverseView>, ApiError> {
    let u = themes::hand_off(&state, &ctx.caller(), ctx.tenant(), universe, body).await?;
    let (u, members) = themes::load_universe(&state, ctx.tenant(), u.id).await?;
    Ok(Json(universe_view(u, members)))
}

/// One universe with its members.
///
/// The universe's seal is checked before it is shown; each member comes with its symbol, instrument,
/// relevance and rationale. Needs `investment:read`; universes are the workspace's, shared by its
/// environments. A read: nothing is changed.
#[utoipa::path(
    get,
    path = "/api/v2/investment/themes/universes/{universe}",
    params(("universe" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The universe's integer id", example = 1)),
    responses(
        (status = 200, description = "The universe", body = UniverseView),
        (status = 404, description = "No such universe in this workspace")
    )
)]
pub async fn get_universe(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(universe): ApiPath<i64>,
) -> Result<Json<UniverseView>, ApiError> {
    let (u, members) = themes::load_universe(&state, ctx.tenant(), universe).await?;
    Ok(Json(universe_view(u, members)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UniversesQuery {
    /// Universes per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Universes after this id (the previous page's `next_after_id`).
    #[param(minimum = 0)]
    pub after_id: Option<i64>,
}

/// The workspace's universes by id (without their members; read one for those).
///
/// Paged by integer id with `after_id`; each universe's seal is checked before it is shown. Needs
/// `investment:read`; universes are the workspace's, shared by its environments. A read: nothing is changed.
#[utoipa::path(
    get,
    path = "/api/v2/investment/themes/universes",
    params(UniversesQuery),
    responses((status = 200, description = "Universes", body = ListPage<UniverseView>))
)]
pub async fn get_universes(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UniversesQuery>,
) -> Result<Json<ListPage<UniverseView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let after = q.after_id.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("after_id", "must be 0 or more"));
    }
    let mut conn = state.store.read().await?;
    let rows = crate::tables::themes::list_universes(
        &mut conn,
        state.store.seal_key(),
        &ctx.tenant().workspace_id,
        after,
        limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, limit, |u| u.id.to_string());
    Ok(Json(ListPage {
        object: "list",
        data: page.data.into_iter().map(|u| universe_view(u, Vec::new())).collect(),
        has_more: page.has_more,
        next_after_id: page.next_after_id,
    }))
}

/// A model portfolio.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ModelPortfolioView {
    /// Always `model_portfolio`.
    pub object: &'static str,
    #[schema(example = "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub universe: i64,
    pub name: String,
    pub weighting: Weighting,
    pub limit: i64,
    pub benchmark_symbol: Option<String>,
    /// Members and weights in parts per million (they sum to exactly 1,000,000).
    pub holdings: Vec<ModelHolding>,
    /// `sha256:` of the content (universe and its members' hash, name, weighting, limit, benchmark,
    /// holdings; RFC 8785).
    pub content_hash: String,
    /// `approval_required` until an operator decides at the console: `approved` or `rejected`.
    pub state: ModelState,
    pub created_by: String,
    pub created_at: String,
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    pub decision_note: Option<String>,
}

fn model_view(m: ModelPortfolio) -> ModelPortfolioView {
    ModelPortfolioView {
        object: "model_portfolio",
        id: m.id,
        universe: m.universe_id,
        name: m.name,
        weighting: m.weighting,
        limit: m.limit,
        benchmark_symbol: m.benchmark_symbol,
        holdings: m.holdings,
        content_hash: m.content_hash,
        state: m.state,
        created_by: m.created_by.label(),
        created_at: rfc3339(m.created_at),
        decided_by: m.decided_by.as_ref().map(fiscus_domain::actor::Actor::label),
        decided_at: m.decided_at.map(rfc3339),
        decision_note: m.decision_note,
    }
}

/// Draws a draft model portfolio from a handed-off universe: its `limit` most relevant members, weighted by
/// relevance or equally, with the hash of its content. It is `approval_required`: nothing can use it until
/// an operator approves it at the console.
///
/// While research has not handed the universe's members off (`POST …/universes/{universe}/handoff`), the
/// answer is 409 `handoff_unavailable` with the universe's `state`. The seed lists 503 for this; a pending
/// handoff is a state of the caller's own universe that no retry changes, so Fiscus answers 409 (RFC 9110
/// §15.5.10) rather than a 5xx that clients and load balancers treat as the server failing.
#[utoipa::path(
    post,
    path = "/api/v2/investment/themes/universes/{universe}/model-portfolio",
    params(("universe" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The universe's integer id", example = 1)),
    request_body(content = Option<ModelPortfolioRequest>, description = "Optional, and every field is optional: no body or `{}` draws the 20 most relevant members, relevance-weighted",
        example = json!({"name": "Quality compounders, relevance-weighted", "limit": 20, "weighting": "relevance", "benchmark_symbol": "SPX"})),
    responses(
        (status = 201, description = "The draft, awaiting approval", body = ModelPortfolioView,
         headers(("Location" = String, description = "The model portfolio"))),
        (status = 404, description = "No such universe in this workspace"),
        (status = 422, description = "Bad input (limit outside 1 to 500, no member to weight); an unknown benchmark is 409 `reference_not_found`"),
        (status = 409, description = "The universe's research handoff is not available yet (`handoff_unavailable`, with the universe's `state`)")
    )
)]
pub async fn post_model_portfolio(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(universe): ApiPath<i64>,
    OptionalJson(body): OptionalJson<ModelPortfolioRequest>,
) -> Result<Response, ApiError> {
    let body = body.unwrap_or_default();
    let m = themes::create_model(&state, &ctx.caller(), ctx.tenant(), universe, body).await?;
    Ok(created(Some(format!("/api/v2/investment/model-portfolios/{}", m.id)), model_view(m)))
}

/// One model portfolio, its seal checked.
///
/// The holdings with weights in parts per million, `content_hash`, and `state`: `approval_required` until an
/// operator decides at `/console/model-portfolios`, then `approved` or `rejected` with who decided, when, and
/// the note. Needs `investment:read`; a model portfolio of the other environment is 404. A read: it approves
/// nothing.
#[utoipa::path(
    get,
    path = "/api/v2/investment/model-portfolios/{uid}",
    params(("uid" = String, Path, description = "The model portfolio (`mdp_…`)", example = "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The model portfolio", body = ModelPortfolioView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_model_portfolio(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ModelPortfolioView>, ApiError> {
    Ok(Json(model_view(themes::load_model(&state, ctx.tenant(), &uid).await?)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ModelPortfoliosQuery {
    /// Only those in this state.
    pub state: Option<ModelState>,
    /// Per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Older than this one (the previous page's `next_after_id`): newest first.
    #[param(pattern = "^mdp_[0-9A-HJKMNP-TV-Z]{26}$", example = "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub after_id: Option<String>,
}

/// The model portfolios of this workspace and environment, newest first.
///
/// `state` narrows the list to `approval_required`, `approved` or `rejected`; each seal is checked before it
/// is shown. Needs `investment:read`. A read: it approves, rejects or uses nothing.
#[utoipa::path(
    get,
    path = "/api/v2/investment/model-portfolios",
    params(ModelPortfoliosQuery),
    responses((status = 200, description = "Model portfolios", body = ListPage<ModelPortfolioView>))
)]
pub async fn get_model_portfolios(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ModelPortfoliosQuery>,
) -> Result<Json<ListPage<ModelPortfolioView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    fiscus_http::query::after_id(q.after_id.as_deref(), "mdp", "a model portfolio")?;
    let mut conn = state.store.read().await?;
    let rows = crate::tables::themes::list_models(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        q.state,
        q.after_id.as_deref(),
        limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, limit, |m| m.id.clone());
    Ok(Json(ListPage {
        object: "list",
        data: page.data.into_iter().map(model_view).collect(),
        has_more: page.has_more,
        next_after_id: page.next_after_id,
    }))
}
