//! Writing a sealed investment record: request and output in canonical form (RFC 8785), the SHA-256 over
//! both, the row sealed, and its audit event, in one transaction.

use crate::tables::investment_records::{self, Record, RecordKind};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::tenancy::Tenant;
use serde::Serialize;
use serde_json::{Value, json};

use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// `sha256:` over the canonical request, a newline, and the canonical output.
pub fn content_hash(request: &str, output: &str) -> String {
    fiscus_domain::evidence::seal_bytes(format!("{request}\n{output}").as_bytes())
}

/// A value in its RFC 8785 form (what hashes and seals cover).
pub fn canonical(what: &str, v: &Value) -> Result<String, Failure> {
    fiscus_domain::jcs::canonicalize(v).map_err(|e| Failure::internal(format!("{what}: {e:?}")))
}

/// Records what an operation proposed or measured, sealed, with its audit event.
pub async fn record(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    kind: RecordKind,
    portfolio_id: Option<i64>,
    request: Value,
    output: &impl Serialize,
) -> Result<Record, Failure> {
    let output = serde_json::to_value(output).map_err(|e| Failure::internal(format!("output: {e}")))?;
    let (request, output) = (canonical("request", &request)?, canonical("output", &output)?);
    let now = now_micros();
    let record = Record {
        id: fiscus_domain::ids::new_id(kind.prefix()),
        kind,
        portfolio_id,
        content_hash: content_hash(&request, &output),
        request,
        output,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    investment_records::insert(&mut tx, tenant, &record).await?;
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::InvestmentRecordCreated.into(),
        subject: Some(&record.id),
        details: json!({ "kind": kind.as_str(), "portfolio_id": portfolio_id, "content_hash": record.content_hash }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(record)
}
