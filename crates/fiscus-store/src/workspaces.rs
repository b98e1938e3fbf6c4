//! Workspaces: the tenancy root. The workspace row is the one table keyed by the workspace itself.

use crate::{Result, StoreError, WriteTx, flag};
use fiscus_domain::scopes::ScopeSet;
use sqlx::{AnyConnection, FromRow};

#[derive(Clone, Debug)]
pub struct WorkspaceRow {
    pub id: String,
    pub name: String,
    pub entitlement: String,
    pub production_access: i64,
    pub is_demo: i64,
    pub created_at: i64,
    /// `entitlement` parsed once when the row is read.
    entitlement_set: ScopeSet,
}

impl<'r> FromRow<'r, sqlx::any::AnyRow> for WorkspaceRow {
    // `entitlement_set` is not a column: it is parsed from `entitlement` once the row is read (`parsed`).
    fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        Ok(WorkspaceRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            entitlement: row.try_get("entitlement")?,
            production_access: row.try_get("production_access")?,
            is_demo: row.try_get("is_demo")?,
            created_at: row.try_get("created_at")?,
            entitlement_set: ScopeSet::default(),
        })
    }
}

impl WorkspaceRow {
    pub fn entitlement(&self) -> ScopeSet {
        self.entitlement_set
    }

    fn parsed(mut self) -> WorkspaceRow {
        self.entitlement_set = ScopeSet::from_stored(&self.entitlement);
        self
    }

    pub fn production_access(&self) -> bool {
        self.production_access == 1
    }
}

pub struct NewWorkspace<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub entitlement: &'a ScopeSet,
    pub is_demo: bool,
    pub created_at: i64,
}

/// Creates a workspace with production access off (only the human plane may turn it on) and an empty audit
/// chain head.
pub async fn insert(tx: &mut WriteTx, new: &NewWorkspace<'_>) -> Result<()> {
    let mac = tx.seal_key().audit_head(new.id, 0, fiscus_domain::audit::GENESIS_HASH);
    let conn = tx.conn();
    sqlx::query(
        "INSERT INTO workspaces (id, name, entitlement, production_access, is_demo, created_at) \
         VALUES ($1, $2, $3, 0, $4, $5)",
    )
    .bind(new.id)
    .bind(new.name)
    .bind(new.entitlement.to_space_separated())
    .bind(flag(new.is_demo))
    .bind(new.created_at)
    .execute(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO audit_heads (workspace_id, seq, hash, mac) VALUES ($1, 0, $2, $3)")
        .bind(new.id)
        .bind(fiscus_domain::audit::GENESIS_HASH)
        .bind(mac)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

const COLUMNS: &str = "id, name, entitlement, production_access, is_demo, created_at";

pub async fn get(conn: &mut AnyConnection, workspace_id: &str) -> Result<WorkspaceRow> {
    sqlx::query_as::<_, WorkspaceRow>(&format!("SELECT {COLUMNS} FROM workspaces WHERE id = $1"))
        .bind(workspace_id)
        .fetch_optional(&mut *conn)
        .await?
        .map(WorkspaceRow::parsed)
        .ok_or(StoreError::NotFound)
}

/// All workspaces, for the operator's CLI and for `fiscus verify audit` (the machine's own administration,
/// not a tenant's request).
pub async fn list_all(conn: &mut AnyConnection) -> Result<Vec<WorkspaceRow>> {
    Ok(sqlx::query_as::<_, WorkspaceRow>(&format!("SELECT {COLUMNS} FROM workspaces ORDER BY id"))
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(WorkspaceRow::parsed)
        .collect())
}

pub async fn count(conn: &mut AnyConnection) -> Result<i64> {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM workspaces").fetch_one(&mut *conn).await?;
    Ok(n)
}

/// Replaces the scopes a workspace may grant (its commercial entitlement). Applications keep their scope
/// lists; what falls outside the new entitlement simply stops being granted.
pub async fn set_entitlement(tx: &mut WriteTx, workspace_id: &str, entitlement: &ScopeSet) -> Result<()> {
    tx.standing_changed()?;
    let done = sqlx::query("UPDATE workspaces SET entitlement = $1 WHERE id = $2")
        .bind(entitlement.to_space_separated())
        .bind(workspace_id)
        .execute(tx.conn())
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// The open request to enable production access, if any: (id, requested_by).
pub async fn open_production_request(tx: &mut WriteTx, workspace_id: &str) -> Result<Option<(String, String)>> {
    let lock = crate::dialect::for_update(crate::dialect::backend_of(tx.conn()));
    Ok(sqlx::query_as(&format!(
        "SELECT id, requested_by FROM production_access_requests WHERE workspace_id = $1 AND state = 'open'{lock}"
    ))
    .bind(workspace_id)
    .fetch_optional(tx.conn())
    .await?)
}

pub async fn request_production(tx: &mut WriteTx, workspace_id: &str, operator_id: &str, now: i64) -> Result<String> {
    let id = fiscus_domain::ids::new_id("par");
    sqlx::query(
        "INSERT INTO production_access_requests (id, workspace_id, requested_by, state, created_at) VALUES ($1, $2, $3, 'open', $4)",
    )
    .bind(&id)
    .bind(workspace_id)
    .bind(operator_id)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(id)
}

/// Closes the open request (`confirmed` or `withdrawn`) and sets production access accordingly. `Conflict`
/// when `request_id` is not an open request of this workspace (closed meanwhile, or another workspace's), and
/// `NotFound` for an unknown workspace: production access never changes on a request that does not stand.
pub async fn settle_production(
    tx: &mut WriteTx,
    workspace_id: &str,
    request_id: Option<&str>,
    operator_id: &str,
    enabled: bool,
    now: i64,
) -> Result<()> {
    tx.standing_changed()?;
    // Turning access on confirms the open request; turning it off withdraws it.
    let state = if enabled { "confirmed" } else { "withdrawn" };
    if let Some(id) = request_id {
        let closed = sqlx::query(
            "UPDATE production_access_requests SET state = $1, confirmed_by = $2, decided_at = $3 WHERE workspace_id = $4 AND id = $5 AND state = 'open'",
        )
        .bind(state)
        .bind(operator_id)
        .bind(now)
        .bind(workspace_id)
        .bind(id)
        .execute(tx.conn())
        .await?;
        if closed.rows_affected() != 1 {
            return Err(StoreError::Conflict(format!("production access request {id} is not open")));
        }
    }
    let done = sqlx::query("UPDATE workspaces SET production_access = $1 WHERE id = $2")
        .bind(flag(enabled))
        .bind(workspace_id)
        .execute(tx.conn())
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
