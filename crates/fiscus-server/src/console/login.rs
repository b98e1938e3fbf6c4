//! Sign-in with password and TOTP, lockout with back-off, sign-out.

use crate::http::form::ConsoleForm;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, SecretKind};
use serde::Deserialize;

use super::html::{self, escape, page};
use super::passwords;
use super::session::{self, OperatorSession};
use crate::secret_box::SecretBox;
use crate::state::AppState;

#[derive(Deserialize)]
pub struct LoginQuery {
    workspace: Option<String>,
}

pub async fn login_page(Query(q): Query<LoginQuery>) -> Response {
    login_form(q.workspace.as_deref().unwrap_or(""), "", None)
}

fn login_form(workspace: &str, email: &str, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let mut response = page(
        "Sign in",
        None,
        &format!(
            "{error}<form method=\"post\" action=\"/console/login\">\
             <label>Workspace <input type=\"text\" name=\"workspace\" value=\"{}\" required></label>\
             <label>E-mail <input type=\"email\" name=\"email\" value=\"{}\" autocomplete=\"username\" required></label>\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Sign in</button></form>",
            escape(workspace),
            escape(email)
        ),
    );
    if error.is_empty() {
        return response;
    }
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
}

#[derive(Deserialize)]
pub struct LoginForm {
    workspace: String,
    email: String,
    password: String,
    code: String,
}

const GENERIC_FAILURE: &str = "Those details do not match an active operator, or the account is locked for a while.";

pub async fn login(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<LoginForm>) -> Response {
    match attempt(&state, &form).await {
        Ok(cookie) => {
            let mut response = html::redirect("/console");
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, v);
            }
            response
        }
        Err(message) => login_form(&form.workspace, &form.email, Some(message)),
    }
}

/// Returns the session cookie, or the message to show. Every failure looks the same from outside.
async fn attempt(state: &AppState, form: &LoginForm) -> Result<String, &'static str> {
    let now = now_micros();
    let email = form.email.trim().to_ascii_lowercase();
    let mut conn = state.store.read().await.map_err(|_| "The database does not answer; try again.")?;
    let operator = fiscus_store::operators::find_for_login(&mut conn, form.workspace.trim(), &email)
        .await
        .map_err(|_| "The database does not answer; try again.")?;
    drop(conn);
    let Some(op) = operator else {
        passwords::verify_dummy(&form.password);
        return Err(GENERIC_FAILURE);
    };
    if op.status != "active" || op.locked_until.is_some_and(|until| until > now) {
        passwords::verify_dummy(&form.password);
        return Err(GENERIC_FAILURE);
    }
    let password_ok = op.password_hash.as_deref().is_some_and(|h| passwords::verify(&form.password, h));
    let secret = op.totp_secret.as_deref().and_then(|s| SecretBox::new(&state.server_key).open(s, &op.id));
    let step = match (&secret, password_ok) {
        (Some(secret), true) => {
            fiscus_domain::totp::verify(secret, form.code.trim(), now / MICROS_PER_SECOND, op.totp_last_step)
        }
        _ => None,
    };
    let Ok(mut tx) = state.store.begin().await else { return Err("The database does not answer; try again.") };
    let Some(step) = step else {
        let failures = op.failed_attempts + 1;
        let max = i64::from(state.settings.console_max_failures);
        // Past the threshold, each further failure doubles the lock: 1, 2, 4 … minutes, at most a day.
        let locked_until = (failures >= max).then(|| {
            let minutes = 1i64 << (failures - max).min(10);
            now + minutes.min(24 * 60) * 60 * MICROS_PER_SECOND
        });
        let _ = fiscus_store::operators::record_failure(&mut tx, &op.workspace_id, &op.id, locked_until, now).await;
        let _ = super::audit(
            &mut tx,
            &op.workspace_id,
            &op.id,
            "console.login_failed",
            serde_json::json!({ "failures": failures, "locked": locked_until.is_some() }),
        )
        .await;
        let _ = tx.commit().await;
        return Err(GENERIC_FAILURE);
    };
    if fiscus_store::operators::record_success(&mut tx, &op.workspace_id, &op.id, step, now).await.is_err() {
        return Err(GENERIC_FAILURE);
    }
    let minted = credentials::mint(SecretKind::SessionToken);
    let csrf = credentials::mint(SecretKind::SessionToken).full;
    let session_id = fiscus_domain::ids::new_id("ses");
    let absolute = state.settings.console_absolute_seconds;
    let created = fiscus_store::operators::insert_session(
        &mut tx,
        &fiscus_store::operators::NewSession {
            id: &session_id,
            workspace_id: &op.workspace_id,
            operator_id: &op.id,
            token_hash: &credentials::keyed_hash(&state.server_key, &minted.full),
            csrf_token: &csrf,
            now,
            expires_at: now + absolute as i64 * MICROS_PER_SECOND,
        },
    )
    .await;
    if created.is_err()
        || super::audit(
            &mut tx,
            &op.workspace_id,
            &op.id,
            "console.login",
            serde_json::json!({ "session_id": session_id }),
        )
        .await
        .is_err()
    {
        return Err("The database does not answer; try again.");
    }
    tx.commit().await.map_err(|_| "The database does not answer; try again.")?;
    Ok(session::set_cookie(&minted.full, absolute))
}

#[derive(Deserialize)]
pub struct CsrfForm {
    csrf: String,
}

pub async fn logout(
    State(state): State<AppState>,
    operator: OperatorSession,
    ConsoleForm(form): ConsoleForm<CsrfForm>,
) -> Response {
    if let Err(refused) = operator.check_csrf(&form.csrf) {
        return refused;
    }
    if let Ok(mut tx) = state.store.begin().await {
        let _ = fiscus_store::operators::revoke_session(
            &mut tx,
            &operator.workspace_id,
            &operator.session_id,
            now_micros(),
        )
        .await;
        let _ = tx.commit().await;
    }
    let mut response = html::redirect("/console/login");
    if let Ok(v) = HeaderValue::from_str(&session::clear_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}
