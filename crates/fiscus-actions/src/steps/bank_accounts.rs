//! Counterparties and bank accounts as governed master data (`fiscus_domain::bank_accounts` has the rules):
//! a caller creates counterparties and proposes accounts and changes of their details, each a sealed version
//! pending until a person decides it at the console; the decision covers exactly the version's hash the
//! person was shown, and every step is audited in its transaction.

use crate::rules::bank_accounts::{ProposedDetails, VersionState, may_decide};
use crate::rules::checks::{CREDITOR_ACCOUNT, CheckStatus, DEBTOR_ACCOUNT, ValidCheck};
use crate::tables::bank_accounts::{self as store, Counterparty, Version};
use fiscus_domain::audit_action::Change;
use fiscus_domain::bank_accounts::{CounterpartyBody, Owner};
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{StoreError, WriteTx};
use serde_json::json;

use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};

/// A counterparty as a caller creates it.
pub struct NewCounterparty {
    pub name: String,
    pub reference: Option<String>,
}

pub async fn create_counterparty(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    new: NewCounterparty,
) -> Result<Counterparty, Failure> {
    let mut errors = Vec::new();
    let name = fiscus_domain::banking::text("name", &new.name, 140).map_err(|e| errors.push((e.field, e.message))).ok();
    let reference = match new.reference.as_deref() {
        None => None,
        Some(r) => fiscus_domain::banking::text("reference", r, 64).map_err(|e| errors.push((e.field, e.message))).ok(),
    };
    let Some(name) = name.filter(|_| errors.is_empty()) else { return Err(Failure::Invalid(errors)) };
    let record = new_record("counterparty", "cpt", CounterpartyBody { name, reference }, caller.actor.clone())?;
    match store::insert_counterparty(tx, tenant, &record).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "a counterparty with this reference exists"));
        }
        Err(e) => return Err(e.into()),
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::CounterpartyCreated,
        &record.id,
        json!({ "content_hash": record.content_hash }),
        record.created_at,
    );
    audit(tx, caller, &entry).await?;
    Ok(record)
}

/// Proposes a new account (`account_id` `None`: its first version) or a change of one (its next version),
/// pending until a person decides it.
pub async fn propose(
    tx: &mut WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    account_id: Option<&str>,
    details: ProposedDetails,
) -> Result<Version, Failure> {
    let key = tx.seal_key().clone();
    if let Some(cp) = details.counterparty_id.as_deref() {
        match store::get_counterparty(tx.conn(), &key, tenant, cp).await {
            Ok(_) => {}
            Err(StoreError::NotFound) => {
                return Err(Failure::Missing("counterparty_id", format!("no counterparty {cp}")));
            }
            Err(e) => return Err(e.into()),
        }
    }
    let (account_id, number, superseding) = match account_id {
        None => (fiscus_domain::ids::new_id("bac"), 1, None),
        Some(id) => {
            let versions = store::versions_of(tx.conn(), &key, tenant, id).await?;
            let Some(last) = versions.last() else { return Err(Failure::NotFound) };
            let first = &versions[0].record.body;
            if details.owner != first.owner || details.counterparty_id != first.counterparty_id {
                return Err(Failure::Invalid(vec![(
                    "owner",
                    "an account keeps its owner and counterparty; propose a new account instead".into(),
                )]));
            }
            if versions.iter().any(|v| v.state == VersionState::Pending) {
                return Err(Failure::refused(ErrorCode::Conflict, "a change of this account is already pending"));
            }
            let active =
                versions.iter().find(|v| v.state == VersionState::Active).map(|v| v.record.content_hash.clone());
            (id.to_string(), last.record.body.version + 1, active)
        }
    };
    let body = details.into_version(&account_id, number).map_err(Failure::Invalid)?;
    let record = new_record("bank account version", "bav", body, caller.actor.clone())?;
    match store::insert_version(tx, tenant, &record).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "a change of this account is already pending"));
        }
        Err(e) => return Err(e.into()),
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::BankAccountProposed,
        &record.id,
        json!({
            "account_id": account_id,
            "version": number,
            "content_hash": record.content_hash,
            "supersedes_hash": superseding,
        }),
        record.created_at,
    );
    audit(tx, caller, &entry).await?;
    Ok(Version { record, state: VersionState::Pending, decision: None })
}

/// A person's decision on a pending version, covering exactly the hash they were shown: an approval makes
/// it the account's active version (the previous one superseded), a rejection leaves the account as it was.
#[allow(clippy::too_many_arguments)]
pub async fn decide(
    tx: &mut WriteTx,
    tenant: &Tenant,
    person: &Caller,
    role: Role,
    version_id: &str,
    approve: bool,
    note: Option<&str>,
    shown_hash: &str,
) -> Result<Version, Failure> {
    if !role.may_decide() {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let key = tx.seal_key().clone();
    let v = store::get_version(tx.conn(), &key, tenant, version_id).await?;
    if v.record.content_hash != shown_hash {
        return Err(Failure::refused(ErrorCode::Conflict, "the details are not the ones shown; nothing was decided"));
    }
    may_decide(&v.record.created_by, &person.actor, v.state, approve)
        .map_err(|r| Failure::refused(ErrorCode::Conflict, r.message()))?;
    let note = match note.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) if n.chars().count() > 500 => {
            return Err(Failure::Invalid(vec![("note", "at most 500 characters".into())]));
        }
        other => other,
    };
    let now = now_micros();
    let superseded = if approve {
        store::versions_of(tx.conn(), &key, tenant, &v.record.body.account_id)
            .await?
            .into_iter()
            .find(|a| a.state == VersionState::Active)
    } else {
        None
    };
    if !store::decide(tx, tenant, &v, approve, &person.actor, now, note).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the version was decided meanwhile"));
    }
    // Payments not yet executed that were bound to the details this approval replaces (as the account paid
    // to, or, for an own account, paid from): their check fails again, citing the new version, which
    // invalidates their approvals and keeps them from executing. They pay the details they were approved for
    // or nothing; never the new ones without a new approval.
    if let Some(old) = &superseded {
        let (check_key, reason) = match v.record.body.owner {
            Owner::Counterparty => {
                (CREDITOR_ACCOUNT, "the counterparty's bank details changed after this payment was proposed")
            }
            Owner::Own => {
                (DEBTOR_ACCOUNT, "the details of the account paid from changed after this payment was proposed")
            }
        };
        for action_id in crate::tables::actions::open_citing(tx, tenant, check_key, &old.record.content_hash).await? {
            let check = ValidCheck {
                check_key: check_key.to_string(),
                status: CheckStatus::Failed,
                source_type: "bank_account_version".to_string(),
                source_reference: v.record.id.clone(),
                source_hash: v.record.content_hash.clone(),
                metrics: Vec::new(),
                metadata: vec![json!({
                    "reason": reason,
                    "bound_version": old.record.id,
                    "bound_hash": old.record.content_hash,
                })],
            };
            crate::steps::check::record_check(tx, tenant, person, &action_id, check).await?;
        }
    }
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::BankAccountDecision,
        version_id,
        json!({
            "account_id": v.record.body.account_id,
            "version": v.record.body.version,
            "decision": if approve { "approve" } else { "reject" },
            "content_hash": v.record.content_hash,
        }),
        now,
    );
    audit(tx, person, &entry).await?;
    let state = if approve { VersionState::Active } else { VersionState::Rejected };
    Ok(Version { state, decision: Some((person.actor.clone(), now, note.map(str::to_string))), record: v.record })
}
