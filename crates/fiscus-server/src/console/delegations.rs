//! Delegations at the console: operators activate drafts, suspend or revoke. A credential can do none of it.

use crate::http::form::ConsoleForm;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::delegation::DelegationMove;
use fiscus_domain::clock::now_micros;
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use serde_json::json;
use std::fmt::Write as _;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::state::AppState;

pub async fn list(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(mut conn) = state.store.read().await else {
        return html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    };
    let mut rows = String::new();
    for env in [Environment::Sandbox, Environment::Production] {
        let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
        let Ok(delegations) = fiscus_store::delegations::list_delegations(&mut conn, &tenant).await else {
            return html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
        };
        for d in delegations {
            let mut forms = String::new();
            for (mv, label) in [("activate", "Activate"), ("suspend", "Suspend"), ("revoke", "Revoke")] {
                if DelegationMove::parse(mv).and_then(|m| m.apply(&d.status)).is_some() {
                    let _ = write!(
                        forms,
                        "<form class=\"inline\" method=\"post\" action=\"/console/delegations/{id}\">\
                         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"environment\" value=\"{env}\">\
                         <input type=\"hidden\" name=\"terms_hash\" value=\"{th}\"><button type=\"submit\" name=\"move\" value=\"{mv}\">{label}</button></form>",
                        id = escape(&d.id),
                        csrf = escape(&op.csrf_token),
                        env = env.as_str(),
                        th = escape(&d.terms_hash),
                    );
                }
            }
            let _ = write!(
                rows,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {} → {}</td><td>{} / {} / {} {}</td><td>{}</td><td>{}</td></tr>",
                escape(&d.id),
                env.as_str(),
                escape(&d.identity_id),
                escape(&d.action_kind),
                escape(&d.connector),
                escape(&d.counterparty),
                d.per_action_limit_minor,
                d.daily_limit_minor,
                d.monthly_limit_minor,
                escape(&d.currency),
                escape(&d.status),
                forms
            );
        }
    }
    page(
        "Delegations",
        op.nav(),
        &format!(
            "<table><tr><th>Delegation</th><th>Environment</th><th>Identity</th><th>Scope</th>\
             <th>Budgets (action / day / month, minor units)</th><th>Status</th><th></th></tr>{rows}</table>"
        ),
    )
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
    if !op.role.may_decide() {
        return html::error_page(StatusCode::CONFLICT, "Refused", "This role may not decide.");
    }
    let (Some(env), Some(mv)) = (Environment::parse(&form.environment), DelegationMove::parse(&form.mv)) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        let d = fiscus_store::delegations::lock_delegation(&mut tx, &tenant, &id).await?;
        let key = tx.seal_key().clone();
        let delegations = &fiscus_store::seals::DELEGATIONS;
        fiscus_store::seals::check(tx.conn(), &key, delegations, &tenant.workspace_id, "id", &id).await?;
        if d.terms_hash != form.terms_hash {
            return Ok(Err("The delegation changed since it was shown."));
        }
        let Some(next) = mv.apply(&d.status) else {
            return Ok(Err("That move is not allowed from the delegation's status."));
        };
        let now = now_micros();
        fiscus_store::delegations::decide(&mut tx, &tenant, &id, &d.status, next, &op.operator_id, now).await?;
        fiscus_store::audit::append(
            &mut tx,
            &tenant.workspace_id,
            fiscus_store::audit::NewAuditEvent {
                environment: Some(env.as_str()),
                actor_kind: "operator",
                actor_id: &op.operator_id,
                action: "delegation.decision",
                request_id: crate::http::request_id::current().as_deref(),
                subject: Some(&id),
                details: json!({ "from": d.status, "to": next, "terms_hash": d.terms_hash, "role": op.role.as_str() }),
                occurred_at: now,
            },
        )
        .await?;
        tx.commit().await?;
        Ok::<Result<(), &str>, fiscus_store::StoreError>(Ok(()))
    }
    .await;
    match result {
        Ok(Ok(())) => html::redirect("/console/delegations"),
        Ok(Err(message)) => html::error_page(StatusCode::CONFLICT, "Decision refused", message),
        Err(fiscus_store::StoreError::NotFound) => html::error_page(
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such delegation in this workspace and environment.",
        ),
        Err(_) => html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was decided. Try again."),
    }
}
