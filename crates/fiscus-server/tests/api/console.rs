//! The human plane through its console, as a browser would use it (form posts and a session cookie).

use fiscus_apptest::actions::{check, proposal};
use fiscus_apptest::console::*;
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

async fn propose(app: &TestApp, tier: &str) -> String {
    let mut body = proposal();
    body["risk_tier"] = json!(tier);
    let created: Value = app.post_json("/api/v2/actions", &app.key, &body, None).await.json().await.expect("json");
    created["id"].as_str().expect("id").to_string()
}

async fn state_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json")
}

#[tokio::test]
async fn an_operator_approves_through_the_console_and_the_action_executes() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &check("passed"), None).await;
    let dashboard = console_page(&app, &cookie, "/console").await;
    assert!(dashboard.contains(&id), "pending approvals list the action");
    assert_eq!(decide(&app, &cookie, &id, "approve").await.status(), 303);
    let approved = state_of(&app, &id).await;
    assert_eq!(approved["control_state"], "approved");
    assert_eq!(approved["approvals"]["current"], 1);
    let history = approved["history"].as_array().expect("history");
    assert!(history.iter().any(|h| h["event"] == "action.approved" && h["actor"]["id"] == op.id.as_str()));
    let executed = app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &json!({}), None).await;
    assert_eq!(executed.status(), 200);
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
    assert_eq!(report.result, Ok(()), "the decision is in an intact audit chain");
    assert!(
        app.count(&format!(
            "SELECT COUNT(*) FROM audit_events WHERE action = 'action.approved' AND actor_id = '{}'",
            op.id
        ))
        .await
            == 1
    );
}

#[tokio::test]
async fn a_t2_action_needs_two_distinct_operators_and_one_person_never_counts_twice() {
    let app = spawn_app().await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let bob = enrolled_operator(&app, "bob@example.com", Role::Admin).await;
    let ada_cookie = sign_in(&app, &ada).await;
    let id = propose(&app, "T2").await;
    app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &check("passed"), None).await;
    assert_eq!(decide(&app, &ada_cookie, &id, "approve").await.status(), 303);
    assert_eq!(state_of(&app, &id).await["control_state"], "pending_approval");
    let twice = decide(&app, &ada_cookie, &id, "approve").await;
    assert_eq!(twice.status(), 409);
    assert!(twice.text().await.unwrap_or_default().contains("already approved"));
    let body = problem(
        app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &json!({}), None).await,
        422,
        "execution_refused",
    )
    .await;
    assert_eq!(body["failed_gates"][0]["gate"], "authorised", "one approval of two authorises nothing");
    let bob_cookie = sign_in(&app, &bob).await;
    assert_eq!(decide(&app, &bob_cookie, &id, "approve").await.status(), 303);
    let approved = state_of(&app, &id).await;
    assert_eq!(approved["control_state"], "approved");
    assert_eq!((&approved["approvals"]["current"], &approved["approvals"]["required"]), (&json!(2), &json!(2)));
    assert_eq!(approved["approvals"]["met"], true);
}

#[tokio::test]
async fn a_denial_ends_the_action() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    assert_eq!(decide(&app, &cookie, &id, "deny").await.status(), 303);
    assert_eq!(state_of(&app, &id).await["control_state"], "denied");
    let body = problem(
        app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &json!({}), None).await,
        422,
        "execution_refused",
    )
    .await;
    assert_eq!(body["failed_gates"][0]["gate"], "authorised");
    assert!(body["failed_gates"][0]["reason"].as_str().unwrap_or("").contains("denied"), "{body}");
}

#[tokio::test]
async fn an_approval_on_a_stale_view_is_refused() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    let page = action_page(&app, &cookie, &id).await;
    // Evidence changes after the operator opened the page.
    app.post_json(&format!("/api/v2/actions/investment-execution/{id}/checks"), &app.key, &check("failed"), None).await;
    let response = submit_decision(&app, &cookie, &id, &page, "approve").await;
    assert_eq!(response.status(), 409);
    assert_eq!(state_of(&app, &id).await["control_state"], "pending_approval");
}

#[tokio::test]
async fn an_auditor_cannot_decide() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "audit@example.com", Role::Auditor).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    assert_eq!(decide(&app, &cookie, &id, "approve").await.status(), 409);
    assert_eq!(state_of(&app, &id).await["control_state"], "pending_approval");
}

#[tokio::test]
async fn forms_without_the_csrf_token_or_from_another_origin_are_refused() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    let a = state_of(&app, &id).await;
    let form = [
        ("csrf", "wrong".to_string()),
        ("environment", "sandbox".to_string()),
        ("envelope_hash", a["envelope_hash"].as_str().expect("h").to_string()),
        ("check_set_hash", a["check_set_hash"].as_str().expect("h").to_string()),
        ("decision", "approve".to_string()),
    ];
    let url = app.url(&format!("/console/actions/{id}/decision"));
    assert_eq!(client().post(&url).header("cookie", &cookie).form(&form).send().await.expect("request").status(), 403);
    let cross = client()
        .post(&url)
        .header("cookie", &cookie)
        .header("origin", "https://evil.example")
        .form(&form)
        .send()
        .await
        .expect("request");
    assert_eq!(cross.status(), 403);
    assert_eq!(state_of(&app, &id).await["control_state"], "pending_approval");
}

#[tokio::test]
async fn bearer_credentials_are_refused_on_the_console_and_sessions_on_the_api() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let response = client()
        .get(app.url("/console"))
        .bearer_auth(&app.key)
        .header("cookie", &cookie)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 401);
    let api = client().get(app.url("/api/v2/workspace")).header("cookie", &cookie).send().await.expect("request");
    problem(api, 401, "authentication_required").await;
    let session_token = cookie.split_once('=').expect("pair").1;
    problem(app.get("/api/v2/workspace", session_token).await, 401, "invalid_credential").await;
    // Without a session the console sends people to sign in.
    let anonymous = client().get(app.url("/console")).send().await.expect("request");
    assert_eq!(anonymous.status(), 303);
}

#[tokio::test]
async fn repeated_failures_lock_the_account_even_for_the_right_password() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    for _ in 0..5 {
        assert_eq!(login(&app, "ada@example.com", "wrong password!!", "000000").await.status(), 401);
    }
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&op.secret, now_seconds() + 30);
    let locked = login(&app, &op.email, &op.password, &code).await;
    assert_eq!(locked.status(), 401, "locked out with back-off");
    let posture: Value = app.get("/api/v2/infrastructure/posture", &app.key).await.json().await.expect("json");
    assert_eq!(posture["operators"]["second_factor_coverage"], 1.0);
}

#[tokio::test]
async fn a_wrong_code_or_a_reused_code_does_not_sign_in() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    assert_eq!(login(&app, &op.email, &op.password, "123456").await.status(), 401);
    clear_of_a_step_end().await;
    let next = fiscus_console::totp::code_at(&op.secret, now_seconds() + 30);
    assert_eq!(login(&app, &op.email, &op.password, &next).await.status(), 303);
    assert_eq!(login(&app, &op.email, &op.password, &next).await.status(), 401, "a code is good once");
}

#[tokio::test]
async fn production_access_needs_two_distinct_admins_and_no_credential_can_turn_it_on() {
    let app = spawn_app().await;
    let (_, live_key) = app.new_app(fiscus_domain::credentials::Environment::Production, "workspace:read", None).await;
    problem(app.get("/api/v2/workspace", &live_key).await, 403, "production_access_disabled").await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Admin).await;
    let bob = enrolled_operator(&app, "bob@example.com", Role::Admin).await;
    let eve = enrolled_operator(&app, "eve@example.com", Role::Approver).await;
    let ada_cookie = sign_in(&app, &ada).await;
    let eve_cookie = sign_in(&app, &eve).await;
    assert_eq!(production_move(&app, &eve_cookie, "enable").await, 409, "approvers do not change production access");
    assert_eq!(production_move(&app, &ada_cookie, "enable").await, 303);
    assert_eq!(production_move(&app, &ada_cookie, "enable").await, 409, "one admin cannot confirm their own request");
    problem(app.get("/api/v2/workspace", &live_key).await, 403, "production_access_disabled").await;
    let bob_cookie = sign_in(&app, &bob).await;
    assert_eq!(production_move(&app, &bob_cookie, "enable").await, 303);
    assert_eq!(app.get("/api/v2/workspace", &live_key).await.status(), 200, "on at once for the next request");
    assert_eq!(production_move(&app, &ada_cookie, "disable").await, 303);
    problem(app.get("/api/v2/workspace", &live_key).await, 403, "production_access_disabled").await;
}

#[tokio::test]
async fn an_operator_proposal_needs_another_operator_and_the_audit_trail_verifies() {
    let app = spawn_app().await;
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let bob = enrolled_operator(&app, "bob@example.com", Role::Approver).await;
    let ada_cookie = sign_in(&app, &ada).await;
    let page = console_page(&app, &ada_cookie, "/console/actions/new").await;
    let form = [
        ("csrf", hidden(&page, "csrf")),
        ("environment", "sandbox".into()),
        ("kind", "payment".into()),
        ("amount_minor", "250000".into()),
        ("currency", "EUR".into()),
        ("counterparty", "cp_supplier".into()),
        ("connector", "sandbox".into()),
        ("risk_tier", "T1".into()),
        ("reference", "OPS-1".into()),
        ("required_checks", "".into()),
    ];
    let created = client()
        .post(app.url("/console/actions/new"))
        .header("cookie", &ada_cookie)
        .form(&form)
        .send()
        .await
        .expect("request");
    assert_eq!(created.status(), 303);
    let location = created.headers().get("location").and_then(|v| v.to_str().ok()).expect("location").to_string();
    let id = location.trim_start_matches("/console/actions/").split('?').next().expect("id").to_string();
    let action = state_of(&app, &id).await;
    assert_eq!(action["origin"], "operator");
    assert_eq!(action["proposed_by"]["id"], ada.id.as_str());
    let own = decide(&app, &ada_cookie, &id, "approve").await;
    assert_eq!(own.status(), 409, "the proposer never approves");
    assert!(own.text().await.unwrap_or_default().contains("proposer may not approve"));
    let bob_cookie = sign_in(&app, &bob).await;
    assert_eq!(decide(&app, &bob_cookie, &id, "approve").await.status(), 303);
    assert_eq!(state_of(&app, &id).await["control_state"], "approved");
    let detail = action_page(&app, &bob_cookie, &id).await;
    assert!(detail.contains("Every gate passes now."), "the gate preview is shown");
    let trail = console_page(&app, &bob_cookie, "/console/audit").await;
    assert!(trail.contains("Chain intact"), "{trail}");
    assert!(trail.contains("action.approved"));
}

#[tokio::test]
async fn an_idle_session_ends_and_a_denial_is_sealed_in_the_audit_chain() {
    let app = fiscus_apptest::spawn_app_with(|s| s.console_idle_seconds = 1).await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let id = propose(&app, "T1").await;
    assert_eq!(decide(&app, &cookie, &id, "deny").await.status(), 303);
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM audit_events WHERE action = 'action.denied' AND subject = '{id}'"))
            .await,
        1
    );
    assert_eq!(
        app.count(&format!("SELECT COUNT(*) FROM action_decisions WHERE action_id = '{id}' AND decision = 'deny' AND evidence_hash LIKE 'sha256:%'")).await,
        1
    );
    let report =
        fiscus_kernel::verify::verify_workspace(&app.state.store, &app.workspace_id, None).await.expect("verify");
    assert_eq!(report.result, Ok(()));
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let idle = client().get(app.url("/console")).header("cookie", &cookie).send().await.expect("request");
    assert_eq!(idle.status(), 303, "an idle session sends the operator to sign in again");
}

#[tokio::test]
async fn a_decision_on_an_unknown_or_another_workspace_s_action_is_not_found() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let (_, other_key) = app.other_workspace_key().await;
    let foreign: Value =
        app.post_json("/api/v2/actions", &other_key, &proposal(), None).await.json().await.expect("json");
    let foreign_id = foreign["id"].as_str().expect("id").to_string();
    let dashboard = console_page(&app, &cookie, "/console").await;
    for id in [foreign_id.as_str(), "act_0000000000000000000000000"] {
        let form = [
            ("csrf", hidden(&dashboard, "csrf")),
            ("environment", "sandbox".to_string()),
            ("envelope_hash", foreign["envelope_hash"].as_str().expect("hash").to_string()),
            ("check_set_hash", foreign["check_set_hash"].as_str().expect("hash").to_string()),
            ("decision", "approve".to_string()),
        ];
        let response = client()
            .post(app.url(&format!("/console/actions/{id}/decision")))
            .header("cookie", &cookie)
            .form(&form)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 404, "{id}");
    }
    let body: Value = app.get(&format!("/api/v2/actions/{foreign_id}"), &other_key).await.json().await.expect("json");
    assert_eq!(body["control_state"], "pending_approval", "nothing was decided");
}

/// Sign-in asks for an e-mail, never a workspace id. A person is one sign-in: invited to a second workspace,
/// they join it with the password and authenticator they have (never new ones), and signing in then offers
/// both workspaces by name; the pick opens a session in the one chosen.
#[tokio::test]
async fn one_sign_in_opens_every_workspace_the_person_belongs_to() {
    let app = spawn_app().await;
    let (other, _) = app.other_workspace_key().await;
    let here = enrolled_operator(&app, "both@example.com", Role::Approver).await;
    let form = client().get(app.url("/console/login")).send().await.expect("request").text().await.expect("page");
    assert!(!form.contains("name=\"workspace\""), "no workspace field: {form}");

    // Joining with a wrong code changes nothing and counts as a failure of the sign-in.
    let (_, token) = app.admin().add_operator(&other, "both@example.com", Role::Auditor).await.expect("invite");
    let wrong = client()
        .post(app.url("/console/enroll/join"))
        .form(&[("token", token.as_str()), ("password", &here.password), ("code", "000000")])
        .send()
        .await
        .expect("request");
    assert_eq!(wrong.status(), 401);
    let mut conn = app.state.store.read().await.expect("conn");
    let account =
        fiscus_store::operators::account_by_email(&mut conn, "both@example.com").await.expect("read").expect("account");
    assert_eq!(account.failed_attempts, 1);
    drop(conn);
    let page = client().get(app.url(&format!("/console/enroll?token={token}"))).send().await.expect("request");
    assert_eq!(page.status(), 200, "the invitation still stands");
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&here.secret, now_seconds());
    let joined = client()
        .post(app.url("/console/enroll/join"))
        .form(&[("token", token.as_str()), ("password", &here.password), ("code", &code)])
        .send()
        .await
        .expect("request");
    assert_eq!(joined.status(), 303);

    // Now signing in asks which workspace, by name.
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&here.secret, now_seconds() + 30);
    let picker = login(&app, &here.email, &here.password, &code).await;
    assert_eq!(picker.status(), 200);
    let picker = picker.text().await.expect("page");
    assert!(
        picker.contains("Choose a workspace") && picker.contains("as auditor") && picker.contains("as approver"),
        "{picker}"
    );
    let ticket = hidden(&picker, "ticket");
    let there = picker.split("<li>").find(|choice| choice.contains("as auditor")).expect("the auditor's workspace");
    let auditor_id = between(there, "name=\"operator\" value=\"", "\"").to_string();
    let picked = client()
        .post(app.url("/console/login/workspace"))
        .form(&[("ticket", ticket.as_str()), ("operator", &auditor_id)])
        .send()
        .await
        .expect("request");
    assert_eq!(picked.status(), 303);
    let cookie = picked.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("cookie");
    let cookie = cookie.split(';').next().expect("pair").to_string();
    assert!(console_page(&app, &cookie, "/console").await.contains("auditor"), "signed in to the other workspace");
    let forged = client()
        .post(app.url("/console/login/workspace"))
        .form(&[("ticket", ticket.as_str()), ("operator", "opr_0000000000000000000000000")])
        .send()
        .await
        .expect("request");
    assert_eq!(forged.status(), 401, "only an identity the ticket names");
    let mut conn = app.state.store.read().await.expect("conn");
    let account =
        fiscus_store::operators::account_by_email(&mut conn, "both@example.com").await.expect("read").expect("account");
    assert_eq!(account.failed_attempts, 0, "a sign-in clears the failure");
}

/// The navigation counts what waits for people, in words as well as numbers; the decision page says what will
/// happen in a sentence, with the quorum and the hash the approval covers.
#[tokio::test]
async fn the_navigation_counts_what_waits_and_a_decision_page_says_what_will_happen() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "counts@example.com", Role::Approver).await;
    let created: Value =
        app.post_json("/api/v2/actions", &app.key, &proposal(), None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id");
    let cookie = sign_in(&app, &op).await;
    let page = console_page(&app, &cookie, "/console").await;
    assert!(
        page.contains(
            "Pending approvals <span class=\"count\">1<span class=\"visually-hidden\"> waiting</span></span>"
        ),
        "{page}"
    );
    let page = console_page(&app, &cookie, &format!("/console/actions/{id}?environment=sandbox")).await;
    let summary = between(&page, "<p class=\"summary\" id=\"summary\">", "</p>");
    assert!(summary.starts_with("Pay USD ") && summary.contains(" to ") && summary.contains(" via "), "{summary}");
    assert!(between(&page, "<dd id=\"quorum\">", "</dd>").starts_with("0 of "), "{page}");
    let hash = created["envelope_hash"].as_str().expect("hash");
    // The button names the hash by its first 12 hex digits; the full one is on the page beside it.
    let head = format!("Approve envelope {}…", &hash[.."sha256:".len() + 12]);
    assert!(page.contains(&head), "{head} in {page}");
}

/// An approval made stale by a new check version says exactly what changed since it was given.
#[tokio::test]
async fn a_stale_approval_shows_what_changed_since_it_was_given() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "stale@example.com", Role::Approver).await;
    let created: Value =
        app.post_json("/api/v2/actions", &app.key, &proposal(), None).await.json().await.expect("json");
    let id = created["id"].as_str().expect("id").to_string();
    let checks = format!("/api/v2/actions/investment-execution/{id}/checks");
    assert!(app.post_json(&checks, &app.key, &check("passed"), None).await.status().is_success());
    let cookie = sign_in(&app, &op).await;
    assert_eq!(decide(&app, &cookie, &id, "approve").await.status(), 303);
    assert!(app.post_json(&checks, &app.key, &check("failed"), None).await.status().is_success());
    let page = console_page(&app, &cookie, &format!("/console/actions/{id}?environment=sandbox")).await;
    let changes = between(&page, "<ul class=\"changes\">", "</ul>");
    assert!(changes.contains("<code>sanctions_screening</code>: version 1 passed → version 2 failed"), "{changes}");
}

/// A person chooses the zone their times are shown in; the change is flashed once on the page the form
/// returns to, and a zone the console does not know changes nothing.
#[tokio::test]
async fn times_follow_the_person_s_zone_and_a_saved_change_is_flashed_once() {
    let app = spawn_app().await;
    let op = enrolled_operator(&app, "zone@example.com", Role::Auditor).await;
    let cookie = sign_in(&app, &op).await;
    let page = console_page(&app, &cookie, "/console/preferences").await;
    assert!(page.contains("<strong id=\"current-zone\">UTC</strong>"), "{page}");
    let save = |zone: &'static str, csrf: String| {
        let cookie = cookie.clone();
        let app = &app;
        async move {
            client()
                .post(app.url("/console/preferences"))
                .header("cookie", cookie)
                .form(&[("csrf", csrf.as_str()), ("time_zone", zone)])
                .send()
                .await
                .expect("request")
        }
    };
    let refused = save("Mars/Olympus_Mons", hidden(&page, "csrf")).await;
    assert_eq!(refused.status(), 422);
    let saved = save("Asia/Tokyo", hidden(&page, "csrf")).await;
    assert_eq!(saved.status(), 303);
    let flash = saved.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("flash cookie");
    let flash = flash.split(';').next().expect("pair").to_string();
    let shown = client()
        .get(app.url("/console/audit"))
        .header("cookie", format!("{cookie}; {flash}"))
        .send()
        .await
        .expect("request");
    let cleared = shown.headers().get("set-cookie").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    assert!(cleared.starts_with("fiscus_flash=;") && cleared.contains("Max-Age=0"), "{cleared}");
    let shown = shown.text().await.expect("page");
    assert!(shown.contains("<p class=\"flash\" role=\"status\">Saved: times are shown in Asia/Tokyo.</p>"), "{shown}");
    assert!(shown.contains(" JST</time>") && shown.contains("title=\"") && shown.contains(" UTC\">"), "{shown}");
    let again = console_page(&app, &cookie, "/console/audit").await;
    assert!(!again.contains("class=\"flash\""), "shown once");
}

/// The workspace's instruments, filterable, and one instrument's price history drawn from its prices.
#[tokio::test]
async fn instruments_are_listed_filterable_and_their_prices_drawn() {
    let app = spawn_app().await;
    crate::workflows::demo(&app).await;
    let op = enrolled_operator(&app, "prices@example.com", Role::Auditor).await;
    let cookie = sign_in(&app, &op).await;
    let list = console_page(&app, &cookie, "/console/instruments?q=microsoft").await;
    assert!(list.contains("(1 of ") && list.contains(">MSFT</a>"), "{list}");
    let page = console_page(&app, &cookie, "/console/instruments/MSFT").await;
    assert!(
        page.contains("MSFT price history (five years): 1259 points from 2017-12-28 00:00 to 2022-12-28 00:00"),
        "{page}"
    );
    // The prices dataset's quality report, as written at import, for this instrument's series.
    assert!(page.contains("<h2>Data quality</h2><p>From the quality report of prices dataset"), "{page}");
    let missing =
        client().get(app.url("/console/instruments/NOPE")).header("cookie", &cookie).send().await.expect("request");
    assert_eq!(missing.status(), 404);
}
