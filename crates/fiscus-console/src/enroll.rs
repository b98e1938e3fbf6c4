//! Operator enrollment from the one-time link the CLI prints. A person new to Fiscus sets a password, then
//! proves an authenticator with a first TOTP code; a person who already signs in to another workspace joins
//! this one with that sign-in (password and a current code), so one account opens every workspace they are an
//! operator of. Only then is the operator active.

use crate::form::ConsoleForm;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, SecretKind};
use fiscus_domain::people::OperatorStatus;
use fiscus_store::operators::{AccountRow, OperatorRow};
use rand::RngCore;
use serde::Deserialize;

use super::html::{self, escape, page};
use super::passwords;
use fiscus_http::AppState;
use fiscus_kernel::secret_box::SecretBox;

async fn invited(state: &AppState, token: &str) -> Result<OperatorRow, Response> {
    let refused =
        || html::error_page(StatusCode::NOT_FOUND, "Enrollment", "This enrollment link is not valid or has expired.");
    let Some(parsed) = credentials::parse(token).filter(|p| p.kind == SecretKind::EnrollmentToken) else {
        return Err(refused());
    };
    let hash = credentials::keyed_hash(&state.server_key, parsed.full);
    let mut conn = state.store.read().await.map_err(|_| refused())?;
    match fiscus_store::operators::find_by_enrollment(&mut conn, &hash).await {
        Ok(Some(op))
            if op.status == OperatorStatus::Invited && op.enrollment_expires_at.is_some_and(|at| at > now_micros()) =>
        {
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

/// The person's sign-in, when they already have one (an account whose authenticator is proved).
async fn existing_account(state: &AppState, email: &str) -> Result<Option<AccountRow>, Response> {
    let mut conn = state.store.read().await.map_err(|_| failed())?;
    let account = fiscus_store::operators::account_by_email(&mut conn, email).await.map_err(|_| failed())?;
    Ok(account.filter(|a| a.totp_confirmed == 1))
}

fn failed() -> Response {
    html::error_page(StatusCode::SERVICE_UNAVAILABLE, "Enrollment", "Enrollment could not be saved; try again.")
}

pub async fn enroll_page(State(state): State<AppState>, Query(q): Query<TokenQuery>) -> Response {
    let op = match invited(&state, &q.token).await {
        Ok(op) => op,
        Err(r) => return r,
    };
    match existing_account(&state, &op.email).await {
        Ok(Some(_)) => join_form(&op, &q.token, None),
        Ok(None) => password_form(&op, &q.token, None),
        Err(r) => r,
    }
}

fn join_form(op: &OperatorRow, token: &str, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let mut response = page(
        "Enroll",
        None,
        &format!(
            "<p>Welcome, {email} ({role}). You already sign in to Fiscus as {email}: confirm with your password and \
             a current authenticator code to add this workspace to that sign-in.</p>{error}\
             <form method=\"post\" action=\"/console/enroll/join\"><input type=\"hidden\" name=\"token\" value=\"{token}\">\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Join this workspace</button></form>",
            email = escape(&op.email),
            role = op.role.as_str(),
            token = escape(token)
        ),
    );
    if !error.is_empty() {
        *response.status_mut() = StatusCode::UNAUTHORIZED;
    }
    response
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
            op.role.as_str(),
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

/// Step one: stores the password hash and a fresh TOTP secret (encrypted) on the person's new account, and
/// shows the secret once.
pub async fn set_password(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<PasswordForm>) -> Response {
    let op = match invited(&state, &form.token).await {
        Ok(op) => op,
        Err(r) => return r,
    };
    let staged = {
        let Ok(mut conn) = state.store.read().await else { return failed() };
        match fiscus_store::operators::account_by_email(&mut conn, &op.email).await {
            Ok(Some(a)) if a.totp_confirmed == 1 => {
                return join_form(&op, &form.token, Some("You already have a sign-in: use it to join."));
            }
            Ok(staged) => staged,
            Err(_) => return failed(),
        }
    };
    if form.password != form.password_repeat {
        return password_form(&op, &form.token, Some("The passwords differ."));
    }
    if let Err(message) = passwords::acceptable(&form.password) {
        return password_form(&op, &form.token, Some(&message));
    }
    let Some(password_hash) = passwords::hash(&state.cpu, &form.password).await else { return failed() };
    let mut secret = [0u8; 20];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    // An enrollment that never proved its authenticator is started again on the same account.
    let account_id = staged.map_or_else(|| fiscus_domain::ids::new_id("acc"), |a| a.id);
    let Some(sealed) = SecretBox::new(&state.server_key).seal(&secret, &account_id) else { return failed() };
    let saved = async {
        let mut tx = state.store.begin().await?;
        fiscus_store::operators::stage_account(
            &mut tx,
            &op.workspace_id,
            &op.id,
            &account_id,
            &op.email,
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
    let uri = crate::totp::otpauth_uri("Fiscus", &op.email, &secret);
    page(
        "Enroll: second factor",
        None,
        &format!(
            "<p>Add this account to your authenticator app, then enter the code it shows.</p>\
             <p>Secret: <code id=\"totp-secret\">{}</code></p><p class=\"muted\">URI: <code>{}</code></p>\
             <form method=\"post\" action=\"/console/enroll/confirm\"><input type=\"hidden\" name=\"token\" value=\"{}\">\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Finish enrollment</button></form>",
            crate::totp::base32(&secret),
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
    let account = match op.account_id.as_deref() {
        Some(id) => {
            let Ok(mut conn) = state.store.read().await else { return failed() };
            fiscus_store::operators::account(&mut conn, id).await.ok()
        }
        None => None,
    };
    let Some(account) = account.filter(|a| a.totp_confirmed == 0) else {
        return html::error_page(StatusCode::CONFLICT, "Enrollment", "Start again from the enrollment link.");
    };
    let secret = SecretBox::new(&state.server_key).open(&account.totp_secret, &account.id);
    let now = now_micros();
    let Some(step) = secret.and_then(|s| crate::totp::verify(&s, form.code.trim(), now / MICROS_PER_SECOND, None))
    else {
        return html::error_page(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Enrollment",
            "That code is not right. Go back and try the current code.",
        );
    };
    let saved = async {
        let mut tx = state.store.begin().await?;
        fiscus_store::operators::activate(&mut tx, &op.workspace_id, &op.id, &account.id, step, now).await?;
        super::audit(
            &mut tx,
            &op.workspace_id,
            &op.id,
            Change::ConsoleEnrolled,
            serde_json::json!({ "role": op.role.as_str() }),
        )
        .await?;
        tx.commit().await
    }
    .await;
    if saved.is_err() {
        return failed();
    }
    html::redirect("/console/login?enrolled=1")
}

#[derive(Deserialize)]
pub struct JoinForm {
    token: String,
    password: String,
    code: String,
}

/// A person who already signs in to Fiscus joins the inviting workspace with that sign-in: their password and
/// a current code (spent like a sign-in's; a wrong one counts against the account like a failed sign-in).
pub async fn join(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<JoinForm>) -> Response {
    let op = match invited(&state, &form.token).await {
        Ok(op) => op,
        Err(r) => return r,
    };
    let account = match existing_account(&state, &op.email).await {
        Ok(Some(a)) => a,
        Ok(None) => return password_form(&op, &form.token, None),
        Err(r) => return r,
    };
    let now = now_micros();
    let refused = "Those details do not match your sign-in, or it is locked for a while.";
    if account.locked_until.is_some_and(|until| until > now) {
        passwords::verify_dummy(&state.cpu, &form.password).await;
        return join_form(&op, &form.token, Some(refused));
    }
    let step = passwords::verify(&state.cpu, &form.password, &account.password_hash)
        .await
        .then(|| SecretBox::new(&state.server_key).open(&account.totp_secret, &account.id))
        .flatten()
        .and_then(|s| crate::totp::verify(&s, form.code.trim(), now / MICROS_PER_SECOND, account.totp_last_step));
    let Ok(mut tx) = state.store.begin().await else { return failed() };
    let Some(step) = step else {
        super::login::count_failure(&state, &mut tx, &account, now).await;
        let _ = tx.commit().await;
        return join_form(&op, &form.token, Some(refused));
    };
    let saved = async {
        fiscus_store::operators::activate(&mut tx, &op.workspace_id, &op.id, &account.id, step, now).await?;
        super::audit(
            &mut tx,
            &op.workspace_id,
            &op.id,
            Change::ConsoleEnrolled,
            serde_json::json!({ "role": op.role.as_str(), "joined_existing_sign_in": true }),
        )
        .await?;
        tx.commit().await
    }
    .await;
    match saved {
        Ok(()) => html::redirect("/console/login?enrolled=1"),
        Err(fiscus_store::StoreError::Conflict(_)) => join_form(&op, &form.token, Some(refused)),
        Err(_) => failed(),
    }
}
