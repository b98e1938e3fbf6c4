//! The human governance plane: the operators' console. Server-rendered pages with no build step and no
//! CDN. Only here can people approve or deny; only operator sessions are accepted (never bearer
//! credentials), and the API never accepts these sessions.
//!
//! Two things live here: the console's own pages (sign-in and enrollment, Financial Action approvals,
//! delegations, signed clients, webhooks, instruments, production access, the audit trail), and the kit every
//! console page is built with (`session`, `form`, `flash`, `html`, `queue`, `charts`, `times`). An area's own
//! decisions (model portfolios, rebalances, LQM promotions, workflow reviews, calls, …) are pages in that
//! area's crate (`fiscus_investment::console`, `fiscus_models::console`, `fiscus_agents::console`), built with
//! this kit: the console depends on no area, so an edit to an area rebuilds neither the console nor the
//! other areas. Every decision goes through the kernel's governed unit of change.

mod actions;
mod approval_policies;
mod approver_groups;
mod audit;
mod bank_accounts;
mod bank_entries;
mod bank_side;
mod batch;
mod batch_filter;
pub mod charts;
mod clients;
mod decision;
mod delegations;
mod enroll;
pub mod flash;
pub mod form;
pub mod html;
mod instruments;
mod login;
mod passwords;
pub mod pending;
mod preferences;
mod production;
mod propose;
pub mod queue;
pub mod session;
mod step_up;
pub mod times;
pub mod totp;
mod webhooks;

use axum::Router;
use axum::middleware::from_fn;
use axum::routing::{get, post};

use fiscus_http::AppState;

/// Every console page behind the operator session guard: the console's own and `area_pages`, the pages the
/// areas hold (merged by the composition), so no page can be mounted without the guard.
pub fn routes(area_pages: Router<AppState>) -> Router<AppState> {
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
        .route("/console/actions/{id}/evidence-bundle", get(actions::evidence_bundle))
        .route("/console/audit", get(audit::trail))
        .route("/console/actions/{id}/decision", post(decision::decision))
        .route("/console/approvals/batch", get(batch::show).post(batch::decide))
        .route("/console/approvals/batch/{id}", get(batch::result))
        .route("/console/delegations", get(delegations::list))
        .route("/console/production", get(production::show).post(production::change))
        .route("/console/delegations/{id}", get(delegations::detail).post(delegations::decide))
        .route("/console/bank-accounts", get(bank_accounts::list))
        .route("/console/bank-accounts/{id}", get(bank_accounts::detail))
        .route("/console/bank-accounts/{id}/decision", post(bank_accounts::decide))
        .route("/console/approval-policies", get(approval_policies::show).post(approval_policies::propose))
        .route("/console/approval-policies/{id}/decision", post(approval_policies::decide))
        .route("/console/approver-groups", get(approver_groups::groups).post(approver_groups::create_group))
        .route("/console/approver-groups/{id}/members", post(approver_groups::change_member))
        .route("/console/bank-entries", get(bank_entries::list))
        .route("/console/payment-files", get(bank_side::files))
        .route("/console/payment-files/{id}/download", get(bank_side::download))
        .route("/console/bank-messages", get(bank_side::messages))
        .route("/console/bank-entries/{id}/resolution", post(bank_entries::resolve))
        .route("/console/clients", get(clients::list))
        .route("/console/clients/{id}", get(clients::detail))
        .route("/console/clients/{id}/decision", post(clients::decide))
        .route("/console/webhooks", get(webhooks::list))
        .route("/console/webhooks/{id}", get(webhooks::log).post(webhooks::decide))
        .route("/console/instruments", get(instruments::list))
        .route("/console/instruments/{id}", get(instruments::detail))
        .merge(area_pages)
        .layer(from_fn(session::guard))
}

/// Appends an operator's console event (sign-in, enrollment, production access) to the workspace's audit
/// chain inside `tx`, through the application layer.
pub(crate) async fn audit(
    tx: &mut fiscus_store::WriteTx,
    workspace_id: &str,
    operator_id: &str,
    action: fiscus_domain::audit_action::Change,
    details: serde_json::Value,
) -> Result<(), fiscus_store::StoreError> {
    let caller = fiscus_http::request_id::caller(fiscus_domain::actor::Actor::operator(operator_id));
    fiscus_kernel::governed::record::audit(
        tx,
        &caller,
        &fiscus_kernel::governed::record::AuditEntry {
            workspace_id,
            environment: None,
            action: action.into(),
            subject: Some(operator_id),
            details,
            occurred_at: fiscus_domain::clock::now_micros(),
        },
    )
    .await
}
