//! Production access, decided by people: two distinct admins turn it on, one turns it off
//! (`fiscus_domain::production_access`). The decision is taken on the workspace's current standing and its
//! open request, in the caller's transaction, and audited with it.

use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::people::Role;
use fiscus_domain::production_access::{Move, Outcome, Refusal, decide};
use fiscus_store::WriteTx;
use serde_json::json;

use super::record::{AuditEntry, audit};
use super::{Caller, Failure};

pub async fn change(
    tx: &mut WriteTx,
    workspace_id: &str,
    caller: &Caller,
    role: Role,
    mv: Move,
) -> Result<Outcome, Failure> {
    if caller.actor.kind != ActorKind::Operator {
        return Err(Failure::Production(Refusal::NotAdmin));
    }
    let operator_id = caller.actor.id.as_str();
    let ws = fiscus_store::workspaces::get(tx.conn(), workspace_id).await?;
    let open = fiscus_store::workspaces::open_production_request(tx, workspace_id).await?;
    let outcome = decide(mv, role, operator_id, ws.production_access(), open.as_ref().map(|(_, by)| by.as_str()))
        .map_err(Failure::Production)?;
    let now = now_micros();
    let open_id = open.as_ref().map(|(id, _)| id.as_str());
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id,
            environment: None,
            action: Change::ConsoleProductionAccess.into(),
            subject: Some(operator_id),
            details: json!({ "outcome": outcome.as_str() }),
            occurred_at: now,
        },
    )
    .await?;
    match outcome {
        Outcome::Requested => {
            fiscus_store::workspaces::request_production(tx, workspace_id, operator_id, now).await?;
        }
        Outcome::Enabled | Outcome::Disabled => {
            let enabled = outcome == Outcome::Enabled;
            fiscus_store::workspaces::settle_production(tx, workspace_id, open_id, operator_id, enabled, now).await?;
        }
    }
    Ok(outcome)
}
