//! Webhook endpoint registration: HTTPS only, server-side request forgery screened at registration (an IP
//! literal, and every address a name resolves to, through the configured host pins so no test reaches the
//! network), the secret shown once and stored encrypted, revocation.

use fiscus_apptest::{TestApp, problem, spawn_app_with};
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
        // Addresses that embed one: 6to4 of 127.0.0.1, Teredo with client 10.0.0.1, IPv4-translated metadata.
        "https://[2002:7f00:1::1]/hook",
        "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/hook",
        "https://[::ffff:0:a9fe:a9fe]/hook",
        // Names: one that resolves to a private address, one whose answers include the metadata address.
        "https://internal.example.com/hook",
        "https://rebind.example.com/hook",
        // A public address is refused too: the host is named by DNS name.
        "https://93.184.215.14/hook",
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
    // The schema's `maxItems` counts what was sent, repeats included, and so does the server.
    let repeated = vec!["action.settled"; 33];
    let too_many = app
        .post_json(PATH, &app.key, &json!({ "url": "https://hooks.example.com/x", "event_types": repeated }), None)
        .await;
    problem(too_many, 422, "invalid_request").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM webhook_endpoints").await, 0);
    // A name that resolves nowhere yet is registered: each delivery resolves and screens it before connecting.
    let unresolved = app.post_json(PATH, &app.key, &json!({ "url": "https://nowhere.invalid/hook" }), None).await;
    assert_eq!(unresolved.status(), 201);
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

#[tokio::test]
async fn a_production_endpoint_waits_for_an_admins_approval_at_the_console() {
    use fiscus_apptest::console::{client, console_page, enrolled_operator, hidden, production_move, sign_in};
    use fiscus_domain::people::Role;
    let app = app().await;
    let (_, live_key) =
        app.new_app(fiscus_domain::credentials::Environment::Production, "agent:execution:webhooks", None).await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Admin).await;
    let bob = enrolled_operator(&app, "bob@example.com", Role::Admin).await;
    let eve = enrolled_operator(&app, "eve@example.com", Role::Approver).await;
    let ada_cookie = sign_in(&app, &ada).await;
    assert_eq!(production_move(&app, &ada_cookie, "enable").await, 303);
    let bob_cookie = sign_in(&app, &bob).await;
    assert_eq!(production_move(&app, &bob_cookie, "enable").await, 303);

    let created = app.post_json(PATH, &live_key, &json!({ "url": "https://hooks.example.com/live" }), None).await;
    assert_eq!(created.status(), 201);
    let endpoint: Value = created.json().await.expect("json");
    assert_eq!(endpoint["status"], "pending_approval");
    let id = endpoint["id"].as_str().expect("id").to_string();
    // The loopback switch never applies to production endpoints.
    let loopback = app.post_json(PATH, &live_key, &json!({ "url": "http://127.0.0.1:9/x" }), None).await;
    problem(loopback, 422, "unsafe_webhook_endpoint").await;

    let decide = |cookie: String, decision: &'static str| {
        let app = &app;
        let id = id.clone();
        async move {
            let page = console_page(app, &cookie, "/console/webhooks").await;
            client()
                .post(app.url(&format!("/console/webhooks/{id}")))
                .header("cookie", &cookie)
                .form(&[
                    ("csrf", hidden(&page, "csrf").as_str()),
                    ("environment", "production"),
                    ("decision", decision),
                ])
                .send()
                .await
                .expect("request")
                .status()
        }
    };
    let eve_cookie = sign_in(&app, &eve).await;
    assert_eq!(decide(eve_cookie, "approve").await, 403, "approvers do not approve endpoints");
    let page = console_page(&app, &ada_cookie, "/console/webhooks").await;
    assert!(page.contains(&id) && page.contains("pending_approval"), "{page}");
    assert_eq!(decide(ada_cookie.clone(), "approve").await, 303);
    assert_eq!(decide(ada_cookie, "approve").await, 409, "decided once");
    let list: Value = app.get(PATH, &live_key).await.json().await.expect("json");
    assert_eq!(list["data"][0]["status"], "active");
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_events WHERE action = 'webhook_endpoint.decision'").await, 1);
}
