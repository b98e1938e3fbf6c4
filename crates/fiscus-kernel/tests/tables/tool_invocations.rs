//! Tool invocations (MCP and A2A calls): read back typed, newest first and for their credential only, and
//! unknown stored values refused as corrupt.

use crate::helpers::*;
use fiscus_kernel::tables::tool_invocations::{self, Invocation, Outcome, Protocol};

fn row(protocol: Protocol, outcome: Outcome) -> Invocation {
    Invocation {
        id: fiscus_domain::ids::new_id("inv"),
        application_id: "app_1".into(),
        credential_id: "key_1".into(),
        protocol,
        tool: "get_actions".into(),
        request_hash: "sha256:01".into(),
        response_hash: "sha256:02".into(),
        status: 200,
        outcome,
        request_id: "req_1".into(),
        created_at: NOW,
    }
}

#[tokio::test]
async fn invocations_read_back_typed_newest_first_and_only_for_their_credential() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (first, second) = (row(Protocol::Mcp, Outcome::Succeeded), row(Protocol::A2a, Outcome::Refused));
    let mut tx = db.begin().await.expect("begin");
    tool_invocations::insert(&mut tx, &t, &first).await.expect("insert");
    tool_invocations::insert(&mut tx, &t, &second).await.expect("insert");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = tool_invocations::recent(&mut conn, db.seal_key(), &t, "key_1", 10).await.expect("recent");
    assert_eq!(read, vec![second.clone(), first.clone()]);
    assert!(tool_invocations::recent(&mut conn, db.seal_key(), &t, "key_2", 10).await.expect("recent").is_empty());
    for other in strangers(&db, &t).await {
        assert!(
            tool_invocations::recent(&mut conn, db.seal_key(), &other, "key_1", 10).await.expect("recent").is_empty()
        );
    }
    drop(conn);
    // An edited row is refused, not listed.
    exec(&db, "UPDATE tool_invocations SET tool = 'post_actions_uid_execute' WHERE id = $1", &first.id).await;
    let mut conn = db.read().await.expect("conn");
    let read = tool_invocations::recent(&mut conn, db.seal_key(), &t, "key_1", 10).await;
    assert!(matches!(read, Err(fiscus_store::StoreError::Tampered(_))), "{read:?}");
}

#[tokio::test]
async fn an_unknown_stored_protocol_or_outcome_is_refused_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = row(Protocol::Mcp, Outcome::Failed);
    let mut tx = db.begin().await.expect("begin");
    tool_invocations::insert(&mut tx, &t, &r).await.expect("insert");
    tx.commit().await.expect("commit");
    force(&db, "tool_invocations", "protocol", &r.id, "grpc").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(tool_invocations::recent(&mut conn, db.seal_key(), &t, "key_1", 10).await, "protocol");
}
