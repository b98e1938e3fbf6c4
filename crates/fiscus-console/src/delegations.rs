//! Delegations at the console: operators activate drafts, suspend or revoke. A credential can do none of it.

use crate::form::ConsoleForm;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_actions::rules::delegation::{DelegationMove, Terms};
use fiscus_actions::tables::delegations::Delegation;
use fiscus_domain::clock::{now_micros, parse_rfc3339, utc_month};
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::format_for_people;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use super::charts;
use super::flash::{self, Notice};
use super::html::{self, EnvQuery, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_kernel::governed::Failure;

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

/// The forms for the moves the delegation's status allows.
fn moves(op: &OperatorSession, d: &Delegation) -> String {
    let mut forms = String::new();
    for (mv, label) in [("activate", "Activate"), ("suspend", "Suspend"), ("revoke", "Revoke")] {
        if DelegationMove::parse(mv).and_then(|m| m.apply(d.status)).is_some() {
            let _ = write!(
                forms,
                "<form class=\"inline\" method=\"post\" action=\"/console/delegations/{id}\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                 <input type=\"hidden\" name=\"terms_hash\" value=\"{th}\"><button type=\"submit\" name=\"move\" value=\"{mv}\">{label}</button></form>",
                id = escape(&d.id),
                csrf = escape(&op.csrf_token),
                env = d.environment.as_str(),
                th = escape(&d.terms_hash),
            );
        }
    }
    forms
}

fn budgets(t: &Terms) -> String {
    let c = t.currency;
    format!(
        "{} / {} / {}",
        format_for_people(t.per_action, c),
        format_for_people(t.daily, c),
        format_for_people(t.monthly, c)
    )
}

/// Every delegation of the workspace, drafts first among equals: filterable by words and status.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let mut rows = Vec::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
        let Ok(delegations) =
            fiscus_actions::tables::delegations::list_delegations(&mut conn, state.store.seal_key(), &tenant).await
        else {
            return unavailable();
        };
        for d in delegations {
            let t = &d.terms;
            let cells = vec![
                format!(
                    "<a href=\"/console/delegations/{id}?environment={env}\">{id}</a>",
                    id = escape(&d.id),
                    env = env.as_str()
                ),
                env.as_str().to_string(),
                escape(&d.identity_id),
                format!("{} {} → {}", t.action.as_str(), escape(&t.connector), escape(&t.counterparty)),
                budgets(t),
                html::state(d.status.as_str()),
                moves(&op, &d),
            ];
            let words = [d.id.as_str(), env.as_str(), &d.identity_id, t.action.as_str(), &t.connector, &t.counterparty];
            rows.push(Row::new(cells, d.status.as_str(), &words));
        }
    }
    let queue = Queue {
        id: "delegations",
        caption: "Delegations",
        headers: &[
            "Delegation",
            "Environment",
            "Identity",
            "Scope",
            "Budgets (action / day / month)",
            "Status",
            "Decide",
        ],
        facet: ("Status", &["draft", "active", "suspended", "revoked"]),
        empty: "No delegation has been requested in this workspace.",
    };
    page("Delegations", op.nav(), &queue.render("/console/delegations", &filter, rows))
}

/// One delegation: its sealed terms, its budget use over this UTC month against the monthly budget, and the
/// moves its status allows.
pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let not_found = || html::error_page(StatusCode::NOT_FOUND, "Not found", "No such delegation in this workspace.");
    let Some(env) = Environment::parse(&q.environment) else { return not_found() };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let d = match fiscus_actions::tables::delegations::get_delegation(&mut conn, state.store.seal_key(), &tenant, &id)
        .await
    {
        Ok(d) => d,
        Err(fiscus_store::StoreError::NotFound) => return not_found(),
        Err(_) => return unavailable(),
    };
    let now = now_micros();
    let (month, _) = utc_month(now);
    let month_start = parse_rfc3339(&format!("{month}-01T00:00:00Z")).unwrap_or(now);
    let Ok(days) = fiscus_actions::tables::delegations::daily_use(&mut conn, &op.workspace_id, &d.id, &month).await
    else {
        return unavailable();
    };
    let t = &d.terms;
    let scale = 10f64.powi(i32::from(t.currency.exponent()));
    // Cumulative use at the end of each day with any, starting from nothing on the 1st.
    let mut points = vec![(month_start, 0.0)];
    let mut total = 0i64;
    for (day, amount) in &days {
        total += amount;
        if let Some(at) = parse_rfc3339(&format!("{day}T23:59:59Z")) {
            points.push((at.min(now), total as f64 / scale));
        }
    }
    let used = format_for_people(total, t.currency);
    let chart = charts::time_line(&charts::TimeLine {
        title: &format!("Budget used in {month}"),
        y_label: &format!("{} used this month", t.currency.code()),
        points: &points,
        limit: Some(("monthly budget", t.monthly as f64 / scale)),
    });
    let body = format!(
        "<dl><dt>Status</dt><dd><span id=\"delegation-status\" data-state=\"{status}\">{status}</span></dd>\
         <dt>Environment</dt><dd>{env}</dd><dt>Identity</dt><dd><code>{identity}</code></dd>\
         <dt>Scope</dt><dd>{kind} via {connector} to {cp}, tier {tier}</dd>\
         <dt>Budgets (action / day / month)</dt><dd>{budgets}</dd><dt>Used this month</dt><dd id=\"used\">{used}</dd>\
         <dt>Expires</dt><dd>{expires}</dd><dt>Terms hash</dt><dd>{hash}</dd></dl>\
         <h2>Budget use this month</h2>{chart}<h2>Decide</h2><p>{moves}</p>",
        status = d.status.as_str(),
        env = env.as_str(),
        identity = escape(&d.identity_id),
        kind = t.action.as_str(),
        connector = escape(&t.connector),
        cp = escape(&t.counterparty),
        tier = t.risk_tier.as_str(),
        budgets = budgets(t),
        expires = op.time(t.expires_at),
        hash = html::hash(&d.terms_hash),
        moves = {
            let m = moves(&op, &d);
            if m.is_empty() { "Nothing to decide: the delegation is revoked.".to_string() } else { m }
        },
    );
    page(&format!("Delegation {}", d.id), op.nav(), &body)
}

#[derive(Deserialize)]
pub struct MoveForm {
    csrf: String,
    environment: String,
    terms_hash: String,
    #[serde(rename = "move")]
    mv: String,
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<MoveForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let (Some(env), Some(mv)) = (Environment::parse(&form.environment), DelegationMove::parse(&form.mv)) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        fiscus_actions::steps::delegations::decide(&mut tx, &tenant, &op.caller(), op.role, &id, mv, &form.terms_hash)
            .await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/delegations", Notice::Decided, &id),
        Err(Failure::Refused { detail, .. }) => html::error_page(StatusCode::CONFLICT, "Decision refused", &detail),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::CONFLICT, "Decision refused", &r.to_string()),
        Err(Failure::NotFound) => html::error_page(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such delegation in this workspace and environment.",
        ),
        Err(e) => {
            tracing::warn!(error = ?e, "a delegation decision was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was decided. Try again.")
        }
    }
}
