//! Autonomy assessment evidence rows (append-only).

use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Result;
use fiscus_store::appends::Appends;
use sqlx::AnyConnection;

fiscus_store::row! {
    #[derive(Clone, Debug)]
    pub struct EvidenceRow {
        pub id: String,
        pub environment: String,
        pub domain: String,
        pub title: String,
        pub summary: Option<String>,
        pub source_type: String,
        pub source_reference: String,
        pub source_hash: String,
        pub observed_at: i64,
        pub metadata: String,
        pub evidence_hash: String,
        /// The application (`app_…`) that recorded it. A bare id, not an actor label: evidence comes only
        /// over the API, and the id is part of the evidence's sealed payload.
        pub recorded_by: String,
        pub created_at: i64,
    }
}

const COLUMNS: &str = "id, environment, domain, title, summary, source_type, source_reference, source_hash, observed_at, \
                       metadata, evidence_hash, recorded_by, created_at";

/// Adds the evidence row to `appends`, sealed over exactly the values written. Evidence is append-only, so
/// it is written with the group's other appends (see [`fiscus_store::appends`]).
pub fn append(appends: &mut Appends, key: &SealKey, tenant: &Tenant, row: &EvidenceRow) -> Result<()> {
    let text = |v: &str| Stored::Text(v.to_string());
    appends.sealed_row(
        key,
        &fiscus_store::seals::AUTONOMY_EVIDENCE,
        vec![
            text(&row.id),
            text(&tenant.workspace_id),
            text(tenant.environment.as_str()),
            text(&row.domain),
            text(&row.title),
            row.summary.as_deref().map_or(Stored::Null, text),
            text(&row.source_type),
            text(&row.source_reference),
            text(&row.source_hash),
            Stored::Integer(row.observed_at),
            text(&row.metadata),
            text(&row.evidence_hash),
            text(&row.recorded_by),
            Stored::Integer(row.created_at),
        ],
    )
}

/// A page in id order after `after_id`, fetching `limit + 1` rows so the caller knows whether more follow.
pub async fn list(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    domain: Option<&str>,
    after_id: Option<&str>,
    limit: u32,
) -> Result<Vec<EvidenceRow>> {
    let rows = sqlx::query_as::<_, EvidenceRow>(&format!(
        "SELECT {COLUMNS} FROM autonomy_evidence \
         WHERE workspace_id = $1 AND environment = $2 AND ($3 IS NULL OR domain = $3) AND ($4 IS NULL OR id > $4) \
         ORDER BY id LIMIT $5"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(domain)
    .bind(after_id)
    .bind(i64::from(limit) + 1)
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    fiscus_store::seals::check_keys(
        conn,
        key,
        &fiscus_store::seals::AUTONOMY_EVIDENCE,
        &tenant.workspace_id,
        "id",
        &ids,
    )
    .await?;
    Ok(rows)
}

/// Number of records per domain, for the assurance read.
pub async fn count_by_domain(conn: &mut AnyConnection, tenant: &Tenant) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT domain, COUNT(*) FROM autonomy_evidence WHERE workspace_id = $1 AND environment = $2 GROUP BY domain ORDER BY domain",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .fetch_all(&mut *conn)
    .await?)
}
