//! QLMs at the console: each QLM's newest version with the exact checkpoint every role pins, and, where a
//! role's model now serves another promoted checkpoint, the rebinding an operator may decide (a new
//! version). The form names the checkpoint hash it binds; a credential never rebinds.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_console::form::ConsoleForm;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use crate::lqm::{promotion, qlm};
use fiscus_console::flash::{self, Notice};
use fiscus_console::html::{self, escape, page};
use fiscus_console::session::OperatorSession;
use fiscus_http::AppState;

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let unavailable =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    let mut sections = String::new();
    for environment in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment };
        let Ok(mut conn) = state.store.read().await else { return unavailable() };
        let Ok(all) = crate::tables::lqm::qlms::list_qlms(&mut conn, state.store.seal_key(), &tenant, None, 100).await
        else {
            return unavailable();
        };
        drop(conn);
        let mut rows = String::new();
        for q in &all {
            let Ok((_, versions)) = qlm::load(&state, &tenant, &q.id).await else { return unavailable() };
            let Some(newest) = versions.last() else { return unavailable() };
            for pin in &newest.body.pins {
                let Ok(serving) = promotion::serving(&state, &tenant, &pin.model_id).await else {
                    return unavailable();
                };
                let mut action = String::new();
                match serving {
                    Some((_, p)) if p.record.body.checkpoint_id != pin.checkpoint_id => {
                        if matches!(op.role, Role::Admin | Role::Approver) {
                            let _ = write!(
                                action,
                                "<form class=\"inline\" method=\"post\" action=\"/console/qlms/{id}\">\
                                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                                 <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                                 <input type=\"hidden\" name=\"role\" value=\"{role}\">\
                                 <input type=\"hidden\" name=\"checkpoint_hash\" value=\"{hash}\">\
                                 <button type=\"submit\" class=\"approve\">Rebind {role} to {short}</button></form>",
                                id = escape(&q.id),
                                csrf = escape(&op.csrf_token),
                                env = environment.as_str(),
                                role = escape(&pin.role),
                                hash = escape(&p.record.body.checkpoint_hash),
                                short = escape(
                                    &p.record.body.checkpoint_hash[..p.record.body.checkpoint_hash.len().min(19)]
                                ),
                            );
                        } else {
                            action.push_str("a newer checkpoint serves");
                        }
                    }
                    Some(_) => action.push_str("pins the serving checkpoint"),
                    None => action.push_str("its model serves nothing (revoked or not promoted)"),
                }
                let _ = write!(
                    rows,
                    "<tr><td>{name}<br><code>{id}</code></td><td>v{version} {vhash}</td><td>{role}</td>\
                     <td><code>{model}</code></td><td>{pinned}</td><td>{action}</td></tr>",
                    name = escape(&q.body.name),
                    id = escape(&q.id),
                    version = newest.body.version,
                    vhash = html::hash(&newest.content_hash),
                    role = escape(&pin.role),
                    model = escape(&pin.model_id),
                    pinned = html::hash(&pin.checkpoint_hash),
                );
            }
        }
        let table = if rows.is_empty() {
            "<p class=\"muted\">No QLMs.</p>".to_string()
        } else {
            format!(
                "<table><tr><th>QLM</th><th>Version</th><th>Role</th><th>Model</th><th>Pinned checkpoint</th><th></th></tr>{rows}</table>"
            )
        };
        let _ = write!(sections, "<h2>{}</h2>{table}", environment.as_str());
    }
    let body = format!(
        "<p class=\"muted\">A QLM version pins exact checkpoints. Rebinding a role to the checkpoint its model serves \
         now makes a new version; nothing else changes what a QLM runs.</p>{sections}"
    );
    page("QLMs", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct RebindForm {
    csrf: String,
    environment: String,
    role: String,
    checkpoint_hash: String,
}

pub async fn rebind(
    State(state): State<AppState>,
    op: OperatorSession,
    Path(id): Path<String>,
    ConsoleForm(form): ConsoleForm<RebindForm>,
) -> Response {
    let tenant = match op.deciding_in(&form.csrf, &form.environment) {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    match qlm::rebind(&state, &op.caller(), &tenant, &id, &form.role, &form.checkpoint_hash).await {
        Ok(_) => flash::redirect("/console/qlms", Notice::Decided, &id),
        Err(e) => html::failure_page(
            e,
            "Rebinding refused",
            "There is no such QLM or role in this workspace.",
            "a QLM rebinding",
        ),
    }
}
