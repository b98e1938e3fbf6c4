//! Workspaces: read back with production access off, ids taken once, entitlements, and production access
//! requests open at most once per workspace, settled once, invisible to other workspaces.

use crate::helpers::*;
use fiscus_domain::scopes::ScopeSet;
use fiscus_store::workspaces;

#[tokio::test]
async fn a_workspace_reads_back_with_production_access_off() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    let row = workspaces::get(&mut conn, &ws).await.expect("get");
    assert_eq!(row.id, ws);
    assert_eq!(row.name, "Test Workspace");
    assert_eq!(row.entitlement(), ScopeSet::all());
    assert!(!row.production_access());
    assert_eq!(row.is_demo, 0);
    assert_eq!(row.created_at, NOW);
}

#[tokio::test]
async fn an_unknown_workspace_is_not_found() {
    let db = fresh_store().await;
    let mut conn = db.read().await.expect("conn");
    assert_not_found(workspaces::get(&mut conn, "wsp_unknown").await);
}

#[tokio::test]
async fn a_workspace_id_already_taken_is_a_conflict() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    let result = workspaces::insert(
        &mut tx,
        &workspaces::NewWorkspace {
            id: &ws,
            name: "Again",
            entitlement: &ScopeSet::all(),
            is_demo: true,
            created_at: NOW,
        },
    )
    .await;
    assert_conflict(result);
}

#[tokio::test]
async fn list_all_and_count_see_every_workspace() {
    let db = fresh_store().await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(workspaces::count(&mut conn).await.expect("count"), 0);
    drop(conn);
    let mut ids = vec![workspace(&db).await, workspace(&db).await];
    ids.sort();
    let mut conn = db.read().await.expect("conn");
    assert_eq!(workspaces::count(&mut conn).await.expect("count"), 2);
    let all: Vec<String> = workspaces::list_all(&mut conn).await.expect("list").into_iter().map(|w| w.id).collect();
    assert_eq!(all, ids);
}

#[tokio::test]
async fn set_entitlement_changes_only_that_workspace() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let narrow = ScopeSet::parse("actions:create").expect("scope");
    let mut tx = db.begin().await.expect("begin");
    workspaces::set_entitlement(&mut tx, &ws, &narrow).await.expect("set");
    assert_not_found(workspaces::set_entitlement(&mut tx, "wsp_unknown", &narrow).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_eq!(workspaces::get(&mut conn, &ws).await.expect("get").entitlement(), narrow);
    assert_eq!(workspaces::get(&mut conn, &other).await.expect("get").entitlement(), ScopeSet::all());
}

#[tokio::test]
async fn a_production_request_stays_open_until_settled() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(workspaces::open_production_request(&mut tx, &ws).await.expect("open"), None);
    let id = workspaces::request_production(&mut tx, &ws, "opr_a", NOW).await.expect("request");
    assert_eq!(
        workspaces::open_production_request(&mut tx, &ws).await.expect("open"),
        Some((id.clone(), "opr_a".into()))
    );
    workspaces::settle_production(&mut tx, &ws, Some(&id), "opr_b", true, NOW + 1).await.expect("settle");
    assert_eq!(workspaces::open_production_request(&mut tx, &ws).await.expect("open"), None);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert!(workspaces::get(&mut conn, &ws).await.expect("get").production_access());
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    workspaces::settle_production(&mut tx, &ws, None, "opr_a", false, NOW + 2).await.expect("turn off");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert!(!workspaces::get(&mut conn, &ws).await.expect("get").production_access());
}

#[tokio::test]
async fn a_workspace_has_at_most_one_open_production_request() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    let first = workspaces::request_production(&mut tx, &ws, "opr_a", NOW).await.expect("request");
    tx.commit().await.expect("commit");
    // A second request while one is open (two admins asking at once) is refused, and the first stands.
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workspaces::request_production(&mut tx, &ws, "opr_b", NOW + 1).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(
        workspaces::open_production_request(&mut tx, &ws).await.expect("open"),
        Some((first.clone(), "opr_a".into()))
    );
    workspaces::request_production(&mut tx, &other, "opr_b", NOW + 1).await.expect("another workspace's own request");
    // Once the first is closed, a new request may be opened.
    workspaces::settle_production(&mut tx, &ws, Some(&first), "opr_a", false, NOW + 2).await.expect("withdraw");
    workspaces::request_production(&mut tx, &ws, "opr_b", NOW + 3).await.expect("a new request");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn another_workspaces_production_request_is_invisible_and_cannot_settle_anything() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let other = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    let id = workspaces::request_production(&mut tx, &ws, "opr_a", NOW).await.expect("request");
    assert_eq!(workspaces::open_production_request(&mut tx, &other).await.expect("open"), None);
    tx.commit().await.expect("commit");
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workspaces::settle_production(&mut tx, &other, Some(&id), "opr_b", true, NOW + 1).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(workspaces::open_production_request(&mut tx, &ws).await.expect("open"), Some((id, "opr_a".into())));
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    assert!(!workspaces::get(&mut conn, &ws).await.expect("get").production_access());
    assert!(!workspaces::get(&mut conn, &other).await.expect("get").production_access());
}

#[tokio::test]
async fn a_request_no_longer_open_cannot_be_confirmed_again() {
    let db = fresh_store().await;
    let ws = workspace(&db).await;
    let mut tx = db.begin().await.expect("begin");
    let id = workspaces::request_production(&mut tx, &ws, "opr_a", NOW).await.expect("request");
    workspaces::settle_production(&mut tx, &ws, Some(&id), "opr_a", false, NOW + 1).await.expect("withdraw");
    tx.commit().await.expect("commit");
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(workspaces::settle_production(&mut tx, &ws, Some(&id), "opr_b", true, NOW + 2).await);
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    assert!(!workspaces::get(&mut conn, &ws).await.expect("get").production_access());
}

#[tokio::test]
async fn settling_production_of_an_unknown_workspace_is_not_found() {
    let db = fresh_store().await;
    let mut tx = db.begin().await.expect("begin");
    assert_not_found(workspaces::settle_production(&mut tx, "wsp_unknown", None, "opr_a", false, NOW).await);
}
