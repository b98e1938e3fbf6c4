//! What the HTTP tests of every crate share: `spawn_app()` (a real server on port 0 with its own fresh
//! database: SQLite by default, PostgreSQL when `FISCUS_TEST_DATABASE_URL` is set) and typed helpers, the
//! console as a person uses it (`console`), a Financial Action's bodies (`actions`) and a bank channel's
//! folders and messages (`bank`). A dev-dependency only: an area's tests (`tests/api/` beside the area) and
//! the composition's use it, and nothing that ships links it.

pub mod actions;
pub mod bank;
pub mod console;

use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::scopes::ScopeSet;
use fiscus_http::AppState;
use fiscus_kernel::Settings;
use fiscus_kernel::settings::ServiceClass;
use fiscus_server::admin::Admin;
use serde_json::Value;
use sqlx::{Connection, Executor};

pub struct TestApp {
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    pub workspace_id: String,
    pub app_id: String,
    /// A sandbox key of an application holding every scope.
    pub key: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
    postgres: Option<(String, String)>,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut settings = Settings { data_dir: dir.path().to_path_buf(), ..Settings::default() };
    settings.service_classes.insert("tiny".into(), ServiceClass { quota: 3, window_seconds: 60 });
    settings.shutdown_grace_seconds = 5;
    settings.database_max_connections = 8;
    settings.worker_interval_ms = 50;
    // Unoptimised test builds on a busy 2-core machine can take longer than the 3 s in-request budget for a
    // computation the tests expect answered in the request (201); the budget itself is tested where a test
    // sets it (`fairness.rs`).
    settings.inline_compute_budget_ms = 20_000;
    let mut postgres = None;
    if let Ok(admin_url) = std::env::var("FISCUS_TEST_DATABASE_URL") {
        let (url, name) = fiscus_testkit::fresh_postgres(&admin_url, "fiscus_t", "").await;
        settings.database_url = Some(url);
        postgres = Some((admin_url, name));
    }
    configure(&mut settings);
    let state = fiscus_server::serve::open(settings).await.expect("open");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(fiscus_server::serve::run(state.clone(), listener, async move {
        let _ = rx.await;
    }));
    let admin = Admin { store: &state.store, server_key: &state.server_key, actor: Actor::cli() };
    let ws = admin.create_workspace("Test Workspace", false).await.expect("workspace");
    let app =
        admin.create_application(&ws.id, "Test App", Environment::Sandbox, &ScopeSet::all(), None).await.expect("app");
    let key = admin.issue_key(&app.id, None).await.expect("key");
    TestApp {
        base: format!("http://{addr}"),
        http: reqwest::Client::new(),
        state: state.clone(),
        workspace_id: ws.id,
        app_id: app.id,
        key: key.secret,
        shutdown: Some(tx),
        _dir: dir,
        postgres,
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some((admin_url, name)) = self.postgres.take() {
            // Drop the per-test database from a separate thread: Drop cannot await, and the test's runtime
            // may be shutting down.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                    return;
                };
                rt.block_on(async move {
                    if let Ok(mut conn) = sqlx::AnyConnection::connect(&admin_url).await {
                        let _ = conn.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
                        let _ = conn.close().await;
                    }
                });
            })
            .join();
        }
    }
}

impl TestApp {
    /// Stops the node as SIGTERM does (the test keeps its database and directory).
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    /// Waits until this node's workers have worked off everything due (settlements, compute jobs, workflow
    /// and agent runs, webhook deliveries, and what each queued for another), without guessing a time: see
    /// `fiscus_kernel::progress`. Fails the test after a minute.
    pub async fn drain(&self) {
        tokio::time::timeout(std::time::Duration::from_secs(60), self.state.progress.drained())
            .await
            .expect("the workers did not drain within a minute");
    }

    /// A compute job once the workers have drained: ended, whatever its end.
    pub async fn ended_job(&self, id: &str) -> Value {
        self.drain().await;
        let job: Value =
            self.get(&format!("/api/v2/quant/compute/jobs/{id}"), &self.key).await.json().await.expect("job");
        assert!(["succeeded", "failed", "cancelled"].contains(&job["status"].as_str().unwrap_or_default()), "{job}");
        job
    }

    /// The demo's data (instruments, prices, economics, the book) in this app's workspace, as `serve --demo`
    /// loads it.
    pub async fn load_demo(&self) {
        fiscus_server::demo_data::load(
            &self.state.store,
            &fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::demo()),
            &self.workspace_id,
            &fiscus_data::import::Silent,
        )
        .await
        .expect("demo data");
    }

    pub fn admin(&self) -> Admin<'_> {
        Admin { store: &self.state.store, server_key: &self.state.server_key, actor: Actor::cli() }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn get(&self, path: &str, key: &str) -> reqwest::Response {
        self.http.get(self.url(path)).bearer_auth(key).send().await.expect("request")
    }

    pub async fn post_json(
        &self,
        path: &str,
        key: &str,
        body: &Value,
        idempotency_key: Option<&str>,
    ) -> reqwest::Response {
        let mut req = self.http.post(self.url(path)).bearer_auth(key).json(body);
        if let Some(k) = idempotency_key {
            req = req.header("Idempotency-Key", k);
        }
        req.send().await.expect("request")
    }

    /// Another workspace ("Other") with a sandbox application holding every scope: its id and the key, for
    /// checking that this workspace's data is invisible from there.
    pub async fn other_workspace_key(&self) -> (String, String) {
        let other = self.admin().create_workspace("Other", false).await.expect("workspace");
        let app = self
            .admin()
            .create_application(
                &other.id,
                "Other App",
                Environment::Sandbox,
                &fiscus_domain::scopes::ScopeSet::all(),
                None,
            )
            .await
            .expect("app");
        let key = self.admin().issue_key(&app.id, None).await.expect("key").secret;
        (other.id, key)
    }

    /// A new application in this workspace with its key.
    pub async fn new_app(&self, environment: Environment, scopes: &str, class: Option<&str>) -> (String, String) {
        let app = self
            .admin()
            .create_application(
                &self.workspace_id,
                "Another App",
                environment,
                &ScopeSet::parse(scopes).expect("scopes"),
                class,
            )
            .await
            .expect("app");
        let key = self.admin().issue_key(&app.id, None).await.expect("key");
        (app.id, key.secret)
    }

    pub async fn new_app_result(&self, scopes: &str) -> anyhow::Result<fiscus_store::applications::ApplicationRow> {
        self.admin()
            .create_application(
                &self.workspace_id,
                "Another App",
                Environment::Sandbox,
                &ScopeSet::parse(scopes).expect("scopes"),
                None,
            )
            .await
    }

    /// Runs a query against the test database (for assertions on effects and for tampering).
    pub async fn count(&self, sql: &str) -> i64 {
        let mut conn = self.state.store.read().await.expect("conn");
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&mut *conn).await.expect("count");
        n
    }

    /// Re-seals a row changed by a test standing in for something Fiscus would do itself (time passing,
    /// a console decision), so that it is not taken for tampering.
    pub async fn reseal(&self, table: &fiscus_store::seals::SealedTable, id: &str) {
        let mut tx = self.state.store.begin().await.expect("begin");
        fiscus_store::seals::seal(&mut tx, table, &self.workspace_id, id).await.expect("seal");
        tx.commit().await.expect("commit");
    }

    pub async fn execute(&self, sql: &str) {
        let mut conn = self.state.store.read().await.expect("conn");
        sqlx::query(sql).execute(&mut *conn).await.expect("execute");
    }

    /// Runs `sql` on the transparency log's integrated state (on SQLite a file of its own beside the
    /// database: `fiscus_store::evidence_db`).
    pub async fn execute_evidence(&self, sql: &str) {
        let mut ev = self.state.store.evidence_read().await.expect("evidence");
        sqlx::query(sql).execute(ev.conn()).await.expect("execute");
    }
}

/// Asserts a problem+json response and returns its body.
pub async fn problem(response: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status().as_u16(), status, "status for {code}");
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert_eq!(content_type, "application/problem+json");
    let request_id = response.headers().get("request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let body: Value = response.json().await.expect("problem body");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert!(body["title"].is_string());
    assert_eq!(body["request_id"].as_str(), request_id.as_deref(), "problem carries the Request-Id");
    body
}

pub fn evidence_body(title: &str) -> Value {
    serde_json::json!({
        "domain": "security",
        "title": title,
        "source_type": "audit_report",
        "source_reference": "vault://assurance/report.pdf",
        "source_hash": format!("sha256:{}", "ab".repeat(32)),
    })
}

pub const EVIDENCE: &str = "/api/v2/actions/autonomy/assessment-evidence";

/// Inline returns (or features) as the API takes them, each asset's series by name, from rows of periods.
pub fn columns(names: &[&str], rows: &serde_json::Value) -> serde_json::Value {
    let rows = rows.as_array().expect("rows");
    names
        .iter()
        .enumerate()
        .map(|(j, name)| (name.to_string(), serde_json::Value::Array(rows.iter().map(|r| r[j].clone()).collect())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Standard base64 with padding, as the API carries keys and signatures.
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
