//! The one event envelope: every lifecycle event of an action, produced through the real paths (the API,
//! the application layer's operator decisions as the console makes them, the settlement worker), is read
//! back from the outbox and validated against the OpenAPI `Event` schema by jsonschema.

use crate::python_clients::run;
use fiscus_actions::rules::approval::Decision;
use fiscus_actions::steps::decide::{Seen, decide};
use fiscus_apptest::actions::{check, proposal};
use fiscus_apptest::{TestApp, spawn_app};
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::{EventData, EventType};
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};
use std::collections::BTreeSet;

fn sandbox(app: &TestApp) -> Tenant {
    Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox }
}

async fn post(app: &TestApp, path: &str, body: &Value, status: u16) -> Value {
    let response = app.post_json(path, &app.key, body, None).await;
    assert_eq!(response.status(), status, "{path}");
    response.json().await.expect("json")
}

/// An operator's decision, through the application layer exactly as the console calls it.
async fn operator_decides(app: &TestApp, id: &str, operator: &str, decision: Decision) {
    let a: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    let mut tx = app.state.store.begin().await.expect("begin");
    decide(
        &mut tx,
        &app.state.settings,
        &sandbox(app),
        &Caller::bare(Actor::operator(operator)),
        Role::Approver,
        id,
        decision,
        &Seen {
            envelope_hash: a["envelope_hash"].as_str().expect("hash"),
            check_set_hash: a["check_set_hash"].as_str().expect("hash"),
            batch_id: None,
            reason: None,
        },
    )
    .await
    .expect("decided");
    tx.commit().await.expect("commit");
}

/// Proposes with `changes`, approves with the tier's quorum, executes; returns the id.
async fn executed(app: &TestApp, changes: Value) -> String {
    let mut body = proposal();
    body["required_checks"] = json!([]);
    for (k, v) in changes.as_object().expect("object") {
        body[k] = v.clone();
    }
    let id = post(app, "/api/v2/actions", &body, 201).await["id"].as_str().expect("id").to_string();
    operator_decides(app, &id, "opr_a", Decision::Approve).await;
    if body["risk_tier"] == "T2" {
        operator_decides(app, &id, "opr_b", Decision::Approve).await;
    }
    post(app, &format!("/api/v2/actions/{id}/execute"), &json!({}), 200).await;
    id
}

async fn settled(app: &TestApp, ids: &[&str]) {
    app.drain().await;
    for id in ids {
        let a: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
        assert!(!matches!(a["control_state"].as_str(), Some("executing" | "settled")), "{a}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lifecycle_event_is_in_the_one_envelope_and_matches_the_event_schema() {
    let app = spawn_app().await;
    // An approval policy put in force by two admins (its one rule matches none of the actions below).
    {
        let mut tx = app.state.store.begin().await.expect("begin");
        let policy = serde_json::from_value(json!({ "rules": [ { "name": "very-large",
            "when": { "amount_at_least_minor": { "USD": 100_000_000_000_i64 } }, "require": { "quorum": 3 } } ] }))
        .expect("policy");
        let ada = Caller::bare(Actor::operator("opr_ada"));
        let v = fiscus_actions::steps::policies::propose(&mut tx, &sandbox(&app), &ada, Role::Admin, policy)
            .await
            .expect("propose");
        let bob = Caller::bare(Actor::operator("opr_bob"));
        let hash = v.record.content_hash.clone();
        fiscus_actions::steps::policies::decide(
            &mut tx,
            &app.state.settings,
            &sandbox(&app),
            &bob,
            Role::Admin,
            &v.record.id,
            true,
            None,
            &hash,
        )
        .await
        .expect("in force");
        tx.commit().await.expect("commit");
    }
    // T2: a check, one approval short of the quorum, the quorum, a new check version (invalidation), again.
    let mut t2 = proposal();
    t2["risk_tier"] = json!("T2");
    let id = post(&app, "/api/v2/actions", &t2, 201).await["id"].as_str().expect("id").to_string();
    let checks = format!("/api/v2/actions/investment-execution/{id}/checks");
    post(&app, &checks, &check("passed"), 200).await;
    operator_decides(&app, &id, "opr_a", Decision::Approve).await;
    operator_decides(&app, &id, "opr_b", Decision::Approve).await;
    post(&app, &checks, &check("passed"), 200).await;
    operator_decides(&app, &id, "opr_a", Decision::Approve).await;
    operator_decides(&app, &id, "opr_b", Decision::Approve).await;
    post(&app, &format!("/api/v2/actions/{id}/execute"), &json!({}), 200).await;
    // An external agent's draft, submitted, then denied.
    let draft =
        post(&app, "/api/v2/agent-execution/proposals", &proposal(), 201).await["id"].as_str().expect("id").to_string();
    post(&app, &format!("/api/v2/agent-execution/actions/{draft}/submit"), &json!({}), 200).await;
    operator_decides(&app, &draft, "opr_a", Decision::Deny).await;
    // The sandbox connector's other outcomes.
    let failed = executed(&app, json!({ "reference": "INV-2-fail" })).await;
    let returned = executed(&app, json!({ "reference": "INV-3-return" })).await;
    let mismatch = executed(&app, json!({ "reference": "INV-4-mismatch" })).await;
    // Workflow runs: completed, rejected at review, failed at a check, cancelled.
    crate::workflows::every_workflow_event(&app).await;
    settled(&app, &[&id, &failed, &returned, &mismatch]).await;

    let mut conn = app.state.store.read().await.expect("conn");
    let events = fiscus_store::outbox::list(&mut conn, &sandbox(&app), None, 500).await.expect("outbox");
    drop(conn);
    let seen: BTreeSet<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let all: BTreeSet<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(seen, all, "every event type was produced");
    for e in &events {
        assert_eq!(e.workspace_id, app.workspace_id);
        match &e.data {
            EventData::Action(data) => {
                assert!(data.action_id.starts_with("act_"));
                let t = e.event_type.as_str();
                assert!(t.starts_with("action.") || t == "approval.requested", "{t}");
            }
            EventData::Policy(data) => {
                assert!(data.policy_id.starts_with("apv_") && data.version == 1 && data.previous_version.is_none());
                assert_eq!(e.event_type.as_str(), "approval.policy_changed");
            }
            EventData::Workflow(data) => {
                assert!(data.run_id.starts_with("wfr_") && data.version_id.starts_with("wfv_"));
                assert!(e.event_type.as_str().starts_with("workflow."), "{}", e.event_type);
            }
        }
    }
    // The T2 action's own story, in order.
    let story: Vec<&str> = events
        .iter()
        .filter(|e| matches!(&e.data, EventData::Action(d) if d.action_id == id))
        .map(|e| e.event_type.as_str())
        .collect();
    assert_eq!(
        story,
        [
            "action.proposed",
            "approval.requested",
            "action.check_recorded",
            "action.approval_recorded",
            "action.approved",
            "action.check_recorded",
            "action.approval_invalidated",
            "approval.requested",
            "action.approval_recorded",
            "action.approved",
            "action.executed",
            "action.settled",
            "action.reconciled"
        ]
    );
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), serde_json::to_vec(&events).expect("json")).expect("write");
    let (base, path) = (app.base.clone(), file.path().to_string_lossy().to_string());
    let out = tokio::task::spawn_blocking(move || run("validate_events.py", &[&base, &path])).await.expect("join");
    assert!(out.contains(" 0 wrong"), "{out}");
}
