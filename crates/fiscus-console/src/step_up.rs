//! A fresh second factor for a weighty decision (a batch of them): the person's current authenticator code,
//! checked as a sign-in checks it and spent for their account, so one code confirms one thing. The session
//! alone says who is at the keyboard; the code says they are there now.

use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros};
use fiscus_http::AppState;
use fiscus_kernel::secret_box::SecretBox;

use super::html;
use super::session::OperatorSession;

fn not_confirmed() -> Response {
    html::error_page(
        StatusCode::FORBIDDEN,
        "Not confirmed",
        "That is not your authenticator's current code, or it was used already. Nothing was decided.",
    )
}

/// Confirms `code` for the signed-in person; the refusal is the page to show.
pub async fn confirm(state: &AppState, op: &OperatorSession, code: &str) -> Result<(), Response> {
    let unavailable = || {
        html::error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Unavailable",
            "The database does not answer. Nothing was decided.",
        )
    };
    let Some(account_id) = op.account_id.as_deref() else { return Err(not_confirmed()) };
    let account = {
        let mut conn = state.store.read().await.map_err(|_| unavailable())?;
        fiscus_store::operators::account(&mut conn, account_id).await.map_err(|_| unavailable())?
    };
    let now = now_micros();
    let step = SecretBox::new(&state.server_key)
        .open(&account.totp_secret, &account.id)
        .and_then(|secret| super::totp::verify(&secret, code.trim(), now / MICROS_PER_SECOND, account.totp_last_step));
    let Some(step) = step else { return Err(not_confirmed()) };
    let mut tx = state.store.begin().await.map_err(|_| unavailable())?;
    match fiscus_store::operators::record_success(&mut tx, account_id, step, now).await {
        Ok(()) => {}
        Err(fiscus_store::StoreError::Conflict(_)) => return Err(not_confirmed()),
        Err(_) => return Err(unavailable()),
    }
    tx.commit().await.map_err(|_| unavailable())
}
