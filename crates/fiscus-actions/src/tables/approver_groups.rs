//! Approver groups ("treasury", "cfo") and their members: the people plane's rows, kept per workspace (an
//! operator is a workspace's, in both environments). Admins change them at the console; what counted is
//! sealed with each decision (`approval_policies::DecisionContext`), so these rows may change freely after.

use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

/// A group and its members' operator ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub members: Vec<String>,
    pub created_by: String,
    pub created_at: i64,
}

/// Creates a group; `Conflict` when the workspace has one of that name.
pub async fn create(
    tx: &mut WriteTx,
    workspace_id: &str,
    name: &str,
    description: Option<&str>,
    by: &str,
    at: i64,
) -> Result<String> {
    let id = fiscus_domain::ids::new_id("apg");
    let done = sqlx::query(
        "INSERT INTO approver_groups (id, workspace_id, name, description, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, name) DO NOTHING",
    )
    .bind(&id)
    .bind(workspace_id)
    .bind(name)
    .bind(description)
    .bind(by)
    .bind(at)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict("approver_groups_name".into()));
    }
    Ok(id)
}

/// The workspace's groups with their members, by name.
pub async fn all(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<Group>> {
    let rows: Vec<(String, String, Option<String>, String, i64)> = sqlx::query_as(
        "SELECT id, name, description, created_by, created_at FROM approver_groups WHERE workspace_id = $1 ORDER BY name",
    )
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    let members: Vec<(String, String)> = sqlx::query_as(
        "SELECT group_id, operator_id FROM approver_group_members WHERE workspace_id = $1 ORDER BY operator_id",
    )
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name, description, created_by, created_at)| Group {
            members: members.iter().filter(|(g, _)| *g == id).map(|(_, o)| o.clone()).collect(),
            id,
            name,
            description,
            created_by,
            created_at,
        })
        .collect())
}

/// The names of the groups an operator is in now, by name.
pub async fn groups_of(conn: &mut AnyConnection, workspace_id: &str, operator_id: &str) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT g.name FROM approver_group_members m JOIN approver_groups g ON g.id = m.group_id \
         WHERE m.workspace_id = $1 AND m.operator_id = $2 ORDER BY g.name",
    )
    .bind(workspace_id)
    .bind(operator_id)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|(n,)| n).collect())
}

/// Adds an operator of the workspace to one of its groups; `false` when they were in it already, `NotFound`
/// when the group or the operator is not the workspace's.
pub async fn add_member(
    tx: &mut WriteTx,
    workspace_id: &str,
    group_id: &str,
    operator_id: &str,
    by: &str,
    at: i64,
) -> Result<bool> {
    let ours: (i64,) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM approver_groups WHERE id = $1 AND workspace_id = $2) \
              + (SELECT COUNT(*) FROM operators WHERE id = $3 AND workspace_id = $2 AND status <> 'removed')",
    )
    .bind(group_id)
    .bind(workspace_id)
    .bind(operator_id)
    .fetch_one(tx.conn())
    .await?;
    if ours.0 != 2 {
        return Err(StoreError::NotFound);
    }
    let done = sqlx::query(
        "INSERT INTO approver_group_members (group_id, workspace_id, operator_id, added_by, added_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (group_id, operator_id) DO NOTHING",
    )
    .bind(group_id)
    .bind(workspace_id)
    .bind(operator_id)
    .bind(by)
    .bind(at)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes an operator from a group of the workspace; `false` when they were not in it.
pub async fn remove_member(tx: &mut WriteTx, workspace_id: &str, group_id: &str, operator_id: &str) -> Result<bool> {
    let done = sqlx::query(
        "DELETE FROM approver_group_members WHERE workspace_id = $1 AND group_id = $2 AND operator_id = $3",
    )
    .bind(workspace_id)
    .bind(group_id)
    .bind(operator_id)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}
