//! LQM Builder over HTTP: registration, dataset contracts, retraining requests and their review, training,
//! evaluation, evidence packets, publication, promotion requests, the developer manifest, and QLMs. The routes parse and render; `crate::lqm` is the application
//! layer they call.

pub mod models;
pub mod qlms;
pub mod training;
pub mod views;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use fiscus_http::AppState;

/// Reads.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(models::get_models))
        .routes(routes!(models::get_model))
        .routes(routes!(models::get_manifest))
        .routes(routes!(models::get_promotions))
        .routes(routes!(training::get_contract))
        .routes(routes!(training::get_request))
        .routes(routes!(training::get_checkpoint))
        .routes(routes!(training::get_publication))
        .routes(routes!(training::get_publication_bundle))
        .routes(routes!(qlms::get_qlms))
        .routes(routes!(qlms::get_qlm))
        .routes(routes!(qlms::get_versions))
}

/// Operations that record (behind the idempotency layer).
pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(models::post_model))
        .routes(routes!(training::post_contract))
        .routes(routes!(training::post_request))
        .routes(routes!(training::post_decision))
        .routes(routes!(training::post_training))
        .routes(routes!(training::post_evaluation))
        .routes(routes!(training::post_evidence_packet))
        .routes(routes!(training::post_publication))
        .routes(routes!(training::post_promotion_request))
        .routes(routes!(qlms::post_qlm))
        .routes(routes!(qlms::post_invoke))
        .routes(routes!(qlms::post_evaluate))
}
