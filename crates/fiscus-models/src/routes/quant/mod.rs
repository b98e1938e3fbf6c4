//! Quant & Models over HTTP: compute jobs (optimisations, simulations, backtests, model runs, tournaments,
//! research runs), each a persisted job with a sealed result, and the research snapshots that freeze runs.
//! The routes parse and render; `crate::compute` is the application layer they call.

pub mod compute;
pub mod models;
pub mod research;
pub mod tournaments;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;

/// Reads of jobs.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(compute::get_jobs))
        .routes(routes!(compute::get_job))
        .routes(routes!(models::get_models))
        .routes(routes!(models::get_model))
        .routes(routes!(models::get_statistical_models))
        .routes(routes!(models::get_model_runs))
        .routes(routes!(tournaments::get_tournaments))
        .routes(routes!(tournaments::get_tournament))
        .routes(routes!(research::get_snapshot))
        .routes(routes!(research::get_snapshots))
        .routes(routes!(research::get_projects))
}

/// Operations that create or change jobs (behind the idempotency layer).
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(compute::post_optimization))
        .routes(routes!(compute::post_simulation))
        .routes(routes!(compute::post_backtest))
        .routes(routes!(compute::post_cancel))
        .routes(routes!(models::post_model_run))
        .routes(routes!(tournaments::post_tournament))
        .routes(routes!(research::post_research_run))
        .routes(routes!(research::post_snapshot))
}
