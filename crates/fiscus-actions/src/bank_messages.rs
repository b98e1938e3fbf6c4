//! The bank's messages in: `pain.002` status reports on the files Fiscus sent, and `camt.053` statements and
//! `camt.054` notifications of the accounts it pays from. One import, one transaction: the message is
//! recorded once per workspace and environment (its SHA-256; the same bytes again change nothing and answer
//! what the first import did), and each item moves the payment it names through the governed settlement
//! (`crate::steps::settle::report`):
//! - a status `RJCT` fails the payment, with the bank's reason code; an acceptance is recorded;
//! - a booked debit entry matches its payment by `EndToEndId` (the action's id), or else by exactly one
//!   payment in a file of the statement's account with the same amount and currency whose reference the
//!   entry's remittance lines carry; a match settles and reconciles it (`completed`, or
//!   `reconciliation_exception` when amount or currency disagree);
//! - a booked debit entry matching nothing is kept for a person to resolve;
//! - a booked credit entry that returns a payment (return information, `RtrInf`, naming the payment's
//!   `EndToEndId`) moves a settled or completed payment to `returned`, with the bank's reason code.
//!
//! A statement whose opening balance plus its booked entries is not its closing balance is refused whole:
//! nothing it says is applied.

use crate::connectors::ConnectorEvent;
use crate::rules::bank_files::{
    EntryBody, MessageBody, MessageItem, MessageKind, Outcome, balance_difference, end_to_end_given, status_outcome,
};
use crate::rules::settlement::SettlementReport;
use crate::steps::settle::{Book, report, report_many};
use crate::tables::bank_files::{self as store, Message};
use fiscus_domain::actions::ControlState;
use fiscus_domain::audit_action::Change;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::seal_bytes;
use fiscus_domain::money::format_minor;
use fiscus_domain::tenancy::Tenant;
use fiscus_iso20022::{camt, pain002};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};
use fiscus_store::WriteTx;
use serde_json::json;

/// An import's answer: the message as recorded, and whether these bytes had been imported before.
pub struct Imported {
    pub message: Message,
    pub duplicate: bool,
}

/// Imports one message for `tenant`, in its own transaction.
pub fn import<'a>(
    services: &'a Services,
    tenant: &'a Tenant,
    caller: &'a Caller,
    xml: &'a str,
) -> fiscus_store::Boxed<'a, Result<Imported, Failure>> {
    Box::pin(async move {
        let mut tx = services.store.begin().await?;
        let imported = import_in(&mut tx, services.book.as_ref(), tenant, caller, xml).await?;
        if !imported.duplicate {
            tx.commit().await?;
        }
        Ok(imported)
    })
}

/// Imports one message for `tenant` in `tx` (committed by the caller unless the answer is a duplicate,
/// which wrote nothing).
pub async fn import_in(
    tx: &mut WriteTx,
    book: &dyn Book,
    tenant: &Tenant,
    caller: &Caller,
    xml: &str,
) -> Result<Imported, Failure> {
    let sha256 = seal_bytes(xml.as_bytes());
    let name = fiscus_iso20022::message_of(xml).map_err(|e| invalid(e.to_string()))?;
    let key = tx.seal_key().clone();
    if let Some(message) = store::message_by_hash(tx.conn(), &key, tenant, &sha256).await? {
        return Ok(Imported { message, duplicate: true });
    }
    let id = fiscus_domain::ids::new_id("bkm");
    let mut unmatched = Vec::new();
    let body = if name.starts_with("pain.002.") {
        let r = pain002::read(xml).map_err(|e| invalid(e.to_string()))?;
        let items = statuses(tx, book, tenant, caller, &r).await?;
        MessageBody { kind: MessageKind::StatusReport, message: r.message, message_id: r.message_id, sha256, items }
    } else {
        let m = camt::read(xml).map_err(|e| invalid(e.to_string()))?;
        let kind = match m.kind {
            camt::Kind::Statement => MessageKind::Statement,
            camt::Kind::Notification => MessageKind::Notification,
        };
        if kind == MessageKind::Statement {
            balanced(&m)?;
        }
        let items = entries(tx, book, tenant, caller, &m, &mut unmatched).await?;
        MessageBody { kind, message: m.message, message_id: m.message_id, sha256, items }
    };
    let mut message = new_record("bank message", "bkm", body, caller.actor.clone())?;
    message.id = id;
    match store::insert_message(tx, tenant, &message, xml).await {
        Ok(()) => {}
        Err(fiscus_store::StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "the same message is being imported by another request"));
        }
        Err(e) => return Err(e.into()),
    }
    for entry in unmatched {
        let record = new_record("statement entry", "ste", entry, caller.actor.clone())?;
        store::insert_entry(tx, tenant, &record, &message.id).await?;
    }
    let count = |o: Outcome| message.body.items.iter().filter(|i| i.outcome == o).count();
    let summary = json!({
        "kind": message.body.kind.as_str(), "message_id": message.body.message_id, "sha256": message.body.sha256,
        "completed": count(Outcome::Completed), "rejected": count(Outcome::Rejected),
        "exceptions": count(Outcome::Exception), "unmatched": count(Outcome::Unmatched),
    });
    let entry = AuditEntry::of_tenant(tenant, Change::BankMessageImported, &message.id, summary, message.created_at);
    audit(tx, caller, &entry).await?;
    Ok(Imported { message, duplicate: false })
}

/// Why a message was refused, in words; a failure that is no refusal (the database) is handed back.
pub fn refusal(e: Failure) -> Result<String, Failure> {
    match e {
        Failure::Invalid(errors) => Ok(errors.into_iter().map(|(_, m)| m).collect::<Vec<_>>().join("; ")),
        Failure::Missing(_, m) => Ok(m),
        Failure::Refused { detail, .. } => Ok(detail),
        other => Err(other),
    }
}

fn invalid(why: String) -> Failure {
    Failure::Invalid(vec![("document", why)])
}

/// A status report's statuses applied to the payments of the file it reports on.
async fn statuses(
    tx: &mut WriteTx,
    book: &dyn Book,
    tenant: &Tenant,
    caller: &Caller,
    r: &pain002::StatusReport,
) -> Result<Vec<MessageItem>, Failure> {
    let key = tx.seal_key().clone();
    let file = match store::get_file(tx.conn(), &key, tenant, &r.original_message_id).await {
        Ok(f) => f,
        Err(fiscus_store::StoreError::NotFound) => {
            return Err(invalid(format!(
                "the report is on {}, which is no payment file of this workspace and environment",
                r.original_message_id
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let in_file = &file.record.body.action_ids;
    let mut items = Vec::new();
    let mut reported: Vec<&str> = Vec::new();
    // The reader gives the most precise status first: payments' own, then a block's or the file's for
    // the payments without one.
    for status in &r.statuses {
        let targets: Vec<&str> = match &status.scope {
            pain002::Scope::Payment(e2e) => in_file.iter().filter(|a| *a == e2e).map(String::as_str).collect(),
            pain002::Scope::Block(_) | pain002::Scope::File => {
                in_file.iter().map(String::as_str).filter(|a| !reported.contains(a)).collect()
            }
        };
        if targets.is_empty() {
            let e2e = match &status.scope {
                pain002::Scope::Payment(e2e) => Some(e2e.clone()),
                _ => None,
            };
            items.push(item(&status.code, status.reason.clone(), e2e, None, Outcome::Ignored));
        }
        for action_id in targets {
            reported.push(action_id);
            let outcome = match status_outcome(&status.code) {
                Some(Outcome::Rejected) => {
                    let reason = format!(
                        "the bank rejected the payment ({}{}{})",
                        status.reason.as_deref().unwrap_or("RJCT"),
                        if status.detail.is_some() { ": " } else { "" },
                        status.detail.as_deref().unwrap_or("")
                    );
                    let events = vec![ConnectorEvent::Failed { reason }];
                    match report(tx, caller, tenant, action_id, events, book).await? {
                        Some(_) => Outcome::Rejected,
                        None => Outcome::Ignored,
                    }
                }
                Some(o) => o,
                None => Outcome::Ignored,
            };
            let mut it = item(&status.code, status.reason.clone(), Some(action_id.to_string()), None, outcome);
            it.action_id = Some(action_id.to_string());
            items.push(it);
        }
    }
    Ok(items)
}

fn item(
    code: &str,
    reason: Option<String>,
    e2e: Option<String>,
    amount: Option<(i64, fiscus_domain::money::Currency)>,
    outcome: Outcome,
) -> MessageItem {
    MessageItem {
        code: code.to_string(),
        reason,
        end_to_end_id: e2e,
        action_id: None,
        amount_minor: amount.map(|a| a.0),
        currency: amount.map(|a| a.1),
        outcome,
    }
}

/// Every report of a statement adds up: opening (or previous closing) plus booked entries is closing.
fn balanced(m: &camt::BankToCustomer) -> Result<(), Failure> {
    for r in &m.reports {
        let find = |codes: &[&str]| r.balances.iter().find(|b| codes.contains(&b.code.as_str()));
        let (opening, closing) = (find(&["OPBD", "PRCD"]), find(&["CLBD"]));
        let booked: Vec<(i64, bool)> =
            r.entries.iter().filter(|e| e.booked()).map(|e| (e.amount_minor, e.debit)).collect();
        let difference = balance_difference(opening.map(|b| b.amount_minor), closing.map(|b| b.amount_minor), &booked);
        if let (Some(d), Some(c)) = (difference.filter(|d| *d != 0), closing) {
            let shown = i64::try_from(d).map_or_else(|_| d.to_string(), |d| format_minor(d, c.currency));
            return Err(invalid(format!(
                "statement {}: the opening balance plus the booked entries differs from the closing balance by {shown} {}; nothing was applied",
                r.id,
                c.currency.code()
            )));
        }
    }
    Ok(())
}

/// A booked debit matched to a payment, waiting to be applied.
struct Matched {
    item: usize,
    action_id: String,
    report: SettlementReport,
    /// A return, with its reason code (none: a booked debit).
    returned: Option<String>,
}

/// A statement's or notification's booked entries matched to payments and applied, all of them in one
/// pass over the store (`report_many`): a statement of ten thousand entries is a few statements' work.
async fn entries(
    tx: &mut WriteTx,
    book: &dyn Book,
    tenant: &Tenant,
    caller: &Caller,
    m: &camt::BankToCustomer,
    unmatched: &mut Vec<EntryBody>,
) -> Result<Vec<MessageItem>, Failure> {
    let key = tx.seal_key().clone();
    // One part per transaction an entry details (a batch booking), or the entry itself.
    struct Part<'a> {
        report: &'a camt::Report,
        entry: &'a camt::Entry,
        e2e: Option<&'a str>,
        amount: i64,
        references: Vec<String>,
        return_reason: Option<&'a str>,
    }
    let mut parts = Vec::new();
    for r in &m.reports {
        for e in &r.entries {
            if e.transactions.is_empty() {
                parts.push(Part {
                    report: r,
                    entry: e,
                    e2e: None,
                    amount: e.amount_minor,
                    references: e.reference.iter().cloned().collect(),
                    return_reason: None,
                });
            } else {
                for t in &e.transactions {
                    let mut references = t.remittance.clone();
                    references.extend(e.reference.clone());
                    parts.push(Part {
                        report: r,
                        entry: e,
                        e2e: end_to_end_given(t.end_to_end_id.as_deref()),
                        amount: t.amount_minor.unwrap_or(e.amount_minor),
                        references,
                        return_reason: t.return_reason.as_deref(),
                    });
                }
            }
        }
    }
    let is_return = |p: &Part<'_>| p.entry.booked() && !p.entry.debit && p.return_reason.is_some();
    let named: Vec<&str> = parts
        .iter()
        .filter(|p| (p.entry.booked() && p.entry.debit && !p.entry.reversal) || is_return(p))
        .filter_map(|p| p.e2e)
        .collect();
    let filed: std::collections::HashMap<String, store::Instruction> =
        store::instructions_for(tx.conn(), &key, tenant, &named)
            .await?
            .into_iter()
            .filter(|i| i.file_id.is_some())
            .map(|i| (i.record.body.action_id.clone(), i))
            .collect();
    let mut items = Vec::with_capacity(parts.len());
    let mut matched = Vec::new();
    for p in parts {
        let e = p.entry;
        let amount_of = Some((p.amount, e.currency));
        let e2e = p.e2e.map(str::to_string);
        if is_return(&p) {
            // Money back for a payment we sent: matched by its end-to-end id only (a return names it).
            let reason = p.return_reason.map(str::to_string);
            let mut it = item("BOOK", reason.clone(), e2e, amount_of, Outcome::Ignored);
            if let Some(instruction) = p.e2e.and_then(|id| filed.get(id)) {
                let b = &instruction.record.body;
                matched.push(Matched {
                    item: items.len(),
                    action_id: b.action_id.clone(),
                    report: SettlementReport {
                        reference: b.reference.clone(),
                        amount_minor: p.amount,
                        currency: e.currency.code().to_string(),
                        connector_reference: e
                            .account_servicer_reference
                            .clone()
                            .unwrap_or_else(|| format!("{}/{}", m.message_id, p.report.id)),
                    },
                    returned: reason,
                });
                it.action_id = Some(b.action_id.clone());
            }
            items.push(it);
            continue;
        }
        if !e.booked() || !e.debit || e.reversal {
            items.push(item("BOOK", None, e2e, amount_of, Outcome::Ignored));
            continue;
        }
        let found = match p.e2e {
            Some(id) => filed.get(id).cloned(),
            None => by_amount_and_reference(tx, tenant, &p.report.account, p.amount, e.currency, &p.references).await?,
        };
        let Some(instruction) = found else {
            unmatched.push(EntryBody {
                account: p.report.account.clone(),
                amount_minor: p.amount,
                currency: e.currency,
                debit: e.debit,
                booking_date: e.booking_date.clone(),
                end_to_end_id: e2e.clone(),
                references: p.references,
            });
            items.push(item("BOOK", None, e2e, amount_of, Outcome::Unmatched));
            continue;
        };
        let b = &instruction.record.body;
        matched.push(Matched {
            item: items.len(),
            action_id: b.action_id.clone(),
            report: SettlementReport {
                // The entry was matched to this payment (by its id, or by the reference it carries).
                reference: b.reference.clone(),
                amount_minor: p.amount,
                currency: e.currency.code().to_string(),
                connector_reference: e
                    .account_servicer_reference
                    .clone()
                    .unwrap_or_else(|| format!("{}/{}", m.message_id, p.report.id)),
            },
            returned: None,
        });
        let mut it = item("BOOK", None, e2e, amount_of, Outcome::Ignored);
        it.action_id = Some(b.action_id.clone());
        items.push(it);
    }
    let reports: Vec<(String, Vec<ConnectorEvent>)> = matched
        .iter()
        .map(|x| {
            let event = match &x.returned {
                Some(reason) => ConnectorEvent::Returned { report: x.report.clone(), reason: Some(reason.clone()) },
                None => ConnectorEvent::Settled(x.report.clone()),
            };
            (x.action_id.clone(), vec![event])
        })
        .collect();
    let answers = report_many(tx, caller, tenant, &reports, book).await?;
    for (x, answer) in matched.iter().zip(answers) {
        items[x.item].outcome = match answer {
            Some(ControlState::Completed) => Outcome::Completed,
            Some(ControlState::Returned) => Outcome::Returned,
            Some(_) => Outcome::Exception,
            None => Outcome::Ignored,
        };
    }
    Ok(items)
}

/// The one filed payment from the statement's account with this amount and currency whose reference the
/// entry carries; none when there is no such payment or more than one.
async fn by_amount_and_reference(
    tx: &mut WriteTx,
    tenant: &Tenant,
    account: &str,
    amount: i64,
    currency: fiscus_domain::money::Currency,
    references: &[String],
) -> Result<Option<store::Instruction>, Failure> {
    let key = tx.seal_key().clone();
    let candidates = store::filed_in(tx.conn(), &key, tenant, currency).await?;
    let mut found = Vec::new();
    for i in candidates {
        let b = &i.record.body;
        if b.amount_minor != amount || !references.iter().any(|r| r.contains(&b.reference)) {
            continue;
        }
        let debtor = crate::tables::bank_accounts::get_version(tx.conn(), &key, tenant, &b.debtor_version_id).await?;
        if statement_account(&debtor.record.body.number) == account.replace(' ', "") {
            found.push(i);
        }
    }
    Ok(if found.len() == 1 { found.pop() } else { None })
}

fn statement_account(n: &fiscus_domain::bank_accounts::AccountNumber) -> String {
    match n {
        fiscus_domain::bank_accounts::AccountNumber::Iban(iban) => iban.as_str().to_string(),
        fiscus_domain::bank_accounts::AccountNumber::Local { number, .. } => number.clone(),
    }
}
