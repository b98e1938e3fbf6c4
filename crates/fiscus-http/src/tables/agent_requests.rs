//! Sealed evidence of each agent-execution gateway request.

use fiscus_domain::integrity::Stored;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;

fiscus_store::row! {
    #[derive(Clone, Debug)]
    pub struct AgentRequestRow {
        pub id: String,
        pub application_id: String,
        pub credential_id: String,
        pub operation: String,
        pub method: String,
        pub path: String,
        pub status: i64,
        pub request_hash: String,
        pub response_hash: String,
        pub evidence_hash: String,
        pub request_id: String,
        pub created_at: i64,
    }
}

const COLUMNS: &str = "id, application_id, credential_id, operation, method, path, status, request_hash, response_hash, \
                       evidence_hash, request_id, created_at";

/// Inserts (and seals) one evidence row. `nonce`, for a signed read, spends the signature's nonce with the
/// row: [`StoreError::Conflict`] when this client already used it.
pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, r: &AgentRequestRow, nonce: Option<&str>) -> Result<()> {
    let text = |v: &str| Stored::Text(v.to_string());
    let sealed_values = vec![
        text(&r.id),
        text(&tenant.workspace_id),
        text(tenant.environment.as_str()),
        text(&r.application_id),
        text(&r.credential_id),
        text(&r.operation),
        text(&r.method),
        text(&r.path),
        Stored::Integer(r.status),
        text(&r.request_hash),
        text(&r.response_hash),
        text(&r.evidence_hash),
        text(&r.request_id),
        Stored::Integer(r.created_at),
    ];
    let seal_mac =
        fiscus_store::seals::seal_of(tx.seal_key(), &fiscus_store::seals::AGENT_REQUESTS, sealed_values.clone())?;
    sqlx::query(&format!(
        "INSERT INTO agent_requests (workspace_id, environment, {COLUMNS}, nonce, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&r.id)
    .bind(&r.application_id)
    .bind(&r.credential_id)
    .bind(&r.operation)
    .bind(&r.method)
    .bind(&r.path)
    .bind(r.status)
    .bind(&r.request_hash)
    .bind(&r.response_hash)
    .bind(&r.evidence_hash)
    .bind(&r.request_id)
    .bind(r.created_at)
    .bind(nonce)
    .bind(seal_mac)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::log(tx, &fiscus_store::seals::AGENT_REQUESTS, &sealed_values).await?;
    Ok(())
}

/// One request's evidence, its seal checked.
pub async fn get(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    id: &str,
) -> Result<AgentRequestRow> {
    fiscus_store::seals::get_tenant_row::<AgentRequestRow, _>(
        conn,
        key,
        &fiscus_store::seals::AGENT_REQUESTS,
        COLUMNS,
        tenant,
        id,
    )
    .await
}

/// The newest `limit` evidence records of one credential (a key, token or signed client), newest first.
pub async fn recent_for_credential(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    credential_id: &str,
    limit: u32,
) -> Result<Vec<AgentRequestRow>> {
    let rows = sqlx::query_as::<_, AgentRequestRow>(&format!(
        "SELECT {COLUMNS} FROM agent_requests WHERE workspace_id = $1 AND environment = $2 AND credential_id = $3 \
         ORDER BY id DESC LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(credential_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::AGENT_REQUESTS, &tenant.workspace_id, "id", &ids)
        .await?;
    Ok(rows)
}

/// Evidence records of one credential since `since` (UTC microseconds).
pub async fn count_for_credential(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    credential_id: &str,
    since: i64,
) -> Result<i64> {
    Ok(sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM agent_requests WHERE workspace_id = $1 AND environment = $2 AND credential_id = $3 \
         AND created_at >= $4",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(credential_id)
    .bind(since)
    .fetch_one(&mut *conn)
    .await?)
}
