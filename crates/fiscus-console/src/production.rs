//! Production access at the console: two distinct admins turn it on; one turns it off.

use crate::form::ConsoleForm;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::production_access::Move;
use serde::Deserialize;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use fiscus_http::AppState;
use fiscus_kernel::governed;
use fiscus_kernel::governed::Failure;

pub async fn show(State(state): State<AppState>, op: OperatorSession) -> Response {
    let Ok(ws) = state.store.workspace(&op.workspace_id).await else {
        return html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", "The database does not answer.");
    };
    let enabled = ws.production_access();
    let form = |mv: &str, label: &str| {
        format!(
            "<form class=\"inline\" method=\"post\" action=\"/console/production\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\" name=\"move\" value=\"{mv}\">{label}</button></form>",
            escape(&op.csrf_token)
        )
    };
    let body = format!(
        "<p>Production access is <strong id=\"production-access\">{}</strong>.</p><p class=\"muted\">Turning it on needs two \
         different admins: one requests, another confirms. One admin can turn it off.</p>{}{}",
        if enabled { "on" } else { "off" },
        if enabled { String::new() } else { form("enable", "Request / confirm production access") },
        form("disable", "Turn production access off")
    );
    page("Production access", op.nav(), &body)
}

#[derive(Deserialize)]
pub struct MoveForm {
    csrf: String,
    #[serde(rename = "move")]
    mv: String,
}

pub async fn change(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(form): ConsoleForm<MoveForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&form.csrf) {
        return refused;
    }
    let mv = match form.mv.as_str() {
        "enable" => Move::Enable,
        "disable" => Move::Disable,
        _ => return html::error_page(StatusCode::UNPROCESSABLE_ENTITY, "Refused", "Unknown move."),
    };
    let result = async {
        let mut tx = state.store.begin().await?;
        governed::production::change(&mut tx, &op.workspace_id, &op.caller(), op.role, mv).await?;
        tx.commit().await?;
        Ok::<(), Failure>(())
    }
    .await;
    match result {
        Ok(()) => flash::redirect("/console/production", Notice::Decided, "production-access"),
        Err(Failure::Production(r)) => html::error_page(StatusCode::CONFLICT, "Refused", &r.to_string()),
        // The request was closed meanwhile by another admin: nothing changed here.
        Err(Failure::Store(fiscus_store::StoreError::Conflict(_))) => html::error_page(
            StatusCode::CONFLICT,
            "Refused",
            "The request changed meanwhile; nothing was changed. Reload and try again.",
        ),
        Err(e) => {
            tracing::warn!(error = ?e, "a production access change was not recorded");
            html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing changed. Try again.")
        }
    }
}
