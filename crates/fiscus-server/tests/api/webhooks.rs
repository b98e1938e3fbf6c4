//! Webhook endpoint registration: HTTPS only, server-side request forgery screened at registration (an IP
//! literal, and every address a name resolves to, through the configured host pins so no test reaches the
//! network), the secret shown once and stored encrypted, revocation.

use crate::helpers::{TestApp, problem, spawn_app_with};
use serde_json::{Value, json};

const PATH: &str = "/api/v2/agent-execution/webhooks";

async fn app() -> TestApp {
    spawn_app_with(|s| {
        s.webhook_hosts.insert("hooks.example.com".into(), vec!["93.184.215.14".parse().expect("ip")]);
        s.webhook_hosts.insert("internal.example.com".into(), vec!["10.0.0.5".parse().expect("ip")]);
        s.webhook_hosts.insert(
            "rebind.example.com".into(),
            vec!["93.184.215.14".parse().expect("ip"), "169.254.169.254".parse().expect("ip")],
        );
    })
    .await
}

#[tokio::test]
async fn an_https_endpoint_is_registered_with_a_secret_shown_once_and_revoked() {
    let app = app().await;
    let body =
        json!({ "url": "https://hooks.example.com/fiscus", "event_types": ["action.settled", "action.approved"] });
    let created = app.post_json(PATH, &app.key, &body, Some("whk-1")).await;
    assert_eq!(created.status(), 201);
    let endpoint: Value = created.json().await.expect("json");
    let secret = endpoint["secret"].as_str().expect("secret").to_string();
    assert!(fiscus_domain::webhooks::secret_key(&secret).is_some(), "{secret}");
    assert_eq!(endpoint["status"], "active");
    assert_eq!(endpoint["event_types"], json!(["action.approved", "action.settled"]));
    let id = endpoint["id"].as_str().expect("id").to_string();
    // Stored encrypted, never in clear, and not kept in the idempotency record either.
    let secret_body = secret.trim_start_matches("whsec_");
    for table in ["webhook_endpoints", "idempotency_keys"] {
        let clear = app
            .count(&format!(
                "SELECT COUNT(*) FROM {table} WHERE CAST({} AS TEXT) LIKE '%{secret_body}%'",
                if table == "webhook_endpoints" { "secret_sealed" } else { "response_body" }
            ))
            .await;
        assert_eq!(clear, 0, "{table} holds the secret in clear");
    }
    let replay = app.post_json(PATH, &app.key, &body, Some("whk-1")).await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let replayed: Value = replay.json().await.expect("json");
    assert_eq!(replayed["id"], id.as_str());
    assert!(replayed.get("secret").is_none(), "the secret is shown once");

    let list: Value = app.get(PATH, &app.key).await.json().await.expect("json");
    assert_eq!(list["data"][0]["id"], id.as_str());
    assert!(list["data"][0].get("secret").is_none());
    let revoked =
        app.http.delete(app.url(&format!("{PATH}/{id}"))).bearer_auth(&app.key).send().await.expect("request");
    assert_eq!(revoked.status(), 200);
    assert_eq!(revoked.json::<Value>().await.expect("json")["status"], "revoked");
    let again = app.http.delete(app.url(&format!("{PATH}/{id}"))).bearer_auth(&app.key).send().await.expect("request");
    assert_eq!(again.json::<Value>().await.expect("json")["status"], "revoked");
    let unknown =
        app.http.delete(app.url(&format!("{PATH}/whe_nope"))).bearer_auth(&app.key).send().await.expect("request");
    problem(unknown, 404, "not_found").await;
}

#[tokio::test]
async fn unsafe_endpoints_are_refused_before_any_connection_and_record_nothing() {
    let app = app().await;
    for url in [
        "http://hooks.example.com/fiscus",
        "https://user:pass@hooks.example.com/fiscus",
        "https://hooks.example.com/fiscus#x",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[fd00:ec2::254]/",
        "https://127.0.0.1/hook",
        "https://[::ffff:192.168.0.1]/hook",
        // Names: one that resolves to a private address, one whose answers include the metadata address,
        // and one that does not resolve at all.
        "https://internal.example.com/hook",
        "https://rebind.example.com/hook",
        "https://nowhere.invalid/hook",
    ] {
        let refused = app.post_json(PATH, &app.key, &json!({ "url": url }), None).await;
        let body = problem(refused, 422, "unsafe_webhook_endpoint").await;
        assert!(body["errors"][0]["field"] == "url" || body.to_string().contains("url"), "{url}: {body}");
    }
    let bad_type = app
        .post_json(
            PATH,
            &app.key,
            &json!({ "url": "https://hooks.example.com/x", "event_types": ["action.nope"] }),
            None,
        )
        .await;
    problem(bad_type, 422, "invalid_request").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM webhook_endpoints").await, 0);
}

#[tokio::test]
async fn the_loopback_switch_is_for_sandbox_development_only() {
    let off = app().await;
    let refused = off.post_json(PATH, &off.key, &json!({ "url": "http://127.0.0.1:9/hook" }), None).await;
    problem(refused, 422, "unsafe_webhook_endpoint").await;
    let on = spawn_app_with(|s| s.webhooks_allow_loopback = true).await;
    let created = on.post_json(PATH, &on.key, &json!({ "url": "http://127.0.0.1:9/hook" }), None).await;
    assert_eq!(created.status(), 201);
    // Still nothing private.
    let private = on.post_json(PATH, &on.key, &json!({ "url": "https://10.0.0.1/hook" }), None).await;
    problem(private, 422, "unsafe_webhook_endpoint").await;
}
