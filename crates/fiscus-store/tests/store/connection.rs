//! The `Store` itself (`lib.rs`) and `dialect`: connecting, migrating, transactions, and the SQL that differs.

use crate::helpers::*;
use fiscus_store::{Backend, Store, StoreError, dialect, redact_url, workspaces};

#[tokio::test]
async fn a_fresh_store_answers_and_migrating_again_changes_nothing() {
    let db = fresh_store().await;
    db.ping().await.expect("ping");
    db.migrate().await.expect("migrate again");
    let expected = if std::env::var("FISCUS_TEST_DATABASE_URL").is_ok() { Backend::Postgres } else { Backend::Sqlite };
    assert_eq!(db.backend(), expected);
    let conn = db.read().await.expect("conn");
    assert_eq!(dialect::backend_of(&conn), expected);
    assert!(db.pool().size() >= 1);
}

/// Records a migration as applied the way sqlx does, without running anything: what a release this build does
/// not know left in the database.
async fn applied_elsewhere(db: &TestDb, version: i64) {
    let mut conn = db.read().await.expect("conn");
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, 'from another release', TRUE, $2, 1)",
    )
    .bind(version)
    .bind(vec![0u8; 48])
    .execute(&mut *conn)
    .await
    .expect("record a migration");
}

#[tokio::test]
async fn a_database_a_newer_release_migrated_is_served_and_one_of_another_line_is_refused() {
    // A rolling upgrade: the next release expanded the schema (a table this build does not know) and recorded
    // its migration; a node of this release restarting meanwhile migrates at start and must come back.
    let db = fresh_store().await;
    let mut conn = db.read().await.expect("conn");
    sqlx::query("CREATE TABLE from_the_next_release (id TEXT PRIMARY KEY)").execute(&mut *conn).await.expect("expand");
    drop(conn);
    applied_elsewhere(&db, 99_991_231_000_000).await;
    db.migrate().await.expect("a newer release's expansion is served");
    workspace(&db).await;

    // A migration this build should know (older than its newest) but does not: not a release of this line.
    let other = fresh_store().await;
    applied_elsewhere(&other, 20_000_101_000_000).await;
    let refused = other.migrate().await.expect_err("refused");
    assert!(
        matches!(&refused, StoreError::Migration(m) if m.contains("20000101000000") && m.contains("does not know")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn an_uncommitted_transaction_changes_nothing() {
    let db = fresh_store().await;
    let mut tx = db.begin().await.expect("begin");
    workspaces::insert(
        &mut tx,
        &workspaces::NewWorkspace {
            id: "wsp_rolled_back",
            name: "Gone",
            entitlement: &fiscus_domain::scopes::ScopeSet::all(),
            is_demo: true,
            created_at: NOW,
        },
    )
    .await
    .expect("insert");
    assert_eq!(tx.seal_key().audit_head("w", 0, "h"), db.seal_key().audit_head("w", 0, "h"));
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    assert_not_found(workspaces::get(&mut conn, "wsp_rolled_back").await);
}

#[tokio::test]
async fn a_closed_store_no_longer_answers() {
    let db = fresh_store().await;
    db.close().await;
    assert!(db.ping().await.is_err());
}

#[tokio::test]
async fn an_unsupported_url_is_a_configuration_error_that_hides_the_password() {
    let result = Store::connect("mysql://user:secret@host/db", 1, seal_key()).await;
    match result {
        Err(StoreError::Config(message)) => {
            assert!(message.contains("mysql://user:***@host/db"), "{message}");
            assert!(!message.contains("secret"), "{message}");
        }
        Err(other) => panic!("expected Config, got {other:?}"),
        Ok(_) => panic!("expected Config, got a store"),
    }
}

#[test]
fn redact_url_hides_only_the_password() {
    assert_eq!(redact_url("postgres://u:p@h:5432/d"), "postgres://u:***@h:5432/d");
    assert_eq!(redact_url("postgres://u@h/d"), "postgres://u@h/d");
    assert_eq!(redact_url("sqlite:///tmp/x.db"), "sqlite:///tmp/x.db");
}

#[test]
fn backends_name_themselves() {
    assert_eq!((Backend::Sqlite.name(), Backend::Postgres.name()), ("sqlite", "postgres"));
}

#[test]
fn dialect_differs_only_where_documented() {
    assert_eq!(dialect::begin_write(Backend::Sqlite), "BEGIN IMMEDIATE");
    assert_eq!(dialect::begin_write(Backend::Postgres), "BEGIN");
    assert_eq!(dialect::for_update(Backend::Sqlite), "");
    assert_eq!(dialect::for_update(Backend::Postgres), " FOR NO KEY UPDATE");
    assert_eq!(dialect::for_update_skip_locked(Backend::Sqlite), "");
    assert_eq!(dialect::for_update_skip_locked(Backend::Postgres), " FOR NO KEY UPDATE SKIP LOCKED");
}
