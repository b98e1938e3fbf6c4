//! The whole path: propose → check → approve (console) → execute → settle (worker) → reconcile.

use fiscus_apptest::actions::{check, proposal};
use fiscus_apptest::console::{decide, enrolled_operator, sign_in};
use fiscus_apptest::{TestApp, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

/// Proposes, records a passing check, approves through the console and requests execution.
async fn executed_action(app: &TestApp, cookie: &str, reference: &str) -> String {
    let mut body = proposal();
    body["reference"] = json!(reference);
    let created: Value = app.post_json("/api/v2/actions", &app.key, &body, None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &check("passed"), None).await;
    assert_eq!(decide(app, cookie, &id, "approve").await.status(), 303);
    let executed =
        app.post_json(&format!("/api/v2/agent-execution/actions/{id}/execute"), &app.key, &json!({}), None).await;
    assert_eq!(executed.status(), 200);
    id
}

/// The action once the workers have drained (settled, completed, or held in an exception).
async fn settle(app: &TestApp, id: &str) -> Value {
    app.drain().await;
    app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json")
}

async fn reconciliation(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/api/v2/agent-execution/actions/{id}/reconciliation"), &app.key).await.json().await.expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_path_completes_only_at_reconciliation() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = executed_action(&app, &cookie, "INV-100").await;
    let done = settle(&app, &id).await;
    assert_eq!(done["control_state"], "completed");
    assert_eq!(done["reconciliation_status"], "matched");
    let events: Vec<&str> =
        done["history"].as_array().expect("history").iter().filter_map(|h| h["event"].as_str()).collect();
    assert_eq!(
        events,
        [
            "action.proposed",
            "action.check_recorded",
            "action.approved",
            "action.executed",
            "action.settled",
            "action.reconciled"
        ]
    );
    let recon = reconciliation(&app, &id).await;
    assert_eq!(recon["completed"], true);
    assert_eq!(recon["settlements"][0]["reconciliation"], "matched");
    assert_eq!(recon["settlements"][0]["amount_minor"], 125000);
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
    assert_eq!(report.result, Ok(()));
    // Every governed change is audited once, under its event; an API request's event names its operation.
    for event in ["action.approved", "action.executed", "action.settled", "action.reconciled"] {
        assert_eq!(
            app.count(&format!("SELECT COUNT(*) FROM audit_events WHERE action = '{event}' AND subject = '{id}'"))
                .await,
            1,
            "{event} is audited"
        );
    }
    assert_eq!(
        app.count(&format!(
            "SELECT COUNT(*) FROM audit_events WHERE action = 'action.executed' AND subject = '{id}' \
             AND details LIKE '%post_agent_execution_actions_uid_execute%'"
        ))
        .await,
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_return_and_mismatch_are_never_completion() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let failed = executed_action(&app, &cookie, "INV-1-fail").await;
    let returned = executed_action(&app, &cookie, "INV-2-return").await;
    let mismatch = executed_action(&app, &cookie, "INV-3-mismatch").await;
    assert_eq!(settle(&app, &failed).await["control_state"], "failed");
    assert_eq!(settle(&app, &returned).await["control_state"], "returned");
    let exception = settle(&app, &mismatch).await;
    assert_eq!(exception["control_state"], "reconciliation_exception");
    assert_eq!(exception["reconciliation_status"], "exception");
    let recon = reconciliation(&app, &mismatch).await;
    assert_eq!(recon["completed"], false);
    assert_eq!(recon["exceptions"][0]["mismatches"], json!(["amount_minor"]));
    assert_eq!(reconciliation(&app, &failed).await["settlements"][0]["kind"], "failed");
}

/// Two nodes (two stores and two workers) on one database settle each action exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_on_one_database_settle_each_action_once() {
    let app = spawn_app().await;
    let second = fiscus_server::serve::open(app.state.settings.clone()).await.expect("second node");
    let settlement = fiscus_server::workers::settlement::Settlement { claimer: fiscus_domain::ids::new_id("wrk") };
    let second_worker = fiscus_server::workers::spawn(second.services.clone(), settlement);
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(executed_action(&app, &cookie, &format!("INV-{i}")).await);
    }
    for id in &ids {
        assert_eq!(settle(&app, id).await["control_state"], "completed");
    }
    second_worker.abort();
    for id in &ids {
        assert_eq!(app.count(&format!("SELECT COUNT(*) FROM settlement_records WHERE action_id = '{id}'")).await, 1);
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) FROM action_history WHERE action_id = '{id}' AND event = 'action.settled'"
            ))
            .await,
            1
        );
    }
    let workers = app.count("SELECT COUNT(DISTINCT processed_by) FROM settlement_records").await;
    assert!(workers >= 1);
}

/// Money moves on the sealed envelope only: an executing action whose row was edited outside Fiscus (here its
/// amount) is not paid; the item fails, nothing is recorded, and the action stays executing for someone to
/// look at.
#[tokio::test]
async fn an_action_edited_after_execution_is_not_settled() {
    // The background worker is kept idle; this test runs one pass itself, after the edit.
    let app = fiscus_apptest::spawn_app_with(|s| s.worker_interval_ms = 3_600_000).await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = executed_action(&app, &cookie, "INV-EDIT").await;
    app.execute(&format!("UPDATE actions SET amount_minor = 99999999 WHERE id = '{id}'")).await;
    let done = fiscus_server::workers::settlement::run_once(&app.state, "wrk_test").await.expect("pass");
    assert_eq!(done, 0, "the edited action must not be settled");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM settlement_records WHERE action_id = '{id}'")).await, 0);
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM actions WHERE id = '{id}' AND control_state = 'executing'")).await,
        1
    );
    // Its item is set aside (issue 54): never claimed again, while every other action settles.
    let aside = app.count("SELECT COUNT(*) FROM set_aside WHERE table_name = 'settlement_jobs'").await;
    assert_eq!(aside, 1);
    let other = executed_action(&app, &cookie, "INV-OTHER").await;
    let done = fiscus_server::workers::settlement::run_once(&app.state, "wrk_test").await.expect("pass");
    assert_eq!(done, 1, "only the untouched action is settled");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM settlement_records WHERE action_id = '{other}'")).await, 1);
    let stale = fiscus_domain::clock::now_micros() + 3_600 * fiscus_domain::clock::MICROS_PER_SECOND;
    let mut tx = app.state.store.begin().await.expect("tx");
    let again = fiscus_actions::tables::settlement::claim(&mut tx, "wrk_later", stale, 0, 16).await.expect("claim");
    tx.commit().await.expect("commit");
    assert!(again.iter().all(|j| j.action_id != id), "the set-aside item is never claimed again: {again:?}");
}
