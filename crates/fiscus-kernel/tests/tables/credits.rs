//! The AI credit ledger: totals of grants and consumption, entry ids taken once, tenants apart, kinds by name,
//! and a debit holding back other debits only.

use crate::helpers::*;
use fiscus_kernel::tables::credits::{self, EntryKind, NewEntry, Totals};

fn entry(id: &str, kind: EntryKind, credits: i64) -> NewEntry<'_> {
    NewEntry { id, kind, credits, reason: "test", reference: Some("ref"), created_at: NOW }
}

#[tokio::test]
async fn totals_sum_grants_and_consumption() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(credits::totals(&mut conn, &t).await.expect("totals"), Totals::default());
    credits::record(&mut conn, &t, &entry("crd_1", EntryKind::Grant, 100)).await.expect("grant");
    credits::record(&mut conn, &t, &entry("crd_2", EntryKind::Grant, 50)).await.expect("grant");
    credits::record(&mut conn, &t, &entry("crd_3", EntryKind::Consumption, 30)).await.expect("consume");
    assert_eq!(
        credits::totals(&mut conn, &t).await.expect("totals"),
        Totals { granted: 150, consumed: 30, entries: 3 }
    );
}

#[tokio::test]
async fn an_entry_id_already_taken_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut conn = db.read().await.expect("conn");
    credits::record(&mut conn, &t, &entry("crd_1", EntryKind::Grant, 100)).await.expect("grant");
    assert_conflict(credits::record(&mut conn, &t, &entry("crd_1", EntryKind::Grant, 100)).await);
}

#[tokio::test]
async fn credits_of_another_workspace_or_environment_are_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let others = strangers(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    credits::record(&mut conn, &t, &entry("crd_1", EntryKind::Grant, 100)).await.expect("grant");
    for other in &others {
        assert_eq!(credits::totals(&mut conn, other).await.expect("totals"), Totals::default(), "{other:?}");
    }
}

#[test]
fn entry_kinds_are_stored_by_name() {
    assert_eq!((EntryKind::Grant.as_str(), EntryKind::Consumption.as_str()), ("grant", "consumption"));
}

/// A debit serialises the workspace's debits by locking its row, but must not hold back a row inserted
/// elsewhere that merely references the workspace (a foreign key's check): a group commit inserts such rows
/// while it holds the workspace's audit head, which the debiting transaction waits for next, so a lock that
/// blocked them deadlocked the two (found under load by bench/cluster.sh). PostgreSQL only: SQLite has one
/// writer.
#[tokio::test]
async fn a_debit_holds_back_other_debits_but_not_rows_that_reference_the_workspace() {
    if std::env::var("FISCUS_TEST_DATABASE_URL").is_err() {
        return;
    }
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut grant = db.begin().await.expect("begin");
    credits::record(grant.conn(), &t, &entry("crd_grant", EntryKind::Grant, 10)).await.expect("grant");
    grant.commit().await.expect("commit");
    let mut debiting = db.begin().await.expect("begin");
    credits::debit(&mut debiting, &t, &entry("crd_one", EntryKind::Consumption, 1)).await.expect("debit");

    // Another connection inserts a row referencing the workspace while the debit's lock is held.
    let pool = sqlx::AnyPool::connect(&db.url).await.expect("pool");
    let mut other = pool.begin().await.expect("begin");
    sqlx::query("SET LOCAL lock_timeout = '2s'").execute(&mut *other).await.expect("timeout");
    sqlx::query(
        "INSERT INTO usage_counters (workspace_id, environment, application_id, credential_id, operation, day, \
         requests, errors) VALUES ($1, 'sandbox', 'app_x', 'key_x', 'get_workspace', '2026-12-06', 1, 0)",
    )
    .bind(&t.workspace_id)
    .execute(&mut *other)
    .await
    .expect("a referencing insert does not wait for the debit's lock");
    other.commit().await.expect("commit");

    // A second debit of the workspace does wait for the first.
    let mut second = pool.begin().await.expect("begin");
    sqlx::query("SET LOCAL lock_timeout = '200ms'").execute(&mut *second).await.expect("timeout");
    let waited = sqlx::query("SELECT id FROM workspaces WHERE id = $1 FOR NO KEY UPDATE")
        .bind(&t.workspace_id)
        .execute(&mut *second)
        .await;
    assert!(waited.is_err(), "another decider waits for the lock");
    drop(second);
    debiting.commit().await.expect("commit");
}
