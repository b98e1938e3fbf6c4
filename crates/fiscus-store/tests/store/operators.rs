use crate::helpers::*;
use fiscus_store::{Store, StoreError, operators};

/// An invited operator; returns its id and enrollment token hash.
async fn invite(db: &Store, ws: &str, email: &str) -> (String, String) {
    let id = fiscus_domain::ids::new_id("opr");
    let token = fiscus_domain::ids::new_id("enr");
    let mut tx = db.begin().await.expect("begin");
    operators::insert_invited(&mut tx, ws, &id, email, "approver", &token, NOW + 1_000, NOW).await.expect("invite");
    tx.commit().await.expect("commit");
    (id, token)
}

async fn enroll(db: &Store, ws: &str, id: &str) {
    let mut tx = db.begin().await.expect("begin");
    operators::set_credentials(&mut tx, ws, id, "argon2-hash", "sealed-totp", NOW + 1).await.expect("credentials");
    operators::activate(&mut tx, ws, id, 100, NOW + 2).await.expect("activate");
    tx.commit().await.expect("commit");
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
async fn enrollment_sets_credentials_then_activates_and_spends_the_token() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, token) = invite(&db, &ws, "a@example.com").await;
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(operators::activate(&mut tx, &ws, &id, 100, NOW).await);
    tx.commit().await.expect("commit");
    enroll(&db, &ws, &id).await;
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.status.as_str(), row.totp_confirmed, row.totp_last_step), ("active", 1, Some(100)));
    assert_eq!((row.password_hash.as_deref(), row.totp_secret.as_deref()), (Some("argon2-hash"), Some("sealed-totp")));
    assert!(operators::find_by_enrollment(&mut conn, &token).await.expect("find").is_none(), "token spent");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(operators::set_credentials(&mut tx, &ws, &id, "again", "again", NOW).await);
    assert_not_found(operators::activate(&mut tx, &ws, &id, 101, NOW).await);
}

#[tokio::test]
async fn enrollment_of_another_workspaces_operator_is_not_found_and_changes_nothing() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(operators::set_credentials(&mut tx, &other, &id, "evil", "evil", NOW).await);
    tx.commit().await.expect("commit");
    let mut tx = db.begin().await.expect("begin");
    operators::set_credentials(&mut tx, &ws, &id, "argon2-hash", "sealed-totp", NOW).await.expect("credentials");
    assert_not_found(operators::activate(&mut tx, &other, &id, 1, NOW).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.status.as_str(), row.password_hash.as_deref()), ("invited", Some("argon2-hash")));
}

#[tokio::test]
async fn operators_are_read_within_their_workspace_only() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (a, _) = invite(&db, &ws, "a@example.com").await;
    let (b, _) = invite(&db, &ws, "b@example.com").await;
    let (b_elsewhere, _) = invite(&db, &other, "b@example.com").await;
    let mut conn = db.read().await.expect("conn");
    // Sign-in finds an e-mail's identity in every workspace, each with its own credentials.
    let found: Vec<(String, String)> = operators::find_for_login(&mut conn, "b@example.com")
        .await
        .expect("find")
        .into_iter()
        .map(|(o, _)| (o.id, o.workspace_id))
        .collect();
    assert_eq!(found.len(), 2);
    assert!(found.contains(&(b.clone(), ws.clone())) && found.contains(&(b_elsewhere, other.clone())));
    assert!(operators::find_for_login(&mut conn, "c@example.com").await.expect("find").is_empty());
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
        operators::insert_invited(&mut tx, &ws, "opr_dup", "a@example.com", "admin", "enr_dup", NOW, NOW).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))), "{result:?}");
}

#[tokio::test]
async fn failures_count_and_lock_and_a_success_clears_them_once_per_step() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    enroll(&db, &ws, &id).await;
    let mut tx = db.begin().await.expect("begin");
    operators::record_failure(&mut tx, &ws, &id, None, NOW).await.expect("failure");
    operators::record_failure(&mut tx, &ws, &id, Some(NOW + 60), NOW).await.expect("failure");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.failed_attempts, row.locked_until), (2, Some(NOW + 60)));
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    operators::record_success(&mut tx, &ws, &id, 101, NOW + 61).await.expect("success");
    assert_conflict(operators::record_success(&mut tx, &ws, &id, 101, NOW + 62).await);
    assert_conflict(operators::record_success(&mut tx, &ws, &id, 100, NOW + 62).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.failed_attempts, row.locked_until, row.totp_last_step), (0, None, Some(101)));
}

#[tokio::test]
async fn logins_recorded_against_another_workspace_change_nothing() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let (id, _) = invite(&db, &ws, "a@example.com").await;
    enroll(&db, &ws, &id).await;
    let mut tx = db.begin().await.expect("begin");
    operators::record_failure(&mut tx, &other, &id, Some(NOW + 60), NOW).await.expect("failure");
    assert_conflict(operators::record_success(&mut tx, &other, &id, 500, NOW).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = operators::get(&mut conn, &ws, &id).await.expect("get");
    assert_eq!((row.failed_attempts, row.locked_until, row.totp_last_step), (0, None, Some(100)));
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
