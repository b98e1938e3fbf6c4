//! Delegations at the console: operators activate drafts, suspend or revoke. A credential can do none of it.

use crate::http::form::ConsoleForm;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::actions::delegation::DelegationMove;
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use serde::Deserialize;
use std::fmt::Write as _;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::governed::{self, Failure};
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
                if DelegationMove::parse(mv).and_then(|m| m.apply(d.status)).is_some() {
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
                d.terms.action.as_str(),
                escape(&d.terms.connector),
                escape(&d.terms.counterparty),
                d.terms.per_action,
                d.terms.daily,
                d.terms.monthly,
                d.terms.currency.code(),
                d.status.as_str(),
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
    let (Some(env), Some(mv)) = (Environment::parse(&form.environment), DelegationMove::parse(&form.mv)) else {
        return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown decision.");
    };
    let tenant = Tenant { workspace_id: op.workspace_id.clone(), environment: env };
    let result = async {
        let mut tx = state.store.begin().await?;
        governed::delegations::decide(&mut tx, &tenant, &op.caller(), op.role, &id, mv, &form.terms_hash).await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => html::redirect("/console/delegations"),
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
