//! Applications: read back in their environment and workspace only, status changes, ids taken once, and
//! unknown stored values refused as corrupt.

use crate::helpers::*;
use fiscus_domain::credentials::{AppStatus, Environment};
use fiscus_domain::scopes::ScopeSet;
use fiscus_store::applications;

#[tokio::test]
async fn an_application_reads_back_active_in_its_environment() {
    let db = fresh_store().await;
    let t = production(&workspace(&db).await);
    let id = application(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    let row = applications::get(&mut conn, &t.workspace_id, &id).await.expect("get");
    assert_eq!(row.workspace_id, t.workspace_id);
    assert_eq!(row.environment().expect("environment"), Environment::Production);
    assert_eq!(row.status().expect("status"), AppStatus::Active);
    assert_eq!(row.scopes(), ScopeSet::all());
    assert_eq!(row.service_class, "default");
    assert_eq!(applications::workspace_of(&mut conn, &id).await.expect("workspace_of"), t.workspace_id);
}

#[tokio::test]
async fn list_shows_both_environments_of_the_workspace_only() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut ids = vec![application(&db, &sandbox(&ws)).await, application(&db, &production(&ws)).await];
    ids.sort();
    let other = workspace(&db).await;
    application(&db, &sandbox(&other)).await;
    let mut conn = db.read().await.expect("conn");
    let listed: Vec<String> =
        applications::list(&mut conn, &ws).await.expect("list").into_iter().map(|a| a.id).collect();
    assert_eq!(listed, ids);
}

#[tokio::test]
async fn an_application_of_another_workspace_is_not_found_and_unchanged() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = application(&db, &t).await;
    let other = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    assert_not_found(applications::get(&mut conn, &other, &id).await);
    assert!(applications::list(&mut conn, &other).await.expect("list").is_empty());
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(applications::set_status(&mut tx, &other, &id, AppStatus::Suspended, NOW + 1).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        applications::get(&mut conn, &t.workspace_id, &id).await.expect("get").status().expect("status"),
        AppStatus::Active
    );
}

#[tokio::test]
async fn set_status_changes_status_and_updated_at() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = application(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    applications::set_status(&mut tx, &t.workspace_id, &id, AppStatus::Suspended, NOW + 7).await.expect("suspend");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let row = applications::get(&mut conn, &t.workspace_id, &id).await.expect("get");
    assert_eq!(row.status().expect("status"), AppStatus::Suspended);
    assert_eq!(row.updated_at, NOW + 7);
}

#[tokio::test]
async fn workspace_of_an_unknown_application_is_not_found() {
    let db = fresh_store().await;
    let mut conn = db.read().await.expect("conn");
    assert_not_found(applications::workspace_of(&mut conn, "app_unknown").await);
}

#[tokio::test]
async fn an_unknown_stored_status_or_environment_is_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = application(&db, &t).await;
    force(&db, "applications", "status", &id, "dormant").await;
    force(&db, "applications", "environment", &id, "staging").await;
    let mut conn = db.read().await.expect("conn");
    let row = applications::get(&mut conn, &t.workspace_id, &id).await.expect("get");
    assert_corrupt(row.status(), "status");
    assert_corrupt(row.environment(), "environment");
}

#[tokio::test]
async fn an_application_id_already_taken_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let id = application(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    let result = applications::insert(
        &mut conn,
        &t,
        &applications::NewApplication {
            id: &id,
            name: "Again",
            scopes: &ScopeSet::all(),
            service_class: "default",
            created_at: NOW,
        },
    )
    .await;
    assert_conflict(result);
}
