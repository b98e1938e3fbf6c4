//! The workflow gateway: an application's allowlist in force is its latest sealed decision, each version
//! decided once; a task is found by its message or its run within its application and tenant only, a
//! message id used once per application; edited rows are refused by their seals.

use crate::helpers::*;
use crate::workflows::queued_run;
use fiscus_agents::tables::workflow_gateway::{self, GatewayTask, TaskKey, ToolGrant};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Store;

fn grant(application_id: &str, version: i64, versions: &[&str]) -> ToolGrant {
    ToolGrant {
        id: new_id("wtg"),
        application_id: application_id.into(),
        version,
        versions: versions.iter().map(|v| v.to_string()).collect(),
        decision_hash: format!("sha256:decision{version}"),
        decided_by: fiscus_domain::actor::Actor::operator("opr_1").label(),
        created_at: NOW + version,
    }
}

async fn add_grant(db: &Store, t: &Tenant, g: &ToolGrant) {
    let mut tx = db.begin().await.expect("begin");
    workflow_gateway::insert_grant(&mut tx, t, g).await.expect("insert grant");
    tx.commit().await.expect("commit");
}

fn task(run_id: &str, application_id: &str, message_id: &str) -> GatewayTask {
    GatewayTask {
        run_id: run_id.into(),
        application_id: application_id.into(),
        credential_id: "key_1".into(),
        context_id: "ctx_1".into(),
        message_id: message_id.into(),
        message_hash: format!("sha256:{message_id}"),
        created_at: NOW,
    }
}

async fn add_task(db: &Store, t: &Tenant, task: &GatewayTask) -> fiscus_store::Result<()> {
    let mut tx = db.begin().await.expect("begin");
    workflow_gateway::insert_task(&mut tx, t, task).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

#[tokio::test]
async fn the_allowlist_in_force_is_the_latest_decision_and_each_version_is_decided_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let first = grant("app_1", 1, &["wfv_a", "wfv_b"]);
    let withdrawn = grant("app_1", 2, &[]);
    let latest = grant("app_1", 3, &["wfv_c"]);
    let another_app = grant("app_2", 1, &["wfv_z"]);
    for g in [&first, &withdrawn, &latest, &another_app] {
        add_grant(&db, &t, g).await;
    }
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let in_force = workflow_gateway::in_force(&mut conn, key, &t, "app_1").await.expect("in force");
    assert_eq!(in_force, Some(latest.clone()));
    let in_force = in_force.expect("a decision");
    assert!(in_force.allows("wfv_c"));
    assert!(!in_force.allows("wfv_a"), "an earlier decision is not in force");
    assert!(first.allows("wfv_b") && !first.allows("wfv_c"));
    assert_eq!(
        workflow_gateway::grants(&mut conn, key, &t, "app_1").await.expect("grants"),
        vec![latest.clone(), withdrawn.clone(), first.clone()],
        "newest first; the withdrawal reads back empty"
    );
    assert_eq!(workflow_gateway::in_force(&mut conn, key, &t, "app_2").await.expect("in force"), Some(another_app));
    assert_eq!(workflow_gateway::in_force(&mut conn, key, &t, "app_3").await.expect("in force"), None);
    assert!(workflow_gateway::grants(&mut conn, key, &t, "app_3").await.expect("grants").is_empty());
    let strangers = strangers(&db, &t).await;
    for other in &strangers {
        assert_eq!(workflow_gateway::in_force(&mut conn, key, other, "app_1").await.expect("in force"), None);
        assert!(workflow_gateway::grants(&mut conn, key, other, "app_1").await.expect("grants").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workflow_gateway::insert_grant(&mut tx, &t, &grant("app_1", 3, &["wfv_d"])).await);
    drop(tx);
    // Versions count per application and environment.
    add_grant(&db, &strangers[1], &grant("app_1", 1, &["wfv_x"])).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(workflow_gateway::in_force(&mut conn, key, &t, "app_1").await.expect("in force"), Some(latest));
}

#[tokio::test]
async fn an_edited_allowlist_is_refused_by_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let old = grant("app_1", 1, &["wfv_a"]);
    let latest = grant("app_1", 2, &["wfv_b"]);
    add_grant(&db, &t, &old).await;
    add_grant(&db, &t, &latest).await;
    // An older decision edited: the history is refused; the one in force still reads.
    exec(&db, "UPDATE workflow_tool_grants SET decided_by = 'operator:opr_x' WHERE id = $1", &old.id).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_tampered(workflow_gateway::grants(&mut conn, key, &t, "app_1").await);
    assert_eq!(workflow_gateway::in_force(&mut conn, key, &t, "app_1").await.expect("in force"), Some(latest.clone()));
    drop(conn);
    exec(&db, "UPDATE workflow_tool_grants SET versions = 'wfv_b wfv_evil' WHERE id = $1", &latest.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(workflow_gateway::in_force(&mut conn, key, &t, "app_1").await);
}

#[tokio::test]
async fn a_task_is_found_by_its_message_or_its_run_within_its_application_and_tenant_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = queued_run(&db, &t, NOW).await;
    let x = task(&run.id, "app_1", "msg-1");
    add_task(&db, &t, &x).await.expect("insert");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(
        workflow_gateway::task(&mut conn, key, &t, "app_1", TaskKey::Message("msg-1")).await.expect("by message"),
        Some(x.clone())
    );
    assert_eq!(
        workflow_gateway::task(&mut conn, key, &t, "app_1", TaskKey::Run(&run.id)).await.expect("by run"),
        Some(x.clone())
    );
    assert_eq!(
        workflow_gateway::task(&mut conn, key, &t, "app_1", TaskKey::Message("msg-2")).await.expect("none"),
        None
    );
    assert_eq!(
        workflow_gateway::task(&mut conn, key, &t, "app_2", TaskKey::Run(&run.id)).await.expect("another app"),
        None
    );
    for other in strangers(&db, &t).await {
        let by_message = workflow_gateway::task(&mut conn, key, &other, "app_1", TaskKey::Message("msg-1")).await;
        assert_eq!(by_message.expect("by message"), None);
        let by_run = workflow_gateway::task(&mut conn, key, &other, "app_1", TaskKey::Run(&run.id)).await;
        assert_eq!(by_run.expect("by run"), None);
    }
    drop(conn);
    // A message id is used once per application; another application may use it.
    let second = queued_run(&db, &t, NOW).await;
    assert_conflict(add_task(&db, &t, &task(&second.id, "app_1", "msg-1")).await);
    add_task(&db, &t, &task(&second.id, "app_2", "msg-1")).await.expect("another application's");
    // One task per run.
    let third = queued_run(&db, &t, NOW).await;
    add_task(&db, &t, &task(&third.id, "app_1", "msg-3")).await.expect("insert");
    assert_conflict(add_task(&db, &t, &task(&third.id, "app_1", "msg-4")).await);
}

#[tokio::test]
async fn an_edited_task_is_refused_by_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let run = queued_run(&db, &t, NOW).await;
    add_task(&db, &t, &task(&run.id, "app_1", "msg-1")).await.expect("insert");
    exec(&db, "UPDATE workflow_gateway_tasks SET message_hash = 'sha256:other' WHERE id = $1", &run.id).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_tampered(workflow_gateway::task(&mut conn, key, &t, "app_1", TaskKey::Message("msg-1")).await);
    assert_tampered(workflow_gateway::task(&mut conn, key, &t, "app_1", TaskKey::Run(&run.id)).await);
}
