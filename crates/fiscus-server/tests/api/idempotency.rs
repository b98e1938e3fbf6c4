//! `Idempotency-Key` (the IETF draft): a replay returns the first answer with no second effect, another body
//! under the same key is a conflict, keys belong to one application, in-flight and stale reservations, and
//! fifty racing requests with one key make exactly one effect.

use fiscus_apptest::{EVIDENCE, evidence_body, problem, spawn_app};
use serde_json::Value;

/// The body fingerprint the server computes: SHA-256 of the bytes reqwest sends for `.json(body)`.
fn fingerprint_of(body: &Value) -> String {
    use sha2::Digest;
    fiscus_domain::evidence::hex(&sha2::Sha256::digest(serde_json::to_vec(body).expect("json")))
}

async fn evidence_count(app: &fiscus_apptest::TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM autonomy_evidence").await
}

#[tokio::test]
async fn a_replay_returns_the_first_response_and_makes_no_second_effect() {
    let app = spawn_app().await;
    let body = evidence_body("replayed");
    let first = app.post_json(EVIDENCE, &app.key, &body, Some("key-1")).await;
    assert_eq!(first.status(), 201);
    assert!(!first.headers().contains_key("idempotent-replayed"));
    let first: Value = first.json().await.expect("json");
    let second = app.post_json(EVIDENCE, &app.key, &body, Some("key-1")).await;
    assert_eq!(second.status(), 201);
    assert_eq!(second.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));
    let second: Value = second.json().await.expect("json");
    assert_eq!(first, second);
    assert_eq!(evidence_count(&app).await, 1);
    // Without a key, each POST is its own effect.
    app.post_json(EVIDENCE, &app.key, &body, None).await;
    assert_eq!(evidence_count(&app).await, 2);
}

#[tokio::test]
async fn the_same_key_with_another_body_is_a_conflict_never_to_retry() {
    let app = spawn_app().await;
    assert_eq!(app.post_json(EVIDENCE, &app.key, &evidence_body("a"), Some("k")).await.status(), 201);
    let reused = app.post_json(EVIDENCE, &app.key, &evidence_body("b"), Some("k")).await;
    // 409 (the body is valid; it conflicts with the key's record), with no Retry-After: unlike
    // `idempotency_key_in_use`, waiting changes nothing.
    assert!(reused.headers().get("retry-after").is_none());
    problem(reused, 409, "idempotency_key_reused").await;
    assert_eq!(evidence_count(&app).await, 1);
}

#[tokio::test]
async fn keys_belong_to_one_application() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "actions:create", None).await;
    let body = evidence_body("same key, two apps");
    assert_eq!(app.post_json(EVIDENCE, &app.key, &body, Some("shared")).await.status(), 201);
    let other = app.post_json(EVIDENCE, &other_key, &body, Some("shared")).await;
    assert_eq!(other.status(), 201);
    assert!(!other.headers().contains_key("idempotent-replayed"));
    assert_eq!(evidence_count(&app).await, 2);
}

#[tokio::test]
async fn a_key_still_in_flight_is_409_with_retry_after() {
    let app = spawn_app().await;
    // A request holding the key that has not finished: its reservation exists, its effect does not.
    let now = fiscus_domain::clock::now_micros();
    let fingerprint = fingerprint_of(&evidence_body("x"));
    app.execute(&format!(
        "INSERT INTO idempotency_keys (workspace_id, application_id, idem_key, method, path, fingerprint, state, lock_token, locked_at, created_at, expires_at) \
         VALUES ('{}', '{}', 'busy', 'POST', '{EVIDENCE}', '{fingerprint}', 'in_flight', 'other', {now}, {now}, {})",
        app.workspace_id,
        app.app_id,
        now + 86_400_000_000i64
    ))
    .await;
    let response = app.post_json(EVIDENCE, &app.key, &evidence_body("x"), Some("busy")).await;
    assert_eq!(response.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    problem(response, 409, "idempotency_key_in_use").await;
}

#[tokio::test]
async fn a_stale_reservation_is_taken_over_by_a_retry() {
    let app = spawn_app().await;
    let long_ago = fiscus_domain::clock::now_micros() - 3_600_000_000;
    let body = evidence_body("after a crash");
    let fingerprint = fingerprint_of(&body);
    app.execute(&format!(
        "INSERT INTO idempotency_keys (workspace_id, application_id, idem_key, method, path, fingerprint, state, lock_token, locked_at, created_at, expires_at) \
         VALUES ('{}', '{}', 'crashed', 'POST', '{EVIDENCE}', '{fingerprint}', 'in_flight', 'dead', {long_ago}, {long_ago}, {})",
        app.workspace_id,
        app.app_id,
        long_ago + 86_400_000_000i64
    ))
    .await;
    assert_eq!(app.post_json(EVIDENCE, &app.key, &body, Some("crashed")).await.status(), 201);
    assert_eq!(evidence_count(&app).await, 1);
}

#[tokio::test]
async fn an_invalid_idempotency_key_is_refused() {
    let app = spawn_app().await;
    let long = "k".repeat(256);
    problem(app.post_json(EVIDENCE, &app.key, &evidence_body("x"), Some(&long)).await, 422, "invalid_idempotency_key")
        .await;
    assert_eq!(evidence_count(&app).await, 0);
}

#[tokio::test]
async fn a_refused_request_is_stored_and_replayed_too() {
    let app = spawn_app().await;
    let bad = serde_json::json!({ "domain": "security" });
    let first = app.post_json(EVIDENCE, &app.key, &bad, Some("bad")).await;
    assert_eq!(first.status(), 422);
    let second = app.post_json(EVIDENCE, &app.key, &bad, Some("bad")).await;
    assert_eq!(second.status(), 422);
    assert_eq!(second.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_identical_keyed_requests_race_to_exactly_one_effect() {
    let app = spawn_app().await;
    let body = evidence_body("raced");
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let http = app.http.clone();
        let url = app.url(EVIDENCE);
        let key = app.key.clone();
        let body = body.clone();
        tasks.spawn(async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .header("Idempotency-Key", "race")
                .json(&body)
                .send()
                .await
                .expect("request");
            (r.status().as_u16(), r.headers().contains_key("idempotent-replayed"))
        });
    }
    let mut fresh = 0;
    while let Some(result) = tasks.join_next().await {
        let (status, replayed) = result.expect("task");
        assert!(status == 201 || status == 409, "status {status}");
        if status == 201 && !replayed {
            fresh += 1;
        }
    }
    assert_eq!(fresh, 1, "exactly one request made the effect");
    assert_eq!(evidence_count(&app).await, 1);
}
