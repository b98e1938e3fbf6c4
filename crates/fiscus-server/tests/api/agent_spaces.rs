//! Agent Spaces: a shipped space promoted by an admin at the console, run in the request (201) and on the
//! queue (202), each tool call recorded; a suspended space (409), a full runtime (429 with Retry-After), no
//! queue driver (503), a reused Idempotency-Key with another prompt, and another workspace's run.

use crate::workflows::demo;
use fiscus_apptest::console::{client, console_page, enrolled_operator, hidden, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_domain::credentials::AppStatus;
use fiscus_domain::people::Role;
use fiscus_domain::scopes::ScopeSet;
use fiscus_kernel::settings::AgentQueue;
use serde_json::{Value, json};

/// An admin's decision at the console (`promote` or `suspend`) about shipped space `key` in the sandbox.
pub async fn decide(app: &TestApp, key: &str, decision: &str) {
    let email = format!("spaces-{}@example.com", fiscus_domain::ids::new_id("op").to_lowercase());
    let admin = enrolled_operator(app, &email, Role::Admin).await;
    let cookie = sign_in(app, &admin).await;
    let page = console_page(app, &cookie, "/console/agent-spaces").await;
    let response = client()
        .post(app.url(&format!("/console/agent-spaces/{key}")))
        .header("cookie", &cookie)
        .form(&[("csrf", hidden(&page, "csrf")), ("environment", "sandbox".into()), ("decision", decision.into())])
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 303, "{}", response.text().await.unwrap_or_default());
}

/// Promotes `key` (with credits to run it) and returns its space id.
pub async fn promoted(app: &TestApp, key: &str) -> String {
    let sandbox = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&sandbox, 100, "agent spaces").await.expect("credits");
    decide(app, key, "promote").await;
    let spaces: Value = app.get("/api/v2/agents/spaces", &app.key).await.json().await.expect("json");
    let space = spaces["data"].as_array().expect("data").iter().find(|s| s["key"] == key).expect("listed").clone();
    space["id"].as_str().expect("id").to_string()
}

async fn run(app: &TestApp, space: &str, body: &Value, key: Option<&str>) -> reqwest::Response {
    app.post_json(&format!("/api/v2/agents/spaces/{space}/runs"), &app.key, body, key).await
}

async fn balance(app: &TestApp) -> i64 {
    let b: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    b["balance"].as_i64().unwrap_or_else(|| panic!("{b}"))
}

/// The execution record of a run (its calls).
async fn execution_of(app: &TestApp, run: &Value) -> Value {
    let path = format!("/api/v2/agents/executions/{}", run["execution_id"].as_str().expect("execution"));
    app.get(&path, &app.key).await.json().await.expect("json")
}

/// A run once the workers have drained: ended.
async fn ended(app: &TestApp, run: &str) -> Value {
    app.drain().await;
    let r: Value = app.get(&format!("/api/v2/agents/runs/{run}"), &app.key).await.json().await.expect("json");
    assert!(r["state"] == "completed" || r["state"] == "failed", "run {run} did not end: {r}");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_space_runs_in_the_request_and_on_the_queue_recording_every_call() {
    let app = spawn_app().await;
    demo(&app).await;
    let spaces: Value = app.get("/api/v2/agents/spaces", &app.key).await.json().await.expect("json");
    assert_eq!(spaces["data"], json!([]), "nothing runs before an operator promotes it");
    let space = promoted(&app, "market_watch").await;
    let view: Value = app.get(&format!("/api/v2/agents/spaces/{space}"), &app.key).await.json().await.expect("json");
    assert_eq!(view["status"], "active");
    assert_eq!(view["active_version"]["version"], 1);
    assert!(view["active_version"]["promoted_by"].as_str().expect("by").starts_with("operator:"));
    let listed: Value =
        app.get("/api/v2/marketplace/listings?kind=agent_space", &app.key).await.json().await.expect("json");
    let listing =
        listed["data"].as_array().expect("data").iter().find(|l| l["key"] == "market_watch").expect("listed").clone();
    assert_eq!(listing["content_hash"], view["active_version"]["definition_hash"]);
    assert_eq!(listing["path"], format!("/api/v2/agents/spaces/{space}/runs"));

    // In the request: 201, the ticker in the prompt taken into the call.
    let before = balance(&app).await;
    let body = json!({ "prompt": "How did AAPL move? Show its prices.", "execution_mode": "sync", "model_selection": "auto_native" });
    let response = run(&app, &space, &body, None).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().expect("location").to_string();
    let done: Value = response.json().await.expect("json");
    assert_eq!(done["state"], "completed", "{done}");
    assert_eq!(location, format!("/api/v2/agents/runs/{}", done["id"].as_str().expect("id")));
    assert_eq!(done["plan"][0]["arguments"]["uid"], "AAPL");
    assert_eq!(balance(&app).await, before - 1, "a run costs one credit");
    let execution = execution_of(&app, &done).await;
    assert_eq!(execution["queued"], false);
    let calls = execution["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["tool"], "get_data_instruments_uid_prices");
    assert_eq!(calls[0]["status"], 200);
    assert!(calls[0]["response"]["data"].as_array().is_some_and(|bars| !bars.is_empty()), "{}", calls[0]);
    assert!(done["output_hash"].as_str().expect("hash").starts_with("sha256:"));

    // On the queue: the briefing plans four calls, so `auto` queues it.
    let briefing = promoted(&app, "treasury_briefing").await;
    let response =
        run(&app, &briefing, &json!({ "prompt": "Morning briefing, please", "execution_mode": "auto" }), None).await;
    assert_eq!(response.status(), 202);
    let queued: Value = response.json().await.expect("json");
    assert_eq!(queued["queued"], true);
    let finished = ended(&app, queued["id"].as_str().expect("id")).await;
    assert_eq!(finished["state"], "completed", "{finished}");
    let execution = execution_of(&app, &finished).await;
    let tools: Vec<&str> =
        execution["calls"].as_array().expect("calls").iter().filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(tools, ["get_actions", "get_trust_audit_head", "get_ai_credits_balance", "get_workflows_runs"]);

    // A prompt the playbook does not handle changes nothing.
    problem(run(&app, &space, &json!({ "prompt": "hello there" }), None).await, 422, "invalid_request").await;

    // The same Idempotency-Key: the first answer again; with another prompt, refused.
    let keyed = json!({ "prompt": "Show SPX prices", "execution_mode": "sync" });
    let first: Value = run(&app, &space, &keyed, Some("idem-1")).await.json().await.expect("json");
    let again = run(&app, &space, &keyed, Some("idem-1")).await;
    assert_eq!(again.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));
    assert_eq!(again.json::<Value>().await.expect("json")["id"], first["id"]);
    let other = json!({ "prompt": "Show MSFT prices", "execution_mode": "sync" });
    problem(run(&app, &space, &other, Some("idem-1")).await, 409, "idempotency_key_reused").await;

    // Another workspace sees none of it.
    let (_, theirs) = app.other_workspace_key().await;
    problem(app.get(&format!("/api/v2/agents/spaces/{space}"), &theirs).await, 404, "not_found").await;
    problem(app.get(&location, &theirs).await, 404, "not_found").await;
    let path = format!("/api/v2/agents/spaces/{space}/runs");
    problem(app.post_json(&path, &theirs, &keyed, None).await, 404, "not_found").await;

    // Suspended: refused until promoted again.
    decide(&app, "market_watch", "suspend").await;
    problem(run(&app, &space, &keyed, None).await, 409, "space_not_runnable").await;
    decide(&app, "market_watch", "promote").await;
    let back = run(&app, &space, &keyed, None).await;
    assert_eq!(back.status(), 201);
    let back: Value = back.json().await.expect("json");
    assert_eq!(back["version_id"], done["version_id"], "an unchanged definition keeps its version");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_runtime_answers_429_with_retry_after() {
    let app = spawn_app_with(|s| {
        s.agent_capacity = 1;
        s.agent_worker = false;
    })
    .await;
    demo(&app).await;
    let space = promoted(&app, "market_watch").await;
    let body = json!({ "prompt": "Show SPX prices", "execution_mode": "async" });
    assert_eq!(run(&app, &space, &body, None).await.status(), 202);
    let full = run(&app, &space, &body, None).await;
    assert_eq!(full.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
    let refused = problem(full, 429, "capacity_exhausted").await;
    assert_eq!(refused["retry_after"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_queue_driver_an_asynchronous_run_answers_503_and_sync_and_auto_runs_run() {
    let app = spawn_app_with(|s| s.agent_queue = AgentQueue::None).await;
    demo(&app).await;
    let space = promoted(&app, "market_watch").await;
    let before = balance(&app).await;
    let queued = json!({ "prompt": "Show SPX prices", "execution_mode": "async" });
    problem(run(&app, &space, &queued, None).await, 503, "queue_unavailable").await;
    assert_eq!(balance(&app).await, before, "a refused run costs nothing");
    let now = json!({ "prompt": "Show SPX prices", "execution_mode": "sync" });
    assert_eq!(run(&app, &space, &now, None).await.status(), 201);
    // `auto` of four calls would go on a queue; with none, it serves the caller in the request.
    let briefing = promoted(&app, "treasury_briefing").await;
    let auto =
        run(&app, &briefing, &json!({ "prompt": "Morning briefing, please", "execution_mode": "auto" }), None).await;
    assert_eq!(auto.status(), 201);
    let auto: Value = auto.json().await.expect("json");
    assert_eq!((auto["queued"].as_bool(), auto["state"].as_str()), (Some(false), Some("completed")), "{auto}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_calls_with_the_authority_its_application_holds_when_it_runs_not_when_it_was_queued() {
    let app = spawn_app_with(|s| s.agent_worker = false).await;
    demo(&app).await;
    let space = promoted(&app, "market_watch").await;
    let body = json!({ "prompt": "How did AAPL move? Show its prices.", "execution_mode": "async" });
    let queued: Value = run(&app, &space, &body, None).await.json().await.expect("json");
    let id = queued["id"].as_str().expect("id").to_string();
    // The workspace loses its market data entitlement while the run waits: a direct read is refused now,
    // and so is the run's call when the worker makes it.
    let without_market =
        ScopeSet::parse(&ScopeSet::all().iter().filter(|s| !s.starts_with("data:")).collect::<Vec<_>>().join(" "))
            .expect("scopes");
    app.admin().set_workspace_entitlement(&app.workspace_id, &without_market).await.expect("entitlement");
    problem(app.get("/api/v2/data/instruments/AAPL/prices", &app.key).await, 403, "entitlement_missing").await;
    fiscus_server::workers::agent_runs::run_once(&app.state, &fiscus_server::app::dispatcher(&app.state), "wrk_test")
        .await
        .expect("worker");
    let finished = ended(&app, &id).await;
    assert_eq!(finished["state"], "failed", "{finished}");
    let execution = execution_of(&app, &finished).await;
    assert_eq!(execution["calls"][0]["status"], 403, "{execution}");

    // An application suspended while its run waits: the run ends without calling anything.
    app.admin().set_workspace_entitlement(&app.workspace_id, &ScopeSet::all()).await.expect("entitlement");
    let queued: Value = run(&app, &space, &body, None).await.json().await.expect("json");
    app.admin().set_application_status(&app.app_id, AppStatus::Suspended).await.expect("suspend");
    fiscus_server::workers::agent_runs::run_once(&app.state, &fiscus_server::app::dispatcher(&app.state), "wrk_test")
        .await
        .expect("worker");
    app.admin().set_application_status(&app.app_id, AppStatus::Active).await.expect("active");
    let finished = ended(&app, queued["id"].as_str().expect("id")).await;
    assert_eq!(finished["state"], "failed", "{finished}");
    let execution = execution_of(&app, &finished).await;
    assert_eq!(execution["calls"], json!([]), "{execution}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_of_a_space_suspended_meanwhile_makes_no_call() {
    let app = spawn_app_with(|s| s.agent_worker = false).await;
    demo(&app).await;
    let space = promoted(&app, "market_watch").await;
    let body = json!({ "prompt": "How did AAPL move? Show its prices.", "execution_mode": "async" });
    let queued: Value = run(&app, &space, &body, None).await.json().await.expect("json");
    assert_eq!(queued["state"], "queued", "{queued}");
    // An admin suspends the space while the run waits: new runs are refused, and the queued one ends at its
    // next step without calling anything, saying why.
    decide(&app, "market_watch", "suspend").await;
    problem(run(&app, &space, &body, None).await, 409, "space_not_runnable").await;
    fiscus_server::workers::agent_runs::run_once(&app.state, &fiscus_server::app::dispatcher(&app.state), "wrk_test")
        .await
        .expect("worker");
    let finished = ended(&app, queued["id"].as_str().expect("id")).await;
    assert_eq!(finished["state"], "failed", "{finished}");
    assert!(finished["answer"].as_str().is_some_and(|a| a.contains("suspended")), "{finished}");
    let execution = execution_of(&app, &finished).await;
    assert_eq!(execution["calls"], json!([]), "{execution}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_whose_record_was_edited_is_set_aside_and_the_next_runs() {
    let app = spawn_app_with(|s| s.agent_worker = false).await;
    demo(&app).await;
    let space = promoted(&app, "market_watch").await;
    let body = json!({ "prompt": "How did AAPL move? Show its prices.", "execution_mode": "async" });
    let edited: Value = run(&app, &space, &body, None).await.json().await.expect("json");
    let edited = edited["id"].as_str().expect("id").to_string();
    // Someone with the database edits the queued run's prompt: its seal no longer matches.
    app.execute(&format!("UPDATE agent_runs SET body = replace(body, 'AAPL', 'MSFT') WHERE id = '{edited}'")).await;
    fiscus_server::workers::agent_runs::run_once(&app.state, &fiscus_server::app::dispatcher(&app.state), "wrk_test")
        .await
        .expect("worker");
    let aside = format!("SELECT COUNT(*) FROM set_aside WHERE table_name = 'agent_runs' AND record_id = '{edited}'");
    assert_eq!(app.count(&aside).await, 1, "set aside, named");
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM agent_runs WHERE id = '{edited}' AND claimed_by IS NOT NULL")).await,
        0
    );
    // It is never claimed again, and the workspace's next run is carried out.
    let next: Value = run(&app, &space, &body, None).await.json().await.expect("json");
    let n = fiscus_server::workers::agent_runs::run_once(
        &app.state,
        &fiscus_server::app::dispatcher(&app.state),
        "wrk_test",
    )
    .await
    .expect("worker");
    assert_eq!(n, 1);
    let finished = ended(&app, next["id"].as_str().expect("id")).await;
    assert_eq!(finished["state"], "completed", "{finished}");
}
