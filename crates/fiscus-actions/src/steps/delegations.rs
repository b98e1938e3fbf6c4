//! Operators' moves on a delegation (activate, suspend, revoke): the human plane decides standing
//! authority. The move covers exactly the terms hash the operator was shown, on the locked, seal-checked
//! delegation, and is audited in the same transaction.

use crate::rules::delegation::{DelegationMove, DelegationStatus};
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    role: Role,
    delegation_id: &str,
    mv: DelegationMove,
    seen_terms_hash: &str,
) -> Result<DelegationStatus, Failure> {
    if caller.actor.kind != ActorKind::Operator || !role.may_decide() {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let d = crate::tables::delegations::lock_delegation(tx, tenant, delegation_id).await?;
    let key = tx.seal_key().clone();
    fiscus_store::seals::check(
        tx.conn(),
        &key,
        &fiscus_store::seals::DELEGATIONS,
        &tenant.workspace_id,
        "id",
        delegation_id,
    )
    .await?;
    if d.terms_hash != seen_terms_hash {
        return Err(Failure::refused(ErrorCode::Conflict, "The delegation changed since it was shown."));
    }
    let Some(next) = mv.apply(d.status) else {
        return Err(Failure::refused(ErrorCode::Conflict, "That move is not allowed from the delegation's status."));
    };
    let now = now_micros();
    crate::tables::delegations::decide(tx, tenant, delegation_id, d.status, next, &caller.actor.id, now).await?;
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: Change::DelegationDecision.into(),
            subject: Some(delegation_id),
            details: json!({ "from": d.status.as_str(), "to": next.as_str(), "terms_hash": d.terms_hash, "role": role.as_str() }),
            occurred_at: now,
        },
    )
    .await?;
    Ok(next)
}
