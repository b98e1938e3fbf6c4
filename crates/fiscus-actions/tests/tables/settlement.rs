//! Settlement in the store: due jobs claimed across workspaces with their tenant, limits, silent workers'
//! jobs retaken, one job and one record of each kind per action, and tenants apart.

use crate::helpers::*;
use fiscus_actions::rules::settlement::{Reconciliation, SettlementKind};
use fiscus_actions::tables::settlement::{self, SettlementRecord};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, seals};

fn record(kind: SettlementKind, received_at: i64) -> SettlementRecord {
    SettlementRecord {
        id: new_id("stl"),
        kind,
        connector: "sandbox".into(),
        connector_reference: "sbx-1".into(),
        reference: "INV-1".into(),
        amount_minor: 125_000,
        currency: "EUR".into(),
        reconciliation: Reconciliation::Matched,
        mismatches: vec!["amount".into()],
        record_hash: "sha256:55".into(),
        processed_by: "worker-1".into(),
        received_at,
    }
}

async fn add_record(db: &Store, tenant: &Tenant, action_id: &str, r: &SettlementRecord) {
    let mut tx = db.begin().await.expect("begin");
    settlement::insert_record(&mut tx, tenant, action_id, r).await.expect("insert record");
    tx.commit().await.expect("commit");
}

async fn enqueue(db: &Store, tenant: &Tenant, action_id: &str, now: i64) {
    let mut tx = db.begin().await.expect("begin");
    settlement::enqueue(&mut tx, tenant, action_id, "sandbox", now).await.expect("enqueue");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn claim_takes_due_jobs_of_every_workspace_with_their_tenant() {
    // The documented exception: the worker serves every workspace, then works inside each job's tenant.
    let db = fresh_store().await;
    let t1 = tenant(&db).await;
    let t2 = production(&workspace(&db).await);
    let a1 = action(&db, &t1).await;
    let a2 = action(&db, &t2).await;
    let later = action(&db, &t1).await;
    enqueue(&db, &t1, &a1.id, NOW).await;
    enqueue(&db, &t2, &a2.id, NOW).await;
    enqueue(&db, &t1, &later.id, NOW + 1_000).await;
    let mut tx = db.begin().await.expect("begin");
    let jobs = settlement::claim(&mut tx, "worker-1", NOW, 60_000_000, 10).await.expect("claim");
    tx.commit().await.expect("commit");
    let mut claimed: Vec<(Tenant, String, i64)> =
        jobs.iter().map(|j| (j.tenant.clone(), j.action_id.clone(), j.attempts)).collect();
    claimed.sort_by(|a, b| a.1.cmp(&b.1));
    let mut expected = vec![(t1.clone(), a1.id.clone(), 1), (t2.clone(), a2.id.clone(), 1)];
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(claimed, expected, "due jobs only, each with its own tenant");
    assert!(jobs.iter().all(|j| j.connector == "sandbox"));
    let mut tx = db.begin().await.expect("begin");
    assert!(settlement::claim(&mut tx, "worker-2", NOW + 1, 60_000_000, 10).await.expect("claim").is_empty());
}

#[tokio::test]
async fn claim_respects_its_limit() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for _ in 0..3 {
        let a = action(&db, &t).await;
        enqueue(&db, &t, &a.id, NOW).await;
    }
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(settlement::claim(&mut tx, "w", NOW, 60_000_000, 2).await.expect("claim").len(), 2);
    assert_eq!(settlement::claim(&mut tx, "w", NOW, 60_000_000, 2).await.expect("claim").len(), 1);
}

#[tokio::test]
async fn a_job_whose_worker_went_silent_is_claimed_again_and_only_its_new_holder_finishes_it() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    enqueue(&db, &t, &a.id, NOW).await;
    let mut tx = db.begin().await.expect("begin");
    let first = settlement::claim(&mut tx, "worker-1", NOW, 100, 10).await.expect("claim");
    assert!(settlement::claim(&mut tx, "worker-2", NOW + 50, 100, 10).await.expect("claim").is_empty());
    let second = settlement::claim(&mut tx, "worker-2", NOW + 200, 100, 10).await.expect("reclaim");
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].id, first[0].id);
    assert_eq!(second[0].attempts, 2);
    assert!(!settlement::finish(&mut tx, &first[0].id, "worker-1", NOW + 201).await.expect("finish"));
    assert!(settlement::finish(&mut tx, &first[0].id, "worker-2", NOW + 202).await.expect("finish"));
    assert!(!settlement::finish(&mut tx, &first[0].id, "worker-2", NOW + 203).await.expect("finish twice"));
    assert!(settlement::claim(&mut tx, "worker-3", NOW + 10_000, 100, 10).await.expect("claim").is_empty());
}

#[tokio::test]
async fn a_second_job_for_one_action_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    enqueue(&db, &t, &a.id, NOW).await;
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(settlement::enqueue(&mut tx, &t, &a.id, "sandbox", NOW).await);
}

#[tokio::test]
async fn a_claimed_job_with_an_unknown_environment_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    enqueue(&db, &t, &a.id, NOW).await;
    exec(&db, "UPDATE settlement_jobs SET environment = 'staging' WHERE action_id = $1", &a.id).await;
    let mut tx = db.begin().await.expect("begin");
    assert_corrupt(settlement::claim(&mut tx, "w", NOW, 100, 10).await, "environment");
}

#[tokio::test]
async fn records_read_back_in_order_and_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let settled = record(SettlementKind::Settled, NOW + 1);
    let returned = record(SettlementKind::Returned, NOW + 2);
    add_record(&db, &t, &a.id, &returned).await;
    add_record(&db, &t, &a.id, &settled).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        settlement::records(&mut conn, db.seal_key(), &t, &a.id).await.expect("records"),
        vec![settled.clone(), returned]
    );
    seals::check(&mut conn, db.seal_key(), &seals::SETTLEMENT_RECORDS, &t.workspace_id, "action_id", &a.id)
        .await
        .expect("sealed");
    drop(conn);
    // An amount edited behind the service's back: the records are refused, not read as reconciled.
    exec(&db, "UPDATE settlement_records SET amount_minor = 1 WHERE id = $1", &settled.id).await;
    let mut conn = db.read().await.expect("conn");
    let read = settlement::records(&mut conn, db.seal_key(), &t, &a.id).await;
    assert!(matches!(read, Err(fiscus_store::StoreError::Tampered(_))), "{read:?}");
}

#[tokio::test]
async fn a_second_record_of_one_kind_for_one_action_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_record(&db, &t, &a.id, &record(SettlementKind::Settled, NOW)).await;
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(settlement::insert_record(&mut tx, &t, &a.id, &record(SettlementKind::Settled, NOW + 1)).await);
}

#[tokio::test]
async fn records_of_another_workspace_or_environment_are_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_record(&db, &t, &a.id, &record(SettlementKind::Settled, NOW)).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(settlement::records(&mut conn, db.seal_key(), &other, &a.id).await.expect("records").is_empty());
    }
}

#[tokio::test]
async fn an_unknown_stored_record_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for (column, value) in [("kind", "vanished"), ("reconciliation", "perhaps"), ("mismatches", "{")] {
        let a = action(&db, &t).await;
        let r = record(SettlementKind::Settled, NOW);
        add_record(&db, &t, &a.id, &r).await;
        force(&db, "settlement_records", column, &r.id, value).await;
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(settlement::records(&mut conn, db.seal_key(), &t, &a.id).await, column);
    }
}

#[tokio::test]
async fn a_stopping_worker_hands_back_its_settlement_items_and_another_takes_them_at_once() {
    // A claim's stale time: far longer than anything here takes.
    const STALE: i64 = 60_000_000;
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let paid = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    settlement::enqueue(&mut tx, &t, &paid.id, "sandbox", NOW).await.expect("enqueue");
    tx.commit().await.expect("commit");

    let mut tx = db.begin().await.expect("begin");
    assert_eq!(settlement::claim(&mut tx, "wrk_a", NOW, STALE, 10).await.expect("claim").len(), 1);
    assert_eq!(
        fiscus_store::hand_back::all(&mut tx, "wrk_b").await.expect("hand back").total(),
        0,
        "only the holder's"
    );
    let handed = fiscus_store::hand_back::all(&mut tx, "wrk_a").await.expect("hand back");
    assert_eq!((handed.settlement_items, handed.total()), (1, 1));
    // Well inside the stale time, another worker takes what was handed back.
    let settled = settlement::claim(&mut tx, "wrk_b", NOW + 1, STALE, 10).await.expect("claim");
    assert_eq!((settled.len(), settled[0].attempts), (1, 2), "a hand-back counts as an attempt, as a takeover does");
    // The worker that stopped finishes nothing any more.
    assert!(!settlement::finish(&mut tx, &settled[0].id, "wrk_a", NOW + 2).await.expect("finish"));
    assert!(settlement::finish(&mut tx, &settled[0].id, "wrk_b", NOW + 2).await.expect("finish"));
    tx.commit().await.expect("commit");
}
