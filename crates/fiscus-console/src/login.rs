//! Sign-in with password and TOTP, lockout with back-off, sign-out.

use crate::form::ConsoleForm;
use axum::Extension;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_domain::credentials::{self, SecretKind};
use serde::Deserialize;
use std::net::SocketAddr;

use super::html::{self, escape, page};
use super::passwords;
use super::session::{self, OperatorSession};
use fiscus_http::AppState;
use fiscus_kernel::secret_box::SecretBox;

#[derive(Deserialize)]
pub struct LoginQuery {
    enrolled: Option<String>,
}

/// The sign-in form; after enrollment (`?enrolled`), with a word that it worked.
pub async fn login_page(axum::extract::Query(q): axum::extract::Query<LoginQuery>) -> Response {
    let notice = if q.enrolled.is_some() {
        "<p class=\"flash\" role=\"status\">You are enrolled. Sign in with your e-mail, password and a new code.</p>"
    } else {
        ""
    };
    login_markup("", notice)
}

fn login_form(email: &str, error: Option<&str>) -> Response {
    let message = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let mut response = login_markup(email, &message);
    if error.is_some() {
        *response.status_mut() = StatusCode::UNAUTHORIZED;
    }
    response
}

fn login_markup(email: &str, message: &str) -> Response {
    page(
        "Sign in",
        None,
        &format!(
            "{message}<form method=\"post\" action=\"/console/login\">\
             <label>E-mail <input type=\"email\" name=\"email\" value=\"{}\" autocomplete=\"username\" required></label>\
             <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
             <label>Authenticator code <input type=\"text\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" required></label>\
             <button type=\"submit\">Sign in</button></form>",
            escape(email)
        ),
    )
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

/// Sign-in by e-mail: the person's one account, then the workspaces it is an operator of. One opens its
/// session at once; several are offered by workspace name.
pub async fn login(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    ConsoleForm(form): ConsoleForm<LoginForm>,
) -> Response {
    if let Some(wait) = throttled(&state, peer.map(|Extension(ConnectInfo(p))| p.ip()), &form.email) {
        let mut response = login_form(&form.email, Some(&format!("Too many sign-in attempts; try again in {wait} s.")));
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        if let Ok(v) = HeaderValue::from_str(&wait.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return response;
    }
    match attempt(&state, &form).await {
        Ok(memberships) => match memberships.as_slice() {
            [(op, _)] => match open_session(&state, &op.workspace_id, &op.id).await {
                Ok(cookie) => signed_in(&cookie),
                Err(message) => login_form(&form.email, Some(message)),
            },
            _ => picker(&state, &memberships),
        },
        Err(message) => login_form(&form.email, Some(message)),
    }
}

/// Counts a sign-in attempt against its network address and its e-mail address (whether or not an account
/// has it), before any password is hashed: guessing in a loop, or flooding the service with hashes to
/// compute, is slowed per address and per e-mail alike. The account's own lock still applies on top. Returns
/// the seconds to wait when either is spent.
fn throttled(state: &AppState, ip: Option<std::net::IpAddr>, email: &str) -> Option<u64> {
    let now = (now_micros() / MICROS_PER_SECOND) as u64;
    let spent = |bucket: String, class| {
        let d = state.http.rate_limiter.check(&bucket, class, now);
        (!d.allowed).then_some(d.reset_in.max(1))
    };
    // The address first: an address already throttled adds nothing more to count.
    if let Some(ip) = ip
        && let Some(wait) = spent(
            format!("sign-in-address:{}", fiscus_http::standing::network_of(ip)),
            &state.settings.sign_in_attempts_per_address,
        )
    {
        return Some(wait);
    }
    // Keyed by a hash of the e-mail, so a key never grows with what a client sends.
    let email = fiscus_domain::evidence::seal_bytes(email.trim().to_ascii_lowercase().as_bytes());
    spent(format!("sign-in-email:{email}"), &state.settings.sign_in_attempts_per_email)
}

type Memberships = Vec<(fiscus_store::operators::OperatorRow, String)>;

/// The active memberships (at least one) of the account whose password and code verify, or the message to
/// show. Every failure looks the same from outside; a failure counts against the account (and its lock) and
/// is written to the audit trail of each workspace it could have opened.
async fn attempt(state: &AppState, form: &LoginForm) -> Result<Memberships, &'static str> {
    let now = now_micros();
    let email = form.email.trim().to_ascii_lowercase();
    let mut conn = state.store.read().await.map_err(|_| UNAVAILABLE)?;
    let account = fiscus_store::operators::account_by_email(&mut conn, &email).await.map_err(|_| UNAVAILABLE)?;
    let Some(account) = account.filter(|a| a.totp_confirmed == 1) else {
        passwords::verify_dummy(&state.cpu, &form.password).await;
        return Err(GENERIC_FAILURE);
    };
    let memberships = fiscus_store::operators::memberships(&mut conn, &account.id).await.map_err(|_| UNAVAILABLE)?;
    drop(conn);
    if memberships.is_empty() || account.locked_until.is_some_and(|until| until > now) {
        passwords::verify_dummy(&state.cpu, &form.password).await;
        return Err(GENERIC_FAILURE);
    }
    let step = passwords::verify(&state.cpu, &form.password, &account.password_hash)
        .await
        .then(|| SecretBox::new(&state.server_key).open(&account.totp_secret, &account.id))
        .flatten()
        .and_then(|secret| {
            crate::totp::verify(&secret, form.code.trim(), now / MICROS_PER_SECOND, account.totp_last_step)
        });
    let Ok(mut tx) = state.store.begin().await else { return Err(UNAVAILABLE) };
    let Some(step) = step else {
        let (failures, locked_until) = count_failure(state, &mut tx, &account, now).await;
        for (op, _) in &memberships {
            let _ = super::audit(
                &mut tx,
                &op.workspace_id,
                &op.id,
                Change::ConsoleLoginFailed,
                serde_json::json!({ "failures": failures, "locked": locked_until.is_some() }),
            )
            .await;
        }
        let _ = tx.commit().await;
        return Err(GENERIC_FAILURE);
    };
    // The code is spent for the account, whichever workspace is picked; a code spent meanwhile is refused.
    match fiscus_store::operators::record_success(&mut tx, &account.id, step, now).await {
        Ok(()) => {}
        Err(fiscus_store::StoreError::Conflict(_)) => return Err(GENERIC_FAILURE),
        Err(_) => return Err(UNAVAILABLE),
    }
    tx.commit().await.map_err(|_| UNAVAILABLE)?;
    Ok(memberships)
}

/// Counts a failed proof of the account's password and code (a sign-in, or joining a workspace): past the
/// threshold, each further failure doubles the lock: 1, 2, 4 … minutes, at most a day. Returns the count and
/// the lock.
pub(super) async fn count_failure(
    state: &AppState,
    tx: &mut fiscus_store::WriteTx,
    account: &fiscus_store::operators::AccountRow,
    now: i64,
) -> (i64, Option<i64>) {
    let failures = account.failed_attempts + 1;
    let max = i64::from(state.settings.console_max_failures);
    let locked_until = (failures >= max).then(|| {
        let minutes = 1i64 << (failures - max).min(10);
        now + minutes.min(24 * 60) * 60 * MICROS_PER_SECOND
    });
    let _ = fiscus_store::operators::record_failure(tx, &account.id, locked_until, now).await;
    (failures, locked_until)
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
            Change::ConsoleLogin,
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
fn picker(state: &AppState, verified: &Memberships) -> Response {
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
            role = op.role.as_str(),
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
