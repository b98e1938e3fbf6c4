//! Workflows over HTTP: the library, the studio's versions and validation campaigns, and runs. The routes
//! parse and render; `crate::workflows` is the application layer they call.

pub mod library;
pub mod runs;
pub mod studio;
pub mod value;
pub mod views;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;

/// Reads.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(library::get_library))
        .routes(routes!(studio::get_version))
        .routes(routes!(studio::get_campaign))
        .routes(routes!(runs::get_runs))
        .routes(routes!(runs::get_run))
        .routes(routes!(value::get_proofs))
}

/// Operations that record (behind the idempotency layer).
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(library::post_install))
        .routes(routes!(studio::post_version))
        .routes(routes!(studio::post_validate))
        .routes(routes!(runs::post_run))
        .routes(routes!(runs::post_cancel))
        .routes(routes!(value::post_proof))
}
