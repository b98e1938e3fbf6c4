//! The platform's own reads: usage per credential and operation, infrastructure, the credit balance from its
//! ledger, health, readiness while a node drains, metrics, request ids, the catalogue and its ledger, and
//! deprecated operations announced on every response.

use fiscus_apptest::{EVIDENCE, evidence_body, spawn_app, spawn_app_with};
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
async fn a_stopping_node_answers_not_ready_while_it_still_serves_then_stops_accepting() {
    let mut app = spawn_app_with(|s| s.shutdown_drain_seconds = 2).await;
    assert_eq!(app.http.get(app.url("/readyz")).send().await.expect("request").status(), 200);
    app.stop();
    // Draining: a balancer's health check sees 503; requests still in rotation are answered.
    let mut ready = app.http.get(app.url("/readyz")).send().await.expect("still accepting");
    while ready.status() == 200 {
        ready = app.http.get(app.url("/readyz")).send().await.expect("still accepting");
    }
    assert_eq!(ready.status(), 503);
    let problem: Value = ready.json().await.expect("json");
    assert!(problem["detail"].as_str().is_some_and(|d| d.contains("stopping")), "{problem}");
    assert_eq!(app.get("/api/v2/workspace", &app.key).await.status(), 200);
    // After the drain the listener is closed: a new connection (no pooled one) is refused.
    let fresh = || reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let refused = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while fresh().get(app.url("/healthz")).send().await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(refused.is_ok(), "the node stopped accepting");
}

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = spawn_app().await;
    assert_eq!(app.http.get(app.url("/healthz")).send().await.expect("request").status(), 200);
    let ready = app.http.get(app.url("/readyz")).send().await.expect("request");
    assert_eq!(ready.status(), 200);
    let ready: serde_json::Value = ready.json().await.expect("json");
    assert_eq!(ready["status"], "ready");
    assert!(["in_use", "not_in_use"].contains(&ready["credential_cache"].as_str().unwrap_or("")), "{ready}");
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

#[tokio::test]
async fn the_catalogue_and_its_ledger_are_served_with_the_cli_report() {
    let app = spawn_app().await;
    let catalogue: Value = app.get("/api/v2/catalogue", &app.key).await.json().await.expect("json");
    let report = fiscus_platform::catalogue_check::check(&fiscus_server::app::openapi_document());
    let counts = &catalogue["counts"];
    assert_eq!(counts["operations"], report.operations);
    assert_eq!((counts["seed_operations"].as_u64(), counts["scopes"].as_u64()), (Some(114), Some(75)));
    assert_eq!(counts["added_operations"], report.added_operations);
    assert_eq!((counts["served"].as_u64(), counts["mismatches"].as_u64()), (Some(report.operations as u64), Some(0)));
    assert_eq!(counts["deprecated"], 0);
    let ops = catalogue["data"].as_array().expect("operations");
    assert_eq!(ops.len(), report.operations);
    let head = ops.iter().find(|o| o["operation_id"] == "get_trust_audit_head").expect("listed");
    assert_eq!(
        (head["scope"].as_str(), head["source"].as_str(), head["status"].as_str(), head["path"].as_str()),
        (Some("trust:read"), Some("added"), Some("published"), Some("/api/v2/trust/audit-head"))
    );
    let ledger: Value = app.get("/api/v2/catalogue/ledger", &app.key).await.json().await.expect("json");
    let entries = ledger["data"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "the seed's publication and Fiscus's additions; nothing invented");
    assert_eq!(entries[0]["operations"].as_array().map(Vec::len), Some(114));
    // No deprecation, no header.
    let plain = app.get("/api/v2/trust/audit-head", &app.key).await;
    assert!(plain.headers().get("deprecation").is_none() && plain.headers().get("sunset").is_none());
    // The catalogue needs its scope.
    let (_, narrow) = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "workspace:read", None).await;
    assert_eq!(app.get("/api/v2/catalogue", &narrow).await.status(), 403);
}

#[tokio::test]
async fn a_deprecated_operation_announces_it_on_every_response_and_still_works() {
    let app = fiscus_apptest::spawn_app_with(|s| {
        s.deprecations = vec![fiscus_kernel::change_ledger::Deprecation {
            operation_id: "get_trust_audit_head".into(),
            deprecated_at: "2026-12-01T00:00:00Z".into(),
            sunset_at: Some("2027-06-30T23:59:59Z".into()),
            successor: Some("get_workspace".into()),
            reason: "Superseded by the signed checkpoints of the transparency log".into(),
        }]
    })
    .await;
    let response = app.get("/api/v2/trust/audit-head", &app.key).await;
    assert_eq!(response.status(), 200, "a deprecation changes nothing the operation does");
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    assert_eq!(header("deprecation").as_deref(), Some("@1796083200"));
    assert_eq!(header("sunset").as_deref(), Some("Wed, 30 Jun 2027 23:59:59 GMT"));
    let link = header("link").expect("link");
    assert!(link.ends_with("/api/v2/catalogue/ledger>; rel=\"deprecation\"; type=\"application/json\""), "{link}");
    // Refusals of the operation carry it too; other operations do not.
    let (_, narrow) = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "workspace:read", None).await;
    let refused = app.get("/api/v2/trust/audit-head", &narrow).await;
    assert_eq!(refused.status(), 403);
    assert!(refused.headers().get("deprecation").is_some());
    assert!(app.get("/api/v2/workspace", &app.key).await.headers().get("deprecation").is_none());

    let ledger: Value = app.get("/api/v2/catalogue/ledger", &app.key).await.json().await.expect("json");
    let entry = &ledger["data"][2];
    assert_eq!((entry["change"].as_str(), entry["source"].as_str()), (Some("deprecated"), Some("deployment")));
    assert_eq!(entry["operations"], serde_json::json!(["get_trust_audit_head"]));
    assert_eq!(entry["successor"], "get_workspace");
    assert!(entry["entry_hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    let catalogue: Value = app.get("/api/v2/catalogue", &app.key).await.json().await.expect("json");
    assert_eq!(catalogue["counts"]["deprecated"], 1);
    let head = catalogue["data"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|o| o["operation_id"] == "get_trust_audit_head")
        .cloned();
    let head = head.expect("listed");
    assert_eq!(head["status"], "deprecated");
    assert_eq!(head["deprecation"]["sunset_at"], "2027-06-30T23:59:59Z");
}
