//! Signed execution clients: standing as the latest sealed decision, one decision per version, edited grants
//! refused as tampered, and nonces claimed once and forgotten after they expire.

use crate::helpers::*;
use fiscus_domain::credentials::Environment;
use fiscus_domain::execution_client::{ClientStatus, Decision, Grant, decision_hash};
use fiscus_store::StoreError;
use fiscus_store::execution_clients::{self, Client, ClientDecision};

fn client(application_id: &str) -> Client {
    Client {
        id: fiscus_domain::ids::new_id("ecl"),
        environment: Environment::Sandbox,
        application_id: application_id.to_string(),
        name: "Treasury agent".into(),
        public_key: "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=".into(),
        created_by: "cli".into(),
        created_at: NOW,
    }
}

fn grant() -> Grant {
    Grant::new(
        vec!["get_agent_execution_actions_uid".into()],
        vec!["payment".into()],
        Environment::Sandbox,
        Environment::Sandbox,
        None,
        60,
        1000,
        NOW,
    )
    .expect("grant")
}

fn decision(client_id: &str, version: i64, d: Decision, g: Option<Grant>) -> ClientDecision {
    ClientDecision {
        id: fiscus_domain::ids::new_id("ecd"),
        client_id: client_id.to_string(),
        version,
        decision: d,
        decision_hash: decision_hash(client_id, version, d, g.as_ref()),
        grant: g,
        decided_by: "opr_1".into(),
        created_at: NOW,
    }
}

#[tokio::test]
async fn a_clients_standing_is_its_latest_sealed_decision_and_one_version_is_decided_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&app);
    let mut tx = db.begin().await.expect("begin");
    execution_clients::insert(&mut tx, &t.workspace_id, &c).await.expect("insert");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let standing = execution_clients::get(&mut conn, db.seal_key(), &t, &c.id).await.expect("get");
    assert_eq!((standing.status(), standing.next_version()), (ClientStatus::Draft, 1));
    drop(conn);

    let mut tx = db.begin().await.expect("begin");
    execution_clients::insert_decision(&mut tx, &t, &decision(&c.id, 1, Decision::Grant, Some(grant())))
        .await
        .expect("grant");
    tx.commit().await.expect("commit");
    // A second decision on the same version (another operator's, concurrently) conflicts.
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(execution_clients::insert_decision(&mut tx, &t, &decision(&c.id, 1, Decision::Revoke, None)).await);
    drop(tx);

    let resolved = db.resolve_client(&c.id).await.expect("resolve").expect("found");
    assert_eq!(resolved.workspace_id, t.workspace_id);
    assert_eq!(resolved.standing.status(), ClientStatus::Active);
    assert_eq!(resolved.standing.grant(), Some(&grant()));

    let mut tx = db.begin().await.expect("begin");
    execution_clients::insert_decision(&mut tx, &t, &decision(&c.id, 2, Decision::Revoke, None)).await.expect("revoke");
    tx.commit().await.expect("commit");
    let resolved = db.resolve_client(&c.id).await.expect("resolve").expect("found");
    assert_eq!((resolved.standing.status(), resolved.standing.grant()), (ClientStatus::Revoked, None));

    // Invisible to another workspace and to the other environment.
    let mut conn = db.read().await.expect("conn");
    for stranger in strangers(&db, &t).await {
        assert_not_found(execution_clients::get(&mut conn, db.seal_key(), &stranger, &c.id).await);
    }
    assert!(db.resolve_client("ecl_unknown").await.expect("resolve").is_none());
}

#[tokio::test]
async fn an_edited_grant_or_key_is_refused_as_tampered_and_an_unknown_kind_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let c = client(&app);
    let d = decision(&c.id, 1, Decision::Grant, Some(grant()));
    let mut tx = db.begin().await.expect("begin");
    execution_clients::insert(&mut tx, &t.workspace_id, &c).await.expect("insert");
    execution_clients::insert_decision(&mut tx, &t, &d).await.expect("grant");
    tx.commit().await.expect("commit");
    exec(&db, "UPDATE execution_client_decisions SET monthly_quota = 999999 WHERE id = $1", &d.id).await;
    let mut conn = db.read().await.expect("conn");
    let tampered = execution_clients::resolve(&mut conn, db.seal_key(), &c.id).await;
    assert!(matches!(tampered, Err(StoreError::Tampered(_))), "{tampered:?}");
    drop(conn);
    exec(&db, "UPDATE execution_client_decisions SET action_kinds = 'gift' WHERE id = $1", &d.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(execution_clients::get(&mut conn, db.seal_key(), &t, &c.id).await, "action_kinds");
}

#[tokio::test]
async fn a_nonce_is_claimed_once_and_forgotten_after_it_expires() {
    let db = fresh_store().await;
    let mut tx = db.begin().await.expect("begin");
    assert!(execution_clients::claim_nonce(&mut tx, "ecl_a", "n-1", NOW + 10).await.expect("claim"));
    assert!(!execution_clients::claim_nonce(&mut tx, "ecl_a", "n-1", NOW + 10).await.expect("claim"));
    assert!(execution_clients::claim_nonce(&mut tx, "ecl_b", "n-1", NOW + 10).await.expect("claim"));
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(execution_clients::sweep_nonces(&mut conn, NOW + 10).await.expect("sweep"), 0);
    assert_eq!(execution_clients::sweep_nonces(&mut conn, NOW + 11).await.expect("sweep"), 2);
}
