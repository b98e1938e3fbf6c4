//! Workflow tools at the console: which workflow versions each application's agents may dispatch through
//! the workflow A2A gateway. This allowlist is separate from a signed client's operation grant; only admins
//! decide it, each decision is a new sealed version covering exactly the version the admin was shown, and
//! it names versions (a version written later is never dispatched on the strength of an older decision).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use std::fmt::Write as _;

use crate::workflows::gateway;
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, EnvQuery, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_http::form::{RawBody, pairs};

/// How many of the tenant's newest versions the form offers.
const OFFERED: u32 = 200;

fn unavailable() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.")
}

fn tenant_of(op: &OperatorSession, environment: Environment) -> Tenant {
    Tenant { workspace_id: op.workspace_id.clone(), environment }
}

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let Ok(apps) = fiscus_store::applications::list(&mut conn, &op.workspace_id).await else { return unavailable() };
    drop(conn);
    let mut rows = String::new();
    for app in &apps {
        let Some(env) = Environment::parse(&app.environment) else { continue };
        let Ok(grant) = gateway::in_force(&state, &tenant_of(&op, env), &app.id).await else { return unavailable() };
        let allowed = match &grant {
            Some(g) => format!("{} version(s) (decision {})", g.versions.len(), g.version),
            None => "none".to_string(),
        };
        let _ = write!(
            rows,
            "<tr><td><a href=\"/console/workflow-tools/{id}?environment={env}\">{name}</a><br><code>{id}</code></td>\
             <td>{env}</td><td>{status}</td><td>{allowed}</td></tr>",
            id = escape(&app.id),
            env = env.as_str(),
            name = escape(&app.name),
            status = escape(&app.status),
        );
    }
    let body = format!(
        "<p class=\"muted\">The workflow A2A gateway runs only the workflow versions on an application's \
         allowlist, for any of its credentials and signed clients. Review steps in those workflows still wait \
         for people here.</p><table><tr><th>Application</th><th>Environment</th><th>Status</th>\
         <th>Workflow versions allowed</th></tr>{rows}</table>"
    );
    page("Workflow tools", op.nav(), &body)
}

pub async fn detail(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(app_id): Path<String>,
    Query(q): Query<EnvQuery>,
) -> Response {
    let not_found =
        || html::error_page(StatusCode::NOT_FOUND, "Not found", "There is no such application in this workspace.");
    let Some(env) = Environment::parse(&q.environment) else { return not_found() };
    let tenant = tenant_of(&op, env);
    let Ok(mut conn) = state.store.read().await else { return unavailable() };
    let app = match fiscus_store::applications::get(&mut conn, &op.workspace_id, &app_id).await {
        Ok(a) if a.environment == env.as_str() => a,
        Ok(_) | Err(fiscus_store::StoreError::NotFound) => return not_found(),
        Err(_) => return unavailable(),
    };
    let key = state.store.seal_key();
    let Ok(history) = crate::tables::workflow_gateway::grants(&mut conn, key, &tenant, &app_id).await else {
        return unavailable();
    };
    let Ok(versions) = crate::tables::workflows::recent_versions(&mut conn, key, &tenant, OFFERED).await else {
        return unavailable();
    };
    let current = history.first();
    let mut body = format!(
        "<dl><dt>Application</dt><dd>{name} <code>{id}</code></dd><dt>Environment</dt><dd>{env}</dd>\
         <dt>Allowlist</dt><dd id=\"allowlist-version\">{state}</dd></dl>",
        name = escape(&app.name),
        id = escape(&app.id),
        env = env.as_str(),
        state = current.map_or("none decided".to_string(), |g| format!(
            "decision {} ({} version(s)), {}",
            g.version,
            g.versions.len(),
            escape(&g.decision_hash)
        )),
    );
    if op.role == Role::Admin {
        let mut boxes = String::new();
        for v in &versions {
            let checked = current.is_some_and(|g| g.allows(&v.id));
            let connected = v.body.definition.connected_steps();
            let note = if connected.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"muted\">({} step(s) outside the gateway's boundary: refused when sent)</span>",
                    connected.len()
                )
            };
            let _ = write!(
                boxes,
                "<label><input type=\"checkbox\" name=\"version\" value=\"{id}\"{c}> workflow <code>{wf}</code> \
                 version {n}, {steps} steps, definition <code>{hash}</code>{note}</label>",
                id = escape(&v.id),
                c = if checked { " checked" } else { "" },
                wf = escape(&v.body.workflow_id),
                n = v.body.version,
                steps = v.body.definition.steps.len(),
                hash = escape(&v.body.definition_hash),
            );
        }
        if versions.is_empty() {
            boxes.push_str("<p class=\"muted\">No workflow versions in this environment yet.</p>");
        }
        let _ = write!(
            body,
            "<h2>Decide the allowlist</h2><form method=\"post\" action=\"/console/workflow-tools/{id}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <input type=\"hidden\" name=\"seen_version\" value=\"{seen}\">\
             <fieldset><legend>Workflow versions its agents may run</legend>{boxes}</fieldset>\
             <button type=\"submit\" class=\"approve\">Record this allowlist</button></form>",
            id = escape(&app.id),
            csrf = escape(&op.csrf_token),
            env = env.as_str(),
            seen = current.map_or(0, |g| g.version),
        );
    } else {
        body.push_str("<p class=\"muted\">Only admins decide workflow tools.</p>");
    }
    let mut rows = String::new();
    for g in &history {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            g.version,
            escape(&g.versions.join(", ")),
            escape(&g.decision_hash),
            escape(&g.decided_by),
            op.time(g.created_at)
        );
    }
    let _ = write!(
        body,
        "<h2>Decisions</h2><table><tr><th>Version</th><th>Workflow versions</th><th>Hash</th><th>By</th><th>At</th></tr>{rows}</table>"
    );
    page(&format!("Workflow tools of {}", app.name), op.nav(), &body)
}

pub async fn decide(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(app_id): Path<String>,
    RawBody(body): RawBody,
) -> Response {
    let refused = |status: StatusCode, message: &str| html::error_page(status, "Refused", message);
    let Ok(fields) = pairs(&body) else { return refused(StatusCode::BAD_REQUEST, "The form could not be read.") };
    let (mut csrf, mut environment, mut seen, mut versions) = (String::new(), String::new(), None, Vec::new());
    for (k, v) in fields {
        match k.as_str() {
            "csrf" => csrf = v,
            "environment" => environment = v,
            "seen_version" => seen = v.parse::<i64>().ok(),
            "version" => versions.push(v),
            _ => return refused(StatusCode::BAD_REQUEST, "The form could not be read."),
        }
    }
    if let Err(refusal) = op.check_csrf(&csrf) {
        return refusal;
    }
    let (Some(env), Some(seen)) = (Environment::parse(&environment), seen) else {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, "Unknown environment or version.");
    };
    let tenant = tenant_of(&op, env);
    match gateway::decide(&state, &op.caller(), op.role, &tenant, &app_id, seen, versions).await {
        Ok(_) => flash::redirect(
            &format!("/console/workflow-tools/{app_id}?environment={}", env.as_str()),
            Notice::Decided,
            &app_id,
        ),
        Err(e) => html::failure_page(
            e,
            "Decision refused",
            "There is no such application in this workspace.",
            "a workflow tools decision",
        ),
    }
}
