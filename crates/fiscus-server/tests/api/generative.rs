//! Generative runs: synthetic paths equal the engine's for the seed, are marked synthetic and not
//! executable, carry the SHA-256 of their paths, and are listed apart from other jobs.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::Matrix;
use serde_json::{Value, json};

async fn grant(app: &TestApp) {
    let tenant = Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 100, "test grant").await.expect("grant");
}

fn gbm(paths: u32) -> Value {
    json!({
        "generator": "gbm",
        "parameters": { "EQUITY": { "initial": 100.0, "drift": 0.05, "volatility": 0.2 } },
        "steps": 12, "paths": paths, "horizon_years": 1.0, "seed": 42
    })
}

#[tokio::test]
async fn synthetic_paths_are_the_engines_for_their_seed_and_marked_as_such() {
    let app = spawn_app().await;
    grant(&app).await;
    let models: Value = app.get("/api/v2/generative/models", &app.key).await.json().await.expect("json");
    assert!(
        models["data"].as_array().expect("data").iter().all(|m| m["synthetic"] == true && m["executable"] == false)
    );
    let r = app.post_json("/api/v2/generative/paths", &app.key, &gbm(5), None).await;
    assert_eq!(r.status(), 201);
    let job: Value = r.json().await.expect("json");
    let out = &job["result"]["output"];
    assert_eq!((out["synthetic"].clone(), out["executable"].clone()), (json!(true), json!(false)));
    let covariance = Matrix::from_rows(&[vec![0.2 * 0.2 * 1.0]]).expect("m"); // σ² of the volatility given
    let spec = fiscus_quant::simulate::gbm::GbmSpec {
        initial: &[100.0],
        drift: &[0.05],
        covariance: &covariance,
        horizon_years: 1.0,
        steps: 12,
        paths: 5,
        seed: 42,
    };
    let mut expected: Vec<Vec<f64>> = Vec::new();
    fiscus_quant::simulate::gbm::for_each_gbm_path(&spec, |_, p| expected.push(p.to_vec())).expect("engine");
    let served: Vec<Vec<f64>> = serde_json::from_value(out["assets"][0]["paths"].clone()).expect("paths");
    assert_eq!(served, expected);
    let bytes: Vec<u8> = expected.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(out["paths_sha256"], fiscus_domain::evidence::seal_bytes(&bytes));
    // The same request again: the same paths, bit for bit.
    let again: Value =
        app.post_json("/api/v2/generative/paths", &app.key, &gbm(5), None).await.json().await.expect("json");
    assert_eq!(again["result"]["output"]["paths_sha256"], out["paths_sha256"]);
    // Scenarios: fans over the same paths.
    let fans: Value =
        app.post_json("/api/v2/generative/scenarios", &app.key, &gbm(5), None).await.json().await.expect("json");
    assert_eq!(fans["result"]["output"]["paths_sha256"], out["paths_sha256"]);
    assert_eq!(fans["result"]["output"]["assets"][0]["fan"].as_array().map(Vec::len), Some(13));
    let runs: Value = app.get("/api/v2/generative/runs", &app.key).await.json().await.expect("json");
    assert_eq!(runs["data"].as_array().map(Vec::len), Some(3));
    let id = job["id"].as_str().expect("id");
    let one: Value = app.get(&format!("/api/v2/generative/runs/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(one["id"], job["id"]);
    // Too many prices to return whole (sizes whose product no schema states: 409); a bootstrap without
    // history (a rule the schema states: 422).
    let mut whole = gbm(10_000);
    whole["steps"] = json!(100);
    problem(app.post_json("/api/v2/generative/paths", &app.key, &whole, None).await, 409, "limit_exceeded").await;
    let mut boot = gbm(5);
    boot["generator"] = json!("block_bootstrap");
    assert_eq!(app.post_json("/api/v2/generative/paths", &app.key, &boot, None).await.status(), 422);
    // Another kind of job is not a generative run.
    let opt = json!({"objective": "min_variance", "returns": fiscus_apptest::columns(&["A", "B"], &json!([[0.01, 0.0], [0.0, 0.02], [-0.01, 0.01]]))});
    let other: Value =
        app.post_json("/api/v2/quant/compute/optimizations", &app.key, &opt, None).await.json().await.expect("json");
    let path = format!("/api/v2/generative/runs/{}", other["id"].as_str().expect("id"));
    problem(app.get(&path, &app.key).await, 404, "not_found").await;
}
