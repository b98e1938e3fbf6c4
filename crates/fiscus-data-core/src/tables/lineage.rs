//! Lineage exports: sealed OpenLineage documents.

use super::{Result, StoreError, WriteTx};
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::Stored;
use fiscus_store::data_tables::LINEAGE_EXPORTS_SEALED;
use fiscus_store::seals;
use sqlx::{AnyConnection, FromRow};

#[derive(Clone, Debug, PartialEq)]
pub struct LineageExport {
    pub id: String,
    /// `application:app_…` or `cli:local`.
    pub created_by: Actor,
    pub event_count: i64,
    /// The OpenLineage events as a JSON array.
    pub document: String,
    /// `sha256:` of the RFC 8785 form of the document.
    pub document_hash: String,
    pub created_at: i64,
}

impl<'r> FromRow<'r, sqlx::any::AnyRow> for LineageExport {
    fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        Ok(LineageExport {
            id: row.try_get("id")?,
            created_by: fiscus_store::actor_column(row, "created_by")?,
            event_count: row.try_get("event_count")?,
            document: row.try_get("document")?,
            document_hash: row.try_get("document_hash")?,
            created_at: row.try_get("created_at")?,
        })
    }
}

pub async fn insert(tx: &mut WriteTx, workspace_id: &str, e: &LineageExport) -> Result<()> {
    let sealed_values = vec![
        Stored::Text(e.id.clone()),
        Stored::Text(workspace_id.to_string()),
        Stored::Text(e.created_by.label()),
        Stored::Integer(e.event_count),
        Stored::Text(e.document.clone()),
        Stored::Text(e.document_hash.clone()),
        Stored::Integer(e.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &LINEAGE_EXPORTS_SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO lineage_exports (id, workspace_id, created_by, event_count, document, document_hash, created_at, \
         seal_mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&e.id)
    .bind(workspace_id)
    .bind(e.created_by.label())
    .bind(e.event_count)
    .bind(&e.document)
    .bind(&e.document_hash)
    .bind(e.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &LINEAGE_EXPORTS_SEALED, &sealed_values).await?;
    Ok(())
}

/// An export of this workspace, its seal checked (an edited document is refused, never served as evidence).
pub async fn get(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    workspace_id: &str,
    id: &str,
) -> Result<LineageExport> {
    let row = sqlx::query_as::<_, LineageExport>(
        "SELECT id, created_by, event_count, document, document_hash, created_at FROM lineage_exports \
         WHERE workspace_id = $1 AND id = $2",
    )
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?;
    seals::check(conn, key, &LINEAGE_EXPORTS_SEALED, workspace_id, "id", id).await?;
    Ok(row)
}
