//! Setting records aside (issue 54): a worker that finds a record failing its seal names it in `set_aside`
//! (`fiscus_store::set_aside`, which every claim of that table then skips), raises an alarm in the log and
//! writes an audit event in the record's workspace, in the caller's transaction, and goes on with every
//! other record. Setting aside withholds work and decides nothing: the record stays as it is, refused
//! wherever it is read.

use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_store::WriteTx;
use fiscus_store::set_aside::Bad;
use serde_json::json;

use super::record::{AuditEntry, audit};
use super::{Caller, Failure};

/// Sets each of `bad` (rows of `table`) aside; how many were newly set aside (one set aside already keeps
/// its first reason and adds no event).
pub async fn record(tx: &mut WriteTx, caller: &Caller, table: &'static str, bad: &[Bad]) -> Result<usize, Failure> {
    let now = now_micros();
    let mut n = 0;
    for b in bad {
        tracing::error!(table, record = %b.record_id, workspace = %b.tenant.workspace_id, reason = %b.reason,
            "a record was set aside: the worker goes on without it");
        let by = caller.actor.label();
        if fiscus_store::set_aside::put(tx, &b.tenant, table, &b.record_id, &b.reason, &by, now).await? {
            let details = json!({ "table": table, "reason": b.reason });
            let entry = AuditEntry::of_tenant(&b.tenant, Change::RecordSetAside, &b.record_id, details, now);
            audit(tx, caller, &entry).await?;
            n += 1;
        }
    }
    Ok(n)
}
