//! Quant & Models over HTTP: compute jobs (optimisations, simulations, backtests, model runs, tournaments,
//! research runs), each a persisted job with a sealed result, and the research snapshots that freeze runs.
//! The routes parse and render; `crate::compute` is the application layer they call.

pub mod compute;
pub mod models;
pub mod research;
pub mod tournaments;

use axum::extract::DefaultBodyLimit;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::body_limit::LargeBody;

/// The largest body a computation with inline inputs takes: 16 MiB, a panel of 1,000 assets × 300 periods
/// of returns as JSON (about 6 MB) with room to spare. Counted as it is read (413 past it, with or without
/// a `Content-Length`) and parsed off the async runtime (`fiscus_http::json`).
pub const INLINE_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// The computations' body limit, for the body limit layer (`fiscus_http::body_limit`).
pub const LARGE_BODY: LargeBody = LargeBody { path: takes_inline_inputs, limit: INLINE_BODY_LIMIT };

/// The operations whose bodies carry inline series or panels.
fn takes_inline_inputs(path: &str) -> bool {
    match path.strip_prefix("/api/v2/quant/") {
        Some(
            "compute/optimizations"
            | "compute/simulations"
            | "compute/backtests"
            | "model-tournaments"
            | "research/runs",
        ) => true,
        Some(rest) => rest
            .strip_prefix("models/")
            .and_then(|r| r.strip_suffix("/run"))
            .is_some_and(|key| !key.is_empty() && !key.contains('/')),
        None => false,
    }
}

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
    let inline_inputs = OpenApiRouter::new()
        .routes(routes!(compute::post_optimization))
        .routes(routes!(compute::post_simulation))
        .routes(routes!(compute::post_backtest))
        .routes(routes!(models::post_model_run))
        .routes(routes!(tournaments::post_tournament))
        .routes(routes!(research::post_research_run))
        .route_layer(DefaultBodyLimit::max(INLINE_BODY_LIMIT));
    OpenApiRouter::new()
        .merge(inline_inputs)
        .routes(routes!(compute::post_cancel))
        .routes(routes!(research::post_snapshot))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_computations_take_the_larger_body() {
        for path in
            ["/api/v2/quant/compute/optimizations", "/api/v2/quant/models/arima/run", "/api/v2/quant/research/runs"]
        {
            assert!(super::takes_inline_inputs(path), "{path}");
        }
        for path in [
            "/api/v2/quant/compute/jobs/cjb_1/cancel",
            "/api/v2/quant/models//run",
            "/api/v2/quant/models/a/b/run",
            "/api/v2/actions",
        ] {
            assert!(!super::takes_inline_inputs(path), "{path}");
        }
    }
}
