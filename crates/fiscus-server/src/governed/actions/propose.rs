//! A new proposal: the envelope, its hash and its `action.proposed` event. Proposing executes nothing.

use fiscus_domain::actions::checks::check_set_hash;
use fiscus_domain::actions::envelope::{Envelope, Origin};
use fiscus_domain::actions::state::ControlState;
use fiscus_domain::clock::now_micros;
use fiscus_domain::events::EventType;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use fiscus_store::actions::Action;
use serde_json::json;

use super::Loaded;
use crate::governed::record::{ActionChange, record};
use crate::governed::{Caller, Failure};

/// Records a proposal of `envelope` by `caller`. An external agent's proposal is a draft until submitted;
/// any other awaits approval at once.
pub async fn propose(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    envelope: Envelope,
    origin: Origin,
) -> Result<Loaded, Failure> {
    caller.may_act_on(envelope.kind)?;
    let id = fiscus_domain::ids::new_id("act");
    let envelope_hash = envelope
        .hash(&id, &tenant.workspace_id, tenant.environment.as_str())
        .ok_or_else(|| Failure::Invalid(vec![("metadata", "numbers must be finite".into())]))?;
    let initial = match origin {
        Origin::ExternalAgent => ControlState::Draft,
        Origin::Application | Origin::Operator => ControlState::PendingApproval,
    };
    let now = now_micros();
    let action = Action {
        id: id.clone(),
        environment: tenant.environment,
        envelope,
        envelope_hash: envelope_hash.clone(),
        state: initial,
        origin,
        proposed_by: caller.actor.clone(),
        created_at: now,
        updated_at: now,
    };
    fiscus_store::actions::insert(tx, tenant, &action).await?;
    record(
        tx,
        tenant,
        caller,
        ActionChange {
            from: None,
            ..ActionChange::of(&action, initial, EventType::ActionProposed, json!({ "origin": origin.as_str() }))
        },
    )
    .await?;
    Ok(Loaded {
        action,
        checks: Vec::new(),
        latest: Vec::new(),
        check_set_hash: check_set_hash(&[]),
        decisions: Vec::new(),
    })
}
