use crate::helpers::*;
use fiscus_store::credits::{self, EntryKind, NewEntry, Totals};

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
