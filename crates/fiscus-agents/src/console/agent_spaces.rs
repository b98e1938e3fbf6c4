//! Agent spaces at the console: the spaces Fiscus ships, with what each may call (its tools, all reads) and
//! the data it is bound to, and per environment the version in force. Only admins promote a space's
//! version (it then runs for applications) or suspend it (runs are refused until promoted again).

use crate::rules::spaces::library;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::spaces;
use fiscus_console::flash::{self, Notice};
use fiscus_console::form::ConsoleForm;
use fiscus_console::html::{self, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

fn tenant_of(op: &OperatorSession, environment: Environment) -> Tenant {
    Tenant { workspace_id: op.workspace_id.clone(), environment }
}

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let mut body = String::from(
        "<p class=\"muted\">An agent space runs for applications only once an admin promotes its version here. \
         Its tools are read operations; it calls them as the application that asked, with no other scopes.</p>",
    );
    for shipped in library::SHIPPED {
        let d = shipped.definition();
        let tools = d.tools.iter().map(|t| format!("<code>{}</code>", escape(t))).collect::<Vec<_>>().join(", ");
        let knowledge = d
            .knowledge
            .iter()
            .map(|k| {
                format!("{} <code>{}</code>", escape(&format!("{:?}", k.kind).to_lowercase()), escape(&k.reference))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            body,
            "<h2>{name} <span class=\"muted\">({key}, version {v})</span></h2><p>{desc}</p>\
             <dl><dt>Tools</dt><dd>{tools}</dd><dt>Knowledge</dt><dd>{knowledge}</dd></dl>",
            name = escape(&d.name),
            key = escape(&d.key),
            v = d.version,
            desc = escape(&d.description),
        );
        let mut rows = String::new();
        for environment in [Environment::Sandbox, Environment::Production] {
            let tenant = tenant_of(&op, environment);
            let Ok(all) = spaces::all(&state, &tenant).await else {
                return html::error_page(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Unavailable",
                    "The database does not answer.",
                );
            };
            let standing = all.into_iter().find(|s| s.space.body.key == d.key);
            let status = match &standing {
                None => "not promoted".to_string(),
                Some(s) => match &s.active {
                    Some(v) => format!(
                        "active: version {} <code>{}</code>, promoted by {} at {}",
                        v.body.version,
                        escape(&v.body.definition_hash),
                        escape(&v.created_by.label()),
                        op.time(v.created_at)
                    ),
                    None => "suspended".to_string(),
                },
            };
            let mut forms = String::new();
            if op.role == Role::Admin {
                let hidden = format!(
                    "<input type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"environment\" value=\"{}\">",
                    escape(&op.csrf_token),
                    environment.as_str()
                );
                let _ = write!(
                    forms,
                    "<form class=\"inline\" method=\"post\" action=\"/console/agent-spaces/{key}\">{hidden}\
                     <input type=\"hidden\" name=\"decision\" value=\"promote\">\
                     <button type=\"submit\" class=\"approve\">Promote {key} in {env}</button></form>",
                    key = escape(&d.key),
                    env = environment.as_str(),
                );
                if standing.as_ref().is_some_and(|s| !s.suspended()) {
                    let _ = write!(
                        forms,
                        "<form class=\"inline\" method=\"post\" action=\"/console/agent-spaces/{key}\">{hidden}\
                         <input type=\"hidden\" name=\"decision\" value=\"suspend\">\
                         <button type=\"submit\" class=\"deny\">Suspend {key} in {env}</button></form>",
                        key = escape(&d.key),
                        env = environment.as_str(),
                    );
                }
            }
            let _ = write!(rows, "<tr><td>{}</td><td>{status}</td><td>{forms}</td></tr>", environment.as_str());
        }
        let _ = write!(body, "<table><tr><th>Environment</th><th>Standing</th><th></th></tr>{rows}</table>");
    }
    if op.role != Role::Admin {
        body.push_str("<p class=\"muted\">Only admins promote or suspend agent spaces.</p>");
    }
    page("Agent spaces", op.nav(), &body)
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
    Path(key): Path<String>,
    ConsoleForm(form): ConsoleForm<DecisionForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let Some(environment) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    let tenant = tenant_of(&op, environment);
    let result = match form.decision.as_str() {
        "promote" => spaces::decisions::promote(&state, &op.caller(), op.role, &tenant, &key, None).await.map(|_| ()),
        "suspend" => match spaces::all(&state, &tenant).await {
            Ok(all) => match all.into_iter().find(|s| s.space.body.key == key) {
                Some(s) => spaces::decisions::suspend(&state, &op.caller(), op.role, &tenant, &s.space.id, None).await,
                None => Err(fiscus_kernel::governed::Failure::NotFound),
            },
            Err(e) => Err(e),
        },
        _ => return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision."),
    };
    match result {
        Ok(()) => flash::redirect("/console/agent-spaces", Notice::Decided, &key),
        Err(e) => html::failure_page(e, "Decision refused", "There is no such agent space.", "an agent space decision"),
    }
}
