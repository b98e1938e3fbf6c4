use crate::helpers::{EVIDENCE, evidence_body, spawn_app};
use serde_json::Value;

#[tokio::test]
async fn usage_counts_requests_per_credential_and_operation() {
    let app = spawn_app().await;
    for _ in 0..3 {
        app.get("/api/v2/workspace", &app.key).await;
    }
    app.post_json(EVIDENCE, &app.key, &serde_json::json!({}), None).await;
    let body: Value = app.get("/api/v2/infrastructure/usage", &app.key).await.json().await.expect("json");
    let rows = body["data"].as_array().expect("rows");
    let workspace = rows.iter().find(|r| r["operation"] == "get_workspace").expect("counted");
    assert_eq!(workspace["requests"], 3);
    assert_eq!(workspace["errors"], 0);
    let evidence =
        rows.iter().find(|r| r["operation"] == "post_actions_autonomy_assessment_evidence").expect("counted");
    assert_eq!(evidence["errors"], 1);
    assert!(workspace["credential_id"].as_str().is_some_and(|c| c.starts_with("key_")));
}

#[tokio::test]
async fn infrastructure_reads_report_this_deployment() {
    let app = spawn_app().await;
    let regions: Value = app.get("/api/v2/infrastructure/regions", &app.key).await.json().await.expect("json");
    assert_eq!(regions["data"][0]["id"], "local");
    assert_eq!(regions["data"][0]["database_backend"], app.state.store.backend().name());
    let posture: Value = app.get("/api/v2/infrastructure/posture", &app.key).await.json().await.expect("json");
    assert_eq!(posture["production_access"]["enabled"], false);
    assert_eq!(posture["api_keys"]["active"], 1);
    assert_eq!(posture["api_keys"]["without_expiry"], 1);
    assert_eq!(posture["secrets"]["credential_storage"], "hmac-sha256");
    assert_eq!(posture["operators"]["second_factor_coverage"], Value::Null);
    let entitlements: Value =
        app.get("/api/v2/infrastructure/data-entitlements", &app.key).await.json().await.expect("json");
    let market = entitlements["data"]
        .as_array()
        .expect("list")
        .iter()
        .find(|e| e["scope"] == "data:market:read")
        .expect("market");
    assert_eq!(market["workspace_entitled"], true);
    assert_eq!(market["granted_to_caller"], true);
}

#[tokio::test]
async fn the_credit_balance_is_derived_from_the_ledger() {
    let app = spawn_app().await;
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&tenant, 250, "test grant").await.expect("grant");
    app.admin().grant_credits(&tenant, 50, "test grant").await.expect("grant");
    let body: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(body["granted"], 300);
    assert_eq!(body["consumed"], 0);
    assert_eq!(body["balance"], 300);
    assert_eq!(body["ledger_entries"], 2);
}

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = spawn_app().await;
    assert_eq!(app.http.get(app.url("/healthz")).send().await.expect("request").status(), 200);
    assert_eq!(app.http.get(app.url("/readyz")).send().await.expect("request").status(), 200);
    app.get("/api/v2/workspace", &app.key).await;
    let metrics = app.http.get(app.url("/metrics")).send().await.expect("request").text().await.expect("text");
    assert!(metrics.contains("fiscus_http_requests_total{operation=\"get_workspace\",status=\"200\"} 1"), "{metrics}");
    assert!(
        metrics.lines().any(|l| l.starts_with("fiscus_http_request_duration_seconds_bucket{")
            && l.contains("operation=\"get_workspace\"")),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_request_id_is_echoed_or_minted() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/healthz")).header("Request-Id", "client-123").send().await.expect("request");
    assert_eq!(response.headers().get("request-id").and_then(|v| v.to_str().ok()), Some("client-123"));
    let response = app.http.get(app.url("/healthz")).send().await.expect("request");
    assert!(response.headers().get("request-id").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("req_")));
    let _ = evidence_body;
}
