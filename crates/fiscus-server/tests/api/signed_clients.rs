//! Signed execution clients: RFC 9421 signatures (Ed25519) with RFC 9530 Content-Digest on the agent
//! gateway, grants that only the console changes, nonces used once, limits from the grant.
//!
//! The signature base is written out here by hand, independently of the server's builder, so a mistake in
//! one cannot hide in the other; `python_clients` checks the same against the `http-message-signatures`
//! package.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer as _, SigningKey};
use fiscus_apptest::actions::proposal;
use fiscus_apptest::console::{client, console_page, enrolled_operator, hidden, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

pub struct Signer {
    pub id: String,
    pub key: SigningKey,
}

/// A signed request: the headers a client sends, built by hand.
pub struct Signed {
    pub method: &'static str,
    pub path: String,
    pub body: Option<Vec<u8>>,
    pub created: i64,
    pub nonce: String,
    pub components: Vec<&'static str>,
}

impl Signed {
    pub fn get(path: &str) -> Signed {
        Signed {
            method: "GET",
            path: path.to_string(),
            body: None,
            created: now_s(),
            nonce: fiscus_domain::ids::new_id("n"),
            components: vec!["@method", "@target-uri"],
        }
    }

    pub fn post(path: &str, body: &Value) -> Signed {
        Signed {
            method: "POST",
            path: path.to_string(),
            body: Some(serde_json::to_vec(body).expect("json")),
            created: now_s(),
            nonce: fiscus_domain::ids::new_id("n"),
            components: vec!["@method", "@target-uri", "content-digest", "content-type"],
        }
    }

    /// `(signature_input, signature, content_digest)` for `app`'s address.
    pub fn headers(&self, app: &TestApp, signer: &Signer) -> (String, String, Option<String>) {
        let digest = self.body.as_deref().map(fiscus_http::http_signature::content_digest);
        let list = self.components.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(" ");
        let params = format!(
            "({list});created={};keyid=\"{}\";nonce=\"{}\";alg=\"ed25519\"",
            self.created, signer.id, self.nonce
        );
        let mut base = String::new();
        for c in &self.components {
            let value = match *c {
                "@method" => self.method.to_string(),
                "@target-uri" => app.url(&self.path),
                "content-digest" => digest.clone().expect("a body"),
                "content-type" => "application/json".to_string(),
                other => panic!("the test signer does not know {other}"),
            };
            base.push_str(&format!("\"{c}\": {value}\n"));
        }
        base.push_str(&format!("\"@signature-params\": {params}"));
        let signature = B64.encode(signer.key.sign(base.as_bytes()).to_bytes());
        (format!("sig1={params}"), format!("sig1=:{signature}:"), digest)
    }

    pub async fn send(&self, app: &TestApp, signer: &Signer) -> reqwest::Response {
        let (input, signature, digest) = self.headers(app, signer);
        self.send_with(app, &input, &signature, digest.as_deref(), self.body.clone()).await
    }

    pub async fn send_with(
        &self,
        app: &TestApp,
        input: &str,
        signature: &str,
        digest: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> reqwest::Response {
        let method = reqwest::Method::from_bytes(self.method.as_bytes()).expect("method");
        let mut req = app
            .http
            .request(method, app.url(&self.path))
            .header("Signature-Input", input)
            .header("Signature", signature);
        if self.path.ends_with("/a2a") {
            req = req.header("A2A-Version", "1.0");
        }
        if let Some(d) = digest {
            req = req.header("Content-Digest", d);
        }
        if let Some(b) = body {
            req = req.header("Content-Type", "application/json").body(b);
        }
        req.send().await.expect("request")
    }
}

pub fn random_key() -> SigningKey {
    SigningKey::from_bytes(&rand::random::<[u8; 32]>())
}

fn now_s() -> i64 {
    fiscus_domain::clock::now_micros() / 1_000_000
}

/// Registers a draft client under the test application (as the CLI does).
pub async fn draft_client(app: &TestApp) -> Signer {
    let key = random_key();
    let public = B64.encode(key.verifying_key().to_bytes());
    let id = app.admin().register_execution_client(&app.app_id, "Treasury agent", &public).await.expect("register");
    Signer { id, key }
}

/// Posts the console's decision form for `client_id` as the operator behind `cookie`.
pub async fn console_decision(
    app: &TestApp,
    cookie: &str,
    client_id: &str,
    decision: &str,
    operations: &[&str],
    kinds: &[&str],
    limits: (u32, u64),
) -> reqwest::Response {
    let page = console_page(app, cookie, &format!("/console/clients/{client_id}?environment=sandbox")).await;
    let mut form: Vec<(String, String)> = vec![
        ("csrf".into(), hidden(&page, "csrf")),
        ("environment".into(), "sandbox".into()),
        // A page without the form (an approver's, a revoked client's) is answered with a forged one.
        (
            "seen_version".into(),
            if page.contains("name=\"seen_version\"") { hidden(&page, "seen_version") } else { "0".into() },
        ),
        ("decision".into(), decision.into()),
    ];
    if decision == "grant" {
        form.extend(operations.iter().map(|o| ("operation".to_string(), o.to_string())));
        form.extend(kinds.iter().map(|k| ("action_kind".to_string(), k.to_string())));
        form.push(("rate_limit_per_minute".into(), limits.0.to_string()));
        form.push(("monthly_quota".into(), limits.1.to_string()));
        form.push(("expires_on".into(), String::new()));
    }
    client()
        .post(app.url(&format!("/console/clients/{client_id}/decision")))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
}

/// A client granted at the console by an admin.
pub async fn granted_client(app: &TestApp, operations: &[&str], kinds: &[&str], limits: (u32, u64)) -> Signer {
    let signer = draft_client(app).await;
    let admin = enrolled_operator(app, &format!("admin-{}@example.com", signer.id.to_lowercase()), Role::Admin).await;
    let cookie = sign_in(app, &admin).await;
    let done = console_decision(app, &cookie, &signer.id, "grant", operations, kinds, limits).await;
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap_or_default());
    signer
}

const GRANTED: [&str; 3] =
    ["post_agent_execution_proposals", "post_agent_execution_actions_uid_submit", "get_agent_execution_actions_uid"];

#[tokio::test]
async fn a_draft_is_refused_a_granted_client_is_served_and_a_revoked_one_is_refused() {
    let app = spawn_app().await;
    let signer = draft_client(&app).await;
    let caps = Signed::get("/api/v2/agent-execution/capabilities");
    problem(caps.send(&app, &signer).await, 401, "invalid_signature").await;

    let admin = enrolled_operator(&app, "admin@example.com", Role::Admin).await;
    let cookie = sign_in(&app, &admin).await;
    let granted = console_decision(&app, &cookie, &signer.id, "grant", &GRANTED, &["payment"], (60, 1000)).await;
    assert_eq!(granted.status(), 303);

    let response = Signed::get("/api/v2/agent-execution/capabilities").send(&app, &signer).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("agent-request-id").is_some());
    let policy = response.headers().get("ratelimit-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(policy.contains("\"client\";q=60;w=60"), "{policy}");
    let caps: Value = response.json().await.expect("json");
    assert_eq!(caps["authentication"], "signature");
    assert_eq!(caps["client_id"], signer.id.as_str());
    assert_eq!(caps["grant"]["version"], 1);
    assert_eq!(caps["action_kinds"], json!(["payment"]));
    let ops: Vec<&str> =
        caps["operations"].as_array().expect("ops").iter().filter_map(|o| o["operation_id"].as_str()).collect();
    for op in GRANTED.iter().chain(["get_agent_execution_capabilities"].iter()) {
        assert!(ops.contains(op), "{op} missing from {ops:?}");
    }
    assert!(!ops.contains(&"post_agent_execution_actions_uid_execute"), "{ops:?}");

    // A signed proposal and its submission go into the normal lifecycle: nothing approves it but people.
    let created = Signed::post("/api/v2/agent-execution/proposals", &proposal()).send(&app, &signer).await;
    assert_eq!(created.status(), 201, "{}", created.text().await.unwrap_or_default());
    let draft: Value = created.json().await.expect("json");
    assert_eq!(draft["control_state"], "draft");
    let id = draft["id"].as_str().expect("id");
    let submitted =
        Signed::post(&format!("/api/v2/agent-execution/actions/{id}/submit"), &json!({})).send(&app, &signer).await;
    assert_eq!(submitted.status(), 200);
    assert_eq!(submitted.json::<Value>().await.expect("json")["control_state"], "pending_approval");

    let revoked = console_decision(&app, &cookie, &signer.id, "revoke", &[], &[], (0, 0)).await;
    assert_eq!(revoked.status(), 303);
    problem(Signed::get("/api/v2/agent-execution/capabilities").send(&app, &signer).await, 401, "invalid_signature")
        .await;
    // Revoked stays revoked: the console offers no grant, and a forged form is refused.
    let page = console_page(&app, &cookie, &format!("/console/clients/{}?environment=sandbox", signer.id)).await;
    assert!(!page.contains("name=\"seen_version\""), "a revoked client offers no decision");
    let forged = client()
        .post(app.url(&format!("/console/clients/{}/decision", signer.id)))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", hidden(&page, "csrf").as_str()),
            ("environment", "sandbox"),
            ("seen_version", "2"),
            ("decision", "grant"),
            ("operation", GRANTED[0]),
            ("rate_limit_per_minute", "60"),
            ("monthly_quota", "1000"),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(forged.status(), 409);
}

#[tokio::test]
async fn tampered_stale_malformed_and_foreign_signatures_are_refused_and_record_nothing() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &GRANTED, &["payment"], (600, 10_000)).await;
    let path = "/api/v2/agent-execution/proposals";
    let actions_before = app.count("SELECT COUNT(*) FROM actions").await;
    let evidence_before = app.count("SELECT COUNT(*) FROM agent_requests").await;

    // The body changed after signing (the digest no longer matches it).
    let req = Signed::post(path, &proposal());
    let (input, signature, digest) = req.headers(&app, &signer);
    let mut other = proposal();
    other["amount_minor"] = json!(999_999_999);
    let changed = serde_json::to_vec(&other).expect("json");
    let r = req.send_with(&app, &input, &signature, digest.as_deref(), Some(changed.clone())).await;
    assert!(problem(r, 401, "invalid_signature").await["detail"].as_str().unwrap_or("").contains("Content-Digest"));
    // ... and with a digest recomputed for the new body, the signature no longer covers it.
    let forged_digest = fiscus_http::http_signature::content_digest(&changed);
    let r = req.send_with(&app, &input, &signature, Some(&forged_digest), Some(changed)).await;
    assert!(problem(r, 401, "invalid_signature").await["detail"].as_str().unwrap_or("").contains("does not verify"));

    // Too old, from the future, no nonce, malformed, unsupported algorithm, no digest coverage.
    let mut stale = Signed::post(path, &proposal());
    stale.created -= 400;
    problem(stale.send(&app, &signer).await, 401, "invalid_signature").await;
    let mut future = Signed::post(path, &proposal());
    future.created += 120;
    problem(future.send(&app, &signer).await, 401, "invalid_signature").await;
    let req = Signed::post(path, &proposal());
    let (input, signature, digest) = req.headers(&app, &signer);
    for bad_input in [
        input.replace(&format!(";nonce=\"{}\"", req.nonce), ""),
        input.replace("alg=\"ed25519\"", "alg=\"hmac-sha256\""),
        "sig1=(\"@method\"".to_string(),
        format!("{input}, sig2={}", input.trim_start_matches("sig1=")),
    ] {
        problem(
            req.send_with(&app, &bad_input, &signature, digest.as_deref(), req.body.clone()).await,
            401,
            "invalid_signature",
        )
        .await;
    }
    let mut uncovered = Signed::post(path, &proposal());
    uncovered.components = vec!["@method", "@target-uri"];
    problem(uncovered.send(&app, &signer).await, 401, "invalid_signature").await;

    // Another key under this keyid, an unknown keyid, and a bearer credential beside a signature.
    let impostor = Signer { id: signer.id.clone(), key: random_key() };
    problem(Signed::post(path, &proposal()).send(&app, &impostor).await, 401, "invalid_signature").await;
    let unknown = Signer { id: "ecl_00000000000000000000000000".into(), key: signer.key.clone() };
    problem(Signed::post(path, &proposal()).send(&app, &unknown).await, 401, "invalid_signature").await;
    let req = Signed::get("/api/v2/agent-execution/capabilities");
    let (input, signature, _) = req.headers(&app, &signer);
    let both = app
        .http
        .get(app.url(&req.path))
        .bearer_auth(&app.key)
        .header("Signature-Input", input)
        .header("Signature", signature)
        .send()
        .await
        .expect("request");
    problem(both, 401, "invalid_signature").await;
    // Signatures are for the gateway only.
    let req = Signed::get("/api/v2/workspace");
    problem(req.send(&app, &signer).await, 401, "invalid_signature").await;

    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, actions_before);
    assert_eq!(app.count("SELECT COUNT(*) FROM agent_requests").await, evidence_before);
    // The signed client itself still works.
    assert_eq!(Signed::post(path, &proposal()).send(&app, &signer).await.status(), 201);
}

#[tokio::test]
async fn a_replayed_nonce_is_refused_for_reads_and_writes() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &GRANTED, &["payment"], (600, 10_000)).await;
    let write = Signed::post("/api/v2/agent-execution/proposals", &proposal());
    assert_eq!(write.send(&app, &signer).await.status(), 201);
    problem(write.send(&app, &signer).await, 401, "signature_replayed").await;
    let read = Signed::get("/api/v2/agent-execution/capabilities");
    assert_eq!(read.send(&app, &signer).await.status(), 200);
    problem(read.send(&app, &signer).await, 401, "signature_replayed").await;
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, 1);
    // Both nonces are on record, so another node (or this one after a restart) refuses them too: the write's
    // before it ran, the read's with its request evidence.
    let write_nonce = app
        .count(&format!(
            "SELECT COUNT(*) FROM signature_nonces WHERE client_id = '{}' AND nonce = '{}'",
            signer.id, write.nonce
        ))
        .await;
    let read_nonce = app
        .count(&format!(
            "SELECT COUNT(*) FROM agent_requests WHERE credential_id = '{}' AND nonce = '{}'",
            signer.id, read.nonce
        ))
        .await;
    assert_eq!((write_nonce, read_nonce), (1, 1));
}

#[tokio::test]
async fn outside_the_grant_is_422_at_every_gateway_route_and_action_kind() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &GRANTED, &["payment"], (600, 10_000)).await;
    // An operation not on the allowlist.
    let created = Signed::post("/api/v2/agent-execution/proposals", &proposal()).send(&app, &signer).await;
    let id = created.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string();
    let execute = Signed::post(&format!("/api/v2/agent-execution/actions/{id}/execute"), &json!({}));
    problem(execute.send(&app, &signer).await, 422, "outside_grant").await;
    // An action kind not on the allowlist.
    let mut fx = proposal();
    fx["kind"] = json!("transfer");
    let before = app.count("SELECT COUNT(*) FROM actions").await;
    problem(Signed::post("/api/v2/agent-execution/proposals", &fx).send(&app, &signer).await, 422, "outside_grant")
        .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, before);
    // A bearer credential of the same application is not limited by the client's grant.
    let bearer = app.post_json("/api/v2/agent-execution/proposals", &app.key, &fx, None).await;
    assert_eq!(bearer.status(), 201);
}

#[tokio::test]
async fn the_grant_changes_only_at_the_console_by_an_admin_on_the_version_shown() {
    let app = spawn_app().await;
    let signer = draft_client(&app).await;
    // The API has no way to grant: the gateway's reads are reads.
    let r =
        app.post_json("/api/v2/agent-execution/capabilities", &app.key, &json!({"operations": GRANTED}), None).await;
    assert_eq!(r.status(), 405);
    // An approver may not grant.
    let approver = enrolled_operator(&app, "approver@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &approver).await;
    let refused = console_decision(&app, &cookie, &signer.id, "grant", &GRANTED, &[], (60, 1000)).await;
    assert_eq!(refused.status(), 403);
    // An admin may; a decision on a version that moved meanwhile is refused.
    let admin = enrolled_operator(&app, "admin@example.com", Role::Admin).await;
    let cookie = sign_in(&app, &admin).await;
    let page = console_page(&app, &cookie, &format!("/console/clients/{}?environment=sandbox", signer.id)).await;
    assert_eq!(console_decision(&app, &cookie, &signer.id, "grant", &GRANTED, &[], (60, 1000)).await.status(), 303);
    let stale = client()
        .post(app.url(&format!("/console/clients/{}/decision", signer.id)))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", hidden(&page, "csrf").as_str()),
            ("environment", "sandbox"),
            ("seen_version", "0"),
            ("decision", "revoke"),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(stale.status(), 409);
    assert_eq!(Signed::get("/api/v2/agent-execution/capabilities").send(&app, &signer).await.status(), 200);
    // Every decision is audited and sealed.
    assert_eq!(app.count("SELECT COUNT(*) FROM audit_events WHERE action = 'execution_client.decision'").await, 1);
    let (checked, failures) = fiscus_store::sealed_tables::verify_workspace(
        &mut app.state.store.read().await.expect("conn"),
        app.state.store.seal_key(),
        &app.workspace_id,
    )
    .await
    .expect("verify");
    assert!(failures.is_empty() && checked >= 2, "{checked} {}", failures.len());
}

#[tokio::test]
async fn the_grants_rate_limit_and_monthly_quota_apply_and_are_readable() {
    let app = spawn_app().await;
    let per_minute = granted_client(&app, &[], &[], (2, 1000)).await;
    for _ in 0..2 {
        assert_eq!(Signed::get("/api/v2/agent-execution/capabilities").send(&app, &per_minute).await.status(), 200);
    }
    let limited = Signed::get("/api/v2/agent-execution/capabilities").send(&app, &per_minute).await;
    assert!(limited.headers().get("retry-after").is_some());
    problem(limited, 429, "rate_limited").await;

    let monthly = granted_client(&app, &[], &[], (600, 3)).await;
    let level: Value =
        Signed::get("/api/v2/agent-execution/service-level").send(&app, &monthly).await.json().await.expect("json");
    assert_eq!(level["monthly_quota"]["limit"], 3);
    assert_eq!(level["monthly_quota"]["used"], 1);
    assert_eq!(level["client_rate_limit"]["limit"], 600);
    for _ in 0..2 {
        assert_eq!(Signed::get("/api/v2/agent-execution/usage").send(&app, &monthly).await.status(), 200);
    }
    let exhausted = Signed::get("/api/v2/agent-execution/usage").send(&app, &monthly).await;
    assert!(problem(exhausted, 429, "rate_limited").await["detail"].as_str().unwrap_or("").contains("monthly"));
}

#[tokio::test]
async fn usage_lists_the_credentials_sealed_request_evidence() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &GRANTED, &["payment"], (600, 10_000)).await;
    let created = Signed::post("/api/v2/agent-execution/proposals", &proposal()).send(&app, &signer).await;
    let evidence_id = created.headers().get("agent-request-id").and_then(|v| v.to_str().ok()).expect("id").to_string();
    let usage: Value =
        Signed::get("/api/v2/agent-execution/usage?limit=5").send(&app, &signer).await.json().await.expect("json");
    assert_eq!(usage["credential_id"], signer.id.as_str());
    let recent = usage["recent_evidence"].as_array().expect("recent");
    let listed = recent.iter().find(|e| e["id"] == evidence_id.as_str()).expect("listed");
    assert_eq!(listed["operation_id"], "post_agent_execution_proposals");
    assert!(listed["evidence_hash"].as_str().expect("hash").starts_with("sha256:"));
    assert!(usage["evidence_records"].as_i64().expect("count") >= 1);
    // A bearer caller sees its own, not the client's.
    let bearer: Value = app.get("/api/v2/agent-execution/usage", &app.key).await.json().await.expect("json");
    assert!(bearer["recent_evidence"].as_array().expect("recent").iter().all(|e| e["id"] != evidence_id.as_str()));
    problem(app.get("/api/v2/agent-execution/usage?limit=0", &app.key).await, 422, "invalid_parameter").await;
    let caps: Value = app.get("/api/v2/agent-execution/capabilities", &app.key).await.json().await.expect("json");
    assert_eq!(caps["authentication"], "bearer");
    assert!(caps["client_id"].is_null());
}

#[tokio::test]
async fn a_grant_edited_in_the_database_is_refused_as_tampered() {
    let app = spawn_app().await;
    let signer = granted_client(&app, &GRANTED, &["payment"], (600, 10_000)).await;
    // Widening the allowlist behind the console's back breaks the decision's seal: nothing is served.
    app.execute(&format!(
        "UPDATE execution_client_decisions SET operations = operations || ' post_agent_execution_actions_uid_execute' \
         WHERE client_id = '{}'",
        signer.id
    ))
    .await;
    let r = Signed::get("/api/v2/agent-execution/capabilities").send(&app, &signer).await;
    problem(r, 500, "integrity_failure").await;
}
