//! Idempotency keys in the store: acquired once then replayed, mismatches, reservations completed or released
//! by their holder only, stale ones taken over, retention, and workspaces apart.

use crate::helpers::*;
use fiscus_store::idempotency::{self, Fingerprint, KeyRef, Reservation, StoredResponse};
use fiscus_store::{Store, StoreError};

const STALE: i64 = 30_000_000;
const RETAIN: i64 = 86_400_000_000;

fn fp(body: &str) -> Fingerprint<'_> {
    Fingerprint { method: "POST", path: "/actions", body }
}

fn response() -> StoredResponse {
    StoredResponse {
        status: 201,
        headers: "{\"location\":\"/actions/act_1\"}".into(),
        body: "{\"id\":\"act_1\"}".into(),
    }
}

async fn reserve(db: &Store, key: &KeyRef<'_>, body: &str, token: &str, now: i64) -> Result<Reservation, StoreError> {
    let mut tx = db.begin().await.expect("begin");
    let r = idempotency::reserve(tx.conn(), key, &fp(body), token, now, STALE, RETAIN).await;
    tx.commit().await.expect("commit");
    r
}

async fn complete(db: &Store, key: &KeyRef<'_>, token: &str) -> bool {
    let mut tx = db.begin().await.expect("begin");
    let done = idempotency::complete(tx.conn(), key, token, &response()).await.expect("complete");
    tx.commit().await.expect("commit");
    done
}

async fn release(db: &Store, key: &KeyRef<'_>, token: &str) {
    let mut tx = db.begin().await.expect("begin");
    idempotency::release(tx.conn(), key, token).await.expect("release");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn a_key_is_acquired_once_and_then_replays_its_response() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    assert!(
        matches!(reserve(&db, &key, "b", "lock-1", NOW).await, Ok(Reservation::Acquired { lock_token }) if lock_token == "lock-1")
    );
    assert!(matches!(reserve(&db, &key, "b", "lock-2", NOW + 1).await, Ok(Reservation::InFlight)));
    assert!(complete(&db, &key, "lock-1").await);
    match reserve(&db, &key, "b", "lock-3", NOW + 2).await {
        Ok(Reservation::Replay(r)) => {
            assert_eq!(
                (r.status, r.headers.as_str(), r.body.as_str()),
                (201, response().headers.as_str(), response().body.as_str())
            )
        }
        other => panic!("expected a replay, got {other:?}"),
    }
    assert!(!complete(&db, &key, "lock-1").await, "a completed key is not completed twice");
}

#[tokio::test]
async fn a_key_used_with_another_request_is_a_mismatch() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    reserve(&db, &key, "b", "lock-1", NOW).await.expect("reserve");
    assert!(matches!(reserve(&db, &key, "other body", "lock-2", NOW).await, Ok(Reservation::Mismatch)));
    let mut tx = db.begin().await.expect("begin");
    let other_path = Fingerprint { method: "POST", path: "/elsewhere", body: "b" };
    let r = idempotency::reserve(tx.conn(), &key, &other_path, "lock-3", NOW, STALE, RETAIN).await;
    assert!(matches!(r, Ok(Reservation::Mismatch)), "{r:?}");
}

#[tokio::test]
async fn only_the_holder_completes_or_releases_a_reservation() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    reserve(&db, &key, "b", "lock-1", NOW).await.expect("reserve");
    assert!(!complete(&db, &key, "lock-x").await);
    release(&db, &key, "lock-x").await;
    assert!(matches!(reserve(&db, &key, "b", "lock-2", NOW).await, Ok(Reservation::InFlight)), "still held");
    release(&db, &key, "lock-1").await;
    assert!(matches!(reserve(&db, &key, "b", "lock-2", NOW).await, Ok(Reservation::Acquired { .. })), "released");
}

#[tokio::test]
async fn a_stale_reservation_is_taken_over_and_its_old_holder_cannot_complete() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    reserve(&db, &key, "b", "lock-1", NOW).await.expect("reserve");
    assert!(
        matches!(reserve(&db, &key, "b", "lock-2", NOW + STALE + 1).await, Ok(Reservation::Acquired { lock_token }) if lock_token == "lock-2")
    );
    assert!(!complete(&db, &key, "lock-1").await);
    assert!(complete(&db, &key, "lock-2").await);
}

#[tokio::test]
async fn a_key_past_its_retention_is_forgotten_and_purged() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let old = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "old" };
    let young = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "young" };
    reserve(&db, &old, "b", "lock-1", NOW).await.expect("reserve");
    assert!(complete(&db, &old, "lock-1").await);
    reserve(&db, &young, "b", "lock-1", NOW + RETAIN).await.expect("reserve");
    let later = NOW + RETAIN + 1;
    assert!(matches!(reserve(&db, &old, "new body", "lock-2", later).await, Ok(Reservation::Acquired { .. })));
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(
        idempotency::purge_expired(tx.conn(), later + RETAIN).await.expect("purge"),
        1,
        "only the young key has expired by then"
    );
    assert_eq!(idempotency::purge_expired(tx.conn(), later + RETAIN + 2).await.expect("purge"), 1);
    assert_eq!(idempotency::purge_expired(tx.conn(), later + RETAIN + 2).await.expect("purge"), 0);
}

#[tokio::test]
async fn another_workspace_can_neither_replay_complete_nor_release_a_key() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let app = application(&db, &t).await;
    let other = workspace(&db).await;
    let key = KeyRef { workspace_id: &t.workspace_id, application_id: &app, key: "k1" };
    let foreign = KeyRef { workspace_id: &other, application_id: &app, key: "k1" };
    reserve(&db, &key, "b", "lock-1", NOW).await.expect("reserve");
    assert!(!complete(&db, &foreign, "lock-1").await);
    release(&db, &foreign, "lock-1").await;
    assert!(complete(&db, &key, "lock-1").await, "the holder's reservation survived");
    let r = reserve(&db, &foreign, "b", "lock-2", NOW).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "another workspace's stored response is never replayed: {r:?}");
}
