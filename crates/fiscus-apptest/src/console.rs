//! The console as a person uses it in a test: an operator invited and enrolled (password and TOTP), signed
//! in, opening pages and posting decisions with the CSRF token and hashes the page showed.

use crate::TestApp;
use fiscus_domain::people::Role;

pub struct Operator {
    pub id: String,
    pub email: String,
    pub password: String,
    pub secret: Vec<u8>,
}

pub fn base32_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => continue,
        };
        buffer = (buffer << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            out.push((buffer >> (bits - 8)) as u8);
            bits -= 8;
        }
    }
    out
}

pub fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).map(|i| i + start.len()).unwrap_or_else(|| panic!("{start} not in page:\n{text}"));
    let to = text[from..].find(end).map(|i| from + i).expect("end marker");
    &text[from..to]
}

pub fn hidden(page: &str, name: &str) -> String {
    between(page, &format!("name=\"{name}\" value=\""), "\"").to_string()
}

/// A client that does not follow redirects, so tests see the console's 303s.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

/// Invites and enrolls an operator through the console.
pub async fn enrolled_operator(app: &TestApp, email: &str, role: Role) -> Operator {
    enrolled_operator_in(app, &app.workspace_id, email, role).await
}

/// The same, in workspace `workspace_id`.
pub async fn enrolled_operator_in(app: &TestApp, workspace_id: &str, email: &str, role: Role) -> Operator {
    let (id, token) = app.admin().add_operator(workspace_id, email, role).await.expect("invite");
    let http = client();
    let page = http.get(app.url(&format!("/console/enroll?token={token}"))).send().await.expect("request");
    assert_eq!(page.status(), 200);
    let password = "correct horse battery staple".to_string();
    let page = http
        .post(app.url("/console/enroll"))
        .form(&[("token", token.as_str()), ("password", &password), ("password_repeat", &password)])
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("page");
    let secret = base32_decode(between(&page, "<code id=\"totp-secret\">", "</code>"));
    // The previous step's code (one step of drift is accepted), so that joining another workspace (this step)
    // and a sign-in (the next) each have a step of their own.
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&secret, now_seconds() - 30);
    let done = http
        .post(app.url("/console/enroll/confirm"))
        .form(&[("token", token.as_str()), ("code", &code)])
        .send()
        .await
        .expect("request");
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap_or_default());
    Operator { id, email: email.into(), password, secret }
}

/// The same person (`op`'s sign-in) invited to workspace `workspace_id` and joining it with that sign-in: the
/// enrollment link asks for their password and a current code, not for new credentials.
pub async fn joined_operator_in(app: &TestApp, workspace_id: &str, op: &Operator, role: Role) -> Operator {
    let (id, token) = app.admin().add_operator(workspace_id, &op.email, role).await.expect("invite");
    let http = client();
    let page = http
        .get(app.url(&format!("/console/enroll?token={token}")))
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("page");
    assert!(page.contains("action=\"/console/enroll/join\""), "a person with a sign-in joins with it: {page}");
    // This step's code: enrollment spent the previous one, a sign-in will take the next.
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&op.secret, now_seconds());
    let done = http
        .post(app.url("/console/enroll/join"))
        .form(&[("token", token.as_str()), ("password", &op.password), ("code", &code)])
        .send()
        .await
        .expect("request");
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap_or_default());
    Operator { id, email: op.email.clone(), password: op.password.clone(), secret: op.secret.clone() }
}

/// Waits out the current 30-second TOTP step when less than 3 s of it remain. A code is accepted one step
/// either side of the server's: computed just before a step ends and checked just after, the step it was
/// chosen against would be two steps from the server's, and the code refused (time itself is the subject).
pub async fn clear_of_a_step_end() {
    let into_step = fiscus_domain::clock::now_micros().rem_euclid(30_000_000);
    if into_step > 27_000_000 {
        let rest = u64::try_from(30_000_000 - into_step + 50_000).unwrap_or(0);
        tokio::time::sleep(std::time::Duration::from_micros(rest)).await;
    }
}

pub fn now_seconds() -> i64 {
    fiscus_domain::clock::now_micros() / 1_000_000
}

/// Posts the sign-in form.
pub async fn login(app: &TestApp, email: &str, password: &str, code: &str) -> reqwest::Response {
    client()
        .post(app.url("/console/login"))
        .form(&[("email", email), ("password", password), ("code", code)])
        .send()
        .await
        .expect("request")
}

/// Signs in; returns the session cookie. The code is the next step's (one step of drift is accepted), so a
/// code just spent at enrollment is never reused.
pub async fn sign_in(app: &TestApp, op: &Operator) -> String {
    clear_of_a_step_end().await;
    let code = fiscus_console::totp::code_at(&op.secret, now_seconds() + 30);
    let response = login(app, &op.email, &op.password, &code).await;
    assert_eq!(response.status(), 303, "sign-in refused: {}", response.text().await.unwrap_or_default());
    let cookie = response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("cookie").to_string();
    for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/console"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    cookie.split(';').next().expect("pair").to_string()
}

/// Opens the action's page and submits a decision with the hashes it shows.
pub async fn decide(app: &TestApp, cookie: &str, action_id: &str, decision: &str) -> reqwest::Response {
    decide_in(app, cookie, action_id, decision, "sandbox").await
}

/// [`decide`] for an action of `environment`.
pub async fn decide_in(
    app: &TestApp,
    cookie: &str,
    action_id: &str,
    decision: &str,
    environment: &str,
) -> reqwest::Response {
    let page = console_page(app, cookie, &format!("/console/actions/{action_id}?environment={environment}")).await;
    submit_decision_in(app, cookie, action_id, &page, decision, environment).await
}

/// A console page, as the signed-in operator sees it.
pub async fn console_page(app: &TestApp, cookie: &str, path: &str) -> String {
    client().get(app.url(path)).header("cookie", cookie).send().await.expect("request").text().await.expect("page")
}

/// The console page of an action, as the operator sees it.
pub async fn action_page(app: &TestApp, cookie: &str, action_id: &str) -> String {
    console_page(app, cookie, &format!("/console/actions/{action_id}?environment=sandbox")).await
}

/// Submits a decision with the CSRF token and hashes the given page showed.
pub async fn submit_decision(
    app: &TestApp,
    cookie: &str,
    action_id: &str,
    page: &str,
    decision: &str,
) -> reqwest::Response {
    submit_decision_in(app, cookie, action_id, page, decision, "sandbox").await
}

pub async fn submit_decision_in(
    app: &TestApp,
    cookie: &str,
    action_id: &str,
    page: &str,
    decision: &str,
    environment: &str,
) -> reqwest::Response {
    let form = [
        ("csrf", hidden(page, "csrf")),
        ("environment", environment.to_string()),
        ("envelope_hash", hidden(page, "envelope_hash")),
        ("check_set_hash", hidden(page, "check_set_hash")),
        ("decision", decision.to_string()),
    ];
    client()
        .post(app.url(&format!("/console/actions/{action_id}/decision")))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
}

pub async fn production_move(app: &TestApp, cookie: &str, mv: &str) -> u16 {
    let page = console_page(app, cookie, "/console/production").await;
    let form = [("csrf", hidden(&page, "csrf")), ("move", mv.to_string())];
    client()
        .post(app.url("/console/production"))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("request")
        .status()
        .as_u16()
}
