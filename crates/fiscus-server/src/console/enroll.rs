//! Operator enrollment from the one-time link the CLI prints: set a password, then prove an authenticator
//! with a first TOTP code. Only then is the operator active.

use crate::http::form::ConsoleForm;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, SecretKind};
use fiscus_store::operators::OperatorRow;
use rand::RngCore;
use serde::Deserialize;

use super::html::{self, escape, page};
use super::passwords;
use crate::secret_box::SecretBox;
use crate::state::AppState;

async fn invited(state: &AppState, token: &str) -> Result<OperatorRow, Response> {
    let refused =
        || html::error_page(StatusCode::NOT_FOUND, "Enrollment", "This enrollment link is not valid or has expired.");
    let Some(parsed) = credentials::parse(token).filter(|p| p.kind == SecretKind::EnrollmentToken) else {
        return Err(refused());
    };
    let hash = credentials::keyed_hash(&state.server_key, parsed.full);
    let mut conn = state.store.read().await.map_err(|_| refused())?;
    match fiscus_store::operators::find_by_enrollment(&mut conn, &hash).await {
        Ok(Some(op)) if op.status == "invited" && op.enrollment_expires_at.is_some_and(|at| at > now_micros()) => {
            Ok(op)
        }
        Ok(_) => Err(refused()),
        Err(e) => {
            tracing::error!(error = %e, "reading an enrollment failed");
            Err(refused())
        }
    }
}

#[derive(Deserialize)]
pub struct TokenQuery {
    token: String,
}

pub async fn enroll_page(State(state): State<AppState>, Query(q): Query<TokenQuery>) -> Response {
    match invited(&state, &q.token).await {
        Ok(op) => password_form(&op, &q.token, None),
        Err(r) => r,
    }
}

fn password_form(op: &OperatorRow, token: &str, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    page(
        "Enroll",
        None,
        &format!(
            "<p>Welcome, {} ({}). Choose a password of at least {} characters.</p>{error}\
             <form method=\"post\" action=\"/console/enroll\"><input type=\"hidden\" name=\"token\" value=\"{}\">\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"new-password\" required></label>\
             <label>Repeat <input type=\"password\" name=\"password_repeat\" autocomplete=\"new-password\" required></label>\
             <button type=\"submit\">Continue</button></form>",
            escape(&op.email),
            escape(&op.role),
            passwords::MIN_LENGTH,
            escape(token)
        ),
    )
}

#[derive(Deserialize)]
pub struct PasswordForm {
    token: String,
    password: String,
    password_repeat: String,
}

/// Step one: stores the password hash and a fresh TOTP secret (encrypted), and shows the secret once.
pub async fn set_password(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<PasswordForm>) -> Response {
    let op = match invited(&state, &form.token).await {
        Ok(op) => op,
        Err(r) => return r,
    };
    if form.password != form.password_repeat {
        return password_form(&op, &form.token, Some("The passwords differ."));
    }
    if let Err(message) = passwords::acceptable(&form.password) {
        return password_form(&op, &form.token, Some(&message));
    }
    let failed =
        || html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Enrollment", "Enrollment could not be saved; try again.");
    let Some(password_hash) = passwords::hash(&form.password) else { return failed() };
    let mut secret = [0u8; 20];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let Some(sealed) = SecretBox::new(&state.server_key).seal(&secret, &op.id) else { return failed() };
    let saved = async {
        let mut tx = state.store.begin().await?;
        fiscus_store::operators::set_credentials(
            &mut tx,
            &op.workspace_id,
            &op.id,
            &password_hash,
            &sealed,
            now_micros(),
        )
        .await?;
        tx.commit().await
    }
    .await;
    if saved.is_err() {
        return failed();
    }
    let uri = fiscus_domain::totp::otpauth_uri("Fiscus", &op.email, &secret);
    page(
        "Enroll: second factor",
        None,
        &format!(
            "<p>Add this account to your authenticator app, then enter the code it shows.</p>\
             <p>Secret: <code id=\"totp-secret\">{}</code></p><p class=\"muted\">URI: <code>{}</code></p>\
             <form method=\"post\" action=\"/console/enroll/confirm\"><input type=\"hidden\" name=\"token\" value=\"{}\">\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Finish enrollment</button></form>",
            fiscus_domain::totp::base32(&secret),
            escape(&uri),
            escape(&form.token)
        ),
    )
}

#[derive(Deserialize)]
pub struct ConfirmForm {
    token: String,
    code: String,
}

/// Step two: a valid code proves the authenticator; the operator becomes active and the link is spent.
pub async fn confirm(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<ConfirmForm>) -> Response {
    let op = match invited(&state, &form.token).await {
        Ok(op) => op,
        Err(r) => return r,
    };
    let secret = op.totp_secret.as_deref().and_then(|s| SecretBox::new(&state.server_key).open(s, &op.id));
    let now = now_micros();
    let Some(step) =
        secret.and_then(|s| fiscus_domain::totp::verify(&s, form.code.trim(), now / MICROS_PER_SECOND, None))
    else {
        return html::error_page(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Enrollment",
            "That code is not right. Go back and try the current code.",
        );
    };
    let saved = async {
        let mut tx = state.store.begin().await?;
        fiscus_store::operators::activate(&mut tx, &op.workspace_id, &op.id, step, now).await?;
        super::audit(&mut tx, &op.workspace_id, &op.id, "console.enrolled", serde_json::json!({ "role": op.role }))
            .await?;
        tx.commit().await
    }
    .await;
    if saved.is_err() {
        return html::error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Enrollment",
            "Enrollment could not be saved; try again.",
        );
    }
    html::redirect("/console/login")
}
