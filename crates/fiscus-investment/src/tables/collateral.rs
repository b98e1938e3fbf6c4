//! Collateral policies (see the migration `…_collateral.sql`): a workspace's eligibility and haircut rules,
//! versioned (1, 2, …), each version sealed and never changed. The newest version is the one in force.

use crate::rules::collateral::CollateralRule;
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_store::seals;
use fiscus_store::stored_actor;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::investment_tables::COLLATERAL_SEALED as SEALED;

/// A policy version as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub id: String,
    pub version: i64,
    pub rules: Vec<CollateralRule>,
    /// The rules as stored (canonical JSON), which `rules_hash` covers.
    pub rules_json: String,
    pub rules_hash: String,
    pub created_by: Actor,
    pub created_at: i64,
}

fiscus_store::row! {
    struct PolicyRow {
        id: String,
        version: i64,
        rules: String,
        rules_hash: String,
        created_by: String,
        created_at: i64,
    }
}

impl TryFrom<PolicyRow> for Policy {
    type Error = StoreError;
    fn try_from(r: PolicyRow) -> Result<Policy> {
        let created_by = stored_actor("collateral_policies", &r.id, "created_by", &r.created_by)?;
        Ok(Policy {
            rules: serde_json::from_str(&r.rules)
                .map_err(|e| StoreError::Corrupt(format!("collateral_policies {}: rules: {e}", r.id)))?,
            rules_json: r.rules,
            id: r.id,
            version: r.version,
            rules_hash: r.rules_hash,
            created_by,
            created_at: r.created_at,
        })
    }
}

/// Adds the next version of a workspace's policy (its number set here), sealed. Two writers racing for the
/// same number: the second is a [`StoreError::Conflict`] (the primary key), nothing half-written.
pub async fn insert(tx: &mut WriteTx, workspace_id: &str, p: &mut Policy) -> Result<()> {
    let last: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM collateral_policies WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_one(tx.conn())
        .await?;
    p.version = last.unwrap_or(0) + 1;
    let text = |s: &str| Stored::Text(s.to_string());
    let sealed_values = vec![
        text(&p.id),
        text(workspace_id),
        Stored::Integer(p.version),
        text(&p.rules_json),
        text(&p.rules_hash),
        text(&p.created_by.label()),
        Stored::Integer(p.created_at),
    ];
    let mac = seals::seal_of(tx.seal_key(), &SEALED, sealed_values.clone())?;
    sqlx::query(
        "INSERT INTO collateral_policies (id, workspace_id, version, rules, rules_hash, created_by, created_at, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&p.id)
    .bind(workspace_id)
    .bind(p.version)
    .bind(&p.rules_json)
    .bind(&p.rules_hash)
    .bind(p.created_by.label())
    .bind(p.created_at)
    .bind(mac)
    .execute(tx.conn())
    .await?;
    seals::log(tx, &SEALED, &sealed_values).await?;
    Ok(())
}

/// The version in force (the newest), its seal checked; `None` when the workspace has set none.
pub async fn current(conn: &mut AnyConnection, key: &SealKey, workspace_id: &str) -> Result<Option<Policy>> {
    let row: Option<PolicyRow> = sqlx::query_as(
        "SELECT id, version, rules, rules_hash, created_by, created_at FROM collateral_policies \
         WHERE workspace_id = $1 ORDER BY version DESC LIMIT 1",
    )
    .bind(workspace_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    seals::check(conn, key, &SEALED, workspace_id, "id", &row.id).await?;
    Ok(Some(row.try_into()?))
}
