//! Client calls at the console: the newest calls of each environment with their recordings and the consent
//! in force. That consent is not required for a call, under a named policy, is decided here by an admin or
//! approver (applications can only record consent they captured): the decision is a sealed consent record
//! naming the person and the policy.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::calls;
use fiscus_console::flash::{self, Notice};
use fiscus_console::form::ConsoleForm;
use fiscus_console::html::{self, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

const SHOWN: u32 = 50;

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut body = String::from(
        "<p class=\"muted\">A call's recording is transcribed only under consent: captured by the application, or \
         decided here not to be required under a named policy.</p>",
    );
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let recent = {
            let Ok(mut conn) = state.store.read().await else { return unavailable() };
            match crate::tables::calls::recent_calls(&mut conn, state.store.seal_key(), &tenant, SHOWN).await {
                Ok(c) => c,
                Err(_) => return unavailable(),
            }
        };
        let mut rows = String::new();
        for call in recent {
            let Ok(file) = calls::load(&state, &tenant, &call.id).await else { return unavailable() };
            let consent = match file.consents.last() {
                Some(c) => format!(
                    "{} by {} at {}{}",
                    c.body.basis.as_str(),
                    escape(&c.created_by.label()),
                    op.time(c.created_at),
                    c.body.reference.as_deref().map(|r| format!(" ({})", escape(r))).unwrap_or_default()
                ),
                None => "none".to_string(),
            };
            let mut form = String::new();
            if matches!(op.role, Role::Admin | Role::Approver) {
                let _ = write!(
                    form,
                    "<form method=\"post\" action=\"/console/calls/{id}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                     <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                     <label>Policy <input type=\"text\" name=\"policy\" maxlength=\"500\" required></label>\
                     <button type=\"submit\" class=\"approve\">Consent not required for {id}</button></form>",
                    id = escape(&file.call.id),
                    csrf = escape(&op.csrf_token),
                    env = environment.as_str(),
                );
            }
            let _ = write!(
                rows,
                "<tr><td>{title}<br><code>{id}</code></td><td>{recordings}</td><td>{transcripts}</td><td>{consent}</td><td>{form}</td></tr>",
                title = escape(&file.call.body.title),
                id = escape(&file.call.id),
                recordings = file.recordings.len(),
                transcripts = file.transcripts.len(),
            );
        }
        let table = if rows.is_empty() {
            "<p class=\"muted\">No calls.</p>".to_string()
        } else {
            format!(
                "<table><tr><th>Call</th><th>Recordings</th><th>Transcripts</th><th>Consent in force</th><th></th></tr>{rows}</table>"
            )
        };
        let _ = write!(body, "<h2>{}</h2>{table}", environment.as_str());
    }
    page("Client calls", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct WaiveForm {
    csrf: String,
    environment: String,
    policy: String,
}

pub async fn waive(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<WaiveForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let Some(environment) = Environment::parse(&form.environment) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown environment.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
    match calls::waive_consent(&state, &op.caller(), op.role, &tenant, &id, &form.policy).await {
        Ok(_) => flash::redirect("/console/calls", Notice::Decided, &id),
        Err(e) => {
            html::failure_page(e, "Decision refused", "There is no such call in this workspace.", "a consent decision")
        }
    }
}
