//! The models area's console pages: LQM promotions and retraining decisions, and rebinding a QLM to a
//! promoted model. Built with the console's kit (session, forms, page layout); the composition mounts them
//! under the console's session guard.

mod lqm_promotions;
mod lqm_retraining;
mod qlms;

use axum::Router;
use axum::routing::{get, post};
use fiscus_http::AppState;

/// The area's pages, unguarded: `fiscus_console::routes` puts the operator session guard over them.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console/lqm-promotions", get(lqm_promotions::list))
        .route("/console/lqm-promotions/{id}", post(lqm_promotions::decide))
        .route("/console/lqm-retraining", get(lqm_retraining::list))
        .route("/console/lqm-retraining/{id}", get(lqm_retraining::detail).post(lqm_retraining::decide))
        .route("/console/qlms", get(qlms::list))
        .route("/console/qlms/{id}", post(qlms::rebind))
}
