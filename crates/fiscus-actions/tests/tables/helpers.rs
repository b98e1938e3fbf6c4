//! The builders these tests share: the store's fresh database and rows (`fiscus_testkit`), and an action
//! (envelope, row) written through this crate's own table.

pub use fiscus_testkit::*;

use fiscus_actions::rules::envelope::{Envelope, ExecutionMode, Origin, RiskTier};
use fiscus_actions::tables::actions::Action;
use fiscus_domain::actions::{ActionKind, ControlState};
use fiscus_domain::actor::Actor;
use fiscus_domain::ids::new_id;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Store;

pub fn envelope() -> Envelope {
    Envelope {
        kind: ActionKind::Payment,
        amount_minor: 125_000,
        currency: Currency::parse("EUR").expect("EUR"),
        counterparty: "cp_acme".into(),
        connector: "sandbox".into(),
        execution_mode: ExecutionMode::HumanApproved,
        delegation_id: None,
        risk_tier: RiskTier::T1,
        reference: "INV-1".into(),
        required_checks: vec!["sanctions".into()],
        metadata: serde_json::json!({"purpose": "test"}),
    }
}

pub fn new_action(tenant: &Tenant) -> Action {
    let id = new_id("act");
    let envelope = envelope();
    let envelope_hash = envelope.hash(&id, &tenant.workspace_id, tenant.environment.as_str()).expect("envelope hash");
    Action {
        id,
        environment: tenant.environment,
        envelope,
        envelope_hash,
        state: ControlState::Draft,
        origin: Origin::Application,
        proposed_by: Actor::application("app_test"),
        created_at: NOW,
        updated_at: NOW,
    }
}

pub async fn action(db: &Store, tenant: &Tenant) -> Action {
    let a = new_action(tenant);
    let mut tx = db.begin().await.expect("begin");
    fiscus_actions::tables::actions::insert(&mut tx, tenant, &a).await.expect("insert action");
    tx.commit().await.expect("commit");
    a
}
