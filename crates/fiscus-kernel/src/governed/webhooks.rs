//! Operators' decisions on webhook endpoints: a production endpoint receives nothing until an admin approves
//! it at the console (or refuses it). The decision covers the endpoint in its current state and is audited.

use crate::tables::webhooks::EndpointStatus;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::record::{AuditEntry, audit};
use super::{Caller, Failure};

/// Approves (`approve` = true) or refuses a production endpoint awaiting approval.
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    role: Role,
    endpoint_id: &str,
    approve: bool,
) -> Result<EndpointStatus, Failure> {
    if caller.actor.kind != ActorKind::Operator || role != Role::Admin {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let key = tx.seal_key().clone();
    let endpoint = crate::tables::webhooks::get(tx.conn(), &key, tenant, endpoint_id).await?;
    if endpoint.status != EndpointStatus::PendingApproval {
        return Err(Failure::refused(ErrorCode::Conflict, "The endpoint is not awaiting approval."));
    }
    let (to, reason) = if approve {
        (EndpointStatus::Active, None)
    } else {
        (EndpointStatus::Disabled, Some("refused at the console"))
    };
    let now = now_micros();
    crate::tables::webhooks::set_status(tx, tenant, endpoint_id, endpoint.status, to, reason, now).await.map_err(
        |e| match e {
            fiscus_store::StoreError::NotFound => {
                Failure::refused(ErrorCode::Conflict, "The endpoint changed meanwhile; nothing was decided.")
            }
            other => Failure::Store(other),
        },
    )?;
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: Change::WebhookEndpointDecision.into(),
            subject: Some(endpoint_id),
            details: json!({ "url": endpoint.url, "to": to.as_str(), "role": role.as_str() }),
            occurred_at: now,
        },
    )
    .await?;
    Ok(to)
}

/// Disables an active endpoint whose receiver answered 410 Gone (the delivery worker's one decision about an
/// endpoint), audited like an operator's. `false` when it was no longer active (nothing changed).
pub async fn disable_gone(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    endpoint_id: &str,
) -> Result<bool, Failure> {
    let now = now_micros();
    let reason = "the receiver answered 410 Gone";
    match crate::tables::webhooks::set_status(
        tx,
        tenant,
        endpoint_id,
        EndpointStatus::Active,
        EndpointStatus::Disabled,
        Some(reason),
        now,
    )
    .await
    {
        Ok(()) => {}
        Err(fiscus_store::StoreError::NotFound) => return Ok(false),
        Err(other) => return Err(Failure::Store(other)),
    }
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: Change::WebhookEndpointDisabled.into(),
            subject: Some(endpoint_id),
            details: json!({ "to": EndpointStatus::Disabled.as_str(), "reason": reason }),
            occurred_at: now,
        },
    )
    .await?;
    Ok(true)
}
