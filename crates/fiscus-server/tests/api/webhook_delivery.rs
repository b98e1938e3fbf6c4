//! Webhook delivery to receivers the tests start on loopback (the sandbox loopback switch on): signed
//! Standard Webhooks requests in event order, retries with `Retry-After`, 410 disabling the endpoint, a
//! name re-pointed at a private address refused at delivery before any request, and a worker killed
//! mid-delivery losing nothing. `python_clients` verifies real deliveries with `standardwebhooks` and `svix`.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use fiscus_apptest::actions::proposal;
use fiscus_apptest::{TestApp, spawn_app_with};
use fiscus_domain::credentials::{AppStatus, Environment};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

const HOOKS: &str = "/api/v2/agent-execution/webhooks";

/// One request a receiver got.
#[derive(Clone, Debug)]
pub struct Got {
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: String,
    pub at: Instant,
}

/// What the receiver answers its `n`-th request (0-based).
#[derive(Clone, Copy)]
pub enum Answer {
    Status(u16),
    /// A status with `Retry-After` in seconds.
    RetryAfter(u16, u64),
    /// Never answers.
    Hang,
}

type Behaviour = Arc<dyn Fn(usize) -> Answer + Send + Sync>;

#[derive(Clone)]
struct Receiving {
    got: Arc<watch::Sender<Vec<Got>>>,
    behave: Behaviour,
}

pub struct Receiver {
    pub addr: SocketAddr,
    got: Arc<watch::Sender<Vec<Got>>>,
}

impl Receiver {
    pub fn got(&self) -> Vec<Got> {
        self.got.borrow().clone()
    }

    /// Waits until `n` requests arrived (woken by each arrival; fails after `within`).
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Got> {
        let mut arrivals = self.got.subscribe();
        match tokio::time::timeout(within, arrivals.wait_for(|got| got.len() >= n)).await {
            Ok(got) => got.expect("the receiver is running").clone(),
            Err(_) => panic!("{} of {n} deliveries arrived", self.got().len()),
        }
    }
}

async fn hook(State(r): State<Receiving>, headers: HeaderMap, body: String) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let mut n = 0;
    r.got.send_modify(|got| {
        got.push(Got {
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp"),
            signature: header("webhook-signature"),
            body,
            at: Instant::now(),
        });
        n = got.len() - 1;
    });
    match (r.behave)(n) {
        Answer::Status(s) => StatusCode::from_u16(s).expect("status").into_response(),
        Answer::RetryAfter(s, after) => {
            (StatusCode::from_u16(s).expect("status"), [("retry-after", after.to_string())]).into_response()
        }
        Answer::Hang => std::future::pending().await,
    }
}

/// Starts a receiver on loopback that answers as `behave` says.
pub async fn receiver(behave: impl Fn(usize) -> Answer + Send + Sync + 'static) -> Receiver {
    let got = Arc::new(watch::Sender::new(Vec::new()));
    let state = Receiving { got: got.clone(), behave: Arc::new(behave) };
    let router = axum::Router::new().route("/hook", axum::routing::post(hook)).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Receiver { addr, got }
}

pub async fn loopback_app() -> TestApp {
    spawn_app_with(|s| {
        s.webhooks_allow_loopback = true;
        s.webhook_claim_stale_seconds = 1;
    })
    .await
}

/// Registers `url` for every event type; returns (endpoint id, secret).
pub async fn register(app: &TestApp, url: &str) -> (String, String) {
    let created = app.post_json(HOOKS, &app.key, &json!({ "url": url }), None).await;
    assert_eq!(created.status(), 201);
    let e: Value = created.json().await.expect("json");
    (e["id"].as_str().expect("id").to_string(), e["secret"].as_str().expect("secret").to_string())
}

/// [`register`] for `action.proposed` alone: the tests that count deliveries count one event per proposal
/// (a proposal also sends `approval.requested`).
async fn register_proposals(app: &TestApp, url: &str) -> (String, String) {
    let created =
        app.post_json(HOOKS, &app.key, &json!({ "url": url, "event_types": ["action.proposed"] }), None).await;
    assert_eq!(created.status(), 201);
    let e: Value = created.json().await.expect("json");
    (e["id"].as_str().expect("id").to_string(), e["secret"].as_str().expect("secret").to_string())
}

pub async fn propose(app: &TestApp) -> String {
    let created = app.post_json("/api/v2/actions", &app.key, &proposal(), None).await;
    assert_eq!(created.status(), 201);
    created.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string()
}

async fn delivery_states(app: &TestApp, endpoint: &str) -> Vec<(String, String, i64)> {
    let mut conn = app.state.store.read().await.expect("conn");
    sqlx::query_as::<_, (String, String, i64)>(
        "SELECT event_id, state, attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id",
    )
    .bind(endpoint)
    .fetch_all(&mut *conn)
    .await
    .expect("deliveries")
}

/// The deliveries once the workers have drained (attempts are recorded just after the receiver answers),
/// checked with `done`.
async fn settled(
    app: &TestApp,
    endpoint: &str,
    done: impl Fn(&[(String, String, i64)]) -> bool,
) -> Vec<(String, String, i64)> {
    app.drain().await;
    let states = delivery_states(app, endpoint).await;
    assert!(done(&states), "deliveries did not settle: {states:?}");
    states
}

fn all_succeeded_once(states: &[(String, String, i64)]) -> bool {
    !states.is_empty() && states.iter().all(|(_, s, n)| s == "succeeded" && *n == 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_delivered_signed_and_in_event_order() {
    let app = loopback_app().await;
    let rx = receiver(|_| Answer::Status(204)).await;
    let (endpoint, secret) = register_proposals(&app, &format!("http://{}/hook", rx.addr)).await;
    for _ in 0..5 {
        propose(&app).await;
    }
    let got = rx.wait_for(5, Duration::from_secs(10)).await;
    let key = fiscus_domain::webhooks::secret_key(&secret).expect("key");
    let mut ids = Vec::new();
    for g in &got {
        let ts: i64 = g.timestamp.parse().expect("timestamp");
        assert_eq!(g.signature, fiscus_domain::webhooks::signature(&key, &g.id, ts, g.body.as_bytes()));
        let event: Value = serde_json::from_str(&g.body).expect("json");
        assert_eq!(event["id"], g.id.as_str(), "webhook-id is the event id");
        assert_eq!(event["type"], "action.proposed");
        assert_eq!(event["workspace_id"], app.workspace_id.as_str());
        for member in ["created_at", "environment", "actor", "data"] {
            assert!(event.get(member).is_some(), "{member} in {event}");
        }
        ids.push(g.id.clone());
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "in event order");
    app.drain().await;
    assert_eq!(rx.got().len(), 5, "each event once");
    assert_eq!(settled(&app, &endpoint, all_succeeded_once).await.len(), 5);
    assert_eq!(app.count("SELECT COUNT(*) FROM webhook_attempts WHERE status = 204").await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_head_is_retried_after_retry_after_and_holds_back_later_events() {
    let app = loopback_app().await;
    let rx = receiver(|n| if n == 0 { Answer::RetryAfter(503, 1) } else { Answer::Status(200) }).await;
    let (endpoint, _) = register_proposals(&app, &format!("http://{}/hook", rx.addr)).await;
    propose(&app).await;
    propose(&app).await;
    let got = rx.wait_for(3, Duration::from_secs(10)).await;
    assert_eq!(got[0].id, got[1].id, "the same event again, with the same webhook-id");
    assert!(got[1].at.duration_since(got[0].at) >= Duration::from_millis(900), "Retry-After: 1 honoured");
    assert!(got[2].id > got[1].id, "the later event only after the first was delivered");
    let states = settled(&app, &endpoint, |s| s.iter().all(|(_, state, _)| state == "succeeded")).await;
    assert_eq!(states.iter().map(|(_, _, n)| *n).collect::<Vec<_>>(), vec![2, 1]);
    let log = app
        .count("SELECT COUNT(*) FROM webhook_attempts WHERE status = 503 AND next_attempt_at IS NOT NULL AND error IS NOT NULL")
        .await;
    assert_eq!(log, 1, "the failed attempt is logged with its next attempt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_disables_the_endpoint_and_abandons_what_is_pending() {
    let app = loopback_app().await;
    let rx = receiver(|_| Answer::Status(410)).await;
    let (endpoint, _) = register_proposals(&app, &format!("http://{}/hook", rx.addr)).await;
    propose(&app).await;
    propose(&app).await;
    rx.wait_for(1, Duration::from_secs(10)).await;
    app.drain().await;
    let list: Value = app.get(HOOKS, &app.key).await.json().await.expect("json");
    assert_eq!(list["data"][0]["status"], "disabled", "{list}");
    assert!(list["data"][0]["status_reason"].as_str().expect("reason").contains("410"));
    assert_eq!(rx.got().len(), 1, "nothing after the 410");
    // The second event reaches the endpoint's queue before or after the 410, whichever the relay and the
    // delivery worker do first: before, it waits there and is abandoned; after, a disabled endpoint gets no
    // delivery at all. Either way nothing stays pending and nothing else was sent.
    let states = settled(&app, &endpoint, |s| !s.is_empty() && s.iter().all(|(_, st, _)| st != "pending")).await;
    let mut states: Vec<&str> = states.iter().map(|(_, s, _)| s.as_str()).collect();
    states.sort();
    assert!(states == ["abandoned", "failed"] || states == ["failed"], "{states:?}");
    let audited = format!(
        "SELECT COUNT(*) FROM audit_events WHERE action = 'webhook_endpoint.disabled' AND subject = '{endpoint}'"
    );
    assert_eq!(app.count(&audited).await, 1, "the worker's disable is in the audit chain");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_re_pointed_at_a_private_address_is_refused_at_delivery_before_any_request() {
    // No loopback switch: a production-like node.
    let app = spawn_app_with(|s| {
        s.webhook_hosts.insert("hooks.example.com".into(), vec!["93.184.215.14".parse().expect("ip")]);
    })
    .await;
    let rx = receiver(|_| Answer::Status(200)).await;
    let port = rx.addr.port();
    let (endpoint, _) = register_proposals(&app, &format!("https://hooks.example.com:{port}/hook")).await;
    // DNS rebinding: the name now answers with the receiver's loopback address, then a metadata address.
    app.state.webhook_hosts.pin("hooks.example.com", vec!["127.0.0.1".parse().expect("ip")]);
    propose(&app).await;
    let error = wait_for_attempt(&app, &endpoint).await;
    assert!(error.contains("127.0.0.1 is loopback"), "{error}");
    app.state.webhook_hosts.pin("hooks.example.com", vec!["169.254.169.254".parse().expect("ip")]);
    app.execute("UPDATE webhook_deliveries SET next_attempt_at = 0").await;
    app.execute("UPDATE webhook_queues SET next_due_at = 0").await;
    app.drain().await;
    let refused = app.count("SELECT COUNT(*) FROM webhook_attempts WHERE error LIKE '%link-local%'").await;
    assert_eq!(refused, 1, "the metadata address was not refused");
    assert!(rx.got().is_empty(), "no request reached the receiver");
    assert_eq!(app.count("SELECT COUNT(*) FROM webhook_attempts WHERE status IS NOT NULL").await, 0);
}

/// The first attempt's error once the workers have drained.
async fn wait_for_attempt(app: &TestApp, endpoint: &str) -> String {
    app.drain().await;
    let mut conn = app.state.store.read().await.expect("conn");
    let (error,): (Option<String>,) =
        sqlx::query_as("SELECT error FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY id LIMIT 1")
            .bind(endpoint)
            .fetch_optional(&mut *conn)
            .await
            .expect("attempts")
            .expect("an attempt");
    error.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_delivery_loses_nothing() {
    let app = spawn_app_with(|s| {
        s.webhooks_allow_loopback = true;
        s.webhook_claim_stale_seconds = 1;
        s.webhook_worker = false;
        // The killed worker's hanging request ends at this timeout (its late outcome is refused: the claim
        // was taken over), so waiting for the workers to drain takes no longer than that.
        s.webhook_timeout_seconds = 2;
    })
    .await;
    // The first request hangs: its worker is killed while waiting for the answer.
    let rx = receiver(|n| if n == 0 { Answer::Hang } else { Answer::Status(200) }).await;
    let (endpoint, _) = register_proposals(&app, &format!("http://{}/hook", rx.addr)).await;
    propose(&app).await;
    propose(&app).await;
    let first = webhook_worker(&app);
    rx.wait_for(1, Duration::from_secs(10)).await;
    first.abort();
    let _ = first.await;
    assert!(delivery_states(&app, &endpoint).await.iter().all(|(_, s, n)| s == "pending" && *n == 0));
    // Another node's worker takes the stale claim over and sends both, the first with the same webhook-id.
    let second = webhook_worker(&app);
    let got = rx.wait_for(3, Duration::from_secs(10)).await;
    assert_eq!(got[0].id, got[1].id);
    assert!(got[2].id > got[1].id);
    assert_eq!(settled(&app, &endpoint, all_succeeded_once).await.len(), 2);
    second.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_each_endpoints_delivery_log() {
    let app = loopback_app().await;
    let rx = receiver(|n| if n == 0 { Answer::Status(500) } else { Answer::Status(200) }).await;
    let (endpoint, _) = register_proposals(&app, &format!("http://{}/hook", rx.addr)).await;
    propose(&app).await;
    wait_for_attempt(&app, &endpoint).await;
    let op = fiscus_apptest::console::enrolled_operator(&app, "log@example.com", fiscus_domain::people::Role::Approver)
        .await;
    let cookie = fiscus_apptest::console::sign_in(&app, &op).await;
    let page = app
        .http
        .get(app.url(&format!("/console/webhooks/{endpoint}")))
        .header("Cookie", &cookie)
        .send()
        .await
        .expect("request");
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("action.proposed") && html.contains("the receiver answered 500"), "{html}");
    assert!(html.contains("1 pending"), "{html}");
}

/// Registers `url` with `key`'s application for `action.proposed` (one event per proposal); returns the
/// endpoint id.
async fn register_with(app: &TestApp, key: &str, url: &str) -> String {
    let created = app.post_json(HOOKS, key, &json!({ "url": url, "event_types": ["action.proposed"] }), None).await;
    assert_eq!(created.status(), 201);
    created.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string()
}

async fn propose_with(app: &TestApp, key: &str) -> String {
    let created = app.post_json("/api/v2/actions", key, &proposal(), None).await;
    assert_eq!(created.status(), 201);
    created.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string()
}

fn action_ids(got: &[Got]) -> Vec<String> {
    let mut ids: Vec<String> = got
        .iter()
        .map(|g| {
            serde_json::from_str::<Value>(&g.body).expect("json")["data"]["action_id"].as_str().expect("id").to_string()
        })
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_belongs_to_its_application_and_hears_only_what_its_application_may_read() {
    let app = loopback_app().await;
    // Two applications that may register webhooks and propose, but not read other applications' actions,
    // and a third that reads every action.
    let (_, key_a) = app.new_app(Environment::Sandbox, "agent:execution:webhooks actions:create", None).await;
    let (_, key_b) = app.new_app(Environment::Sandbox, "agent:execution:webhooks actions:create", None).await;
    let (app_r, key_r) = app.new_app(Environment::Sandbox, "agent:execution:webhooks actions:read", None).await;
    let (rx_a, rx_b, rx_r) = (
        receiver(|_| Answer::Status(204)).await,
        receiver(|_| Answer::Status(204)).await,
        receiver(|_| Answer::Status(204)).await,
    );
    let endpoint_a = register_with(&app, &key_a, &format!("http://{}/hook", rx_a.addr)).await;
    register_with(&app, &key_b, &format!("http://{}/hook", rx_b.addr)).await;
    register_with(&app, &key_r, &format!("http://{}/hook", rx_r.addr)).await;
    // B neither lists nor revokes A's endpoint.
    let listed: Value = app.get(HOOKS, &key_b).await.json().await.expect("json");
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_ne!(listed["data"][0]["id"], endpoint_a.as_str());
    let revoke = app.http.delete(app.url(&format!("{HOOKS}/{endpoint_a}"))).bearer_auth(&key_b).send().await;
    fiscus_apptest::problem(revoke.expect("request"), 404, "not_found").await;
    // Each hears its own application's action; the reader hears both.
    let by_a = propose_with(&app, &key_a).await;
    let by_b = propose_with(&app, &key_b).await;
    assert_eq!(action_ids(&rx_r.wait_for(2, Duration::from_secs(10)).await), {
        let mut both = vec![by_a.clone(), by_b.clone()];
        both.sort();
        both
    });
    assert_eq!(action_ids(&rx_a.wait_for(1, Duration::from_secs(10)).await), vec![by_a]);
    assert_eq!(action_ids(&rx_b.wait_for(1, Duration::from_secs(10)).await), vec![by_b]);
    // Once the reader is suspended, its endpoint hears nothing more.
    app.admin().set_application_status(&app_r, AppStatus::Suspended).await.expect("suspend");
    propose_with(&app, &key_a).await;
    assert_eq!(rx_a.wait_for(2, Duration::from_secs(10)).await.len(), 2);
    app.drain().await;
    assert_eq!(rx_r.got().len(), 2, "a suspended application's endpoint hears nothing");
    assert_eq!(rx_b.got().len(), 1);
}

/// A webhook delivery worker of its own (another node's, as far as claims go).
fn webhook_worker(app: &TestApp) -> tokio::task::JoinHandle<()> {
    let worker = fiscus_server::workers::webhooks::Webhooks::new(&app.state, fiscus_domain::ids::new_id("wrk"))
        .expect("webhook clients");
    fiscus_server::workers::spawn(app.state.services.clone(), worker)
}
