//! The signed-in person's preferences: the zone their console shows times in. They belong to the person's
//! account, so they follow them into every workspace they are an operator of.

use crate::form::ConsoleForm;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::now_micros;
use serde::Deserialize;
use std::fmt::Write as _;

use super::flash::{self, Notice};
use super::html::{self, escape, page};
use super::session::OperatorSession;
use super::times;
use fiscus_http::AppState;

pub async fn show(op: OperatorSession) -> Response {
    form(&op, None)
}

fn form(op: &OperatorSession, error: Option<&str>) -> Response {
    let mut options = String::new();
    for name in times::names() {
        let selected = if *name == op.time_zone_name() { " selected" } else { "" };
        let _ = write!(options, "<option{selected}>{}</option>", escape(name));
    }
    let error = error.map(|e| format!("<p class=\"error\" id=\"zone-error\">{}</p>", escape(e))).unwrap_or_default();
    let mut response = page(
        "Preferences",
        op.nav(),
        &format!(
            "<p>Times are shown in <strong id=\"current-zone\">{zone}</strong>; hover over a time for its UTC \
             instant. This follows you into every workspace you sign in to.</p>{error}\
             <form method=\"post\" action=\"/console/preferences\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label>Time zone <select name=\"time_zone\">{options}</select></label>\
             <button type=\"submit\">Save</button></form>",
            zone = escape(op.time_zone_name()),
            csrf = escape(&op.csrf_token),
        ),
    );
    if !error.is_empty() {
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    response
}

#[derive(Deserialize)]
pub struct PreferencesForm {
    csrf: String,
    time_zone: String,
}

pub async fn save(
    State(state): State<AppState>,
    op: OperatorSession,
    ConsoleForm(f): ConsoleForm<PreferencesForm>,
) -> Response {
    if let Err(refused) = op.check_csrf(&f.csrf) {
        return refused;
    }
    if times::zone(&f.time_zone).is_none() {
        return form(&op, Some("That is not a time zone this console knows; pick one from the list."));
    }
    let Some(account) = op.account_id.as_deref() else {
        return html::error_page(StatusCode::CONFLICT, "Preferences", "This identity has no sign-in to keep them.");
    };
    let saved = async {
        let mut tx = state.store.begin().await?;
        fiscus_store::operators::set_time_zone(&mut tx, account, &f.time_zone, now_micros()).await?;
        tx.commit().await
    }
    .await;
    match saved {
        Ok(()) => flash::redirect("/console/preferences", Notice::Preferences, &f.time_zone),
        Err(_) => html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Not recorded", "Nothing was saved. Try again."),
    }
}
