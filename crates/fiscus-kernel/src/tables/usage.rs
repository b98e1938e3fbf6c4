//! Request counts per credential and operation, per UTC day, from the request log the server keeps.
//!
//! The server aggregates requests in memory and flushes the sums here about once a second: one upsert per
//! (credential, operation, day) instead of one row per request keeps the hot path free of writes.

use fiscus_store::Result;
use sqlx::AnyConnection;

/// Ordered by its fields, so that writers of several counters take their rows' locks in one order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UsageKey {
    pub workspace_id: String,
    pub environment: String,
    pub application_id: String,
    pub credential_id: String,
    pub operation: String,
    pub day: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsageCount {
    pub requests: i64,
    pub errors: i64,
}

pub async fn add(conn: &mut AnyConnection, key: &UsageKey, count: UsageCount) -> Result<()> {
    sqlx::query(
        "INSERT INTO usage_counters (workspace_id, environment, application_id, credential_id, operation, day, requests, errors) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (workspace_id, credential_id, operation, day) DO UPDATE \
         SET requests = usage_counters.requests + excluded.requests, errors = usage_counters.errors + excluded.errors",
    )
    .bind(&key.workspace_id)
    .bind(&key.environment)
    .bind(&key.application_id)
    .bind(&key.credential_id)
    .bind(&key.operation)
    .bind(&key.day)
    .bind(count.requests)
    .bind(count.errors)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fiscus_store::row! {
    #[derive(Clone, Debug)]
    pub struct UsageRow {
        pub application_id: String,
        pub credential_id: String,
        pub operation: String,
        pub day: String,
        pub requests: i64,
        pub errors: i64,
    }
}

/// Usage of one tenant from `since_day` (inclusive), ordered for stable output.
pub async fn list(
    conn: &mut AnyConnection,
    tenant: &fiscus_domain::tenancy::Tenant,
    since_day: &str,
) -> Result<Vec<UsageRow>> {
    Ok(sqlx::query_as::<_, UsageRow>(
        "SELECT application_id, credential_id, operation, day, requests, errors FROM usage_counters \
         WHERE workspace_id = $1 AND environment = $2 AND day >= $3 ORDER BY day, credential_id, operation",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(since_day)
    .fetch_all(&mut *conn)
    .await?)
}
