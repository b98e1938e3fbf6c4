//! Settlement and reconciliation of an executing action: run it through its connector, seal what the
//! connector reported, reconcile, and move the action, releasing or consuming a delegated budget
//! reservation. One claimed work item is finished in the caller's transaction; a crash before commit
//! leaves the claim to go stale and be taken again, and the unique settlement record keeps a second pass
//! from settling twice.

use crate::rules::bank_files::InstructionBody;
use crate::rules::checks::{CREDITOR_ACCOUNT, CheckStatus, DEBTOR_ACCOUNT};
use crate::rules::settlement::{
    Expected, Reconciliation, SettlementKind, SettlementReport, reconcile, reservation_after,
};
use crate::rules::transitions::{self, Event};
use crate::tables::settlement::{Job, SettlementRecord};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::events::EventType;
use fiscus_domain::evidence::seal;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::Loaded;
use crate::connectors::{ConnectorEvent, Instruction, connector_for};
use crate::steps::record::{ActionChange, record, record_many};
pub use fiscus_kernel::book::{Applied, Book, SettledOrder};
use fiscus_kernel::governed::{Caller, Failure, new_record};
use fiscus_kernel::settings::Settings;

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

pub fn settle<'a>(
    tx: &'a mut WriteTx,
    settings: &'a Settings,
    caller: &'a Caller,
    job: &'a Job,
    book: &'a dyn Book,
) -> fiscus_store::Boxed<'a, Result<Settled, Failure>> {
    Box::pin(async move {
        let tenant = &job.tenant;
        let worker = caller.actor.id.as_str();
        let loaded = Loaded::for_decision(tx, tenant, &job.action_id).await?;
        let action = &loaded.action;
        let now = now_micros();
        if action.state != ControlState::Executing {
            crate::tables::settlement::finish(tx, &job.id, worker, now).await?;
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
        if !crate::tables::settlement::finish(tx, &job.id, worker, now).await? {
            return Ok(Settled::ClaimLost);
        }
        Ok(Settled::Moved(current))
    })
}

/// What the bank reported of an action in flight (a status report's rejection, a statement entry), applied
/// as a connector's events are, in `tx`. `None` when the action is not `executing` (finished already, or
/// never sent): nothing changes.
pub fn report<'a>(
    tx: &'a mut WriteTx,
    caller: &'a Caller,
    tenant: &'a Tenant,
    action_id: &'a str,
    events: Vec<ConnectorEvent>,
    book: &'a dyn Book,
) -> fiscus_store::Boxed<'a, Result<Option<ControlState>, Failure>> {
    Box::pin(async move {
        let loaded = Loaded::for_decision(tx, tenant, action_id).await?;
        if loaded.action.state != ControlState::Executing {
            return Ok(None);
        }
        loaded.verify_sealed(tx, tenant).await?;
        Ok(Some(apply(tx, caller, tenant, &loaded, events, book, now_micros()).await?))
    })
}

/// The approved details a bank-file payment is bound to, by its reserved check: the latest version of the
/// check must be passed and cite a version that still hashes to what it cites.
async fn bound_version(
    tx: &mut WriteTx,
    tenant: &Tenant,
    loaded: &Loaded,
    check_key: &str,
) -> Result<crate::tables::bank_accounts::Version, Failure> {
    let check = loaded
        .checks
        .iter()
        .filter(|c| c.check_key == check_key)
        .max_by_key(|c| c.version)
        .filter(|c| c.status == CheckStatus::Passed)
        .ok_or_else(|| Failure::internal(format!("{}: no passed {check_key} check", loaded.action.id)))?;
    let key = tx.seal_key().clone();
    let version = crate::tables::bank_accounts::get_version(tx.conn(), &key, tenant, &check.source_reference).await?;
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
    match crate::tables::bank_files::insert_instruction(tx, tenant, &record).await {
        Ok(()) => Ok(()),
        // A repeated pass over the same item: the instruction is there already, and stays the only one.
        Err(fiscus_store::StoreError::Conflict(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// What one connector event settles: its sealed record and the steps it moves the action through.
struct Settlement {
    record: SettlementRecord,
    steps: &'static [(Event, EventType)],
    /// The facts each step's event carries.
    detail: serde_json::Value,
}

/// The kind, report and reason of a connector event; `None` for a hand-over (nothing is settled).
fn classify(event: &ConnectorEvent) -> Option<(SettlementKind, Option<&SettlementReport>, Option<String>)> {
    match event {
        ConnectorEvent::Settled(r) => Some((SettlementKind::Settled, Some(r), None)),
        ConnectorEvent::Returned { report, reason } => Some((SettlementKind::Returned, Some(report), reason.clone())),
        ConnectorEvent::Failed { reason } => Some((SettlementKind::Failed, None, Some(reason.clone()))),
        ConnectorEvent::Submitted => None,
    }
}

/// What the envelope says a settlement must agree with: a settled report's mismatches.
fn mismatches_of(
    action: &crate::tables::actions::Action,
    kind: SettlementKind,
    report: Option<&SettlementReport>,
) -> Vec<String> {
    let envelope = &action.envelope;
    let expected = Expected {
        reference: &envelope.reference,
        amount_minor: envelope.amount_minor,
        currency: envelope.currency.code(),
    };
    match (kind, report) {
        (SettlementKind::Settled, Some(r)) => reconcile(&expected, r).into_iter().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// The sealed settlement record of one event and the steps it takes, once its mismatches are known.
fn settlement(
    action: &crate::tables::actions::Action,
    (kind, report, reason): (SettlementKind, Option<&SettlementReport>, Option<String>),
    mismatches: Vec<String>,
    worker: &str,
    now: i64,
) -> Result<Settlement, Failure> {
    let envelope = &action.envelope;
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
    let steps: &'static [(Event, EventType)] = match (kind, reconciliation) {
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
    let detail = json!({ "settlement_record": record_id, "record_hash": record_hash, "mismatches": mismatches, "reason": reason });
    let record = SettlementRecord {
        id: record_id,
        kind,
        connector: envelope.connector.clone(),
        connector_reference: report.map(|r| r.connector_reference.clone()).unwrap_or_default(),
        reference: report.map(|r| r.reference.clone()).unwrap_or_else(|| envelope.reference.clone()),
        amount_minor: report.map(|r| r.amount_minor).unwrap_or(0),
        currency: report.map(|r| r.currency.clone()).unwrap_or_else(|| envelope.currency.code().to_string()),
        reconciliation,
        mismatches,
        record_hash,
        processed_by: worker.to_string(),
        received_at: now,
    };
    Ok(Settlement { record, steps, detail })
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
    let mut current = action.state;
    for event in &events {
        let Some(classified) = classify(event) else { continue };
        let (kind, report, _) = &classified;
        let mut mismatches = mismatches_of(action, *kind, *report);
        // A settled investment order moves the portfolio book in this same transaction; a book that cannot
        // take it (a sale larger than what is held) is a reconciliation exception, and nothing moves.
        if *kind == SettlementKind::Settled && mismatches.is_empty() && envelope.kind == ActionKind::InvestmentOrder {
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
        let s = settlement(action, classified, mismatches, worker, now)?;
        for &(step, event_type) in s.steps {
            let next = transitions::next(current, step).map_err(|e| Failure::internal(e.to_string()))?;
            record(
                tx,
                tenant,
                caller,
                ActionChange { from: Some(current), ..ActionChange::of(action, next, event_type, s.detail.clone()) },
            )
            .await?;
            current = next;
        }
        crate::tables::settlement::insert_record(tx, tenant, &action.id, &s.record).await?;
        // A delegated action's budget reservation follows the outcome (see `reservation_after`).
        if let Some(r) = reservation_after(current) {
            crate::tables::delegations::settle_reservation(tx, tenant, &action.id, r, now).await?;
        }
    }
    Ok(current)
}

/// [`report`] of many actions at once (a statement's thousands of entries): read and checked against their
/// seals in a few reads, and written in a few multi-row statements ([`record_many`]). Each answer is what
/// [`report`] answers for its action; an action named twice is settled once (the second answer is `None`,
/// as for an action already finished), and a return applies to a settled or completed one. Investment
/// orders, which move a book, go one by one.
pub fn report_many<'a>(
    tx: &'a mut WriteTx,
    caller: &'a Caller,
    tenant: &'a Tenant,
    reports: &'a [(String, Vec<ConnectorEvent>)],
    book: &'a dyn Book,
) -> fiscus_store::Boxed<'a, Result<Vec<Option<ControlState>>, Failure>> {
    Box::pin(async move {
        let key = tx.seal_key().clone();
        let worker = caller.actor.id.as_str();
        let now = now_micros();
        let mut ids: Vec<&str> = reports.iter().map(|(id, _)| id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let actions = crate::tables::actions::get_many(tx.conn(), &key, tenant, &ids).await?;
        let loaded = Loaded::load_page(tx.conn(), &key, tenant, actions).await?;
        let by_id: std::collections::HashMap<String, Loaded> =
            loaded.into_iter().map(|l| (l.action.id.clone(), l)).collect();
        let mut answers = Vec::with_capacity(reports.len());
        let mut seen = std::collections::HashSet::new();
        // (action, from, to, event type, detail), in order.
        let mut steps: Vec<(&Loaded, ControlState, ControlState, EventType, serde_json::Value)> = Vec::new();
        let mut records: Vec<(&str, SettlementRecord)> = Vec::new();
        let mut reservations = Vec::new();
        for (id, events) in reports {
            let Some(l) = by_id.get(id) else { return Err(Failure::NotFound) };
            // A return comes after the payment settled (often after it completed); anything else settles only
            // what is executing.
            let returns_only = events.iter().all(|e| matches!(e, ConnectorEvent::Returned { .. }));
            let open = l.action.state == ControlState::Executing
                || (returns_only && matches!(l.action.state, ControlState::Settled | ControlState::Completed));
            if !open || !seen.insert(id.as_str()) {
                answers.push(None);
                continue;
            }
            if l.action.envelope.kind == ActionKind::InvestmentOrder {
                answers.push(Some(apply(tx, caller, tenant, l, events.clone(), book, now).await?));
                continue;
            }
            let mut current = l.action.state;
            for event in events {
                let Some(classified) = classify(event) else { continue };
                let mismatches = mismatches_of(&l.action, classified.0, classified.1);
                let s = settlement(&l.action, classified, mismatches, worker, now)?;
                for &(step, event_type) in s.steps {
                    let next = transitions::next(current, step).map_err(|e| Failure::internal(e.to_string()))?;
                    steps.push((l, current, next, event_type, s.detail.clone()));
                    current = next;
                }
                records.push((l.action.id.as_str(), s.record));
            }
            if let Some(r) = reservation_after(current).filter(|_| l.action.envelope.delegation_id.is_some()) {
                reservations.push((l.action.id.as_str(), r));
            }
            answers.push(Some(current));
        }
        let changes: Vec<ActionChange<'_>> = steps
            .iter()
            .map(|(l, from, to, event_type, detail)| ActionChange {
                from: Some(*from),
                ..ActionChange::of(&l.action, *to, *event_type, detail.clone())
            })
            .collect();
        record_many(tx, tenant, caller, &changes).await?;
        crate::tables::settlement::insert_records(tx, tenant, &records).await?;
        for (id, r) in reservations {
            crate::tables::delegations::settle_reservation(tx, tenant, id, r, now).await?;
        }
        Ok(answers)
    })
}
