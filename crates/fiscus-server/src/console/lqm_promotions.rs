//! LQM promotions at the console: the requests awaiting a decision, with the control evidence each
//! carries (checkpoint, evaluation, evidence packet and publication hashes), and the promotions serving
//! now. Only an admin or an approver approves, denies or revokes; each form names the checkpoint hash it
//! covers, and a promotion of any other checkpoint is not decided.

use crate::http::form::ConsoleForm;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::approval::Role;
use fiscus_domain::credentials::Environment;
use fiscus_domain::lqm::lifecycle::PromotionState;
use fiscus_domain::lqm::promotion::PromotionDecision;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::lqm::models::Model;
use fiscus_store::lqm::supply_chain::Promotion;
use serde::Deserialize;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::lqm::promotion;
use crate::state::AppState;

fn short(hash: &str) -> String {
    format!("<code title=\"{}\">{}</code>", escape(hash), escape(&hash[..hash.len().min(19)]))
}

fn rows(
    op: &OperatorSession,
    environment: Environment,
    list: &[(Model, Promotion)],
    actions: &[(&str, &str, &str)],
) -> String {
    let mut out = String::new();
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
        let _ = write!(
            out,
            "<tr><td>{name}<br><code>{model}</code></td><td>{family}</td><td>{checkpoint}<br><code>{ckp}</code></td>\
             <td>evaluation {evaluation}<br>packet {packet}<br>supply chain {head}</td><td>{note}</td>\
             <td>{by}<br>{at}</td><td class=\"status\" data-state=\"{state}\">{state}</td><td>{forms}</td></tr>",
            name = escape(&m.body.name),
            model = escape(&m.id),
            family = m.body.task_family.as_str(),
            checkpoint = short(&b.checkpoint_hash),
            ckp = escape(&b.checkpoint_id),
            evaluation = short(&b.evaluation_hash),
            packet = short(&b.evidence_packet_hash),
            head = short(&b.publication_head),
            note = escape(b.note.as_deref().unwrap_or("")),
            by = escape(&p.record.created_by),
            at = op.time(p.record.created_at),
            state = p.state.as_str(),
        );
    }
    out
}

fn table(body: String, empty: &str) -> String {
    if body.is_empty() {
        format!("<p class=\"muted\">{empty}</p>")
    } else {
        format!(
            "<table><tr><th>Model</th><th>Task</th><th>Checkpoint</th><th>Control evidence</th><th>Note</th>\
             <th>Requested</th><th>State</th><th></th></tr>{body}</table>"
        )
    }
}

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut sections = String::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let (Ok(pending), Ok(active)) = (
            promotion::in_state(&state, &tenant, PromotionState::Pending).await,
            promotion::in_state(&state, &tenant, PromotionState::Active).await,
        ) else {
            return unavailable();
        };
        let decide = [("approve", "Promote", "approve"), ("deny", "Deny", "deny")];
        let _ = write!(
            sections,
            "<h2>{env}: awaiting a decision</h2>{pending}<h2>{env}: serving in the Quant Models catalogue</h2>{active}",
            env = environment.as_str(),
            pending = table(rows(&op, environment, &pending, &decide), "No promotion awaits a decision."),
            active =
                table(rows(&op, environment, &active, &[("revoke", "Revoke", "deny")]), "No promoted model serves."),
        );
    }
    let body = format!(
        "<p class=\"muted\">A credential may request a promotion; only a person decides it. Promoting serves exactly \
         the checkpoint hash shown in the workspace's Quant Models catalogue and supersedes the model's earlier \
         checkpoint. Revoking stops it serving, and QLM versions pinning it refuse to run until rebound.</p>{sections}"
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
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    if !matches!(op.role, Role::Admin | Role::Approver) {
        return html::error_page(StatusCode::FORBIDDEN, "Decision refused", "An auditor does not decide.");
    }
    let Some(environment) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
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
