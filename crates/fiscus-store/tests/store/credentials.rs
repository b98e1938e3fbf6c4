//! Credentials: API keys by lookup, OAuth clients and access tokens, rotation and revocation within their
//! workspace only, lookups taken once, and unknown stored statuses corrupt wherever a credential is read.

use crate::helpers::*;
use fiscus_domain::credentials::{AppStatus, CredentialStatus, Environment};
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, credentials};

struct Key {
    id: String,
    lookup: String,
}

async fn api_key(db: &Store, t: &Tenant, app: &str, expires_at: Option<i64>) -> Key {
    let id = fiscus_domain::ids::new_id("key");
    let lookup = fiscus_domain::ids::new_id("lk");
    let mut conn = db.read().await.expect("conn");
    credentials::insert_api_key(
        &mut conn,
        &t.workspace_id,
        &credentials::NewApiKey {
            id: &id,
            application_id: app,
            lookup: &lookup,
            secret_hash: "hash-of-secret",
            hint: "svc_test_…abcd",
            created_at: NOW,
            expires_at,
        },
    )
    .await
    .expect("insert api key");
    Key { id, lookup }
}

async fn client(db: &Store, t: &Tenant, app: &str) -> String {
    let id = fiscus_domain::ids::new_id("cli");
    let mut conn = db.read().await.expect("conn");
    credentials::insert_oauth_client(&mut conn, &t.workspace_id, app, &id, "client-hash", "fcs_…wxyz", NOW)
        .await
        .expect("insert client");
    id
}

async fn token(db: &Store, t: &Tenant, app: &str, client_id: &str) -> Key {
    let id = fiscus_domain::ids::new_id("tok");
    let lookup = fiscus_domain::ids::new_id("lk");
    let mut conn = db.read().await.expect("conn");
    credentials::insert_access_token(
        &mut conn,
        &t.workspace_id,
        &credentials::NewAccessToken {
            id: &id,
            application_id: app,
            client_id,
            lookup: &lookup,
            secret_hash: "token-hash",
            scopes: "actions:create",
            created_at: NOW,
            expires_at: NOW + 3_600_000_000,
        },
    )
    .await
    .expect("insert token");
    Key { id, lookup }
}

#[tokio::test]
async fn an_api_key_resolves_by_lookup_to_its_workspace_whoever_asks() {
    // The documented exception: a presented key is how a request learns its workspace.
    let db = fresh_store().await;
    let t = production(&workspace(&db).await);
    let app = application(&db, &t).await;
    let key = api_key(&db, &t, &app, Some(NOW + 1)).await;
    let mut conn = db.read().await.expect("conn");
    let r = credentials::resolve_api_key(&mut conn, &key.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_id, key.id);
    assert_eq!(r.secret_hash, "hash-of-secret");
    assert_eq!(r.credential_status, CredentialStatus::Active);
    assert_eq!(r.expires_at, Some(NOW + 1));
    assert_eq!(r.token_scopes, None);
    assert_eq!(r.application_id, app);
    assert_eq!(r.workspace_id, t.workspace_id);
    assert_eq!(r.environment, Environment::Production);
    assert_eq!(r.app_status, AppStatus::Active);
    assert_eq!(r.app_scopes, ScopeSet::all());
    assert_eq!(r.service_class, "default");
    assert_eq!(r.workspace_entitlement, ScopeSet::all());
    assert!(!r.production_access);
    assert!(credentials::resolve_api_key(&mut conn, "lk_unknown").await.expect("resolve").is_none());
}

#[tokio::test]
async fn a_status_or_environment_no_code_wrote_is_corrupt_wherever_a_credential_is_read() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = api_key(&db, &t, &app, None).await;
    force(&db, "api_keys", "status", &key.id, "paused").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(credentials::resolve_api_key(&mut conn, &key.lookup).await, "credential_status");
    assert_corrupt(credentials::list_api_keys(&mut conn, &t.workspace_id, None).await, "status");
    drop(conn);
    force(&db, "api_keys", "status", &key.id, "active").await;
    force(&db, "applications", "status", &app, "dormant").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(credentials::resolve_api_key(&mut conn, &key.lookup).await, "app_status");
    drop(conn);
    force(&db, "applications", "status", &app, "active").await;
    force(&db, "applications", "environment", &app, "staging").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(credentials::resolve_api_key(&mut conn, &key.lookup).await, "environment");
}

#[tokio::test]
async fn a_lookup_already_taken_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = api_key(&db, &t, &app, None).await;
    let mut conn = db.read().await.expect("conn");
    let result = credentials::insert_api_key(
        &mut conn,
        &t.workspace_id,
        &credentials::NewApiKey {
            id: "key_other",
            application_id: &app,
            lookup: &key.lookup,
            secret_hash: "h",
            hint: "h",
            created_at: NOW,
            expires_at: None,
        },
    )
    .await;
    assert_conflict(result);
}

#[tokio::test]
async fn list_api_keys_filters_by_application_within_the_workspace() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app1 = application(&db, &t).await;
    let app2 = application(&db, &t).await;
    let k1 = api_key(&db, &t, &app1, None).await;
    let k2 = api_key(&db, &t, &app2, None).await;
    let other = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    let ids = |v: Vec<credentials::ApiKeyRow>| v.into_iter().map(|k| k.id).collect::<Vec<_>>();
    assert_eq!(
        ids(credentials::list_api_keys(&mut conn, &t.workspace_id, None).await.expect("list")),
        vec![k1.id.clone(), k2.id.clone()]
    );
    assert_eq!(
        ids(credentials::list_api_keys(&mut conn, &t.workspace_id, Some(&app2)).await.expect("list")),
        vec![k2.id]
    );
    assert!(credentials::list_api_keys(&mut conn, &other, None).await.expect("list").is_empty());
    assert!(credentials::list_api_keys(&mut conn, &other, Some(&app1)).await.expect("list").is_empty());
}

#[tokio::test]
async fn end_active_keys_ends_every_active_key_of_the_application_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let bystander_app = application(&db, &t).await;
    api_key(&db, &t, &app, None).await;
    api_key(&db, &t, &app, None).await;
    let bystander = api_key(&db, &t, &bystander_app, None).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(
        credentials::end_active_keys(&mut tx, &t.workspace_id, &app, CredentialStatus::Rotated, NOW + 1)
            .await
            .expect("end"),
        2
    );
    assert_eq!(
        credentials::end_active_keys(&mut tx, &t.workspace_id, &app, CredentialStatus::Revoked, NOW + 2)
            .await
            .expect("end"),
        0
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let keys = credentials::list_api_keys(&mut conn, &t.workspace_id, Some(&app)).await.expect("list");
    assert!(keys.iter().all(|k| k.status == CredentialStatus::Rotated && k.revoked_at == Some(NOW + 1)));
    let r = credentials::resolve_api_key(&mut conn, &bystander.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_status, CredentialStatus::Active);
}

#[tokio::test]
async fn ending_or_revoking_keys_of_another_workspace_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = api_key(&db, &t, &app, None).await;
    let other = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(
        credentials::end_active_keys(&mut tx, &other, &app, CredentialStatus::Revoked, NOW).await.expect("end"),
        0
    );
    assert_not_found(credentials::revoke_api_key(&mut tx, &other, &key.id, NOW).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let r = credentials::resolve_api_key(&mut conn, &key.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_status, CredentialStatus::Active);
}

#[tokio::test]
async fn revoke_api_key_revokes_an_active_key_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = api_key(&db, &t, &app, None).await;
    let mut tx = db.begin().await.expect("begin");
    credentials::revoke_api_key(&mut tx, &t.workspace_id, &key.id, NOW + 3).await.expect("revoke");
    assert_not_found(credentials::revoke_api_key(&mut tx, &t.workspace_id, &key.id, NOW + 4).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let r = credentials::resolve_api_key(&mut conn, &key.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_status, CredentialStatus::Revoked);
    let row = &credentials::list_api_keys(&mut conn, &t.workspace_id, None).await.expect("list")[0];
    assert_eq!(row.revoked_at, Some(NOW + 3));
}

#[tokio::test]
async fn an_oauth_client_is_found_by_id_whoever_asks_and_listed_in_its_workspace_only() {
    // find_oauth_client is a documented exception: the token endpoint authenticates before it knows the workspace.
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let app2 = application(&db, &t).await;
    let c = client(&db, &t, &app).await;
    let c2 = client(&db, &t, &app2).await;
    let other = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    let row = credentials::find_oauth_client(&mut conn, &c).await.expect("find").expect("found");
    assert_eq!((row.workspace_id.as_str(), row.application_id.as_str()), (t.workspace_id.as_str(), app.as_str()));
    assert_eq!((row.status.as_str(), row.secret_hash.as_str(), row.rotated_at), ("active", "client-hash", None));
    assert!(credentials::find_oauth_client(&mut conn, "cli_unknown").await.expect("find").is_none());
    let ids = |v: Vec<credentials::OAuthClientRow>| v.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(
        ids(credentials::list_oauth_clients(&mut conn, &t.workspace_id, None).await.expect("list")),
        vec![c.clone(), c2]
    );
    assert_eq!(
        ids(credentials::list_oauth_clients(&mut conn, &t.workspace_id, Some(&app)).await.expect("list")),
        vec![c]
    );
    assert!(credentials::list_oauth_clients(&mut conn, &other, None).await.expect("list").is_empty());
    assert_eq!(credentials::count_active_oauth_clients(&mut conn, &t.workspace_id).await.expect("count"), 2);
    assert_eq!(credentials::count_active_oauth_clients(&mut conn, &other).await.expect("count"), 0);
}

#[tokio::test]
async fn rotating_a_client_secret_revokes_its_live_tokens_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&db, &t, &app).await;
    let bystander_client = client(&db, &t, &app).await;
    let t1 = token(&db, &t, &app, &c).await;
    let t2 = token(&db, &t, &app, &c).await;
    let bystander = token(&db, &t, &app, &bystander_client).await;
    let mut tx = db.begin().await.expect("begin");
    assert!(credentials::revoke_access_token(&mut tx, &t.workspace_id, &t2.id, NOW).await.expect("revoke"));
    let revoked =
        credentials::rotate_oauth_client_secret(&mut tx, &t.workspace_id, &c, "new-hash", "fcs_…new", NOW + 1)
            .await
            .expect("rotate");
    assert_eq!(revoked, 1, "the token revoked before is not counted again");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = credentials::find_oauth_client(&mut conn, &c).await.expect("find").expect("found");
    assert_eq!(
        (row.secret_hash.as_str(), row.secret_hint.as_str(), row.rotated_at),
        ("new-hash", "fcs_…new", Some(NOW + 1))
    );
    for (k, status) in
        [(&t1, CredentialStatus::Revoked), (&t2, CredentialStatus::Revoked), (&bystander, CredentialStatus::Active)]
    {
        let r = credentials::resolve_access_token(&mut conn, &k.lookup).await.expect("resolve").expect("found");
        assert_eq!(r.credential_status, status, "{}", k.id);
    }
}

#[tokio::test]
async fn rotating_another_workspaces_client_is_not_found_and_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&db, &t, &app).await;
    let tok = token(&db, &t, &app, &c).await;
    let other = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(credentials::rotate_oauth_client_secret(&mut tx, &other, &c, "evil", "evil", NOW).await);
    assert!(!credentials::revoke_access_token(&mut tx, &other, &tok.id, NOW).await.expect("revoke"));
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        credentials::find_oauth_client(&mut conn, &c).await.expect("find").expect("found").secret_hash,
        "client-hash"
    );
    let r = credentials::resolve_access_token(&mut conn, &tok.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_status, CredentialStatus::Active);
}

#[tokio::test]
async fn rotating_an_unknown_client_is_not_found() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(
        credentials::rotate_oauth_client_secret(&mut tx, &t.workspace_id, "cli_unknown", "h", "h", NOW).await,
    );
}

#[tokio::test]
async fn an_access_token_resolves_with_its_own_scopes_and_its_owner_is_found_by_lookup() {
    // resolve_access_token and find_token_owner are documented exceptions (lookup by a presented secret).
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&db, &t, &app).await;
    let tok = token(&db, &t, &app, &c).await;
    let mut conn = db.read().await.expect("conn");
    let r = credentials::resolve_access_token(&mut conn, &tok.lookup).await.expect("resolve").expect("found");
    assert_eq!(r.credential_id, tok.id);
    assert_eq!(r.token_scopes, Some(ScopeSet::parse("actions:create").expect("scope")));
    assert_eq!(r.expires_at, Some(NOW + 3_600_000_000));
    assert_eq!((r.workspace_id.as_str(), r.environment.as_str()), (t.workspace_id.as_str(), "sandbox"));
    assert!(credentials::resolve_access_token(&mut conn, "lk_unknown").await.expect("resolve").is_none());
    let owner = credentials::find_token_owner(&mut conn, &tok.lookup).await.expect("owner").expect("found");
    assert_eq!(
        (owner.id, owner.workspace_id, owner.client_id, owner.secret_hash),
        (tok.id.clone(), t.workspace_id.clone(), c, "token-hash".into())
    );
    assert!(credentials::find_token_owner(&mut conn, "lk_unknown").await.expect("owner").is_none());
}

#[tokio::test]
async fn revoke_access_token_revokes_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&db, &t, &app).await;
    let tok = token(&db, &t, &app, &c).await;
    let mut tx = db.begin().await.expect("begin");
    assert!(credentials::revoke_access_token(&mut tx, &t.workspace_id, &tok.id, NOW).await.expect("revoke"));
    assert!(!credentials::revoke_access_token(&mut tx, &t.workspace_id, &tok.id, NOW).await.expect("again"));
}

#[tokio::test]
async fn active_key_facts_cover_active_keys_of_active_applications_of_the_workspace() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let t = production(&ws);
    let app = application(&db, &t).await;
    let suspended_app = application(&db, &t).await;
    let live = api_key(&db, &t, &app, Some(NOW + 9)).await;
    let revoked = api_key(&db, &t, &app, None).await;
    api_key(&db, &t, &suspended_app, None).await;
    let mut tx = db.begin().await.expect("begin");
    credentials::revoke_api_key(&mut tx, &ws, &revoked.id, NOW).await.expect("revoke");
    fiscus_store::applications::set_status(
        &mut tx,
        &ws,
        &suspended_app,
        fiscus_domain::credentials::AppStatus::Suspended,
        NOW,
    )
    .await
    .expect("suspend");
    tx.commit().await.expect("commit");
    let other = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    let facts = credentials::active_key_facts(&mut conn, &ws).await.expect("facts");
    assert_eq!(facts.len(), 1);
    assert_eq!(
        (
            facts[0].id.as_str(),
            facts[0].application_id.as_str(),
            facts[0].environment.as_str(),
            facts[0].created_at,
            facts[0].expires_at
        ),
        (live.id.as_str(), app.as_str(), "production", NOW, Some(NOW + 9))
    );
    assert!(credentials::active_key_facts(&mut conn, &other).await.expect("facts").is_empty());
}
