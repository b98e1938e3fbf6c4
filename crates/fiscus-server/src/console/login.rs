//! Sign-in with password and TOTP, lockout with back-off, sign-out.

use crate::http::form::ConsoleForm;
use axum::extract::State;
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

pub async fn login_page() -> Response {
    login_form("", None)
}

fn login_form(email: &str, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let mut response = page(
        "Sign in",
        None,
        &format!(
            "{error}<form method=\"post\" action=\"/console/login\">\
             <label>E-mail <input type=\"email\" name=\"email\" value=\"{}\" autocomplete=\"username\" required></label>\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Sign in</button></form>",
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
    email: String,
    password: String,
    code: String,
}

const GENERIC_FAILURE: &str = "Those details do not match an active operator, or the account is locked for a while.";
const UNAVAILABLE: &str = "The database does not answer; try again.";
/// How long the workspace picker's ticket is good for.
const PICK_SECONDS: i64 = 120;

fn signed_in(cookie: &str) -> Response {
    let mut response = html::redirect("/console");
    if let Ok(v) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// Sign-in by e-mail: the identities of that e-mail whose password and code verify. One opens its session at
/// once; several (the same person in several workspaces) are offered by workspace name.
pub async fn login(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<LoginForm>) -> Response {
    match attempt(&state, &form).await {
        Ok(verified) => match verified.as_slice() {
            [(op, _)] => match open_session(&state, &op.workspace_id, &op.id).await {
                Ok(cookie) => signed_in(&cookie),
                Err(message) => login_form(&form.email, Some(message)),
            },
            _ => picker(&state, &verified),
        },
        Err(message) => login_form(&form.email, Some(message)),
    }
}

type Verified = Vec<(fiscus_store::operators::OperatorRow, String)>;

/// The identities whose password and code verify (at least one), or the message to show. Every failure looks
/// the same from outside; each identity that did not verify counts a failure (and its lock) of its own.
async fn attempt(state: &AppState, form: &LoginForm) -> Result<Verified, &'static str> {
    let now = now_micros();
    let email = form.email.trim().to_ascii_lowercase();
    let mut conn = state.store.read().await.map_err(|_| UNAVAILABLE)?;
    let candidates = fiscus_store::operators::find_for_login(&mut conn, &email).await.map_err(|_| UNAVAILABLE)?;
    drop(conn);
    if candidates.is_empty() {
        passwords::verify_dummy(&form.password);
        return Err(GENERIC_FAILURE);
    }
    // Each identity of the e-mail has its own password and authenticator; the ones both verify for are
    // signed in to. Only when none does is the attempt a failure, counted against each active identity (so a
    // person's sign-in to one workspace never counts against their identity in another).
    let mut verified = Vec::new();
    let mut refused = Vec::new();
    for (op, name) in candidates {
        if op.status != "active" || op.locked_until.is_some_and(|until| until > now) {
            passwords::verify_dummy(&form.password);
            continue;
        }
        let password_ok = op.password_hash.as_deref().is_some_and(|h| passwords::verify(&form.password, h));
        let secret = op.totp_secret.as_deref().and_then(|s| SecretBox::new(&state.server_key).open(s, &op.id));
        let step = match (&secret, password_ok) {
            (Some(secret), true) => {
                fiscus_domain::totp::verify(secret, form.code.trim(), now / MICROS_PER_SECOND, op.totp_last_step)
            }
            _ => None,
        };
        match step {
            Some(step) => verified.push((op, name, step)),
            None => refused.push(op),
        }
    }
    let Ok(mut tx) = state.store.begin().await else { return Err(UNAVAILABLE) };
    for (op, _, step) in &verified {
        // The code is spent for this identity, whichever workspace is picked.
        fiscus_store::operators::record_success(&mut tx, &op.workspace_id, &op.id, *step, now)
            .await
            .map_err(|_| UNAVAILABLE)?;
    }
    if verified.is_empty() {
        for op in &refused {
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
        }
    }
    tx.commit().await.map_err(|_| UNAVAILABLE)?;
    if verified.is_empty() {
        return Err(GENERIC_FAILURE);
    }
    Ok(verified.into_iter().map(|(op, name, _)| (op, name)).collect())
}

/// Opens a session for the operator and returns its cookie.
async fn open_session(state: &AppState, workspace_id: &str, operator_id: &str) -> Result<String, &'static str> {
    let now = now_micros();
    let Ok(mut tx) = state.store.begin().await else { return Err(UNAVAILABLE) };
    let minted = credentials::mint(SecretKind::SessionToken);
    let csrf = credentials::mint(SecretKind::SessionToken).full;
    let session_id = fiscus_domain::ids::new_id("ses");
    let absolute = state.settings.console_absolute_seconds;
    let created = fiscus_store::operators::insert_session(
        &mut tx,
        &fiscus_store::operators::NewSession {
            id: &session_id,
            workspace_id,
            operator_id,
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
            workspace_id,
            operator_id,
            "console.login",
            serde_json::json!({ "session_id": session_id }),
        )
        .await
        .is_err()
    {
        return Err(UNAVAILABLE);
    }
    tx.commit().await.map_err(|_| UNAVAILABLE)?;
    Ok(session::set_cookie(&minted.full, absolute))
}

/// The picker's ticket: which identities verified, until when, under the server key's MAC, so that any node
/// can open the session the person picks and nobody can add an identity to it.
fn ticket(server_key: &[u8], identities: &[(String, String)], expires: i64) -> String {
    let list = identities.iter().map(|(ws, op)| format!("{ws}:{op}")).collect::<Vec<_>>().join(",");
    let payload = format!("{expires}.{list}");
    let mac = credentials::keyed_hash(server_key, &format!("console-workspace-pick\n{payload}"));
    format!("{payload}.{mac}")
}

/// The identities a ticket names, if its MAC is the server's and it has not expired.
fn redeem(server_key: &[u8], ticket: &str, now: i64) -> Option<Vec<(String, String)>> {
    let (payload, mac) = ticket.rsplit_once('.')?;
    let expected = credentials::keyed_hash(server_key, &format!("console-workspace-pick\n{payload}"));
    if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), mac.as_bytes())) {
        return None;
    }
    let (expires, list) = payload.split_once('.')?;
    if expires.parse::<i64>().ok()? < now {
        return None;
    }
    list.split(',').map(|pair| pair.split_once(':').map(|(w, o)| (w.to_string(), o.to_string()))).collect()
}

/// The workspaces a person signed in to, by name.
fn picker(state: &AppState, verified: &Verified) -> Response {
    let identities: Vec<(String, String)> =
        verified.iter().map(|(o, _)| (o.workspace_id.clone(), o.id.clone())).collect();
    let t = ticket(&state.server_key, &identities, now_micros() + PICK_SECONDS * MICROS_PER_SECOND);
    let mut choices = String::new();
    for (op, name) in verified {
        choices.push_str(&format!(
            "<li><form method=\"post\" action=\"/console/login/workspace\">\
             <input type=\"hidden\" name=\"ticket\" value=\"{t}\"><input type=\"hidden\" name=\"operator\" value=\"{id}\">\
             <button type=\"submit\">{name}</button> <span class=\"muted\">as {role}</span></form></li>",
            t = escape(&t),
            id = escape(&op.id),
            name = escape(name),
            role = escape(&op.role),
        ));
    }
    page(
        "Choose a workspace",
        None,
        &format!(
            "<p>You are an operator of several workspaces. Which one do you want to work in?</p><ul class=\"choices\">{choices}</ul>"
        ),
    )
}

#[derive(Deserialize)]
pub struct PickForm {
    ticket: String,
    operator: String,
}

/// The workspace a person picked after signing in.
pub async fn pick(State(state): State<AppState>, ConsoleForm(form): ConsoleForm<PickForm>) -> Response {
    let Some(identities) = redeem(&state.server_key, &form.ticket, now_micros()) else {
        return login_form("", Some("That choice has expired; sign in again."));
    };
    let Some((workspace_id, operator_id)) = identities.into_iter().find(|(_, o)| *o == form.operator) else {
        return login_form("", Some("That choice has expired; sign in again."));
    };
    match open_session(&state, &workspace_id, &operator_id).await {
        Ok(cookie) => signed_in(&cookie),
        Err(message) => login_form("", Some(message)),
    }
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

#[cfg(test)]
mod tests {
    use super::{redeem, ticket};

    #[test]
    fn a_pick_ticket_names_only_what_signed_in_until_it_expires() {
        let key = [7u8; 32];
        let who = vec![("wsp_a".to_string(), "opr_a".to_string()), ("wsp_b".to_string(), "opr_b".to_string())];
        let t = ticket(&key, &who, 1_000);
        assert_eq!(redeem(&key, &t, 999), Some(who.clone()));
        assert_eq!(redeem(&key, &t, 1_001), None, "expired");
        assert_eq!(redeem(&[8u8; 32], &t, 999), None, "another server's key");
        let widened = t.replacen("wsp_b:opr_b", "wsp_c:opr_c", 1);
        assert_eq!(redeem(&key, &widened, 999), None, "an identity added");
        let later = t.replacen("1000.", "9000.", 1);
        assert_eq!(redeem(&key, &later, 999), None, "a longer life");
    }
}
