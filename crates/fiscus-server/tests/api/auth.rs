//! Authentication and authorisation at the edge: bearer challenges, scopes named in a 403, suspended,
//! revoked, rotated and expired credentials, production keys without production access, and the sandbox
//! and other workspaces kept apart.

use fiscus_apptest::{problem, spawn_app, spawn_app_with};
use fiscus_domain::credentials::{AppStatus, Environment};

#[tokio::test]
async fn an_authenticated_read_answers_with_the_callers_workspace() {
    let app = spawn_app().await;
    let response = app.get("/api/v2/workspace", &app.key).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("request-id"));
    let body: serde_json::Value = response.json().await.expect("json");
    assert_eq!(body["id"], app.workspace_id.as_str());
    assert_eq!(body["environment"], "sandbox");
    assert_eq!(body["production_access"]["enabled"], false);
    assert_eq!(body["caller"]["application_id"], app.app_id.as_str());
}

#[tokio::test]
async fn no_credential_is_401_with_a_bearer_challenge() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/api/v2/workspace")).send().await.expect("request");
    let challenge = response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    problem(response, 401, "authentication_required").await;
}

#[tokio::test]
async fn garbage_authorization_headers_are_401_problems() {
    let app = spawn_app().await;
    // The last character replaced by another (a key may itself end in `x`).
    let other = if app.key.ends_with('x') { 'y' } else { 'x' };
    let altered = format!("{}{other}", &app.key[..app.key.len() - 1]);
    for header in [
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "bearer svc_test_nope",
        // A well-shaped key whose checksum fails (built at run time so no key-shaped literal is committed).
        &format!("Bearer svc_live_{}", "0".repeat(50)),
        "Token abc",
        "Bearer fcs_notatoken",
        &format!("Bearer {altered}"),
        &format!("Bearer {}{}", app.key, app.key),
        "Bearer \u{7f}",
    ] {
        let response = app.http.get(app.url("/api/v2/workspace")).header("Authorization", header).send().await;
        let Ok(response) = response else { continue }; // a header reqwest itself refuses never reaches us
        assert_eq!(response.status(), 401, "{header:?}");
        let challenge =
            response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        assert!(challenge.contains("invalid_token"), "{header:?}: {challenge}");
        problem(response, 401, "invalid_credential").await;
    }
}

#[tokio::test]
async fn a_credential_without_the_scope_is_403_naming_it() {
    let app = spawn_app().await;
    let (_, key) = app.new_app(Environment::Sandbox, "trust:read", None).await;
    let body = problem(app.get("/api/v2/workspace", &key).await, 403, "scope_missing").await;
    assert_eq!(body["required_scope"], "workspace:read");
    assert_eq!(app.get("/api/v2/trust/audit-head", &key).await.status(), 200);
}

#[tokio::test]
async fn a_suspended_application_is_refused_and_resumes() {
    let app = spawn_app().await;
    app.admin().set_application_status(&app.app_id, AppStatus::Suspended).await.expect("suspend");
    problem(app.get("/api/v2/workspace", &app.key).await, 401, "invalid_credential").await;
    app.admin().set_application_status(&app.app_id, AppStatus::Active).await.expect("resume");
    assert_eq!(app.get("/api/v2/workspace", &app.key).await.status(), 200);
}

#[tokio::test]
async fn a_revoked_application_or_key_is_refused() {
    let app = spawn_app().await;
    let (other_app, other_key) = app.new_app(Environment::Sandbox, "workspace:read", None).await;
    app.admin().revoke_keys(&app.app_id, None).await.expect("revoke");
    problem(app.get("/api/v2/workspace", &app.key).await, 401, "invalid_credential").await;
    // Revoking one application's keys touches nothing else.
    assert_eq!(app.get("/api/v2/workspace", &other_key).await.status(), 200);
    app.admin().set_application_status(&other_app, AppStatus::Revoked).await.expect("revoke app");
    problem(app.get("/api/v2/workspace", &other_key).await, 401, "invalid_credential").await;
    assert!(app.admin().set_application_status(&other_app, AppStatus::Active).await.is_err(), "revocation is final");
}

#[tokio::test]
async fn a_rotated_key_is_refused_at_once_and_its_replacement_works() {
    let app = spawn_app().await;
    let new_key = app.admin().rotate_key(&app.app_id).await.expect("rotate");
    problem(app.get("/api/v2/workspace", &app.key).await, 401, "invalid_credential").await;
    assert_eq!(app.get("/api/v2/workspace", &new_key.secret).await.status(), 200);
}

#[tokio::test]
async fn an_expired_key_is_refused() {
    let app = spawn_app().await;
    let soon = fiscus_domain::clock::now_micros() + 300_000;
    let key = app.admin().issue_key(&app.app_id, Some(soon)).await.expect("key");
    assert_eq!(app.get("/api/v2/workspace", &key.secret).await.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    problem(app.get("/api/v2/workspace", &key.secret).await, 401, "invalid_credential").await;
}

#[tokio::test]
async fn a_production_key_is_refused_while_production_access_is_off() {
    let app = spawn_app().await;
    let (_, live_key) = app.new_app(Environment::Production, "workspace:read", None).await;
    assert!(live_key.starts_with("svc_live_"));
    problem(app.get("/api/v2/workspace", &live_key).await, 403, "production_access_disabled").await;
}

#[tokio::test]
async fn a_sandbox_key_never_sees_production_data() {
    let app = spawn_app().await;
    let production =
        fiscus_domain::tenancy::Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Production };
    app.admin().grant_credits(&production, 500, "production grant").await.expect("grant");
    let sandbox =
        fiscus_domain::tenancy::Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    app.admin().grant_credits(&sandbox, 7, "sandbox grant").await.expect("grant");
    let body: serde_json::Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(body["environment"], "sandbox");
    assert_eq!(body["granted"], 7);
    assert_eq!(body["balance"], 7);
}

#[tokio::test]
async fn another_workspaces_credential_sees_only_its_own_workspace() {
    let app = spawn_app().await;
    let (other_id, other_key) = app.other_workspace_key().await;
    let body: serde_json::Value = app.get("/api/v2/workspace", &other_key).await.json().await.expect("json");
    assert_eq!(body["id"], other_id.as_str());
    app.post_json(fiscus_apptest::EVIDENCE, &app.key, &fiscus_apptest::evidence_body("mine"), None).await;
    let list: serde_json::Value = app.get(fiscus_apptest::EVIDENCE, &other_key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().map(Vec::len), Some(0), "another workspace's evidence is invisible");
}

#[tokio::test]
async fn client_secrets_are_not_bearer_credentials() {
    let app = spawn_app_with(|_| {}).await;
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    problem(app.get("/api/v2/workspace", &client.secret).await, 401, "invalid_credential").await;
}

#[tokio::test]
async fn a_scope_outside_the_workspace_entitlement_is_403_entitlement_missing() {
    let app = spawn_app().await;
    assert_eq!(app.get("/api/v2/ai-credits/balance", &app.key).await.status(), 200);
    let narrowed = fiscus_domain::scopes::ScopeSet::parse("workspace:read trust:read").expect("scopes");
    app.admin().set_workspace_entitlement(&app.workspace_id, &narrowed).await.expect("entitle");
    // The very next request sees it, although the credential was cached a moment ago.
    let body = problem(app.get("/api/v2/ai-credits/balance", &app.key).await, 403, "entitlement_missing").await;
    assert_eq!(body["required_scope"], "ai:credits:read");
    let ws: serde_json::Value = app.get("/api/v2/workspace", &app.key).await.json().await.expect("json");
    assert_eq!(ws["caller"]["scopes"], serde_json::json!(["trust:read", "workspace:read"]));
    // Applications cannot be given scopes the workspace lacks.
    assert!(app.new_app_result("ai:credits:read").await.is_err());
}
