//! Operators' decisions about spaces: an admin promotes a shipped space's version into the workspace (the
//! first promotion creates the space; promoting an unchanged definition again reuses its version), or
//! suspends the space, after which it does not run until promoted again. Each decision is a sealed record
//! with an audit event; the latest is the space's standing.

use crate::rules::spaces::SpaceDecision as Kind;
use crate::rules::spaces::library;
use crate::rules::spaces::records::{DecisionBody, SpaceBody, VersionBody};
use crate::tables::spaces::{self as store, Version};
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde_json::json;

use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, canonical, new_record};

fn may_decide(caller: &Caller, role: Role) -> Result<(), Failure> {
    if caller.actor.kind != ActorKind::Operator || role != Role::Admin {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    Ok(())
}

fn changed(e: StoreError) -> Failure {
    match e {
        StoreError::Conflict(_) => Failure::refused(ErrorCode::Conflict, "The space changed meanwhile; look again."),
        other => other.into(),
    }
}

/// Promotes the shipped space `key`'s definition in the tenant; returns the version now in force.
pub async fn promote(
    services: &Services,
    caller: &Caller,
    role: Role,
    tenant: &Tenant,
    key: &str,
    note: Option<&str>,
) -> Result<Version, Failure> {
    may_decide(caller, role)?;
    let shipped = library::find(key).ok_or(Failure::NotFound)?;
    let definition = shipped.definition();
    let problems = definition.check();
    if !problems.is_empty() {
        return Err(Failure::internal(format!("a shipped space fails its checks: {problems:?}")));
    }
    let (_, definition_hash) = canonical("space definition", &definition)?;
    let now = now_micros();
    let seal = services.store.seal_key();
    let (existing, versions, decisions) = {
        let mut conn = services.store.read().await?;
        match store::space_by_key(&mut conn, seal, tenant, key).await? {
            Some(s) => {
                let v = store::versions_of(&mut conn, seal, tenant, &s.id).await?;
                let d = store::decisions_of(&mut conn, seal, tenant, &s.id).await?;
                (Some(s), v, d)
            }
            None => (None, Vec::new(), Vec::new()),
        }
    };
    let mut tx = services.store.begin().await?;
    let space_id = match existing {
        Some(s) => s.id,
        None => {
            let body = SpaceBody {
                key: definition.key.clone(),
                name: definition.name.clone(),
                description: definition.description.clone(),
            };
            let space = new_record("agent space", "asp", body, caller.actor.clone())?;
            store::insert_space(&mut tx, tenant, &space).await.map_err(changed)?;
            space.id
        }
    };
    let version = match versions.last() {
        Some(v) if v.body.definition_hash == definition_hash => v.clone(),
        last => {
            let body = VersionBody {
                space_id: space_id.clone(),
                version: last.map_or(1, |v| v.body.version + 1),
                definition,
                definition_hash,
            };
            let v = new_record("agent space version", "asv", body, caller.actor.clone())?;
            store::insert_version(&mut tx, tenant, &v).await.map_err(changed)?;
            v
        }
    };
    let body = DecisionBody {
        space_id: space_id.clone(),
        seq: decisions.last().map_or(1, |d| d.body.seq + 1),
        decision: Kind::Promote,
        version_id: Some(version.id.clone()),
        note: note.map(str::to_string),
    };
    let decision = new_record("agent space decision", "asd", body, caller.actor.clone())?;
    store::insert_decision(&mut tx, tenant, &decision).await.map_err(changed)?;
    let details = json!({
        "version_id": version.id, "version": version.body.version,
        "definition_hash": version.body.definition_hash, "decision_hash": decision.content_hash,
    });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::AgentSpacePromoted, &space_id, details, now)).await?;
    tx.commit().await?;
    Ok(version)
}

/// Suspends a space: no run starts until a version is promoted again.
pub async fn suspend(
    services: &Services,
    caller: &Caller,
    role: Role,
    tenant: &Tenant,
    space_id: &str,
    note: Option<&str>,
) -> Result<(), Failure> {
    may_decide(caller, role)?;
    let standing = super::standing(services, tenant, space_id).await?;
    if standing.suspended() {
        return Err(Failure::refused(ErrorCode::Conflict, "The space is suspended already."));
    }
    let now = now_micros();
    let body = DecisionBody {
        space_id: space_id.to_string(),
        seq: standing.decisions.last().map_or(1, |d| d.body.seq + 1),
        decision: Kind::Suspend,
        version_id: None,
        note: note.map(str::to_string),
    };
    let decision = new_record("agent space decision", "asd", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_decision(&mut tx, tenant, &decision).await.map_err(changed)?;
    let details = json!({ "decision_hash": decision.content_hash });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::AgentSpaceSuspended, space_id, details, now)).await?;
    tx.commit().await?;
    Ok(())
}
