//! The common contract under bad input: problem+json 4xx, nothing changed, never a 5xx.

use fiscus_apptest::{EVIDENCE, evidence_body, problem, spawn_app, spawn_app_with};
use serde_json::json;

async fn unchanged(app: &fiscus_apptest::TestApp, before: i64) {
    assert_eq!(app.count("SELECT COUNT(*) FROM autonomy_evidence").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_events").await, before, "no audit event for a refused request");
}

#[tokio::test]
async fn malformed_json_is_400() {
    let app = spawn_app().await;
    let before = app.count("SELECT COUNT(*) FROM audit_events").await;
    for raw in ["{", "{\"domain\": }", "nul", "[1,2", "\"\\u12\""] {
        let response = app
            .http
            .post(app.url(EVIDENCE))
            .bearer_auth(&app.key)
            .header("content-type", "application/json")
            .body(raw)
            .send()
            .await
            .expect("request");
        problem(response, 400, "malformed_json").await;
    }
    unchanged(&app, before).await;
}

#[tokio::test]
async fn wrong_types_and_unknown_fields_are_422_naming_the_field() {
    let app = spawn_app().await;
    let before = app.count("SELECT COUNT(*) FROM audit_events").await;
    let mut wrong_type = evidence_body("x");
    wrong_type["title"] = json!(42);
    let body = problem(app.post_json(EVIDENCE, &app.key, &wrong_type, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "title");
    let mut unknown = evidence_body("x");
    unknown["approved"] = json!(true);
    let body = problem(app.post_json(EVIDENCE, &app.key, &unknown, None).await, 422, "invalid_request").await;
    assert!(body["errors"][0]["message"].as_str().unwrap_or("").contains("approved"), "{body}");
    let mut bad_domain = evidence_body("x");
    bad_domain["domain"] = json!("astrology");
    let body = problem(app.post_json(EVIDENCE, &app.key, &bad_domain, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "domain");
    let body = problem(app.post_json(EVIDENCE, &app.key, &json!([1, 2]), None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "body");
    let mut missing_hash = evidence_body("x");
    missing_hash["source_hash"] = json!("not-a-hash");
    let body = problem(app.post_json(EVIDENCE, &app.key, &missing_hash, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "source_hash");
    unchanged(&app, before).await;
}

#[tokio::test]
async fn a_missing_body_or_wrong_content_type_is_refused() {
    let app = spawn_app().await;
    let before = app.count("SELECT COUNT(*) FROM audit_events").await;
    let response = app.http.post(app.url(EVIDENCE)).bearer_auth(&app.key).send().await.expect("request");
    problem(response, 400, "malformed_json").await;
    let response = app
        .http
        .post(app.url(EVIDENCE))
        .bearer_auth(&app.key)
        .header("content-type", "text/plain")
        .body(serde_json::to_string(&evidence_body("x")).expect("json"))
        .send()
        .await
        .expect("request");
    problem(response, 415, "unsupported_media_type").await;
    unchanged(&app, before).await;
}

#[tokio::test]
async fn an_oversize_body_is_413() {
    let app = spawn_app_with(|s| s.body_limit_bytes = 4096).await;
    let before = app.count("SELECT COUNT(*) FROM audit_events").await;
    let mut body = evidence_body("big");
    body["summary"] = json!("x".repeat(10_000));
    problem(app.post_json(EVIDENCE, &app.key, &body, None).await, 413, "payload_too_large").await;
    // Without a Content-Length (chunked), the limit holds when the body is read.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        vec![Ok(serde_json::to_vec(&body).expect("json")[..3000].to_vec()), Ok(vec![b' '; 3000])];
    let response = app
        .http
        .post(app.url(EVIDENCE))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_stream(chunks)))
        .send()
        .await
        .expect("request");
    problem(response, 413, "payload_too_large").await;
    unchanged(&app, before).await;
}

fn futures_stream(
    chunks: Vec<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    tokio_stream::iter(chunks)
}

#[tokio::test]
async fn bad_pagination_values_are_422() {
    let app = spawn_app().await;
    for query in [
        "limit=0",
        "limit=101",
        "limit=abc",
        "limit=-5",
        "after_id=%20x",
        "limit=1.5",
        "colour=blue",
        "domain=astrology",
    ] {
        let response = app.get(&format!("{EVIDENCE}?{query}"), &app.key).await;
        problem(response, 422, "invalid_parameter").await;
    }
    let response = app.get("/api/v2/infrastructure/usage?since=yesterday", &app.key).await;
    problem(response, 422, "invalid_parameter").await;
}

#[tokio::test]
async fn unknown_paths_and_methods_are_problems() {
    let app = spawn_app().await;
    problem(app.get("/api/v2/nope", &app.key).await, 404, "not_found").await;
    let response = app.http.delete(app.url("/api/v2/workspace")).bearer_auth(&app.key).send().await.expect("request");
    problem(response, 405, "method_not_allowed").await;
}

/// Every documented operation, hit with no credential, a garbage one, and a valid one with garbage input,
/// answers below 500 and in problem+json when it refuses.
#[tokio::test]
async fn no_documented_operation_answers_5xx_to_bad_input() {
    let app = spawn_app().await;
    let doc: serde_json::Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    for (path, item) in paths {
        let concrete = path.replace("{uid}", "zz_not_an_id").replace("{key}", "nope");
        for method in ["get", "post", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            for (auth, body) in [
                (None, None),
                (Some("Bearer garbage"), None),
                (Some("valid"), Some("{\"x\":")),
                (Some("valid"), Some("[\"\\ud800\", 1e999]")),
                (Some("valid"), Some("{}")),
            ] {
                let mut req = app.http.request(
                    method.to_uppercase().parse().expect("method"),
                    app.url(&format!("{concrete}?limit=oops")),
                );
                match auth {
                    Some("valid") => req = req.bearer_auth(&app.key),
                    Some(h) => req = req.header("authorization", h),
                    None => {}
                }
                if let Some(b) = body {
                    req = req.header("content-type", "application/json").body(b.to_string());
                }
                let response = req.send().await.expect("request");
                let status = response.status().as_u16();
                assert!(status < 500, "{method} {path} answered {status}");
                if status >= 400 {
                    let ct =
                        response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
                    assert!(
                        ct == "application/problem+json" || (path.contains("/oauth/") && ct == "application/json"),
                        "{method} {path}: {ct}"
                    );
                }
            }
        }
    }
}
