//! Machine identities, delegations activated by an operator, signed machine authority and atomic budgets.

use ed25519_dalek::{Signer, SigningKey};
use fiscus_apptest::b64;
use fiscus_apptest::console::{client, enrolled_operator, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

struct Machine {
    key: SigningKey,
    identity_id: String,
    delegation_id: String,
}

async fn identity(app: &TestApp, seed: u8) -> (SigningKey, String) {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let body = json!({ "name": format!("agent-{seed}"), "public_key": b64(&key.verifying_key().to_bytes()) });
    let created = app.post_json("/api/v2/actions/agentic/identities", &app.key, &body, None).await;
    assert_eq!(created.status(), 201);
    (key, created.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string())
}

fn terms(per_action: i64, daily: i64, monthly: i64) -> Value {
    json!({
        "action": "payment", "counterparty": "cp_acme", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": per_action,
        "daily_budget_minor": daily, "monthly_budget_minor": monthly, "valid_for_days": 180
    })
}

/// An operator's move on a delegation through the console page.
async fn operator_moves(app: &TestApp, cookie: &str, delegation_id: &str, mv: &str) -> reqwest::StatusCode {
    let page = fiscus_apptest::console::console_page(app, cookie, "/console/delegations").await;
    let row = &page[page.find(delegation_id).expect("listed")..];
    let field = |name: &str| {
        let pattern = format!("name=\"{name}\" value=\"");
        let start = row.find(&pattern).expect("field") + pattern.len();
        row[start..start + row[start..].find('"').expect("end")].to_string()
    };
    let form = [
        ("csrf", field("csrf")),
        ("environment", "sandbox".into()),
        ("terms_hash", field("terms_hash")),
        ("move", mv.into()),
    ];
    client()
        .post(app.url(&format!("/console/delegations/{delegation_id}")))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
        .status()
}

async fn machine(app: &TestApp, cookie: &str, seed: u8, terms_body: Value) -> Machine {
    let (key, identity_id) = identity(app, seed).await;
    let created = app
        .post_json(
            &format!("/api/v2/actions/agentic/identities/{identity_id}/delegations"),
            &app.key,
            &terms_body,
            None,
        )
        .await;
    assert_eq!(created.status(), 201);
    let draft: Value = created.json().await.expect("json");
    assert_eq!(draft["status"], "draft");
    let delegation_id = draft["id"].as_str().expect("id").to_string();
    assert_eq!(operator_moves(app, cookie, &delegation_id, "activate").await, 303);
    Machine { key, identity_id, delegation_id }
}

async fn delegated_action(app: &TestApp, m: &Machine, amount: i64) -> (String, String) {
    let body = json!({
        "kind": "payment", "amount_minor": amount, "currency": "USD", "counterparty": "cp_acme", "connector": "sandbox",
        "execution_mode": "machine_delegated", "delegation_id": m.delegation_id, "risk_tier": "T1", "reference": "AUTO-1"
    });
    let created: Value = app.post_json("/api/v2/actions", &app.key, &body, None).await.json().await.expect("json");
    (created["id"].as_str().expect("id").to_string(), created["envelope_hash"].as_str().expect("hash").to_string())
}

fn evidence(key: &SigningKey, identity_id: &str, envelope_hash: &str, at: &str, nonce: &str) -> Value {
    let message = fiscus_actions::rules::delegation::authority_message(envelope_hash, at, nonce);
    json!({ "machine_authority": {
        "identity_id": identity_id, "timestamp": at, "nonce": nonce, "signature": b64(&key.sign(message.as_bytes()).to_bytes())
    }})
}

fn now_rfc3339(offset_seconds: i64) -> String {
    fiscus_domain::clock::rfc3339(fiscus_domain::clock::now_micros() + offset_seconds * 1_000_000)
}

fn nonce() -> String {
    fiscus_domain::ids::new_id("nonce")
}

async fn execute(app: &TestApp, id: &str, body: &Value) -> reqwest::Response {
    app.post_json(&format!("/api/v2/agent-execution/actions/{id}/execute"), &app.key, body, None).await
}

async fn gates(response: reqwest::Response) -> Vec<String> {
    let body = problem(response, 422, "execution_refused").await;
    body["failed_gates"]
        .as_array()
        .expect("gates")
        .iter()
        .filter_map(|g| g["gate"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_action_executes_on_fresh_signed_authority_and_settles() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let m = machine(&app, &cookie, 7, terms(100_000, 300_000, 1_000_000)).await;
    let (id, hash) = delegated_action(&app, &m, 50_000).await;
    let accepted = execute(&app, &id, &evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &nonce())).await;
    assert_eq!(accepted.status(), 200, "{}", accepted.text().await.unwrap_or_default());
    app.drain().await;
    let a: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(a["control_state"], "completed", "{a}");
    let consumed = app
        .count(&format!("SELECT COUNT(*) FROM budget_reservations WHERE action_id = '{id}' AND state = 'consumed'"))
        .await;
    assert_eq!(consumed, 1);
    // The delegation's page draws its budget use this month against the monthly budget.
    let page = fiscus_apptest::console::console_page(
        &app,
        &cookie,
        &format!("/console/delegations/{}?environment=sandbox", m.delegation_id),
    )
    .await;
    let used = fiscus_apptest::console::between(&page, "<dd id=\"used\">", "</dd>");
    assert_eq!(used, "USD 500.00", "{page}");
    assert!(page.contains("<svg role=\"img\" aria-label=\"Budget used in "), "{page}");
    assert!(page.contains("monthly budget 10000 (dashed)"), "{page}");
}

#[tokio::test]
async fn stale_replayed_or_foreign_evidence_and_broken_budgets_are_refused() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let m = machine(&app, &cookie, 7, terms(100_000, 100_000, 1_000_000)).await;
    let (id, hash) = delegated_action(&app, &m, 50_000).await;
    assert_eq!(gates(execute(&app, &id, &json!({})).await).await, ["machine_authority"], "evidence is required");
    let stale = evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(-600), &nonce());
    assert_eq!(gates(execute(&app, &id, &stale).await).await, ["machine_authority"]);
    let other_key = SigningKey::from_bytes(&[9u8; 32]);
    let forged = evidence(&other_key, &m.identity_id, &hash, &now_rfc3339(0), &nonce());
    assert_eq!(gates(execute(&app, &id, &forged).await).await, ["machine_authority"], "wrong identity key");
    let used = nonce();
    let first = evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &used);
    assert_eq!(execute(&app, &id, &first).await.status(), 200);
    let (second_id, second_hash) = delegated_action(&app, &m, 50_000).await;
    let replay = evidence(&m.key, &m.identity_id, &second_hash, &now_rfc3339(0), &used);
    assert_eq!(gates(execute(&app, &second_id, &replay).await).await, ["machine_authority"], "a nonce never twice");
    // Over the per-action budget.
    let (big, big_hash) = delegated_action(&app, &m, 100_001).await;
    assert_eq!(
        gates(execute(&app, &big, &evidence(&m.key, &m.identity_id, &big_hash, &now_rfc3339(0), &nonce())).await).await,
        ["budget"]
    );
    // Over the daily budget, counting the in-flight reservation of the first execution.
    let (third, third_hash) = delegated_action(&app, &m, 50_000).await;
    assert_eq!(
        execute(&app, &second_id, &evidence(&m.key, &m.identity_id, &second_hash, &now_rfc3339(0), &nonce()))
            .await
            .status(),
        200
    );
    assert_eq!(
        gates(execute(&app, &third, &evidence(&m.key, &m.identity_id, &third_hash, &now_rfc3339(0), &nonce())).await)
            .await,
        ["budget"]
    );
}

#[tokio::test]
async fn suspended_or_expired_delegations_refuse_and_only_operators_activate() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let (key, identity_id) = identity(&app, 7).await;
    let draft: Value = app
        .post_json(
            &format!("/api/v2/actions/agentic/identities/{identity_id}/delegations"),
            &app.key,
            &terms(100_000, 300_000, 1_000_000),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    let delegation_id = draft["id"].as_str().expect("id").to_string();
    let m = Machine { key, identity_id, delegation_id: delegation_id.clone() };
    let (id, hash) = delegated_action(&app, &m, 1_000).await;
    let refused =
        gates(execute(&app, &id, &evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &nonce())).await).await;
    assert_eq!(refused, ["delegation"], "a draft grants nothing");
    assert_eq!(operator_moves(&app, &cookie, &delegation_id, "activate").await, 303);
    assert_eq!(operator_moves(&app, &cookie, &delegation_id, "suspend").await, 303);
    assert_eq!(
        gates(execute(&app, &id, &evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &nonce())).await).await,
        ["delegation"]
    );
    // An expired delegation refuses too.
    let m2 = machine(&app, &cookie, 8, terms(100_000, 300_000, 1_000_000)).await;
    app.execute(&format!("UPDATE delegations SET expires_at = 1 WHERE id = '{}'", m2.delegation_id)).await;
    app.reseal(&fiscus_store::seals::DELEGATIONS, &m2.delegation_id).await;
    let (id2, hash2) = delegated_action(&app, &m2, 1_000).await;
    assert_eq!(
        gates(execute(&app, &id2, &evidence(&m2.key, &m2.identity_id, &hash2, &now_rfc3339(0), &nonce())).await).await,
        ["delegation"]
    );
    let status: Value = app
        .get(&format!("/api/v2/actions/agentic/delegations/{delegation_id}"), &app.key)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(status["status"], "suspended");
    assert_eq!(status["decided_by"], op.id.as_str());
}

/// 50 concurrent delegated executions against budgets that allow 10: exactly 10 are accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_executions_against_a_budget_for_ten_accept_exactly_ten() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let m = machine(&app, &cookie, 7, terms(1_000, 10_000, 10_000)).await;
    let mut requests = Vec::new();
    for _ in 0..50 {
        let (id, hash) = delegated_action(&app, &m, 1_000).await;
        requests.push((id.clone(), evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &nonce())));
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (id, body) in requests {
        let http = app.http.clone();
        let url = app.url(&format!("/api/v2/agent-execution/actions/{id}/execute"));
        let key = app.key.clone();
        tasks.spawn(async move {
            http.post(url).bearer_auth(key).json(&body).send().await.expect("request").status().as_u16()
        });
    }
    let mut accepted = 0;
    while let Some(status) = tasks.join_next().await {
        match status.expect("task") {
            200 => accepted += 1,
            422 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(accepted, 10);
    let reserved = app
        .count(&format!(
            "SELECT COUNT(*) FROM budget_reservations WHERE delegation_id = '{}' AND state IN ('reserved', 'consumed')",
            m.delegation_id
        ))
        .await;
    assert_eq!(reserved, 10);
}

#[tokio::test]
async fn the_monthly_budget_counts_earlier_days_of_the_month() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let m = machine(&app, &cookie, 7, terms(1_000, 2_000, 5_000)).await;
    // Earlier this month the delegation already spent 4,500 (recorded against another day).
    let (earlier, _) = delegated_action(&app, &m, 1_000).await;
    let month = &fiscus_domain::clock::utc_day(fiscus_domain::clock::now_micros())[..7];
    app.execute(&format!(
        "INSERT INTO budget_reservations (id, workspace_id, delegation_id, action_id, amount_minor, day, month, state, created_at, updated_at) \
         VALUES ('bud_earlier', '{}', '{}', '{earlier}', 4500, 'earlier-day', '{month}', 'consumed', 0, 0)",
        app.workspace_id, m.delegation_id
    ))
    .await;
    let (id, hash) = delegated_action(&app, &m, 1_000).await;
    let refused =
        gates(execute(&app, &id, &evidence(&m.key, &m.identity_id, &hash, &now_rfc3339(0), &nonce())).await).await;
    assert_eq!(refused, ["budget"], "500 left this month, 2,000 left today");
    let (small, small_hash) = delegated_action(&app, &m, 500).await;
    assert_eq!(
        execute(&app, &small, &evidence(&m.key, &m.identity_id, &small_hash, &now_rfc3339(0), &nonce())).await.status(),
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_are_bounded_and_an_overrun_at_the_edge_is_a_gate_failure_never_a_500() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let (_, identity_id) = identity(&app, 21).await;
    let path = format!("/api/v2/actions/agentic/identities/{identity_id}/delegations");
    let refused = app.post_json(&path, &app.key, &terms(i64::MAX, i64::MAX, i64::MAX), None).await;
    let body = problem(refused, 422, "invalid_request").await;
    assert!(body["errors"].to_string().contains("monthly_budget_minor"), "{body}");
    let max = fiscus_domain::money::MAX_AMOUNT_MINOR;
    let m = machine(&app, &cookie, 22, terms(max, max, max)).await;
    let sign = |hash: &str| evidence(&m.key, &m.identity_id, hash, &now_rfc3339(0), &nonce());
    // Two executions that together use the whole budget pass; the next unit is over it.
    for amount in [max / 2, max - max / 2] {
        let (id, hash) = delegated_action(&app, &m, amount).await;
        assert_eq!(execute(&app, &id, &sign(&hash)).await.status(), 200, "{amount}");
    }
    for _ in 0..2 {
        let (id, hash) = delegated_action(&app, &m, 1).await;
        assert_eq!(gates(execute(&app, &id, &sign(&hash)).await).await, ["budget"]);
    }
    let over = json!({
        "kind": "payment", "amount_minor": i64::MAX, "currency": "USD", "counterparty": "cp_acme", "connector": "sandbox",
        "execution_mode": "machine_delegated", "delegation_id": m.delegation_id, "risk_tier": "T1", "reference": "AUTO-2"
    });
    let body = problem(app.post_json("/api/v2/actions", &app.key, &over, None).await, 422, "invalid_request").await;
    assert_eq!(body["errors"][0]["field"], "amount_minor");
}

/// The budgets nest (per action ≤ daily ≤ monthly): terms that contradict each other are refused naming the
/// fields, and nothing is stored. Nested terms bind together, and last `valid_for_days` from creation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_nest_bind_together_and_the_terms_last_the_days_given() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let before = fiscus_domain::clock::now_micros();
    let m = machine(&app, &cookie, 31, terms(1_000, 1_500, 1_500)).await;
    let path = format!("/api/v2/actions/agentic/identities/{}/delegations", m.identity_id);
    let stored = app.count("SELECT COUNT(*) FROM delegations").await;
    for (contradiction, fields) in [
        (terms(9_000, 5_000, 100_000), vec!["per_action_budget_minor"]),
        (terms(1_000, 5_000, 1_500), vec!["daily_budget_minor"]),
    ] {
        let body = problem(app.post_json(&path, &app.key, &contradiction, None).await, 409, "conflict").await;
        let named: Vec<&str> =
            body["errors"].as_array().expect("errors").iter().filter_map(|e| e["field"].as_str()).collect();
        assert_eq!(named, fields, "{body}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM delegations").await, stored, "a refusal stores nothing");
    let delegation: Value = app
        .get(&format!("/api/v2/actions/agentic/delegations/{}", m.delegation_id), &app.key)
        .await
        .json()
        .await
        .expect("json");
    let expires = fiscus_domain::clock::parse_rfc3339(delegation["expires_at"].as_str().expect("expires_at"))
        .expect("an RFC 3339 time");
    let days = |d: i64| d * 86_400 * fiscus_domain::clock::MICROS_PER_SECOND;
    assert!(expires >= before + days(180) - 1_000_000 && expires <= fiscus_domain::clock::now_micros() + days(180));
    let sign = |hash: &str| evidence(&m.key, &m.identity_id, hash, &now_rfc3339(0), &nonce());
    for amount in [1_000, 500] {
        let (id, hash) = delegated_action(&app, &m, amount).await;
        assert_eq!(execute(&app, &id, &sign(&hash)).await.status(), 200, "{amount}");
    }
    // The daily and monthly budgets are spent.
    let (id, hash) = delegated_action(&app, &m, 1).await;
    assert_eq!(gates(execute(&app, &id, &sign(&hash)).await).await, ["budget"]);
    // A length outside 1 to 366 days is refused, as the schema says.
    let mut long = terms(1, 1, 1);
    long["valid_for_days"] = json!(367);
    let body = problem(app.post_json(&path, &app.key, &long, None).await, 422, "invalid_request").await;
    assert!(body["errors"].to_string().contains("valid_for_days"), "{body}");
}

/// 32 bytes that are not an Ed25519 curve point are registered (JSON Schema cannot tell them apart), and the
/// identity says its key verifies nothing; a well-formed key says it does; bytes of another length are 422.
#[tokio::test]
async fn an_identity_says_whether_its_key_can_verify_anything() {
    let app = spawn_app().await;
    let not_a_point = (0u8..=255)
        .map(|b| {
            let mut bytes = [0u8; 32];
            bytes[0] = b;
            bytes[31] = 0x7f;
            bytes
        })
        .find(|bytes| ed25519_dalek::VerifyingKey::from_bytes(bytes).is_err())
        .expect("some y has no x");
    let body = json!({ "name": "mistyped", "public_key": b64(&not_a_point) });
    let created = app.post_json("/api/v2/actions/agentic/identities", &app.key, &body, None).await;
    assert_eq!(created.status(), 201);
    assert_eq!(created.json::<Value>().await.expect("json")["key_usable"], false);
    let good = SigningKey::from_bytes(&[7; 32]).verifying_key().to_bytes();
    let body = json!({ "name": "right", "public_key": b64(&good) });
    let created = app.post_json("/api/v2/actions/agentic/identities", &app.key, &body, None).await;
    assert_eq!(created.json::<Value>().await.expect("json")["key_usable"], true);
    let body = json!({ "name": "short", "public_key": b64(&good[..31]) });
    problem(app.post_json("/api/v2/actions/agentic/identities", &app.key, &body, None).await, 422, "invalid_request")
        .await;
}
