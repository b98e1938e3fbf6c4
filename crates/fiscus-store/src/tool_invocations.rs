//! Hash-only audit rows of tool calls through the agent protocols, sealed like request evidence.

use crate::{Result, WriteTx};
use fiscus_domain::integrity::Stored;
use fiscus_domain::tenancy::Tenant;
use sqlx::{AnyConnection, FromRow};

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Invocation {
    pub id: String,
    pub application_id: String,
    pub credential_id: String,
    /// `mcp` or `a2a`.
    pub protocol: String,
    pub tool: String,
    /// `sha256:` of the RFC 8785 form of the arguments.
    pub request_hash: String,
    /// `sha256:` of the answer's body.
    pub response_hash: String,
    pub status: i64,
    /// `succeeded`, `failed` (the operation answered an error) or `refused` (not offered to the caller).
    pub outcome: String,
    pub request_id: String,
    pub created_at: i64,
}

const COLUMNS: &str = "id, application_id, credential_id, protocol, tool, request_hash, response_hash, status, outcome, \
                       request_id, created_at";

pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, r: &Invocation) -> Result<()> {
    let text = |v: &str| Stored::Text(v.to_string());
    let seal_mac = crate::seals::seal_of(
        tx.seal_key(),
        &crate::seals::TOOL_INVOCATIONS,
        vec![
            text(&r.id),
            text(&tenant.workspace_id),
            text(tenant.environment.as_str()),
            text(&r.application_id),
            text(&r.credential_id),
            text(&r.protocol),
            text(&r.tool),
            text(&r.request_hash),
            text(&r.response_hash),
            Stored::Integer(r.status),
            text(&r.outcome),
            text(&r.request_id),
            Stored::Integer(r.created_at),
        ],
    )?;
    sqlx::query(&format!(
        "INSERT INTO tool_invocations (workspace_id, environment, {COLUMNS}, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&r.id)
    .bind(&r.application_id)
    .bind(&r.credential_id)
    .bind(&r.protocol)
    .bind(&r.tool)
    .bind(&r.request_hash)
    .bind(&r.response_hash)
    .bind(r.status)
    .bind(&r.outcome)
    .bind(&r.request_id)
    .bind(r.created_at)
    .bind(seal_mac)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The newest `limit` invocations of one credential, newest first.
pub async fn recent(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    credential_id: &str,
    limit: u32,
) -> Result<Vec<Invocation>> {
    Ok(sqlx::query_as::<_, Invocation>(&format!(
        "SELECT {COLUMNS} FROM tool_invocations WHERE workspace_id = $1 AND environment = $2 AND credential_id = $3 \
         ORDER BY id DESC LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(credential_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?)
}
