//! The human governance plane: the operators' console. Server-rendered pages with no build step and no
//! CDN. Only here can people approve or deny; only operator sessions are accepted (never bearer
//! credentials), and the API never accepts these sessions.
//!
//! It depends on the area crates whose records people decide on (investment, models, agents), on the
//! kernel's governed unit of change for every decision, and on the HTTP crate; no area depends on it.

mod actions;
mod agent_spaces;
mod audit;
mod calls;
mod charts;
mod clients;
mod delegations;
mod enroll;
mod flash;
mod form;
pub mod html;
mod instruments;
mod login;
mod lqm_promotions;
mod lqm_retraining;
mod model_portfolios;
mod passwords;
mod preferences;
mod production;
mod propose;
mod qlms;
mod queue;
mod rebalances;
pub mod session;
mod times;
mod webhooks;
mod workflow_reviews;
mod workflow_tools;

use axum::Router;
use axum::middleware::from_fn;
use axum::routing::{get, post};

use fiscus_http::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console", get(actions::dashboard))
        .route(html::STYLESHEET_PATH, get(html::stylesheet))
        .route(html::SCRIPT_PATH, get(html::script))
        .route("/console/preferences", get(preferences::show).post(preferences::save))
        .route("/console/login", get(login::login_page).post(login::login))
        .route("/console/login/workspace", post(login::pick))
        .route("/console/logout", post(login::logout))
        .route("/console/enroll", get(enroll::enroll_page).post(enroll::set_password))
        .route("/console/enroll/confirm", post(enroll::confirm))
        .route("/console/enroll/join", post(enroll::join))
        .route("/console/actions/new", get(propose::form).post(propose::propose))
        .route("/console/actions/{id}", get(actions::detail))
        .route("/console/audit", get(audit::trail))
        .route("/console/actions/{id}/decision", post(actions::decision))
        .route("/console/delegations", get(delegations::list))
        .route("/console/production", get(production::show).post(production::change))
        .route("/console/delegations/{id}", get(delegations::detail).post(delegations::decide))
        .route("/console/clients", get(clients::list))
        .route("/console/clients/{id}", get(clients::detail))
        .route("/console/clients/{id}/decision", post(clients::decide))
        .route("/console/webhooks", get(webhooks::list))
        .route("/console/webhooks/{id}", get(webhooks::log).post(webhooks::decide))
        .route("/console/instruments", get(instruments::list))
        .route("/console/instruments/{id}", get(instruments::detail))
        .route("/console/model-portfolios", get(model_portfolios::list))
        .route("/console/model-portfolios/{id}", get(model_portfolios::detail).post(model_portfolios::decide))
        .route("/console/lqm-promotions", get(lqm_promotions::list))
        .route("/console/lqm-promotions/{id}", post(lqm_promotions::decide))
        .route("/console/lqm-retraining", get(lqm_retraining::list))
        .route("/console/lqm-retraining/{id}", get(lqm_retraining::detail).post(lqm_retraining::decide))
        .route("/console/workflow-reviews", get(workflow_reviews::list))
        .route("/console/workflow-reviews/{id}", post(workflow_reviews::decide))
        .route("/console/calls", get(calls::list))
        .route("/console/calls/{id}", post(calls::waive))
        .route("/console/agent-spaces", get(agent_spaces::list))
        .route("/console/agent-spaces/{key}", post(agent_spaces::decide))
        .route("/console/workflow-tools", get(workflow_tools::list))
        .route("/console/workflow-tools/{id}", get(workflow_tools::detail).post(workflow_tools::decide))
        .route("/console/qlms", get(qlms::list))
        .route("/console/qlms/{id}", post(qlms::rebind))
        .route("/console/rebalance-proposals", get(rebalances::list))
        .route("/console/rebalance-proposals/{id}", post(rebalances::propose))
        .layer(from_fn(session::guard))
}

/// Appends an operator's console event (sign-in, enrollment, production access) to the workspace's audit
/// chain inside `tx`, through the application layer.
pub(crate) async fn audit(
    tx: &mut fiscus_store::WriteTx,
    workspace_id: &str,
    operator_id: &str,
    action: &str,
    details: serde_json::Value,
) -> Result<(), fiscus_store::StoreError> {
    let caller = fiscus_http::request_id::caller(fiscus_domain::actor::Actor::operator(operator_id));
    fiscus_kernel::governed::record::audit(
        tx,
        &caller,
        &fiscus_kernel::governed::record::AuditEntry {
            workspace_id,
            environment: None,
            action,
            subject: Some(operator_id),
            details,
            occurred_at: fiscus_domain::clock::now_micros(),
        },
    )
    .await
}
