//! The agents area's console pages: workflow reviews and workflow tool grants, Agent Space decisions, and
//! client calls with their consent. Built with the console's kit (session, forms, page layout); the
//! composition mounts them under the console's session guard.

mod agent_spaces;
mod calls;
mod workflow_reviews;
mod workflow_tools;

use axum::Router;
use axum::routing::{get, post};
use fiscus_http::AppState;

/// The area's pages, unguarded: `fiscus_console::routes` puts the operator session guard over them.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console/workflow-reviews", get(workflow_reviews::list))
        .route("/console/workflow-reviews/{id}", post(workflow_reviews::decide))
        .route("/console/calls", get(calls::list))
        .route("/console/calls/{id}", post(calls::waive))
        .route("/console/agent-spaces", get(agent_spaces::list))
        .route("/console/agent-spaces/{key}", post(agent_spaces::decide))
        .route("/console/workflow-tools", get(workflow_tools::list))
        .route("/console/workflow-tools/{id}", get(workflow_tools::detail).post(workflow_tools::decide))
}
