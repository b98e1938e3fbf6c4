//! Investment over HTTP: the portfolio book (portfolios and their tax lots), loss-harvest proposals,
//! portfolio risk and company lookups. The routes parse and render; the crate root is the application
//! layer they call.

pub mod book;
pub mod evidence;
pub mod governed_operations;
pub mod records;
pub mod risk;
pub mod themes;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;
use fiscus_http::problem::ApiError;
use fiscus_kernel::governed::Failure;

/// A failure of a read whose input is the query string: its field errors are `invalid_parameter`.
pub fn from_query(f: Failure) -> ApiError {
    match f {
        Failure::Invalid(errors) => errors
            .into_iter()
            .fold(ApiError::new(fiscus_domain::error_code::ErrorCode::InvalidParameter), |e, (field, message)| {
                e.field(field, message)
            }),
        other => other.into(),
    }
}

/// Reads.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(book::get_portfolios))
        .routes(routes!(book::get_tax_lots))
        .routes(routes!(risk::get_risk))
        .routes(routes!(risk::get_company))
        .routes(routes!(risk::get_comparisons))
        .routes(routes!(themes::get_universes))
        .routes(routes!(themes::get_universe))
        .routes(routes!(themes::get_model_portfolios))
        .routes(routes!(themes::get_model_portfolio))
        .routes(routes!(governed_operations::get_operation))
        .routes(routes!(evidence::get_risk_compliance_run))
        .routes(routes!(evidence::get_generative_market_runs))
        .routes(routes!(evidence::get_reports))
}

/// Operations that record (behind the idempotency layer).
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(book::post_tax_harvest))
        .routes(routes!(book::post_scenarios))
        .routes(routes!(book::post_construct))
        .routes(routes!(book::post_collateral_inventory))
        .routes(routes!(evidence::post_risk_compliance_run))
        .routes(routes!(evidence::post_generative_market_run))
        .routes(routes!(evidence::post_report))
        .routes(routes!(themes::post_universe))
        .routes(routes!(themes::post_handoff))
        .routes(routes!(themes::post_model_portfolio))
        .routes(routes!(governed_operations::post_operation))
        .routes(routes!(governed_operations::post_rebalance))
        .routes(routes!(governed_operations::post_order_action))
}
