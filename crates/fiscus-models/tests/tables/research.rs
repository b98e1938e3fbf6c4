//! Research: a snapshot read sealed in its tenant only, one per run, snapshots listed newest first by
//! project and page; projects counted from their runs and snapshots in key order, each tenant's own; an
//! edited snapshot refused by its seal.

use crate::helpers::*;
use fiscus_domain::compute::{JobKind, JobState};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_models::tables::compute;
use fiscus_models::tables::research::{self, Project, Snapshot};
use fiscus_store::Store;

/// A research run of `t` filed under `project`, in `state`, created at `created_at`: its id.
async fn research_run(db: &Store, t: &Tenant, project: Option<&str>, state: JobState, created_at: i64) -> String {
    let id = new_id("cjb");
    let job = compute::NewJob {
        id: &id,
        kind: JobKind::ResearchRun,
        request: r#"{"kind":"research_run"}"#,
        request_hash: "sha256:00",
        engine_version: "fiscus-quant/test",
        credits: 1,
        created_by: &fiscus_domain::actor::Actor::application("app_1"),
        created_at,
        project,
    };
    let mut tx = db.begin().await.expect("begin");
    compute::insert(&mut tx, t, &job, state).await.expect("insert run");
    tx.commit().await.expect("commit");
    id
}

fn snapshot(project: &str, run_id: &str, description: Option<&str>) -> Snapshot {
    Snapshot {
        id: new_id("rsn"),
        project: project.into(),
        name: format!("{project} snapshot"),
        description: description.map(str::to_string),
        run_id: run_id.into(),
        bundle: r#"{"engine":"fiscus-quant/test","outputs":[]}"#.into(),
        bundle_hash: "sha256:bundle".into(),
        created_by: fiscus_domain::actor::Actor::application("app_1"),
        created_at: NOW + 100,
    }
}

async fn add_snapshot(db: &Store, t: &Tenant, s: &Snapshot) -> fiscus_store::Result<()> {
    let mut tx = db.begin().await.expect("begin");
    research::insert_snapshot(&mut tx, t, s).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

fn ids(snapshots: &[Snapshot]) -> Vec<String> {
    snapshots.iter().map(|s| s.id.clone()).collect()
}

#[tokio::test]
async fn a_snapshot_is_read_sealed_in_its_tenant_only_and_a_run_has_one() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = research_run(&db, &t, Some("low-vol"), JobState::Succeeded, NOW).await;
    let other_run = research_run(&db, &t, Some("low-vol"), JobState::Succeeded, NOW).await;
    let with_description = snapshot("low-vol", &run, Some("before the rebalance"));
    add_snapshot(&db, &t, &with_description).await.expect("insert");
    let without = snapshot("low-vol", &other_run, None);
    add_snapshot(&db, &t, &without).await.expect("insert");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(research::get_snapshot(&mut conn, key, &t, &with_description.id).await.expect("get"), with_description);
    assert_eq!(research::get_snapshot(&mut conn, key, &t, &without.id).await.expect("get"), without);
    assert_eq!(
        research::snapshot_of_run(&mut conn, &t, &run).await.expect("of run"),
        Some(with_description.id.clone())
    );
    assert_eq!(research::snapshot_of_run(&mut conn, &t, "cjb_unknown").await.expect("of run"), None);
    for other in strangers(&db, &t).await {
        assert_not_found(research::get_snapshot(&mut conn, key, &other, &with_description.id).await);
        assert_eq!(research::snapshot_of_run(&mut conn, &other, &run).await.expect("of run"), None);
        assert!(research::list_snapshots(&mut conn, &other, None, None, 10).await.expect("list").is_empty());
    }
    drop(conn);
    assert_conflict(add_snapshot(&db, &t, &snapshot("low-vol", &run, None)).await);
    let third_run = research_run(&db, &t, Some("low-vol"), JobState::Succeeded, NOW).await;
    assert_conflict(add_snapshot(&db, &t, &Snapshot { run_id: third_run, ..with_description.clone() }).await);
}

#[tokio::test]
async fn snapshots_list_newest_first_by_project_and_page() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut made = Vec::new();
    for project in ["alpha", "beta", "alpha"] {
        let run = research_run(&db, &t, Some(project), JobState::Succeeded, NOW).await;
        let s = snapshot(project, &run, None);
        add_snapshot(&db, &t, &s).await.expect("insert");
        made.push(s);
    }
    let (s1, s2, s3) = (&made[0], &made[1], &made[2]);
    let mut conn = db.read().await.expect("conn");
    let all = research::list_snapshots(&mut conn, &t, None, None, 10).await.expect("list");
    assert_eq!(all, vec![s3.clone(), s2.clone(), s1.clone()]);
    let page = research::list_snapshots(&mut conn, &t, None, None, 1).await.expect("list");
    assert_eq!(ids(&page), vec![s3.id.clone(), s2.id.clone()], "limit + 1");
    let rest = research::list_snapshots(&mut conn, &t, None, Some(&s2.id), 10).await.expect("list");
    assert_eq!(ids(&rest), vec![s1.id.clone()], "the cursor is exclusive");
    let alpha = research::list_snapshots(&mut conn, &t, Some("alpha"), None, 10).await.expect("list");
    assert_eq!(ids(&alpha), vec![s3.id.clone(), s1.id.clone()]);
    let alpha_rest = research::list_snapshots(&mut conn, &t, Some("alpha"), Some(&s3.id), 10).await.expect("list");
    assert_eq!(ids(&alpha_rest), vec![s1.id.clone()]);
    assert!(research::list_snapshots(&mut conn, &t, Some("gamma"), None, 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn projects_count_their_runs_and_snapshots_in_key_order_each_tenant_its_own() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let alpha_ok = research_run(&db, &t, Some("alpha"), JobState::Succeeded, NOW).await;
    let beta = research_run(&db, &t, Some("beta"), JobState::Queued, NOW + 5).await;
    let alpha_failed = research_run(&db, &t, Some("alpha"), JobState::Failed, NOW + 10).await;
    research_run(&db, &t, None, JobState::Succeeded, NOW + 20).await;
    let first = snapshot("alpha", &alpha_ok, None);
    add_snapshot(&db, &t, &first).await.expect("insert");
    let [other_workspace, other_environment] = strangers(&db, &t).await;
    let theirs = research_run(&db, &other_workspace, Some("alpha"), JobState::Succeeded, NOW + 30).await;
    research_run(&db, &other_environment, Some("gamma"), JobState::Running, NOW + 40).await;
    add_snapshot(&db, &other_workspace, &snapshot("alpha", &theirs, None)).await.expect("theirs");
    let mut conn = db.read().await.expect("conn");
    let alpha = Project {
        key: "alpha".into(),
        runs: 2,
        succeeded_runs: 1,
        first_run_at: NOW,
        last_run_at: NOW + 10,
        last_run_id: alpha_failed.clone(),
        snapshots: 1,
        last_snapshot_id: Some(first.id.clone()),
    };
    let beta = Project {
        key: "beta".into(),
        runs: 1,
        succeeded_runs: 0,
        first_run_at: NOW + 5,
        last_run_at: NOW + 5,
        last_run_id: beta,
        snapshots: 0,
        last_snapshot_id: None,
    };
    assert_eq!(research::projects(&mut conn, &t, None, 10).await.expect("projects"), vec![alpha.clone(), beta.clone()]);
    assert_eq!(research::projects(&mut conn, &t, None, 0).await.expect("projects"), vec![alpha.clone()], "limit + 1");
    assert_eq!(research::projects(&mut conn, &t, Some("alpha"), 10).await.expect("projects"), vec![beta]);
    let theirs_alpha = research::projects(&mut conn, &other_workspace, None, 10).await.expect("projects");
    assert_eq!(
        theirs_alpha.iter().map(|p| (p.key.as_str(), p.runs, p.snapshots)).collect::<Vec<_>>(),
        vec![("alpha", 1, 1)]
    );
    let gamma = research::projects(&mut conn, &other_environment, None, 10).await.expect("projects");
    assert_eq!(gamma.iter().map(|p| (p.key.as_str(), p.runs, p.snapshots)).collect::<Vec<_>>(), vec![("gamma", 1, 0)]);
}

#[tokio::test]
async fn an_edited_snapshot_is_refused_by_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = research_run(&db, &t, Some("alpha"), JobState::Succeeded, NOW).await;
    let s = snapshot("alpha", &run, Some("frozen"));
    add_snapshot(&db, &t, &s).await.expect("insert");
    exec(&db, "UPDATE research_snapshots SET bundle = '{\"outputs\":[1]}' WHERE id = $1", &s.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(research::get_snapshot(&mut conn, db.seal_key(), &t, &s.id).await);
    drop(conn);
    let other = research_run(&db, &t, Some("alpha"), JobState::Succeeded, NOW).await;
    let described = snapshot("alpha", &other, None);
    add_snapshot(&db, &t, &described).await.expect("insert");
    exec(&db, "UPDATE research_snapshots SET description = 'added later' WHERE id = $1", &described.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(research::get_snapshot(&mut conn, db.seal_key(), &t, &described.id).await);
}

#[tokio::test]
async fn a_creator_of_no_known_kind_is_corrupt_not_read_as_someone() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = research_run(&db, &t, Some("alpha"), JobState::Succeeded, NOW).await;
    let s = snapshot("alpha", &run, None);
    add_snapshot(&db, &t, &s).await.expect("insert");
    // Decoded before its seal is checked: the label itself is refused, whatever the seal would say.
    force(&db, "research_snapshots", "created_by", &s.id, "system:app_1").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(research::get_snapshot(&mut conn, db.seal_key(), &t, &s.id).await, "created_by");
    assert_corrupt(research::list_snapshots(&mut conn, &t, None, None, 10).await, "created_by");
}

#[tokio::test]
async fn a_job_queued_by_no_known_kind_of_actor_is_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = research_run(&db, &t, None, JobState::Queued, NOW).await;
    force(&db, "compute_jobs", "created_by", &run, "app_1").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(compute::get(&mut conn, db.seal_key(), &t, &run).await, "created_by");
}
