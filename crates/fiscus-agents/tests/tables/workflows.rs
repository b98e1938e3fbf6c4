//! Workflows: workflows, versions, runs, steps, campaigns and proofs read sealed in their tenant only, each
//! number and name written once, histories in their order and pages newest first; a run moves only from
//! the state it is in; the workers' claim takes a due run once, round the workspaces up to each one's cap,
//! and takes over a stale claim, and an ended run lets go of whichever claim it holds; edited rows are
//! refused by their seals, unknown stored values as corrupt.

use crate::helpers::*;
use fiscus_agents::rules::workflows::campaign::Suite;
use fiscus_agents::rules::workflows::definition::{Definition, StepKind};
use fiscus_agents::rules::workflows::records::{
    Baseline, CampaignBody, InputPin, LibraryOrigin, ProofBody, RunBody, StepBody, ValueFigures, VersionBody,
    WorkflowBody,
};
use fiscus_agents::rules::workflows::run::{RunState, StepOutcome};
use fiscus_agents::tables::workflows::{self, Campaign, Claimed, Proof, Run, Step, Version, Workflow};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Store, seals};

pub fn definition() -> Definition {
    serde_json::from_value(serde_json::json!({
        "steps": [
            {"kind": "wait", "id": "settle", "seconds": 60},
            {"kind": "review", "id": "sign_off", "after": ["settle"], "title": "Sign off the figures"}
        ]
    }))
    .expect("definition")
}

pub fn new_workflow(name: &str, library_key: Option<&str>) -> Workflow {
    let library =
        library_key.map(|key| LibraryOrigin { key: key.into(), version: 1, definition_hash: "sha256:lib".into() });
    sealed("wfl", WorkflowBody { name: name.into(), description: Some("Month end".into()), library }, NOW)
}

pub fn new_version(workflow_id: &str, version: i64) -> Version {
    let body = VersionBody {
        workflow_id: workflow_id.into(),
        version,
        definition: definition(),
        definition_hash: format!("sha256:def{version}"),
        library: None,
    };
    sealed("wfv", body, NOW + version)
}

pub fn new_run(workflow_id: &str, version_id: &str, created_at: i64) -> Record<RunBody> {
    let pin = InputPin { step: "prices".into(), source: "SPX".into(), dataset: 3, content_hash: "sha256:ds3".into() };
    let body = RunBody {
        workflow_id: workflow_id.into(),
        version_id: version_id.into(),
        definition_hash: "sha256:def1".into(),
        pins: vec![pin],
    };
    sealed("wfr", body, created_at)
}

/// A workflow named `name` of `t` with its first version.
pub async fn installed(db: &Store, t: &Tenant, name: &str) -> (Workflow, Version) {
    let w = new_workflow(name, None);
    let v = new_version(&w.id, 1);
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_workflow(&mut tx, t, &w, &v).await.expect("insert workflow");
    tx.commit().await.expect("commit");
    (w, v)
}

pub async fn add_run(db: &Store, t: &Tenant, r: &Record<RunBody>) {
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_run(&mut tx, t, r).await.expect("insert run");
    tx.commit().await.expect("commit");
}

/// A queued run of a new workflow of `t`, due at `created_at`.
pub async fn queued_run(db: &Store, t: &Tenant, created_at: i64) -> Record<RunBody> {
    let (w, v) = installed(db, t, &fiscus_domain::ids::new_id("name")).await;
    let r = new_run(&w.id, &v.id, created_at);
    add_run(db, t, &r).await;
    r
}

fn step(run_id: &str, step: &str, seq: i64, outcome: StepOutcome) -> Step {
    let body = StepBody {
        run_id: run_id.into(),
        step: step.into(),
        kind: StepKind::Wait,
        seq,
        outcome,
        output: serde_json::json!({"waited_seconds": 60}),
        output_hash: format!("sha256:out{seq}"),
    };
    sealed("wfs", body, NOW + seq)
}

fn proof(workflow_id: &str, runs: u64) -> Proof {
    let body = ProofBody {
        workflow_id: workflow_id.into(),
        workflow_name: "Month end".into(),
        baseline: Baseline {
            minutes_per_run: 90,
            minutes_per_review: 15,
            hourly_cost_minor: 12_000,
            currency: "USD".into(),
        },
        figures: ValueFigures {
            runs,
            completed: runs,
            failed: 0,
            cancelled: 0,
            in_progress: 0,
            steps_automated: 2 * runs,
            reviews: runs,
            median_run_seconds: Some(61.5),
            manual_minutes: 90 * runs,
            review_minutes: 15 * runs,
            minutes_saved: 75 * runs as i64,
            cost_saved_minor: 15_000 * runs as i64,
        },
        evidence: vec![("wfr_1".into(), "sha256:ev".into())],
    };
    sealed("wpv", body, NOW)
}

async fn claim(db: &Store, worker: &str, now: i64, stale_after: i64, limit: i64, cap: i64) -> Vec<Claimed> {
    let mut tx = db.begin().await.expect("begin");
    let claimed = workflows::claim(&mut tx, worker, now, stale_after, limit, cap).await.expect("claim");
    tx.commit().await.expect("commit");
    claimed
}

async fn release(db: &Store, run_id: &str, worker: &str) -> bool {
    let mut tx = db.begin().await.expect("begin");
    let released = workflows::release(&mut tx, run_id, worker).await.expect("release");
    tx.commit().await.expect("commit");
    released
}

async fn move_run(
    db: &Store,
    t: &Tenant,
    id: &str,
    (from, to): (RunState, RunState),
    ending: Option<(&str, i64)>,
    due_at: Option<i64>,
) -> bool {
    let mut tx = db.begin().await.expect("begin");
    let moved = workflows::move_run(&mut tx, t, id, from, to, ending, due_at).await.expect("move");
    tx.commit().await.expect("commit");
    moved
}

fn run_ids(runs: &[Run]) -> Vec<String> {
    runs.iter().map(|r| r.record.id.clone()).collect()
}

fn claimed(run_id: &str, t: &Tenant) -> Claimed {
    Claimed { run_id: run_id.to_string(), tenant: t.clone() }
}

#[tokio::test]
async fn a_workflow_is_read_sealed_in_its_tenant_only_and_its_name_is_used_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let w = new_workflow("Month end", Some("month_end_risk"));
    let v = new_version(&w.id, 1);
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_workflow(&mut tx, &t, &w, &v).await.expect("insert");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(workflows::get_workflow(&mut conn, key, &t, &w.id).await.expect("get"), w);
    assert_eq!(workflows::get_version(&mut conn, key, &t, &v.id).await.expect("version"), v);
    assert_eq!(workflows::find_installed(&mut conn, key, &t, "month_end_risk").await.expect("find"), Some(w.clone()));
    assert_eq!(workflows::find_installed(&mut conn, key, &t, "liquidity").await.expect("find"), None);
    let strangers = strangers(&db, &t).await;
    for other in &strangers {
        assert_not_found(workflows::get_workflow(&mut conn, key, other, &w.id).await);
        assert_not_found(workflows::get_version(&mut conn, key, other, &v.id).await);
        assert_eq!(workflows::find_installed(&mut conn, key, other, "month_end_risk").await.expect("find"), None);
    }
    drop(conn);
    let same_name = new_workflow("Month end", None);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflows::insert_workflow(&mut tx, &t, &same_name, &new_version(&same_name.id, 1)).await);
    drop(tx);
    // The name is the tenant's: the other environment may use it.
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_workflow(&mut tx, &strangers[1], &same_name, &new_version(&same_name.id, 1))
        .await
        .expect("the other environment's own");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn versions_read_oldest_first_by_number_and_a_number_is_written_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (w, v1) = installed(&db, &t, "Month end").await;
    let (other_workflow, other_v1) = installed(&db, &t, "Liquidity").await;
    // Version 3's row is written before version 2's: the history is by number, not by id.
    let v3 = new_version(&w.id, 3);
    let v2 = new_version(&w.id, 2);
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_version(&mut tx, &t, &v3).await.expect("v3");
    workflows::insert_version(&mut tx, &t, &v2).await.expect("v2");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(
        workflows::versions_of(&mut conn, key, &t, &w.id).await.expect("versions"),
        vec![v1.clone(), v2.clone(), v3.clone()]
    );
    assert_eq!(workflows::versions_of(&mut conn, key, &t, &other_workflow.id).await.expect("versions"), vec![other_v1]);
    // Newest rows first, at most `limit`.
    assert_eq!(workflows::recent_versions(&mut conn, key, &t, 2).await.expect("recent"), vec![v2.clone(), v3.clone()]);
    assert_eq!(workflows::recent_versions(&mut conn, key, &t, 10).await.expect("recent").len(), 4);
    for other in strangers(&db, &t).await {
        assert!(workflows::versions_of(&mut conn, key, &other, &w.id).await.expect("versions").is_empty());
        assert!(workflows::recent_versions(&mut conn, key, &other, 10).await.expect("recent").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflows::insert_version(&mut tx, &t, &new_version(&w.id, 2)).await);
}

#[tokio::test]
async fn a_run_moves_only_from_the_state_it_is_in_and_is_resealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let queued = Run { record: r.clone(), state: RunState::Queued, evidence_hash: None, ended_at: None };
    assert_eq!(workflows::get_run(&mut conn, key, &t, &r.id).await.expect("get"), queued);
    drop(conn);
    for other in strangers(&db, &t).await {
        assert!(!move_run(&db, &other, &r.id, (RunState::Queued, RunState::Running), None, Some(NOW)).await);
    }
    assert!(move_run(&db, &t, &r.id, (RunState::Queued, RunState::Running), None, Some(NOW)).await);
    assert!(!move_run(&db, &t, &r.id, (RunState::Queued, RunState::Running), None, Some(NOW)).await, "moved already");
    assert!(
        move_run(&db, &t, &r.id, (RunState::Running, RunState::Completed), Some(("sha256:evidence", NOW + 9)), None)
            .await
    );
    assert!(!move_run(&db, &t, &r.id, (RunState::Running, RunState::Failed), Some(("sha256:x", NOW + 10)), None).await);
    let mut conn = db.read().await.expect("conn");
    let ended = Run {
        record: r.clone(),
        state: RunState::Completed,
        evidence_hash: Some("sha256:evidence".into()),
        ended_at: Some(NOW + 9),
    };
    assert_eq!(workflows::get_run(&mut conn, key, &t, &r.id).await.expect("resealed"), ended);
    assert_eq!(workflows::runs_in(&mut conn, key, &t, RunState::Completed).await.expect("completed"), vec![ended]);
    assert!(workflows::runs_in(&mut conn, key, &t, RunState::Queued).await.expect("queued").is_empty());
    seals::check(&mut conn, key, &workflows::RUNS_SEALED, &t.workspace_id, "id", &r.id).await.expect("sealed");
    drop(conn);
    assert!(claim(&db, "wrk_a", NOW + 1_000_000, 100, 10, 10).await.is_empty(), "an ended run is not claimed");
}

#[tokio::test]
async fn runs_list_newest_first_by_page_by_state_and_by_workflow() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (w1, v1) = installed(&db, &t, "One").await;
    let (w2, v2) = installed(&db, &t, "Two").await;
    let a = new_run(&w1.id, &v1.id, NOW);
    let b = new_run(&w2.id, &v2.id, NOW + 1);
    let c = new_run(&w1.id, &v1.id, NOW + 2);
    for r in [&a, &b, &c] {
        add_run(&db, &t, r).await;
    }
    assert!(move_run(&db, &t, &b.id, (RunState::Queued, RunState::AwaitingReview), None, None).await);
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let page = workflows::list_runs(&mut conn, key, &t, None, 1).await.expect("list");
    assert_eq!(run_ids(&page), vec![c.id.clone(), b.id.clone()], "limit + 1, newest first");
    let rest = workflows::list_runs(&mut conn, key, &t, Some(&b.id), 10).await.expect("list");
    assert_eq!(run_ids(&rest), vec![a.id.clone()]);
    let of_one = workflows::runs_of(&mut conn, key, &t, &w1.id).await.expect("runs of");
    assert_eq!(run_ids(&of_one), vec![a.id.clone(), c.id.clone()], "oldest first");
    let queued = workflows::runs_in(&mut conn, key, &t, RunState::Queued).await.expect("queued");
    assert_eq!(run_ids(&queued), vec![a.id.clone(), c.id.clone()]);
    let review = workflows::runs_in(&mut conn, key, &t, RunState::AwaitingReview).await.expect("review");
    assert_eq!(run_ids(&review), vec![b.id.clone()]);
    for other in strangers(&db, &t).await {
        assert_not_found(workflows::get_run(&mut conn, key, &other, &a.id).await);
        assert!(workflows::list_runs(&mut conn, key, &other, None, 10).await.expect("list").is_empty());
        assert!(workflows::runs_of(&mut conn, key, &other, &w1.id).await.expect("runs of").is_empty());
        assert!(workflows::runs_in(&mut conn, key, &other, RunState::Queued).await.expect("runs in").is_empty());
    }
}

#[tokio::test]
async fn a_step_is_recorded_once_and_steps_read_in_sequence() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    // Sequence 2's row is written first: the history is by sequence, not by id.
    let second = step(&r.id, "sign_off", 2, StepOutcome::Rejected);
    let first = step(&r.id, "settle", 1, StepOutcome::Completed);
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_step(&mut tx, &t, &second).await.expect("second");
    workflows::insert_step(&mut tx, &t, &first).await.expect("first");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(workflows::steps_of(&mut conn, key, &t, &r.id).await.expect("steps"), vec![first, second]);
    for other in strangers(&db, &t).await {
        assert!(workflows::steps_of(&mut conn, key, &other, &r.id).await.expect("steps").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflows::insert_step(&mut tx, &t, &step(&r.id, "settle", 3, StepOutcome::Completed)).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflows::insert_step(&mut tx, &t, &step(&r.id, "report", 2, StepOutcome::Completed)).await);
}

#[tokio::test]
async fn campaigns_and_proofs_are_read_in_their_tenant_only_and_proofs_page_newest_first() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (w, v) = installed(&db, &t, "Month end").await;
    let campaign: Campaign = sealed(
        "wcp",
        CampaignBody {
            workflow_id: w.id.clone(),
            version_id: v.id.clone(),
            definition_hash: "sha256:def1".into(),
            suite: Suite { cases: vec![] },
            pins: vec![],
            cases: vec![],
            passed: true,
        },
        NOW,
    );
    let (p1, p2) = (proof(&w.id, 3), proof(&w.id, 5));
    let mut tx = db.begin().await.expect("begin");
    workflows::insert_campaign(&mut tx, &t, &campaign).await.expect("campaign");
    workflows::insert_proof(&mut tx, &t, &p1).await.expect("proof");
    workflows::insert_proof(&mut tx, &t, &p2).await.expect("proof");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(workflows::get_campaign(&mut conn, key, &t, &campaign.id).await.expect("campaign"), campaign);
    assert_eq!(
        workflows::list_proofs(&mut conn, key, &t, None, 1).await.expect("proofs"),
        vec![p2.clone(), p1.clone()]
    );
    assert_eq!(workflows::list_proofs(&mut conn, key, &t, Some(&p2.id), 10).await.expect("proofs"), vec![p1.clone()]);
    for other in strangers(&db, &t).await {
        assert_not_found(workflows::get_campaign(&mut conn, key, &other, &campaign.id).await);
        assert!(workflows::list_proofs(&mut conn, key, &other, None, 10).await.expect("proofs").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflows::insert_proof(&mut tx, &t, &p1).await);
}

#[tokio::test]
async fn a_due_run_is_claimed_once_until_released_and_a_stale_claim_is_taken_over() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    assert!(claim(&db, "wrk_a", NOW - 1, 100, 10, 10).await.is_empty(), "not due yet");
    assert_eq!(claim(&db, "wrk_a", NOW, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    assert!(claim(&db, "wrk_b", NOW + 50, 100, 10, 10).await.is_empty(), "held by a live claim");
    assert!(!release(&db, &r.id, "wrk_b").await, "only its holder lets go");
    assert!(release(&db, &r.id, "wrk_a").await);
    assert!(!release(&db, &r.id, "wrk_a").await, "released already");
    assert_eq!(claim(&db, "wrk_b", NOW + 60, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    // wrk_b went silent: after `stale_after` its claim is taken over, and it can no longer let go.
    assert!(claim(&db, "wrk_c", NOW + 160, 100, 10, 10).await.is_empty(), "not stale yet");
    assert_eq!(claim(&db, "wrk_c", NOW + 161, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    assert!(!release(&db, &r.id, "wrk_b").await);
    // A wait: due again only when its timer elapses.
    assert!(move_run(&db, &t, &r.id, (RunState::Queued, RunState::Waiting), None, Some(NOW + 1_000)).await);
    assert!(release(&db, &r.id, "wrk_c").await);
    assert!(claim(&db, "wrk_d", NOW + 999, 100, 10, 10).await.is_empty(), "the timer runs");
    assert_eq!(claim(&db, "wrk_d", NOW + 1_000, 100, 10, 10).await, vec![claimed(&r.id, &t)]);
    // A review: not due at all until something moves it.
    assert!(move_run(&db, &t, &r.id, (RunState::Waiting, RunState::AwaitingReview), None, None).await);
    assert!(release(&db, &r.id, "wrk_d").await);
    assert!(claim(&db, "wrk_e", NOW + 100_000, 100, 10, 10).await.is_empty(), "awaiting a person");
}

/// A run that ends is no one's work: whoever holds a claim on it lets go with its end, not only the worker
/// that ended it. A worker whose claim had gone stale may end the run (a step is guarded by its sequence
/// number, not by the claim) while the worker that took it over is gone; its claim would otherwise stay on
/// the ended run for good and count against the workspace's cap until stale (found by the simulation).
#[tokio::test]
async fn an_ended_run_lets_go_of_whichever_claim_it_holds() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    assert_eq!(claim(&db, "wrk_a", NOW, 100, 10, 1).await, vec![claimed(&r.id, &t)]);
    assert!(move_run(&db, &t, &r.id, (RunState::Queued, RunState::Running), None, Some(NOW)).await);
    // wrk_a goes silent and wrk_b takes the run over; then wrk_a, still going, ends it.
    assert_eq!(claim(&db, "wrk_b", NOW + 101, 100, 10, 1).await, vec![claimed(&r.id, &t)]);
    let ending = Some(("sha256:ev", NOW + 102));
    assert!(move_run(&db, &t, &r.id, (RunState::Running, RunState::Completed), ending, None).await);
    assert!(!release(&db, &r.id, "wrk_a").await, "wrk_a held it no longer");
    let mut conn = db.read().await.expect("conn");
    let (held,): (Option<String>,) = sqlx::query_as("SELECT claimed_by FROM workflow_runs WHERE id = $1")
        .bind(&r.id)
        .fetch_one(&mut *conn)
        .await
        .expect("claim");
    assert_eq!(held, None, "the ended run still held by wrk_b");
    drop(conn);
    // The workspace's place under its cap of one is free at once.
    let next = queued_run(&db, &t, NOW + 103).await;
    assert_eq!(claim(&db, "wrk_c", NOW + 104, 100, 10, 1).await, vec![claimed(&next.id, &t)]);
}

#[tokio::test]
async fn claims_go_round_the_workspaces_and_stop_at_each_workspace_s_cap() {
    let db = fresh_store().await;
    let a = tenant(&db).await;
    let b = production(&workspace(&db).await);
    let mut flood = Vec::new();
    for i in 0..3 {
        flood.push(queued_run(&db, &a, NOW + i).await);
    }
    let small = queued_run(&db, &b, NOW + 10).await;
    // Two free: A's oldest run and B's (B's is the newest, but B holds nothing), each with its tenant.
    assert_eq!(
        claim(&db, "wrk_a", NOW + 20, 1_000, 2, 2).await,
        vec![claimed(&flood[0].id, &a), claimed(&small.id, &b)]
    );
    // A holds one of its cap of two: one more, then nothing while A is at its cap.
    assert_eq!(claim(&db, "wrk_b", NOW + 20, 1_000, 5, 2).await, vec![claimed(&flood[1].id, &a)]);
    assert!(claim(&db, "wrk_c", NOW + 20, 1_000, 5, 2).await.is_empty(), "A is at its cap; B has nothing due");
    // A claim let go frees a place under the cap.
    assert!(release(&db, &flood[0].id, "wrk_a").await);
    assert_eq!(claim(&db, "wrk_c", NOW + 20, 1_000, 5, 2).await, vec![claimed(&flood[0].id, &a)]);
}

#[tokio::test]
async fn an_edited_run_is_refused_by_its_seal_and_an_unknown_or_mismatched_value_as_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let r = queued_run(&db, &t, NOW).await;
    exec(&db, "UPDATE workflow_runs SET state = 'completed' WHERE id = $1", &r.id).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_tampered(workflows::get_run(&mut conn, key, &t, &r.id).await);
    assert_tampered(workflows::list_runs(&mut conn, key, &t, None, 10).await);
    assert_tampered(workflows::runs_in(&mut conn, key, &t, RunState::Completed).await);
    drop(conn);
    // The queue's bookkeeping is not sealed: a claim changes nothing the seal covers.
    let other = queued_run(&db, &t, NOW).await;
    exec(&db, "UPDATE workflow_runs SET claimed_by = 'wrk_x', claimed_at = 5, due_at = 7 WHERE id = $1", &other.id)
        .await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(workflows::get_run(&mut conn, key, &t, &other.id).await.expect("still sealed").state, RunState::Queued);
    drop(conn);
    // Resealed after the edit, so that what is refused is the value, not the seal.
    force(&db, "workflow_runs", "state", &other.id, "paused").await;
    let (w, _) = installed(&db, &t, "Renamed").await;
    exec(&db, "UPDATE workflows SET name = 'Something else' WHERE id = $1", &w.id).await;
    let mut tx = db.begin().await.expect("begin");
    seals::seal(&mut tx, &workflows::RUNS_SEALED, &t.workspace_id, &other.id).await.expect("reseal");
    seals::seal(&mut tx, &workflows::WORKFLOWS_SEALED, &t.workspace_id, &w.id).await.expect("reseal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(workflows::get_run(&mut conn, key, &t, &other.id).await, "state");
    assert_corrupt(workflows::get_workflow(&mut conn, key, &t, &w.id).await, "columns differ from the body");
}
