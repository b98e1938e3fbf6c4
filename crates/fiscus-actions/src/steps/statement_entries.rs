//! Booked statement entries no payment matched (`crate::bank_messages` keeps them): a
//! person resolves each at the console, saying what it was (a bank fee, a payment made outside Fiscus, a
//! return to chase). Resolving moves no money and no action; it is sealed and audited.

use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// Records `person`'s resolution of an unmatched entry (1 to 500 characters, no control characters).
pub async fn resolve(
    tx: &mut WriteTx,
    tenant: &Tenant,
    person: &Caller,
    role: Role,
    entry_id: &str,
    resolution: &str,
) -> Result<(), Failure> {
    if !role.may_decide() {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    let resolution = resolution.trim();
    if !fiscus_domain::fields::text_ok(resolution, 1, 500) {
        return Err(Failure::Invalid(vec![("resolution", "1 to 500 characters, no control characters".into())]));
    }
    let key = tx.seal_key().clone();
    let entry = crate::tables::bank_files::get_entry(tx.conn(), &key, tenant, entry_id).await?;
    let now = now_micros();
    if entry.resolved.is_some()
        || !crate::tables::bank_files::resolve(tx, tenant, entry_id, &person.actor, now, resolution).await?
    {
        return Err(Failure::refused(ErrorCode::Conflict, "the entry was resolved already"));
    }
    let b = &entry.record.body;
    let details = json!({ "message_id": entry.message_id, "amount_minor": b.amount_minor,
                          "currency": b.currency.code(), "resolution": resolution });
    audit(tx, person, &AuditEntry::of_tenant(tenant, Change::StatementEntryResolved, entry_id, details, now)).await?;
    Ok(())
}
