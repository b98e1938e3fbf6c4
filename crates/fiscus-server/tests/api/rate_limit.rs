//! Rate limits by service class: `RateLimit` fields on every response, 429 with `Retry-After` past the
//! quota, and the enforced limits read back.

use fiscus_apptest::{problem, spawn_app};
use fiscus_domain::credentials::Environment;

#[tokio::test]
async fn every_response_carries_the_ratelimit_fields() {
    let app = spawn_app().await;
    let response = app.get("/api/v2/workspace", &app.key).await;
    let policy = response.headers().get("ratelimit-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let current = response.headers().get("ratelimit").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert_eq!(policy, "\"standard\";q=6000;w=60");
    assert!(current.starts_with("\"standard\";r=5999;t="), "{current}");
}

#[tokio::test]
async fn past_the_quota_a_credential_gets_429_with_retry_after() {
    let app = spawn_app().await;
    let (_, key) = app.new_app(Environment::Sandbox, "workspace:read", Some("tiny")).await;
    for remaining in [2, 1, 0] {
        let response = app.get("/api/v2/workspace", &key).await;
        assert_eq!(response.status(), 200);
        let current = response.headers().get("ratelimit").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        assert!(current.starts_with(&format!("\"tiny\";r={remaining};")), "{current}");
    }
    let refused = app.get("/api/v2/workspace", &key).await;
    let retry_after: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry_after));
    assert!(refused.headers().contains_key("ratelimit-policy"));
    problem(refused, 429, "rate_limited").await;
    // Another credential is counted apart.
    assert_eq!(app.get("/api/v2/workspace", &app.key).await.status(), 200);
}

#[tokio::test]
async fn the_service_classes_read_reports_the_enforced_limits() {
    let app = spawn_app().await;
    let body: serde_json::Value =
        app.get("/api/v2/infrastructure/service-classes", &app.key).await.json().await.expect("json");
    let classes = body["data"].as_array().expect("list");
    let tiny = classes.iter().find(|c| c["name"] == "tiny").expect("tiny class");
    assert_eq!(tiny["quota"], 3);
    let current: Vec<&serde_json::Value> = classes.iter().filter(|c| c["current"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["name"], "standard");
}
