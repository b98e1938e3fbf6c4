//! The workflow A2A gateway: only versions on the application's workflow-tool allowlist (decided by an admin
//! at the console) run; a run that ends at once answers 200 with its evidence, one that waits for a person
//! answers 202 and is read and cancelled as a task; a version outside the gateway's boundary is refused.

use crate::signed_clients::{Signed, granted_client};
use crate::workflows::{demo, installed};
use fiscus_apptest::console::{client, console_page, enrolled_operator, hidden, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

const GATEWAY: &str = "/api/v2/agent-execution/workflows/a2a";

fn send(message_id: &str, skill: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": "r1", "method": "SendMessage", "params": { "message": {
        "messageId": message_id, "role": "ROLE_USER", "parts": [{ "data": { "skill": skill } }] } } })
}

fn call(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": "r2", "method": method, "params": params })
}

async fn rpc(app: &TestApp, body: &Value) -> reqwest::Response {
    app.http
        .post(app.url(GATEWAY))
        .bearer_auth(&app.key)
        .header("A2A-Version", "1.0")
        .json(body)
        .send()
        .await
        .expect("request")
}

async fn answer(response: reqwest::Response, status: u16) -> Value {
    let got = response.status().as_u16();
    let body: Value = response.json().await.expect("json");
    assert_eq!(got, status, "{body}");
    body
}

/// An admin's allowlist decision for the test application, through the console's own form.
pub async fn allowlist(app: &TestApp, cookie: &str, versions: &[&str]) -> reqwest::Response {
    let path = format!("/console/workflow-tools/{}?environment=sandbox", app.app_id);
    let page = console_page(app, cookie, &path).await;
    let mut form: Vec<(String, String)> = vec![
        ("csrf".into(), hidden(&page, "csrf")),
        ("environment".into(), "sandbox".into()),
        ("seen_version".into(), if page.contains("seen_version") { hidden(&page, "seen_version") } else { "0".into() }),
    ];
    form.extend(versions.iter().map(|v| ("version".to_string(), v.to_string())));
    client()
        .post(app.url(&format!("/console/workflow-tools/{}", app.app_id)))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
}

pub async fn admin_cookie(app: &TestApp) -> String {
    let admin = enrolled_operator(app, &format!("tools-{}@example.com", app.app_id.to_lowercase()), Role::Admin).await;
    sign_in(app, &admin).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_allowlisted_workflows_run_and_an_ended_run_answers_with_its_evidence() {
    let app = spawn_app().await;
    demo(&app).await;
    let report = installed(&app, "liquidity_report").await;
    let monitoring = installed(&app, "model_monitoring").await;

    // Nothing is allowlisted yet: refused, and no run started.
    let refused = problem(rpc(&app, &send("m-1", &report)).await, 422, "outside_grant").await;
    assert_eq!(refused["skill"], report.as_str());
    let runs: Value = app.get("/api/v2/workflows/runs", &app.key).await.json().await.expect("json");
    assert_eq!(runs["data"], json!([]));

    // An approver may not decide the allowlist; an admin may.
    let approver = enrolled_operator(&app, "approver@example.com", Role::Approver).await;
    let approver_cookie = sign_in(&app, &approver).await;
    let page =
        console_page(&app, &approver_cookie, &format!("/console/workflow-tools/{}?environment=sandbox", app.app_id))
            .await;
    assert!(page.contains("Only admins decide workflow tools"), "{page}");
    let cookie = admin_cookie(&app).await;
    assert_eq!(allowlist(&app, &cookie, &[&report]).await.status(), 303);
    let page = console_page(&app, &cookie, "/console/workflow-tools").await;
    assert!(page.contains("1 version(s) (decision 1)"), "{page}");

    // The report's steps need no person: the run ends within the answer.
    let sent = answer(rpc(&app, &send("m-2", &report)).await, 200).await;
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    let run_id = task["id"].as_str().expect("id").to_string();
    assert!(run_id.starts_with("wfr_"));
    assert_eq!(task["metadata"]["skill"], report.as_str());
    let run = &task["artifacts"][0]["parts"][0]["data"];
    assert_eq!(run["state"], "completed");
    assert_eq!(run["evidence_hash"], task["metadata"]["evidenceHash"]);
    assert!(run["steps"].as_array().expect("steps").len() >= 4, "{run}");

    // The same message again is its first task; the same id for another message is refused.
    let again = answer(rpc(&app, &send("m-2", &report)).await, 200).await;
    assert_eq!(again["result"]["task"]["id"], run_id.as_str());
    let reused = answer(rpc(&app, &send("m-2", &monitoring)).await, 200).await;
    assert_eq!(reused["error"]["code"], -32602, "{reused}");
    let runs: Value = app.get("/api/v2/workflows/runs", &app.key).await.json().await.expect("json");
    assert_eq!(runs["data"].as_array().expect("runs").len(), 1, "a retry starts nothing");

    // A version the allowlist does not name stays refused.
    problem(rpc(&app, &send("m-3", &monitoring)).await, 422, "outside_grant").await;

    // GetTask reads the run; an unknown task is -32001.
    let read = answer(rpc(&app, &call("GetTask", json!({ "id": run_id }))).await, 200).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    let unknown =
        answer(rpc(&app, &call("GetTask", json!({ "id": "wfr_01M8C3ZQ5V6J1P8N2T4W0XK7RD" }))).await, 200).await;
    assert_eq!(unknown["error"]["code"], -32001);
    // An ended run cannot be cancelled.
    let ended = answer(rpc(&app, &call("CancelTask", json!({ "id": run_id }))).await, 200).await;
    assert_eq!(ended["error"]["code"], -32002, "{ended}");

    // The extended card lists exactly the allowlisted versions.
    let card = answer(rpc(&app, &call("GetExtendedAgentCard", json!({}))).await, 200).await;
    let skills: Vec<&str> =
        card["result"]["skills"].as_array().expect("skills").iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(skills, [report.as_str()]);
    assert!(card["result"]["supportedInterfaces"][0]["url"].as_str().expect("url").ends_with(GATEWAY));

    // Withdrawn: refused again.
    assert_eq!(allowlist(&app, &cookie, &[]).await.status(), 303);
    problem(rpc(&app, &send("m-4", &report)).await, 422, "outside_grant").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_for_a_person_is_accepted_read_and_cancelled_as_a_task() {
    let app = spawn_app().await;
    demo(&app).await;
    let monitoring = installed(&app, "model_monitoring").await;
    let cookie = admin_cookie(&app).await;
    assert_eq!(allowlist(&app, &cookie, &[&monitoring]).await.status(), 303);

    // Its review step waits for a person at the console: accepted, still working.
    let sent = answer(rpc(&app, &send("wait-1", &monitoring)).await, 202).await;
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{sent}");
    assert!(task.get("artifacts").is_none());
    let run_id = task["id"].as_str().expect("id").to_string();
    crate::workflows::reaches(&app, &run_id, "awaiting_review").await;
    let read = answer(rpc(&app, &call("GetTask", json!({ "id": run_id }))).await, 200).await;
    assert_eq!(read["result"]["metadata"]["runState"], "awaiting_review");
    assert!(read["result"]["status"]["message"]["parts"][0]["text"].as_str().expect("text").contains("review"));

    let cancelled = answer(rpc(&app, &call("CancelTask", json!({ "id": run_id }))).await, 200).await;
    assert_eq!(cancelled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{cancelled}");
    let run: Value = app.get(&format!("/api/v2/workflows/runs/{run_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(run["state"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_outside_the_boundary_is_refused_and_signed_clients_see_only_their_tasks() {
    let app = spawn_app().await;
    demo(&app).await;
    // A version with an agent step: it can be allowlisted, but the gateway never runs it.
    let body = json!({ "name": "Reaches out", "definition": { "steps": [
        { "id": "ask", "kind": "agent", "description": "summarise the day" } ] } });
    let created = app.post_json("/api/v2/workflow-studio/versions", &app.key, &body, None).await;
    let created: Value = created.json().await.expect("json");
    let outside = created["id"].as_str().unwrap_or_else(|| panic!("{created}")).to_string();
    let report = installed(&app, "liquidity_report").await;
    let cookie = admin_cookie(&app).await;
    assert_eq!(allowlist(&app, &cookie, &[&outside, &report]).await.status(), 303);
    let refused = problem(rpc(&app, &send("b-1", &outside)).await, 422, "step_kind_unavailable").await;
    assert_eq!(refused["steps"][0]["kind"], "agent", "{refused}");

    // A signed client of the same application runs the allowlisted report; its task is its own.
    let signer = granted_client(&app, &[], &[], (600, 100_000)).await;
    let response = Signed::post(GATEWAY, &send("s-1", &report)).send(&app, &signer).await;
    let sent = answer(response, 200).await;
    let run_id = sent["result"]["task"]["id"].as_str().expect("id").to_string();
    let mine = Signed::post(GATEWAY, &call("GetTask", json!({ "id": run_id }))).send(&app, &signer).await;
    assert_eq!(answer(mine, 200).await["result"]["id"], run_id.as_str());
    // A bearer credential's task is not the signed client's to read.
    let bearer = answer(rpc(&app, &send("b-2", &report)).await, 200).await;
    let theirs = bearer["result"]["task"]["id"].as_str().expect("id");
    let read = Signed::post(GATEWAY, &call("GetTask", json!({ "id": theirs }))).send(&app, &signer).await;
    assert_eq!(answer(read, 200).await["error"]["code"], -32001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_gateway_run_stops_at_its_next_step_once_its_version_is_withdrawn() {
    use fiscus_domain::credentials::Environment;
    use fiscus_domain::tenancy::Tenant;
    // No workflow worker: the run an agent starts waits on the queue, as under load.
    let app = fiscus_apptest::spawn_app_with(|s| s.workflow_worker = false).await;
    demo(&app).await;
    let report = installed(&app, "liquidity_report").await;
    let cookie = admin_cookie(&app).await;
    assert_eq!(allowlist(&app, &cookie, &[&report]).await.status(), 303);
    // Not ended within the answer: 202, the task working.
    let sent = answer(rpc(&app, &send("m-1", &report)).await, 202).await;
    let run_id = sent["result"]["task"]["id"].as_str().expect("id").to_string();
    assert_eq!(sent["result"]["task"]["status"]["state"], "TASK_STATE_WORKING", "{sent}");
    // An admin withdraws the version: the queued run ends at its next step, cancelled, without a step run.
    assert_eq!(allowlist(&app, &cookie, &[]).await.status(), 303);
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let claimed = fiscus_agents::tables::workflows::Claimed { run_id: run_id.clone(), tenant };
    fiscus_agents::workflows::runtime::advance(&app.state, "wrk_test", &claimed).await.expect("advance");
    let run: Value = app.get(&format!("/api/v2/workflows/runs/{run_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(run["state"], "cancelled", "{run}");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM workflow_run_steps WHERE run_id = '{run_id}'")).await, 0);
    let read = answer(rpc(&app, &call("GetTask", json!({ "id": run_id }))).await, 200).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_CANCELED", "{read}");
}
