//! Execution: every gate is evaluated inside the transaction that would record the acceptance, on the locked
//! action (and locked delegation), so nothing can change between the decision and its effect. Acceptance
//! enqueues the settlement work in the same transaction. Any error refuses.

use crate::rules::delegation::MachineAuthority;
use crate::rules::envelope::ExecutionMode;
use crate::rules::gates::{FailedGate, NotStartable, execution_can_start};
use crate::rules::transitions::{self, Event};
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::Loaded;
use super::gates::{delegated_facts, evaluate_gates};
use crate::steps::record::{ActionChange, record};
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::settings::Settings;

/// An accepted execution: the action is `executing` and its settlement is queued.
pub struct Accepted {
    pub action_id: String,
    pub state: ControlState,
}

/// The outcome of an execution request that was decided. A refusal may still have written something that
/// must persist (a machine-authority nonce is spent even when refused): the caller commits the transaction
/// in both cases, and reports the refusal.
pub enum Execution {
    Accepted(Accepted),
    Refused(Vec<FailedGate>),
}

pub fn execute<'a>(
    tx: &'a mut WriteTx,
    settings: &'a Settings,
    tenant: &'a Tenant,
    caller: &'a Caller,
    action_id: &'a str,
    authority: Option<&'a MachineAuthority>,
) -> fiscus_store::Boxed<'a, Result<Execution, Failure>> {
    Box::pin(async move {
        let now = now_micros();
        let loaded = Loaded::for_decision(tx, tenant, action_id).await?;
        caller.may_act_on(loaded.action.envelope.kind)?;
        loaded.verify_sealed(tx, tenant).await?;
        let workspace = fiscus_store::workspaces::get(tx.conn(), &tenant.workspace_id).await?;
        let action = &loaded.action;
        let mode = action.envelope.execution_mode;
        // Decided before any evidence is read (so no nonce is spent): an action nobody authorised is the
        // `authorised` gate failing (422, the seed's "not authorized"); one already executing or ended is its
        // lifecycle (409 `action_state_conflict`).
        match execution_can_start(mode, action.state) {
            Ok(()) => {}
            Err(NotStartable::Unauthorised(gate)) => return Ok(Execution::Refused(vec![gate])),
            Err(NotStartable::Conflict) => {
                let state = action.state.as_str();
                return Err(Failure::Refused {
                    code: ErrorCode::ActionStateConflict,
                    detail: format!("the action is {state}; it has already been executed"),
                    members: vec![("state", serde_json::json!(state))],
                });
            }
        }
        let delegated = match mode {
            ExecutionMode::MachineDelegated => Some(delegated_facts(tx, tenant, &loaded, authority, now).await?),
            ExecutionMode::HumanApproved => None,
        };
        let failed = evaluate_gates(&loaded, tenant, settings, workspace.production_access(), delegated.as_ref());
        if !failed.is_empty() {
            return Ok(Execution::Refused(failed));
        }
        let event = match mode {
            ExecutionMode::HumanApproved => Event::ExecutionAccepted,
            ExecutionMode::MachineDelegated => Event::DelegatedExecutionAccepted,
        };
        let next = transitions::next(action.state, event).map_err(|e| Failure::internal(e.to_string()))?;
        record(
            tx,
            tenant,
            caller,
            ActionChange::of(
                action,
                next,
                EventType::ActionExecuted,
                json!({
                    "check_set_hash": loaded.check_set_hash, "connector": action.envelope.connector,
                    "execution_mode": mode.as_str(),
                }),
            ),
        )
        .await?;
        if let Some(r) = delegated.and_then(|d| d.reservation) {
            crate::tables::delegations::reserve(
                tx,
                tenant,
                &r.delegation_id,
                action_id,
                action.envelope.amount_minor,
                &r.day,
                &r.month,
                now,
            )
            .await?;
        }
        crate::tables::settlement::enqueue(tx, tenant, action_id, &action.envelope.connector, now).await?;
        Ok(Execution::Accepted(Accepted { action_id: action_id.to_string(), state: next }))
    })
}
