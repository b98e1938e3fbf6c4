//! Bank accounts as governed master data, through the application layer: a counterparty's account is
//! inactive until another person approves it, a change is a new pending version beside the active one, a
//! decision covers the hash that was shown, and every step is sealed and audited.

use fiscus_actions::rules::bank_accounts::{ProposedDetails, VersionState};
use fiscus_actions::steps::bank_accounts::{NewCounterparty, create_counterparty, decide, propose};
use fiscus_apptest::bank::{approved_supplier, change};
use fiscus_apptest::spawn_app;
use fiscus_domain::actor::Actor;
use fiscus_domain::bank_accounts::Owner;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::Currency;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::{Caller, Failure};

fn details(counterparty_id: &str, iban: &str) -> ProposedDetails {
    ProposedDetails {
        owner: Owner::Counterparty,
        counterparty_id: Some(counterparty_id.into()),
        currency: Currency::parse("EUR").expect("eur"),
        holder_name: "Lieferant GmbH".into(),
        iban: Some(iban.into()),
        local_number: None,
        local_scheme: None,
        bic: Some("COBADEFFXXX".into()),
        clearing_system: None,
        clearing_member: None,
        address: None,
    }
}

fn refused_with(result: Result<impl std::fmt::Debug, Failure>, words: &str) {
    match result {
        Err(Failure::Refused { detail, .. }) => assert!(detail.contains(words), "{detail}"),
        other => panic!("expected a refusal saying {words:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_counterparty_account_is_inactive_until_another_person_approves_it_and_a_change_waits_beside_it() {
    let app = spawn_app().await;
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let machine = Caller::bare(Actor::application(app.app_id.clone()));
    let alice = Caller::bare(Actor::operator("opr_alice"));
    let bob = Caller::bare(Actor::operator("opr_bob"));
    let store = &app.state.store;

    let mut tx = store.begin().await.expect("begin");
    let cp = create_counterparty(
        &mut tx,
        &tenant,
        &machine,
        NewCounterparty { name: "Lieferant GmbH".into(), reference: Some("SUP-7".into()) },
    )
    .await
    .expect("counterparty");
    tx.commit().await.expect("commit");
    let mut tx = store.begin().await.expect("begin");
    refused_with(
        create_counterparty(
            &mut tx,
            &tenant,
            &machine,
            NewCounterparty { name: "Again".into(), reference: Some("SUP-7".into()) },
        )
        .await,
        "reference",
    );
    drop(tx);

    let mut tx = store.begin().await.expect("begin");
    let v1 = propose(&mut tx, &tenant, &machine, None, details(&cp.id, "DE89370400440532013000")).await.expect("v1");
    tx.commit().await.expect("commit");
    assert_eq!((v1.state, v1.record.body.version), (VersionState::Pending, 1));
    let account = v1.record.body.account_id.clone();

    // A person approves; the hash shown must be the version's.
    let mut tx = store.begin().await.expect("begin");
    refused_with(
        decide(&mut tx, &tenant, &alice, Role::Approver, &v1.record.id, true, None, "sha256:other").await,
        "not the ones shown",
    );
    refused_with(
        decide(&mut tx, &tenant, &machine, Role::Approver, &v1.record.id, true, None, &v1.record.content_hash).await,
        "person",
    );
    drop(tx);
    let mut tx = store.begin().await.expect("begin");
    let active = decide(
        &mut tx,
        &tenant,
        &alice,
        Role::Approver,
        &v1.record.id,
        true,
        Some("called the supplier"),
        &v1.record.content_hash,
    )
    .await
    .expect("approve");
    tx.commit().await.expect("commit");
    assert_eq!(active.state, VersionState::Active);

    // A change is a new pending version; the old one stays active until the change is approved.
    let mut tx = store.begin().await.expect("begin");
    let v2 =
        propose(&mut tx, &tenant, &alice, Some(&account), details(&cp.id, "GB29NWBK60161331926819")).await.expect("v2");
    tx.commit().await.expect("commit");
    let mut tx = store.begin().await.expect("begin");
    refused_with(
        propose(&mut tx, &tenant, &machine, Some(&account), details(&cp.id, "FR1420041010050500013M02606")).await,
        "already pending",
    );
    refused_with(
        decide(&mut tx, &tenant, &alice, Role::Approver, &v2.record.id, true, None, &v2.record.content_hash).await,
        "proposed",
    );
    drop(tx);
    let mut conn = store.read().await.expect("conn");
    let states: Vec<VersionState> =
        fiscus_actions::tables::bank_accounts::versions_of(&mut conn, store.seal_key(), &tenant, &account)
            .await
            .expect("versions")
            .iter()
            .map(|v| v.state)
            .collect();
    assert_eq!(states, [VersionState::Active, VersionState::Pending]);
    drop(conn);
    let mut tx = store.begin().await.expect("begin");
    decide(&mut tx, &tenant, &bob, Role::Approver, &v2.record.id, true, None, &v2.record.content_hash)
        .await
        .expect("another person approves");
    tx.commit().await.expect("commit");
    let mut conn = store.read().await.expect("conn");
    let versions = fiscus_actions::tables::bank_accounts::versions_of(&mut conn, store.seal_key(), &tenant, &account)
        .await
        .expect("versions");
    assert_eq!(versions.iter().map(|v| v.state).collect::<Vec<_>>(), [VersionState::Superseded, VersionState::Active]);
    assert_ne!(versions[0].record.content_hash, versions[1].record.content_hash);

    // Every step is in the audit chain, and the sealed rows verify.
    assert_eq!(
        app.count("SELECT COUNT(*) FROM audit_events WHERE action IN ('counterparty.created', 'bank_account.proposed', 'bank_account.decision')").await,
        1 + 2 + 2
    );
    let report = fiscus_kernel::verify::verify_workspace(store, &app.workspace_id, None).await.expect("verify");
    assert_eq!(report.result, Ok(()));
}

#[tokio::test]
async fn an_unknown_counterparty_or_a_change_of_owner_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let machine = Caller::bare(Actor::application(app.app_id.clone()));
    let store = &app.state.store;
    let mut tx = store.begin().await.expect("begin");
    match propose(&mut tx, &tenant, &machine, None, details("cpt_01KBTA0C4GZ2Q5R8V1XWJ3N6M9", "DE89370400440532013000"))
        .await
    {
        Err(Failure::Missing(field, _)) => assert_eq!(field, "counterparty_id"),
        other => panic!("expected the counterparty to be missing, got {other:?}"),
    }
    drop(tx);
    let mut tx = store.begin().await.expect("begin");
    let cp =
        create_counterparty(&mut tx, &tenant, &machine, NewCounterparty { name: "Vendor".into(), reference: None })
            .await
            .expect("cp");
    let v1 = propose(&mut tx, &tenant, &machine, None, details(&cp.id, "DE89370400440532013000")).await.expect("v1");
    tx.commit().await.expect("commit");
    let mut own = details(&cp.id, "DE89370400440532013000");
    own.owner = Owner::Own;
    own.counterparty_id = None;
    let mut tx = store.begin().await.expect("begin");
    assert!(matches!(
        propose(&mut tx, &tenant, &machine, Some(&v1.record.body.account_id), own).await,
        Err(Failure::Invalid(_))
    ));
    assert!(matches!(
        propose(
            &mut tx,
            &tenant,
            &machine,
            Some("bac_01KBTA0C4GZ2Q5R8V1XWJ3N6M9"),
            details(&cp.id, "DE89370400440532013000")
        )
        .await,
        Err(Failure::NotFound)
    ));
    drop(tx);
    // The other environment sees none of it.
    let production = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Production };
    let mut tx = store.begin().await.expect("begin");
    assert!(matches!(
        propose(&mut tx, &production, &machine, None, details(&cp.id, "DE89370400440532013000")).await,
        Err(Failure::Missing(..))
    ));
    drop(tx);
    assert_eq!(app.count("SELECT COUNT(*) FROM bank_account_versions").await, 1);
}

/// A version's console page, as the signed-in person sees it.
async fn version_page(app: &fiscus_apptest::TestApp, cookie: &str, version_id: &str) -> String {
    fiscus_apptest::console::console_page(
        app,
        cookie,
        &format!("/console/bank-accounts/{version_id}?environment=sandbox"),
    )
    .await
}

async fn submit(
    app: &fiscus_apptest::TestApp,
    cookie: &str,
    version_id: &str,
    page: &str,
    decision: &str,
    hash: Option<&str>,
) -> reqwest::Response {
    let form = [
        ("csrf", fiscus_apptest::console::hidden(page, "csrf")),
        ("environment", "sandbox".to_string()),
        ("shown_hash", hash.map(str::to_string).unwrap_or_else(|| fiscus_apptest::console::hidden(page, "shown_hash"))),
        ("decision", decision.to_string()),
        ("note", "called the supplier on the number we hold".to_string()),
    ];
    fiscus_apptest::console::client()
        .post(app.url(&format!("/console/bank-accounts/{version_id}/decision")))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn people_approve_bank_details_at_the_console_seeing_the_old_and_new_side_by_side() {
    let app = spawn_app().await;
    let approver = fiscus_apptest::console::enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let viewer = fiscus_apptest::console::enrolled_operator(&app, "audrey@example.com", Role::Auditor).await;
    let cookie = fiscus_apptest::console::sign_in(&app, &approver).await;
    let cp: serde_json::Value = app
        .post_json("/api/v2/counterparties", &app.key, &serde_json::json!({ "name": "Lieferant GmbH" }), None)
        .await
        .json()
        .await
        .expect("json");
    let mut details = serde_json::json!({ "owner": "counterparty", "counterparty_id": cp["id"], "currency": "EUR",
        "holder_name": "Lieferant GmbH", "iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX" });
    let created = app.post_json("/api/v2/bank-accounts", &app.key, &details, None).await;
    assert_eq!(created.status(), 201);
    let account: serde_json::Value = created.json().await.expect("json");
    assert_eq!(account["status"], "inactive");
    let v1 = account["versions"][0]["id"].as_str().expect("v1").to_string();

    let queue = fiscus_apptest::console::console_page(&app, &cookie, "/console/bank-accounts").await;
    assert!(queue.contains(&v1) && queue.contains("Bank details"), "the queue lists the pending version");
    let page = version_page(&app, &cookie, &v1).await;
    assert!(page.contains("(none: a new account)") && page.contains("DE89370400440532013000"), "{page}");
    assert_eq!(submit(&app, &cookie, &v1, &page, "approve", Some("sha256:0")).await.status(), 409, "another hash");
    assert_eq!(submit(&app, &cookie, &v1, &page, "approve", None).await.status(), 303);
    let read: serde_json::Value = app
        .get(&format!("/api/v2/bank-accounts/{}", account["id"].as_str().expect("id")), &app.key)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!((read["status"].as_str(), read["versions"][0]["state"].as_str()), (Some("active"), Some("active")));
    assert_eq!(read["versions"][0]["decision_note"], "called the supplier on the number we hold");

    // A change: the page shows the active details beside the new ones, the changed line marked.
    details["iban"] = serde_json::json!("GB29 NWBK 6016 1331 9268 19");
    let changed = app
        .post_json(
            &format!("/api/v2/bank-accounts/{}/versions", account["id"].as_str().expect("id")),
            &app.key,
            &details,
            None,
        )
        .await;
    assert_eq!(changed.status(), 201);
    let changed: serde_json::Value = changed.json().await.expect("json");
    assert_eq!((changed["status"].as_str(), changed["pending_version"].is_string()), (Some("active"), true));
    let v2 = changed["pending_version"].as_str().expect("v2").to_string();
    let page = version_page(&app, &cookie, &v2).await;
    assert!(page.contains("IBAN DE89370400440532013000") && page.contains("IBAN GB29NWBK60161331926819"), "{page}");
    assert_eq!(page.matches("(changed)").count(), 1, "only the account line changed: {page}");

    // An auditor sees it and cannot decide it.
    let viewer_cookie = fiscus_apptest::console::sign_in(&app, &viewer).await;
    let seen = version_page(&app, &viewer_cookie, &v2).await;
    assert!(seen.contains("Only approvers and admins decide bank details."));
    assert_eq!(
        submit(
            &app,
            &viewer_cookie,
            &v2,
            &seen,
            "approve",
            Some(&fiscus_apptest::console::hidden(&page, "shown_hash"))
        )
        .await
        .status(),
        403
    );
    assert_eq!(submit(&app, &cookie, &v2, &page, "reject", None).await.status(), 303);
    let after: serde_json::Value = app
        .get(&format!("/api/v2/bank-accounts/{}", account["id"].as_str().expect("id")), &app.key)
        .await
        .json()
        .await
        .expect("json");
    let states: Vec<&str> =
        after["versions"].as_array().expect("versions").iter().map(|v| v["state"].as_str().expect("state")).collect();
    assert_eq!(states, ["active", "rejected"]);
}

#[tokio::test]
async fn a_payment_binds_the_approved_details_and_a_later_change_makes_its_approval_stale() {
    let app = spawn_app().await;
    let (cp, account, mut details) = approved_supplier(&app).await;
    let read: serde_json::Value =
        app.get(&format!("/api/v2/bank-accounts/{account}"), &app.key).await.json().await.expect("json");
    let bound_hash = read["versions"][0]["content_hash"].clone();

    // No approved account in this currency: nothing to pay to.
    let mut body = fiscus_apptest::actions::proposal();
    body["counterparty"] = serde_json::json!(cp);
    let usd = app.post_json("/api/v2/actions", &app.key, &body, None).await;
    assert_eq!(usd.status(), 409);
    let problem: serde_json::Value = usd.json().await.expect("json");
    assert_eq!(problem["code"], "reference_not_found", "{problem}");

    body["currency"] = serde_json::json!("EUR");
    body["required_checks"] = serde_json::json!([]);
    let created = app.post_json("/api/v2/actions", &app.key, &body, None).await;
    assert_eq!(created.status(), 201);
    let action: serde_json::Value = created.json().await.expect("json");
    let id = action["id"].as_str().expect("id").to_string();
    assert_eq!(action["envelope"]["required_checks"], serde_json::json!(["creditor_account"]), "{action}");
    let bound = &action["checks"][0];
    assert_eq!(
        (bound["check_key"].as_str(), bound["status"].as_str()),
        (Some("creditor_account"), Some("passed")),
        "{action}"
    );
    assert_eq!(bound["source_hash"], bound_hash);

    // No caller can vouch for details itself.
    let mut forged = fiscus_apptest::actions::check("passed");
    forged["check_key"] = serde_json::json!("creditor_account");
    let refused =
        app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &forged, None).await;
    assert_eq!(refused.status(), 422);

    // Approved by a person; then the supplier's details change and another person approves the change.
    let op = fiscus_apptest::console::enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    let page =
        fiscus_apptest::console::console_page(&app, &cookie, &format!("/console/actions/{id}?environment=sandbox"))
            .await;
    assert!(
        page.contains("Pays to") && page.contains("Lieferant GmbH, IBAN DE89 •••• 3000"),
        "the approver sees the payee, the account masked as banks show it: {page}"
    );
    assert_eq!(fiscus_apptest::console::decide(&app, &cookie, &id, "approve").await.status(), 303);
    details["iban"] = serde_json::json!("GB29NWBK60161331926819");
    let changed = change(&app, &account, &details).await;
    let v2 = changed["versions"][1].clone();
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let mut tx = app.state.store.begin().await.expect("begin");
    let person = Caller::bare(Actor::operator("opr_treasurer"));
    let v2_id = v2["id"].as_str().expect("v2");
    decide(&mut tx, &tenant, &person, Role::Admin, v2_id, true, None, v2["content_hash"].as_str().expect("hash"))
        .await
        .expect("approve the change");
    tx.commit().await.expect("commit");

    let after: serde_json::Value =
        app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(after["control_state"], "pending_approval", "the approval no longer covers it: {after}");
    let page =
        fiscus_apptest::console::console_page(&app, &cookie, &format!("/console/actions/{id}?environment=sandbox"))
            .await;
    assert!(page.contains("bank details changed") && page.contains("IBAN GB29 •••• 6819"), "{page}");
    let latest: Vec<(&str, i64)> = after["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| (c["status"].as_str().expect("status"), c["version"].as_i64().expect("version")))
        .collect();
    assert_eq!(latest, [("failed", 2)], "the latest version of the check: {after}");
    let execute = app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &serde_json::json!({}), None).await;
    assert!(execute.status().is_client_error(), "a payment to changed details never executes: {}", execute.status());
}
