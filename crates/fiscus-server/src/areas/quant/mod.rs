//! Quant & Models over HTTP: compute jobs (optimisations, simulations, backtests), each a
//! persisted job with a sealed result. The routes parse and render; `crate::compute` is the application
//! layer they call.

pub mod compute;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

/// Reads of jobs.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(compute::get_jobs)).routes(routes!(compute::get_job))
}

/// Operations that create or change jobs (behind the idempotency layer).
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(compute::post_optimization))
        .routes(routes!(compute::post_simulation))
        .routes(routes!(compute::post_backtest))
        .routes(routes!(compute::post_cancel))
}
