//! Compute jobs in the store: claimed once and ended by their holder with a sealed result, handed back by a
//! stopping node, claimed round the workspaces up to each one's cap, and edited or unknown rows refused.

use crate::helpers::*;
use fiscus_domain::compute::{JobKind, JobState};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_models::tables::compute::{self, Ending, JobFilter, JobResult, NewJob};
use fiscus_store::{Store, hand_back};

async fn queued(db: &Store, tenant: &Tenant) -> String {
    let id = new_id("cjb");
    let mut tx = db.begin().await.expect("begin");
    let job = NewJob {
        id: &id,
        kind: JobKind::Optimization,
        request: r#"{"kind":"optimization"}"#,
        request_hash: "sha256:00",
        engine_version: "fiscus-quant/test",
        credits: 1,
        created_by: &fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW,
        project: None,
    };
    compute::insert(&mut tx, tenant, &job, JobState::Queued).await.expect("insert");
    tx.commit().await.expect("commit");
    id
}

#[tokio::test]
async fn a_job_is_claimed_once_and_only_its_holder_ends_it_with_a_sealed_result() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = queued(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    let claimed = compute::claim(&mut tx, "wrk_a", NOW, 30_000_000, 10, 10).await.expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!(claimed.len(), 1);
    assert_eq!((claimed[0].state, claimed[0].attempts, claimed[0].tenant.clone()), (JobState::Running, 1, t.clone()));
    let mut tx = db.begin().await.expect("begin");
    assert!(compute::claim(&mut tx, "wrk_b", NOW + 1, 30_000_000, 10, 10).await.expect("claim").is_empty());
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(compute::heartbeat(&mut conn, &id, "wrk_b", 500, NOW + 2).await.expect("beat"), None);
    assert_eq!(compute::heartbeat(&mut conn, &id, "wrk_a", 500, NOW + 2).await.expect("beat"), Some(false));
    drop(conn);
    let result = JobResult {
        id: new_id("cjr"),
        job_id: id.clone(),
        output: "{}".into(),
        output_hash: "sha256:01".into(),
        result_hash: "sha256:02".into(),
        created_at: NOW + 3,
    };
    let mut tx = db.begin().await.expect("begin");
    let ended = compute::finish(&mut tx, &t, &id, Some("wrk_b"), NOW + 3, Ending::Succeeded { result: &result })
        .await
        .expect("finish");
    assert!(!ended, "a worker without the claim ends nothing");
    assert!(
        compute::finish(&mut tx, &t, &id, Some("wrk_a"), NOW + 3, Ending::Succeeded { result: &result })
            .await
            .expect("finish")
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let (job, stored) = compute::get(&mut conn, db.seal_key(), &t, &id).await.expect("get");
    assert_eq!((job.state, job.progress), (JobState::Succeeded, compute::PROGRESS_DONE));
    assert_eq!(stored, Some(result));
    for stranger in strangers(&db, &t).await {
        assert_not_found(compute::get(&mut conn, db.seal_key(), &stranger, &id).await);
        assert!(compute::list(&mut conn, &stranger, JobFilter::default(), None, 10).await.expect("list").is_empty());
    }
}

#[tokio::test]
async fn a_stopping_node_hands_its_jobs_back_for_another_to_take_at_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = queued(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(compute::claim(&mut tx, "wrk_a", NOW, 30_000_000, 10, 10).await.expect("claim").len(), 1);
    assert_eq!(hand_back::all(&mut tx, "wrk_b").await.expect("hand back").compute_jobs, 0, "only the holder's");
    assert_eq!(hand_back::all(&mut tx, "wrk_a").await.expect("hand back").compute_jobs, 1);
    // Well inside the claim's stale time, another node takes it.
    let retaken = compute::claim(&mut tx, "wrk_b", NOW + 1, 30_000_000, 10, 10).await.expect("claim");
    tx.commit().await.expect("commit");
    assert_eq!((retaken.len(), retaken[0].id.as_str(), retaken[0].attempts), (1, id.as_str(), 2));
    let mut conn = db.read().await.expect("conn");
    assert_eq!(compute::heartbeat(&mut conn, &id, "wrk_a", 1, NOW + 2).await.expect("beat"), None);
}

#[tokio::test]
async fn an_unknown_stored_state_or_kind_is_refused_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = queued(&db, &t).await;
    force(&db, "compute_jobs", "state", &id, "paused").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(compute::get(&mut conn, db.seal_key(), &t, &id).await, "state");
    drop(conn);
    let other = queued(&db, &t).await;
    force(&db, "compute_jobs", "kind", &other, "prophecy").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(compute::get(&mut conn, db.seal_key(), &t, &other).await, "kind");
}

#[tokio::test]
async fn an_edited_request_fails_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = queued(&db, &t).await;
    exec(&db, "UPDATE compute_jobs SET request = '{\"kind\":\"backtest\"}' WHERE id = $1", &id).await;
    let mut conn = db.read().await.expect("conn");
    let got = compute::get(&mut conn, db.seal_key(), &t, &id).await;
    assert!(matches!(got, Err(fiscus_store::StoreError::Tampered(_))), "{got:?}");
}

#[tokio::test]
async fn claims_go_round_the_workspaces_and_stop_at_each_workspace_s_cap() {
    let db = fresh_store().await;
    let (a, b) = (tenant(&db).await, tenant(&db).await);
    let mut flood = Vec::new();
    for _ in 0..6 {
        flood.push(queued(&db, &a).await);
    }
    let small = queued(&db, &b).await;
    let claim = |worker: &'static str, limit: i64, cap: i64| {
        let db = &db;
        async move {
            let mut tx = db.begin().await.expect("begin");
            let claimed = compute::claim(&mut tx, worker, NOW, 30_000_000, limit, cap).await.expect("claim");
            tx.commit().await.expect("commit");
            claimed.into_iter().map(|j| j.id).collect::<Vec<_>>()
        }
    };
    // Two threads free: A's oldest job and B's job (B queued last, but holds nothing), not A's two oldest.
    assert_eq!(claim("wrk_a", 2, 3).await, vec![flood[0].clone(), small]);
    // A holds one of its cap of three: two more, then nothing while A is at its cap.
    assert_eq!(claim("wrk_b", 4, 3).await, vec![flood[1].clone(), flood[2].clone()]);
    assert!(claim("wrk_c", 4, 3).await.is_empty(), "A is at its cap; B has nothing queued");
}
