//! Model portfolios at the console: the drafts awaiting a decision (with what each holds and the content
//! hash the decision covers), and the decided ones. Only an admin or an approver decides; the form names
//! the content hash it approves, and a draft whose hash changed since the page was shown is not decided.

use crate::http::form::ConsoleForm;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::approval::Role;
use fiscus_domain::credentials::Environment;
use fiscus_domain::investment::model_portfolio::{ModelDecision, ModelState};
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::governed::Failure;
use crate::investment::themes;
use crate::state::AppState;

fn percent(ppm: i64) -> String {
    format!("{:.2} %", ppm as f64 / 10_000.0)
}

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut sections = String::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let Ok(mut conn) = state.store.read().await else { return unavailable() };
        let Ok(models) =
            fiscus_store::themes::list_models(&mut conn, state.store.seal_key(), &tenant, None, None, 100).await
        else {
            return unavailable();
        };
        let mut rows = String::new();
        for m in &models {
            let holdings = m
                .holdings
                .iter()
                .map(|h| format!("{} {}", escape(&h.symbol), percent(h.weight_ppm)))
                .collect::<Vec<_>>()
                .join(", ");
            let mut forms = String::new();
            if m.state == ModelState::ApprovalRequired && matches!(op.role, Role::Admin | Role::Approver) {
                for (decision, label, class) in [("approve", "Approve", "approve"), ("reject", "Reject", "deny")] {
                    let _ = write!(
                        forms,
                        "<form class=\"inline\" method=\"post\" action=\"/console/model-portfolios/{id}\">\
                         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                         <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                         <input type=\"hidden\" name=\"content_hash\" value=\"{hash}\">\
                         <button type=\"submit\" class=\"{class}\" name=\"decision\" value=\"{decision}\">{label} {short}</button></form>",
                        id = escape(&m.id),
                        csrf = escape(&op.csrf_token),
                        env = environment.as_str(),
                        hash = escape(&m.content_hash),
                        short = escape(&m.content_hash[..m.content_hash.len().min(19)]),
                    );
                }
            }
            let _ = write!(
                rows,
                "<tr><td><code>{id}</code></td><td>{name}</td><td>{universe}</td><td>{weighting}</td><td>{holdings}</td>\
                 <td><code title=\"{hash}\">{short}</code></td><td class=\"status\" data-state=\"{state}\">{state}</td><td>{by}</td><td>{at}</td><td>{forms}</td></tr>",
                id = escape(&m.id),
                name = escape(&m.name),
                universe = m.universe_id,
                weighting = m.weighting.as_str(),
                hash = escape(&m.content_hash),
                short = escape(&m.content_hash[..m.content_hash.len().min(19)]),
                state = m.state.as_str(),
                by = escape(&m.created_by),
                at = op.time(m.created_at),
            );
        }
        let table = if models.is_empty() {
            "<p class=\"muted\">No model portfolios.</p>".to_string()
        } else {
            format!(
                "<table><tr><th>Model portfolio</th><th>Name</th><th>Universe</th><th>Weighting</th><th>Holdings</th>\
                 <th>Content hash</th><th>State</th><th>Proposed by</th><th>Created</th><th></th></tr>{rows}</table>"
            )
        };
        let _ = write!(sections, "<h2>{}</h2>{table}", environment.as_str());
    }
    let body = format!(
        "<p class=\"muted\">A model portfolio drawn from a thematic universe is a draft: no rebalance can use it \
         until a person approves it here. Approving covers exactly the content hash shown.</p>{sections}"
    );
    page("Model portfolios", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    content_hash: String,
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
    let (Some(environment), Some(decision)) = (
        Environment::parse(&form.environment),
        match form.decision.as_str() {
            "approve" => Some(ModelDecision::Approve),
            "reject" => Some(ModelDecision::Reject),
            _ => None,
        },
    ) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    let result = async {
        let current = themes::load_model(&state, &tenant, &id).await?;
        if current.content_hash != form.content_hash {
            return Err(Failure::refused(
                fiscus_domain::error_code::ErrorCode::Conflict,
                "the model portfolio is not the one shown (its content hash differs); nothing was decided",
            ));
        }
        themes::decide_model(&state, &op.caller(), &tenant, &id, decision, None).await
    }
    .await;
    match result {
        Ok(_) => flash::redirect("/console/model-portfolios", Notice::Decided, &id),
        Err(e) => html::failure_page(
            e,
            "Decision refused",
            "There is no such model portfolio in this workspace.",
            "a model portfolio decision",
        ),
    }
}
