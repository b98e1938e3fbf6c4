//! LQM promotions at the console: the requests awaiting a decision, with the control evidence each
//! carries (checkpoint, evaluation, evidence packet and publication hashes), and the promotions serving
//! now. Only an admin or an approver approves, denies or revokes; each form names the checkpoint hash it
//! covers, and a promotion of any other checkpoint is not decided.

use crate::rules::lqm::promotion::PromotionDecision;
use crate::tables::lqm::models::Model;
use crate::tables::lqm::supply_chain::Promotion;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_console::form::ConsoleForm;
use fiscus_domain::credentials::Environment;
use fiscus_domain::lqm::PromotionState;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::lqm::promotion;
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, escape, page};
use fiscus_console::queue::{Filter, Queue, Row};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

/// The queue's rows for promotions in one state of one environment, each with the forms `actions` name.
fn rows(
    op: &OperatorSession,
    environment: Environment,
    list: &[(Model, Promotion)],
    actions: &[(&str, &str, &str)],
    out: &mut Vec<Row>,
) {
    for (m, p) in list {
        let b = &p.record.body;
        let mut forms = String::new();
        if matches!(op.role, Role::Admin | Role::Approver) {
            for (decision, label, class) in actions {
                let _ = write!(
                    forms,
                    "<form class=\"inline\" method=\"post\" action=\"/console/lqm-promotions/{id}\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                     <input type=\"hidden\" name=\"checkpoint_hash\" value=\"{hash}\">\
                     <button type=\"submit\" class=\"{class}\" name=\"decision\" value=\"{decision}\">{label} {short}</button></form>",
                    id = escape(&p.record.id),
                    csrf = escape(&op.csrf_token),
                    env = environment.as_str(),
                    hash = escape(&b.checkpoint_hash),
                    short = escape(&b.checkpoint_hash[..b.checkpoint_hash.len().min(19)]),
                );
            }
        }
        let state = p.state.as_str();
        let cells = vec![
            format!("{}<br><code>{}</code>", escape(&m.body.name), escape(&m.id)),
            environment.as_str().to_string(),
            m.body.task_family.as_str().to_string(),
            format!("{}<br><code>{}</code>", html::hash(&b.checkpoint_hash), escape(&b.checkpoint_id)),
            format!(
                "evaluation {}<br>packet {}<br>supply chain {}",
                html::hash(&b.evaluation_hash),
                html::hash(&b.evidence_packet_hash),
                html::hash(&b.publication_head)
            ),
            escape(b.note.as_deref().unwrap_or("")),
            format!("{}<br>{}", escape(&p.record.created_by.label()), op.time(p.record.created_at)),
            html::state(state),
            forms,
        ];
        let words = [m.body.name.as_str(), &m.id, &p.record.id, &b.checkpoint_id, environment.as_str()];
        out.push(Row::new(cells, state, &words));
    }
}

/// Promotions awaiting a decision and those serving, in both environments: filterable by words and state.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut all = Vec::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let (Ok(pending), Ok(active)) = (
            promotion::in_state(&state, &tenant, PromotionState::Pending).await,
            promotion::in_state(&state, &tenant, PromotionState::Active).await,
        ) else {
            return unavailable();
        };
        rows(&op, environment, &pending, &[("approve", "Promote", "approve"), ("deny", "Deny", "deny")], &mut all);
        rows(&op, environment, &active, &[("revoke", "Revoke", "deny")], &mut all);
    }
    let queue = Queue {
        id: "promotions",
        caption: "Promotions awaiting a decision, and promoted models serving",
        headers: &[
            "Model",
            "Environment",
            "Task",
            "Checkpoint",
            "Control evidence",
            "Note",
            "Requested",
            "State",
            "Decide",
        ],
        facet: ("State", &[PromotionState::Pending.as_str(), PromotionState::Active.as_str()]),
        empty: "No promotion awaits a decision, and no promoted model serves.",
    };
    let body = format!(
        "<p class=\"muted\">A credential may request a promotion; only a person decides it. Promoting serves exactly \
         the checkpoint hash shown in the workspace's Quant Models catalogue and supersedes the model's earlier \
         checkpoint. Revoking stops it serving, and QLM versions pinning it refuse to run until rebound.</p>{}",
        queue.render("/console/lqm-promotions", &filter, all)
    );
    page("Model promotions", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    checkpoint_hash: String,
    decision: String,
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    let tenant = match op.deciding_in(&form.csrf, &form.environment) {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    let result = match (form.decision.as_str(), PromotionDecision::parse(&form.decision)) {
        (_, Some(d)) => promotion::decide(&state, &op.caller(), &tenant, &id, d, &form.checkpoint_hash).await,
        ("revoke", None) => promotion::revoke(&state, &op.caller(), &tenant, &id, &form.checkpoint_hash).await,
        _ => return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision."),
    };
    match result {
        Ok(_) => flash::redirect("/console/lqm-promotions", Notice::Decided, &id),
        Err(e) => html::failure_page(
            e,
            "Decision refused",
            "There is no such promotion in this workspace.",
            "a promotion decision",
        ),
    }
}
