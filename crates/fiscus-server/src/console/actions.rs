//! Pending approvals, an action's full envelope with its hash, checks, gates, approvals and history, and
//! the approve/deny decision.

use crate::http::form::ConsoleForm;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::approval::Decision;
use fiscus_domain::actions::state::ControlState;
use fiscus_domain::credentials::Environment;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::money::{Currency, format_minor};
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::areas::actions::decide::{self, DecideError, Decider, Seen};
use crate::areas::actions::service;
use crate::state::AppState;

fn tenant(op: &OperatorSession, environment: Environment) -> Tenant {
    Tenant { workspace_id: op.workspace_id.clone(), environment }
}

fn amount(minor: i64, currency: &str) -> String {
    match Currency::parse(currency) {
        Some(c) => format!("{} {}", format_minor(minor, c), c.code()),
        None => format!("{minor} (minor units) {}", escape(currency)),
    }
}

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer; try again.")
}

pub async fn dashboard(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let mut rows = String::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let Ok(pending) = fiscus_store::actions::list(
            &mut conn,
            &tenant(&op, env),
            Some(ControlState::PendingApproval.as_str()),
            None,
            100,
        )
        .await
        else {
            return unavailable();
        };
        for a in pending {
            let _ = write!(
                rows,
                "<tr><td><a href=\"/console/actions/{id}?environment={env}\">{id}</a></td><td>{env}</td><td>{kind}</td><td>{amount}</td>\
                 <td>{cp}</td><td>{tier}</td><td>{reference}</td></tr>",
                id = escape(&a.id),
                env = env.as_str(),
                kind = escape(&a.kind),
                amount = amount(a.amount_minor, &a.currency),
                cp = escape(&a.counterparty),
                tier = escape(&a.risk_tier),
                reference = escape(&a.reference),
            );
        }
    }
    let body = if rows.is_empty() {
        "<p id=\"no-pending\">Nothing awaits approval.</p>".to_string()
    } else {
        format!(
            "<table id=\"pending\"><tr><th>Action</th><th>Environment</th><th>Kind</th><th>Amount</th><th>Counterparty</th>\
             <th>Tier</th><th>Reference</th></tr>{rows}</table>"
        )
    };
    page("Pending approvals", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct EnvQuery {
    environment: String,
}

pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
    };
    let t = tenant(&op, env);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let row = match fiscus_store::actions::get(&mut conn, &t, &id).await {
        Ok(row) => row,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such action in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    let Ok(loaded) = service::load(&mut conn, &t, row).await else { return unavailable() };
    let Ok(view) = loaded.view(&state.settings, None) else { return unavailable() };
    let Ok(history) = service::history(&mut conn, &t, &id).await else { return unavailable() };
    let gates = gate_preview(&state, &t, &loaded).await;
    let envelope = serde_json::to_string_pretty(&view.envelope).unwrap_or_default();
    let mut checks = String::new();
    for c in &view.checks {
        let _ = write!(
            checks,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            escape(&c.check_key),
            c.version,
            c.status.as_str(),
            escape(&c.check_hash),
            escape(&c.source_reference)
        );
    }
    let mut decisions = String::new();
    for d in &loaded.decisions {
        let _ = write!(
            decisions,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            escape(&d.operator_id),
            escape(&d.decision),
            if d.invalidated_at.is_some() { "stale" } else { "standing" },
            escape(&d.evidence_hash),
            fiscus_domain::clock::rfc3339(d.created_at)
        );
    }
    let mut events = String::new();
    for h in &history {
        let _ = write!(
            events,
            "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td>{} {}</td></tr>",
            escape(&h.at),
            escape(&h.event),
            escape(h.from_state.as_deref().unwrap_or("—")),
            escape(&h.to_state),
            escape(&h.actor.kind),
            escape(&h.actor.id)
        );
    }
    let decide_form = if view.control_state == ControlState::PendingApproval
        || view.control_state == ControlState::Approved
    {
        format!(
            "<form method=\"post\" action=\"/console/actions/{id}/decision\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <input type=\"hidden\" name=\"envelope_hash\" value=\"{eh}\"><input type=\"hidden\" name=\"check_set_hash\" value=\"{ch}\">\
             {approve}<button class=\"deny\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            id = escape(&id),
            csrf = escape(&op.csrf_token),
            env = env.as_str(),
            eh = escape(&view.envelope_hash),
            ch = escape(&view.check_set_hash),
            approve = if view.control_state == ControlState::PendingApproval {
                "<button class=\"approve\" id=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>"
            } else {
                ""
            },
        )
    } else {
        String::new()
    };
    let body = format!(
        "<p>State: <strong id=\"control-state\">{state}</strong> · reconciliation: {recon} · approvals {cur}/{req}</p>\
         <p>Envelope hash: <code id=\"envelope-hash\">{eh}</code></p><p>Check set hash: <code>{ch}</code></p>\
         <h3>Envelope</h3><pre>{envelope}</pre>\
         <h3>Pre-trade checks (latest versions)</h3><table><tr><th>Check</th><th>Version</th><th>Status</th><th>Hash</th><th>Source</th></tr>{checks}</table>\
         <h3>Execution gates now</h3>{gates}\
         <h3>Decisions</h3><table><tr><th>Operator</th><th>Decision</th><th>Standing</th><th>Evidence hash</th><th>At</th></tr>{decisions}</table>\
         <h3>History</h3><table><tr><th>At</th><th>Event</th><th>State</th><th>Actor</th></tr>{events}</table>{decide_form}",
        state = view.control_state.as_str(),
        // The API's own names (snake_case), not Rust's.
        recon = serde_json::to_value(view.reconciliation_status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        cur = view.approvals.current,
        req = view.approvals.required,
        eh = escape(&view.envelope_hash),
        ch = escape(&view.check_set_hash),
        envelope = escape(&envelope),
    );
    page(&format!("Action {id}"), op.nav(), &body)
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
    decision: String,
    envelope_hash: String,
    check_set_hash: String,
}

pub async fn decision(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let (Some(env), Some(decision)) = (
        Environment::parse(&form.environment),
        match form.decision.as_str() {
            "approve" => Some(Decision::Approve),
            "deny" => Some(Decision::Deny),
            _ => None,
        },
    ) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let result = decide::decide(
        &state,
        &tenant(&op, env),
        &id,
        &Decider { operator_id: &op.operator_id, role: op.role },
        decision,
        &Seen { envelope_hash: &form.envelope_hash, check_set_hash: &form.check_set_hash },
    )
    .await;
    match result {
        Ok(_) => html::redirect(&format!("/console/actions/{id}?environment={}", env.as_str())),
        Err(DecideError::Refused(r)) => html::error_page(StatusCode::CONFLICT, "Decision refused", &r.to_string()),
        // Another workspace's action and an unknown one look the same: not found, never a hint.
        Err(DecideError::Failed(e)) if e.code == ErrorCode::NotFound => html::error_page(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such action in this workspace and environment.",
        ),
        Err(DecideError::Failed(_)) => html::error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Decision not recorded",
            "Nothing was decided. Try again from the action's page.",
        ),
    }
}

/// What the execution gates would say now (machine-delegated gates need the machine's signed evidence, so
/// they are evaluated only at execution).
async fn gate_preview(state: &AppState, t: &Tenant, loaded: &service::Loaded) -> String {
    use fiscus_domain::actions::gates::{GateFacts, evaluate};
    let (Ok(required), Ok(mode), Ok(tier), Ok(ws)) = (
        loaded.required_checks(),
        loaded.execution_mode(),
        service::risk_tier(&loaded.row),
        state.store.workspace(&t.workspace_id).await,
    ) else {
        return "<p class=\"error\">The gates could not be evaluated.</p>".into();
    };
    let failed = evaluate(&GateFacts {
        state: loaded.state,
        quorum_met_on_current: loaded.current_approvals() >= service::quorum(&state.settings, tier),
        required_checks: &required,
        latest_checks: &loaded.latest,
        environment: t.environment,
        production_access: ws.production_access(),
        connector_available: crate::workers::connector::connector_for(&loaded.row.connector, t.environment).is_some(),
        execution_mode: mode,
        delegation: Some(Ok(())),
        machine_authority: Some(Ok(())),
        budget: Some(Ok(())),
    });
    let mut out = String::from("<ul id=\"gates\">");
    if failed.is_empty() {
        out.push_str("<li>Every gate passes now.</li>");
    }
    for g in failed {
        let _ = write!(out, "<li><strong>{}</strong>: {}</li>", g.gate.as_str(), escape(&g.reason));
    }
    if mode == fiscus_domain::actions::envelope::ExecutionMode::MachineDelegated {
        out.push_str("<li class=\"muted\">Delegation, machine authority and budget are checked at execution.</li>");
    }
    out.push_str("</ul>");
    out
}
