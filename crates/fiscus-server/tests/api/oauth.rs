//! OAuth 2.0 client credentials (RFC 6749, 7009, 7662, 8414): tokens by Basic and by form, scopes
//! intersected with the application's, RFC errors, revocation, introspection, secret rotation, expiry and
//! the metadata document.

use fiscus_apptest::{problem, spawn_app, spawn_app_with};
use serde_json::Value;

async fn token(
    app: &fiscus_apptest::TestApp,
    client_id: &str,
    secret: &str,
    scope: Option<&str>,
    basic: bool,
) -> reqwest::Response {
    let mut form = vec![("grant_type", "client_credentials".to_string())];
    if let Some(s) = scope {
        form.push(("scope", s.to_string()));
    }
    let mut req = app.http.post(app.url("/api/v2/oauth/token"));
    if basic {
        req = req.basic_auth(client_id, Some(secret));
    } else {
        form.push(("client_id", client_id.to_string()));
        form.push(("client_secret", secret.to_string()));
    }
    req.form(&form).send().await.expect("request")
}

#[tokio::test]
async fn client_credentials_by_basic_and_by_form_give_working_tokens() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    for basic in [true, false] {
        let response = token(&app, &client.id, &client.secret, Some("workspace:read trust:read"), basic).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers().get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(body["expires_in"], 3600);
        assert_eq!(body["scope"], "trust:read workspace:read");
        let access = body["access_token"].as_str().expect("token");
        let ws: Value = app.get("/api/v2/workspace", access).await.json().await.expect("json");
        assert_eq!(ws["caller"]["credential_kind"], "access_token");
        // The token carries only the requested scopes.
        let refused = problem(app.get("/api/v2/ai-credits/balance", access).await, 403, "scope_missing").await;
        assert_eq!(refused["required_scope"], "ai:credits:read");
    }
}

#[tokio::test]
async fn requested_scopes_are_intersected_with_the_application_entitlement() {
    let app = spawn_app().await;
    let (other, _) = app.new_app(fiscus_domain::credentials::Environment::Sandbox, "workspace:read", None).await;
    let client = app.admin().create_oauth_client(&other).await.expect("client");
    let body: Value = token(&app, &client.id, &client.secret, Some("workspace:read trust:read"), true)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(body["scope"], "workspace:read");
    let body: Value = token(&app, &client.id, &client.secret, None, true).await.json().await.expect("json");
    assert_eq!(body["scope"], "workspace:read", "no scope parameter grants the whole entitlement");
    let response = token(&app, &client.id, &client.secret, Some("trust:read"), true).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"], "invalid_scope");
    let body: Value =
        token(&app, &client.id, &client.secret, Some("no:such:scope"), true).await.json().await.expect("json");
    assert_eq!(body["error"], "invalid_scope");
}

#[tokio::test]
async fn token_endpoint_errors_follow_rfc6749() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let wrong = token(&app, &client.id, "fcs_wrong", None, true).await;
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().contains_key("www-authenticate"));
    let body: Value = wrong.json().await.expect("json");
    assert_eq!(body["error"], "invalid_client");
    let response = app
        .http
        .post(app.url("/api/v2/oauth/token"))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[("grant_type", "password")])
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 400);
    assert_eq!(response.json::<Value>().await.expect("json")["error"], "unsupported_grant_type");
    let response = app
        .http
        .post(app.url("/api/v2/oauth/token"))
        .basic_auth(&client.id, Some(&client.secret))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("request");
    assert_eq!(response.json::<Value>().await.expect("json")["error"], "invalid_request");
    let response = app
        .http
        .post(app.url("/api/v2/oauth/token"))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(response.json::<Value>().await.expect("json")["error"], "invalid_request", "two authentication methods");
}

#[tokio::test]
async fn a_revoked_token_is_refused_and_introspects_inactive() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let body: Value = token(&app, &client.id, &client.secret, None, true).await.json().await.expect("json");
    let access = body["access_token"].as_str().expect("token").to_string();
    let introspect = |t: String| {
        let app = &app;
        let client = &client;
        async move {
            app.http
                .post(app.url("/api/v2/oauth/introspect"))
                .basic_auth(&client.id, Some(&client.secret))
                .form(&[("token", t)])
                .send()
                .await
                .expect("request")
                .json::<Value>()
                .await
                .expect("json")
        }
    };
    let active = introspect(access.clone()).await;
    assert_eq!(active["active"], true);
    assert_eq!(active["client_id"], client.id.as_str());
    assert_eq!(active["sub"], app.app_id.as_str());
    let revoked = app
        .http
        .post(app.url("/api/v2/oauth/revoke"))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[("token", access.as_str()), ("token_type_hint", "access_token")])
        .send()
        .await
        .expect("request");
    assert_eq!(revoked.status(), 200);
    problem(app.get("/api/v2/workspace", &access).await, 401, "invalid_credential").await;
    assert_eq!(introspect(access.clone()).await["active"], false);
    assert_eq!(introspect("garbage".into()).await, serde_json::json!({ "active": false }));
    // The API key of the same application is untouched.
    assert_eq!(app.get("/api/v2/workspace", &app.key).await.status(), 200);
}

#[tokio::test]
async fn rotating_a_client_secret_revokes_its_tokens_and_the_old_secret() {
    let app = spawn_app().await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let body: Value = token(&app, &client.id, &client.secret, None, false).await.json().await.expect("json");
    let access = body["access_token"].as_str().expect("token").to_string();
    let (rotated, revoked) = app.admin().rotate_oauth_client(&client.id).await.expect("rotate");
    assert_eq!(revoked, 1);
    problem(app.get("/api/v2/workspace", &access).await, 401, "invalid_credential").await;
    assert_eq!(token(&app, &client.id, &client.secret, None, true).await.status(), 401);
    assert_eq!(token(&app, &client.id, &rotated.secret, None, true).await.status(), 200);
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let app = spawn_app_with(|s| s.access_token_ttl_seconds = 1).await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let body: Value = token(&app, &client.id, &client.secret, None, true).await.json().await.expect("json");
    let access = body["access_token"].as_str().expect("token").to_string();
    assert_eq!(app.get("/api/v2/workspace", &access).await.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    problem(app.get("/api/v2/workspace", &access).await, 401, "invalid_credential").await;
}

#[tokio::test]
async fn the_authorization_server_metadata_describes_the_endpoints() {
    let app = spawn_app().await;
    let meta: Value = app
        .http
        .get(app.url("/.well-known/oauth-authorization-server"))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    assert_eq!(meta["issuer"], app.base.as_str());
    assert_eq!(meta["token_endpoint"], format!("{}/api/v2/oauth/token", app.base));
    assert_eq!(meta["grant_types_supported"], serde_json::json!(["client_credentials"]));
    assert_eq!(meta["scopes_supported"].as_array().map(Vec::len), Some(75));
}

#[tokio::test]
async fn an_oversize_form_without_a_length_is_a_problem_413() {
    let app = spawn_app_with(|s| s.body_limit_bytes = 1024).await;
    for path in ["/api/v2/oauth/token", "/api/v2/oauth/revoke", "/api/v2/oauth/introspect"] {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            vec![Ok(b"grant_type=client_credentials&scope=".to_vec()), Ok(vec![b'a'; 4096])];
        let response = app
            .http
            .post(app.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(reqwest::Body::wrap_stream(tokio_stream::iter(chunks)))
            .send()
            .await
            .expect("request");
        problem(response, 413, "payload_too_large").await;
    }
}
