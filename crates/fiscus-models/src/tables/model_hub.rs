//! The model hub's artifacts (see the migration `…_model_hub.sql`): content-addressed in the database, so
//! every node reads and verifies what any node published. A row's key is its workspace and the SHA-256 of
//! its bytes: it is written once and never changed, and checking one is recomputing its name (the caller's).

use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;

/// Stores an artifact under its `sha256:` in the writing transaction; one stored already is left as it is.
pub async fn put(tx: &mut WriteTx, workspace_id: &str, sha256: &str, bytes: &[u8]) -> Result<()> {
    sqlx::query(
        "INSERT INTO model_artifacts (workspace_id, sha256, content) VALUES ($1, $2, $3) \
         ON CONFLICT (workspace_id, sha256) DO NOTHING",
    )
    .bind(workspace_id)
    .bind(sha256)
    .bind(bytes.to_vec())
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// An artifact's bytes as stored, if the workspace has it.
pub async fn get(conn: &mut AnyConnection, workspace_id: &str, sha256: &str) -> Result<Option<Vec<u8>>> {
    let row: Option<(Vec<u8>,)> =
        sqlx::query_as("SELECT content FROM model_artifacts WHERE workspace_id = $1 AND sha256 = $2")
            .bind(workspace_id)
            .bind(sha256)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(b,)| b))
}
