//! The investment area's console pages: model portfolio drafts people decide on, and rebalance proposals an
//! admin or approver turns into a Financial Action. Built with the console's kit (session, forms, page
//! layout); the composition mounts them under the console's session guard.

mod model_portfolios;
mod rebalances;

use axum::Router;
use axum::routing::{get, post};
use fiscus_http::AppState;

/// The area's pages, unguarded: `fiscus_console::routes` puts the operator session guard over them.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console/model-portfolios", get(model_portfolios::list))
        .route("/console/model-portfolios/{id}", get(model_portfolios::detail).post(model_portfolios::decide))
        .route("/console/rebalance-proposals", get(rebalances::list))
        .route("/console/rebalance-proposals/{id}", post(rebalances::propose))
}
