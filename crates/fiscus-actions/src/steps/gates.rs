//! The facts the execution gates look at, assembled in one place for the execution itself and for the
//! console's preview of it.

use crate::rules::delegation::{
    AuthorityRefusal, BudgetRefusal, DelegationRefusal, MachineAuthority, budget_allows, check_authority, standing,
};
use crate::rules::gates::{FailedGate, GateFacts, evaluate};
use fiscus_domain::clock::utc_day;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{StoreError, WriteTx};

use super::Loaded;
use crate::connectors::connector_for;
use fiscus_kernel::settings::Settings;

/// The facts of a machine-delegated execution: each gate's verdict, and the reservation to make if all pass.
pub struct DelegatedFacts {
    pub delegation: Result<(), DelegationRefusal>,
    pub authority: Result<(), AuthorityRefusal>,
    pub budget: Result<(), BudgetRefusal>,
    pub reservation: Option<Reservation>,
}

/// The budget to reserve under a delegation, on a UTC day and month.
#[derive(Clone)]
pub struct Reservation {
    pub delegation_id: String,
    pub day: String,
    pub month: String,
}

impl DelegatedFacts {
    fn without(refusal: DelegationRefusal) -> DelegatedFacts {
        DelegatedFacts {
            authority: Err(AuthorityRefusal::NoDelegation(refusal.clone())),
            budget: Err(BudgetRefusal::NoDelegation(refusal.clone())),
            delegation: Err(refusal),
            reservation: None,
        }
    }
}

/// Every gate's verdict for `loaded` now. `delegated` is `None` for human-approved actions; for the
/// console's preview of a delegated action it is `None` too, and the delegated gates are left out
/// (`preview`), since they need the machine's signed evidence.
pub fn evaluate_gates(
    loaded: &Loaded,
    tenant: &Tenant,
    settings: &Settings,
    production_access: bool,
    delegated: Option<&DelegatedFacts>,
) -> Vec<FailedGate> {
    let a = &loaded.action;
    let requirement = loaded.requirement(settings);
    let standing = loaded.standing(settings, fiscus_domain::clock::now_micros());
    let policy_hold = crate::rules::gates::policy_hold(&requirement, &standing, a.envelope.execution_mode);
    evaluate(&GateFacts {
        state: a.state,
        quorum_met_on_current: standing.met,
        policy_hold,
        required_checks: &a.envelope.required_checks,
        latest_checks: &loaded.latest,
        environment: tenant.environment,
        production_access,
        // The sandbox connector serves the sandbox; production's only connector is `iso20022`, which exists
        // where the settings configure it (never simulated), so without it production execution fails here.
        connector_available: connector_for(&a.envelope.connector, tenant.environment, settings).is_some(),
        execution_mode: a.envelope.execution_mode,
        delegation: delegated.map(|d| d.delegation.clone()),
        machine_authority: delegated.map(|d| d.authority.clone()),
        budget: delegated.map(|d| d.budget.clone()),
    })
}

/// What the gates other than the machine-delegated ones say now (for people looking at the action).
pub fn preview(loaded: &Loaded, tenant: &Tenant, settings: &Settings, production_access: bool) -> Vec<FailedGate> {
    let assumed = DelegatedFacts { delegation: Ok(()), authority: Ok(()), budget: Ok(()), reservation: None };
    evaluate_gates(loaded, tenant, settings, production_access, Some(&assumed))
}

/// Loads and locks the delegation, checks its seal, its standing and terms, the machine's evidence and the
/// budgets. Nothing here writes except the nonce, which is spent even when the request is refused, so
/// signed evidence is never usable twice.
pub async fn delegated_facts(
    tx: &mut WriteTx,
    tenant: &Tenant,
    loaded: &Loaded,
    authority: Option<&MachineAuthority>,
    now: i64,
) -> Result<DelegatedFacts, StoreError> {
    let action = &loaded.action;
    let Some(delegation_id) = action.envelope.delegation_id.as_deref() else {
        return Ok(DelegatedFacts::without(DelegationRefusal::Missing));
    };
    let delegation = match crate::tables::delegations::lock_delegation(tx, tenant, delegation_id).await {
        Ok(d) => d,
        Err(StoreError::NotFound) => return Ok(DelegatedFacts::without(DelegationRefusal::NotFound)),
        Err(e) => return Err(e),
    };
    // The terms and the public key decide whose signature counts and for how much: both must be as sealed.
    let key = tx.seal_key().clone();
    let identity = crate::tables::delegations::get_identity(tx.conn(), &key, tenant, &delegation.identity_id).await?;
    let ws = &tenant.workspace_id;
    fiscus_store::seals::check(tx.conn(), &key, &fiscus_store::seals::DELEGATIONS, ws, "id", &delegation.id).await?;
    fiscus_store::seals::check(tx.conn(), &key, &fiscus_store::seals::MACHINE_IDENTITIES, ws, "id", &identity.id)
        .await?;
    let terms = &delegation.terms;
    let delegation_verdict = standing(delegation.status, terms.expires_at, identity.status, now)
        .and_then(|()| terms.covers(&action.envelope));
    let authority_verdict = match authority {
        None => Err(AuthorityRefusal::Missing),
        Some(a) if a.identity_id != identity.id => Err(AuthorityRefusal::WrongIdentity),
        Some(a) => match check_authority(a, &identity.public_key, &action.envelope_hash, now) {
            Err(refusal) => Err(refusal),
            Ok(()) => {
                if crate::tables::delegations::spend_nonce(tx, tenant, &identity.id, &a.nonce, now).await? {
                    Ok(())
                } else {
                    Err(AuthorityRefusal::Replayed)
                }
            }
        },
    };
    let day = utc_day(now);
    let month = day[..7].to_string();
    let (used_today, used_month) = crate::tables::delegations::used(tx, &delegation.id, &day, &month).await?;
    let budget_verdict = budget_allows(action.envelope.amount_minor, terms, used_today, used_month);
    Ok(DelegatedFacts {
        delegation: delegation_verdict,
        authority: authority_verdict,
        budget: budget_verdict,
        reservation: Some(Reservation { delegation_id: delegation.id, day, month }),
    })
}
