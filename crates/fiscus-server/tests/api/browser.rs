//! A real browser (Debian's headless Chromium, driven by playwright-core from `clients/browser`) signs an
//! operator in with password and TOTP and approves an action at the console, and approves a model portfolio
//! on the way from a universe to a reconciled trade. `scripts/test` installs both; `FISCUS_CHROMIUM` may
//! point at another Chromium.

use fiscus_apptest::console::enrolled_operator;
use fiscus_apptest::spawn_app;
use fiscus_domain::people::Role;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_signs_in_with_password_and_totp_and_approves_in_chromium() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let created: Value = app
        .post_json("/api/v2/actions", &app.key, &fiscus_apptest::actions::proposal(), None)
        .await
        .json()
        .await
        .expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/browser");
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "the browser test needs playwright-core: run scripts/test (it runs `npm ci` in clients/browser)"
    );
    let args = vec![
        dir.join("approve.mjs").display().to_string(),
        app.base.clone(),
        op.email.clone(),
        op.password.clone(),
        fiscus_console::totp::base32(&op.secret),
        id.clone(),
    ];
    let out = tokio::task::spawn_blocking(move || Command::new("node").args(&args).output().expect("run node"))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "browser run failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("browser: ok"), "{stdout}");
    let after: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(after["control_state"], "approved");
}

/// Runs a script of `clients/browser` with node and returns its output, asserting it reached `browser: ok`.
async fn browse(script: &str, args: Vec<String>) -> String {
    browse_with(script, args, &[]).await
}

/// The same, with environment variables for the script.
async fn browse_with(script: &str, args: Vec<String>, env: &[(&str, String)]) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/browser");
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "the browser test needs playwright-core: run scripts/test (it runs `npm ci` in clients/browser)"
    );
    let mut all = vec![dir.join(script).display().to_string()];
    all.extend(args);
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let out =
        tokio::task::spawn_blocking(move || Command::new("node").args(&all).envs(env).output().expect("run node"))
            .await
            .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "browser run failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("browser: ok"), "{stdout}");
    stdout
}

/// A payment run of 1,000 approved in one batch in Chromium: from the pending approvals page to the batch page,
/// the run filtered by its reference prefix, reviewed, confirmed with a fresh code, decided; every action
/// approved with its own decision, in a handful of pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_approves_a_payment_run_of_a_thousand_in_one_batch_in_chromium() {
    use fiscus_actions::rules::envelope::{Origin, ProposalRequest};
    let app = spawn_app().await;
    // The run, proposed through the governed step as the application's (a thousand HTTP round trips would
    // only slow the test), and one payment outside it.
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    let caller = fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::application(app.app_id.clone()));
    for chunk in (0..1000).collect::<Vec<i64>>().chunks(100) {
        let mut tx = app.state.store.begin().await.expect("begin");
        for i in chunk {
            let request: ProposalRequest = serde_json::from_value(serde_json::json!({
                "kind": "payment", "amount_minor": 10_000 + i * 13, "currency": "EUR", "counterparty": format!("supplier-{}", i % 25),
                "connector": "sandbox", "execution_mode": "human_approved", "risk_tier": "T1", "reference": format!("RUN-7-{i:04}"),
            }))
            .expect("request");
            let envelope = request.validate().expect("valid");
            fiscus_actions::steps::propose::propose(
                &mut tx,
                &app.state.settings,
                &tenant,
                &caller,
                envelope,
                Origin::Application,
            )
            .await
            .expect("proposed");
        }
        tx.commit().await.expect("commit");
    }
    assert_eq!(
        app.post_json("/api/v2/actions", &app.key, &fiscus_apptest::actions::proposal(), None).await.status(),
        201
    );
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let args = vec![
        app.base.clone(),
        op.email.clone(),
        op.password.clone(),
        fiscus_console::totp::base32(&op.secret),
        "RUN-7-".to_string(),
        "1000".to_string(),
    ];
    let stdout = browse_with("batch.mjs", args, &[]).await;
    let pages: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("pages loaded by the person after signing in: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("pages");
    assert!(pages <= 10, "{stdout}");
    assert_eq!(app.count("SELECT COUNT(*) FROM actions WHERE control_state = 'approved'").await, 1000);
    assert_eq!(app.count("SELECT COUNT(*) FROM actions WHERE control_state = 'pending_approval'").await, 1);
    let own = app
        .count("SELECT COUNT(*) FROM actions a JOIN action_decisions d ON d.action_id = a.id AND d.envelope_hash = a.envelope_hash")
        .await;
    assert_eq!(own, 1000, "each action its own decision, bound to its own envelope hash");
}

/// The investment chain with its two human steps taken in Chromium: the model portfolio's approval and the
/// trade's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_approves_a_model_portfolio_and_its_trade_in_chromium() {
    use serde_json::json;
    let app = spawn_app().await;
    app.load_demo().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let signed = |extra: Vec<String>| {
        let mut a =
            vec![app.base.clone(), op.email.clone(), op.password.clone(), fiscus_console::totp::base32(&op.secret)];
        a.extend(extra);
        a
    };
    let post = |path: &str, body: Value| {
        let path = path.to_string();
        let app = &app;
        async move {
            let r = app.post_json(&path, &app.key, &body, None).await;
            assert!(r.status().is_success(), "{path}: {}", r.status());
            r.json::<Value>().await.expect("json")
        }
    };
    let universe = json!({ "name": "Quality", "theme": "quality", "source": "research",
        "members": [{ "symbol": "MSFT", "relevance": 0.95 }, { "symbol": "AAPL", "relevance": 0.9 },
                    { "symbol": "JNJ", "relevance": 0.8 }, { "symbol": "PG", "relevance": 0.7 }, { "symbol": "KO", "relevance": 0.5 }] });
    let u = post("/api/v2/investment/themes/universes", universe).await["id"].clone();
    let model = post(&format!("/api/v2/investment/themes/universes/{u}/model-portfolio"), json!({ "limit": 5 })).await;
    let (model_id, hash) =
        (model["id"].as_str().expect("id").to_string(), model["content_hash"].as_str().expect("hash").to_string());
    browse("approve-model.mjs", signed(vec![model_id.clone(), hash.clone()])).await;
    let operation = post(
        "/api/v2/investment/governed-ai-operations",
        json!({ "portfolio_id": 1, "model_portfolio": model_id, "objective": "Onto the quality model" }),
    )
    .await;
    let proposal = post(
        &format!("/api/v2/investment/governed-ai-operations/{}/rebalance", operation["id"].as_str().expect("id")),
        json!({}),
    )
    .await;
    let action = post(
        &format!("/api/v2/investment/rebalance-proposals/{}/actions", proposal["id"].as_str().expect("id")),
        json!({ "risk_tier": "T1" }),
    )
    .await;
    let id = action["id"].as_str().expect("id").to_string();
    // Another approver takes the trade (a TOTP code is good once, and the first one is spent).
    let grace = enrolled_operator(&app, "grace@example.com", Role::Approver).await;
    let args = vec![
        app.base.clone(),
        grace.email.clone(),
        grace.password.clone(),
        fiscus_console::totp::base32(&grace.secret),
        id.clone(),
    ];
    browse("approve.mjs", args).await;
    post(&format!("/api/v2/actions/{id}/execute"), json!({})).await;
    app.drain().await;
    let state: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(state["control_state"], "completed", "{state}");
    assert_eq!(state["envelope"]["metadata"]["model_portfolio_hash"], hash);
    assert!(app.count("SELECT COUNT(*) FROM tax_lots WHERE origin = 'trade'").await > 0);
}

/// The workflow chain of issue 14 as a person and a subscriber see it: a library workflow installed and run,
/// paused for review, approved in Chromium, completed, and its events delivered signed to a webhook
/// receiver, where the unmodified `standardwebhooks` and `svix` libraries verify them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_workflow_is_approved_in_chromium_and_its_signed_events_verify() {
    use crate::webhook_delivery::{Answer, loopback_app, receiver, register};
    let app = loopback_app().await;
    let rx = receiver(|_| Answer::Status(200)).await;
    let (_, secret) = register(&app, &format!("http://{}/hook", rx.addr)).await;
    crate::workflows::demo(&app).await;
    let version = crate::workflows::installed(&app, "model_monitoring").await;
    let run = crate::workflows::started(&app, &version).await;
    crate::workflows::reaches(&app, &run, "awaiting_review").await;
    let op = enrolled_operator(&app, "model-risk@example.com", Role::Approver).await;
    browse(
        "review-workflow.mjs",
        vec![
            app.base.clone(),
            op.email.clone(),
            op.password.clone(),
            fiscus_console::totp::base32(&op.secret),
            run.clone(),
            "model_risk_review".into(),
        ],
    )
    .await;
    let done = crate::workflows::reaches(&app, &run, "completed").await;
    assert_eq!(done["steps"][5]["output"]["note"], "figures reviewed in the browser");

    let got = rx.wait_for(3, std::time::Duration::from_secs(15)).await;
    let types: Vec<String> = got
        .iter()
        .map(|g| serde_json::from_str::<Value>(&g.body).expect("json")["type"].as_str().expect("type").to_string())
        .collect();
    assert_eq!(types, ["workflow.invoked", "workflow.awaiting_review", "workflow.completed"]);
    let deliveries: Vec<Value> = got
        .iter()
        .map(|g| serde_json::json!({ "id": g.id, "timestamp": g.timestamp, "signature": g.signature, "body": g.body }))
        .collect();
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("deliveries.json");
    std::fs::write(&path, serde_json::to_vec(&deliveries).expect("json")).expect("write");
    let path = path.to_string_lossy().to_string();
    let out = tokio::task::spawn_blocking(move || crate::python_clients::run("webhook_verify.py", &[&secret, &path]))
        .await
        .expect("join");
    assert!(out.contains("webhook verifiers: ok"), "{out}");
}

/// What the accessibility run's bank and rules pages list: a sandbox payment paid through a file and booked by
/// a notification (two people stand in for the console's decisions), and an approval policy in force with
/// the groups it names.
async fn bank_side_and_policy(app: &fiscus_apptest::TestApp) {
    use fiscus_domain::actor::Actor;
    use fiscus_kernel::governed::Caller;
    use serde_json::json;
    let tenant = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    let own = json!({ "owner": "own", "currency": "EUR", "holder_name": "Example Treasury GmbH",
        "iban": "FR1420041010050500013M02606", "bic": "PSSTFRPPXXX" });
    let own: Value = app.post_json("/api/v2/bank-accounts", &app.key, &own, None).await.json().await.expect("json");
    fiscus_apptest::bank::approve_first_version(app, &own).await;
    let (supplier, _, _) = fiscus_apptest::bank::approved_supplier(app).await;
    let payment = json!({ "kind": "payment", "amount_minor": 125000, "currency": "EUR", "counterparty": supplier,
        "connector": "iso20022", "execution_mode": "human_approved", "risk_tier": "T1", "reference": "INV-2026-0107" });
    let paid: Value = app.post_json("/api/v2/actions", &app.key, &payment, None).await.json().await.expect("json");
    let paid = paid["id"].as_str().expect("id").to_string();
    let a: Value = app.get(&format!("/api/v2/actions/{paid}"), &app.key).await.json().await.expect("json");
    let mut tx = app.state.store.begin().await.expect("begin");
    let seen = fiscus_actions::steps::decide::Seen {
        envelope_hash: a["envelope_hash"].as_str().expect("hash"),
        check_set_hash: a["check_set_hash"].as_str().expect("hash"),
        batch_id: None,
        reason: None,
    };
    let person = Caller::bare(Actor::operator("opr_01KBTA0C4GZ2Q5R8V1XWJ3N6MB"));
    fiscus_actions::steps::decide::decide(
        &mut tx,
        &app.state.settings,
        &tenant,
        &person,
        Role::Approver,
        &paid,
        fiscus_actions::rules::approval::Decision::Approve,
        &seen,
    )
    .await
    .expect("approved");
    for name in ["treasury", "cfo"] {
        fiscus_actions::tables::approver_groups::create(&mut tx, &app.workspace_id, name, None, "operator:opr_ada", 1)
            .await
            .expect("group");
    }
    let policy = serde_json::from_value(json!({ "rules": [
        { "name": "large-payments", "description": "Payments of 1m or more need treasury and the CFO",
          "when": { "amount_at_least_minor": { "EUR": 100000000 } },
          "require": { "groups": [ { "group": "treasury", "count": 2 }, { "group": "cfo", "count": 1 } ] } },
        { "name": "no-crypto", "when": { "connectors": ["crypto"] }, "refuse": "not a connector we pay through" } ] }))
    .expect("policy");
    let ada = Caller::bare(Actor::operator("opr_01KBTA0C4GZ2Q5R8V1XWJ3N6MC"));
    let v =
        fiscus_actions::steps::policies::propose(&mut tx, &tenant, &ada, Role::Admin, policy).await.expect("propose");
    let bob = Caller::bare(Actor::operator("opr_01KBTA0C4GZ2Q5R8V1XWJ3N6MD"));
    let hash = v.record.content_hash.clone();
    fiscus_actions::steps::policies::decide(
        &mut tx,
        &app.state.settings,
        &tenant,
        &bob,
        Role::Admin,
        &v.record.id,
        true,
        None,
        &hash,
    )
    .await
    .expect("in force");
    tx.commit().await.expect("commit");
    assert!(
        app.post_json(&format!("/api/v2/actions/{paid}/execute"), &app.key, &json!({}), None)
            .await
            .status()
            .is_success()
    );
    app.drain().await;
    let booked = fiscus_apptest::bank::notification(
        "NTF-2026-1201",
        &[fiscus_apptest::bank::entry(&paid, "1250.00", "INV-2026-0107")],
    );
    let imported = app.post_json("/api/v2/bank-messages", &app.key, &json!({ "document": booked }), None).await;
    assert_eq!(imported.status(), 201);
}

/// Two people approve a T2 payment in Chromium: the first signs in by e-mail and picks the workspace by name
/// (they belong to two), approves, sees that approval go stale when a new check version arrives (its page
/// lists what changed), approves again; the second approves, and the action is approved, 2 of 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_approve_a_t2_payment_in_chromium_and_a_stale_approval_shows_its_diff() {
    use fiscus_apptest::console::joined_operator_in;
    let app = spawn_app().await;
    let (other, _) = app.other_workspace_key().await;
    let first = enrolled_operator(&app, "first@example.com", Role::Approver).await;
    joined_operator_in(&app, &other, &first, Role::Auditor).await;
    let second = enrolled_operator(&app, "second@example.com", Role::Approver).await;
    let mut proposal = fiscus_apptest::actions::proposal();
    proposal["risk_tier"] = "T2".into();
    let created: Value = app.post_json("/api/v2/actions", &app.key, &proposal, None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    let checks = format!("/api/v2/actions/investment-execution/{id}/checks");
    assert!(
        app.post_json(&checks, &app.key, &fiscus_apptest::actions::check("passed"), None).await.status().is_success()
    );
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/console-screenshots");
    let stdout = browse(
        "two-approvers.mjs",
        vec![
            app.base.clone(),
            app.key.clone(),
            id.clone(),
            "Test Workspace".into(),
            out.display().to_string(),
            first.email.clone(),
            first.password.clone(),
            fiscus_console::totp::base32(&first.secret),
            second.email.clone(),
            second.password.clone(),
            fiscus_console::totp::base32(&second.secret),
        ],
    )
    .await;
    assert!(stdout.contains("picking the workspace by name"), "{stdout}");
    let after: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(after["control_state"], "approved", "{after}");
}

/// Every console page, with something on it to decide, audited by axe-core in Chromium at WCAG 2.2 AA (0
/// violations), each one's screenshot left in `target/console-screenshots/` for a reviewer to look at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_page_meets_wcag_2_2_aa_in_chromium() {
    use crate::webhook_delivery::register;
    use serde_json::json;
    // A bank channel in the sandbox too, so the payment file and bank message pages show what they list.
    let bank = tempfile::tempdir().expect("bank directories");
    let files = fiscus_kernel::settings::BankFiles {
        outbound_dir: bank.path().join("outbound"),
        staging_dir: bank.path().join("staging"),
        inbound_dir: None,
        inbound_max_bytes: 8 * 1024 * 1024,
        initiating_party: "Example Treasury GmbH".into(),
        sandbox: true,
    };
    let app = fiscus_apptest::spawn_app_with(move |s| {
        s.webhooks_allow_loopback = true;
        s.webhook_claim_stale_seconds = 1;
        s.iso20022 = Some(files);
    })
    .await;
    crate::workflows::demo(&app).await;
    let admin = enrolled_operator(&app, "ada@example.com", Role::Admin).await;
    bank_side_and_policy(&app).await;
    let action = crate::webhook_delivery::propose(&app).await;
    let (hook, _) = register(&app, "http://127.0.0.1:9/hook").await;
    let client = crate::signed_clients::draft_client(&app).await;
    let identity: Value = app
        .post_json(
            "/api/v2/actions/agentic/identities",
            &app.key,
            &json!({ "name": "treasury bot", "public_key": "11qYAYKxCrfVS/7TyWQHOg7hcvPaoiMlrwIaaPcHURo=" }),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    let universe = json!({ "name": "Quality", "theme": "quality", "source": "test",
        "members": [{ "symbol": "MSFT", "relevance": 0.9 }, { "symbol": "AAPL", "relevance": 0.8 }] });
    let u: Value = app
        .post_json("/api/v2/investment/themes/universes", &app.key, &universe, None)
        .await
        .json()
        .await
        .expect("json");
    let draw = format!("/api/v2/investment/themes/universes/{}/model-portfolio", u["id"]);
    let model: Value = app.post_json(&draw, &app.key, &json!({}), None).await.json().await.expect("json");
    let model = model["id"].as_str().expect("model portfolio id").to_string();
    let version = crate::workflows::installed(&app, "model_monitoring").await;
    let run = crate::workflows::started(&app, &version).await;
    crate::workflows::reaches(&app, &run, "awaiting_review").await;
    crate::calls::new_call(&app).await;
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/console-screenshots");
    let mut args = vec![
        app.base.clone(),
        admin.email.clone(),
        admin.password.clone(),
        fiscus_console::totp::base32(&admin.secret),
        out.display().to_string(),
    ];
    let pages = [
        "/console".to_string(),
        format!("/console/actions/{action}?environment=sandbox"),
        "/console/actions/new".into(),
        "/console/delegations".into(),
        "/console/clients".into(),
        format!("/console/clients/{}?environment=sandbox", client.id),
        "/console/webhooks".into(),
        format!("/console/webhooks/{hook}"),
        "/console/model-portfolios".into(),
        "/console/rebalance-proposals".into(),
        "/console/lqm-promotions".into(),
        "/console/lqm-retraining".into(),
        "/console/qlms".into(),
        "/console/workflow-reviews".into(),
        "/console/workflow-tools".into(),
        format!("/console/workflow-tools/{}?environment=sandbox", app.app_id),
        "/console/agent-spaces".into(),
        "/console/calls".into(),
        "/console/production".into(),
        "/console/approvals/batch".into(),
        "/console/approval-policies".into(),
        "/console/approver-groups".into(),
        "/console/audit".into(),
        "/console/preferences".into(),
    ];
    assert!(identity["id"].is_string(), "{identity}");
    let terms = json!({
        "action": "payment", "counterparty": "cp_acme", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": 100_000,
        "daily_budget_minor": 300_000, "monthly_budget_minor": 1_000_000, "valid_for_days": 180
    });
    let delegation: Value = app
        .post_json(
            &format!("/api/v2/actions/agentic/identities/{}/delegations", identity["id"].as_str().expect("id")),
            &app.key,
            &terms,
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    let mut pages = pages.to_vec();
    pages.push(format!("/console/delegations/{}?environment=sandbox", delegation["id"].as_str().expect("id")));
    pages.push(format!("/console/model-portfolios/{model}?environment=sandbox"));
    pages.push("/console/instruments".into());
    pages.push("/console/instruments/MSFT".into());
    // Bank details: an approved account and a change waiting beside it (the page with the side-by-side diff).
    let change = fiscus_apptest::bank::pending_change(&app).await;
    pages.push("/console/bank-accounts".into());
    pages.push(format!("/console/bank-accounts/{change}?environment=sandbox"));
    pages.push("/console/bank-entries".into());
    pages.push("/console/payment-files".into());
    pages.push("/console/bank-messages".into());
    let signed_in_pages = pages.len();
    args.extend(pages);
    // The pages before a session: an enrolment link's password form (and the second-factor page after it), a
    // person joining a further workspace with their sign-in, and the workspace picker (the admin belongs to
    // two workspaces).
    let (other, _) = app.other_workspace_key().await;
    fiscus_apptest::console::joined_operator_in(&app, &other, &admin, Role::Auditor).await;
    let (third, _) = app.other_workspace_key().await;
    let (_, join) = app.admin().add_operator(&third, &admin.email, Role::Auditor).await.expect("invite");
    let (_, fresh) =
        app.admin().add_operator(&app.workspace_id, "new@example.com", Role::Approver).await.expect("invite");
    let env = [
        ("A11Y_ANONYMOUS", format!("enroll-join=/console/enroll?token={join}")),
        ("A11Y_ENROL", format!("/console/enroll?token={fresh}")),
        ("A11Y_WORKSPACE", "Test Workspace".to_string()),
    ];
    let stdout = browse_with("accessibility.mjs", args, &env).await;
    // axe ran on every page (the sign-in page and each signed-in one) and found rules to pass.
    let audited: Vec<&str> = stdout.lines().filter(|l| l.contains(" violation(s), ")).collect();
    // Each signed-in page, and the five before a session (sign-in, enrolment's two, joining, the picker).
    assert_eq!(audited.len(), signed_in_pages + 5, "{stdout}");
    for line in audited {
        let passed: usize =
            line.rsplit(", ").next().and_then(|p| p.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(line.contains(": 0 violation(s)") && passed >= 5, "{line}");
    }
}
