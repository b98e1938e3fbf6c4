//! Financial Actions in the store: sealed rows read back equal, tenants kept apart, pages and filters,
//! transitions only from the given state, history in order and check versions, unknown stored values corrupt.

use crate::helpers::*;
use fiscus_actions::rules::approval::Decision;
use fiscus_actions::rules::checks::CheckStatus;
use fiscus_actions::tables::actions::{self, ActionDecision, Check, HistoryEntry};
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::events::EventType;
use fiscus_domain::ids::new_id;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, seals};
use serde_json::json;

fn check(key: &str, version: i64, status: CheckStatus) -> Check {
    Check {
        id: new_id("chk"),
        check_key: key.into(),
        version,
        status,
        source_type: "screening".into(),
        source_reference: "ref-1".into(),
        source_hash: "sha256:00".into(),
        metrics: json!({"score": 1}),
        metadata: json!({}),
        check_hash: "sha256:11".into(),
        recorded_by: "app_test".into(),
        created_at: NOW,
    }
}

fn decision(decision: Decision, created_at: i64) -> ActionDecision {
    ActionDecision {
        id: new_id("dec"),
        operator_id: new_id("opr"),
        role: Role::Approver,
        decision,
        envelope_hash: "sha256:22".into(),
        check_set_hash: "sha256:33".into(),
        evidence_hash: "sha256:44".into(),
        created_at,
        invalidated_at: None,
    }
}

fn entry(from: Option<ControlState>, to: ControlState, event: EventType, at: i64) -> HistoryEntry {
    HistoryEntry {
        from_state: from,
        to_state: to,
        event,
        actor: Actor::operator("opr_x"),
        detail: json!({"n": at}),
        created_at: at,
    }
}

async fn add_check(db: &Store, tenant: &Tenant, action_id: &str, c: &Check) {
    let mut tx = db.begin().await.expect("begin");
    actions::insert_check(&mut tx, tenant, action_id, c).await.expect("insert check");
    tx.commit().await.expect("commit");
}

async fn add_decision(db: &Store, tenant: &Tenant, action_id: &str, d: &ActionDecision) {
    let mut tx = db.begin().await.expect("begin");
    actions::insert_decision(&mut tx, tenant, action_id, d).await.expect("insert decision");
    tx.commit().await.expect("commit");
}

async fn add_history(db: &Store, tenant: &Tenant, action_id: &str, h: &HistoryEntry) {
    let mut tx = db.begin().await.expect("begin");
    actions::record_history(&mut tx, tenant, action_id, h).await.expect("record history");
    tx.commit().await.expect("commit");
}

#[tokio::test]
async fn an_inserted_action_reads_back_equal_and_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::get(&mut conn, &t, &a.id).await.expect("get"), a);
    seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &t.workspace_id, "id", &a.id).await.expect("sealed");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(actions::get_for_decision(&mut tx, &t, &a.id).await.expect("get for decision"), a);
}

#[tokio::test]
async fn an_action_of_another_workspace_or_environment_is_not_found() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert_not_found(actions::get(&mut conn, &other, &a.id).await);
        drop(conn);
        let mut tx = db.begin().await.expect("begin");
        assert_not_found(actions::get_for_decision(&mut tx, &other, &a.id).await);
    }
}

#[tokio::test]
async fn list_pages_by_id_and_filters_by_state() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(action(&db, &t).await.id);
    }
    let mut tx = db.begin().await.expect("begin");
    actions::transition(&mut tx, &t, &ids[1], ControlState::Draft, ControlState::PendingApproval, NOW + 1)
        .await
        .expect("transition");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let page: Vec<String> = actions::list(&mut conn, db.seal_key(), &t, None, None, 2)
        .await
        .expect("list")
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(page, ids, "limit + 1 rows, ascending by id");
    let after: Vec<String> = actions::list(&mut conn, db.seal_key(), &t, None, Some(&ids[0]), 10)
        .await
        .expect("list")
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(after, ids[1..]);
    let pending =
        actions::list(&mut conn, db.seal_key(), &t, Some(ControlState::PendingApproval), None, 10).await.expect("list");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, ids[1]);
    assert_eq!(pending[0].state, ControlState::PendingApproval);
}

#[tokio::test]
async fn list_and_list_each_show_only_the_tenants_actions() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    action(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(actions::list(&mut conn, db.seal_key(), &other, None, None, 10).await.expect("list").is_empty());
        assert!(actions::list_each(&mut conn, &other, None, 10).await.expect("list_each").is_empty());
    }
}

#[tokio::test]
async fn list_each_reports_an_unknown_row_by_id_and_decodes_the_rest() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let good = action(&db, &t).await;
    let bad = action(&db, &t).await;
    force(&db, "actions", "control_state", &bad.id, "teleported").await;
    let mut conn = db.read().await.expect("conn");
    let rows = actions::list_each(&mut conn, &t, None, 10).await.expect("list_each");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].0, good.id);
    assert_eq!(rows[0].1.as_ref().expect("good row"), &good);
    assert_eq!(rows[1].0, bad.id);
    assert!(matches!(&rows[1].1, Err(fiscus_store::StoreError::Corrupt(m)) if m.contains("control_state")));
    assert_corrupt(actions::list(&mut conn, db.seal_key(), &t, None, None, 10).await, "control_state");
}

#[tokio::test]
async fn an_unknown_stored_action_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for (column, value) in [
        ("control_state", "teleported"),
        ("kind", "lottery"),
        ("currency", "XXX"),
        ("execution_mode", "telepathic"),
        ("risk_tier", "T9"),
        ("origin", "martian"),
        ("proposed_by_kind", "ghost"),
        ("environment", "staging"),
        ("required_checks", "not json"),
        ("metadata", "{"),
    ] {
        let a = action(&db, &t).await;
        force(&db, "actions", column, &a.id, value).await;
        let mut conn = db.read().await.expect("conn");
        let tenant = if column == "environment" { sandbox(&t.workspace_id) } else { t.clone() };
        if column == "environment" {
            // The row no longer belongs to any environment the tenant names: it is invisible, never misread.
            assert_not_found(actions::get(&mut conn, &tenant, &a.id).await);
            continue;
        }
        assert_corrupt(actions::get(&mut conn, &tenant, &a.id).await, column);
        drop(conn);
        let mut tx = db.begin().await.expect("begin");
        assert_corrupt(actions::get_for_decision(&mut tx, &tenant, &a.id).await, column);
    }
}

#[tokio::test]
async fn transition_moves_only_from_the_given_state() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    actions::transition(&mut tx, &t, &a.id, ControlState::Draft, ControlState::PendingApproval, NOW + 5)
        .await
        .expect("first move");
    assert_conflict(actions::transition(&mut tx, &t, &a.id, ControlState::Draft, ControlState::Denied, NOW + 6).await);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = actions::get(&mut conn, &t, &a.id).await.expect("get");
    assert_eq!(read.state, ControlState::PendingApproval);
    assert_eq!(read.updated_at, NOW + 5);
}

#[tokio::test]
async fn transition_of_another_tenants_action_is_a_conflict_and_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut tx = db.begin().await.expect("begin");
        assert_conflict(
            actions::transition(&mut tx, &other, &a.id, ControlState::Draft, ControlState::Approved, NOW + 1).await,
        );
        tx.commit().await.expect("commit");
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::get(&mut conn, &t, &a.id).await.expect("get").state, ControlState::Draft);
}

#[tokio::test]
async fn history_reads_back_in_order() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let entries = [
        entry(None, ControlState::Draft, EventType::ActionProposed, NOW),
        entry(Some(ControlState::Draft), ControlState::PendingApproval, EventType::ActionSubmitted, NOW + 1),
    ];
    for e in &entries {
        add_history(&db, &t, &a.id, e).await;
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::history(&mut conn, &t, &a.id).await.expect("history"), entries);
}

#[tokio::test]
async fn history_of_another_tenants_action_is_empty() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_history(&db, &t, &a.id, &entry(None, ControlState::Draft, EventType::ActionProposed, NOW)).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(actions::history(&mut conn, &other, &a.id).await.expect("history").is_empty(), "{other:?}");
    }
}

#[tokio::test]
async fn an_unknown_stored_history_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for (column, value) in [
        ("event", "action.teleported"),
        ("to_state", "nowhere"),
        ("from_state", "nowhere"),
        ("actor_kind", "ghost"),
        ("detail", "{"),
    ] {
        let a = action(&db, &t).await;
        add_history(
            &db,
            &t,
            &a.id,
            &entry(Some(ControlState::Draft), ControlState::Draft, EventType::ActionProposed, NOW),
        )
        .await;
        let id: (String,) = {
            let mut conn = db.read().await.expect("conn");
            sqlx::query_as("SELECT id FROM action_history WHERE action_id = $1")
                .bind(&a.id)
                .fetch_one(&mut *conn)
                .await
                .expect("history id")
        };
        force(&db, "action_history", column, &id.0, value).await;
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(actions::history(&mut conn, &t, &a.id).await, column);
    }
}

#[tokio::test]
async fn check_versions_count_per_key_and_read_back_ordered() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(actions::next_check_version(&mut tx, &t, &a.id, "sanctions").await.expect("version"), 1);
    drop(tx);
    let s1 = check("sanctions", 1, CheckStatus::Pending);
    let s2 = check("sanctions", 2, CheckStatus::Passed);
    let k1 = check("kyc", 1, CheckStatus::Warning);
    for c in [&s1, &s2, &k1] {
        add_check(&db, &t, &a.id, c).await;
    }
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(actions::next_check_version(&mut tx, &t, &a.id, "sanctions").await.expect("version"), 3);
    assert_eq!(actions::next_check_version(&mut tx, &t, &a.id, "kyc").await.expect("version"), 2);
    drop(tx);
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::checks(&mut conn, &t, &a.id).await.expect("checks"), vec![k1, s1, s2]);
    seals::check(&mut conn, db.seal_key(), &seals::ACTION_CHECKS, &t.workspace_id, "action_id", &a.id)
        .await
        .expect("sealed");
}

#[tokio::test]
async fn a_check_version_already_taken_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_check(&db, &t, &a.id, &check("sanctions", 1, CheckStatus::Passed)).await;
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(actions::insert_check(&mut tx, &t, &a.id, &check("sanctions", 1, CheckStatus::Failed)).await);
}

#[tokio::test]
async fn checks_of_another_tenants_action_are_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_check(&db, &t, &a.id, &check("sanctions", 1, CheckStatus::Passed)).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(actions::checks(&mut conn, &other, &a.id).await.expect("checks").is_empty(), "{other:?}");
        drop(conn);
        let mut tx = db.begin().await.expect("begin");
        assert_eq!(actions::next_check_version(&mut tx, &other, &a.id, "sanctions").await.expect("version"), 1);
    }
}

#[tokio::test]
async fn an_unknown_stored_check_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for (column, value) in [("status", "maybe"), ("metrics", "{"), ("metadata", "[")] {
        let a = action(&db, &t).await;
        let c = check("sanctions", 1, CheckStatus::Passed);
        add_check(&db, &t, &a.id, &c).await;
        force(&db, "action_checks", column, &c.id, value).await;
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(actions::checks(&mut conn, &t, &a.id).await, column);
    }
}

#[tokio::test]
async fn decisions_read_back_in_order_and_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let first = decision(Decision::Approve, NOW + 1);
    let second = decision(Decision::Deny, NOW + 2);
    add_decision(&db, &t, &a.id, &second).await;
    add_decision(&db, &t, &a.id, &first).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::decisions(&mut conn, &t, &a.id).await.expect("decisions"), vec![first, second]);
    seals::check(&mut conn, db.seal_key(), &seals::ACTION_DECISIONS, &t.workspace_id, "action_id", &a.id)
        .await
        .expect("sealed");
}

#[tokio::test]
async fn decisions_of_another_tenants_action_are_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_decision(&db, &t, &a.id, &decision(Decision::Approve, NOW)).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(actions::decisions(&mut conn, &other, &a.id).await.expect("decisions").is_empty(), "{other:?}");
    }
}

#[tokio::test]
async fn an_unknown_stored_decision_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    for (column, value) in [("role", "overlord"), ("decision", "maybe")] {
        let a = action(&db, &t).await;
        let d = decision(Decision::Approve, NOW);
        add_decision(&db, &t, &a.id, &d).await;
        force(&db, "action_decisions", column, &d.id, value).await;
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(actions::decisions(&mut conn, &t, &a.id).await, column);
    }
}

#[tokio::test]
async fn invalidate_approvals_marks_standing_approvals_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    let approve = decision(Decision::Approve, NOW);
    let deny = decision(Decision::Deny, NOW + 1);
    add_decision(&db, &t, &a.id, &approve).await;
    add_decision(&db, &t, &a.id, &deny).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(actions::invalidate_approvals(&mut tx, &t, &a.id, NOW + 9).await.expect("invalidate"), 1);
    assert_eq!(actions::invalidate_approvals(&mut tx, &t, &a.id, NOW + 10).await.expect("invalidate"), 0);
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = actions::decisions(&mut conn, &t, &a.id).await.expect("decisions");
    assert_eq!(read[0].invalidated_at, Some(NOW + 9));
    assert_eq!(read[1].invalidated_at, None);
}

#[tokio::test]
async fn invalidate_approvals_of_another_tenant_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = action(&db, &t).await;
    add_decision(&db, &t, &a.id, &decision(Decision::Approve, NOW)).await;
    for other in strangers(&db, &t).await {
        let mut tx = db.begin().await.expect("begin");
        assert_eq!(actions::invalidate_approvals(&mut tx, &other, &a.id, NOW + 9).await.expect("invalidate"), 0);
        tx.commit().await.expect("commit");
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(actions::decisions(&mut conn, &t, &a.id).await.expect("decisions")[0].invalidated_at, None);
}

#[tokio::test]
async fn open_actions_citing_a_source_are_found_by_their_latest_check_version_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let cited = |version: i64, hash: &str| Check {
        source_hash: hash.into(),
        ..check("creditor_account", version, CheckStatus::Passed)
    };
    let bound = action(&db, &t).await;
    add_check(&db, &t, &bound.id, &cited(1, "sha256:old")).await;
    let moved_on = action(&db, &t).await;
    add_check(&db, &t, &moved_on.id, &cited(1, "sha256:old")).await;
    add_check(&db, &t, &moved_on.id, &cited(2, "sha256:new")).await;
    let closed = action(&db, &t).await;
    add_check(&db, &t, &closed.id, &cited(1, "sha256:old")).await;
    let mut tx = db.begin().await.expect("begin");
    actions::transition(&mut tx, &t, &closed.id, closed.state, ControlState::Denied, NOW + 5).await.expect("deny");
    tx.commit().await.expect("commit");
    let other_key = action(&db, &t).await;
    add_check(
        &db,
        &t,
        &other_key.id,
        &Check { source_hash: "sha256:old".into(), ..check("sanctions", 1, CheckStatus::Passed) },
    )
    .await;
    let strangers = strangers(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(
        actions::open_citing(&mut tx, &t, "creditor_account", "sha256:old").await.expect("citing"),
        [bound.id.as_str()]
    );
    assert_eq!(
        actions::open_citing(&mut tx, &t, "creditor_account", "sha256:new").await.expect("citing"),
        [moved_on.id.as_str()]
    );
    for other in strangers {
        assert!(
            actions::open_citing(&mut tx, &other, "creditor_account", "sha256:old").await.expect("citing").is_empty()
        );
    }
    tx.commit().await.expect("commit");
}
