//! Workflows: a library template installed, run on the durable runtime, paused for a person's review at the
//! console, and completed with its events; validation campaigns that refuse each prohibited step kind;
//! definitions refused with their step named; a run resumed after its worker died, no step recorded twice.

use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};

pub async fn demo(app: &TestApp) {
    app.load_demo().await;
}

async fn post(app: &TestApp, path: &str, body: &Value, status: u16) -> Value {
    let r = app.post_json(path, &app.key, body, None).await;
    let got = r.status().as_u16();
    let body: Value = r.json().await.expect("json");
    assert_eq!(got, status, "{path}: {body}");
    body
}

async fn get(app: &TestApp, path: &str) -> Value {
    let r = app.get(path, &app.key).await;
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.expect("json")
}

/// Installs a library template; returns its version id.
pub async fn installed(app: &TestApp, key: &str) -> String {
    let v = post(app, &format!("/api/v2/workflows/library/{key}/install"), &json!({}), 201).await;
    v["id"].as_str().expect("id").to_string()
}

/// Starts a run; returns its id.
pub async fn started(app: &TestApp, version: &str) -> String {
    let run = post(app, "/api/v2/workflows/runs", &json!({ "version_uid": version }), 202).await;
    assert_eq!(run["state"], "queued");
    run["id"].as_str().expect("id").to_string()
}

/// The run once it has reached `state`: the workers drain what is due, and a run waiting for its own timer
/// (a `wait` step) has the timer brought to now (`due_at`, which is all a timer is), standing in for the time
/// passing, then is drained again.
pub async fn reaches(app: &TestApp, run: &str, state: &str) -> Value {
    for _ in 0..20 {
        app.drain().await;
        let r = get(app, &format!("/api/v2/workflows/runs/{run}")).await;
        if r["state"] == state {
            return r;
        }
        if r["state"] != "waiting" {
            break;
        }
        let now = fiscus_domain::clock::now_micros();
        app.execute(&format!("UPDATE workflow_runs SET due_at = {now} WHERE id = '{run}' AND state = 'waiting'")).await;
    }
    panic!("run {run} did not reach {state}: {}", get(app, &format!("/api/v2/workflows/runs/{run}")).await);
}

/// A person's review at the console, through the page's own form.
pub async fn console_review(app: &TestApp, cookie: &str, run: &str, decision: &str) -> reqwest::Response {
    let page = fiscus_apptest::console::console_page(app, cookie, "/console/workflow-reviews").await;
    let at = page
        .find(&format!("action=\"/console/workflow-reviews/{run}\""))
        .unwrap_or_else(|| panic!("{run} is listed:\n{page}"));
    let form = &page[at..];
    let value =
        |name: &str| fiscus_apptest::console::between(form, &format!("name=\"{name}\" value=\""), "\"").to_string();
    fiscus_apptest::console::client()
        .post(app.url(&format!("/console/workflow-reviews/{run}")))
        .header("cookie", cookie)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".to_string()),
            ("step", value("step")),
            ("decision", decision.to_string()),
            ("note", "figures reviewed".to_string()),
        ])
        .send()
        .await
        .expect("request")
}

async fn event_types(app: &TestApp, run: &str) -> Vec<String> {
    let mut conn = app.state.store.read().await.expect("conn");
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let events = fiscus_store::outbox::list(&mut conn, &tenant, None, 1000).await.expect("outbox");
    events
        .into_iter()
        .filter(|e| matches!(&e.data, fiscus_domain::events::EventData::Workflow(d) if d.run_id == run))
        .map(|e| e.event_type.as_str().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_workflow_runs_waits_for_a_person_and_completes_with_its_events() {
    let app = spawn_app().await;
    demo(&app).await;
    let library = get(&app, "/api/v2/workflows/library").await;
    let keys: Vec<&str> =
        library["data"].as_array().expect("data").iter().map(|t| t["key"].as_str().expect("key")).collect();
    assert_eq!(keys, ["liquidity_report", "model_monitoring", "month_end_close_review"]);
    let version = installed(&app, "model_monitoring").await;
    let template = &library["data"][1];
    let v = get(&app, &format!("/api/v2/workflow-studio/versions/{version}")).await;
    assert_eq!(v["definition_hash"], template["definition_hash"]);
    assert_eq!(v["library"]["key"], "model_monitoring");
    problem(
        app.post_json("/api/v2/workflows/library/model_monitoring/install", &app.key, &json!({}), None).await,
        409,
        "conflict",
    )
    .await;
    problem(
        app.post_json("/api/v2/workflows/library/nothing_here/install", &app.key, &json!({}), None).await,
        404,
        "not_found",
    )
    .await;

    let run = started(&app, &version).await;
    let waiting = reaches(&app, &run, "awaiting_review").await;
    let steps: Vec<&str> =
        waiting["steps"].as_array().expect("steps").iter().map(|s| s["step"].as_str().expect("id")).collect();
    assert_eq!(steps, ["benchmark", "var_95", "volatility", "var_within_appetite", "cool_off"]);
    assert_eq!(waiting["pins"][0]["source"], "SPX");
    let var = waiting["steps"][1]["output"]["value"].as_f64().expect("VaR");
    assert!(var > 0.0 && var < 0.1, "one-day 95 % VaR of the S&P 500: {var}");
    assert_eq!(event_types(&app, &run).await, ["workflow.invoked", "workflow.awaiting_review"]);

    // A credential with every scope reviews nothing: the console needs a signed-in person.
    let bearer = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/workflow-reviews/{run}")))
        .bearer_auth(&app.key)
        .form(&[("decision", "approve"), ("environment", "sandbox"), ("csrf", "x"), ("step", "model_risk_review")])
        .send()
        .await
        .expect("request");
    assert!(!bearer.status().is_success(), "{}", bearer.status());
    assert_eq!(get(&app, &format!("/api/v2/workflows/runs/{run}")).await["state"], "awaiting_review");

    let op = fiscus_apptest::console::enrolled_operator(&app, "model-risk@example.com", Role::Approver).await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    assert_eq!(console_review(&app, &cookie, &run, "approve").await.status(), 303);
    let done = reaches(&app, &run, "completed").await;
    let review = &done["steps"][5];
    assert_eq!(
        (review["step"].as_str(), review["output"]["decision"].as_str()),
        (Some("model_risk_review"), Some("approve"))
    );
    assert_eq!(review["output"]["reviewer"], op.id);
    assert!(review["recorded_by"].as_str().is_some_and(|b| b.starts_with("operator:")));
    let report = &done["steps"][6];
    assert!(report["output"]["artifact_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    assert!(done["evidence_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    assert_eq!(event_types(&app, &run).await, ["workflow.invoked", "workflow.awaiting_review", "workflow.completed"]);
    // Reviewing again decides nothing.
    problem(
        app.post_json(&format!("/api/v2/workflows/runs/{run}/cancel"), &app.key, &json!({}), None).await,
        409,
        "run_not_pending",
    )
    .await;

    // The same version on the same data with the same decision replays to the same evidence.
    let again = started(&app, &version).await;
    reaches(&app, &again, "awaiting_review").await;
    assert_eq!(console_review(&app, &cookie, &again, "approve").await.status(), 303);
    let replayed = reaches(&app, &again, "completed").await;
    assert_eq!(replayed["evidence_hash"], done["evidence_hash"]);

    // A rejection cancels the run.
    let third = started(&app, &version).await;
    reaches(&app, &third, "awaiting_review").await;
    assert_eq!(console_review(&app, &cookie, &third, "reject").await.status(), 303);
    reaches(&app, &third, "cancelled").await;
    assert_eq!(event_types(&app, &third).await, ["workflow.invoked", "workflow.awaiting_review", "workflow.cancelled"]);

    // Proof of value: two completed runs (six steps each by the runtime, one review each), one cancelled.
    let workflow = v["workflow_id"].as_str().expect("workflow");
    let baseline =
        json!({"minutes_per_run": 90, "minutes_per_review": 15, "hourly_cost_minor": 12000, "currency": "USD"});
    let proof =
        post(&app, "/api/v2/workflows/proof-of-value", &json!({"workflow_uid": workflow, "baseline": baseline}), 201)
            .await;
    let f = &proof["figures"];
    assert_eq!((f["runs"].as_u64(), f["completed"].as_u64(), f["cancelled"].as_u64()), (Some(3), Some(2), Some(1)));
    assert_eq!((f["steps_automated"].as_u64(), f["reviews"].as_u64()), (Some(12), Some(2)));
    assert_eq!(
        (f["manual_minutes"].as_u64(), f["review_minutes"].as_u64(), f["minutes_saved"].as_i64()),
        (Some(180), Some(30), Some(150))
    );
    assert_eq!(f["cost_saved_minor"], 30000, "150 minutes at USD 120.00 an hour");
    assert_eq!(proof["evidence"].as_array().map(Vec::len), Some(3));
    let bad = json!({"workflow_uid": workflow, "baseline": {"minutes_per_run": 90, "minutes_per_review": 15, "hourly_cost_minor": 1, "currency": "XXQ"}});
    problem(app.post_json("/api/v2/workflows/proof-of-value", &app.key, &bad, None).await, 422, "invalid_request")
        .await;
    let proofs = get(&app, "/api/v2/workflows/proof-of-value").await;
    assert_eq!(proofs["data"][0]["proof_hash"], proof["proof_hash"]);

    let list = get(&app, "/api/v2/workflows/runs?limit=2").await;
    assert_eq!((list["data"].as_array().map(Vec::len), list["has_more"].as_bool()), (Some(2), Some(true)));
    assert_eq!(list["data"][0]["id"], third);

    // Another workspace sees none of it.
    let (_, other) = app.other_workspace_key().await;
    problem(app.get(&format!("/api/v2/workflows/runs/{run}"), &other).await, 404, "not_found").await;
    problem(app.get(&format!("/api/v2/workflow-studio/versions/{version}"), &other).await, 404, "not_found").await;
    let theirs: Value = app.get("/api/v2/workflows/runs", &other).await.json().await.expect("json");
    assert_eq!(theirs["data"], json!([]));
}

fn connected_definition() -> Value {
    json!({"steps": [
        {"kind": "read_prices", "id": "prices", "instrument": "SPX", "observations": 30},
        {"kind": "agent", "id": "ask_agent", "after": ["prices"]},
        {"kind": "integration", "id": "erp", "after": ["prices"]},
        {"kind": "financial_action", "id": "pay", "after": ["prices"]},
        {"kind": "code_runner", "id": "script", "after": ["prices"]},
        {"kind": "sub_workflow", "id": "child", "after": ["prices"]},
        {"kind": "external_network", "id": "fetch", "after": ["prices"]}
    ]})
}

#[tokio::test]
async fn a_validation_campaign_refuses_each_prohibited_step_kind_and_seals_what_it_ran() {
    let app = spawn_app().await;
    demo(&app).await;
    let v = post(
        &app,
        "/api/v2/workflow-studio/versions",
        &json!({"name": "Connected", "definition": connected_definition()}),
        201,
    )
    .await;
    let version = v["id"].as_str().expect("id");
    let refused = problem(
        app.post_json(
            &format!("/api/v2/workflow-studio/versions/{version}/validate"),
            &app.key,
            &json!({"cases": [{"name": "approve all"}]}),
            None,
        )
        .await,
        422,
        "invalid_suite",
    )
    .await;
    let named: Vec<(String, String)> = refused["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| (p["step"].as_str().expect("step").into(), p["kind"].as_str().expect("kind").into()))
        .collect();
    assert_eq!(
        named,
        [
            ("ask_agent", "agent"),
            ("erp", "integration"),
            ("pay", "financial_action"),
            ("script", "code_runner"),
            ("child", "sub_workflow"),
            ("fetch", "external_network")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_campaigns").await, 0);
    // Nor does this runtime run them.
    let run = problem(
        app.post_json("/api/v2/workflows/runs", &app.key, &json!({"version_uid": version}), None).await,
        422,
        "step_kind_unavailable",
    )
    .await;
    assert_eq!(run["steps"].as_array().map(Vec::len), Some(6));
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_runs").await, 0);

    // A library template validates: every case to its end, waits and reports virtual, reviews as the case says.
    let monitoring = installed(&app, "model_monitoring").await;
    let suite = json!({"cases": [
        {"name": "approved", "expect": "completed"},
        {"name": "rejected", "reviews": {"model_risk_review": "reject"}, "expect": "cancelled"},
        {"name": "wrong expectation", "expect": "failed"}
    ]});
    let r =
        app.post_json(&format!("/api/v2/workflow-studio/versions/{monitoring}/validate"), &app.key, &suite, None).await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().expect("location").to_string();
    let campaign: Value = r.json().await.expect("json");
    assert_eq!(campaign["passed"], false, "the third case expects what does not happen");
    let cases = campaign["cases"].as_array().expect("cases");
    let ends: Vec<(&str, bool)> =
        cases.iter().map(|c| (c["state"].as_str().expect("state"), c["passed"].as_bool().expect("passed"))).collect();
    assert_eq!(ends, [("completed", true), ("cancelled", true), ("completed", false)]);
    let wait = cases[0]["steps"].as_array().expect("steps").iter().find(|s| s["step"] == "cool_off").expect("wait");
    assert_eq!(wait["output"]["virtual"], true);
    let report = cases[0]["steps"].as_array().expect("steps").last().expect("report").clone();
    assert_eq!(
        (report["step"].as_str(), report["output"]["virtual"].as_bool()),
        (Some("monitoring_report"), Some(true))
    );
    assert_eq!(
        cases[0]["evidence_hash"], cases[2]["evidence_hash"],
        "the same case on the same data, the same evidence"
    );
    assert_eq!(get(&app, &location).await["campaign_hash"], campaign["campaign_hash"]);

    // A suite of no case would pass having tested nothing: an invalid suite (the seed's 422); no body at all
    // is the one default case, approving every review.
    for empty in [json!({"cases": []}), json!({})] {
        let p = problem(
            app.post_json(&format!("/api/v2/workflow-studio/versions/{monitoring}/validate"), &app.key, &empty, None)
                .await,
            422,
            "invalid_suite",
        )
        .await;
        assert!(p["detail"].as_str().unwrap_or("").contains("at least one case"), "{p}");
    }
    let bare = app
        .http
        .post(app.url(&format!("/api/v2/workflow-studio/versions/{monitoring}/validate")))
        .bearer_auth(&app.key)
        .send()
        .await
        .expect("request");
    assert_eq!(bare.status(), 202);
    let bare: Value = bare.json().await.expect("json");
    assert_eq!((bare["cases"].as_array().map(Vec::len), &bare["passed"]), (Some(1), &json!(true)));
    // A case deciding a step that is not a review is an invalid suite; nothing is recorded.
    let bad = json!({"cases": [{"name": "x", "reviews": {"cool_off": "approve"}}]});
    problem(
        app.post_json(&format!("/api/v2/workflow-studio/versions/{monitoring}/validate"), &app.key, &bad, None).await,
        422,
        "invalid_suite",
    )
    .await;
    // A case written as an array (serde alone would read its fields by position) is refused by the body
    // parser, at any depth.
    let positional = json!({"cases": [["approved", {}, "completed"]]});
    let p = problem(
        app.post_json(&format!("/api/v2/workflow-studio/versions/{monitoring}/validate"), &app.key, &positional, None)
            .await,
        422,
        "invalid_request",
    )
    .await;
    assert!(p.to_string().contains("expected an object"), "{p}");
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_campaigns").await, 2, "the suite's and the bare one's");
}

#[tokio::test]
async fn bad_definitions_are_refused_with_their_step_named_and_change_nothing() {
    let app = spawn_app().await;
    let versions = "/api/v2/workflow-studio/versions";
    let cyclic = json!({"name": "Cyclic", "definition": {"steps": [
        {"kind": "wait", "id": "a", "after": ["b"], "seconds": 1},
        {"kind": "wait", "id": "b", "after": ["a"], "seconds": 1}
    ]}});
    // Steps that do not fit together (rules across steps no schema states) are 409, each step named.
    let p = problem(app.post_json(versions, &app.key, &cyclic, None).await, 409, "conflict").await;
    assert!(p["errors"][0]["message"].as_str().is_some_and(|m| m.contains("cycle")), "{p}");
    let unknown = json!({"name": "Unknown", "definition": {"steps": [{"kind": "teleport", "id": "a"}]}});
    problem(app.post_json(versions, &app.key, &unknown, None).await, 422, "invalid_request").await;
    let extra =
        json!({"name": "Extra", "definition": {"steps": [{"kind": "wait", "id": "a", "seconds": 1, "colour": "red"}]}});
    problem(app.post_json(versions, &app.key, &extra, None).await, 422, "invalid_request").await;
    let missing = json!({"name": "Missing", "definition": {"steps": [{"kind": "wait", "id": "a", "after": ["ghost"], "seconds": 1}]}});
    let p = problem(app.post_json(versions, &app.key, &missing, None).await, 409, "conflict").await;
    assert!(p.to_string().contains("steps[0].after"), "{p}");
    let array = json!({"name": "Array", "definition": [[]]});
    problem(app.post_json(versions, &app.key, &array, None).await, 422, "invalid_request").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM workflow_versions").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM workflows").await, 0);

    // A next version of a workflow, then one of another workspace's workflow (refused).
    let ok = json!({"name": "Timer", "definition": {"steps": [{"kind": "wait", "id": "a", "seconds": 1}]}});
    let first = post(&app, versions, &ok, 201).await;
    let next = json!({"workflow_uid": first["workflow_id"], "definition": {"steps": [{"kind": "wait", "id": "a", "seconds": 2}]}});
    assert_eq!(post(&app, versions, &next, 201).await["version"], 2);
    problem(app.post_json(versions, &app.key, &ok, None).await, 409, "conflict").await;
    let (_, other) = app.other_workspace_key().await;
    problem(app.post_json(versions, &other, &next, None).await, 409, "reference_not_found").await;
    problem(app.get("/api/v2/workflow-studio/versions/wfv_nope", &app.key).await, 404, "not_found").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_worker_died_resumes_from_its_history_and_no_step_is_recorded_twice() {
    let app = spawn_app_with(|s| s.workflow_worker = false).await;
    demo(&app).await;
    let version = installed(&app, "month_end_close_review").await;
    let run = started(&app, &version).await;
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let claimed = fiscus_agents::tables::workflows::Claimed { run_id: run.clone(), tenant };
    // A worker killed mid-run: its task is aborted after it began.
    let state = app.state.clone();
    let first = {
        let claimed = claimed.clone();
        tokio::spawn(async move { fiscus_agents::workflows::runtime::advance(&state, "wrk_first", &claimed).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    first.abort();
    let _ = first.await;
    // Two workers then take the run over at once: each step is still recorded once, in order.
    let (a, b) = tokio::join!(
        fiscus_agents::workflows::runtime::advance(&app.state, "wrk_second", &claimed),
        fiscus_agents::workflows::runtime::advance(&app.state, "wrk_third", &claimed),
    );
    a.expect("second worker");
    b.expect("third worker");
    let waiting = get(&app, &format!("/api/v2/workflows/runs/{run}")).await;
    assert_eq!(waiting["state"], "awaiting_review");
    let seqs: Vec<i64> =
        waiting["steps"].as_array().expect("steps").iter().map(|s| s["seq"].as_i64().expect("seq")).collect();
    assert_eq!(seqs, (0..6).collect::<Vec<i64>>(), "six steps before the review, each once");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM workflow_run_steps WHERE run_id = '{run}'")).await, 6);
    assert_eq!(event_types(&app, &run).await, ["workflow.invoked", "workflow.awaiting_review"]);
    // The drawdown check failed and went on (`on_fail: continue`) or passed: either way it is recorded.
    let check = waiting["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["step"] == "drawdown_within_limit")
        .expect("check");
    assert!(check["output"]["passed"].is_boolean());
}

/// Makes a documented workflow example concrete: the objects its path and body name, created for real.
pub async fn example_path(app: &TestApp, path: &str, example: &mut Value) -> String {
    if path.ends_with("/workflows/a2a") {
        // The documented message names the liquidity report, allowlisted by an admin at the console.
        demo(app).await;
        let version = installed(app, "liquidity_report").await;
        let cookie = crate::workflow_gateway::admin_cookie(app).await;
        assert_eq!(crate::workflow_gateway::allowlist(app, &cookie, &[&version]).await.status(), 303);
        example["params"]["message"]["parts"][0]["data"]["skill"] = json!(version);
        return path.to_string();
    }
    if path.ends_with("/workflow-studio/versions") {
        return path.to_string();
    }
    // The studio's own example (its review step is the one the validation example decides).
    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("document");
    let mut body = doc["paths"]["/api/v2/workflow-studio/versions"]["post"]["requestBody"]["content"]["application/json"]
        ["example"]
        .clone();
    body["name"] = json!(format!("Example {}", fiscus_domain::ids::new_id("x")));
    let version =
        post(app, "/api/v2/workflow-studio/versions", &body, 201).await["id"].as_str().expect("id").to_string();
    if path.ends_with("/workflows/runs") {
        example["version_uid"] = json!(version);
        return path.to_string();
    }
    if path.ends_with("/workflows/proof-of-value") {
        example["workflow_uid"] =
            get(app, &format!("/api/v2/workflow-studio/versions/{version}")).await["workflow_id"].clone();
        return path.to_string();
    }
    path.replace("{uid}", &version).replace("{key}", "model_monitoring")
}

/// Produces every `workflow.*` event through the real paths (the API, the worker, a person's review as the
/// console makes it): a run completed, one rejected at review, one failed at a check, one cancelled.
pub async fn every_workflow_event(app: &TestApp) {
    demo(app).await;
    let version = installed(app, "model_monitoring").await;
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let operator = Caller::bare(Actor::operator("opr_workflows"));
    for decision in [
        fiscus_agents::rules::workflows::run::ReviewDecision::Approve,
        fiscus_agents::rules::workflows::run::ReviewDecision::Reject,
    ] {
        let run = started(app, &version).await;
        reaches(app, &run, "awaiting_review").await;
        // An auditor reads; it decides nothing.
        let auditor = fiscus_agents::workflows::runs::review(
            &app.state,
            &operator,
            Role::Auditor,
            &tenant,
            &run,
            "model_risk_review",
            decision,
            None,
        )
        .await;
        assert!(auditor.is_err());
        assert_eq!(get(app, &format!("/api/v2/workflows/runs/{run}")).await["state"], "awaiting_review");
        fiscus_agents::workflows::runs::review(
            &app.state,
            &operator,
            Role::Approver,
            &tenant,
            &run,
            "model_risk_review",
            decision,
            None,
        )
        .await
        .expect("reviewed");
    }
    let failing = json!({"name": "Failing check", "definition": {"steps": [
        {"kind": "read_prices", "id": "prices", "instrument": "SPX", "observations": 30},
        {"kind": "measure", "id": "level", "after": ["prices"], "input": "prices", "measure": "last"},
        {"kind": "check", "id": "negative", "after": ["level"], "input": "level", "comparison": "lt", "limit": 0}
    ]}});
    let v = post(app, "/api/v2/workflow-studio/versions", &failing, 201).await;
    let failed = started(app, v["id"].as_str().expect("id")).await;
    reaches(app, &failed, "failed").await;
    let waiting =
        json!({"name": "Long wait", "definition": {"steps": [{"kind": "wait", "id": "later", "seconds": 3600}]}});
    let v = post(app, "/api/v2/workflow-studio/versions", &waiting, 201).await;
    let cancelled = started(app, v["id"].as_str().expect("id")).await;
    reaches(app, &cancelled, "waiting").await;
    post(app, &format!("/api/v2/workflows/runs/{cancelled}/cancel"), &json!({}), 200).await;
}

#[tokio::test]
async fn a_run_whose_pinned_data_was_edited_fails_naming_why_instead_of_retrying() {
    let app = spawn_app_with(|s| s.workflow_worker = false).await;
    demo(&app).await;
    let version = installed(&app, "liquidity_report").await;
    let run = started(&app, &version).await;
    let pinned = get(&app, &format!("/api/v2/workflows/runs/{run}")).await["pins"][0]["dataset"].as_i64().expect("pin");
    app.execute(&format!("UPDATE datasets SET content_hash = 'sha256:{}' WHERE number = {pinned}", "0".repeat(64)))
        .await;
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let claimed = fiscus_agents::tables::workflows::Claimed { run_id: run.clone(), tenant };
    fiscus_agents::workflows::runtime::advance(&app.state, "wrk_only", &claimed).await.expect("advanced");
    let failed = get(&app, &format!("/api/v2/workflows/runs/{run}")).await;
    assert_eq!(failed["state"], "failed");
    let error = failed["steps"][0]["output"]["error"].as_str().expect("error").to_string();
    assert!(error.contains("cannot be read as pinned"), "{error}");
    assert_eq!(event_types(&app, &run).await, ["workflow.invoked", "workflow.failed"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_of_an_application_suspended_meanwhile_fails_instead_of_stepping() {
    let app = spawn_app_with(|s| s.workflow_worker = false).await;
    demo(&app).await;
    let version = installed(&app, "month_end_close_review").await;
    let run = started(&app, &version).await;
    app.admin()
        .set_application_status(&app.app_id, fiscus_domain::credentials::AppStatus::Suspended)
        .await
        .expect("suspend");
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let claimed = fiscus_agents::tables::workflows::Claimed { run_id: run.clone(), tenant };
    fiscus_agents::workflows::runtime::advance(&app.state, "wrk_test", &claimed).await.expect("advance");
    app.admin()
        .set_application_status(&app.app_id, fiscus_domain::credentials::AppStatus::Active)
        .await
        .expect("active");
    let ended = get(&app, &format!("/api/v2/workflows/runs/{run}")).await;
    assert_eq!(ended["state"], "failed", "{ended}");
    assert_eq!(app.count(&format!("SELECT COUNT(*) FROM workflow_run_steps WHERE run_id = '{run}'")).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_reads_no_data_its_workspace_is_no_longer_entitled_to() {
    use fiscus_domain::scopes::ScopeSet;
    let app = spawn_app_with(|s| s.workflow_worker = false).await;
    demo(&app).await;
    let version = installed(&app, "month_end_close_review").await;
    let run = started(&app, &version).await;
    let without_data =
        ScopeSet::parse(&ScopeSet::all().iter().filter(|s| !s.starts_with("data:")).collect::<Vec<_>>().join(" "))
            .expect("scopes");
    app.admin().set_workspace_entitlement(&app.workspace_id, &without_data).await.expect("entitlement");
    // A run asked for now is refused before it is queued.
    let refused = app.post_json("/api/v2/workflows/runs", &app.key, &json!({ "version_uid": version }), None).await;
    problem(refused, 403, "entitlement_missing").await;
    // The run queued before reads nothing: its read step fails, recorded as such, and the run with it.
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let claimed = fiscus_agents::tables::workflows::Claimed { run_id: run.clone(), tenant };
    for _ in 0..4 {
        fiscus_agents::workflows::runtime::advance(&app.state, "wrk_test", &claimed).await.expect("advance");
    }
    let ended = get(&app, &format!("/api/v2/workflows/runs/{run}")).await;
    assert_eq!(ended["state"], "failed", "{ended}");
    assert_eq!(ended["steps"][0]["output"]["code"], "entitlement_missing", "{ended}");
    assert!(ended["steps"][0]["output"].get("points").is_none(), "no data read: {ended}");
}
