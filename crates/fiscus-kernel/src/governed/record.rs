//! The one way a governed change is announced and audited.
//!
//! [`announce`] writes, inside the caller's transaction, the outbox event in the one envelope and its audit
//! event; an area's own record step (a Financial Action's transition and history:
//! `fiscus_actions::steps::record`; a workflow run's: [`record_workflow`]) writes its change beside them.
//! They commit together or not at all, so a subscriber never hears of a change that did not happen, and the
//! audit chain never misses one that did. [`audit`] appends an audit event for changes that announce no
//! event (a key issued, a sign-in, a delegation drafted).

use fiscus_domain::audit_action::AuditAction;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::{Event, EventData, EventType, WorkflowEventData};
use fiscus_domain::tenancy::Tenant;
use fiscus_domain::workflows::RunState;
use fiscus_store::appends::Appends;
use fiscus_store::audit::NewAuditEvent;
use fiscus_store::{StoreError, WriteTx};
use serde_json::{Value, json};

use super::{Caller, Failure};

/// What a recorded change wrote: the event as it will be delivered, and when (UTC microseconds).
pub struct Recorded {
    pub event: Event,
    pub at: i64,
}

/// A change of one workflow run.
pub struct WorkflowChange<'a> {
    pub run_id: &'a str,
    /// The application that invoked the run, if an application did.
    pub owner: Option<&'a str>,
    pub workflow_id: &'a str,
    pub version_id: &'a str,
    pub definition_hash: &'a str,
    /// The state before; `None` for the invocation that creates the run.
    pub from: Option<RunState>,
    pub to: RunState,
    pub event: EventType,
    pub detail: Value,
}

/// Records a workflow run's event in `tx`: the outbox event in the one envelope and its audit event. The
/// run's own state and history are written by the runtime in the same transaction (`workflows::`).
pub fn record_workflow<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    change: WorkflowChange<'a>,
) -> fiscus_store::Boxed<'a, Result<Recorded, Failure>> {
    Box::pin(async move {
        let now = now_micros();
        let data = EventData::Workflow(WorkflowEventData {
            run_id: change.run_id.to_string(),
            workflow_id: change.workflow_id.to_string(),
            version_id: change.version_id.to_string(),
            from_state: change.from,
            to_state: change.to,
            definition_hash: change.definition_hash.to_string(),
            detail: change.detail.clone(),
        });
        let item = Announcement {
            event_type: change.event,
            subject: Subject { id: change.run_id, owner: change.owner },
            data,
            audit_details: json!({ "from_state": change.from, "to_state": change.to, "detail": change.detail }),
        };
        let event = announce(tx, tenant, caller, item, now).await?;
        Ok(Recorded { event, at: now })
    })
}

/// What an event is about: the object's id, and the application it belongs to (webhook endpoints of other
/// applications hear it only when their application may read it: `fiscus_domain::webhooks::may_hear`).
pub struct Subject<'a> {
    pub id: &'a str,
    pub owner: Option<&'a str>,
}

/// The application an object belongs to, when an application made it.
pub fn owner_of(actor: &fiscus_domain::actor::Actor) -> Option<&str> {
    (actor.kind == fiscus_domain::actor::ActorKind::Application).then_some(actor.id.as_str())
}

/// One event to announce: what it is, what it is about, its data in the one envelope, and the details of
/// its audit event.
pub struct Announcement<'a> {
    pub event_type: EventType,
    pub subject: Subject<'a>,
    pub data: EventData,
    pub audit_details: Value,
}

/// The event of `item` in the one envelope, and its audit entry (whose action is the event type and whose
/// details name the event): what [`announce`] and [`announce_many`] write.
fn staged<'a>(
    tenant: &'a Tenant,
    caller: &Caller,
    item: Announcement<'a>,
    now: i64,
) -> (Event, AuditEntry<'a>, Subject<'a>) {
    let event = Event {
        id: fiscus_domain::ids::new_id("evt"),
        event_type: item.event_type,
        created_at: rfc3339(now),
        workspace_id: tenant.workspace_id.clone(),
        environment: tenant.environment,
        actor: caller.actor.clone(),
        data: item.data,
    };
    let mut details = item.audit_details;
    details["event_id"] = json!(event.id);
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: item.event_type.into(),
        subject: Some(item.subject.id),
        details,
        occurred_at: now,
    };
    (event, entry, item.subject)
}

/// Writes `item`'s event in the one envelope to the outbox, and its audit event, in `tx`. The order inside
/// the transaction does not matter (all of it commits or none).
pub fn announce<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    item: Announcement<'a>,
    now: i64,
) -> fiscus_store::Boxed<'a, Result<Event, Failure>> {
    Box::pin(async move {
        let (event, entry, subject) = staged(tenant, caller, item, now);
        audit(tx, caller, &entry).await?;
        fiscus_store::outbox::enqueue(tx, &event, subject.id, subject.owner, now).await?;
        Ok(event)
    })
}

/// [`announce`] of many events in `tx`: each one's audit event, in order, then their outbox events in a few
/// multi-row statements. For bulk work (a bank statement's thousands of entries), where a round trip per
/// event would be most of the time. Answers the events as they will be delivered.
pub fn announce_many<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    items: Vec<Announcement<'a>>,
    now: i64,
) -> fiscus_store::Boxed<'a, Result<Vec<Event>, Failure>> {
    Box::pin(async move {
        let mut events = Vec::with_capacity(items.len());
        let mut subjects = Vec::with_capacity(items.len());
        for item in items {
            let (event, entry, subject) = staged(tenant, caller, item, now);
            audit(tx, caller, &entry).await?;
            events.push(event);
            subjects.push(subject);
        }
        let enqueued: Vec<fiscus_store::outbox::Enqueued<'_>> = events
            .iter()
            .zip(&subjects)
            .map(|(event, subject)| fiscus_store::outbox::Enqueued {
                event,
                subject_id: subject.id,
                owner: subject.owner,
                created_at: now,
            })
            .collect();
        fiscus_store::outbox::enqueue_many(tx, &enqueued).await?;
        Ok(events)
    })
}

/// An audit event about anything else.
pub struct AuditEntry<'a> {
    pub workspace_id: &'a str,
    pub environment: Option<Environment>,
    /// What happened, from the one vocabulary of audit actions.
    pub action: AuditAction,
    pub subject: Option<&'a str>,
    pub details: Value,
    pub occurred_at: i64,
}

impl<'a> AuditEntry<'a> {
    /// An event of one tenant (workspace and environment) about `subject`.
    pub fn of_tenant(
        tenant: &'a fiscus_domain::tenancy::Tenant,
        action: impl Into<AuditAction>,
        subject: &'a str,
        details: Value,
        occurred_at: i64,
    ) -> AuditEntry<'a> {
        AuditEntry {
            workspace_id: &tenant.workspace_id,
            environment: Some(tenant.environment),
            action: action.into(),
            subject: Some(subject),
            details,
            occurred_at,
        }
    }
}

/// Appends an audit event to the workspace's chain inside `tx`, with the caller's actor, request and
/// credential. With [`audit_appended`], the only way into the audit log.
pub fn audit<'a>(
    tx: &'a mut WriteTx,
    caller: &'a Caller,
    entry: &'a AuditEntry<'a>,
) -> fiscus_store::Boxed<'a, Result<(), StoreError>> {
    Box::pin(async move {
        fiscus_store::audit::append(tx, entry.workspace_id, audit_event(caller, entry)).await?;
        Ok(())
    })
}

/// As [`audit`], for a write handed to the store as appends (see `fiscus_store::appends`): the event is
/// chained when the appends are written, and dropped with them if they are not.
pub fn audit_appended(appends: &mut Appends, caller: &Caller, entry: &AuditEntry<'_>) {
    appends.audit(entry.workspace_id, audit_event(caller, entry));
}

/// The audit event of `entry` done by `caller`: the change's details, with the credential and operation
/// that made it when a request did.
fn audit_event<'a>(caller: &'a Caller, entry: &'a AuditEntry<'_>) -> NewAuditEvent<'a> {
    let details = match (&caller.credential_id, caller.operation) {
        (None, None) => entry.details.clone(),
        (credential, operation) => {
            json!({ "credential_id": credential, "operation": operation, "change": entry.details })
        }
    };
    NewAuditEvent {
        environment: entry.environment,
        actor: &caller.actor,
        action: entry.action,
        request_id: caller.request_id.as_deref(),
        subject: entry.subject,
        details,
        occurred_at: entry.occurred_at,
    }
}
