//! The one way a governed change is written down.
//!
//! [`record`] writes, inside the caller's transaction: the conditional state change (when the event moves
//! the action), the history entry, the outbox event in the one envelope, and the audit event. They commit
//! together or not at all, so a subscriber never hears of a change that did not happen, and the audit chain
//! never misses one that did. [`audit`] appends an audit event for changes that announce no event (a key
//! issued, a sign-in, a delegation drafted).

use fiscus_domain::actions::state::ControlState;
use fiscus_domain::audit_action::AuditAction;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::{ActionEventData, Event, EventData, EventType, WorkflowEventData};
use fiscus_domain::tenancy::Tenant;
use fiscus_domain::workflows::run::RunState;
use fiscus_store::actions::{Action, HistoryEntry};
use fiscus_store::appends::Appends;
use fiscus_store::audit::NewAuditEvent;
use fiscus_store::{StoreError, WriteTx};
use serde_json::{Value, json};

use super::{Caller, Failure};

/// A change of one action.
pub struct ActionChange<'a> {
    pub action_id: &'a str,
    /// The application the action belongs to (the one that proposed it), if an application did.
    pub owner: Option<&'a str>,
    pub envelope_hash: &'a str,
    /// The state before; `None` for the proposal that creates the action.
    pub from: Option<ControlState>,
    /// The state after (equal to `from` for an event that moves nothing, e.g. a check version).
    pub to: ControlState,
    pub event: EventType,
    /// The event's own facts (decision and evidence hashes, check versions, settlement records…).
    pub detail: Value,
}

impl<'a> ActionChange<'a> {
    /// `event` moving `action` from its current state to `to`.
    pub fn of(action: &'a Action, to: ControlState, event: EventType, detail: Value) -> ActionChange<'a> {
        ActionChange {
            action_id: &action.id,
            owner: owner_of(&action.proposed_by),
            envelope_hash: &action.envelope_hash,
            from: Some(action.state),
            to,
            event,
            detail,
        }
    }
}

/// What [`record`] wrote: the event as it will be delivered, and when (UTC microseconds).
pub struct Recorded {
    pub event: Event,
    pub at: i64,
}

/// Records `change` in `tx`: transition, history, outbox event and audit event.
pub fn record<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    change: ActionChange<'a>,
) -> fiscus_store::Boxed<'a, Result<Recorded, Failure>> {
    Box::pin(async move {
        let now = now_micros();
        let detail = change.detail;
        let data = EventData::Action(ActionEventData {
            action_id: change.action_id.to_string(),
            from_state: change.from,
            to_state: change.to,
            envelope_hash: change.envelope_hash.to_string(),
            detail: detail.clone(),
        });
        let audit_details = json!({ "from_state": change.from, "to_state": change.to, "detail": detail });
        let subject = Subject { id: change.action_id, owner: change.owner };
        let event = announce(tx, tenant, caller, change.event, subject, data, audit_details, now).await?;
        if let Some(from) = change.from
            && from != change.to
        {
            fiscus_store::actions::transition(tx, tenant, change.action_id, from, change.to, now).await?;
        }
        fiscus_store::actions::record_history(
            tx,
            tenant,
            change.action_id,
            &HistoryEntry {
                from_state: change.from,
                to_state: change.to,
                event: change.event,
                actor: caller.actor.clone(),
                detail,
                created_at: now,
            },
        )
        .await?;
        Ok(Recorded { event, at: now })
    })
}

/// [`record`] of many changes in `tx`, written in a few multi-row statements: each change's audit event
/// (in order), its outbox event and its history entry, and each action moved from the state its first
/// change starts from to the state its last change ends in, guarded on that first state (an action moved
/// meanwhile fails the whole write). For bulk work (a bank statement's thousands of entries), where
/// [`record`]'s round trips per change would be most of the time.
pub fn record_many<'a>(
    tx: &'a mut WriteTx,
    tenant: &'a Tenant,
    caller: &'a Caller,
    changes: &'a [ActionChange<'a>],
) -> fiscus_store::Boxed<'a, Result<(), Failure>> {
    Box::pin(async move {
        let now = now_micros();
        let mut events = Vec::with_capacity(changes.len());
        let mut history = Vec::with_capacity(changes.len());
        // Each action's first `from` and last `to`, in the order actions first appear.
        let mut moves: Vec<(&str, ControlState, ControlState)> = Vec::new();
        let mut position: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for change in changes {
            let event = Event {
                id: fiscus_domain::ids::new_id("evt"),
                event_type: change.event,
                created_at: rfc3339(now),
                workspace_id: tenant.workspace_id.clone(),
                environment: tenant.environment,
                actor: caller.actor.clone(),
                data: EventData::Action(ActionEventData {
                    action_id: change.action_id.to_string(),
                    from_state: change.from,
                    to_state: change.to,
                    envelope_hash: change.envelope_hash.to_string(),
                    detail: change.detail.clone(),
                }),
            };
            let entry = AuditEntry {
                workspace_id: &tenant.workspace_id,
                environment: Some(tenant.environment),
                action: change.event.into(),
                subject: Some(change.action_id),
                details: json!({ "from_state": change.from, "to_state": change.to, "detail": change.detail,
                             "event_id": event.id }),
                occurred_at: now,
            };
            audit(tx, caller, &entry).await?;
            events.push((event, change.action_id, change.owner));
            history.push((
                change.action_id,
                HistoryEntry {
                    from_state: change.from,
                    to_state: change.to,
                    event: change.event,
                    actor: caller.actor.clone(),
                    detail: change.detail.clone(),
                    created_at: now,
                },
            ));
            if let Some(from) = change.from {
                match position.get(change.action_id) {
                    Some(&i) => moves[i].2 = change.to,
                    None => {
                        position.insert(change.action_id, moves.len());
                        moves.push((change.action_id, from, change.to));
                    }
                }
            }
        }
        let mut groups: Vec<((ControlState, ControlState), Vec<&str>)> = Vec::new();
        for (id, from, to) in moves.into_iter().filter(|(_, from, to)| from != to) {
            match groups.iter_mut().find(|(k, _)| *k == (from, to)) {
                Some((_, ids)) => ids.push(id),
                None => groups.push(((from, to), vec![id])),
            }
        }
        for ((from, to), ids) in &groups {
            fiscus_store::actions::transition_many(tx, tenant, ids, *from, *to, now).await?;
        }
        let enqueued: Vec<fiscus_store::outbox::Enqueued<'_>> = events
            .iter()
            .map(|(event, subject_id, owner)| fiscus_store::outbox::Enqueued {
                event,
                subject_id,
                owner: *owner,
                created_at: now,
            })
            .collect();
        fiscus_store::outbox::enqueue_many(tx, &enqueued).await?;
        fiscus_store::actions::record_history_many(tx, tenant, &history).await?;
        Ok(())
    })
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
        let audit_details = json!({ "from_state": change.from, "to_state": change.to, "detail": change.detail });
        let subject = Subject { id: change.run_id, owner: change.owner };
        let event = announce(tx, tenant, caller, change.event, subject, data, audit_details, now).await?;
        Ok(Recorded { event, at: now })
    })
}

/// What an event is about: the object's id, and the application it belongs to (webhook endpoints of other
/// applications hear it only when their application may read it: `fiscus_domain::webhooks::may_hear`).
struct Subject<'a> {
    id: &'a str,
    owner: Option<&'a str>,
}

/// The application an object belongs to, when an application made it.
pub fn owner_of(actor: &fiscus_domain::actor::Actor) -> Option<&str> {
    (actor.kind == fiscus_domain::actor::ActorKind::Application).then_some(actor.id.as_str())
}

/// Writes an event about `subject` in the one envelope to the outbox, and its audit event (whose action is
/// the event type and whose details name the event), in `tx`. The order inside the transaction does not
/// matter (all of it commits or none).
#[allow(clippy::too_many_arguments)]
async fn announce(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    event_type: EventType,
    subject: Subject<'_>,
    data: EventData,
    mut audit_details: Value,
    now: i64,
) -> Result<Event, Failure> {
    let event = Event {
        id: fiscus_domain::ids::new_id("evt"),
        event_type,
        created_at: rfc3339(now),
        workspace_id: tenant.workspace_id.clone(),
        environment: tenant.environment,
        actor: caller.actor.clone(),
        data,
    };
    audit_details["event_id"] = json!(event.id);
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: event_type.into(),
        subject: Some(subject.id),
        details: audit_details,
        occurred_at: now,
    };
    audit(tx, caller, &entry).await?;
    fiscus_store::outbox::enqueue(tx, &event, subject.id, subject.owner, now).await?;
    Ok(event)
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
