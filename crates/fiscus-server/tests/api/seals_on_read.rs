//! Every read of sealed data checks its seal: a row edited in the database behind the service's back is
//! refused (500 `integrity_failure`, or a failed task or job), never served or acted on as authentic. One
//! case per sealed table the API serves; the suite runs on both backends. (Price rows against their
//! dataset's content hash: `data.rs`; research snapshots, LQM records, lineage exports and signed clients'
//! grants: their own modules.)

use fiscus_apptest::actions::proposal;
use fiscus_apptest::{EVIDENCE, TestApp, evidence_body, problem, spawn_app, spawn_app_with};
use fiscus_domain::clock::now_micros;
use serde_json::{Value, json};

async fn created(app: &TestApp, path: &str, body: &Value) -> String {
    let r = app.post_json(path, &app.key, body, None).await;
    let status = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{path}: {v}");
    v["id"].as_str().expect("id").to_string()
}

async fn refused(app: &TestApp, path: &str) {
    problem(app.get(path, &app.key).await, 500, "integrity_failure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_action_is_refused_on_every_read_of_it() {
    let app = spawn_app().await;
    let id = created(&app, "/api/v2/actions", &proposal()).await;
    assert_eq!(app.get(&format!("/api/v2/actions/{id}"), &app.key).await.status(), 200);
    app.execute(&format!("UPDATE actions SET counterparty = 'cp_mallory' WHERE id = '{id}'")).await;
    for path in [
        format!("/api/v2/actions/{id}"),
        "/api/v2/actions".to_string(),
        format!("/api/v2/agent-execution/actions/{id}"),
        format!("/api/v2/agent-execution/actions/{id}/assurance"),
        format!("/api/v2/agent-execution/actions/{id}/reconciliation"),
    ] {
        refused(&app, &path).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_evidence_identities_delegations_and_webhook_endpoints_are_refused() {
    let app = spawn_app().await;
    created(&app, EVIDENCE, &evidence_body("SOC 2 type II")).await;
    app.execute("UPDATE autonomy_evidence SET title = 'SOC 2 type II (clean)'").await;
    refused(&app, EVIDENCE).await;

    let key = [7u8; 32];
    let public_key = fiscus_apptest::b64(&ed25519_dalek::SigningKey::from_bytes(&key).verifying_key().to_bytes());
    let identity =
        created(&app, "/api/v2/actions/agentic/identities", &json!({ "name": "agent-7", "public_key": public_key }))
            .await;
    let terms = json!({
        "action": "payment", "counterparty": "cp_acme", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": 1000,
        "daily_budget_minor": 5000, "monthly_budget_minor": 20000, "valid_for_days": 180
    });
    let delegation = created(&app, &format!("/api/v2/actions/agentic/identities/{identity}/delegations"), &terms).await;
    app.execute(&format!("UPDATE delegations SET monthly_limit_minor = 99999999 WHERE id = '{delegation}'")).await;
    refused(&app, &format!("/api/v2/actions/agentic/delegations/{delegation}")).await;
    app.execute(&format!("UPDATE machine_identities SET name = 'agent-8' WHERE id = '{identity}'")).await;
    refused(&app, &format!("/api/v2/actions/agentic/identities/{identity}")).await;
    refused(&app, "/api/v2/actions/agentic/identities").await;

    let hooks = "/api/v2/agent-execution/webhooks";
    let endpoint = created(&app, hooks, &json!({ "url": "https://hooks.example.com/fiscus" })).await;
    app.execute(&format!("UPDATE webhook_endpoints SET url = 'https://93.184.215.15/steal' WHERE id = '{endpoint}'"))
        .await;
    refused(&app, hooks).await;
    let revoke = app.http.delete(app.url(&format!("{hooks}/{endpoint}"))).bearer_auth(&app.key).send().await;
    problem(revoke.expect("request"), 500, "integrity_failure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_a2a_task_is_not_served_as_authentic() {
    let app = spawn_app().await;
    let send = |id: &str| {
        json!({ "jsonrpc": "2.0", "id": "r1", "method": "SendMessage", "params": { "message": {
            "messageId": id, "role": "ROLE_USER", "parts": [{ "data": { "skill": "get_workspace", "arguments": {} } }],
        } } })
    };
    let rpc = |body: Value| {
        let app = &app;
        async move {
            let r = app
                .http
                .post(app.url("/api/v2/agent-execution/a2a"))
                .bearer_auth(&app.key)
                .header("A2A-Version", "1.0")
                .json(&body)
                .send()
                .await
                .expect("request");
            r.json::<Value>().await.expect("json")
        }
    };
    let sent = rpc(send("m-1")).await;
    let task = sent["result"]["task"]["id"].as_str().expect("task").to_string();
    app.execute(&format!("UPDATE a2a_tasks SET result = '{{\"forged\":true}}' WHERE id = '{task}'")).await;
    let get = json!({ "jsonrpc": "2.0", "id": "r1", "method": "GetTask", "params": { "id": task } });
    // Refused as the API refuses every record that fails verification: 500 `integrity_failure`.
    let list = json!({ "jsonrpc": "2.0", "id": "r1", "method": "ListTasks", "params": {} });
    for refused in [rpc(get).await, rpc(send("m-1")).await, rpc(list).await] {
        assert_eq!(refused["code"], "integrity_failure", "{refused}");
        assert!(refused.get("result").is_none(), "{refused}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_job_whose_request_was_edited_is_failed_not_computed() {
    let app = spawn_app_with(|s| s.compute_worker = false).await;
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 100, "test grant").await.expect("credits");
    let body = json!({ "objective": "min_variance", "returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.01, 0.0], [0.0, 0.02], [-0.01, 0.01]])) });
    let r = app
        .http
        .post(app.url("/api/v2/quant/compute/optimizations"))
        .bearer_auth(&app.key)
        .header("Prefer", "respond-async")
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string();
    app.execute(&format!("UPDATE compute_jobs SET request = replace(request, '0.02', '0.2') WHERE id = '{id}'")).await;
    // The worker's own steps, awaited here rather than spawned: claim, then carry the job out.
    let mut tx = app.state.store.begin().await.expect("begin");
    let claimed = fiscus_models::tables::compute::claim(&mut tx, "wrk_test", now_micros(), 30_000_000, 1, 1)
        .await
        .expect("claim");
    tx.commit().await.expect("commit");
    let job = claimed.into_iter().next().expect("the queued job is claimed");
    let thread = app.state.compute.reserve().expect("a job thread");
    fiscus_models::compute::execute(&app.state, "wrk_test", job, thread).await.expect("executed");
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM compute_jobs WHERE id = '{id}' AND state = 'failed'")).await,
        1
    );
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM compute_results WHERE job_id = '{id}'")).await, 0);
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM compute_jobs WHERE id = '{id}' AND error_code = 'integrity_failure'"))
            .await,
        1
    );
    refused(&app, &format!("/api/v2/quant/compute/jobs/{id}")).await;
}
