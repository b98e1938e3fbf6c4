//! The one way a Financial Action's change is written down: the conditional state change (when the event
//! moves the action) and the history entry, beside the outbox event and the audit event the kernel's
//! `announce` writes, all in the caller's transaction. They commit together or not at all. Nothing else
//! writes an action's state or history (a test reads the sources).

use crate::tables::actions::{Action, HistoryEntry};
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::now_micros;
use fiscus_domain::events::{ActionEventData, EventData, EventType};
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::record::{Announcement, Recorded, Subject, announce, announce_many, owner_of};
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_store::WriteTx;
use serde_json::{Value, json};

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

    /// The change's event in the one envelope and its audit details, for the kernel to announce.
    fn announcement(&self) -> Announcement<'a> {
        Announcement {
            event_type: self.event,
            subject: Subject { id: self.action_id, owner: self.owner },
            data: EventData::Action(ActionEventData {
                action_id: self.action_id.to_string(),
                from_state: self.from,
                to_state: self.to,
                envelope_hash: self.envelope_hash.to_string(),
                detail: self.detail.clone(),
            }),
            audit_details: json!({ "from_state": self.from, "to_state": self.to, "detail": self.detail }),
        }
    }

    fn history(&self, caller: &Caller, now: i64) -> HistoryEntry {
        HistoryEntry {
            from_state: self.from,
            to_state: self.to,
            event: self.event,
            actor: caller.actor.clone(),
            detail: self.detail.clone(),
            created_at: now,
        }
    }
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
        let event = announce(tx, tenant, caller, change.announcement(), now).await?;
        if let Some(from) = change.from
            && from != change.to
        {
            crate::tables::actions::transition(tx, tenant, change.action_id, from, change.to, now).await?;
        }
        crate::tables::actions::record_history(tx, tenant, change.action_id, &change.history(caller, now)).await?;
        if change.to == ControlState::PendingApproval && change.from != Some(ControlState::PendingApproval) {
            request_approval(tx, tenant, caller, &change, now).await?;
        }
        Ok(Recorded { event, at: now })
    })
}

/// `approval.requested` for an action that just entered `pending_approval`: who must approve it (its recorded
/// requirement, in words and as data, with the policy version), so a team's chat or ticketing tool can tell
/// the people concerned.
async fn request_approval(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    change: &ActionChange<'_>,
    now: i64,
) -> Result<(), Failure> {
    let key = tx.seal_key().clone();
    let requirement = crate::tables::approval_policies::requirements_of(tx.conn(), &key, tenant, &[change.action_id])
        .await?
        .remove(change.action_id)
        .and_then(|mut r| r.pop());
    let detail = match requirement {
        Some(r) => json!({
            "after": change.event.as_str(),
            "requirement": r.body.requirement,
            "in_words": r.body.requirement.in_words(),
            "policy": r.body.policy,
        }),
        None => json!({ "after": change.event.as_str() }),
    };
    let item = Announcement {
        event_type: EventType::ApprovalRequested,
        subject: Subject { id: change.action_id, owner: change.owner },
        data: EventData::Action(ActionEventData {
            action_id: change.action_id.to_string(),
            from_state: change.from,
            to_state: change.to,
            envelope_hash: change.envelope_hash.to_string(),
            detail: detail.clone(),
        }),
        audit_details: json!({ "detail": detail }),
    };
    announce(tx, tenant, caller, item, now).await?;
    Ok(())
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
        let announcements = changes.iter().map(ActionChange::announcement).collect();
        announce_many(tx, tenant, caller, announcements, now).await?;
        // Each action's first `from` and last `to`, in the order actions first appear.
        let mut moves: Vec<(&str, ControlState, ControlState)> = Vec::new();
        let mut position: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for change in changes {
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
            crate::tables::actions::transition_many(tx, tenant, ids, *from, *to, now).await?;
        }
        let history: Vec<(&str, HistoryEntry)> =
            changes.iter().map(|change| (change.action_id, change.history(caller, now))).collect();
        crate::tables::actions::record_history_many(tx, tenant, &history).await?;
        Ok(())
    })
}
