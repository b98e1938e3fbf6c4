//! What the repository tests of every crate share: a fresh database per test (a SQLite file in a temp dir, or
//! a PostgreSQL database of its own when `FISCUS_TEST_DATABASE_URL` is set, dropped afterwards) and builders
//! for the rows most tests need. A dev-dependency only: nothing that ships links it.

use fiscus_domain::credentials::Environment;
use fiscus_domain::ids::new_id;
use fiscus_domain::integrity::SealKey;
use fiscus_domain::integrity::Stored;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::appends::{Appended, Appends};
use fiscus_store::{Backend, Store, StoreError, applications, workspaces};
use sqlx::{Connection, Executor};

/// A fixed instant (microseconds since the epoch) that tests count from.
pub const NOW: i64 = 1_790_000_000_000_000;
const SERVER_KEY: &[u8] = b"fiscus-store-tests-server-key";

pub fn seal_key() -> SealKey {
    SealKey::derive(SERVER_KEY)
}

/// A store on a database of its own.
pub struct TestDb {
    pub store: Store,
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    postgres: Option<(String, String)>,
}

impl std::ops::Deref for TestDb {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

pub async fn fresh_store() -> TestDb {
    fresh_store_with("").await
}

/// A store whose PostgreSQL database sorts text by a language's rules (ICU `en`), not byte by byte as the
/// other tests' databases do: a query that assumes an order of characters (a sentinel that sorts last) shows
/// here. On SQLite, whose text order is always byte order, it is [`fresh_store`].
pub async fn fresh_store_collated() -> TestDb {
    fresh_store_with(" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en'").await
}

async fn fresh_store_with(create_options: &str) -> TestDb {
    if let Ok(admin_url) = std::env::var("FISCUS_TEST_DATABASE_URL") {
        let (url, name) = fresh_postgres(&admin_url, "fiscus_s", create_options).await;
        let store = Store::connect(&url, 4, seal_key()).await.expect("connect to the test database");
        store.migrate().await.expect("migrate");
        TestDb { store, url, _dir: None, postgres: Some((admin_url, name)) }
    } else {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("store.db").display());
        let store = Store::connect(&url, 4, seal_key()).await.expect("connect to the test database");
        store.migrate().await.expect("migrate");
        TestDb { store, url, _dir: Some(dir), postgres: None }
    }
}

/// Creates a database of its own for one test on the server of `admin_url` (named `{prefix}_…`), and
/// answers its URL and name. Without `create_options` it is a copy of a template migrated once for this set
/// of migrations (copying takes about a tenth of what migrating takes, paid by every test otherwise); the
/// caller's own migration then finds nothing to do. With options (another collation) it is created empty.
pub async fn fresh_postgres(admin_url: &str, prefix: &str, create_options: &str) -> (String, String) {
    let name = format!("{prefix}_{}", new_id("db").to_lowercase().replace('_', ""));
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(admin_url).await.expect("connect to FISCUS_TEST_DATABASE_URL");
    let options = if create_options.is_empty() {
        format!(" TEMPLATE {}", migrated_template(admin_url, &mut conn).await)
    } else {
        create_options.to_string()
    };
    conn.execute(format!("CREATE DATABASE {name}{options}").as_str()).await.expect("create test database");
    conn.close().await.ok();
    (database_url(admin_url, &name), name)
}

/// `admin_url` with its database replaced by `name`.
fn database_url(admin_url: &str, name: &str) -> String {
    let (prefix, _) = admin_url.rsplit_once('/').expect("URL with a database name");
    let query = admin_url.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
    format!("{prefix}/{name}{query}")
}

/// The template database of this set of migrations (named by a digest of the migration files, so a changed
/// or added migration makes a new one), migrated by whichever test process needs it first. It is built under
/// a name of its own and renamed when complete, so a template that exists is whole; of two processes
/// building at once, the one whose rename fails drops its copy.
async fn migrated_template(admin_url: &str, conn: &mut sqlx::AnyConnection) -> String {
    let template = format!("fiscus_tpl_{}", migrations_digest());
    let found: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pg_database WHERE datname = $1")
        .bind(&template)
        .fetch_one(&mut *conn)
        .await
        .expect("read pg_database");
    if found > 0 {
        return template;
    }
    let building = format!("fiscus_tplb_{}", new_id("db").to_lowercase().replace('_', ""));
    conn.execute(format!("CREATE DATABASE {building}").as_str()).await.expect("create a template");
    let store = Store::connect(&database_url(admin_url, &building), 1, seal_key()).await.expect("connect");
    store.migrate().await.expect("migrate the template");
    store.close().await;
    if conn.execute(format!("ALTER DATABASE {building} RENAME TO {template}").as_str()).await.is_err() {
        // Another process renamed its copy first: that one is the template.
        let _ = conn.execute(format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)").as_str()).await;
    }
    template
}

/// SHA-256 over the store's migration files (names and contents, in name order), in 16 hex digits.
fn migrations_digest() -> String {
    use sha2::{Digest, Sha256};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fiscus-store/migrations");
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(&dir).expect("the store's migrations").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut hash = Sha256::new();
    for file in files {
        hash.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hash.update(std::fs::read(&file).expect("a migration"));
    }
    hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin_url, name)) = self.postgres.take() {
            // Drop cannot await, and the test's runtime may be shutting down: use a thread of its own.
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

/// Runs one statement with one text bind outside the repositories (to edit what a repository wrote).
pub async fn exec(db: &Store, sql: &str, bind: &str) -> u64 {
    let mut conn = db.read().await.expect("connection");
    sqlx::query(sql).bind(bind).execute(&mut *conn).await.expect("statement").rows_affected()
}

/// Stores `value` in `table.column` of row `id`, past the schema's CHECK constraint if there is one: the
/// way a value this code does not know could reach the database (an older or newer version, a hand edit).
pub async fn force(db: &Store, table: &str, column: &str, id: &str, value: &str) {
    let mut conn = db.read().await.expect("connection");
    match db.backend() {
        Backend::Sqlite => {
            conn.execute("PRAGMA ignore_check_constraints = ON").await.expect("pragma");
        }
        Backend::Postgres => {
            conn.execute(format!("ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_{column}_check").as_str())
                .await
                .expect("drop check constraint");
        }
    }
    let done = sqlx::query(&format!("UPDATE {table} SET {column} = $1 WHERE id = $2"))
        .bind(value)
        .bind(id)
        .execute(&mut *conn)
        .await
        .expect("forced update");
    assert_eq!(done.rows_affected(), 1, "{table} {id} was not updated");
    if db.backend() == Backend::Sqlite {
        conn.execute("PRAGMA ignore_check_constraints = OFF").await.expect("pragma");
    }
}

/// Asserts `Corrupt` naming `column` (the repositories say `table id: column = "value"`).
#[track_caller]
pub fn assert_corrupt<T: std::fmt::Debug>(result: Result<T, StoreError>, column: &str) {
    match result {
        Err(StoreError::Corrupt(message)) => {
            assert!(message.contains(column), "Corrupt does not name {column}: {message}")
        }
        other => panic!("expected Corrupt naming {column}, got {other:?}"),
    }
}

#[track_caller]
pub fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(matches!(result, Err(StoreError::NotFound)), "expected NotFound, got {result:?}");
}

#[track_caller]
pub fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(matches!(result, Err(StoreError::Conflict(_))), "expected Conflict, got {result:?}");
}

pub fn sandbox(workspace_id: &str) -> Tenant {
    Tenant { workspace_id: workspace_id.to_string(), environment: Environment::Sandbox }
}

pub fn production(workspace_id: &str) -> Tenant {
    Tenant { workspace_id: workspace_id.to_string(), environment: Environment::Production }
}

/// A workspace's sandbox tenant, after creating the workspace.
pub async fn tenant(db: &Store) -> Tenant {
    sandbox(&workspace(db).await)
}

/// The tenants a tenant's rows must be invisible to: another workspace's and its own other environment.
pub async fn strangers(db: &Store, tenant: &Tenant) -> [Tenant; 2] {
    let other = workspace(db).await;
    let other_environment = match tenant.environment {
        Environment::Sandbox => production(&tenant.workspace_id),
        Environment::Production => sandbox(&tenant.workspace_id),
    };
    [Tenant { workspace_id: other, environment: tenant.environment }, other_environment]
}

pub async fn workspace(db: &Store) -> String {
    let id = new_id("wsp");
    let mut tx = db.begin().await.expect("begin");
    workspaces::insert(
        &mut tx,
        &workspaces::NewWorkspace {
            id: &id,
            name: "Test Workspace",
            entitlement: &ScopeSet::all(),
            is_demo: false,
            created_at: NOW,
        },
    )
    .await
    .expect("insert workspace");
    tx.commit().await.expect("commit");
    id
}

pub async fn application(db: &Store, tenant: &Tenant) -> String {
    let id = new_id("app");
    let mut conn = db.read().await.expect("connection");
    applications::insert(
        &mut conn,
        tenant,
        &applications::NewApplication {
            id: &id,
            name: "Test App",
            scopes: &ScopeSet::all(),
            service_class: "default",
            created_at: NOW,
        },
    )
    .await
    .expect("insert application");
    id
}

/// Adds a sealed autonomy-evidence row of `t` in `domain` to `appends`, as the actions' repository writes it:
/// a real append-only sealed table the store's own tests can write without that repository, which lives
/// above the store. `summary` fills the one nullable column.
pub fn append_evidence(
    appends: &mut Appends,
    key: &SealKey,
    t: &Tenant,
    id: &str,
    domain: &str,
    summary: Option<&str>,
) {
    let text = |v: &str| Stored::Text(v.to_string());
    let values = vec![
        text(id),
        text(&t.workspace_id),
        text(t.environment.as_str()),
        text(domain),
        text("Quarterly controls review"),
        summary.map_or(Stored::Null, text),
        text("document"),
        text("doc-1"),
        text("sha256:66"),
        Stored::Integer(NOW),
        text("{}"),
        text("sha256:77"),
        text("app_test"),
        Stored::Integer(NOW),
    ];
    appends.sealed_row(key, &fiscus_store::seals::AUTONOMY_EVIDENCE, values).expect("evidence row");
}

/// One sealed autonomy-evidence row of `t` in `domain`, written; answers its id.
pub async fn evidence(db: &Store, t: &Tenant, domain: &str) -> String {
    let id = new_id("evd");
    let mut appends = Appends::new();
    append_evidence(&mut appends, db.seal_key(), t, &id, domain, None);
    assert!(matches!(db.append(appends).await.expect("written"), Appended::Written));
    id
}

/// A sealed record holding `body` (stored as its JSON, hashed), created by a test application at `created_at`.
pub fn sealed<B: serde::Serialize>(prefix: &str, body: B, created_at: i64) -> fiscus_store::sealed_records::Record<B> {
    let body_json = serde_json::to_string(&body).expect("json");
    let content_hash = fiscus_domain::evidence::seal_bytes(body_json.as_bytes());
    fiscus_store::sealed_records::Record {
        id: new_id(prefix),
        body,
        body_json,
        content_hash,
        created_by: fiscus_domain::actor::Actor::application("app_test"),
        created_at,
    }
}

/// Asserts `Tampered` (a sealed row that no longer matches its seal).
#[track_caller]
pub fn assert_tampered<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(matches!(result, Err(StoreError::Tampered(_))), "expected Tampered, got {result:?}");
}
