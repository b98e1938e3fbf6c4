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
use crate::connectors::connector_for;
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
    // What the execution gates would refuse for good is refused now, before anyone is asked to approve an
    // action that could never run: a connector this environment does not have, a delegation that does not
    // exist. The gates check both again at execution (a delegation can be revoked meanwhile).
    if connector_for(&envelope.connector, tenant.environment).is_none() {
        return Err(Failure::missing(
            "connector",
            format!(
                "the connector `{}` is not available in the {} environment",
                envelope.connector,
                tenant.environment.as_str()
            ),
        ));
    }
    if let Some(delegation_id) = envelope.delegation_id.as_deref() {
        let key = tx.seal_key().clone();
        match fiscus_store::delegations::get_delegation(tx.conn(), &key, tenant, delegation_id).await {
            Ok(_) => {}
            Err(fiscus_store::StoreError::NotFound) => {
                return Err(Failure::missing(
                    "delegation_id",
                    format!("no delegation `{delegation_id}` in this workspace and environment"),
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
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
