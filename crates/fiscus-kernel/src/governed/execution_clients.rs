//! Signed execution clients: registered as drafts (by the CLI), granted, changed and revoked only by people
//! at the console. Each decision is a new sealed version that covers exactly the version the operator was
//! shown; the latest is the client's standing (`fiscus_store::execution_clients`).

use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::execution_client::{ClientStatus, Decision, Grant, decision_hash, key_fingerprint, valid_name};
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::execution_clients::{Client, ClientDecision};
use fiscus_store::{StoreError, WriteTx};
use serde_json::json;

use super::record::{AuditEntry, audit};
use super::{Caller, Failure};

/// Registers a draft client under `application_id` (which must belong to the tenant). A draft can do
/// nothing until an admin grants it at the console.
pub async fn register(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    application_id: &str,
    name: &str,
    public_key: &str,
) -> Result<Client, Failure> {
    let mut errors = Vec::new();
    if !valid_name(name) {
        errors.push(("name", "1 to 100 characters, no control characters".to_string()));
    }
    if fiscus_domain::public_keys::decode_public_key(public_key).is_none() {
        errors.push(("public_key", "must be a 32-byte Ed25519 public key in base64".to_string()));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let app = fiscus_store::applications::get(tx.conn(), &tenant.workspace_id, application_id).await?;
    if app.environment != tenant.environment.as_str() {
        return Err(Failure::Invalid(vec![("application", "the application belongs to the other environment".into())]));
    }
    let client = Client {
        id: fiscus_domain::ids::new_id("ecl"),
        environment: tenant.environment,
        application_id: application_id.to_string(),
        name: name.trim().to_string(),
        public_key: public_key.to_string(),
        created_by: caller.actor.id.clone(),
        created_at: now_micros(),
    };
    fiscus_store::execution_clients::insert(tx, &tenant.workspace_id, &client).await?;
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: Change::ExecutionClientRegistered.into(),
            subject: Some(&client.id),
            details: json!({ "application_id": application_id, "name": client.name, "key": key_fingerprint(public_key) }),
            occurred_at: client.created_at,
        },
    )
    .await?;
    Ok(client)
}

/// An admin's decision about a client: grant (activating a draft or changing an active grant) or revoke.
/// `seen_version` is the latest version the admin was shown (0 for a draft); anything newer refuses.
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    role: Role,
    client_id: &str,
    seen_version: i64,
    grant: Option<Grant>,
) -> Result<ClientDecision, Failure> {
    if caller.actor.kind != ActorKind::Operator || role != Role::Admin {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let standing = fiscus_store::execution_clients::lock_for_decision(tx, tenant, client_id).await?;
    let current = standing.latest.as_ref().map_or(0, |d| d.version);
    if current != seen_version {
        return Err(Failure::refused(ErrorCode::Conflict, "The client's grant changed since it was shown."));
    }
    if standing.status() == ClientStatus::Revoked {
        return Err(Failure::refused(ErrorCode::Conflict, "A revoked client stays revoked; register a new one."));
    }
    let decision = if grant.is_some() { Decision::Grant } else { Decision::Revoke };
    let version = standing.next_version();
    let now = now_micros();
    let record = ClientDecision {
        id: fiscus_domain::ids::new_id("ecd"),
        client_id: client_id.to_string(),
        version,
        decision,
        decision_hash: decision_hash(client_id, version, decision, grant.as_ref()),
        grant,
        decided_by: caller.actor.id.clone(),
        created_at: now,
    };
    match fiscus_store::execution_clients::insert_decision(tx, tenant, &record).await {
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "The client's grant changed since it was shown."));
        }
        other => other?,
    }
    audit(
        tx,
        caller,
        &AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: Change::ExecutionClientDecision.into(),
            subject: Some(client_id),
            details: json!({
                "decision": decision.as_str(),
                "version": version,
                "decision_hash": record.decision_hash,
                "role": role.as_str(),
            }),
            occurred_at: now,
        },
    )
    .await?;
    Ok(record)
}
