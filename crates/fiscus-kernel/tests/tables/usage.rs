//! Usage counts: added up per credential, operation and day in order, and invisible to other tenants.

use crate::helpers::*;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::tables::usage::{self, UsageCount, UsageKey};

fn key(t: &Tenant, credential: &str, operation: &str, day: &str) -> UsageKey {
    UsageKey {
        workspace_id: t.workspace_id.clone(),
        environment: t.environment.as_str().into(),
        application_id: "app_1".into(),
        credential_id: credential.into(),
        operation: operation.into(),
        day: day.into(),
    }
}

#[tokio::test]
async fn counts_add_up_per_credential_operation_and_day_in_order() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut conn = db.read().await.expect("conn");
    usage::add(&mut conn, &key(&t, "key_b", "listActions", "2026-11-22"), UsageCount { requests: 2, errors: 1 })
        .await
        .expect("add");
    usage::add(&mut conn, &key(&t, "key_b", "listActions", "2026-11-22"), UsageCount { requests: 3, errors: 0 })
        .await
        .expect("add");
    usage::add(&mut conn, &key(&t, "key_a", "listActions", "2026-11-22"), UsageCount { requests: 1, errors: 0 })
        .await
        .expect("add");
    usage::add(&mut conn, &key(&t, "key_a", "getAction", "2026-11-21"), UsageCount { requests: 4, errors: 4 })
        .await
        .expect("add");
    let rows: Vec<(String, String, String, i64, i64)> = usage::list(&mut conn, &t, "2026-11-21")
        .await
        .expect("list")
        .into_iter()
        .map(|r| (r.day, r.credential_id, r.operation, r.requests, r.errors))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("2026-11-21".into(), "key_a".into(), "getAction".into(), 4, 4),
            ("2026-11-22".into(), "key_a".into(), "listActions".into(), 1, 0),
            ("2026-11-22".into(), "key_b".into(), "listActions".into(), 5, 1),
        ]
    );
    let since = usage::list(&mut conn, &t, "2026-11-22").await.expect("list");
    assert_eq!(since.len(), 2);
    assert!(since.iter().all(|r| r.application_id == "app_1"));
}

#[tokio::test]
async fn usage_of_another_workspace_or_environment_is_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let others = strangers(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    usage::add(&mut conn, &key(&t, "key_a", "listActions", "2026-11-22"), UsageCount { requests: 1, errors: 0 })
        .await
        .expect("add");
    for other in &others {
        assert!(usage::list(&mut conn, other, "2026-01-01").await.expect("list").is_empty(), "{other:?}");
    }
}
