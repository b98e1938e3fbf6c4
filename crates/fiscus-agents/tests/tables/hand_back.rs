//! A stopping node's hand-back (`fiscus_store::hand_back`): only the stopping worker's claims are let go,
//! in every queue, and another worker takes them at once, well inside the claims' stale time. Here on the
//! queue of workflow runs; the settlement items' half is with their repository's tests
//! (`crates/fiscus-actions/tests/tables/settlement.rs`).

use crate::helpers::*;
use crate::workflows::queued_run;
use fiscus_agents::tables::workflows;
use fiscus_store::hand_back;

/// A claim's stale time in these tests: far longer than anything here takes.
const STALE: i64 = 60_000_000;

#[tokio::test]
async fn a_stopping_worker_hands_back_only_its_own_claims_and_another_takes_them_at_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = queued_run(&db, &t, NOW).await;
    let other_run = queued_run(&db, &t, NOW).await;

    let mut tx = db.begin().await.expect("begin");
    let held = workflows::claim(&mut tx, "wrk_a", NOW, STALE, 1, 10).await.expect("claim");
    let kept = workflows::claim(&mut tx, "wrk_c", NOW, STALE, 1, 10).await.expect("claim");
    assert_eq!(held.len() + kept.len(), 2);
    assert_eq!(hand_back::all(&mut tx, "wrk_b").await.expect("hand back").total(), 0, "only the holder's");
    let handed = hand_back::all(&mut tx, "wrk_a").await.expect("hand back");
    assert_eq!((handed.settlement_items, handed.workflow_runs, handed.total()), (0, 1, 1));

    // Well inside the stale time, another worker takes what was handed back, and nothing another live
    // worker holds.
    let advanced = workflows::claim(&mut tx, "wrk_b", NOW + 1, STALE, 10, 10).await.expect("claim");
    assert_eq!(advanced.iter().map(|c| c.run_id.as_str()).collect::<Vec<_>>(), vec![held[0].run_id.as_str()]);
    assert!([run.id.as_str(), other_run.id.as_str()].contains(&kept[0].run_id.as_str()));
    tx.commit().await.expect("commit");
}
