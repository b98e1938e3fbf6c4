//! The credential and workspace cache of the embedded deployment: a change of standing committed through
//! one `Store` (the CLI in another process) is honoured by the next read of another `Store` on the same
//! database. With PostgreSQL there is no cache, and the same tests hold trivially.

use crate::helpers::*;
use fiscus_domain::credentials::CredentialStatus;
use fiscus_domain::scopes::ScopeSet;
use fiscus_store::cache::TenancyCache;
use fiscus_store::{Store, credentials, workspaces};

async fn second_store(db: &TestDb) -> Store {
    Store::connect(&db.url, 2, seal_key()).await.expect("second store")
}

#[tokio::test]
async fn a_workspace_change_committed_elsewhere_is_seen_by_the_next_read() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    assert_eq!(db.workspace(&ws).await.expect("workspace").entitlement(), ScopeSet::all());
    assert_eq!(db.workspace(&ws).await.expect("cached").entitlement(), ScopeSet::all());
    let cli = second_store(&db).await;
    let narrow = ScopeSet::parse("actions:create").expect("scope");
    let mut tx = cli.begin().await.expect("begin");
    workspaces::set_entitlement(&mut tx, &ws, &narrow).await.expect("set");
    tx.commit().await.expect("commit");
    assert_eq!(db.workspace(&ws).await.expect("workspace").entitlement(), narrow);
    assert_not_found(db.workspace("wsp_unknown").await);
}

#[tokio::test]
async fn a_revocation_committed_elsewhere_is_seen_by_the_next_resolution() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    credentials::insert_api_key(
        &mut conn,
        &t.workspace_id,
        &credentials::NewApiKey {
            id: "key_1",
            application_id: &app,
            lookup: "lk_1",
            secret_hash: "h",
            hint: "h",
            created_at: NOW,
            expires_at: None,
        },
    )
    .await
    .expect("key");
    drop(conn);
    assert_eq!(
        db.resolve_api_key("lk_1").await.expect("resolve").expect("found").credential_status,
        CredentialStatus::Active
    );
    assert_eq!(
        db.resolve_api_key("lk_1").await.expect("cached").expect("found").credential_status,
        CredentialStatus::Active
    );
    assert!(db.resolve_api_key("lk_unknown").await.expect("resolve").is_none());
    let cli = second_store(&db).await;
    let mut tx = cli.begin().await.expect("begin");
    credentials::revoke_api_key(&mut tx, &t.workspace_id, "key_1", NOW).await.expect("revoke");
    tx.commit().await.expect("commit");
    assert_eq!(
        db.resolve_api_key("lk_1").await.expect("resolve").expect("found").credential_status,
        CredentialStatus::Revoked
    );
}

#[tokio::test]
async fn a_token_revocation_committed_elsewhere_is_seen_by_the_next_resolution() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    credentials::insert_oauth_client(&mut conn, &t.workspace_id, &app, "cli_1", "h", "h", NOW).await.expect("client");
    credentials::insert_access_token(
        &mut conn,
        &t.workspace_id,
        &credentials::NewAccessToken {
            id: "tok_1",
            application_id: &app,
            client_id: "cli_1",
            lookup: "lk_t",
            secret_hash: "h",
            scopes: "actions:create",
            created_at: NOW,
            expires_at: NOW + 1,
        },
    )
    .await
    .expect("token");
    drop(conn);
    assert_eq!(
        db.resolve_access_token("lk_t").await.expect("resolve").expect("found").credential_status,
        CredentialStatus::Active
    );
    let cli = second_store(&db).await;
    let mut tx = cli.begin().await.expect("begin");
    assert!(credentials::revoke_access_token(&mut tx, &t.workspace_id, "tok_1", NOW).await.expect("revoke"));
    tx.commit().await.expect("commit");
    assert_eq!(
        db.resolve_access_token("lk_t").await.expect("resolve").expect("found").credential_status,
        CredentialStatus::Revoked
    );
}

#[test]
fn bump_writes_a_new_generation_each_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("db.credentials-generation");
    let cache = TenancyCache::new(file.clone());
    cache.bump().expect("bump");
    let first = std::fs::read(&file).expect("generation");
    cache.bump().expect("bump");
    let second = std::fs::read(&file).expect("generation");
    assert_eq!(first.len(), 16);
    assert_ne!(first, second);
}

#[test]
fn bump_fails_when_the_generation_cannot_be_written() {
    let cache = TenancyCache::new("/nonexistent-dir/for/fiscus/db.credentials-generation".into());
    assert!(cache.bump().is_err());
}
