//! Financial Actions through the machine plane: proposals, reads, submission, checks, execution gates.
//! Operator decisions belong to the console; until its tests drive them, `simulate_operator_approval`
//! writes a decision row the way the console will, so the gates can be exercised.

use fiscus_apptest::actions::{check, proposal};
use fiscus_apptest::{TestApp, problem, spawn_app};
use serde_json::{Value, json};

async fn propose(app: &TestApp) -> Value {
    let response = app.post_json("/api/v2/actions", &app.key, &proposal(), None).await;
    assert_eq!(response.status(), 201);
    response.json().await.expect("json")
}

async fn action(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json")
}

/// Stand-in for an operator's console approval (see the module comment).
async fn simulate_operator_approval(app: &TestApp, id: &str, operator: &str) {
    let a = action(app, id).await;
    let decision_id = fiscus_domain::ids::new_id("dec");
    app.execute(&format!(
        "INSERT INTO action_decisions (id, workspace_id, action_id, operator_id, role, decision, envelope_hash, check_set_hash, evidence_hash, created_at) \
         VALUES ('{decision_id}', '{}', '{id}', '{operator}', 'approver', 'approve', '{}', '{}', 'sha256:test', {})",
        app.workspace_id,
        a["envelope_hash"].as_str().expect("hash"),
        a["check_set_hash"].as_str().expect("hash"),
        fiscus_domain::clock::now_micros(),
    ))
    .await;
    app.reseal(&fiscus_store::seals::ACTION_DECISIONS, &decision_id).await;
    app.execute(&format!(
        "UPDATE actions SET control_state = 'approved' WHERE id = '{id}' AND control_state = 'pending_approval'"
    ))
    .await;
}

#[tokio::test]
async fn a_proposal_is_sealed_awaits_approval_and_executes_nothing() {
    let app = spawn_app().await;
    let created = propose(&app).await;
    assert_eq!(created["control_state"], "pending_approval");
    assert_eq!(created["reconciliation_status"], "not_started");
    assert_eq!(created["executes_on_creation"], false);
    assert_eq!((&created["approvals"]["current"], &created["approvals"]["required"]), (&json!(0), &json!(1)));
    assert_eq!(created["approvals"]["in_words"], "1 person, any approvers");
    assert_eq!(created["approvals"]["policy"], Value::Null, "no policy is in force: the default applied");
    let id = created["id"].as_str().expect("id");
    // The envelope hash is recomputable from the envelope alone.
    let mut payload = created["envelope"].clone();
    let obj = payload.as_object_mut().expect("object");
    obj.insert("action_id".into(), json!(id));
    obj.insert("workspace_id".into(), json!(app.workspace_id));
    obj.insert("environment".into(), json!("sandbox"));
    obj.insert("metadata".into(), json!({}));
    assert_eq!(
        fiscus_domain::evidence::seal(&payload).expect("seal"),
        created["envelope_hash"].as_str().expect("hash")
    );
    let detail = action(&app, id).await;
    assert_eq!(detail["history"][0]["event"], "action.proposed");
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM outbox WHERE subject_id = '{id}' AND event_type = 'action.proposed'"))
            .await,
        1
    );
    let list: Value =
        app.get("/api/v2/actions?control_state=pending_approval", &app.key).await.json().await.expect("json");
    assert_eq!(list["data"][0]["id"], id);
}

#[tokio::test]
async fn another_workspace_sees_no_action() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    let (_, key) = app.other_workspace_key().await;
    problem(app.get(&format!("/api/v2/actions/{id}"), &key).await, 404, "not_found").await;
    problem(app.get(&format!("/api/v2/agent-execution/actions/{id}"), &key).await, 404, "not_found").await;
    problem(app.post_json(&format!("/api/v2/actions/{id}/execute"), &key, &json!({}), None).await, 404, "not_found")
        .await;
    problem(
        app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &key, &check("passed"), None).await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn an_agent_proposal_is_a_draft_until_submitted() {
    let app = spawn_app().await;
    let response = app.post_json("/api/v2/agent-execution/proposals", &app.key, &proposal(), None).await;
    assert_eq!(response.status(), 201);
    let draft: Value = response.json().await.expect("json");
    assert_eq!(draft["control_state"], "draft");
    assert_eq!(draft["origin"], "external_agent");
    let id = draft["id"].as_str().expect("id");
    let submitted =
        app.post_json(&format!("/api/v2/agent-execution/actions/{id}/submit"), &app.key, &json!({}), None).await;
    assert_eq!(submitted.status(), 200);
    assert_eq!(submitted.json::<Value>().await.expect("json")["control_state"], "pending_approval");
    problem(
        app.post_json(&format!("/api/v2/agent-execution/actions/{id}/submit"), &app.key, &json!({}), None).await,
        422,
        "submission_rejected",
    )
    .await;
    let status: Value =
        app.get(&format!("/api/v2/agent-execution/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(status["control_state"], "pending_approval");
    assert!(
        status.get("counterparty").is_none() && status.get("metadata").is_none(),
        "no transaction details: {status}"
    );
    let app_action = propose(&app).await;
    let app_id = app_action["id"].as_str().expect("id");
    // An application's proposal entered approval when proposed: it is no draft to submit (the seed's 422).
    let body = problem(
        app.post_json(&format!("/api/v2/agent-execution/actions/{app_id}/submit"), &app.key, &json!({}), None).await,
        422,
        "submission_rejected",
    )
    .await;
    assert_eq!(body["state"], "pending_approval");
}

#[tokio::test]
async fn checks_append_versions_and_refuse_bad_evidence() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    let path = format!("/api/v2/actions/investment-execution/{id}/checks");
    let mut recorded = Vec::new();
    for (expected, status) in [(1, "failed"), (2, "passed")] {
        let response = app.post_json(&path, &app.key, &check(status), None).await;
        assert_eq!(response.status(), 200);
        let version: Value = response.json().await.expect("json");
        assert_eq!(version["version"], expected);
        recorded.push(version);
    }
    let mut other = check("passed");
    other["check_key"] = json!("best_execution");
    recorded.push(app.post_json(&path, &app.key, &other, None).await.json().await.expect("json"));

    // Every version is kept and read back in order (key, then version), each exactly as recorded, with the
    // check-set hash approvals cover (the latest versions'), the one the action itself shows.
    let versions = format!("/api/v2/actions/{id}/checks");
    let history: Value = app.get(&versions, &app.key).await.json().await.expect("json");
    assert_eq!(history["object"], "pre_trade_check_history");
    assert_eq!(history["data"], json!([recorded[2], recorded[0], recorded[1]]));
    let shown = action(&app, &id).await;
    assert_eq!(history["check_set_hash"], shown["check_set_hash"]);
    assert_eq!(shown["checks"].as_array().map(Vec::len), Some(2), "the action shows the latest of each");
    let (_, other_key) = app.other_workspace_key().await;
    problem(app.get(&versions, &other_key).await, 404, "not_found").await;
    // A version edited outside Fiscus refuses the read instead of being shown.
    let first = recorded[0]["id"].as_str().expect("id");
    app.execute(&format!("UPDATE action_checks SET status = 'passed' WHERE id = '{first}'")).await;
    problem(app.get(&versions, &app.key).await, 500, "integrity_failure").await;
    let mut bad = check("approved");
    problem(app.post_json(&path, &app.key, &bad, None).await, 422, "invalid_request").await;
    bad = check("passed");
    bad.as_object_mut().expect("object").remove("source_hash");
    let body = problem(app.post_json(&path, &app.key, &bad, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "source_hash");
    bad = check("passed");
    bad["source_reference"] = json!("");
    problem(app.post_json(&path, &app.key, &bad, None).await, 422, "invalid_request").await;
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM action_checks WHERE action_id = '{id}'")).await,
        3,
        "refusals recorded nothing"
    );
    problem(
        app.post_json("/api/v2/actions/investment-execution/act_nope/checks", &app.key, &check("passed"), None).await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn execution_is_refused_naming_each_failed_gate() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    let execute = format!("/api/v2/actions/{id}/execute");
    // No person approved it: the `authorised` gate refuses it (the seed's "422 not authorized"), alone, before
    // any other gate is read.
    let body = problem(app.post_json(&execute, &app.key, &json!({}), None).await, 422, "execution_refused").await;
    assert_eq!(body["failed_gates"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(body["failed_gates"][0]["gate"], "authorised");
    assert!(body["failed_gates"][0]["reason"].as_str().unwrap_or("").contains("pending_approval"), "{body}");
    // Approved, the gates are evaluated and each failed one is named.
    simulate_operator_approval(&app, &id, "opr_a").await;
    let body = problem(app.post_json(&execute, &app.key, &json!({}), None).await, 422, "execution_refused").await;
    let gates: Vec<&str> =
        body["failed_gates"].as_array().expect("gates").iter().filter_map(|g| g["gate"].as_str()).collect();
    assert_eq!(gates, ["pre_trade_checks"]);
    assert_eq!(action(&app, &id).await["control_state"], "approved", "a refusal changes nothing");
}

#[tokio::test]
async fn a_failed_check_refuses_and_a_new_check_version_makes_the_approval_stale() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    let checks = format!("/api/v2/actions/investment-execution/{id}/checks");
    let execute = format!("/api/v2/agent-execution/actions/{id}/execute");
    app.post_json(&checks, &app.key, &check("failed"), None).await;
    simulate_operator_approval(&app, &id, "opr_a").await;
    let body = problem(app.post_json(&execute, &app.key, &json!({}), None).await, 422, "execution_refused").await;
    assert_eq!(body["failed_gates"][0]["gate"], "pre_trade_checks");
    // A new check version on the approved action invalidates the approval.
    assert_eq!(app.post_json(&checks, &app.key, &check("passed"), None).await.status(), 200);
    let stale = action(&app, &id).await;
    assert_eq!(stale["control_state"], "pending_approval");
    assert_eq!(stale["approvals"]["current"], 0);
    assert!(stale["history"].as_array().expect("history").iter().any(|h| h["event"] == "action.approval_invalidated"));
    let body = problem(app.post_json(&execute, &app.key, &json!({}), None).await, 422, "execution_refused").await;
    assert_eq!(body["failed_gates"][0]["gate"], "authorised");
    // Approved again on the new evidence, it executes.
    simulate_operator_approval(&app, &id, "opr_a").await;
    let accepted = app.post_json(&execute, &app.key, &json!({}), None).await;
    assert_eq!(accepted.status(), 200);
    let body: Value = accepted.json().await.expect("json");
    assert_eq!(body["accepted"], true);
    assert_eq!(body["control_state"], "executing");
    // The settlement worker may already have moved it on; what matters here is the order of events.
    let mut conn = app.state.store.read().await.expect("conn");
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    let events: Vec<&str> = fiscus_store::outbox::events_of(&mut conn, &tenant, &id)
        .await
        .expect("events")
        .iter()
        .map(|e| e.event_type.as_str())
        .collect();
    assert_eq!(
        events[..7],
        [
            "action.proposed",
            "approval.requested",
            "action.check_recorded",
            "action.check_recorded",
            "action.approval_invalidated",
            "approval.requested",
            "action.executed"
        ]
    );
    // Executing twice is its lifecycle, not its authority: 409 with its state.
    let body = problem(app.post_json(&execute, &app.key, &json!({}), None).await, 409, "action_state_conflict").await;
    assert!(body["state"].is_string(), "{body}");
}

/// What the execution gates would refuse for good is refused at proposal (409, nothing stored): a
/// delegation the workspace does not hold, a connector the environment does not have. An existing
/// delegation that is suspended or expired is the gates' to refuse (`delegations.rs`).
#[tokio::test]
async fn a_proposal_naming_a_missing_delegation_or_connector_is_refused_and_stores_nothing() {
    let app = spawn_app().await;
    let mut body = proposal();
    body["execution_mode"] = json!("machine_delegated");
    body["delegation_id"] = json!(fiscus_domain::ids::new_id("dlg"));
    body["required_checks"] = json!([]);
    let refusal =
        problem(app.post_json("/api/v2/actions", &app.key, &body, None).await, 409, "reference_not_found").await;
    assert!(refusal.to_string().contains("delegation_id"), "{refusal}");
    let mut body = proposal();
    body["connector"] = json!("swift_gpi");
    let refusal =
        problem(app.post_json("/api/v2/actions", &app.key, &body, None).await, 409, "reference_not_found").await;
    assert!(refusal.to_string().contains("swift_gpi"), "{refusal}");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
}

/// No credential, whatever its scopes, can make a human decision: every documented operation is called
/// with a credential holding all 75 scopes on a pending action, and the action is still pending with no
/// decision recorded.
#[tokio::test]
async fn a_credential_with_every_scope_cannot_approve_or_deny() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    // A draft delegation the credential might try to activate.
    let identity: Value = app
        .post_json(
            "/api/v2/actions/agentic/identities",
            &app.key,
            &json!({ "name": "agent", "public_key": "11qYAYKxCrfVS/7TyWQHOg7hcvPaoiMlrwIaaPcHURo=" }),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    let terms = json!({
        "action": "payment", "counterparty": "cp", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": 1,
        "daily_budget_minor": 1, "monthly_budget_minor": 1, "valid_for_days": 180
    });
    let delegations =
        format!("/api/v2/actions/agentic/identities/{}/delegations", identity["id"].as_str().expect("id"));
    assert_eq!(app.post_json(&delegations, &app.key, &terms, None).await.status(), 201);
    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let concrete = path.replace("{uid}", &id);
        for method in ["post", "delete"] {
            let Some(op) = item.get(method) else { continue };
            let example = op.pointer("/requestBody/content/application~1json/example").cloned().unwrap_or(json!({}));
            for body in
                [example, json!({ "decision": "approve" }), json!({ "approve": true, "control_state": "approved" })]
            {
                let req = app
                    .http
                    .request(method.to_uppercase().parse().expect("method"), app.url(&concrete))
                    .bearer_auth(&app.key)
                    .json(&body);
                let status = req.send().await.expect("request").status().as_u16();
                assert!(status < 500, "{method} {path}: {status}");
            }
        }
    }
    let after = action(&app, &id).await;
    assert_eq!(after["control_state"], "pending_approval");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM action_decisions WHERE action_id = '{id}'")).await, 0);
    // Nor activate a delegation, nor turn production access on.
    assert_eq!(app.count("SELECT COUNT(*) FROM delegations WHERE status <> 'draft'").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM workspaces WHERE production_access <> 0").await, 0);
}

/// A fault in the decision path refuses: a store error while deciding answers 5xx and nothing executes;
/// a missing record (the delegation) is a failed gate.
#[tokio::test]
async fn a_fault_in_the_decision_path_refuses_and_nothing_executes() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &check("passed"), None).await;
    simulate_operator_approval(&app, &id, "opr_a").await;
    // The decision records become unreadable: the gate cannot establish authorisation.
    app.execute("ALTER TABLE action_decisions RENAME TO action_decisions_gone").await;
    let response = app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &json!({}), None).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["code"], "internal_error");
    assert!(body.get("detail").is_none(), "no internal text leaks: {body}");
    app.execute("ALTER TABLE action_decisions_gone RENAME TO action_decisions").await;
    assert_eq!(action(&app, &id).await["control_state"], "approved", "nothing executed");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM settlement_jobs WHERE action_id = '{id}'")).await, 0);
}

#[tokio::test]
async fn the_assurance_read_aggregates_evidence_per_domain_beside_the_envelope_hash() {
    let app = spawn_app().await;
    let created = propose(&app).await;
    let id = created["id"].as_str().expect("id");
    for domain in ["security", "governance", "security"] {
        let mut body = fiscus_apptest::evidence_body("evidence");
        body["domain"] = json!(domain);
        assert_eq!(app.post_json(fiscus_apptest::EVIDENCE, &app.key, &body, None).await.status(), 201);
    }
    let assurance: Value =
        app.get(&format!("/api/v2/agent-execution/actions/{id}/assurance"), &app.key).await.json().await.expect("json");
    assert_eq!(assurance["envelope_hash"], created["envelope_hash"]);
    assert_eq!(assurance["covered_domains"], 2);
    assert_eq!(assurance["coverage"], 0.25);
    assert_eq!(assurance["grants_authority"], false);
    let security =
        assurance["domains"].as_array().expect("domains").iter().find(|d| d["domain"] == "security").expect("security");
    assert_eq!(security["evidence_records"], 2);
}

#[tokio::test]
async fn every_gateway_request_leaves_sealed_request_evidence() {
    let app = spawn_app().await;
    let body = proposal();
    let response = app.post_json("/api/v2/agent-execution/proposals", &app.key, &body, None).await;
    assert_eq!(response.status(), 201);
    let request_id =
        response.headers().get("agent-request-id").and_then(|v| v.to_str().ok()).expect("header").to_string();
    let draft: Value = response.json().await.expect("json");
    let evidence: Value =
        app.get(&format!("/api/v2/agent-execution/requests/{request_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(evidence["operation"], "post_agent_execution_proposals");
    assert_eq!(evidence["status"], 201);
    let sent = serde_json::to_vec(&body).expect("bytes");
    assert_eq!(evidence["request_hash"], fiscus_domain::evidence::seal_bytes(&sent).as_str());
    // A refusal is evidence too.
    let id = draft["id"].as_str().expect("id");
    app.post_json(&format!("/api/v2/agent-execution/actions/{id}/submit"), &app.key, &json!({}), None).await;
    let refused =
        app.post_json(&format!("/api/v2/agent-execution/actions/{id}/submit"), &app.key, &json!({}), None).await;
    assert_eq!(refused.status(), 422, "a second submission is rejected by the controls");
    let refused_id =
        refused.headers().get("agent-request-id").and_then(|v| v.to_str().ok()).expect("header").to_string();
    let evidence: Value =
        app.get(&format!("/api/v2/agent-execution/requests/{refused_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(evidence["status"], 422);
    problem(app.get("/api/v2/agent-execution/requests/areq_nope", &app.key).await, 404, "not_found").await;
}

/// Writes a value the schema's CHECK constraints refuse, as only a broken or hostile writer could (the
/// guard is lifted for this one statement on SQLite, dropped on the test's own PostgreSQL database).
async fn force_unknown_value(app: &TestApp, table: &str, column: &str, sql: &str) {
    let mut conn = app.state.store.read().await.expect("conn");
    match app.state.store.backend() {
        fiscus_store::Backend::Sqlite => {
            sqlx::query("PRAGMA ignore_check_constraints = ON").execute(&mut *conn).await.expect("pragma");
            sqlx::query(sql).execute(&mut *conn).await.expect("update");
            sqlx::query("PRAGMA ignore_check_constraints = OFF").execute(&mut *conn).await.expect("pragma");
        }
        fiscus_store::Backend::Postgres => {
            sqlx::query(&format!("ALTER TABLE {table} DROP CONSTRAINT {table}_{column}_check"))
                .execute(&mut *conn)
                .await
                .expect("drop check");
            sqlx::query(sql).execute(&mut *conn).await.expect("update");
        }
    }
}

#[tokio::test]
async fn an_unknown_stored_risk_tier_is_refused_never_read_as_another_tier() {
    let app = spawn_app().await;
    let id = propose(&app).await["id"].as_str().expect("id").to_string();
    simulate_operator_approval(&app, &id, "opr_a").await;
    force_unknown_value(
        &app,
        "actions",
        "risk_tier",
        &format!("UPDATE actions SET risk_tier = 'T0' WHERE id = '{id}'"),
    )
    .await;
    // Resealed, so that what refuses is the decoding of the value, not the seal.
    app.reseal(&fiscus_store::seals::ACTIONS, &id).await;
    problem(app.get(&format!("/api/v2/actions/{id}"), &app.key).await, 500, "internal_error").await;
    let execute = format!("/api/v2/actions/{id}/execute");
    problem(app.post_json(&execute, &app.key, &json!({}), None).await, 500, "internal_error").await;
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM actions WHERE id = '{id}' AND control_state = 'approved'")).await,
        1
    );
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM settlement_jobs WHERE action_id = '{id}'")).await, 0);
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    let mut conn = app.state.store.read().await.expect("conn");
    let read = fiscus_actions::tables::actions::get(&mut conn, &tenant, &id).await;
    assert!(matches!(read, Err(fiscus_store::StoreError::Corrupt(ref what)) if what.contains("risk_tier")), "{read:?}");
}
