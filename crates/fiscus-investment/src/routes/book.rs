//! `/investment/portfolios…`: the book's portfolios, their marked tax lots, and loss-harvest proposals.

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::{Deserialize, Serialize};

use super::records::{RecordView, view};
use crate::collateral::{self, CollateralRequest, InventoryOutput};
use crate::construct::{self, ConstructOutput, ConstructRequest};
use crate::scenarios::{self, ScenarioOutput, StressRequest};
use crate::tax::{self, HarvestOutput, TaxHarvestRequest, TaxLots};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ApiQuery};

/// A portfolio of the book.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PortfolioView {
    /// Always `portfolio`.
    pub object: &'static str,
    /// The integer id the ledger paths use.
    #[schema(example = 1)]
    pub id: i64,
    #[schema(example = "GROWTH")]
    pub code: String,
    pub name: String,
    #[schema(example = "USD")]
    pub base_currency: String,
    /// The symbol it is compared with, if any.
    pub benchmark_symbol: Option<String>,
    /// The portfolios dataset it was imported with.
    pub dataset: i64,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PortfoliosQuery {
    /// Portfolios per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// Portfolios after this id (the previous page's `next_after_id`).
    #[param(minimum = 0)]
    pub after_id: Option<i64>,
}

/// The workspace's portfolios, by id (imported with `fiscus import portfolios`).
///
/// Each portfolio with its code, name, base currency, benchmark symbol and importing dataset, paged by id.
/// Portfolios belong to the workspace, so its sandbox and production credentials see the same list. Needs
/// `investment:read`; a read that values nothing and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/investment/portfolios",
    params(PortfoliosQuery),
    responses((status = 200, description = "Portfolios", body = ListPage<PortfolioView>))
)]
pub async fn get_portfolios(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PortfoliosQuery>,
) -> Result<Json<ListPage<PortfolioView>>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    let after = q.after_id.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("after_id", "must be 0 or more"));
    }
    let mut conn = state.store.read().await?;
    let rows = fiscus_data_core::tables::book::list_portfolios(
        &mut conn,
        &ctx.tenant().workspace_id,
        after,
        i64::from(limit) + 1,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, limit, |p| p.id.to_string());
    Ok(Json(ListPage {
        object: "list",
        data: page
            .data
            .into_iter()
            .map(|p| PortfolioView {
                object: "portfolio",
                id: p.id,
                code: p.code,
                name: p.name,
                base_currency: p.base_currency.code().to_string(),
                benchmark_symbol: p.benchmark_symbol,
                dataset: p.dataset_number,
            })
            .collect(),
        has_more: page.has_more,
        next_after_id: page.next_after_id,
    }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaxLotsQuery {
    /// The valuation date (default: today, UTC): lots held on it, each at its newest observed price on or before it.
    #[param(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
}

/// The portfolio's open tax lots, each marked to its instrument's observed price on the valuation date:
/// open quantity, cost basis, market value, unrealised gain and holding term (the engine's lot rules).
///
/// The valuation date is `as_of`, or today (UTC) when absent. The lots are the book as it stood at the end
/// of that day: the imported ones and those this environment's settled orders opened on or before it, less
/// what sales settled on or before it closed (a lot sold later is shown whole; one bought later is absent). Each is
/// valued at its instrument's newest observed price on or before the date; `marks` shows each price with its
/// own date, dataset and `stale` (more than seven days old). A held instrument without an observed price, or
/// whose newest prices are synthetic, is 503 `market_data_unavailable`. Needs `investment:read`; nothing is
/// recorded, sold or harvested.
#[utoipa::path(
    get,
    path = "/api/v2/investment/portfolios/{portfolio}/tax-lots",
    params(
        ("portfolio" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The portfolio's integer id", example = 1),
        TaxLotsQuery
    ),
    responses(
        (status = 200, description = "The lots, marked", body = TaxLots),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 503, description = "An observed price a lot needs is missing (`market_data_unavailable`); nothing is substituted")
    )
)]
pub async fn get_tax_lots(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(portfolio): ApiPath<i64>,
    ApiQuery(q): ApiQuery<TaxLotsQuery>,
) -> Result<Json<TaxLots>, ApiError> {
    Ok(Json(tax::tax_lots(&state, ctx.tenant(), portfolio, q.as_of.as_deref()).await.map_err(super::from_query)?))
}

/// Proposes which lots to sell to realise losses: every open lot losing at least `min_loss_minor` at the
/// observed price on `as_of`, with its term, the tax it would offset at the given rates, and any purchase
/// inside the 30-day wash-sale window (another lot, or one planned) that would disallow the loss. Never
/// executes anything: the proposal is sealed and recorded; selling is a Financial Action.
///
/// The sale date is `as_of` (today, UTC, by default) and lots are marked as `GET …/tax-lots` marks them.
/// Candidates come largest loss first, each with its term and the tax effect at `short_term_rate` (default
/// 0.37) or `long_term_rate` (0.20); one with a wash-sale conflict is flagged with the date it clears and
/// left out of the totals. The proposal (`executable: false`) is recorded with its request, `content_hash` and
/// an audit event. Needs `investment:run`; nothing is sold and no Financial Action is created.
#[utoipa::path(
    post,
    path = "/api/v2/investment/portfolios/{portfolio}/tax-harvest",
    params(("portfolio" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The portfolio's integer id", example = 1)),
    request_body(content = TaxHarvestRequest, description = "Every field is optional: `{}` proposes with the defaults", example = json!({
        "as_of": "2022-12-28", "min_loss_minor": 50000, "short_term_rate": 0.37, "long_term_rate": 0.2,
        "planned_purchases": [{"symbol": "MSFT", "date": "2023-01-10"}]
    })),
    responses(
        (status = 201, description = "The proposal, sealed (never executable)", body = RecordView<HarvestOutput>),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input"),
        (status = 503, description = "An observed price a lot needs is missing (`market_data_unavailable`); nothing is substituted")
    )
)]
pub async fn post_tax_harvest(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(portfolio): ApiPath<i64>,
    ApiJson(req): ApiJson<TaxHarvestRequest>,
) -> Result<Response, ApiError> {
    let record = tax::harvest(&state, &ctx.caller(), ctx.tenant(), portfolio, req).await?;
    Ok(created(None, view::<HarvestOutput>("tax_harvest_proposal", record)?))
}

/// Stresses the portfolio's current holdings: `historical` replays a window of observed returns (or a named
/// crisis: `gfc_2008`, `euro_crisis_2011`, `covid_crash_2020`, `rate_shock_2022`) on today's holdings,
/// with the window's worst day and drawdown; `hypothetical` applies shocks by instrument, by sector or to
/// the market (through each holding's beta to the portfolio's benchmark over the past year). Recorded,
/// sealed; nothing trades.
///
/// Holdings are the lots held at the end of `as_of` (today, UTC, by default: every acquisition and sale settled
/// on or before it, nothing after), each at its newest observed price on or before it, in the base currency at observed FX; a historical window reads each holding's newest observed
/// prices dataset (a synthetic one is 422), and a market shock needs the portfolio's benchmark (422
/// otherwise). The run is recorded with its request, `content_hash` and an audit event. Needs
/// `investment:run`; nothing trades and the book is not changed.
#[utoipa::path(
    post,
    path = "/api/v2/investment/portfolios/{portfolio}/scenarios",
    params(("portfolio" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The portfolio's integer id", example = 1)),
    request_body(content = StressRequest, description = "Exactly one of `historical` and `hypothetical`", example = json!({
        "hypothetical": {"market": -0.2, "sectors": {"Energy": -0.35}, "instruments": {"AAPL": -0.25}}
    })),
    responses(
        (status = 201, description = "The scenario run, sealed", body = RecordView<ScenarioOutput>),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input, or too few observed prices in the window (`computation_refused`)"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_scenarios(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(portfolio): ApiPath<i64>,
    ApiJson(req): ApiJson<StressRequest>,
) -> Result<Response, ApiError> {
    let r = scenarios::run(&state, &ctx.caller(), ctx.tenant(), portfolio, req).await?;
    Ok(created(None, view::<ScenarioOutput>("scenario_run", r)?))
}

/// Proposes target weights for the portfolio from the engine's optimisers (minimum variance, maximum
/// Sharpe or equal risk contribution) over observed daily returns of its holdings or of named instruments,
/// with a cap per instrument and an optional turnover limit from today's weights, and the whole-unit orders
/// that would reach them. A proposal, sealed and recorded: it never trades.
///
/// Holdings are valued as `POST …/scenarios` values them; the estimates use the daily returns of the
/// `lookback_days` (default 1095) ending on the valuation date, at least 60 of them (422 otherwise). Targets
/// are in parts per million, and orders are whole units at observed marks in the base currency, cash left as
/// it is; `risk_parity` applies neither `max_weight` nor `max_turnover`. Recorded with its `content_hash` and
/// an audit event. Needs `investment:run`; nothing trades, and no Financial Action can be made from it.
#[utoipa::path(
    post,
    path = "/api/v2/investment/portfolios/{portfolio}/construct",
    params(("portfolio" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The portfolio's integer id", example = 1)),
    request_body(content = ConstructRequest, description = "Every field is optional: `{}` is minimum variance over the holdings", example = json!({
        "objective": "min_variance", "max_weight": 0.3, "lookback_days": 1095
    })),
    responses(
        (status = 201, description = "The proposal, sealed (never executable)", body = RecordView<ConstructOutput>),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 409, description = "The portfolio holds no open lots"),
        (status = 422, description = "Bad input, or the engine refused the problem (`computation_refused`)"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`)")
    )
)]
pub async fn post_construct(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(portfolio): ApiPath<i64>,
    ApiJson(req): ApiJson<ConstructRequest>,
) -> Result<Response, ApiError> {
    let r = construct::construct(&state, &ctx.caller(), ctx.tenant(), portfolio, req).await?;
    Ok(created(None, view::<ConstructOutput>("construction_proposal", r)?))
}

/// Values the portfolio's settled securities and positive cash from observed prices and FX rates, applies
/// the workspace's eligibility and haircut policy (its newest version, or the built-in default, version 0;
/// the snapshot names the version and the rules' hash), and seals the snapshot. Missing observed data is
/// 503: nothing is substituted.
///
/// The path takes the portfolio's integer id or its code. Securities are the lots held at the end of `as_of`
/// (today, UTC, by default: every acquisition and sale settled on or before it, nothing after), each at its
/// newest observed price on or before it (the line shows that price's date); cash is each positive balance
/// of the movements dated on or before it. Values convert at observed FX, then take the policy's eligibility and haircuts;
/// the policy is set with `fiscus admin collateral-policy set`, never by a credential. The snapshot is
/// recorded with its `content_hash` and an audit event. Needs `investment:run`; nothing is pledged, moved
/// or traded.
#[utoipa::path(
    post,
    path = "/api/v2/investment/portfolios/{portfolio}/collateral-inventory",
    params(("portfolio" = String, Path, pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description = "The portfolio: its integer id or its code", example = "GROWTH")),
    request_body(content = CollateralRequest, description = "Every field is optional", example = json!({"as_of": "2022-12-28"})),
    responses(
        (status = 201, description = "The sealed snapshot", body = RecordView<InventoryOutput>),
        (status = 404, description = "No such portfolio in this workspace"),
        (status = 422, description = "Bad input"),
        (status = 503, description = "An observed price or FX rate is missing (`market_data_unavailable`); synthetic data is never substituted")
    )
)]
pub async fn post_collateral_inventory(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(portfolio): ApiPath<String>,
    ApiJson(req): ApiJson<CollateralRequest>,
) -> Result<Response, ApiError> {
    let r = collateral::snapshot(&state, &ctx.caller(), ctx.tenant(), &portfolio, req).await?;
    Ok(created(None, view::<InventoryOutput>("collateral_inventory_snapshot", r)?))
}
