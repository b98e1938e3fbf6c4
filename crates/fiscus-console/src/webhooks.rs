//! Webhook endpoints at the console: every endpoint of the workspace, and the production ones awaiting an
//! admin's approval before anything is delivered to them.

use crate::form::ConsoleForm;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::tables::webhook_deliveries::DeliveryState;
use fiscus_kernel::tables::webhooks::EndpointStatus;
use serde::Deserialize;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_kernel::governed::{self, Failure};

/// Every webhook endpoint of the workspace, production ones awaiting an admin's approval among them:
/// filterable by words and status.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else {
        return html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    };
    let Ok(endpoints) =
        fiscus_kernel::tables::webhooks::list_workspace(&mut conn, state.store.seal_key(), &op.workspace_id).await
    else {
        return html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    };
    let mut rows = Vec::with_capacity(endpoints.len());
    for e in &endpoints {
        let mut forms = String::new();
        if e.status == EndpointStatus::PendingApproval && op.role == Role::Admin {
            for (decision, label, class) in [("approve", "Approve deliveries", "approve"), ("refuse", "Refuse", "deny")]
            {
                let _ = write!(
                    forms,
                    "<form class=\"inline\" method=\"post\" action=\"/console/webhooks/{id}\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                     <button type=\"submit\" class=\"{class}\" name=\"decision\" value=\"{decision}\">{label}</button></form>",
                    id = escape(&e.id),
                    csrf = escape(&op.csrf_token),
                    env = e.environment.as_str(),
                );
            }
        }
        let status = e.status.as_str();
        let cells = vec![
            format!("<a href=\"/console/webhooks/{id}\"><code>{id}</code></a>", id = escape(&e.id)),
            e.environment.as_str().to_string(),
            format!("<code>{}</code>", escape(&e.url)),
            escape(&e.event_types.join(", ")),
            escape(&e.application_id),
            html::state(status),
            op.time(e.created_at),
            forms,
        ];
        let types = e.event_types.join(" ");
        let words = [e.id.as_str(), e.environment.as_str(), &e.url, &types, &e.application_id];
        rows.push(Row::new(cells, status, &words));
    }
    let queue = Queue {
        id: "webhooks",
        caption: "Webhook endpoints",
        headers: &["Endpoint", "Environment", "URL", "Events", "Application", "Status", "Registered", "Decide"],
        facet: ("Status", &["pending_approval", "active", "disabled", "revoked"]),
        empty: "No webhook endpoints yet. Applications register them with POST /api/v2/agent-execution/webhooks; \
                production ones wait here for an admin's approval.",
    };
    let body = format!(
        "<p class=\"muted\">A production endpoint receives nothing until an admin approves it. Every delivery is \
         screened again against private and metadata addresses. Each endpoint's page draws its delivery latency \
         and failures.</p>{}",
        queue.render("/console/webhooks", &filter, rows)
    );
    page("Webhook endpoints", op.nav(), &body)
}

/// One endpoint's delivery log: deliveries by state, and every attempt (status or error, latency, when the
/// next attempt is due), newest first.
pub async fn log(State(state): State<AppState>, op: OperatorSession, Path(id): Path<String>) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(endpoints) =
        fiscus_kernel::tables::webhooks::list_workspace(&mut conn, state.store.seal_key(), &op.workspace_id).await
    else {
        return unavailable();
    };
    // Only this workspace's endpoints exist here.
    let Some(endpoint) = endpoints.into_iter().find(|e| e.id == id) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "No such webhook endpoint in this workspace.");
    };
    let deliveries = fiscus_kernel::tables::webhook_deliveries::counts(&mut conn, &op.workspace_id, &endpoint.id).await;
    let attempts = fiscus_kernel::tables::webhook_deliveries::log(&mut conn, &op.workspace_id, &endpoint.id, 200).await;
    let (Ok(deliveries), Ok(attempts)) = (deliveries, attempts) else { return unavailable() };
    let count = |state: DeliveryState| deliveries.get(&state).copied().unwrap_or(0);
    let mut rows = String::new();
    for a in &attempts {
        let outcome = match (a.status, &a.error) {
            (Some(s), None) => format!("{s}"),
            (Some(s), Some(e)) => format!("{s} · {}", escape(e)),
            (None, Some(e)) => escape(e),
            (None, None) => String::from("–"),
        };
        let _ = write!(
            rows,
            "<tr><td>{at}</td><td><code>{event}</code></td><td>{kind}</td><td>{n}</td><td class=\"status\" data-state=\"{outcome}\">{outcome}</td>\
             <td>{latency:.1} ms</td><td>{next}</td></tr>",
            at = op.time(a.created_at),
            event = escape(&a.event_id),
            kind = escape(&a.event_type),
            n = a.attempt,
            latency = a.latency_micros as f64 / 1000.0,
            next = a.next_attempt_at.map(|at| op.time(at)).unwrap_or_else(|| String::from("–")),
        );
    }
    let table = if attempts.is_empty() {
        "<p class=\"muted\">No delivery attempts yet.</p>".to_string()
    } else {
        format!(
            "<table><tr><th>Attempted</th><th>Event</th><th>Type</th><th>Attempt</th><th>Answer</th><th>Latency</th>\
             <th>Next attempt</th></tr>{rows}</table>"
        )
    };
    // Oldest first for the picture: each attempt's latency, failures included (they are what to look at).
    let latency: Vec<(i64, f64)> =
        attempts.iter().rev().map(|a| (a.created_at, a.latency_micros as f64 / 1000.0)).collect();
    let latency = super::charts::time_line(&super::charts::TimeLine {
        title: "Delivery latency",
        y_label: "ms per attempt",
        points: &latency,
        limit: None,
    });
    let failed_attempts = attempts.iter().filter(|a| !a.status.is_some_and(|s| (200..300).contains(&s))).count();
    let outcomes: Vec<(String, f64)> = [
        ("delivered", count(DeliveryState::Succeeded)),
        ("pending", count(DeliveryState::Pending)),
        ("failed", count(DeliveryState::Failed)),
        ("abandoned", count(DeliveryState::Abandoned)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v as f64))
    .collect();
    let outcomes = super::charts::bars(&super::charts::Bars {
        title: "Deliveries by outcome",
        unit: "deliveries",
        items: &outcomes,
    });
    let body = format!(
        "<p><code>{url}</code> · {env} · <span class=\"status\" data-state=\"{status}\">{status}</span>{reason}</p>\
         <p>Deliveries: {pending} pending · {succeeded} delivered · {failed} failed · {abandoned} abandoned; \
         {failed_attempts} of the last {shown} attempts did not get a 2xx answer.</p>\
         <h2>Latency and failures</h2>{latency}{outcomes}<h2>Attempts</h2>{table}",
        shown = attempts.len(),
        url = escape(&endpoint.url),
        env = endpoint.environment.as_str(),
        status = endpoint.status.as_str(),
        reason = endpoint.status_reason.as_deref().map(|r| format!(" ({})", escape(r))).unwrap_or_default(),
        pending = count(DeliveryState::Pending),
        succeeded = count(DeliveryState::Succeeded),
        failed = count(DeliveryState::Failed),
        abandoned = count(DeliveryState::Abandoned),
    );
    page(&format!("Deliveries to {}", endpoint.id), op.nav(), &body)
}

#[derive(Deserialize)]
pub struct DecisionForm {
    csrf: String,
    environment: String,
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
    let (Some(env), Some(approve)) = (
        Environment::parse(&form.environment),
        match form.decision.as_str() {
            "approve" => Some(true),
            "refuse" => Some(false),
            _ => None,
        },
    ) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        governed::webhooks::decide(&mut tx, &tenant, &op.caller(), op.role, &id, approve).await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/webhooks", Notice::Decided, &id),
        Err(Failure::Refused { detail, .. }) => html::error_page(StatusCode::CONFLICT, "Decision refused", &detail),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::FORBIDDEN, "Decision refused", &r.to_string()),
        Err(Failure::NotFound) => {
            html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such endpoint in this workspace.")
        }
        Err(e) => {
            tracing::warn!(error = ?e, "a webhook endpoint decision was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was decided. Try again.")
        }
    }
}
