//! Model portfolios at the console: the drafts awaiting a decision (with what each holds and the content
//! hash the decision covers), and the decided ones. Only an admin or an approver decides; the form names
//! the content hash it approves, and a draft whose hash changed since the page was shown is not decided.

use crate::rules::model_portfolio::{ModelDecision, ModelState};
use crate::tables::themes::ModelPortfolio;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_console::form::ConsoleForm;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::themes;
use fiscus_console::charts;
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, EnvQuery, escape, page};
use fiscus_console::queue::{Filter, Queue, Row};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_kernel::governed::Failure;

fn percent(ppm: i64) -> String {
    format!("{:.2} %", ppm as f64 / 10_000.0)
}

/// The approve and reject forms of a model portfolio awaiting a decision, for a person who may decide; each
/// names the content hash it covers.
fn decision_forms(op: &OperatorSession, m: &ModelPortfolio, environment: Environment) -> String {
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
    forms
}

/// Every model portfolio of the workspace, those awaiting a decision among them: filterable by words and state.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut rows = Vec::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let Ok(mut conn) = state.store.read().await else { return unavailable() };
        let Ok(models) =
            crate::tables::themes::list_models(&mut conn, state.store.seal_key(), &tenant, None, None, 500).await
        else {
            return unavailable();
        };
        for m in &models {
            let holdings = m
                .holdings
                .iter()
                .map(|h| format!("{} {}", escape(&h.symbol), percent(h.weight_ppm)))
                .collect::<Vec<_>>()
                .join(", ");
            let cells = vec![
                format!(
                    "<a href=\"/console/model-portfolios/{id}?environment={env}\"><code>{id}</code></a>",
                    id = escape(&m.id),
                    env = environment.as_str()
                ),
                environment.as_str().to_string(),
                escape(&m.name),
                m.universe_id.to_string(),
                m.weighting.as_str().to_string(),
                holdings,
                html::hash(&m.content_hash),
                html::state(m.state.as_str()),
                escape(&m.created_by.label()),
                op.time(m.created_at),
                decision_forms(&op, m, environment),
            ];
            let symbols: Vec<&str> = m.holdings.iter().map(|h| h.symbol.as_str()).collect();
            let created_by = m.created_by.label();
            let mut words = vec![m.id.as_str(), environment.as_str(), &m.name, m.weighting.as_str(), &created_by];
            words.extend(symbols);
            rows.push(Row::new(cells, m.state.as_str(), &words));
        }
    }
    let queue = Queue {
        id: "model-portfolios",
        caption: "Model portfolios",
        headers: &[
            "Model portfolio",
            "Environment",
            "Name",
            "Universe",
            "Weighting",
            "Holdings",
            "Content hash",
            "State",
            "Proposed by",
            "Created",
            "Decide",
        ],
        facet: ("State", &["approval_required", "approved", "rejected"]),
        empty: "No model portfolios yet: one is drawn from a thematic universe through the API.",
    };
    let body = format!(
        "<p class=\"muted\">A model portfolio drawn from a thematic universe is a draft: no rebalance can use it \
         until a person approves it here. Approving covers exactly the content hash shown; its page draws its \
         weights and each holding's share of its risk.</p>{}",
        queue.render("/console/model-portfolios", &filter, rows)
    );
    page("Model portfolios", op.nav(), &body)
}

/// Trading days of returns the risk picture uses: about a year.
const RISK_LOOKBACK: usize = 252;

/// One model portfolio as an approver would look at it: its weights and each holding's share of its risk
/// (drawn from the workspace's prices when every holding has them), with the decision it waits for.
pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let not_found =
        || html::error_page(StatusCode::NOT_FOUND, "Not found", "No such model portfolio in this workspace.");
    let Some(environment) = Environment::parse(&q.environment) else { return not_found() };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    let m = match themes::load_model(&state, &tenant, &id).await {
        Ok(m) => m,
        Err(Failure::NotFound) => return not_found(),
        Err(e) => return html::failure_page(e, "Unavailable", "No such model portfolio.", "reading a model portfolio"),
    };
    let weights: Vec<(String, f64)> =
        m.holdings.iter().map(|h| (h.symbol.clone(), h.weight_ppm as f64 / 1e6)).collect();
    let shown: Vec<(String, f64)> = weights.iter().map(|(s, w)| (s.clone(), w * 100.0)).collect();
    let weight_chart = charts::bars(&charts::Bars { title: "Weights", unit: "% of the portfolio", items: &shown });
    let risk = match crate::analytics::risk_contributions(&state, &op.workspace_id, &weights, RISK_LOOKBACK).await {
        Ok(Some(rc)) => {
            let shown: Vec<(String, f64)> = rc.into_iter().map(|(s, r)| (s, r * 100.0)).collect();
            charts::bars(&charts::Bars {
                title: "Risk contributions (share of volatility, last year of daily returns)",
                unit: "% of the portfolio's volatility",
                items: &shown,
            })
        }
        Ok(None) => "<p class=\"muted\" id=\"no-risk\">Risk contributions need a year of prices for every holding in \
                     this workspace; they are not all there.</p>"
            .to_string(),
        Err(e) => {
            tracing::warn!(error = ?e, "risk contributions of a model portfolio");
            "<p class=\"muted\" id=\"no-risk\">Risk contributions could not be computed from the stored prices.</p>"
                .to_string()
        }
    };
    let body = format!(
        "<dl><dt>Name</dt><dd>{name}</dd><dt>Environment</dt><dd>{env}</dd><dt>State</dt>\
         <dd><span data-state=\"{state}\">{state}</span></dd><dt>Weighting</dt><dd>{weighting}</dd>\
         <dt>Universe</dt><dd>{universe}</dd><dt>Proposed by</dt><dd>{by} at {at}</dd><dt>Content hash</dt><dd>{hash}</dd></dl>\
         <h2>Weights</h2>{weight_chart}<h2>Risk</h2>{risk}<h2>Decide</h2>{forms}",
        name = escape(&m.name),
        env = environment.as_str(),
        state = m.state.as_str(),
        weighting = m.weighting.as_str(),
        universe = m.universe_id,
        by = escape(&m.created_by.label()),
        at = op.time(m.created_at),
        hash = html::hash(&m.content_hash),
        forms = {
            let f = decision_forms(&op, &m, environment);
            if f.is_empty() { "<p>Nothing to decide.</p>".to_string() } else { f }
        },
    );
    page(&format!("Model portfolio {}", m.name), op.nav(), &body)
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
