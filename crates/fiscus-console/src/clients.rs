//! Signed execution clients at the console: admins grant a draft its allowlist, change it, or revoke the
//! client. This is the only place a grant changes; the API and the CLI cannot.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::clock::{micros_of, now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::execution_client::{ClientStatus, Grant, grantable_operations, key_fingerprint};
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::execution_clients::{ClientDecision, Standing};
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, EnvQuery, escape, page};
use super::queue::{Filter, Queue, Row};
use super::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_http::form::{RawBody, pairs};
use fiscus_kernel::governed::{self, Failure};

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

fn grant_summary(op: &OperatorSession, s: &Standing) -> String {
    match s.grant() {
        Some(g) => format!(
            "{} operation(s); {}; {}/min, {}/month{}",
            g.operations.len(),
            if g.action_kinds.is_empty() {
                "no action kinds".to_string()
            } else {
                g.action_kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
            },
            g.rate_limit_per_minute,
            g.monthly_quota,
            g.expires_at.map(|at| format!("; until {}", op.time(at))).unwrap_or_default()
        ),
        None => "—".to_string(),
    }
}

/// Every signed client of the workspace, drafts awaiting a grant among them: filterable by words and status.
pub async fn list(State(state): State<AppState>, op: OperatorSession, Query(filter): Query<Filter>) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(clients) = fiscus_store::execution_clients::list(&mut conn, state.store.seal_key(), &op.workspace_id).await
    else {
        return unavailable();
    };
    let mut rows = Vec::with_capacity(clients.len());
    for c in &clients {
        let env = c.client.environment.as_str();
        let status = c.status().as_str();
        let cells = vec![
            format!("<a href=\"/console/clients/{id}?environment={env}\">{id}</a>", id = escape(&c.client.id)),
            escape(&c.client.name),
            env.to_string(),
            format!("<code>{}</code>", escape(&key_fingerprint(&c.client.public_key))),
            html::state(status),
            grant_summary(&op, c),
        ];
        let words = [c.client.id.as_str(), &c.client.name, env, &c.client.application_id];
        rows.push(Row::new(cells, status, &words));
    }
    let queue = Queue {
        id: "clients",
        caption: "Signed clients",
        headers: &["Client (keyid)", "Name", "Environment", "Key", "Status", "Grant"],
        facet: ("Status", &["draft", "active", "revoked"]),
        empty: "No signed clients yet. Register one with `fiscus admin exec-client create --app APP --name NAME \
                --public-key BASE64`; it appears here as a draft for an admin to grant.",
    };
    page("Signed clients", op.nav(), &queue.render("/console/clients", &filter, rows))
}

pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    axum::extract::Query(q): axum::extract::Query<EnvQuery>,
) -> Response {
    let Some(env) = Environment::parse(&q.environment) else {
        return html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such client in this workspace.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let standing = match fiscus_store::execution_clients::get(&mut conn, state.store.seal_key(), &tenant, &id).await {
        Ok(s) => s,
        Err(fiscus_store::StoreError::NotFound) => {
            return html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such client in this workspace.");
        }
        Err(_) => return unavailable(),
    };
    let Ok(history) =
        fiscus_store::execution_clients::decisions(&mut conn, state.store.seal_key(), &op.workspace_id, &id).await
    else {
        return unavailable();
    };
    page(&format!("Signed client {}", standing.client.name), op.nav(), &detail_body(&op, &standing, &history))
}

fn detail_body(op: &OperatorSession, s: &Standing, history: &[ClientDecision]) -> String {
    let c = &s.client;
    let version = s.latest.as_ref().map_or(0, |d| d.version);
    let mut body = format!(
        "<dl><dt>Client id (keyid)</dt><dd><code>{id}</code></dd><dt>Environment</dt><dd>{env}</dd>\
         <dt>Application</dt><dd><code>{app}</code></dd><dt>Public key</dt><dd><code>{key}</code> ({fp})</dd>\
         <dt>Status</dt><dd id=\"client-status\">{status}</dd><dt>Grant</dt><dd>{grant}</dd></dl>",
        id = escape(&c.id),
        env = c.environment.as_str(),
        app = escape(&c.application_id),
        key = escape(&c.public_key),
        fp = escape(&key_fingerprint(&c.public_key)),
        status = s.status().as_str(),
        grant = grant_summary(op, s),
    );
    let may_decide = op.role == Role::Admin && s.status() != ClientStatus::Revoked;
    if may_decide {
        let current = s.grant();
        let mut ops = String::new();
        for operation in grantable_operations() {
            let checked = current.is_some_and(|g| g.operations.iter().any(|o| o == operation.id));
            let _ = write!(
                ops,
                "<label><input type=\"checkbox\" name=\"operation\" value=\"{id}\"{c}> {m} <code>{path}</code> \
                 <span class=\"muted\">({scope})</span></label>",
                id = operation.id,
                c = if checked { " checked" } else { "" },
                m = operation.method.as_str(),
                path = escape(&operation.full_path()),
                scope = operation.scope.unwrap_or(""),
            );
        }
        let mut kinds = String::new();
        for kind in ActionKind::ALL {
            let checked = current.is_some_and(|g| g.action_kinds.contains(&kind));
            let _ = write!(
                kinds,
                "<label><input type=\"checkbox\" name=\"action_kind\" value=\"{k}\"{c}> {k}</label>",
                k = kind.as_str(),
                c = if checked { " checked" } else { "" },
            );
        }
        let expires =
            current.and_then(|g| g.expires_at).map(|at| rfc3339(at - 1)[..10].to_string()).unwrap_or_default();
        let _ = write!(
            body,
            "<h2>{verb}</h2><form method=\"post\" action=\"/console/clients/{id}/decision\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <input type=\"hidden\" name=\"seen_version\" value=\"{version}\">\
             <fieldset><legend>Operations and tools</legend><p class=\"muted\">The gateway's own reads (capabilities, \
             service level, usage, request evidence) and the MCP and A2A entry points are always available to an \
             active client; what they dispatch is limited to the operations ticked here.</p>{ops}</fieldset>\
             <fieldset><legend>Financial Action kinds it may propose, submit or ask to execute</legend>{kinds}\
             <p class=\"muted\">No kind grants approval: people still approve every action.</p></fieldset>\
             <label>Requests per minute <input type=\"number\" name=\"rate_limit_per_minute\" min=\"1\" max=\"100000\" value=\"{rate}\" required></label>\
             <label>Requests per month <input type=\"number\" name=\"monthly_quota\" min=\"1\" max=\"1000000000\" value=\"{quota}\" required></label>\
             <label>Valid through (UTC date, optional) <input type=\"date\" name=\"expires_on\" value=\"{expires}\"></label>\
             <button type=\"submit\" name=\"decision\" value=\"grant\" class=\"approve\">{verb}</button></form>\
             <form method=\"post\" action=\"/console/clients/{id}/decision\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"environment\" value=\"{env}\"><input type=\"hidden\" name=\"seen_version\" value=\"{version}\">\
             <button type=\"submit\" name=\"decision\" value=\"revoke\" class=\"deny\">Revoke this client</button></form>",
            verb = if current.is_some() { "Change the grant" } else { "Grant and activate" },
            id = escape(&c.id),
            csrf = escape(&op.csrf_token),
            env = c.environment.as_str(),
            rate = current.map_or(60, |g| g.rate_limit_per_minute),
            quota = current.map_or(100_000, |g| g.monthly_quota),
        );
    } else if op.role != Role::Admin {
        body.push_str("<p class=\"muted\">Only admins grant, change or revoke signed clients.</p>");
    }
    let mut rows = String::new();
    for d in history {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            d.version,
            d.decision.as_str(),
            escape(&d.decision_hash),
            escape(&d.decided_by),
            op.time(d.created_at)
        );
    }
    let _ = write!(
        body,
        "<h2>Decisions</h2><table><tr><th>Version</th><th>Decision</th><th>Hash</th><th>By</th><th>At</th></tr>{rows}</table>"
    );
    body
}

/// The decision form: repeated `operation` and `action_kind` fields, so it is read as pairs.
struct DecisionForm {
    csrf: String,
    environment: String,
    seen_version: i64,
    decision: String,
    operations: Vec<String>,
    action_kinds: Vec<String>,
    rate: Option<String>,
    quota: Option<String>,
    expires_on: Option<String>,
}

impl DecisionForm {
    fn parse(pairs: Vec<(String, String)>) -> Option<DecisionForm> {
        let mut f = DecisionForm {
            csrf: String::new(),
            environment: String::new(),
            seen_version: -1,
            decision: String::new(),
            operations: Vec::new(),
            action_kinds: Vec::new(),
            rate: None,
            quota: None,
            expires_on: None,
        };
        for (k, v) in pairs {
            match k.as_str() {
                "csrf" => f.csrf = v,
                "environment" => f.environment = v,
                "seen_version" => f.seen_version = v.parse().ok()?,
                "decision" => f.decision = v,
                "operation" => f.operations.push(v),
                "action_kind" => f.action_kinds.push(v),
                "rate_limit_per_minute" => f.rate = Some(v),
                "monthly_quota" => f.quota = Some(v),
                "expires_on" => f.expires_on = Some(v).filter(|v| !v.is_empty()),
                _ => return None,
            }
        }
        Some(f)
    }
}

/// `YYYY-MM-DD` → the start of the next UTC day (the grant is valid through the given day).
fn end_of_day(date: &str) -> Option<i64> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let day = time::Date::parse(date, format).ok()?;
    Some(micros_of(day.next_day()?.midnight().assume_utc()))
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    RawBody(body): RawBody,
) -> Response {
    let refused = |status: StatusCode, message: &str| html::error_page(status, "Refused", message);
    let Some(form) = pairs(&body).ok().and_then(DecisionForm::parse) else {
        return refused(StatusCode::BAD_REQUEST, "The form could not be read.");
    };
    if let Err(refusal) = op.check_csrf(&form.csrf) {
        return refusal;
    }
    let Some(env) = Environment::parse(&form.environment) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown environment.");
    };
    let now = now_micros();
    let grant = match form.decision.as_str() {
        "revoke" => None,
        "grant" => {
            let expires_at = match form.expires_on.as_deref().map(end_of_day) {
                None => None,
                Some(Some(at)) => Some(at),
                Some(None) => return refused(StatusCode::UNPROCESSABLE_ENTITY, "The expiry date is not a date."),
            };
            let (Some(rate), Some(quota)) = (
                form.rate.as_deref().and_then(|r| r.parse::<u32>().ok()),
                form.quota.as_deref().and_then(|q| q.parse::<u64>().ok()),
            ) else {
                return refused(StatusCode::UNPROCESSABLE_ENTITY, "The limits must be whole numbers.");
            };
            match Grant::new(form.operations, form.action_kinds, env, env, expires_at, rate, quota, now) {
                Ok(g) => Some(g),
                Err(errors) => {
                    let text = errors.iter().map(|(f, why)| format!("{f}: {why}")).collect::<Vec<_>>().join("; ");
                    return refused(StatusCode::UNPROCESSABLE_ENTITY, &text);
                }
            }
        }
        _ => return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown decision."),
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        governed::execution_clients::decide(&mut tx, &tenant, &op.caller(), op.role, &id, form.seen_version, grant)
            .await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect(&format!("/console/clients/{id}?environment={}", env.as_str()), Notice::Decided, &id),
        Err(Failure::Refused { detail, .. }) => html::error_page(StatusCode::CONFLICT, "Decision refused", &detail),
        Err(Failure::Decision(r)) => html::error_page(StatusCode::FORBIDDEN, "Decision refused", &r.to_string()),
        Err(Failure::NotFound) => {
            html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such client in this workspace.")
        }
        Err(e) => {
            tracing::warn!(error = ?e, "a client decision was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was decided. Try again.")
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_expiry_date_means_through_that_day() {
        let at = super::end_of_day("2026-12-31").expect("date");
        assert_eq!(fiscus_domain::clock::rfc3339(at), "2027-01-01T00:00:00Z");
        assert!(super::end_of_day("2026-13-01").is_none());
    }
}
