//! The settings every node on one database must share (see the migration `…_cluster_settings.sql`): the
//! first node to start records each, every later start compares its own. A node that disagrees would seal
//! rows no other node can check, or leave records out of the transparency log, or take over live claims
//! early, so it refuses to start ([`agree`] answers the differences; the caller refuses).

use crate::{Result, Store};

/// A setting as the cluster recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub value: String,
    /// The node (host and process) that recorded it.
    pub recorded_by: String,
    pub recorded_at: i64,
}

/// Records each of `ours` that the cluster has no value for yet, then answers each whose recorded value is
/// not ours, with what was recorded.
pub async fn agree(
    store: &Store,
    node: &str,
    ours: &[(&'static str, String)],
) -> Result<Vec<(&'static str, Recorded)>> {
    record(store, node, ours, "DO NOTHING").await?;
    let mut conn = store.read().await?;
    let rows: Vec<(String, String, String, i64)> =
        sqlx::query_as("SELECT name, value, recorded_by, recorded_at FROM cluster_settings")
            .fetch_all(&mut *conn)
            .await?;
    Ok(ours
        .iter()
        .filter_map(|(name, value)| {
            let (_, recorded, by, at) = rows.iter().find(|(n, ..)| n == name)?;
            (recorded != value)
                .then(|| (*name, Recorded { value: recorded.clone(), recorded_by: by.clone(), recorded_at: *at }))
        })
        .collect())
}

/// Records `ours` as the cluster's settings (after a deliberate change, with every node stopped).
pub async fn accept(store: &Store, node: &str, ours: &[(&'static str, String)]) -> Result<()> {
    record(
        store,
        node,
        ours,
        "DO UPDATE SET value = excluded.value, recorded_by = excluded.recorded_by, recorded_at = excluded.recorded_at",
    )
    .await
}

/// Writes `ours` in one transaction, `on_conflict` saying what becomes of a setting already recorded.
async fn record(store: &Store, node: &str, ours: &[(&'static str, String)], on_conflict: &str) -> Result<()> {
    let sql = format!(
        "INSERT INTO cluster_settings (name, value, recorded_by, recorded_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) {on_conflict}"
    );
    let mut tx = store.begin().await?;
    for (name, value) in ours {
        sqlx::query(&sql)
            .bind(*name)
            .bind(value)
            .bind(node)
            .bind(fiscus_domain::clock::now_micros())
            .execute(tx.conn())
            .await?;
    }
    tx.commit().await
}
