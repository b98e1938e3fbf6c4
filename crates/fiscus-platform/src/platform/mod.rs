//! Core platform: the workspace, infrastructure reads, AI credits, the audit head, and the operation
//! catalogue with its change ledger.

mod catalogue;
mod credits;
mod infrastructure;
mod trust;
mod workspace;

use fiscus_http::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(workspace::get_workspace))
        .routes(routes!(infrastructure::get_usage))
        .routes(routes!(infrastructure::get_regions))
        .routes(routes!(infrastructure::get_service_classes))
        .routes(routes!(infrastructure::get_posture))
        .routes(routes!(infrastructure::get_data_entitlements))
        .routes(routes!(credits::get_balance))
        .routes(routes!(trust::get_audit_head))
        .routes(routes!(catalogue::get_catalogue))
        .routes(routes!(catalogue::get_ledger))
}
