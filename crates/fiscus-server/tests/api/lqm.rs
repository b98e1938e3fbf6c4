//! LQM Builder: a model registered, contracted to a dataset, retrained only under a request another
//! credential approved, evaluated on data it never saw; every gate closed with its reasons, every refusal
//! changing nothing, and another workspace seeing none of it.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::credentials::Environment;
use serde_json::{Value, json};

async fn demo(app: &TestApp) {
    app.load_demo().await;
}

async fn created(app: &TestApp, key: &str, path: &str, body: &Value) -> Value {
    let r = app.post_json(path, key, body, None).await;
    let status = r.status();
    let body: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{path}: {body}");
    body
}

async fn get(app: &TestApp, path: &str) -> Value {
    let r = app.get(path, &app.key).await;
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.expect("json")
}

fn forecaster(name: &str) -> Value {
    json!({ "name": name, "task_family": "forecasting", "license": "Apache-2.0",
            "intended_use": "Next-day S&P 500 level forecasts for liquidity planning; not for trading." })
}

fn reasons(problem: &Value) -> Vec<String> {
    problem["reasons"].as_array().expect("reasons").iter().map(|r| r.as_str().expect("code").to_string()).collect()
}

/// The eligibility of one operation in a manifest.
fn gate<'a>(manifest: &'a Value, op: &str) -> &'a Value {
    manifest["operations"].as_array().expect("operations").iter().find(|o| o["operation"] == op).expect("listed")
}

/// A second credential of this workspace, for the reviews its maker may not give.
async fn reviewer(app: &TestApp) -> String {
    app.new_app(Environment::Sandbox, "lqm:build:read lqm:build:write lqm:build:run", None).await.1
}

/// A person (an approver enrolled for the purpose) decides retraining request `r` at the console, on the
/// request hash its page shows: the console's answer.
pub async fn person_decides(app: &TestApp, r: &str, decision: &str) -> reqwest::Response {
    let email = format!("{}@example.com", fiscus_domain::ids::new_id("rev").to_lowercase());
    let op = fiscus_apptest::console::enrolled_operator(app, &email, fiscus_domain::people::Role::Approver).await;
    let cookie = fiscus_apptest::console::sign_in(app, &op).await;
    console_retraining(app, &cookie, r, decision).await
}

/// Decides retraining request `r` at the console as `cookie`'s operator, with the form its page shows.
pub async fn console_retraining(app: &TestApp, cookie: &str, r: &str, decision: &str) -> reqwest::Response {
    let page =
        fiscus_apptest::console::console_page(app, cookie, &format!("/console/lqm-retraining/{r}?environment=sandbox"))
            .await;
    let value =
        |name: &str| fiscus_apptest::console::between(&page, &format!("name=\"{name}\" value=\""), "\"").to_string();
    fiscus_apptest::console::client()
        .post(app.url(&format!("/console/lqm-retraining/{r}")))
        .header("cookie", cookie)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".to_string()),
            ("request_hash", value("request_hash")),
            ("decision", decision.to_string()),
            ("note", "Contract and data reviewed".to_string()),
        ])
        .send()
        .await
        .expect("request")
}

/// A person approves retraining request `r` at the console.
pub async fn approved_by_a_person(app: &TestApp, r: &str) {
    let answer = person_decides(app, r, "approve").await;
    assert_eq!(answer.status(), 303, "{}", answer.text().await.unwrap_or_default());
}

#[tokio::test]
async fn a_model_trains_only_under_a_contract_and_a_request_a_person_approved() {
    let app = spawn_app().await;
    demo(&app).await;
    let reviewer = reviewer(&app).await;
    let model = created(&app, &app.key, "/api/v2/lqm/models", &forecaster("SPX level forecaster")).await;
    let m = model["id"].as_str().expect("id").to_string();
    assert_eq!(model["commercial_use"], true);
    let manifest = get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await;
    assert_eq!(manifest["stage"], "registered");
    assert_eq!(
        gate(&manifest, "training")["reasons"],
        json!(["no_dataset_contract", "no_approved_retraining_request"])
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM lqm_checkpoints").await, 0, "registration trains nothing");

    // A contract: hashes of the data, never the data.
    let contract = created(
        &app,
        &app.key,
        "/api/v2/lqm/datasets/4/contracts",
        &json!({ "model_uid": m, "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" } }),
    )
    .await;
    assert_eq!((contract["observations"].as_i64(), contract["holdout"].as_i64()), (Some(8313), Some(1663)));
    assert_eq!(contract["licence_terms"], "permissive");
    for h in ["source_hash", "feature_schema_hash", "lineage_hash", "data_hash", "contract_hash"] {
        assert!(contract[h].as_str().is_some_and(|v| v.starts_with("sha256:") && v.len() == 71), "{h}");
    }
    let c = contract["id"].as_str().expect("id").to_string();
    assert_eq!(get(&app, &format!("/api/v2/lqm/contracts/{c}")).await, contract);

    // A request awaits review: training stays closed.
    let request = created(
        &app,
        &app.key,
        &format!("/api/v2/lqm/models/{m}/retraining-requests"),
        &json!({ "contract_uid": c, "hyperparameters": { "trend": true }, "reason": "First calibration" }),
    )
    .await;
    assert_eq!((request["state"].as_str(), request["algorithm"].as_str()), (Some("pending"), Some("holt_winters")));
    let r = request["id"].as_str().expect("id").to_string();
    let train = format!("/api/v2/lqm/retraining-requests/{r}/training");
    let closed = problem(app.post_json(&train, &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&closed), ["retraining_review_pending", "no_approved_retraining_request"]);

    // No credential decides it, not even one holding every scope: a decision submitted over the API is
    // recorded for a person, and the request stays pending.
    let decide = format!("/api/v2/lqm/retraining-requests/{r}/decision");
    let approve = json!({ "decision": "approve", "note": "Scope and data reviewed" });
    for key in [&app.key, &reviewer] {
        let submitted = app.post_json(&decide, key, &approve, None).await;
        assert_eq!(submitted.status(), 200);
        let submitted: Value = submitted.json().await.expect("json");
        assert_eq!((submitted["state"].as_str(), &submitted["review"]), (Some("pending"), &Value::Null));
        assert_eq!(
            submitted["submitted_decisions"].as_array().map(Vec::len),
            Some(if key == &app.key { 1 } else { 2 })
        );
    }
    let shown = get(&app, &format!("/api/v2/lqm/retraining-requests/{r}")).await;
    assert_eq!(shown["state"], "pending");
    assert_eq!(shown["submitted_decisions"][0]["decision"], "approve");
    assert_eq!(shown["submitted_decisions"][0]["request_hash"], request["request_hash"]);
    problem(app.post_json(&train, &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    // The console's decision form refuses a bearer credential.
    let bearer = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/lqm-retraining/{r}")))
        .bearer_auth(&app.key)
        .form(&[("decision", "approve"), ("environment", "sandbox"), ("csrf", "x"), ("request_hash", "x")])
        .send()
        .await
        .expect("request");
    assert!(!bearer.status().is_success(), "{}", bearer.status());
    assert_eq!(get(&app, &format!("/api/v2/lqm/retraining-requests/{r}")).await["state"], "pending");

    // Another workspace sees nothing and decides nothing.
    let (_, other) = app.other_workspace_key().await;
    for path in [
        format!("/api/v2/lqm/models/{m}"),
        format!("/api/v2/lqm/retraining-requests/{r}"),
        format!("/api/v2/lqm/contracts/{c}"),
    ] {
        problem(app.get(&path, &other).await, 404, "not_found").await;
    }
    problem(app.post_json(&decide, &other, &approve, None).await, 404, "not_found").await;

    // A person sees what it would train on (contract and data hashes, the submissions) and approves: one
    // candidate, once; nothing is promoted.
    let op = fiscus_apptest::console::enrolled_operator(
        &app,
        "model-reviewer@example.com",
        fiscus_domain::people::Role::Approver,
    )
    .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    let listed = fiscus_apptest::console::console_page(&app, &cookie, "/console/lqm-retraining").await;
    assert!(listed.contains(&format!("/console/lqm-retraining/{r}?environment=sandbox")), "{listed}");
    let page = fiscus_apptest::console::console_page(
        &app,
        &cookie,
        &format!("/console/lqm-retraining/{r}?environment=sandbox"),
    )
    .await;
    for hash in [&contract["contract_hash"], &contract["data_hash"], &request["request_hash"]] {
        let digits = hash.as_str().expect("hash").trim_start_matches("sha256:");
        assert!(page.contains(&digits[..12]), "{hash} on the page:\n{page}");
    }
    assert!(page.contains("Scope and data reviewed"), "the submission is shown");
    // A decision on another request hash than the one shown decides nothing.
    let csrf = fiscus_apptest::console::between(&page, "name=\"csrf\" value=\"", "\"").to_string();
    let stale = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/lqm-retraining/{r}")))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", csrf.as_str()),
            ("environment", "sandbox"),
            ("request_hash", "sha256:00"),
            ("decision", "approve"),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(stale.status(), 409);
    assert_eq!(console_retraining(&app, &cookie, &r, "approve").await.status(), 303);
    let decided = get(&app, &format!("/api/v2/lqm/retraining-requests/{r}")).await;
    assert_eq!(decided["state"], "approved");
    assert_eq!(decided["review"]["decision"], "approve");
    assert_eq!(decided["review"]["decided_by"], format!("operator:{}", op.id));
    let again =
        problem(app.post_json(&decide, &reviewer, &json!({"decision": "reject"}), None).await, 409, "not_reviewable")
            .await;
    assert_eq!(again["state"], "approved");
    assert_eq!(get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await["stage"], "training_authorised");

    let checkpoint = created(&app, &reviewer, &train, &json!({})).await;
    assert_eq!(checkpoint["data_version"]["observations"], 8313 - 1663);
    assert_eq!(checkpoint["data_version"]["last_date"], "2016-05-20");
    assert_eq!(checkpoint["data_version"]["contract_hash"], contract["contract_hash"]);
    // The checkpoint hash is the SHA-256 of its fitted parameters and exact data version (RFC 8785).
    let content = json!({
        "model_id": m, "request_id": r, "algorithm": checkpoint["algorithm"],
        "hyperparameters": checkpoint["hyperparameters"], "fitted": checkpoint["fitted"],
        "data_version": checkpoint["data_version"], "engine": checkpoint["engine"],
    });
    let canonical = fiscus_domain::jcs::canonicalize(&content).expect("canonical");
    assert_eq!(checkpoint["checkpoint_hash"], fiscus_domain::evidence::seal_bytes(canonical.as_bytes()));
    assert!(checkpoint["fitted"]["alpha"].as_f64().is_some_and(|a| a > 0.0 && a <= 1.0));
    let spent = problem(app.post_json(&train, &reviewer, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&spent), ["no_approved_retraining_request"]);
    assert_eq!(get(&app, &format!("/api/v2/lqm/retraining-requests/{r}")).await["state"], "trained");

    // Evaluation on the held-out observations, by a credential other than the trainer's.
    let k = checkpoint["id"].as_str().expect("id").to_string();
    let evaluate = format!("/api/v2/lqm/checkpoints/{k}/evaluation");
    let wrong = json!({ "criteria": { "min_p_value": 0.05 } });
    problem(app.post_json(&evaluate, &app.key, &wrong, None).await, 422, "invalid_request").await;
    let evaluation = created(&app, &app.key, &evaluate, &json!({})).await;
    assert_eq!(evaluation["holdout"]["observations"], 1663);
    assert_eq!(evaluation["holdout"]["first_date"], "2016-05-23");
    assert_eq!(evaluation["checkpoint_hash"], checkpoint["checkpoint_hash"]);
    assert_eq!(evaluation["independent"], true);
    let relative = evaluation["metrics"]["relative_mae"].as_f64().expect("relative MAE");
    assert!(relative > 0.5 && relative < 1.1, "a smoothed random walk is about as good as naive: {relative}");
    assert_eq!(evaluation["passed"], true);
    let twice = problem(app.post_json(&evaluate, &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&twice), ["already_evaluated"]);
    assert_eq!(get(&app, &format!("/api/v2/lqm/checkpoints/{k}")).await["evaluation"], evaluation);

    let manifest = get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await;
    assert_eq!(manifest["stage"], "evaluated");
    assert_eq!(gate(&manifest, "evidence_packet")["eligible"], true);
    assert_eq!(gate(&manifest, "promotion")["reasons"], json!(["not_published"]));
    assert_eq!(gate(&manifest, "qlm_composition")["reasons"], json!(["not_promoted"]));
    let audit = app.count("SELECT COUNT(*) FROM audit_events WHERE action LIKE 'lqm.%'").await;
    assert_eq!(audit, 8, "registered, contract, requested, two decisions submitted, approved, trained, evaluated");
}

#[tokio::test]
async fn bad_registrations_and_ineligible_datasets_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    demo(&app).await;
    let reg = "/api/v2/lqm/models";
    for (body, field) in [
        (json!({"name": "x", "task_family": "forecast", "intended_use": "x", "license": "MIT"}), "task_family"),
        (json!({"name": "x", "task_family": "risk", "intended_use": "x", "license": "Apache 2.0"}), "license"),
        (json!({"name": "x", "task_family": "risk", "intended_use": "  ", "license": "MIT"}), "intended_use"),
        (json!({"name": "", "task_family": "risk", "intended_use": "x", "license": "MIT"}), "name"),
    ] {
        let p = problem(app.post_json(reg, &app.key, &body, None).await, 422, "invalid_request").await;
        assert_eq!(p["errors"][0]["field"], field, "{p}");
    }
    let commercial = created(&app, &app.key, reg, &forecaster("Commercial")).await;
    problem(app.post_json(reg, &app.key, &forecaster("Commercial"), None).await, 409, "conflict").await;
    let mut research = forecaster("Research only");
    research["commercial_use"] = json!(false);
    research["license"] = json!("LicenseRef-Internal");
    let research = created(&app, &app.key, reg, &research).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM lqm_models").await, 2);

    // Licences stand in for an import under them: the rows are changed as an import would have written
    // them and re-sealed, so that only the licence differs.
    let relicence = |number: i64, licence: &'static str| {
        let app = &app;
        async move {
            app.execute(&format!("UPDATE datasets SET licence = '{licence}' WHERE number = {number}")).await;
            let mut conn = app.state.store.read().await.expect("conn");
            let (dst,): (String,) = sqlx::query_as(&format!("SELECT id FROM datasets WHERE number = {number}"))
                .fetch_one(&mut *conn)
                .await
                .expect("id");
            drop(conn);
            app.reseal(&fiscus_store::data_tables::DATASETS_SEALED, &dst).await;
        }
    };
    relicence(3, "CC-BY-NC-4.0").await;
    relicence(5, "CC-BY-ND-4.0").await;
    app.execute("UPDATE datasets SET seal_mac = NULL WHERE number = 2").await;

    let spx = |model: &Value| json!({ "model_uid": model["id"], "target": { "kind": "instrument", "symbol": "SPX", "transform": "return" } });
    let mtum = json!({ "model_uid": commercial["id"], "target": { "kind": "instrument", "symbol": "MTUM", "transform": "price" } });
    for (dataset, body, reason) in [
        (12, spx(&commercial), "synthetic"),
        (1, spx(&commercial), "kind_unsupported"),
        (2, spx(&commercial), "unsealed"),
        (
            10,
            json!({ "model_uid": commercial["id"], "target": { "kind": "series", "key": "nonfarm" } }),
            "licence_unrecognised",
        ),
        (3, spx(&commercial), "licence_non_commercial"),
        (5, mtum, "licence_no_derivatives"),
        (
            4,
            json!({ "model_uid": commercial["id"], "target": { "kind": "instrument", "symbol": "AAPL", "transform": "price" } }),
            "empty",
        ),
    ] {
        let path = format!("/api/v2/lqm/datasets/{dataset}/contracts");
        let p = problem(app.post_json(&path, &app.key, &body, None).await, 409, "dataset_ineligible").await;
        assert_eq!(p["reason"], reason, "dataset {dataset}: {p}");
    }
    // A model or instrument the workspace does not hold is 409 naming the field; a body that cannot be what
    // it says is 422.
    for (body, status, code) in [
        (
            json!({ "model_uid": commercial["id"], "target": { "kind": "instrument", "symbol": "NOPE", "transform": "price" } }),
            409,
            "reference_not_found",
        ),
        (
            json!({ "model_uid": commercial["id"], "target": { "kind": "series", "key": "ff3_nope" } }),
            422,
            "invalid_request",
        ),
        (
            json!({ "model_uid": commercial["id"], "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" }, "dataset": 6 }),
            422,
            "invalid_request",
        ),
        (
            json!({ "model_uid": "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD", "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" } }),
            409,
            "reference_not_found",
        ),
        (
            json!({ "model_uid": commercial["id"], "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" }, "holdout_fraction": 0.9 }),
            422,
            "invalid_request",
        ),
    ] {
        let mut body = body;
        let dataset = match body.as_object_mut().and_then(|o| o.remove("dataset")) {
            Some(d) => d.as_i64().expect("dataset"),
            None if body["target"]["kind"] == "series" => 6,
            None => 4,
        };
        let path = format!("/api/v2/lqm/datasets/{dataset}/contracts");
        problem(app.post_json(&path, &app.key, &body, None).await, status, code).await;
    }
    problem(
        app.post_json("/api/v2/lqm/datasets/999/contracts", &app.key, &spx(&commercial), None).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM lqm_contracts").await, 0, "no refusal recorded anything");

    // Non-commercial data trains a model registered for non-commercial use.
    let ok = created(&app, &app.key, "/api/v2/lqm/datasets/3/contracts", &spx(&research)).await;
    assert_eq!(ok["licence_terms"], "non_commercial");
    assert_eq!(ok["target"]["transform"], "return");
    assert_eq!(app.count("SELECT COUNT(*) FROM lqm_contracts").await, 1);
}

#[tokio::test]
async fn a_risk_model_is_backtested_and_a_rejected_request_trains_nothing() {
    let app = spawn_app().await;
    demo(&app).await;
    let reviewer = reviewer(&app).await;
    let body = json!({ "name": "SPX daily VaR", "task_family": "risk", "license": "MIT",
                       "intended_use": "One-day 99 % VaR of an S&P 500 position for limit monitoring." });
    let model = created(&app, &app.key, "/api/v2/lqm/models", &body).await;
    let m = model["id"].as_str().expect("id").to_string();
    let contract = created(
        &app,
        &app.key,
        "/api/v2/lqm/datasets/4/contracts",
        &json!({ "model_uid": m, "target": { "kind": "instrument", "symbol": "SPX", "transform": "return" }, "holdout_fraction": 0.1 }),
    )
    .await;
    assert_eq!(contract["observations"], 8312);
    let requests = format!("/api/v2/lqm/models/{m}/retraining-requests");
    // Another family's algorithm or hyperparameters are well-formed but conflict with this (risk) model: 409.
    let bad = json!({ "contract_uid": contract["id"], "algorithm": "holt_winters", "reason": "wrong family" });
    problem(app.post_json(&requests, &app.key, &bad, None).await, 409, "conflict").await;
    let bad = json!({ "contract_uid": contract["id"], "hyperparameters": { "trend": true }, "reason": "wrong family" });
    problem(app.post_json(&requests, &app.key, &bad, None).await, 409, "conflict").await;
    // A cutoff out of range breaks the body's schema: 422.
    let bad = json!({ "contract_uid": contract["id"], "hyperparameters": { "cutoff": 0.7 }, "reason": "bad cutoff" });
    problem(app.post_json(&requests, &app.key, &bad, None).await, 422, "invalid_request").await;

    // Rejected: nothing is trained under it.
    let first =
        json!({ "contract_uid": contract["id"], "hyperparameters": { "cutoff": 0.01 }, "reason": "Initial VaR" });
    let rejected = created(&app, &app.key, &requests, &first).await;
    let r = rejected["id"].as_str().expect("id");
    assert_eq!(person_decides(&app, r, "reject").await.status(), 303);
    let train = format!("/api/v2/lqm/retraining-requests/{r}/training");
    problem(app.post_json(&train, &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM lqm_checkpoints").await, 0);

    let second = created(&app, &app.key, &requests, &first).await;
    let r = second["id"].as_str().expect("id");
    approved_by_a_person(&app, r).await;
    let checkpoint =
        created(&app, &app.key, &format!("/api/v2/lqm/retraining-requests/{r}/training"), &json!({})).await;
    assert_eq!(checkpoint["algorithm"], "historical_var");
    let var = checkpoint["fitted"]["var"].as_f64().expect("VaR");
    assert!(var < -0.02 && var > -0.06, "a 99 % daily VaR of the S&P 500: {var}");
    let k = checkpoint["id"].as_str().expect("id");
    let evaluation = created(
        &app,
        &reviewer,
        &format!("/api/v2/lqm/checkpoints/{k}/evaluation"),
        &json!({ "criteria": { "min_p_value": 0.01 } }),
    )
    .await;
    let metrics = &evaluation["metrics"];
    assert_eq!(metrics["observations"], 831);
    let breaches = metrics["breaches"].as_u64().expect("breaches");
    let p = metrics["p_value"].as_f64().expect("p-value");
    assert!((0.0..=1.0).contains(&p));
    assert_eq!(evaluation["passed"], p >= 0.01, "{breaches} breaches, p = {p}");
}

#[tokio::test]
async fn a_record_edited_outside_fiscus_is_refused() {
    let app = spawn_app().await;
    let model = created(&app, &app.key, "/api/v2/lqm/models", &forecaster("Tamper target")).await;
    let m = model["id"].as_str().expect("id");
    app.execute(&format!(
        "UPDATE lqm_models SET body = replace(body, 'not for trading', 'for trading') WHERE id = '{m}'"
    ))
    .await;
    problem(app.get(&format!("/api/v2/lqm/models/{m}"), &app.key).await, 500, "integrity_failure").await;
    problem(app.get(&format!("/api/v2/lqm/models/{m}/developer-manifest"), &app.key).await, 500, "integrity_failure")
        .await;
}

/// The live path of a documented LQM example, with the ids its body names replaced by real ones: a model,
/// its contract, a request made by another credential (pending for the decision example, approved for the
/// training example), and a trained checkpoint for the evaluation example.
pub async fn example_path(app: &TestApp, path: &str, example: &mut Value) -> String {
    if path.ends_with("/lqm/models") {
        return path.to_string();
    }
    if path.contains("/qlms") {
        return qlm_example_path(app, path, example).await;
    }
    let name = format!("Example {}", fiscus_domain::ids::new_id("x"));
    let model = created(app, &app.key, "/api/v2/lqm/models", &forecaster(&name)).await;
    let m = model["id"].as_str().expect("id").to_string();
    if path.contains("/datasets/{dataset}/") {
        example["model_uid"] = json!(m);
        return path.replace("{dataset}", "4");
    }
    let target = json!({ "model_uid": m, "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" } });
    let contract = created(app, &app.key, "/api/v2/lqm/datasets/4/contracts", &target).await;
    let c = contract["id"].as_str().expect("id").to_string();
    if path.ends_with("/retraining-requests") {
        example["contract_uid"] = json!(c);
        return path.replace("{uid}", &m);
    }
    let reviewer = reviewer(app).await;
    let body = json!({ "contract_uid": c, "reason": "example" });
    let request = created(app, &reviewer, &format!("/api/v2/lqm/models/{m}/retraining-requests"), &body).await;
    let r = request["id"].as_str().expect("id").to_string();
    if path.ends_with("/decision") {
        return path.replace("{requestUid}", &r);
    }
    approved_by_a_person(app, &r).await;
    if path.ends_with("/training") {
        return path.replace("{requestUid}", &r);
    }
    let checkpoint =
        created(app, &reviewer, &format!("/api/v2/lqm/retraining-requests/{r}/training"), &json!({})).await;
    let k = checkpoint["id"].as_str().expect("id");
    if path.ends_with("/promotion-requests") {
        for step in ["evaluation", "evidence-packet", "publication"] {
            created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/{step}"), &json!({})).await;
        }
    }
    path.replace("{uid}", k)
}

/// A model registered, contracted to the S&P 500 closes, retrained under `reviewer`'s approval and
/// evaluated: its id and the evaluated checkpoint's.
pub async fn evaluated_checkpoint(app: &TestApp, reviewer: &str, name: &str) -> (String, String) {
    let model = created(app, &app.key, "/api/v2/lqm/models", &forecaster(name)).await;
    let m = model["id"].as_str().expect("id").to_string();
    let target = json!({ "model_uid": m, "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" } });
    let contract = created(app, &app.key, "/api/v2/lqm/datasets/4/contracts", &target).await;
    let body = json!({ "contract_uid": contract["id"], "hyperparameters": { "trend": true }, "reason": "calibration" });
    let request = created(app, &app.key, &format!("/api/v2/lqm/models/{m}/retraining-requests"), &body).await;
    let r = request["id"].as_str().expect("id");
    approved_by_a_person(app, r).await;
    let checkpoint = created(app, reviewer, &format!("/api/v2/lqm/retraining-requests/{r}/training"), &json!({})).await;
    let k = checkpoint["id"].as_str().expect("id").to_string();
    let evaluation = created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/evaluation"), &json!({})).await;
    assert_eq!(evaluation["passed"], true);
    (m, k)
}

fn sha256_of(value: &Value) -> String {
    let canonical = fiscus_domain::jcs::canonicalize(value).expect("canonical");
    fiscus_domain::evidence::seal_bytes(canonical.as_bytes())
}

#[tokio::test]
async fn a_passed_checkpoint_is_published_into_a_verifiable_hash_linked_supply_chain() {
    let app = spawn_app().await;
    demo(&app).await;
    let reviewer = reviewer(&app).await;
    let (_, first) = evaluated_checkpoint(&app, &reviewer, "First forecaster").await;
    let publish = |k: &str| format!("/api/v2/lqm/checkpoints/{k}/publication");
    let packet_of = |k: &str| format!("/api/v2/lqm/checkpoints/{k}/evidence-packet");
    let closed =
        problem(app.post_json(&publish(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&closed), ["no_evidence_packet"]);

    let packet = created(&app, &app.key, &packet_of(&first), &json!({})).await;
    let checkpoint = get(&app, &format!("/api/v2/lqm/checkpoints/{first}")).await;
    assert_eq!(packet["checkpoint"]["checkpoint_hash"], checkpoint["checkpoint_hash"]);
    assert_eq!(packet["evaluation"]["evaluation_hash"], checkpoint["evaluation"]["evaluation_hash"]);
    let reviewed_by = packet["retraining_request"]["reviewed_by"].as_str().expect("reviewed by");
    assert!(reviewed_by.starts_with("operator:"), "a person reviewed it: {reviewed_by}");
    assert_ne!(packet["retraining_request"]["reviewed_by"], checkpoint["trained_by"]);
    let again =
        problem(app.post_json(&packet_of(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed")
            .await;
    assert_eq!(reasons(&again), ["evidence_packet_issued"]);

    let one = created(&app, &app.key, &publish(&first), &json!({})).await;
    assert_eq!(one["revision"], 1);
    assert_eq!(one["previous_head"], fiscus_models::rules::lqm::records::GENESIS_HEAD);
    assert_eq!(one["supply_chain_head"], one["head"]);
    assert_eq!(one["checkpoint_hash"], checkpoint["checkpoint_hash"]);
    assert_eq!(one["evidence_packet_hash"], packet["packet_hash"]);
    assert!(!one.to_string().contains("svc_"), "no credential material");
    // The head is the hash of the served record, which includes the previous head.
    let record = |p: &Value| {
        let mut r = p.clone();
        let o = r.as_object_mut().expect("object");
        for k in ["object", "id", "head", "supply_chain_head", "published_by"] {
            o.remove(k);
        }
        r
    };
    assert_eq!(one["head"], sha256_of(&record(&one)));
    let names: Vec<&str> =
        one["artifacts"].as_array().expect("artifacts").iter().map(|a| a["name"].as_str().expect("name")).collect();
    assert_eq!(names, ["checkpoint.json", "evaluation.json", "evidence-packet.json", "provenance.intoto.json"]);
    assert_eq!(one["artifacts"][0]["sha256"], checkpoint["checkpoint_hash"], "the hub stores the checkpoint as hashed");
    assert_eq!(one["bundle_hash"], sha256_of(&one["artifacts"]));
    let artifact = |sha: &Value| {
        let (store, ws, sha) =
            (app.state.store.clone(), app.workspace_id.clone(), sha.as_str().expect("sha").to_string());
        async move {
            let mut conn = store.read().await.expect("conn");
            fiscus_models::tables::model_hub::get(&mut conn, &ws, &sha).await.expect("read").expect("in the hub")
        }
    };
    let statement: Value = serde_json::from_slice(&artifact(&one["artifacts"][3]["sha256"]).await).expect("json");
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(statement["predicateType"], "https://slsa.dev/provenance/v1");
    let subject = &statement["subject"][0];
    assert_eq!(subject["name"], "checkpoint.json");
    assert_eq!(
        format!("sha256:{}", subject["digest"]["sha256"].as_str().expect("digest")),
        checkpoint["checkpoint_hash"]
    );
    problem(app.post_json(&publish(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;

    // A second publication links to the first's head; the first now shows the chain's newer head.
    let (_, second) = evaluated_checkpoint(&app, &reviewer, "Second forecaster").await;
    created(&app, &app.key, &packet_of(&second), &json!({})).await;
    let two = created(&app, &app.key, &publish(&second), &json!({})).await;
    assert_eq!(two["previous_head"], one["head"]);
    let p1 = one["id"].as_str().expect("id");
    let again = get(&app, &format!("/api/v2/lqm/publications/{p1}")).await;
    assert_eq!(again["supply_chain_head"], two["head"]);
    let (_, other) = app.other_workspace_key().await;
    problem(app.get(&format!("/api/v2/lqm/publications/{p1}"), &other).await, 404, "not_found").await;

    // `fiscus verify models` finds the chain and the hub intact, then an altered artifact and a broken link.
    let verify = || fiscus_models::lqm::verify::verify_models(&app.state.store, &app.workspace_id);
    let report = verify().await.expect("verify");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.publications, report.artifacts), (2, 8));
    // A node upgraded from the file hub adopts what its data directory still has, each file checked first.
    let sha = one["artifacts"][0]["sha256"].as_str().expect("sha").to_string();
    let bytes = artifact(&one["artifacts"][0]["sha256"]).await;
    app.execute(&format!(
        "DELETE FROM model_artifacts WHERE workspace_id = '{}' AND sha256 = '{sha}'",
        app.workspace_id
    ))
    .await;
    let report = verify().await.expect("verify");
    assert!(report.problems.iter().any(|p| p.contains("missing from the model hub")), "{:?}", report.problems);
    let data_dir = app.state.settings.data_dir.clone();
    let file = fiscus_models::lqm::hub::legacy_path(&data_dir, &sha).expect("path");
    std::fs::create_dir_all(file.parent().expect("folder")).expect("folder");
    std::fs::write(&file, b"{\"not\":\"it\"}").expect("write");
    let adopt = || fiscus_models::lqm::hub::adopt(&app.state.store, &data_dir);
    assert_eq!(adopt().await.expect("adopt"), 0, "a file that is not its name is left out");
    std::fs::write(&file, &bytes).expect("write");
    assert_eq!(adopt().await.expect("adopt"), 1);
    assert!(verify().await.expect("verify").problems.is_empty());
    // The hub is in the database (the check reads no data directory): any node on it verifies the same.
    let sha = two["artifacts"][1]["sha256"].as_str().expect("sha").to_string();
    let mut bytes = artifact(&two["artifacts"][1]["sha256"]).await;
    bytes[10] ^= 1;
    let mut tx = app.state.store.begin().await.expect("tx");
    sqlx::query("UPDATE model_artifacts SET content = $1 WHERE workspace_id = $2 AND sha256 = $3")
        .bind(bytes)
        .bind(&app.workspace_id)
        .bind(&sha)
        .execute(tx.conn())
        .await
        .expect("tamper");
    tx.commit().await.expect("commit");
    let report = verify().await.expect("verify");
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(report.problems[0].contains("evaluation.json was altered"), "{:?}", report.problems);
    app.execute(&format!("DELETE FROM lqm_publications WHERE id = '{p1}'")).await;
    let report = verify().await.expect("verify");
    assert!(report.problems.iter().any(|p| p.contains("broken link")), "{:?}", report.problems);
}

/// Decides a promotion at the console as `cookie`'s operator, with the checkpoint hash its page shows.
pub async fn console_promotion(app: &TestApp, cookie: &str, id: &str, decision: &str) -> reqwest::Response {
    let page = fiscus_apptest::console::console_page(app, cookie, "/console/lqm-promotions").await;
    let at = page
        .find(&format!("action=\"/console/lqm-promotions/{id}\""))
        .unwrap_or_else(|| panic!("{id} is listed:\n{page}"));
    let form = &page[at..];
    let value =
        |name: &str| fiscus_apptest::console::between(form, &format!("name=\"{name}\" value=\""), "\"").to_string();
    fiscus_apptest::console::client()
        .post(app.url(&format!("/console/lqm-promotions/{id}")))
        .header("cookie", cookie)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".to_string()),
            ("checkpoint_hash", value("checkpoint_hash")),
            ("decision", decision.to_string()),
        ])
        .send()
        .await
        .expect("request")
}

fn catalogued(list: &Value, key: &str) -> Option<Value> {
    list["data"].as_array().expect("data").iter().find(|m| m["key"] == key).cloned()
}

#[tokio::test]
async fn only_an_operator_promotes_an_exact_checkpoint_into_the_quant_models_catalogue() {
    let app = spawn_app().await;
    demo(&app).await;
    let sandbox =
        fiscus_domain::tenancy::Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    app.admin().grant_credits(&sandbox, 1000, "lqm").await.expect("credits");
    let reviewer = reviewer(&app).await;
    let (m, first) = evaluated_checkpoint(&app, &reviewer, "SPX forecaster").await;
    let request = |k: &str| format!("/api/v2/lqm/checkpoints/{k}/promotion-requests");
    let closed =
        problem(app.post_json(&request(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&closed), ["not_published"]);
    created(&app, &app.key, &format!("/api/v2/lqm/checkpoints/{first}/evidence-packet"), &json!({})).await;
    created(&app, &app.key, &format!("/api/v2/lqm/checkpoints/{first}/publication"), &json!({})).await;
    let pending = created(&app, &app.key, &request(&first), &json!({ "note": "first calibration" })).await;
    assert_eq!(pending["state"], "pending");
    let checkpoint = get(&app, &format!("/api/v2/lqm/checkpoints/{first}")).await;
    assert_eq!(pending["checkpoint_hash"], checkpoint["checkpoint_hash"]);
    assert_eq!(pending["evaluation_hash"], checkpoint["evaluation"]["evaluation_hash"]);
    let twice =
        problem(app.post_json(&request(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&twice), ["promotion_pending"]);

    // A credential with every scope decides nothing: the console needs a signed-in person.
    let p = pending["id"].as_str().expect("id").to_string();
    let bearer = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/lqm-promotions/{p}")))
        .bearer_auth(&app.key)
        .form(&[("decision", "approve"), ("environment", "sandbox"), ("csrf", "x"), ("checkpoint_hash", "x")])
        .send()
        .await
        .expect("request");
    assert!(!bearer.status().is_success(), "{}", bearer.status());
    let history = get(&app, &format!("/api/v2/lqm/models/{m}/promotions")).await;
    assert_eq!(history["data"][0]["state"], "pending");
    assert!(catalogued(&get(&app, "/api/v2/quant/models").await, &m).is_none());
    problem(app.get(&format!("/api/v2/quant/models/{m}"), &app.key).await, 404, "not_found").await;

    let op = fiscus_apptest::console::enrolled_operator(
        &app,
        "model-risk@example.com",
        fiscus_domain::people::Role::Approver,
    )
    .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    assert_eq!(console_promotion(&app, &cookie, &p, "approve").await.status(), 303);
    let history = get(&app, &format!("/api/v2/lqm/models/{m}/promotions")).await;
    assert_eq!(history["data"][0]["state"], "active");
    assert!(history["data"][0]["decision"]["by"].as_str().is_some_and(|b| b.starts_with("operator:")));

    // The catalogue lists it and runs exactly the promoted checkpoint.
    let entry = catalogued(&get(&app, "/api/v2/quant/models").await, &m).expect("catalogued");
    assert_eq!(
        (entry["kind"].as_str(), entry["checkpoint_hash"].clone()),
        (Some("lqm"), checkpoint["checkpoint_hash"].clone())
    );
    assert_eq!(get(&app, &format!("/api/v2/quant/models/{m}")).await, entry);
    let values: Vec<f64> = (0..60).map(|t| 4000.0 + 5.0 * t as f64 + if t % 2 == 0 { 3.0 } else { -3.0 }).collect();
    let run = created(
        &app,
        &app.key,
        &format!("/api/v2/quant/models/{m}/run"),
        &json!({ "input": { "values": values }, "parameters": { "horizon": 5 } }),
    )
    .await;
    let result = &run["result"]["output"];
    assert_eq!(result["checkpoint_hash"], checkpoint["checkpoint_hash"], "{run}");
    let forecast = result["forecast"].as_array().expect("forecast");
    assert_eq!(forecast.len(), 5);
    assert!(forecast.iter().all(|f| f.as_f64().is_some_and(|f| (4200.0..4400.0).contains(&f))), "{forecast:?}");

    // A newer checkpoint promoted supersedes the first, which can never be promoted again.
    let manifest = get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await;
    assert_eq!(
        (manifest["stage"].as_str(), manifest["serving_checkpoint"].as_str()),
        (Some("promoted"), Some(first.as_str()))
    );
    let contract = manifest["contracts"][0].as_str().expect("contract");
    let body = json!({ "contract_uid": contract, "reason": "recalibration" });
    let again = created(&app, &app.key, &format!("/api/v2/lqm/models/{m}/retraining-requests"), &body).await;
    let r = again["id"].as_str().expect("id");
    approved_by_a_person(&app, r).await;
    let second = created(&app, &reviewer, &format!("/api/v2/lqm/retraining-requests/{r}/training"), &json!({})).await;
    let second = second["id"].as_str().expect("id").to_string();
    for step in ["evaluation", "evidence-packet", "publication"] {
        created(&app, &app.key, &format!("/api/v2/lqm/checkpoints/{second}/{step}"), &json!({})).await;
    }
    let newer = created(&app, &app.key, &request(&second), &json!({})).await;
    assert_eq!(console_promotion(&app, &cookie, newer["id"].as_str().expect("id"), "approve").await.status(), 303);
    let history = get(&app, &format!("/api/v2/lqm/models/{m}/promotions")).await;
    let states: Vec<&str> =
        history["data"].as_array().expect("data").iter().map(|p| p["state"].as_str().expect("state")).collect();
    assert_eq!(states, ["superseded", "active"]);
    let stale =
        problem(app.post_json(&request(&first), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert!(reasons(&stale).contains(&"superseded".to_string()), "{stale}");
    let entry = catalogued(&get(&app, "/api/v2/quant/models").await, &m).expect("catalogued");
    assert_ne!(entry["checkpoint_hash"], checkpoint["checkpoint_hash"]);

    // Revoked: it serves nothing, and is never promoted again.
    let active = history["data"][1]["id"].as_str().expect("id");
    assert_eq!(console_promotion(&app, &cookie, active, "revoke").await.status(), 303);
    assert!(catalogued(&get(&app, "/api/v2/quant/models").await, &m).is_none());
    let revoked =
        problem(app.post_json(&request(&second), &app.key, &json!({}), None).await, 409, "lifecycle_gate_closed").await;
    assert!(reasons(&revoked).contains(&"checkpoint_revoked".to_string()), "{revoked}");
}

/// The whole lifecycle in one pass, as the issue lists it: register → contract → request retraining →
/// approve → train → evaluate → evidence packet → publish → console promotion → `/quant/models` runs it →
/// a QLM version pins it → invoke → console rebinding to a newer checkpoint → invoke shows the new hashes;
/// then `fiscus verify models` finds a tampered artifact and a broken supply-chain link. A credential with
/// every scope decides none of it.
#[tokio::test]
async fn from_registration_to_a_rebound_qlm_with_a_person_at_every_decision() {
    let app = spawn_app().await;
    demo(&app).await;
    let sandbox =
        fiscus_domain::tenancy::Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    app.admin().grant_credits(&sandbox, 1000, "lqm").await.expect("credits");
    let reviewer = reviewer(&app).await;
    let op = fiscus_apptest::console::enrolled_operator(&app, "mrm@example.com", fiscus_domain::people::Role::Approver)
        .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;

    // Register … evaluate (the helper), then evidence, publication and a promotion an operator approves.
    let (m, first) = evaluated_checkpoint(&app, &reviewer, "SPX liquidity forecaster").await;
    let promote = |k: String| {
        let app = &app;
        let cookie = &cookie;
        async move {
            for step in ["evidence-packet", "publication"] {
                created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/{step}"), &json!({})).await;
            }
            let p =
                created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/promotion-requests"), &json!({})).await;
            assert_eq!(console_promotion(app, cookie, p["id"].as_str().expect("id"), "approve").await.status(), 303);
            p
        }
    };
    promote(first.clone()).await;
    let first_hash = get(&app, &format!("/api/v2/lqm/checkpoints/{first}")).await["checkpoint_hash"].clone();
    let entry = catalogued(&get(&app, "/api/v2/quant/models").await, &m).expect("catalogued");
    assert_eq!(entry["checkpoint_hash"], first_hash);
    let series: Vec<f64> = (0..40).map(|t| 4000.0 + 4.0 * t as f64 + if t % 3 == 0 { 6.0 } else { -2.0 }).collect();
    let run =
        created(&app, &app.key, &format!("/api/v2/quant/models/{m}/run"), &json!({ "input": { "values": series } }))
            .await;
    assert_eq!(run["result"]["output"]["checkpoint_hash"], first_hash);

    // A QLM pins the promoted checkpoint; a model that serves nothing cannot be composed.
    let (idle, _) = evaluated_checkpoint(&app, &reviewer, "Unpromoted").await;
    let refused = json!({ "name": "Refused", "components": { "forecast": { "model_uid": idle } } });
    let closed =
        problem(app.post_json("/api/v2/qlms", &app.key, &refused, None).await, 409, "lifecycle_gate_closed").await;
    assert_eq!(reasons(&closed), ["not_promoted"]);
    let body = json!({ "name": "Treasury liquidity profile", "components": { "forecast": { "model_uid": m } } });
    let qlm = created(&app, &app.key, "/api/v2/qlms", &body).await;
    let q = qlm["id"].as_str().expect("id").to_string();
    assert_eq!((qlm["version"].as_i64(), qlm["pins"][0]["checkpoint_hash"].clone()), (Some(1), first_hash.clone()));
    let invoke = format!("/api/v2/qlms/{q}/invoke");
    let once = app.post_json(&invoke, &app.key, &json!({ "values": series, "horizon": 3 }), None).await;
    assert_eq!(once.status(), 200);
    let once: Value = once.json().await.expect("json");
    assert_eq!(once["version_hash"], qlm["version_hash"]);
    assert_eq!(once["outputs"][0]["checkpoint_hash"], first_hash);
    assert_eq!(once["outputs"][0]["output"]["forecast"].as_array().map(Vec::len), Some(3));
    // The same checkpoint through the catalogue and through the QLM gives the same numbers.
    let direct = created(
        &app,
        &app.key,
        &format!("/api/v2/quant/models/{m}/run"),
        &json!({ "input": { "values": series }, "parameters": { "horizon": 3 } }),
    )
    .await;
    assert_eq!(direct["result"]["output"]["forecast"], once["outputs"][0]["output"]["forecast"]);
    let contract = get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await["contracts"][0].clone();
    let evaluated = app
        .post_json(&format!("/api/v2/qlms/{q}/evaluate"), &app.key, &json!({ "contract_uid": contract }), None)
        .await;
    assert_eq!(evaluated.status(), 200);
    let evaluated: Value = evaluated.json().await.expect("json");
    assert_eq!(evaluated["outputs"][0]["passed"], true);

    // A newer checkpoint is promoted: the QLM keeps its pin until an operator rebinds it.
    let manifest = get(&app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await;
    let request = created(
        &app,
        &app.key,
        &format!("/api/v2/lqm/models/{m}/retraining-requests"),
        &json!({ "contract_uid": manifest["contracts"][0], "reason": "recalibration" }),
    )
    .await;
    let r = request["id"].as_str().expect("id");
    approved_by_a_person(&app, r).await;
    let second = created(&app, &reviewer, &format!("/api/v2/lqm/retraining-requests/{r}/training"), &json!({})).await;
    let second_id = second["id"].as_str().expect("id").to_string();
    created(&app, &app.key, &format!("/api/v2/lqm/checkpoints/{second_id}/evaluation"), &json!({})).await;
    promote(second_id.clone()).await;
    let still =
        app.post_json(&invoke, &app.key, &json!({ "values": series }), None).await.json::<Value>().await.expect("json");
    assert_eq!(still["outputs"][0]["checkpoint_hash"], first_hash, "a QLM runs what it pins, not what is promoted");

    let page = fiscus_apptest::console::console_page(&app, &cookie, "/console/qlms").await;
    let at = page
        .find(&format!("action=\"/console/qlms/{q}\""))
        .unwrap_or_else(|| panic!("a rebinding is offered:\n{page}"));
    let form = &page[at..];
    let value =
        |name: &str| fiscus_apptest::console::between(form, &format!("name=\"{name}\" value=\""), "\"").to_string();
    assert_eq!(value("checkpoint_hash"), second["checkpoint_hash"].as_str().expect("hash"));
    // The credential with every scope cannot rebind: the console needs a person.
    let bearer = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/qlms/{q}")))
        .bearer_auth(&app.key)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".into()),
            ("role", "forecast".into()),
            ("checkpoint_hash", value("checkpoint_hash")),
        ])
        .send()
        .await
        .expect("request");
    assert!(!bearer.status().is_success());
    assert_eq!(get(&app, &format!("/api/v2/qlms/{q}/versions")).await["data"].as_array().map(Vec::len), Some(1));
    let rebound = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/qlms/{q}")))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".into()),
            ("role", "forecast".into()),
            ("checkpoint_hash", value("checkpoint_hash")),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(rebound.status(), 303);
    let versions = get(&app, &format!("/api/v2/qlms/{q}/versions")).await;
    assert_eq!(versions["data"][1]["previous_version_hash"], versions["data"][0]["version_hash"]);
    assert!(versions["data"][1]["created_by"].as_str().is_some_and(|b| b.starts_with("operator:")));
    let after =
        app.post_json(&invoke, &app.key, &json!({ "values": series }), None).await.json::<Value>().await.expect("json");
    assert_eq!(after["version"], 2);
    assert_eq!(after["outputs"][0]["checkpoint_hash"], second["checkpoint_hash"]);
    assert_eq!(after["version_hash"], versions["data"][1]["version_hash"]);
    // Version 1 still runs its own pin…
    let v1 = app
        .post_json(&invoke, &app.key, &json!({ "values": series, "version": 1 }), None)
        .await
        .json::<Value>()
        .await
        .expect("json");
    assert_eq!(v1["outputs"][0]["checkpoint_hash"], first_hash);

    // …until a pinned checkpoint is revoked: then it refuses, and records nothing.
    let history = get(&app, &format!("/api/v2/lqm/models/{m}/promotions")).await;
    let active = history["data"][1]["id"].as_str().expect("id");
    assert_eq!(console_promotion(&app, &cookie, active, "revoke").await.status(), 303);
    let runs = app.count("SELECT COUNT(*) FROM qlm_runs").await;
    let revoked =
        problem(app.post_json(&invoke, &app.key, &json!({ "values": series }), None).await, 409, "checkpoint_revoked")
            .await;
    assert_eq!(revoked["role"], "forecast");
    assert_eq!(app.count("SELECT COUNT(*) FROM qlm_runs").await, runs);

    // The supply chain: intact, then an altered artifact and a broken link are found.
    let verify = || fiscus_models::lqm::verify::verify_models(&app.state.store, &app.workspace_id);
    let report = verify().await.expect("verify");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let publications = app.count("SELECT COUNT(*) FROM lqm_publications").await;
    assert_eq!(report.publications as i64, publications);
    let mut tx = app.state.store.begin().await.expect("tx");
    sqlx::query("UPDATE model_artifacts SET content = $1 WHERE workspace_id = $2 AND sha256 = $3")
        .bind(b"{}".to_vec())
        .bind(&app.workspace_id)
        .bind(second["checkpoint_hash"].as_str().expect("hash"))
        .execute(tx.conn())
        .await
        .expect("tamper");
    tx.commit().await.expect("commit");
    let report = verify().await.expect("verify");
    assert!(report.problems.iter().any(|p| p.contains("checkpoint.json was altered")), "{:?}", report.problems);
    let mut conn = app.state.store.read().await.expect("conn");
    let (oldest,): (String,) = sqlx::query_as("SELECT id FROM lqm_publications ORDER BY id LIMIT 1")
        .fetch_one(&mut *conn)
        .await
        .expect("first");
    drop(conn);
    app.execute(&format!("DELETE FROM lqm_publications WHERE id = '{oldest}'")).await;
    let report = verify().await.expect("verify");
    assert!(report.problems.iter().any(|p| p.contains("broken link")), "{:?}", report.problems);
}

/// The live path of a documented QLM example: a model promoted at the console (by an operator enrolled
/// here), composed into a QLM for the invoke and evaluate examples.
async fn qlm_example_path(app: &TestApp, path: &str, example: &mut Value) -> String {
    let reviewer = reviewer(app).await;
    let name = format!("Example {}", fiscus_domain::ids::new_id("x"));
    let (m, k) = evaluated_checkpoint(app, &reviewer, &name).await;
    for step in ["evidence-packet", "publication"] {
        created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/{step}"), &json!({})).await;
    }
    let p = created(app, &app.key, &format!("/api/v2/lqm/checkpoints/{k}/promotion-requests"), &json!({})).await;
    let email = format!("{}@example.com", fiscus_domain::ids::new_id("op").to_lowercase());
    let op = fiscus_apptest::console::enrolled_operator(app, &email, fiscus_domain::people::Role::Approver).await;
    let cookie = fiscus_apptest::console::sign_in(app, &op).await;
    assert_eq!(console_promotion(app, &cookie, p["id"].as_str().expect("id"), "approve").await.status(), 303);
    if path.ends_with("/qlms") {
        example["components"]["forecast"]["model_uid"] = json!(m);
        return path.to_string();
    }
    let body = json!({ "name": name, "components": { "forecast": { "model_uid": m } } });
    let qlm = created(app, &app.key, "/api/v2/qlms", &body).await;
    if path.ends_with("/evaluate") {
        let manifest = get(app, &format!("/api/v2/lqm/models/{m}/developer-manifest")).await;
        example["contract_uid"] = manifest["contracts"][0].clone();
    }
    path.replace("{uid}", qlm["id"].as_str().expect("id"))
}

/// serde reads a struct from an array too (its fields by position); a member documented as an object is an
/// object (found by Schemathesis on `limits`: `[null, null]` was read as no limits).
#[tokio::test]
async fn a_member_documented_as_an_object_refuses_an_array() {
    let app = spawn_app().await;
    demo(&app).await;
    let runs = "/api/v2/investment/risk-compliance/runs";
    let p = problem(
        app.post_json(runs, &app.key, &json!({ "portfolio_id": 1, "limits": [null, null] }), None).await,
        422,
        "invalid_request",
    )
    .await;
    assert_eq!(p["errors"][0]["field"], "limits", "{p}");
    let scenarios = "/api/v2/investment/portfolios/1/scenarios";
    problem(
        app.post_json(scenarios, &app.key, &json!({ "hypothetical": [{}, "x"] }), None).await,
        422,
        "invalid_request",
    )
    .await;
    let evaluation = "/api/v2/lqm/checkpoints/ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD/evaluation";
    problem(app.post_json(evaluation, &app.key, &json!({ "criteria": [1.1] }), None).await, 422, "invalid_request")
        .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records").await, 0);
}
