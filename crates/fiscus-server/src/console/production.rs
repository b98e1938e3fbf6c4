//! Production access at the console: two distinct admins turn it on; one turns it off.

use crate::http::form::ConsoleForm;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::now_micros;
use fiscus_domain::production_access::{Move, Outcome, decide};
use serde::Deserialize;
use serde_json::json;

use super::html::{self, escape, page};
use super::session::OperatorSession;
use crate::state::AppState;

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
        let ws = fiscus_store::workspaces::get(tx.conn(), &op.workspace_id).await?;
        let open = fiscus_store::workspaces::open_production_request(&mut tx, &op.workspace_id).await?;
        let outcome = match decide(
            mv,
            op.role,
            &op.operator_id,
            ws.production_access(),
            open.as_ref().map(|(_, by)| by.as_str()),
        ) {
            Ok(o) => o,
            Err(r) => return Ok(Err(r.to_string())),
        };
        let now = now_micros();
        match outcome {
            Outcome::Requested => {
                fiscus_store::workspaces::request_production(&mut tx, &op.workspace_id, &op.operator_id, now).await?;
            }
            Outcome::Enabled => {
                let id = open.as_ref().map(|(id, _)| id.as_str());
                fiscus_store::workspaces::settle_production(
                    &mut tx,
                    &op.workspace_id,
                    id,
                    "confirmed",
                    &op.operator_id,
                    true,
                    now,
                )
                .await?;
            }
            Outcome::Disabled => {
                let id = open.as_ref().map(|(id, _)| id.as_str());
                fiscus_store::workspaces::settle_production(
                    &mut tx,
                    &op.workspace_id,
                    id,
                    "withdrawn",
                    &op.operator_id,
                    false,
                    now,
                )
                .await?;
            }
        }
        super::audit(
            &mut tx,
            &op.workspace_id,
            &op.operator_id,
            "console.production_access",
            json!({ "outcome": format!("{outcome:?}") }),
        )
        .await?;
        tx.commit().await?;
        Ok::<Result<(), String>, fiscus_store::StoreError>(Ok(()))
    }
    .await;
    match result {
        Ok(Ok(())) => html::redirect("/console/production"),
        Ok(Err(message)) => html::error_page(StatusCode::CONFLICT, "Refused", &message),
        Err(_) => html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing changed. Try again."),
    }
}
