//! The workflow gateway's application layer: admins' decisions about an application's workflow-tool
//! allowlist (the console is the only adapter that calls [`decide`]), and dispatching an allowlisted
//! workflow version for an agent (the A2A route calls [`dispatch`], [`task`] and [`settle`]).

use fiscus_domain::audit_action::Change;
use std::time::Duration;

use crate::rules::workflows::gateway::{allowlist, decision_hash};
use crate::tables::workflow_gateway::{self as store, GatewayTask, TaskKey, ToolGrant};
use crate::tables::workflows::Run;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde_json::json;

use super::{load_version, runs};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// The allowlist in force for an application (none until an admin decides one).
pub async fn in_force(
    services: &Services,
    tenant: &Tenant,
    application_id: &str,
) -> Result<Option<ToolGrant>, Failure> {
    let mut conn = services.store.read().await?;
    Ok(store::in_force(&mut conn, services.store.seal_key(), tenant, application_id).await?)
}

/// Whether a run may take its next step as far as the gateway is concerned: a run an agent started through
/// the workflow gateway runs only while its version stays on its application's allowlist, so an admin who
/// withdraws it stops its queued and running work at the next step (issue 54). Every other run may.
pub async fn still_allowed(
    services: &Services,
    tenant: &Tenant,
    application_id: &str,
    run_id: &str,
    version_id: &str,
) -> Result<bool, Failure> {
    let task = {
        let mut conn = services.store.read().await?;
        store::task(&mut conn, services.store.seal_key(), tenant, application_id, TaskKey::Run(run_id)).await?
    };
    if task.is_none() {
        return Ok(true);
    }
    Ok(in_force(services, tenant, application_id).await?.is_some_and(|g| g.allows(version_id)))
}

/// An admin's decision: the application's allowlist becomes exactly `versions` (empty withdraws all).
/// `seen_version` is the allowlist version the admin was shown (0 for none); anything newer refuses.
pub async fn decide(
    services: &Services,
    caller: &Caller,
    role: Role,
    tenant: &Tenant,
    application_id: &str,
    seen_version: i64,
    versions: Vec<String>,
) -> Result<ToolGrant, Failure> {
    if caller.actor.kind != ActorKind::Operator || role != Role::Admin {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let versions = allowlist(versions).map_err(|why| Failure::Invalid(vec![("versions", why)]))?;
    {
        let mut conn = services.store.read().await?;
        let app = fiscus_store::applications::get(&mut conn, &tenant.workspace_id, application_id).await?;
        if app.environment != tenant.environment.as_str() {
            return Err(Failure::NotFound);
        }
    }
    for v in &versions {
        match load_version(services, tenant, v).await {
            Err(Failure::NotFound) => {
                return Err(Failure::missing("versions", format!("no workflow version `{v}` here")));
            }
            other => other.map(|_| ())?,
        }
    }
    let current = in_force(services, tenant, application_id).await?.map_or(0, |g| g.version);
    let changed = || Failure::refused(ErrorCode::Conflict, "The allowlist changed since it was shown.");
    if current != seen_version {
        return Err(changed());
    }
    let version = current + 1;
    let grant = ToolGrant {
        id: fiscus_domain::ids::new_id("wtg"),
        application_id: application_id.to_string(),
        version,
        decision_hash: decision_hash(application_id, tenant.environment, version, &versions),
        versions,
        decided_by: caller.actor.id.clone(),
        created_at: now_micros(),
    };
    let mut tx = services.store.begin().await?;
    match store::insert_grant(&mut tx, tenant, &grant).await {
        // Another admin decided the same version first.
        Err(StoreError::Conflict(_)) => return Err(changed()),
        other => other?,
    }
    let details = json!({ "version": version, "versions": grant.versions, "decision_hash": grant.decision_hash });
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::WorkflowToolsDecision, application_id, details, grant.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(grant)
}

/// Who asks the gateway: an application, through one of its credentials.
pub struct Agent<'a> {
    pub application_id: &'a str,
    pub credential_id: &'a str,
    /// A signed execution client reads only the tasks it started itself.
    pub own_tasks_only: bool,
}

/// A message asking for a run of a workflow version.
pub struct Ask {
    pub message_id: String,
    pub message_hash: String,
    pub context_id: String,
    pub version_id: String,
}

/// What became of a message.
pub enum Dispatched {
    /// A run started for it.
    Started(GatewayTask),
    /// The same message was sent before: its task.
    Again(GatewayTask),
    /// Another message with the same id was sent before.
    Reused(GatewayTask),
}

/// Starts a run of an allowlisted version for `agent`, or answers a message sent again with its first task.
/// A version off the allowlist is `outside_grant`; one with steps that reach outside the run (agents,
/// integrations, Financial Actions, code, sub-workflows, the network) is `step_kind_unavailable`: the
/// gateway's boundary is the steps Fiscus runs itself.
pub async fn dispatch(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    agent: &Agent<'_>,
    ask: Ask,
) -> Result<Dispatched, Failure> {
    if let Some(first) = any_task(services, tenant, agent, TaskKey::Message(&ask.message_id)).await? {
        return Ok(again(agent, first, &ask.message_hash));
    }
    let allowed = in_force(services, tenant, agent.application_id).await?.is_some_and(|g| g.allows(&ask.version_id));
    if !allowed {
        return Err(Failure::refused_with(
            ErrorCode::OutsideGrant,
            format!(
                "workflow version {} is not on this application's workflow-tool allowlist (admins decide it at \
                 the console)",
                ask.version_id
            ),
            vec![("skill", json!(ask.version_id))],
        ));
    }
    let draft = GatewayTask {
        run_id: String::new(),
        application_id: agent.application_id.to_string(),
        credential_id: agent.credential_id.to_string(),
        context_id: ask.context_id,
        message_id: ask.message_id.clone(),
        message_hash: ask.message_hash.clone(),
        created_at: now_micros(),
    };
    match runs::start_for(services, caller, tenant, &ask.version_id, Some(draft)).await {
        Ok(run) => {
            let recorded = task(services, tenant, agent, TaskKey::Run(&run.record.id)).await?;
            recorded.map(Dispatched::Started).ok_or_else(|| Failure::internal("a started task was not recorded"))
        }
        // The same message id arrived twice at once, and the other copy started the run.
        Err(Failure::Store(StoreError::Conflict(_))) => {
            match any_task(services, tenant, agent, TaskKey::Message(&ask.message_id)).await? {
                Some(first) => Ok(again(agent, first, &ask.message_hash)),
                None => Err(Failure::internal("a conflicting task is not readable")),
            }
        }
        Err(e) => Err(e),
    }
}

/// A message id already used: the same message from the same reader is a retry; anything else is a reuse.
fn again(agent: &Agent<'_>, first: GatewayTask, message_hash: &str) -> Dispatched {
    let readable = !agent.own_tasks_only || first.credential_id == agent.credential_id;
    if readable && first.message_hash == message_hash { Dispatched::Again(first) } else { Dispatched::Reused(first) }
}

/// A task of the agent's application, whoever started it.
async fn any_task(
    services: &Services,
    tenant: &Tenant,
    agent: &Agent<'_>,
    by: TaskKey<'_>,
) -> Result<Option<GatewayTask>, Failure> {
    let mut conn = services.store.read().await?;
    Ok(store::task(&mut conn, services.store.seal_key(), tenant, agent.application_id, by).await?)
}

/// One of the agent's tasks. A signed client sees only its own (another credential of the application may
/// hold a wider allowlist view); a bearer credential sees its application's.
pub async fn task(
    services: &Services,
    tenant: &Tenant,
    agent: &Agent<'_>,
    by: TaskKey<'_>,
) -> Result<Option<GatewayTask>, Failure> {
    let found = any_task(services, tenant, agent, by).await?;
    Ok(found.filter(|t| !agent.own_tasks_only || t.credential_id == agent.credential_id))
}

/// The run of a task once it has ended, or as it stands after `wait`.
pub async fn settle(services: &Services, tenant: &Tenant, run_id: &str, wait: Duration) -> Result<Run, Failure> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut pause = Duration::from_millis(10);
    loop {
        let (run, _) = runs::load(services, tenant, run_id).await?;
        if run.state.is_ended() || tokio::time::Instant::now() >= deadline {
            return Ok(run);
        }
        tokio::time::sleep(pause.min(deadline.saturating_duration_since(tokio::time::Instant::now()))).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}
