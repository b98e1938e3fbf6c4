//! Research runs, snapshots and projects: a run's steps give the numbers their endpoints give, a snapshot
//! freezes the bundle under its hash, and a re-run of it reproduces every output byte for byte.

use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_domain::tenancy::Tenant;
use serde_json::{Value, json};

const RUNS: &str = "/api/v2/quant/research/runs";
const SNAPSHOTS: &str = "/api/v2/quant/research/snapshots";

async fn grant(app: &TestApp, credits: i64) {
    let tenant = Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, credits, "test grant").await.expect("grant");
}

fn optimization() -> Value {
    json!({"objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"], "start": "2015-01-01", "end": "2016-12-31"})
}

fn robust_z() -> Value {
    json!({"input": {"values": [1.0, 1.2, 0.9, 1.1, 9.5, 1.0, 1.05, 0.95]}, "parameters": {"threshold": 3.5}})
}

fn run_body() -> Value {
    let mut model = robust_z();
    model["model"] = json!("robust_z");
    json!({
        "project": "low-volatility", "name": "Minimum variance and outliers",
        "steps": [{"key": "weights", "optimization": optimization()}, {"key": "outliers", "model_run": model}]
    })
}

fn sha256_jcs(v: &Value) -> String {
    fiscus_domain::evidence::seal_bytes(fiscus_domain::jcs::canonicalize(v).expect("jcs").as_bytes())
}

#[tokio::test]
async fn a_snapshot_freezes_a_run_and_its_rerun_reproduces_every_output() {
    let app = spawn_app().await;
    grant(&app, 100).await;
    app.load_demo().await;
    let r = app.post_json(RUNS, &app.key, &run_body(), None).await;
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().expect("location").to_string();
    let run: Value = r.json().await.expect("json");
    assert_eq!(location, format!("/api/v2/quant/compute/jobs/{}", run["id"].as_str().expect("id")));
    assert_eq!(run["kind"], "research_run");
    assert_eq!(run["credits"], 2, "the sum of its steps' prices");
    let out = &run["result"]["output"];
    let steps = out["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    // Each step's numbers are what its own endpoint gives, and its hash is the hash of its output.
    let alone: Value = app
        .post_json("/api/v2/quant/compute/optimizations", &app.key, &optimization(), None)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(steps[0]["key"], "weights");
    assert_eq!(steps[0]["kind"], "optimization");
    assert_eq!(steps[0]["output"], alone["result"]["output"]);
    assert_eq!(steps[0]["output_hash"], alone["result"]["output_hash"]);
    let z: Value = app
        .post_json("/api/v2/quant/models/robust_z/run", &app.key, &robust_z(), None)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(steps[1]["output"], z["result"]["output"]);
    for s in steps {
        assert_eq!(s["output_hash"].as_str(), Some(sha256_jcs(&s["output"]).as_str()));
    }
    // The datasets read, pinned: one prices dataset per instrument.
    let pinned = run["request"]["steps"][0]["request"]["returns"]["instruments"].as_array().expect("pinned");
    let datasets = out["datasets"].as_array().expect("datasets");
    // The demo's prices are one dataset for all three instruments: each dataset is listed once.
    let mut numbers: Vec<i64> = datasets.iter().map(|d| d["dataset"].as_i64().expect("dataset")).collect();
    numbers.dedup();
    assert_eq!(numbers.len(), datasets.len());
    for p in pinned {
        assert!(datasets.iter().any(|d| d["dataset"] == p["dataset"] && d["content_hash"] == p["content_hash"]));
    }
    assert!(out.get("comparison").is_none());

    // Frozen: the bundle hashes to its bundle_hash, and reads back the same.
    let body = json!({"run": run["id"], "name": "Low-volatility study", "description": "As presented"});
    let r = app.post_json(SNAPSHOTS, &app.key, &body, None).await;
    assert_eq!(r.status(), 201);
    let snap_location = r.headers()["location"].to_str().expect("location").to_string();
    let snap: Value = r.json().await.expect("json");
    let id = snap["id"].as_str().expect("id").to_string();
    assert_eq!(snap_location, format!("{SNAPSHOTS}/{id}"));
    assert_eq!(snap["verified"], true);
    assert_eq!(snap["bundle_hash"].as_str(), Some(sha256_jcs(&snap["bundle"]).as_str()));
    assert_eq!(snap["bundle"]["request_hash"], run["request_hash"]);
    assert_eq!(snap["bundle"]["result_hash"], run["result"]["result_hash"]);
    assert_eq!(snap["bundle"]["output"], *out);
    let read: Value = app.get(&snap_location, &app.key).await.json().await.expect("json");
    assert_eq!(read, snap);
    problem(app.post_json(SNAPSHOTS, &app.key, &body, None).await, 409, "conflict").await;

    // Run again from the snapshot: the same pinned datasets and engine give the same bytes.
    let r = app.post_json(RUNS, &app.key, &json!({"snapshot": id}), None).await;
    assert_eq!(r.status(), 201);
    let again: Value = r.json().await.expect("json");
    assert_ne!(again["id"], run["id"]);
    let cmp = &again["result"]["output"]["comparison"];
    assert_eq!(cmp["snapshot"], id.as_str());
    assert_eq!(cmp["bundle_hash"], snap["bundle_hash"]);
    assert_eq!(cmp["reproduced"], true, "{cmp}");
    assert_eq!(cmp["steps"].as_array().map(Vec::len), Some(2));
    for (a, b) in again["result"]["output"]["steps"].as_array().expect("steps").iter().zip(steps) {
        assert_eq!(a["output_hash"], b["output_hash"]);
    }
    assert_eq!(again["request"]["name"], "re-run of Low-volatility study");

    // The project counts both runs and the snapshot.
    let projects: Value = app.get("/api/v2/quant/projects", &app.key).await.json().await.expect("json");
    let p = &projects["data"][0];
    assert_eq!(projects["data"].as_array().map(Vec::len), Some(1), "{projects}");
    assert_eq!(p["key"], "low-volatility");
    assert_eq!(p["runs"], 2);
    assert_eq!(p["succeeded_runs"], 2);
    assert_eq!(p["snapshots"], 1);
    assert_eq!(p["last_run"], again["id"]);
    assert_eq!(p["last_snapshot"], id.as_str());
    let list: Value =
        app.get(&format!("{SNAPSHOTS}?project=low-volatility"), &app.key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1));
    let none: Value = app.get(&format!("{SNAPSHOTS}?project=other"), &app.key).await.json().await.expect("json");
    assert_eq!(none["data"].as_array().map(Vec::len), Some(0));

    // A snapshot edited in the database is refused, never served.
    app.execute(&format!("UPDATE research_snapshots SET name = 'Edited' WHERE id = '{id}'")).await;
    problem(app.get(&snap_location, &app.key).await, 500, "integrity_failure").await;

    // Another workspace sees nothing.
    let (_, other_key) = app.other_workspace_key().await;
    problem(app.get(&snap_location, &other_key).await, 404, "not_found").await;
    let theirs: Value = app.get("/api/v2/quant/projects", &other_key).await.json().await.expect("json");
    assert_eq!(theirs["data"].as_array().map(Vec::len), Some(0));
    let r = app.post_json(SNAPSHOTS, &other_key, &json!({"run": again["id"], "name": "Theirs"}), None).await;
    problem(r, 409, "reference_not_found").await;
}

#[tokio::test]
async fn bad_runs_and_snapshots_are_refused_and_change_nothing() {
    let app = spawn_app_with(|s| s.compute_worker = false).await;
    grant(&app, 100).await;
    let step =
        |key: &str| json!({"key": key, "model_run": {"model": "robust_z", "input": {"values": [1.0, 2.0, 3.0, 4.0]}}});
    let nine: Vec<Value> = (0..9).map(|i| step(&format!("s{i}"))).collect();
    for bad in [
        json!({"project": "p"}),
        json!({"steps": [step("a")]}),
        json!({"project": "Bad Project", "steps": [step("a")]}),
        json!({"project": "p", "steps": []}),
        json!({"project": "p", "steps": nine}),
        json!({"project": "p", "steps": [{"key": "a"}]}),
        json!({"project": "p", "steps": [{"key": "a", "model_run": {"model": "robust_z", "input": {"values": [1.0, 2.0, 3.0]}}, "forecast": {"values": [1.0]}}]}),
        json!({"project": "p", "steps": [{"key": "a", "model_run": {"model": "nope", "input": {"values": [1.0, 2.0, 3.0]}}}]}),
        json!({"project": "p", "steps": [step("a")], "snapshot": "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD"}),
        json!({"project": "p", "name": " ", "steps": [step("a")]}),
    ] {
        let r = app.post_json(RUNS, &app.key, &bad, None).await;
        assert_eq!(r.status(), 422, "{bad}");
    }
    // Two steps with one key: a rule across items no schema states, so 409.
    let twice = json!({"project": "p", "steps": [step("a"), step("a")]});
    problem(app.post_json(RUNS, &app.key, &twice, None).await, 409, "conflict").await;
    // What names an object the workspace does not hold is 409, naming the step.
    for missing in [
        json!({"project": "p", "steps": [{"key": "a", "optimization": {"objective": "min_variance", "instruments": ["NOPE"]}}]}),
        json!({"snapshot": "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD"}),
    ] {
        let r = app.post_json(RUNS, &app.key, &missing, None).await;
        assert_eq!(r.status(), 409, "{missing}");
    }
    // A step's field error names the step.
    let r = app
        .post_json(
            RUNS,
            &app.key,
            &json!({"project": "p", "steps": [{"key": "w", "optimization": {"objective": "min_variance", "instruments": ["NOPE"]}}]}),
            None,
        )
        .await;
    let p = problem(r, 409, "reference_not_found").await;
    assert!(p.to_string().contains("step `w`"), "{p}");
    assert_eq!(app.count("SELECT COUNT(*) FROM compute_jobs").await, 0);

    // A queued run cannot be frozen yet; a job that is not a research run cannot be frozen at all.
    let queued = app
        .http
        .post(app.url(RUNS))
        .bearer_auth(&app.key)
        .header("Prefer", "respond-async")
        .json(&json!({"project": "p", "steps": [step("a")]}))
        .send()
        .await
        .expect("request");
    assert_eq!(queued.status(), 202);
    let queued: Value = queued.json().await.expect("json");
    problem(
        app.post_json(SNAPSHOTS, &app.key, &json!({"run": queued["id"], "name": "n"}), None).await,
        409,
        "conflict",
    )
    .await;
    let model: Value = app
        .post_json(
            "/api/v2/quant/models/robust_z/run",
            &app.key,
            &json!({"input": {"values": [1.0, 2.0, 3.0, 4.0]}}),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    problem(
        app.post_json(SNAPSHOTS, &app.key, &json!({"run": model["id"], "name": "n"}), None).await,
        422,
        "invalid_request",
    )
    .await;
    for bad in [json!({"run": queued["id"], "name": ""}), json!({"name": "n"})] {
        assert_eq!(app.post_json(SNAPSHOTS, &app.key, &bad, None).await.status(), 422, "{bad}");
    }
    let unknown = app.post_json(SNAPSHOTS, &app.key, &json!({"run": "cjb_nope", "name": "n"}), None).await;
    problem(unknown, 409, "reference_not_found").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM research_snapshots").await, 0);
    problem(app.get(&format!("{SNAPSHOTS}/rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD"), &app.key).await, 404, "not_found").await;
    problem(app.get(&format!("{SNAPSHOTS}/nope"), &app.key).await, 404, "not_found").await;
}
