//! Agent gateway request evidence: sealed rows in their tenant only, and a signed read's nonce spent once
//! by its evidence row.

use crate::helpers::*;
use fiscus_http::tables::agent_requests::{self, AgentRequestRow};
use fiscus_store::seals;

fn row() -> AgentRequestRow {
    AgentRequestRow {
        id: fiscus_domain::ids::new_id("agr"),
        application_id: "app_1".into(),
        credential_id: "key_1".into(),
        operation: "createAgentProposal".into(),
        method: "POST".into(),
        path: "/agent-execution/proposals".into(),
        status: 201,
        request_hash: "sha256:88".into(),
        response_hash: "sha256:99".into(),
        evidence_hash: "sha256:aa".into(),
        request_id: "req_1".into(),
        created_at: NOW,
    }
}

#[tokio::test]
async fn an_agent_request_reads_back_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = row();
    let mut tx = db.begin().await.expect("begin");
    agent_requests::insert(&mut tx, &t, &r, None).await.expect("insert");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = agent_requests::get(&mut conn, db.seal_key(), &t, &r.id).await.expect("get");
    assert_eq!(
        (read.id, read.operation, read.status, read.evidence_hash, read.request_id, read.created_at),
        (r.id.clone(), r.operation, 201, r.evidence_hash, r.request_id, NOW)
    );
    seals::check(&mut conn, db.seal_key(), &seals::AGENT_REQUESTS, &t.workspace_id, "id", &r.id).await.expect("sealed");
    drop(conn);
    exec(&db, "UPDATE agent_requests SET status = 403 WHERE id = $1", &r.id).await;
    let mut conn = db.read().await.expect("conn");
    let result = seals::check(&mut conn, db.seal_key(), &seals::AGENT_REQUESTS, &t.workspace_id, "id", &r.id).await;
    assert!(matches!(result, Err(fiscus_store::StoreError::Tampered(_))), "{result:?}");
    // Every read of it refuses it.
    let got = agent_requests::get(&mut conn, db.seal_key(), &t, &r.id).await;
    assert!(matches!(got, Err(fiscus_store::StoreError::Tampered(_))), "{got:?}");
    let recent = agent_requests::recent_for_credential(&mut conn, db.seal_key(), &t, &r.credential_id, 10).await;
    assert!(matches!(recent, Err(fiscus_store::StoreError::Tampered(_))), "{recent:?}");
}

#[tokio::test]
async fn an_agent_request_of_another_workspace_or_environment_is_not_found() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = row();
    let mut tx = db.begin().await.expect("begin");
    agent_requests::insert(&mut tx, &t, &r, None).await.expect("insert");
    tx.commit().await.expect("commit");
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert_not_found(agent_requests::get(&mut conn, db.seal_key(), &other, &r.id).await);
    }
}

#[tokio::test]
async fn a_signed_reads_nonce_is_spent_once_by_its_evidence_row() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (first, mut second, mut bearer) = (row(), row(), row());
    second.id = fiscus_domain::ids::new_id("areq");
    bearer.id = fiscus_domain::ids::new_id("areq");
    let mut tx = db.begin().await.expect("begin");
    agent_requests::insert(&mut tx, &t, &first, Some("n-1")).await.expect("insert");
    agent_requests::insert(&mut tx, &t, &bearer, None).await.expect("rows without a nonce never collide");
    tx.commit().await.expect("commit");
    let mut tx = db.begin().await.expect("begin");
    let again = agent_requests::insert(&mut tx, &t, &second, Some("n-1")).await;
    assert!(matches!(again, Err(fiscus_store::StoreError::Conflict(_))), "{again:?}");
}
