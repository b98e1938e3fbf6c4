//! Machine identities and delegations: sealed rows, tenants apart, decisions only from the given status, and
//! budget reservations counted by day and month until released, one per action.

use crate::helpers::*;
use fiscus_actions::rules::delegation::DelegationStatus;
use fiscus_actions::rules::delegation::{IdentityStatus, Terms};
use fiscus_actions::rules::envelope::RiskTier;
use fiscus_actions::rules::settlement::ReservationState;
use fiscus_actions::tables::delegations;
use fiscus_actions::tables::delegations::{Delegation, Identity};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::ids::new_id;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Store;
use fiscus_store::seals;

#[tokio::test]
async fn an_identity_reads_back_equal_and_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let i = identity(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(delegations::get_identity(&mut conn, db.seal_key(), &t, &i.id).await.expect("get"), i);
    seals::check(&mut conn, db.seal_key(), &seals::MACHINE_IDENTITIES, &t.workspace_id, "id", &i.id)
        .await
        .expect("sealed");
}

#[tokio::test]
async fn identities_page_by_id() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(identity(&db, &t).await.id);
    }
    let mut conn = db.read().await.expect("conn");
    let ids_of = |v: Vec<delegations::Identity>| v.into_iter().map(|i| i.id).collect::<Vec<_>>();
    assert_eq!(
        ids_of(delegations::list_identities(&mut conn, db.seal_key(), &t, None, 1).await.expect("list")),
        ids[..2]
    );
    assert_eq!(
        ids_of(delegations::list_identities(&mut conn, db.seal_key(), &t, Some(&ids[1]), 5).await.expect("list")),
        ids[2..]
    );
}

#[tokio::test]
async fn an_identity_of_another_workspace_or_environment_is_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let i = identity(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert_not_found(delegations::get_identity(&mut conn, db.seal_key(), &other, &i.id).await);
        assert!(
            delegations::list_identities(&mut conn, db.seal_key(), &other, None, 10).await.expect("list").is_empty()
        );
    }
}

#[tokio::test]
async fn an_unknown_stored_identity_status_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let i = identity(&db, &t).await;
    force(&db, "machine_identities", "status", &i.id, "dormant").await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(delegations::get_identity(&mut conn, db.seal_key(), &t, &i.id).await, "status");
    assert_corrupt(delegations::list_identities(&mut conn, db.seal_key(), &t, None, 10).await, "status");
}

#[tokio::test]
async fn a_delegation_reads_back_equal_and_sealed() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(delegations::get_delegation(&mut conn, db.seal_key(), &t, &d.id).await.expect("get"), d);
    assert_eq!(delegations::list_delegations(&mut conn, db.seal_key(), &t).await.expect("list"), vec![d.clone()]);
    seals::check(&mut conn, db.seal_key(), &seals::DELEGATIONS, &t.workspace_id, "id", &d.id).await.expect("sealed");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(delegations::lock_delegation(&mut tx, &t, &d.id).await.expect("lock"), d);
}

#[tokio::test]
async fn a_delegation_of_another_workspace_or_environment_is_not_found() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert_not_found(delegations::get_delegation(&mut conn, db.seal_key(), &other, &d.id).await);
        assert!(delegations::list_delegations(&mut conn, db.seal_key(), &other).await.expect("list").is_empty());
        drop(conn);
        let mut tx = db.begin().await.expect("begin");
        assert_not_found(delegations::lock_delegation(&mut tx, &other, &d.id).await);
    }
}

#[tokio::test]
async fn an_unknown_stored_delegation_value_is_corrupt_naming_the_column() {
    let db = fresh_store().await;
    for (column, value) in [
        ("status", "dormant"),
        ("action_kind", "lottery"),
        ("currency", "XXX"),
        ("risk_tier", "T9"),
        // A delegation is authority for machine-delegated execution only; any other mode is refused.
        ("execution_mode", "human_approved"),
    ] {
        let t = tenant(&db).await;
        let d = delegation(&db, &t).await;
        force(&db, "delegations", column, &d.id, value).await;
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(delegations::get_delegation(&mut conn, db.seal_key(), &t, &d.id).await, column);
        drop(conn);
        let mut tx = db.begin().await.expect("begin");
        assert_corrupt(delegations::lock_delegation(&mut tx, &t, &d.id).await, column);
        drop(tx);
        let mut conn = db.read().await.expect("conn");
        assert_corrupt(delegations::list_delegations(&mut conn, db.seal_key(), &t).await, column);
    }
}

#[tokio::test]
async fn decide_moves_only_from_the_given_status() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    delegations::decide(&mut tx, &t, &d.id, DelegationStatus::Draft, DelegationStatus::Active, "opr_a", NOW + 1)
        .await
        .expect("activate");
    assert_conflict(
        delegations::decide(&mut tx, &t, &d.id, DelegationStatus::Draft, DelegationStatus::Revoked, "opr_b", NOW + 2)
            .await,
    );
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let read = delegations::get_delegation(&mut conn, db.seal_key(), &t, &d.id).await.expect("get");
    assert_eq!(read.status, DelegationStatus::Active);
    assert_eq!(read.decided_by.as_deref(), Some("opr_a"));
    assert_eq!(read.decided_at, Some(NOW + 1));
}

#[tokio::test]
async fn deciding_another_tenants_delegation_is_a_conflict_and_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    for other in strangers(&db, &t).await {
        let mut tx = db.begin().await.expect("begin");
        assert_conflict(
            delegations::decide(&mut tx, &other, &d.id, DelegationStatus::Draft, DelegationStatus::Active, "opr", NOW)
                .await,
        );
        tx.commit().await.expect("commit");
    }
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        delegations::get_delegation(&mut conn, db.seal_key(), &t, &d.id).await.expect("get").status,
        DelegationStatus::Draft
    );
}

#[tokio::test]
async fn reservations_count_by_day_and_month_until_released() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    let a1 = action(&db, &t).await;
    let a2 = action(&db, &t).await;
    let a3 = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    assert_eq!(delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"), (0, 0));
    delegations::reserve(&mut tx, &t, &d.id, &a1.id, 100, "2026-11-22", "2026-11", NOW).await.expect("reserve");
    delegations::reserve(&mut tx, &t, &d.id, &a2.id, 40, "2026-11-21", "2026-11", NOW).await.expect("reserve");
    delegations::reserve(&mut tx, &t, &d.id, &a3.id, 7, "2026-10-31", "2026-10", NOW).await.expect("reserve");
    assert_eq!(delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"), (100, 140));
    delegations::settle_reservation(&mut tx, &t, &a1.id, ReservationState::Consumed, NOW + 1).await.expect("consume");
    assert_eq!(delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"), (100, 140));
    delegations::settle_reservation(&mut tx, &t, &a2.id, ReservationState::Released, NOW + 1).await.expect("release");
    assert_eq!(delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"), (100, 100));
    // A return gives back even a consumed reservation.
    delegations::settle_reservation(&mut tx, &t, &a1.id, ReservationState::Released, NOW + 2).await.expect("return");
    assert_eq!(delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"), (0, 0));
}

#[tokio::test]
async fn a_second_reservation_for_one_action_is_a_conflict() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    let a = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    delegations::reserve(&mut tx, &t, &d.id, &a.id, 100, "2026-11-22", "2026-11", NOW).await.expect("reserve");
    assert_conflict(delegations::reserve(&mut tx, &t, &d.id, &a.id, 100, "2026-11-22", "2026-11", NOW).await);
}

#[tokio::test]
async fn settling_another_tenants_reservation_changes_nothing() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let d = delegation(&db, &t).await;
    let a = action(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    delegations::reserve(&mut tx, &t, &d.id, &a.id, 100, "2026-11-22", "2026-11", NOW).await.expect("reserve");
    tx.commit().await.expect("commit");
    for other in strangers(&db, &t).await {
        let mut tx = db.begin().await.expect("begin");
        delegations::settle_reservation(&mut tx, &other, &a.id, ReservationState::Released, NOW + 1)
            .await
            .expect("settle");
        assert_eq!(
            delegations::used(&mut tx, &d.id, "2026-11-22", "2026-11").await.expect("used"),
            (100, 100),
            "{other:?} released the reservation"
        );
        tx.commit().await.expect("commit");
    }
}

#[tokio::test]
async fn a_nonce_is_spent_once_per_identity() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let i = identity(&db, &t).await;
    let j = identity(&db, &t).await;
    let mut tx = db.begin().await.expect("begin");
    assert!(delegations::spend_nonce(&mut tx, &t, &i.id, "n-1", NOW).await.expect("spend"));
    assert!(!delegations::spend_nonce(&mut tx, &t, &i.id, "n-1", NOW + 1).await.expect("spend again"));
    assert!(delegations::spend_nonce(&mut tx, &t, &j.id, "n-1", NOW).await.expect("another identity"));
}

pub async fn identity(db: &Store, tenant: &Tenant) -> Identity {
    let identity = Identity {
        id: new_id("mid"),
        environment: tenant.environment,
        name: "treasury-bot".into(),
        public_key: "MCowBQYDK2VwAyEA".into(),
        status: IdentityStatus::Active,
        created_by: "app_test".into(),
        created_at: NOW,
    };
    let mut tx = db.begin().await.expect("begin");
    fiscus_actions::tables::delegations::insert_identity(&mut tx, tenant, &identity).await.expect("insert identity");
    tx.commit().await.expect("commit");
    identity
}

pub fn terms() -> Terms {
    Terms {
        action: ActionKind::Payment,
        counterparty: "cp_acme".into(),
        connector: "sandbox".into(),
        currency: Currency::parse("EUR").expect("EUR"),
        risk_tier: RiskTier::T1,
        per_action: 10_000,
        daily: 50_000,
        monthly: 200_000,
        expires_at: NOW + 86_400_000_000,
    }
}

/// A draft delegation for a new identity of the tenant.
pub async fn delegation(db: &Store, tenant: &Tenant) -> Delegation {
    let identity = identity(db, tenant).await;
    let id = new_id("dlg");
    let terms = terms();
    let d = Delegation {
        terms_hash: terms.hash(&id, &identity.id),
        id,
        environment: tenant.environment,
        identity_id: identity.id,
        terms,
        status: DelegationStatus::Draft,
        created_by: "app_test".into(),
        decided_by: None,
        decided_at: None,
        created_at: NOW,
    };
    let mut tx = db.begin().await.expect("begin");
    fiscus_actions::tables::delegations::insert_delegation(&mut tx, tenant, &d).await.expect("insert delegation");
    tx.commit().await.expect("commit");
    d
}
