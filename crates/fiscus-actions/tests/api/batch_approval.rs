//! A person approves a thousand payments well: the console's batch approval, driven as a person drives it
//! (a page, a form, the result), over a payment run of 1,000 proposals among others. Counted: the requests
//! the person makes and the wall time; checked: every action has its own decision bound to its own envelope
//! hash, an item that changed after the page was drawn is left out and named, the batch is a sealed record in
//! the log, and T2 items need a second person's batch.

use std::time::Instant;

use fiscus_actions::rules::envelope::{Origin, ProposalRequest};
use fiscus_apptest::console::{
    Operator, between, clear_of_a_step_end, client, console_page, enrolled_operator, hidden, login, now_seconds,
};
use fiscus_apptest::{TestApp, spawn_app};
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};

/// Proposes `n` payments of the run `prefix` as the test's application would (the governed step itself, a
/// hundred to a transaction, to spare the test a thousand HTTP round trips): their ids.
async fn propose_run(app: &TestApp, prefix: &str, n: usize, tier: &str) -> Vec<String> {
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let caller = Caller::bare(Actor::application(app.app_id.clone()));
    let mut ids = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        let mut tx = app.state.store.begin().await.expect("begin");
        for i in chunk {
            let request: ProposalRequest = serde_json::from_value(json!({
                "kind": "payment", "amount_minor": 10_000 + (*i as i64) * 7, "currency": "EUR",
                "counterparty": format!("supplier-{}", i % 40), "connector": "sandbox",
                "execution_mode": "human_approved", "risk_tier": tier, "reference": format!("{prefix}{i:04}"),
            }))
            .expect("request");
            let envelope = request.validate().expect("valid");
            let loaded = fiscus_actions::steps::propose::propose(
                &mut tx,
                &app.state.settings,
                &tenant,
                &caller,
                envelope,
                Origin::Application,
            )
            .await
            .expect("proposed");
            ids.push(loaded.action.id);
        }
        tx.commit().await.expect("commit");
    }
    ids
}

/// Signs in with the current step's code (enrolment spent the previous one), leaving the next step's code for
/// the batch's confirmation, as a person's authenticator would show it a moment later.
async fn sign_in(app: &TestApp, op: &Operator) -> String {
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&op.secret, now_seconds());
    let response = login(app, &op.email, &op.password, &code).await;
    assert_eq!(response.status(), 303, "sign-in refused");
    let cookie = response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("cookie").to_string();
    cookie.split(';').next().expect("pair").to_string()
}

/// The batch page a person opens with `query`.
async fn batch_page(app: &TestApp, cookie: &str, query: &str) -> String {
    console_page(app, cookie, &format!("/console/approvals/batch?environment=sandbox&{query}")).await
}

/// Decides what `page` shows, with a fresh code, and opens the result: the result page.
async fn decide_shown(app: &TestApp, cookie: &str, op: &Operator, page: &str, decision: &str) -> String {
    assert!(page.contains("id=\"batch-form\""), "{}", &page[..page.len().min(4000)]);
    // A fresh code: the sign-in spent the step it used, so this is the next step's (one step of drift is
    // accepted).
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&op.secret, now_seconds() + 30);
    let mut form: Vec<(String, String)> = vec![
        ("csrf".into(), hidden(page, "csrf")),
        ("environment".into(), "sandbox".into()),
        ("items".into(), hidden(page, "items")),
        ("reason".into(), "payment run checked against the AP ledger".into()),
        ("code".into(), code),
        ("decision".into(), decision.into()),
    ];
    for name in ["f_reference", "f_currency"] {
        if page.contains(&format!("name=\"{name}\"")) {
            form.push((name.into(), hidden(page, name)));
        }
    }
    let posted = client()
        .post(app.url("/console/approvals/batch"))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(posted.status(), 303, "{}", posted.text().await.unwrap_or_default());
    let location = posted.headers().get("location").and_then(|v| v.to_str().ok()).expect("location").to_string();
    console_page(app, cookie, &location).await
}

/// The whole batch as a person does it: the page, the decision, the result.
async fn batch(app: &TestApp, cookie: &str, op: &Operator, query: &str, decision: &str) -> String {
    let page = batch_page(app, cookie, query).await;
    decide_shown(app, cookie, op, &page, decision).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_a_run_of_a_thousand_payments_in_one_batch() {
    let app = spawn_app().await;
    let run = propose_run(&app, "RUN-2026-12-08-", 1000, "T1").await;
    let others = propose_run(&app, "OTHER-", 5, "T1").await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &ada).await;
    // The person's three requests: the filtered page (read as a person reviews it), the decision, the result.
    let started = Instant::now();
    let page = batch_page(&app, &cookie, "reference=RUN-2026-12-08-&currency=EUR").await;
    assert!(page.contains("<strong>1000</strong> actions you can decide"), "{}", between(&page, "<main", "</section>"));
    assert!(page.contains("id=\"batch-totals\"") && page.contains("id=\"batch-largest\""));
    assert!(page.contains("1000 need 1 person, any approvers: your approval completes 1000"));
    assert!(page.contains("named only by text"), "text counterparties are flagged");
    // One of them changes after the page was drawn: a new check version, so its check set hash moves on.
    let changed = &run[17];
    let check = fiscus_apptest::actions::check("passed");
    let r =
        app.post_json(&format!("/api/v2/actions/investment-execution/{changed}/checks"), &app.key, &check, None).await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap_or_default());
    let result = decide_shown(&app, &cookie, &ada, &page, "approve").await;
    let took = started.elapsed();
    assert!(took.as_secs() <= 60, "the batch took {took:?}");
    println!("a batch of 1,000 approvals: 3 requests, {took:?} (the code's wait included)");
    assert!(result.contains("decided <strong>999</strong> actions"), "{}", between(&result, "<main", "</main>"));
    assert!(
        result.contains(changed.as_str()) && result.contains("changed since it was shown"),
        "the changed one is named"
    );

    // Every action of the run but the changed one is approved, each by a decision of its own bound to its own
    // envelope hash; the rest of the queue is untouched.
    let approved = app
        .count(
            "SELECT COUNT(*) FROM actions a JOIN action_decisions d ON d.action_id = a.id \
             WHERE a.reference LIKE 'RUN-2026-12-08-%' AND a.control_state = 'approved' \
             AND d.envelope_hash = a.envelope_hash AND d.decision = 'approve'",
        )
        .await;
    assert_eq!(approved, 999);
    assert_eq!(app.count("SELECT COUNT(DISTINCT id) FROM action_decisions").await, 999);
    for id in &others {
        let a: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
        assert_eq!(a["control_state"], "pending_approval");
    }
    // The batch is one sealed record, in the log with a proof, naming every decision.
    let batch_id = between(&result, "sealed record <code>", "</code>").to_string();
    app.drain().await;
    let signed = app.post_json("/api/v2/evidence/checkpoints", &app.key, &json!({}), None).await;
    assert!(signed.status().is_success(), "a checkpoint over the batch");
    let proof = app.get(&format!("/api/v2/evidence/records/{batch_id}/proof"), &app.key).await;
    assert_eq!(proof.status(), 200, "{}", proof.text().await.unwrap_or_default());
    let listed = app
        .count(&format!("SELECT COUNT(*) FROM approval_batches WHERE id = '{batch_id}' AND body LIKE '%dec_%'"))
        .await;
    assert_eq!(listed, 1);
    let in_batch = app.count(&format!("SELECT COUNT(*) FROM decision_contexts WHERE body LIKE '%{batch_id}%'")).await;
    assert_eq!(in_batch, 999, "each decision names its batch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_t2_payments_needs_a_second_persons_batch() {
    let app = spawn_app().await;
    let run = propose_run(&app, "T2RUN-", 20, "T2").await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let bob = enrolled_operator(&app, "bob@example.com", Role::Approver).await;
    let ada_cookie = sign_in(&app, &ada).await;
    let first = batch(&app, &ada_cookie, &ada, "reference=T2RUN-", "approve").await;
    assert!(
        first.contains("20</strong> actions") && first.contains("0 approved, 20 still awaiting other people"),
        "{first}"
    );
    let a: Value = app.get(&format!("/api/v2/actions/{}", run[0]), &app.key).await.json().await.expect("json");
    assert_eq!(a["control_state"], "pending_approval");
    assert_eq!(a["approvals"]["still_needed"], "1 more approver");
    // Ada's second look finds nothing more for her to do.
    let again = console_page(&app, &ada_cookie, "/console/approvals/batch?environment=sandbox&reference=T2RUN-").await;
    assert!(again.contains("you approved it already") && !again.contains("id=\"batch-form\""));
    let bob_cookie = sign_in(&app, &bob).await;
    let second = batch(&app, &bob_cookie, &bob, "reference=T2RUN-", "approve").await;
    assert!(second.contains("20 approved"), "{second}");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions WHERE control_state = 'approved'").await, 20);
    let page = console_page(&app, &bob_cookie, "/console/approvals/batch?environment=sandbox").await;
    assert!(!page.contains("id=\"batch-form\""), "nothing is left for Bob");
}
