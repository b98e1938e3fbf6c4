//! Settlement and reconciliation of an executing action: run it through its connector, seal what the
//! connector reported, reconcile, and move the action, releasing or consuming a delegated budget
//! reservation. One claimed work item is finished in the caller's transaction; a crash before commit
//! leaves the claim to go stale and be taken again, and the unique settlement record keeps a second pass
//! from settling twice.

use fiscus_domain::actions::checks::{CREDITOR_ACCOUNT, CheckStatus, DEBTOR_ACCOUNT};
use fiscus_domain::actions::envelope::ActionKind;
use fiscus_domain::actions::settlement::{Expected, Reconciliation, SettlementKind, reconcile, reservation_after};
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::bank_files::InstructionBody;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::events::EventType;
use fiscus_domain::evidence::seal;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use fiscus_store::settlement::{Job, SettlementRecord};
use serde_json::json;
use std::future::Future;
use std::pin::Pin;

use super::Loaded;
use crate::connectors::{ConnectorEvent, Instruction, connector_for};
use crate::governed::record::{ActionChange, record};
use crate::governed::{Caller, Failure, new_record};
use crate::settings::Settings;

/// What settling one item did.
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    /// The action moved to this state.
    Moved(ControlState),
    /// The action was no longer executing (an earlier pass finished it): nothing to do.
    AlreadyDone,
    /// The claim was taken over by another worker; nothing was written.
    ClaimLost,
}

/// An investment order as it settled, for the book that holds its portfolio.
pub struct SettledOrder<'a> {
    pub tenant: &'a Tenant,
    pub action_id: &'a str,
    /// The envelope's metadata (the order ticket).
    pub metadata: &'a serde_json::Value,
    pub currency: Currency,
    /// The settlement date (`YYYY-MM-DD`).
    pub date: &'a str,
    pub at: i64,
}

/// What a book answers: `Ok(Err(reason))` when it cannot take the order.
pub type Applied<'a> = Pin<Box<dyn Future<Output = Result<Result<(), String>, Failure>> + Send + 'a>>;

/// Where a settled investment order moves the portfolio book, in the settlement's own transaction. The
/// investment area implements it (this layer knows no books); the composition hands it to the services.
/// `Ok(Err(reason))` is a book that cannot take the order (a sale larger than what is held): a
/// reconciliation exception, and nothing of the book moves.
pub trait Book: Send + Sync {
    fn apply<'a>(&'a self, tx: &'a mut WriteTx, order: SettledOrder<'a>) -> Applied<'a>;
}

pub async fn settle(
    tx: &mut WriteTx,
    settings: &Settings,
    caller: &Caller,
    job: &Job,
    book: &dyn Book,
) -> Result<Settled, Failure> {
    let tenant = &job.tenant;
    let worker = caller.actor.id.as_str();
    let loaded = Loaded::for_decision(tx, tenant, &job.action_id).await?;
    let action = &loaded.action;
    let now = now_micros();
    if action.state != ControlState::Executing {
        fiscus_store::settlement::finish(tx, &job.id, worker, now).await?;
        return Ok(Settled::AlreadyDone);
    }
    // Money moves on the sealed envelope only: a row changed outside Fiscus since it was approved is refused
    // here (the item stays claimed and fails), and the connector is the envelope's, not the job's copy.
    loaded.verify_sealed(tx, tenant).await?;
    let envelope = &action.envelope;
    let connector = connector_for(&envelope.connector, tenant.environment, settings).ok_or_else(|| {
        Failure::internal(format!("no connector {} in {}", envelope.connector, tenant.environment.as_str()))
    })?;
    let events = connector.execute(&Instruction {
        action_id: &action.id,
        reference: &envelope.reference,
        amount_minor: envelope.amount_minor,
        currency: envelope.currency.code(),
        counterparty: &envelope.counterparty,
    });
    let current = if events == [ConnectorEvent::Submitted] {
        hand_over(tx, caller, tenant, &loaded, now).await?;
        action.state
    } else {
        apply(tx, caller, tenant, &loaded, events, book, now).await?
    };
    if !fiscus_store::settlement::finish(tx, &job.id, worker, now).await? {
        return Ok(Settled::ClaimLost);
    }
    Ok(Settled::Moved(current))
}

/// What the bank reported of an action in flight (a status report's rejection, a statement entry), applied
/// as a connector's events are, in `tx`. `None` when the action is not `executing` (finished already, or
/// never sent): nothing changes.
pub async fn report(
    tx: &mut WriteTx,
    caller: &Caller,
    tenant: &Tenant,
    action_id: &str,
    events: Vec<ConnectorEvent>,
    book: &dyn Book,
) -> Result<Option<ControlState>, Failure> {
    let loaded = Loaded::for_decision(tx, tenant, action_id).await?;
    if loaded.action.state != ControlState::Executing {
        return Ok(None);
    }
    loaded.verify_sealed(tx, tenant).await?;
    Ok(Some(apply(tx, caller, tenant, &loaded, events, book, now_micros()).await?))
}

/// The approved details a bank-file payment is bound to, by its reserved check: the latest version of the
/// check must be passed and cite a version that still hashes to what it cites.
async fn bound_version(
    tx: &mut WriteTx,
    tenant: &Tenant,
    loaded: &Loaded,
    check_key: &str,
) -> Result<fiscus_store::bank_accounts::Version, Failure> {
    let check = loaded
        .checks
        .iter()
        .filter(|c| c.check_key == check_key)
        .max_by_key(|c| c.version)
        .filter(|c| c.status == CheckStatus::Passed)
        .ok_or_else(|| Failure::internal(format!("{}: no passed {check_key} check", loaded.action.id)))?;
    let key = tx.seal_key().clone();
    let version = fiscus_store::bank_accounts::get_version(tx.conn(), &key, tenant, &check.source_reference).await?;
    if version.record.content_hash != check.source_hash {
        return Err(Failure::internal(format!("{}: {check_key} cites details that hash otherwise", loaded.action.id)));
    }
    Ok(version)
}

/// Hands a payment to the bank file connector: records its instruction, bound to the approved details its
/// checks cite, for the bank file worker to put in exactly one file. The action stays `executing`.
async fn hand_over(
    tx: &mut WriteTx,
    caller: &Caller,
    tenant: &Tenant,
    loaded: &Loaded,
    now: i64,
) -> Result<(), Failure> {
    let action = &loaded.action;
    let debtor = bound_version(tx, tenant, loaded, DEBTOR_ACCOUNT).await?;
    let creditor = bound_version(tx, tenant, loaded, CREDITOR_ACCOUNT).await?;
    let body = InstructionBody {
        action_id: action.id.clone(),
        kind: action.envelope.kind,
        amount_minor: action.envelope.amount_minor,
        currency: action.envelope.currency,
        reference: action.envelope.reference.clone(),
        debtor_account_id: debtor.record.body.account_id.clone(),
        debtor_version_id: debtor.record.id.clone(),
        debtor_hash: debtor.record.content_hash.clone(),
        creditor_version_id: creditor.record.id.clone(),
        creditor_hash: creditor.record.content_hash.clone(),
        requested_date: rfc3339(now)[..10].to_string(),
    };
    let record = new_record("payment instruction", "pin", body, caller.actor.clone())?;
    match fiscus_store::bank_files::insert_instruction(tx, tenant, &record).await {
        Ok(()) => Ok(()),
        // A repeated pass over the same item: the instruction is there already, and stays the only one.
        Err(fiscus_store::StoreError::Conflict(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Seals what the connector (or the bank) reported, reconciles, and moves the action; returns where it
/// ends.
async fn apply(
    tx: &mut WriteTx,
    caller: &Caller,
    tenant: &Tenant,
    loaded: &Loaded,
    events: Vec<ConnectorEvent>,
    book: &dyn Book,
    now: i64,
) -> Result<ControlState, Failure> {
    let worker = caller.actor.id.as_str();
    let action = &loaded.action;
    let envelope = &action.envelope;
    let expected = Expected {
        reference: &envelope.reference,
        amount_minor: envelope.amount_minor,
        currency: envelope.currency.code(),
    };
    let mut current = action.state;
    for event in events {
        let (kind, report, reason) = match &event {
            ConnectorEvent::Settled(r) => (SettlementKind::Settled, Some(r), None),
            ConnectorEvent::Returned(r) => (SettlementKind::Returned, Some(r), None),
            ConnectorEvent::Failed { reason } => (SettlementKind::Failed, None, Some(reason.clone())),
            ConnectorEvent::Submitted => continue,
        };
        let mut mismatches: Vec<String> = match (kind, report) {
            (SettlementKind::Settled, Some(r)) => reconcile(&expected, r).into_iter().map(str::to_string).collect(),
            _ => Vec::new(),
        };
        // A settled investment order moves the portfolio book in this same transaction; a book that cannot
        // take it (a sale larger than what is held) is a reconciliation exception, and nothing moves.
        if kind == SettlementKind::Settled && mismatches.is_empty() && envelope.kind == ActionKind::InvestmentOrder {
            let date = rfc3339(now);
            let order = SettledOrder {
                tenant,
                action_id: &action.id,
                metadata: &envelope.metadata,
                currency: envelope.currency,
                date: &date[..10],
                at: now,
            };
            let applied = book.apply(tx, order).await?;
            if let Err(reason) = applied {
                mismatches.push(format!("book: {reason}"));
            }
        }
        let reconciliation = match kind {
            SettlementKind::Settled if mismatches.is_empty() => Reconciliation::Matched,
            SettlementKind::Settled => Reconciliation::Mismatch,
            _ => Reconciliation::NotApplicable,
        };
        let record_id = fiscus_domain::ids::new_id("stl");
        let payload = json!({
            "id": record_id,
            "action_id": action.id,
            "kind": kind.as_str(),
            "connector": envelope.connector,
            "report": report,
            "reason": reason,
            "reconciliation": reconciliation.as_str(),
            "mismatches": mismatches,
            "received_at": rfc3339(now),
        });
        let record_hash = seal(&payload).map_err(|e| Failure::internal(format!("settlement record: {e}")))?;
        let steps: &[(Event, EventType)] = match (kind, reconciliation) {
            (SettlementKind::Settled, Reconciliation::Matched) => &[
                (Event::ConnectorSettled, EventType::ActionSettled),
                (Event::ReconciledMatch, EventType::ActionReconciled),
            ],
            (SettlementKind::Settled, _) => &[
                (Event::ConnectorSettled, EventType::ActionSettled),
                (Event::ReconciledMismatch, EventType::ActionReconciliationException),
            ],
            (SettlementKind::Returned, _) => &[(Event::ConnectorReturned, EventType::ActionReturned)],
            (SettlementKind::Failed, _) => &[(Event::ConnectorFailed, EventType::ActionFailed)],
        };
        for &(step, event_type) in steps {
            let next = current.on(step).map_err(|e| Failure::internal(e.to_string()))?;
            record(
                tx,
                tenant,
                caller,
                ActionChange {
                    from: Some(current),
                    ..ActionChange::of(
                        action,
                        next,
                        event_type,
                        json!({ "settlement_record": record_id, "record_hash": record_hash, "mismatches": mismatches, "reason": reason }),
                    )
                },
            )
            .await?;
            current = next;
        }
        fiscus_store::settlement::insert_record(
            tx,
            tenant,
            &action.id,
            &SettlementRecord {
                id: record_id.clone(),
                kind,
                connector: envelope.connector.clone(),
                connector_reference: report.map(|r| r.connector_reference.clone()).unwrap_or_default(),
                reference: report.map(|r| r.reference.clone()).unwrap_or_else(|| envelope.reference.clone()),
                amount_minor: report.map(|r| r.amount_minor).unwrap_or(0),
                currency: report.map(|r| r.currency.clone()).unwrap_or_else(|| envelope.currency.code().to_string()),
                reconciliation,
                mismatches: mismatches.clone(),
                record_hash: record_hash.clone(),
                processed_by: worker.to_string(),
                received_at: now,
            },
        )
        .await?;
        // A delegated action's budget reservation follows the outcome (see `reservation_after`).
        if let Some(r) = reservation_after(current) {
            fiscus_store::delegations::settle_reservation(tx, tenant, &action.id, r, now).await?;
        }
    }
    Ok(current)
}
