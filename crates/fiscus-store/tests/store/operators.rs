//! Operators and their sessions: invitations, enrolment, second factors, lock-outs, time zones, one e-mail per
//! workspace, and sessions touched and revoked in their workspace only.

use crate::helpers::*;
use fiscus_domain::people::Role;
use fiscus_store::{Store, StoreError, operators};

/// An invited operator; returns its id and enrollment token hash.
async fn invite(db: &Store, ws: &str, email: &str) -> (String, String) {
    let id = fiscus_domain::ids::new_id("opr");
    let token = fiscus_domain::ids::new_id("enr");
    let mut tx = db.begin().await.expect("begin");
    operators::insert_invited(&mut tx, ws, &id, email, Role::Approver, &token, NOW + 1_000, NOW).await.expect("invite");
    tx.commit().await.expect("commit");
    (id, token)
}

/// Enrolls a person new to Fiscus: their account is staged, then confirmed with the identity; returns it.
async fn enroll(db: &Store, ws: &str, id: &str) -> String {
    let account = fiscus_domain::ids::new_id("acc");
    let email = {
        let mut conn = db.read().await.expect("conn");
        operators::get(&mut conn, ws, id).await.expect("operator").email
    };
    let mut tx = db.begin().await.expect("begin");
    operators::stage_account(&mut tx, ws, id, &account, &email, "argon2-hash", "sealed-totp", NOW + 1)
        .await
        .expect("credentials");
    operators::activate(&mut tx, ws, id, &account, 100, NOW + 2).await.expect("activate");
    tx.commit().await.expect("commit");
    account
}

async fn session(db: &Store, ws: &str, operator: &str) -> (String, String) {
    let id = fiscus_domain::ids::new_id("ses");
    let token = fiscus_domain::ids::new_id("tkh");
    let mut tx = db.begin().await.expect("begin");
    operators::insert_session(
        &mut tx,
        &operators::NewSession {
            id: &id,
            workspace_id: ws,
            operator_id: operator,
            token_hash: &token,
            csrf_token: "csrf",
            now: NOW,
            expires_at: NOW + 10,
        },
    )
    .await
    .expect("session");
    tx.commit().await.expect("commit");
    (id, token)
}

#[tokio::test]
async fn an_invited_operator_is_found_by_enrollment_whoever_asks() {
    // The documented exception: the enrollment token is how the console learns the workspace.
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, token) = invite(&db, &ws, "a@example.com").await;
    let mut conn = db.read().await.expect("conn");
    let row = operators::find_by_enrollment(&mut conn, &token).await.expect("find").expect("found");
    assert_eq!(
        (row.id.as_str(), row.workspace_id.as_str(), row.status.as_str(), row.role.as_str()),
        (id.as_str(), ws.as_str(), "invited", "approver")
    );
    assert_eq!(row.enrollment_expires_at, Some(NOW + 1_000));
    assert!(operators::find_by_enrollment(&mut conn, "enr_unknown").await.expect("find").is_none());
}

#[tokio::test]
async fn enrollment_stages_an_account_then_activates_and_spends_the_token() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, token) = invite(&db, &ws, "a@example.com").await;
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(operators::activate(&mut tx, &ws, &id, "acc_none", 100, NOW).await);
    drop(tx);
    let account = enroll(&db, &ws, &id).await;
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!(
        (row.status.as_str(), row.totp_confirmed, row.account_id.as_deref()),
        ("active", 1, Some(account.as_str()))
    );
    let a = operators::account(&mut conn, &account).await.expect("account");
    assert_eq!(
        (a.password_hash.as_str(), a.totp_secret.as_str(), a.totp_last_step),
        ("argon2-hash", "sealed-totp", Some(100))
    );
    assert_eq!((a.email.as_str(), a.time_zone.as_str()), ("a@example.com", "UTC"));
    assert_eq!(
        operators::account_by_email(&mut conn, "a@example.com").await.expect("find").map(|a| a.id),
        Some(account.clone())
    );
    assert!(operators::find_by_enrollment(&mut conn, &token).await.expect("find").is_none(), "token spent");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(
        operators::stage_account(&mut tx, &ws, &id, &account, "a@example.com", "again", "again", NOW).await,
    );
}

#[tokio::test]
async fn a_confirmed_sign_in_is_never_staged_over_and_a_second_workspace_joins_it() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (first, _) = invite(&db, &ws, "a@example.com").await;
    let account = enroll(&db, &ws, &first).await;
    let (second, _) = invite(&db, &other, "a@example.com").await;
    let mut tx = db.begin().await.expect("begin");
    let fresh = fiscus_domain::ids::new_id("acc");
    assert_conflict(operators::stage_account(&mut tx, &other, &second, &fresh, "a@example.com", "x", "y", NOW).await);
    assert_conflict(operators::stage_account(&mut tx, &other, &second, &account, "a@example.com", "x", "y", NOW).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    operators::activate(&mut tx, &other, &second, &account, 101, NOW + 3).await.expect("join");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let a = operators::account(&mut conn, &account).await.expect("account");
    assert_eq!((a.password_hash.as_str(), a.totp_last_step), ("argon2-hash", Some(101)), "credentials unchanged");
    let member_of: Vec<String> = operators::memberships(&mut conn, &account)
        .await
        .expect("memberships")
        .into_iter()
        .map(|(o, _)| o.workspace_id)
        .collect();
    assert_eq!(member_of.len(), 2);
    assert!(member_of.contains(&ws) && member_of.contains(&other));
}

#[tokio::test]
async fn an_unconfirmed_enrollment_is_started_again_on_the_same_account() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    let account = fiscus_domain::ids::new_id("acc");
    for secret in ["first", "second"] {
        let mut tx = db.begin().await.expect("begin");
        operators::stage_account(&mut tx, &ws, &id, &account, "a@example.com", "hash", secret, NOW)
            .await
            .expect("stage");
        tx.commit().await.expect("commit");
    }
    let mut conn = db.read().await.expect("conn");
    let a = operators::account(&mut conn, &account).await.expect("account");
    assert_eq!((a.totp_secret.as_str(), a.totp_confirmed), ("second", 0));
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.status.as_str(), row.totp_confirmed), ("invited", 0));
}

#[tokio::test]
async fn enrollment_of_another_workspaces_operator_is_not_found_and_changes_nothing() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    let account = fiscus_domain::ids::new_id("acc");
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(
        operators::stage_account(&mut tx, &other, &id, &account, "a@example.com", "evil", "evil", NOW).await,
    );
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    operators::stage_account(&mut tx, &ws, &id, &account, "a@example.com", "argon2-hash", "sealed-totp", NOW)
        .await
        .expect("credentials");
    tx.commit().await.expect("commit");
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(operators::activate(&mut tx, &other, &id, &account, 1, NOW).await);
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.status.as_str(), row.account_id.as_deref()), ("invited", Some(account.as_str())));
}

#[tokio::test]
async fn operators_are_read_within_their_workspace_only() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (a, _) = invite(&db, &ws, "a@example.com").await;
    let (b, _) = invite(&db, &ws, "b@example.com").await;
    invite(&db, &other, "b@example.com").await;
    let mut conn = db.read().await.expect("conn");
    assert!(operators::account_by_email(&mut conn, "b@example.com").await.expect("find").is_none(), "not enrolled");
    assert_eq!(operators::get(&mut conn, &ws, &a).await.expect("get").email, "a@example.com");
    assert_not_found(operators::get(&mut conn, &other, &a).await);
    let ids: Vec<String> = operators::list(&mut conn, &ws).await.expect("list").into_iter().map(|o| o.id).collect();
    assert_eq!(ids, vec![a, b]);
    assert_eq!(operators::list(&mut conn, &other).await.expect("list").len(), 1);
}

#[tokio::test]
async fn an_email_is_one_operator_per_workspace() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    invite(&db, &ws, "a@example.com").await;
    let other = workspace(&db).await;
    invite(&db, &other, "a@example.com").await;
    let mut tx = db.begin().await.expect("begin");
    let result =
        operators::insert_invited(&mut tx, &ws, "opr_dup", "a@example.com", Role::Admin, "enr_dup", NOW, NOW).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
}

#[tokio::test]
async fn failures_count_and_lock_and_a_success_clears_them_once_per_step() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    let account = enroll(&db, &ws, &id).await;
    let mut tx = db.begin().await.expect("begin");
    operators::record_failure(&mut tx, &account, None, NOW).await.expect("failure");
    operators::record_failure(&mut tx, &account, Some(NOW + 60), NOW).await.expect("failure");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let a = operators::account(&mut conn, &account).await.expect("get");
    assert_eq!((a.failed_attempts, a.locked_until), (2, Some(NOW + 60)));
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    operators::record_success(&mut tx, &account, 101, NOW + 61).await.expect("success");
    assert_conflict(operators::record_success(&mut tx, &account, 101, NOW + 62).await);
    assert_conflict(operators::record_success(&mut tx, &account, 100, NOW + 62).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let a = operators::account(&mut conn, &account).await.expect("get");
    assert_eq!((a.failed_attempts, a.locked_until, a.totp_last_step), (0, None, Some(101)));
}

#[tokio::test]
async fn a_time_zone_is_the_account_s_and_sessions_read_it() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    let account = enroll(&db, &ws, &id).await;
    let (_, token) = session(&db, &ws, &id).await;
    let mut tx = db.begin().await.expect("begin");
    operators::set_time_zone(&mut tx, &account, "Europe/Paris", NOW).await.expect("zone");
    assert_not_found(operators::set_time_zone(&mut tx, "acc_unknown", "Europe/Paris", NOW).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let s = operators::resolve_session(&mut conn, &token).await.expect("resolve").expect("found");
    assert_eq!((s.account_id.as_deref(), s.time_zone.as_str()), (Some(account.as_str()), "Europe/Paris"));
}

#[tokio::test]
async fn a_session_resolves_by_token_whoever_asks_and_is_touched_and_revoked_in_its_workspace() {
    // resolve_session is a documented exception: the session cookie is how the console learns the workspace.
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (op, _) = invite(&db, &ws, "a@example.com").await;
    enroll(&db, &ws, &op).await;
    let (sid, token) = session(&db, &ws, &op).await;
    let mut conn = db.read().await.expect("conn");
    let s = operators::resolve_session(&mut conn, &token).await.expect("resolve").expect("found");
    assert_eq!(
        (s.id.as_str(), s.workspace_id.as_str(), s.operator_id.as_str()),
        (sid.as_str(), ws.as_str(), op.as_str())
    );
    assert_eq!(
        (s.email.as_str(), s.role.as_str(), s.operator_status.as_str()),
        ("a@example.com", "approver", "active")
    );
    assert_eq!(
        (s.csrf_token.as_str(), s.created_at, s.last_seen_at, s.expires_at, s.revoked_at),
        ("csrf", NOW, NOW, NOW + 10, None)
    );
    assert!(operators::resolve_session(&mut conn, "tkh_unknown").await.expect("resolve").is_none());
    operators::touch_session(&mut conn, &ws, &sid, NOW + 5).await.expect("touch");
    assert_eq!(
        operators::resolve_session(&mut conn, &token).await.expect("resolve").expect("found").last_seen_at,
        NOW + 5
    );
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    operators::revoke_session(&mut tx, &ws, &sid, NOW + 6).await.expect("revoke");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    operators::touch_session(&mut conn, &ws, &sid, NOW + 7).await.expect("touch");
    let s = operators::resolve_session(&mut conn, &token).await.expect("resolve").expect("found");
    assert_eq!((s.revoked_at, s.last_seen_at), (Some(NOW + 6), NOW + 5), "a revoked session is not touched");
}

#[tokio::test]
async fn touching_or_revoking_another_workspaces_session_changes_nothing() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (op, _) = invite(&db, &ws, "a@example.com").await;
    let (sid, token) = session(&db, &ws, &op).await;
    let mut conn = db.read().await.expect("conn");
    operators::touch_session(&mut conn, &other, &sid, NOW + 5).await.expect("touch");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    operators::revoke_session(&mut tx, &other, &sid, NOW + 6).await.expect("revoke");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let s = operators::resolve_session(&mut conn, &token).await.expect("resolve").expect("found");
    assert_eq!((s.last_seen_at, s.revoked_at), (NOW, None));
}

#[tokio::test]
async fn second_factor_coverage_counts_the_workspaces_operators_not_removed() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (a, _) = invite(&db, &ws, "a@example.com").await;
    invite(&db, &ws, "b@example.com").await;
    let (removed, _) = invite(&db, &ws, "c@example.com").await;
    enroll(&db, &ws, &a).await;
    exec(&db, "UPDATE operators SET status = 'removed' WHERE id = $1", &removed).await;
    invite(&db, &other, "z@example.com").await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(operators::second_factor_coverage(&mut conn, &ws).await.expect("coverage"), (2, 1));
    assert_eq!(operators::second_factor_coverage(&mut conn, &other).await.expect("coverage"), (1, 0));
    assert_eq!(operators::second_factor_coverage(&mut conn, "wsp_unknown").await.expect("coverage"), (0, 0));
}
