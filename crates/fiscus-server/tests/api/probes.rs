//! The probes that found holes in the base, kept as tests: I-JSON bodies and U+0000 at every edge, HEAD,
//! metrics label cardinality, unknown query parameters, scope challenges, and minting tokens for quota.

use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_domain::credentials::Environment;
use serde_json::{Value, json};

async fn document(app: &TestApp) -> Value {
    app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json")
}

/// Every documented POST of the API that takes a JSON body, with its path made concrete.
async fn json_posts(app: &TestApp) -> Vec<String> {
    let doc = document(app).await;
    let mut posts = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let Some(post) = item.get("post") else { continue };
        if post["requestBody"]["content"].get("application/json").is_none() {
            continue;
        }
        // Integer path ids (a portfolio, a universe, a dataset) take a well-formed one, so the body is what is judged.
        posts.push(
            path.replace("{uid}", "act_0000000000000000000000000")
                .replace("{portfolio}", "1")
                .replace("{universe}", "1")
                .replace("{dataset}", "4")
                .replace("{requestUid}", "lrr_0000000000000000000000000"),
        );
    }
    assert!(posts.len() >= 8, "the document lists the JSON POSTs: {posts:?}");
    posts
}

async fn audit_events(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) FROM audit_events").await
}

async fn raw_post(app: &TestApp, path: &str, body: &str) -> reqwest::Response {
    app.http
        .post(app.url(path))
        .bearer_auth(&app.key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn duplicate_member_names_are_refused_on_every_documented_post() {
    let app = spawn_app().await;
    let before = audit_events(&app).await;
    for path in json_posts(&app).await {
        let body = problem(raw_post(&app, &path, r#"{"title":"a","title":"b"}"#).await, 400, "malformed_json").await;
        assert!(body["detail"].as_str().unwrap_or("").contains("duplicate member `title`"), "{path}: {body}");
    }
    // The case that sealed another amount than the one a reader saw.
    let mut proposal = fiscus_apptest::actions::proposal().to_string();
    proposal.insert_str(1, r#""amount_minor":99999999,"#);
    problem(raw_post(&app, "/api/v2/actions", &proposal).await, 400, "malformed_json").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
    assert_eq!(audit_events(&app).await, before, "nothing was recorded");
}

#[tokio::test]
async fn nul_characters_are_refused_on_every_documented_post() {
    let app = spawn_app().await;
    let before = audit_events(&app).await;
    for path in json_posts(&app).await {
        for raw in [r#"{"title":"a\u0000b"}"#, r#"{"metadata":{"k\u0000":1}}"#] {
            let response = raw_post(&app, &path, raw).await;
            if path.ends_with("/mcp") || path.contains("a2a") {
                // JSON-RPC endpoints answer with the JSON-RPC error -32602, in a 400 (the schema states the rule).
                assert_eq!(response.status(), 400, "{path}");
                let body: Value = response.json().await.expect("json");
                assert_eq!(body["error"]["code"], -32602, "{path}: {body}");
                assert!(body["error"]["message"].as_str().unwrap_or("").contains("U+0000"), "{path}: {body}");
                continue;
            }
            let body = problem(response, 422, "invalid_request").await;
            assert!(body["errors"][0]["message"].as_str().unwrap_or("").contains("U+0000"), "{path}: {body}");
        }
    }
    let mut proposal = fiscus_apptest::actions::proposal();
    proposal["reference"] = json!("INV\u{0}1");
    let body = problem(app.post_json("/api/v2/actions", &app.key, &proposal, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "reference");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 0);
    assert_eq!(audit_events(&app).await, before, "nothing was recorded");
}

#[tokio::test]
async fn nul_in_paths_queries_forms_and_basic_credentials_is_refused_on_both_backends() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    problem(app.get("/api/v2/actions/act_%00", &app.key).await, 400, "malformed_request").await;
    problem(app.get("/api/v2/actions?control_state=%00", &app.key).await, 400, "malformed_request").await;
    // Even without a credential: the token endpoint must not reach the database with it.
    let token = app.url("/api/v2/oauth/token");
    for form in [
        "grant_type=client_credentials&client_id=%00&client_secret=x".to_string(),
        format!("grant_type=client_credentials&client_id={}&client_secret=a%00b", client.id),
        "grant_type=client_credentials%00".to_string(),
    ] {
        let response = app
            .http
            .post(&token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.clone())
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 400, "{form}");
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["error"], "invalid_request", "{form}");
    }
    let response = app
        .http
        .post(&token)
        .basic_auth(format!("{}%00", client.id), Some(&client.secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 400);
    assert_eq!(app.count("SELECT COUNT(*) FROM oauth_tokens").await, 0);
}

#[tokio::test]
async fn head_answers_as_get_would_without_a_body() {
    let app = spawn_app().await;
    let (_, narrow) = app.new_app(Environment::Sandbox, "trust:read", None).await;
    for (key, status) in [(None, 401), (Some(narrow.as_str()), 403), (Some(app.key.as_str()), 200)] {
        for path in ["/api/v2/workspace", "/api/v2/actions", "/api/v2/infrastructure/posture"] {
            let mut req = app.http.head(app.url(path));
            if let Some(key) = key {
                req = req.bearer_auth(key);
            }
            let response = req.send().await.expect("request");
            assert_eq!(response.status(), status, "HEAD {path}");
            assert!(response.headers().contains_key("request-id"));
            assert!(response.bytes().await.expect("body").is_empty(), "HEAD has no body");
        }
    }
}

#[tokio::test]
async fn unknown_methods_and_paths_never_create_metrics_series() {
    let app = spawn_app().await;
    let series = |text: &str| text.lines().filter(|l| !l.starts_with('#')).count();
    let send_garbage = |round: usize| {
        let app = &app;
        async move {
            for i in 0..10 {
                for path in ["/api/v2/workspace", &format!("/nowhere/{round}/{i}")] {
                    let method = reqwest::Method::from_bytes(format!("XYZZY{round}{i}").as_bytes()).expect("method");
                    let status = app.http.request(method, app.url(path)).send().await.expect("request").status();
                    assert!(status == 404 || status == 405, "{status}");
                }
                app.http.get(app.url(&format!("/nowhere/{round}/{i}"))).send().await.expect("request");
            }
        }
    };
    let metrics =
        || async { app.http.get(app.url("/metrics")).send().await.expect("request").text().await.expect("text") };
    // The first round and read create the fixed series (including `/metrics`'s own); later rounds add none.
    send_garbage(1).await;
    metrics().await;
    send_garbage(2).await;
    let first = metrics().await;
    send_garbage(3).await;
    let second = metrics().await;
    assert!(!second.contains("XYZZY") && !second.contains("nowhere"), "raw methods or paths leak into labels");
    assert_eq!(series(&first), series(&second), "new garbage made new series");
}

#[tokio::test]
async fn unknown_or_repeated_query_parameters_are_refused_everywhere_naming_the_field() {
    let app = spawn_app().await;
    for (path, field) in [
        ("/api/v2/workspace?colour=blue", "colour"),
        ("/api/v2/infrastructure/usage?bogus=1", "bogus"),
        ("/api/v2/infrastructure/usage?since=2026-01-01&since=2026-02-01", "since"),
        ("/api/v2/actions?limit=5&limit=6", "limit"),
        ("/api/v2/actions/autonomy/assessment-evidence?colour=blue", "colour"),
    ] {
        let body = problem(app.get(path, &app.key).await, 422, "invalid_parameter").await;
        assert_eq!(body["errors"][0]["field"], field, "{path}: {body}");
        assert!(!body.to_string().contains("deserialize"), "the parser's text leaks: {body}");
    }
    assert_eq!(app.get("/api/v2/infrastructure/usage?since=2026-01-01", &app.key).await.status(), 200);
}

#[tokio::test]
async fn an_integer_query_parameter_reads_as_json_schema_reads_it() {
    // JSON Schema's `integer` is any number with a zero fractional part: `2.0` is 2 (as generated clients and
    // testers send it), while `2.5` is refused and string parameters are left as they are.
    let app = spawn_app().await;
    app.load_demo().await;
    let whole = app.get("/api/v2/investment/risk?portfolio_id=1.0", &app.key).await;
    let plain = app.get("/api/v2/investment/risk?portfolio_id=1", &app.key).await;
    assert_eq!((whole.status(), plain.status()), (reqwest::StatusCode::OK, reqwest::StatusCode::OK));
    let (whole, plain): (Value, Value) = (whole.json().await.expect("json"), plain.json().await.expect("json"));
    assert_eq!(whole["portfolio_id"], plain["portfolio_id"]);
    let listed: Value = app.get("/api/v2/actions?limit=2.00", &app.key).await.json().await.expect("json");
    assert!(listed["data"].is_array(), "{listed}");
    problem(app.get("/api/v2/investment/risk?portfolio_id=1.5", &app.key).await, 422, "invalid_parameter").await;
}

#[tokio::test]
async fn a_missing_scope_gets_an_insufficient_scope_challenge() {
    let app = spawn_app().await;
    let (_, narrow) = app.new_app(Environment::Sandbox, "workspace:read", None).await;
    let response = app.get("/api/v2/infrastructure/posture", &narrow).await;
    let challenge = response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"infrastructure:read\""), "{challenge}");
    problem(response, 403, "scope_missing").await;
}

async fn mint(app: &TestApp, client_id: &str, secret: &str) -> reqwest::Response {
    app.http
        .post(app.url("/api/v2/oauth/token"))
        .basic_auth(client_id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn minting_tokens_buys_no_quota_beyond_the_application_s() {
    let app = spawn_app().await;
    let (app_id, key) = app.new_app(Environment::Sandbox, "workspace:read", Some("tiny")).await;
    let client = app.admin().create_oauth_client(&app_id).await.expect("client");
    // The tiny class allows 3 requests a minute to the application, however many credentials it holds.
    // Windows are fixed minutes: start well inside one, so the five requests below share it.
    let second = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() % 60;
    if second > 50 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - second)).await;
    }
    let mut allowed = 0;
    for _ in 0..3 {
        let token: Value = mint(&app, &client.id, &client.secret).await.json().await.expect("json");
        let access = token["access_token"].as_str().expect("token").to_string();
        if app.get("/api/v2/workspace", &access).await.status() == 200 {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 3);
    problem(app.get("/api/v2/workspace", &key).await, 429, "rate_limited").await;
    let fresh: Value = mint(&app, &client.id, &client.secret).await.json().await.expect("json");
    let response = app.get("/api/v2/workspace", fresh["access_token"].as_str().expect("token")).await;
    problem(response, 429, "rate_limited").await;
}

#[tokio::test]
async fn the_token_endpoint_is_throttled_per_client_failed_attempts_included() {
    let app = spawn_app_with(|s| s.token_requests_per_client.quota = 5).await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    for _ in 0..4 {
        assert_eq!(mint(&app, &client.id, "fcs_wrong").await.status(), 401);
    }
    assert_eq!(mint(&app, &client.id, &client.secret).await.status(), 200);
    let refused = mint(&app, &client.id, &client.secret).await;
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=60).contains(&retry_after));
    assert_eq!(refused.json::<Value>().await.expect("json")["error"], "temporarily_unavailable");
    assert_eq!(app.count("SELECT COUNT(*) FROM oauth_tokens").await, 1, "only the one allowed mint wrote a token");
}

#[tokio::test]
async fn the_token_endpoint_is_throttled_per_address_whatever_client_it_names() {
    let app = spawn_app_with(|s| s.token_requests_per_address.quota = 6).await;
    for i in 0..6 {
        assert_eq!(mint(&app, &format!("oac_guess{i}"), "fcs_wrong").await.status(), 401);
    }
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    assert_eq!(mint(&app, &client.id, &client.secret).await.status(), 429);
}
