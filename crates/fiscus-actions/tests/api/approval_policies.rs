//! The organisation's approval rules decide: policies written and approved by two admins at the console,
//! groups, the requirement each proposal gets (the same as the dry run's), tightening and loosening, and the
//! built-in separation of duties, all through the real server (SQLite, or PostgreSQL when configured).

use fiscus_apptest::bank::{accounts, bank_app, production_key};
use fiscus_apptest::console::{Operator, client, console_page, decide, decide_in, enrolled_operator, hidden, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

const LARGE_USD: &str = r#"{ "rules": [ { "name": "large-usd", "description": "Payments of a million dollars or more",
  "when": { "amount_at_least_minor": { "USD": 100000000 } },
  "require": { "groups": [ { "group": "treasury", "count": 2 }, { "group": "cfo", "count": 1 } ] } } ] }"#;

async fn post_form(app: &TestApp, cookie: &str, path: &str, form: &[(&str, String)]) -> reqwest::Response {
    client().post(app.url(path)).header("cookie", cookie).form(form).send().await.expect("request")
}

/// An admin writes `policy` for `environment`: the console's answer.
async fn write_policy(app: &TestApp, cookie: &str, environment: &str, policy: &str) -> reqwest::Response {
    let page = console_page(app, cookie, &format!("/console/approval-policies?environment={environment}")).await;
    let form = [("csrf", hidden(&page, "csrf")), ("environment", environment.into()), ("policy", policy.into())];
    post_form(app, cookie, "/console/approval-policies", &form).await
}

/// An admin decides the pending version as the page shows it.
async fn decide_policy(app: &TestApp, cookie: &str, environment: &str, decision: &str) -> reqwest::Response {
    let page = console_page(app, cookie, &format!("/console/approval-policies?environment={environment}")).await;
    let action = fiscus_apptest::console::between(&page, "action=\"/console/approval-policies/", "/decision\"");
    let form = [
        ("csrf", hidden(&page, "csrf")),
        ("environment", environment.into()),
        ("shown_hash", hidden(&page, "shown_hash")),
        ("decision", decision.into()),
    ];
    post_form(app, cookie, &format!("/console/approval-policies/{action}/decision"), &form).await
}

/// Two admins put `policy` in force.
async fn in_force(app: &TestApp, (author, second): (&str, &str), environment: &str, policy: &str) {
    let written = write_policy(app, author, environment, policy).await;
    assert_eq!(written.status(), 303, "{}", written.text().await.unwrap_or_default());
    let decided = decide_policy(app, second, environment, "approve").await;
    assert_eq!(decided.status(), 303, "{}", decided.text().await.unwrap_or_default());
}

/// Creates a group at the console with `members` in it.
async fn group(app: &TestApp, admin: &str, name: &str, members: &[&Operator]) {
    let page = console_page(app, admin, "/console/approver-groups").await;
    let created =
        post_form(app, admin, "/console/approver-groups", &[("csrf", hidden(&page, "csrf")), ("name", name.into())])
            .await;
    assert_eq!(created.status(), 303, "{}", created.text().await.unwrap_or_default());
    let mut conn = app.state.store.read().await.expect("read");
    let groups = fiscus_actions::tables::approver_groups::all(&mut conn, &app.workspace_id).await.expect("groups");
    let id = groups.iter().find(|g| g.name == name).expect("created").id.clone();
    for m in members {
        let form = [("csrf", hidden(&page, "csrf")), ("operator_id", m.id.clone()), ("change", "add".into())];
        let added = post_form(app, admin, &format!("/console/approver-groups/{id}/members"), &form).await;
        assert_eq!(added.status(), 303, "{}", added.text().await.unwrap_or_default());
    }
}

async fn two_admins(app: &TestApp) -> (String, String) {
    let ada = enrolled_operator(app, "ada.admin@example.com", Role::Admin).await;
    let bob = enrolled_operator(app, "bob.admin@example.com", Role::Admin).await;
    (sign_in(app, &ada).await, sign_in(app, &bob).await)
}

fn usd(amount_minor: i64) -> Value {
    json!({
        "kind": "payment", "amount_minor": amount_minor, "currency": "USD", "counterparty": "cp_acme_supplies",
        "connector": "sandbox", "execution_mode": "human_approved", "risk_tier": "T1", "reference": "INV-1",
    })
}

async fn propose(app: &TestApp, body: &Value) -> Value {
    let response = app.post_json("/api/v2/actions", &app.key, body, None).await;
    assert_eq!(response.status(), 201);
    response.json().await.expect("json")
}

async fn action(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json")
}

#[tokio::test]
async fn ten_million_dollars_needs_two_of_treasury_and_one_of_cfo_and_the_dry_run_said_so() {
    let app = spawn_app().await;
    let (ada, bob) = two_admins(&app).await;
    let t1 = enrolled_operator(&app, "t1@example.com", Role::Approver).await;
    let t2 = enrolled_operator(&app, "t2@example.com", Role::Approver).await;
    let cfo = enrolled_operator(&app, "cfo@example.com", Role::Approver).await;
    group(&app, &ada, "treasury", &[&t1, &t2]).await;
    group(&app, &ada, "cfo", &[&cfo]).await;
    in_force(&app, (&ada, &bob), "sandbox", LARGE_USD).await;

    let policies: Value = app.get("/api/v2/actions/approval-policies", &app.key).await.json().await.expect("json");
    assert_eq!(policies["in_force"]["version"], 1, "{policies}");
    assert_eq!(policies["in_force"]["policy"]["rules"][0]["name"], "large-usd");
    assert_eq!(policies["pending"], Value::Null);
    assert_eq!(policies["default"], json!({ "t1_quorum": 1, "t2_quorum": 2 }));

    let dry = app.post_json("/api/v2/actions/approval-policies/dry-run", &app.key, &usd(1_000_000_000), None).await;
    assert_eq!(dry.status(), 200);
    let dry: Value = dry.json().await.expect("json");
    assert_eq!(dry["in_words"], "3 people: 1 of cfo and 2 of treasury", "{dry}");
    assert_eq!(dry["requirement"]["matched_rules"], json!(["large-usd"]));
    let created = propose(&app, &usd(1_000_000_000)).await;
    assert_eq!(created["approvals"]["requirement"], dry["requirement"], "the proposal gets what the dry run said");
    assert_eq!(created["approvals"]["policy"], dry["policy"]);
    assert_eq!(created["approvals"]["policy"]["version"], 1);
    let id = created["id"].as_str().expect("id");

    for op in [&t1, &t2] {
        let cookie = sign_in(&app, op).await;
        assert_eq!(decide(&app, &cookie, id, "approve").await.status(), 303);
    }
    let two = action(&app, id).await;
    assert_eq!(two["control_state"], "pending_approval", "two of treasury are not enough: {two}");
    assert_eq!(two["approvals"]["current"], 2);
    assert_eq!(two["approvals"]["still_needed"], "1 more of cfo");
    let cfo = sign_in(&app, &cfo).await;
    let page = console_page(&app, &cfo, &format!("/console/actions/{id}?environment=sandbox")).await;
    assert!(page.contains("1 more of cfo") && page.contains("large-usd"), "the page says who still must approve");
    assert_eq!(decide(&app, &cfo, id, "approve").await.status(), 303);
    assert_eq!(action(&app, id).await["control_state"], "approved");

    // A small payment matches no rule: the tier's quorum, with the policy version named.
    let small = propose(&app, &usd(5_000)).await;
    assert_eq!(small["approvals"]["required"], 1);
    assert_eq!(small["approvals"]["requirement"]["matched_rules"], json!([]));
    assert_eq!(small["approvals"]["policy"]["version"], 1);
}

#[tokio::test]
async fn a_rule_refusing_a_connector_in_production_refuses_the_proposal_and_names_the_rule() {
    let dir = tempfile::tempdir().expect("dir");
    let app = bank_app(dir.path()).await;
    let key = production_key(&app).await;
    let supplier = accounts(&app, &key).await;
    let (carol, dan) = two_admins(&app).await;
    let refuse = r#"{ "rules": [ { "name": "no-bank-files-yet", "when": { "connectors": ["iso20022"] },
        "refuse": "bank files are not approved for production yet" } ] }"#;
    in_force(&app, (&carol, &dan), "production", refuse).await;
    let before = app.count("SELECT COUNT(*) FROM actions").await;
    let body = json!({
        "kind": "payment", "amount_minor": 1000, "currency": "EUR", "counterparty": supplier,
        "connector": "iso20022", "execution_mode": "human_approved", "risk_tier": "T2", "reference": "R-1",
    });
    let p = problem(app.post_json("/api/v2/actions", &key, &body, None).await, 422, "policy_refused").await;
    assert_eq!(p["rule"], "no-bank-files-yet", "{p}");
    assert_eq!(p["policy"]["version"], 1);
    assert!(p["detail"].as_str().expect("detail").contains("no-bank-files-yet"));
    assert_eq!(app.count("SELECT COUNT(*) FROM actions").await, before, "nothing was recorded");
    // The sandbox has its own policy (none): the same proposal is not refused there.
    let dry = app.post_json("/api/v2/actions/approval-policies/dry-run", &key, &body, None).await;
    let dry: Value = dry.json().await.expect("json");
    assert_eq!(dry["refused"], true, "the dry run in production says so too: {dry}");
}

#[tokio::test]
async fn a_tightening_reopens_approved_actions_and_a_loosening_leaves_proposed_ones_as_they_were() {
    let app = spawn_app().await;
    let (ada, bob) = two_admins(&app).await;
    let t1 = enrolled_operator(&app, "t1@example.com", Role::Approver).await;
    let t2 = enrolled_operator(&app, "t2@example.com", Role::Approver).await;
    let approved = propose(&app, &usd(5_000)).await;
    let pending = propose(&app, &usd(6_000)).await;
    let (a, p) = (approved["id"].as_str().expect("id"), pending["id"].as_str().expect("id"));
    assert_eq!(decide(&app, &sign_in(&app, &t1).await, a, "approve").await.status(), 303);
    assert_eq!(action(&app, a).await["control_state"], "approved");

    let two = r#"{ "rules": [ { "name": "four-eyes", "require": { "quorum": 2 } } ] }"#;
    in_force(&app, (&ada, &bob), "sandbox", two).await;
    let reopened = action(&app, a).await;
    assert_eq!(reopened["control_state"], "pending_approval", "one approval no longer suffices: {reopened}");
    assert_eq!(reopened["approvals"]["required"], 2);
    assert_eq!(reopened["approvals"]["still_needed"], "1 more approver");
    let last = reopened["history"].as_array().expect("history").last().expect("event").clone();
    assert_eq!(last["event"], "action.approval_invalidated");
    assert_eq!(last["detail"]["reason"], "approval_policy_tightened", "the history says why: {last}");
    assert_eq!(action(&app, p).await["approvals"]["required"], 2, "a pending action is tightened too");
    assert_eq!(decide(&app, &sign_in(&app, &t2).await, a, "approve").await.status(), 303);
    assert_eq!(action(&app, a).await["control_state"], "approved", "the earlier approval still counts");

    // A loosening never applies to actions already proposed; new ones get it.
    in_force(&app, (&bob, &ada), "sandbox", r#"{ "rules": [] }"#).await;
    assert_eq!(action(&app, p).await["approvals"]["required"], 2);
    assert_eq!(action(&app, p).await["approvals"]["policy"]["version"], 1, "it cites the tightening's version");
    assert_eq!(propose(&app, &usd(7_000)).await["approvals"]["required"], 1);
    let policies: Value = app.get("/api/v2/actions/approval-policies", &app.key).await.json().await.expect("json");
    assert_eq!(policies["in_force"]["version"], 2, "{policies}");
}

#[tokio::test]
async fn a_policy_change_without_a_second_admin_changes_nothing() {
    let app = spawn_app().await;
    let (ada, _bob) = two_admins(&app).await;
    let approver = enrolled_operator(&app, "eve@example.com", Role::Approver).await;
    let eve = sign_in(&app, &approver).await;
    let two = r#"{ "rules": [ { "name": "four-eyes", "require": { "quorum": 2 } } ] }"#;
    let refused = write_policy(&app, &eve, "sandbox", two).await;
    assert_eq!(refused.status(), 403, "only admins write policies");
    assert_eq!(write_policy(&app, &ada, "sandbox", two).await.status(), 303);
    let page = console_page(&app, &ada, "/console/approval-policies?environment=sandbox").await;
    assert!(!page.contains("/decision\""), "its author is offered no decision");
    // Posting the decision anyway is refused, and so is an approver's.
    let form_page = page.clone();
    assert_eq!(app.count("SELECT COUNT(*) FROM approval_policies WHERE state = 'pending'").await, 1);
    let version: (String, String) = sqlx::query_as("SELECT id, content_hash FROM approval_policies")
        .fetch_one(&mut *app.state.store.read().await.expect("read"))
        .await
        .expect("version");
    let form = |page: &str| {
        vec![
            ("csrf", hidden(page, "csrf")),
            ("environment", "sandbox".to_string()),
            ("shown_hash", version.1.clone()),
            ("decision", "approve".to_string()),
        ]
    };
    let own =
        post_form(&app, &ada, &format!("/console/approval-policies/{}/decision", version.0), &form(&form_page)).await;
    assert_eq!(own.status(), 409);
    let eve_page = console_page(&app, &eve, "/console/approval-policies?environment=sandbox").await;
    let not_admin =
        post_form(&app, &eve, &format!("/console/approval-policies/{}/decision", version.0), &form(&eve_page)).await;
    assert_eq!(not_admin.status(), 403);
    let policies: Value = app.get("/api/v2/actions/approval-policies", &app.key).await.json().await.expect("json");
    assert_eq!(policies["in_force"], Value::Null, "{policies}");
    assert_eq!(policies["pending"]["version"], 1);
    assert_eq!(propose(&app, &usd(5_000)).await["approvals"]["required"], 1, "nothing changed for proposals");
    // A policy naming a group that does not exist is refused whole.
    let second = enrolled_operator(&app, "zed.admin@example.com", Role::Admin).await;
    let zed = sign_in(&app, &second).await;
    assert_eq!(decide_policy(&app, &zed, "sandbox", "reject").await.status(), 303);
    let unknown = r#"{ "rules": [ { "name": "cfo", "require": { "groups": [ { "group": "cfo", "count": 1 } ] } } ] }"#;
    let refused = write_policy(&app, &ada, "sandbox", unknown).await;
    assert_eq!(refused.status(), 422);
    assert!(refused.text().await.expect("page").contains("the group `cfo` does not exist"));
}

#[tokio::test]
async fn who_approved_the_bank_details_lately_is_never_the_sole_approver_of_a_payment_to_them() {
    let app = spawn_app().await;
    let t1 = enrolled_operator(&app, "t1@example.com", Role::Approver).await;
    let t2 = enrolled_operator(&app, "t2@example.com", Role::Approver).await;
    let t1_cookie = sign_in(&app, &t1).await;
    let cp: Value = app
        .post_json("/api/v2/counterparties", &app.key, &json!({ "name": "Lieferant GmbH" }), None)
        .await
        .json()
        .await
        .expect("json");
    let details = json!({ "owner": "counterparty", "counterparty_id": cp["id"], "currency": "EUR",
        "holder_name": "Lieferant GmbH", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX" });
    let account: Value =
        app.post_json("/api/v2/bank-accounts", &app.key, &details, None).await.json().await.expect("json");
    let version = account["versions"][0]["id"].as_str().expect("version");
    let page = console_page(&app, &t1_cookie, &format!("/console/bank-accounts/{version}?environment=sandbox")).await;
    let form = [
        ("csrf", hidden(&page, "csrf")),
        ("environment", "sandbox".into()),
        ("shown_hash", hidden(&page, "shown_hash")),
        ("decision", "approve".into()),
    ];
    assert_eq!(
        post_form(&app, &t1_cookie, &format!("/console/bank-accounts/{version}/decision"), &form).await.status(),
        303
    );

    let payment = json!({
        "kind": "payment", "amount_minor": 1000, "currency": "EUR", "counterparty": cp["id"],
        "connector": "sandbox", "execution_mode": "human_approved", "risk_tier": "T1", "reference": "R-1",
    });
    let id = propose(&app, &payment).await["id"].as_str().expect("id").to_string();
    assert_eq!(decide_in(&app, &t1_cookie, &id, "approve", "sandbox").await.status(), 303);
    let after = action(&app, &id).await;
    assert_eq!(after["control_state"], "pending_approval", "not alone: {after}");
    assert_eq!(after["approvals"]["still_needed"], "1 more approver");
    assert_eq!(decide(&app, &sign_in(&app, &t2).await, &id, "approve").await.status(), 303);
    assert_eq!(action(&app, &id).await["control_state"], "approved");
    // What counted is sealed beside each decision: t1's bar and both operators' groups (none).
    let sealed =
        app.count("SELECT COUNT(*) FROM decision_contexts WHERE body LIKE '%\"sole_approver_barred\":true%'").await;
    assert_eq!(sealed, 1);
}
