//! The workflow A2A gateway's records: each application's workflow-tool allowlist (the workflow versions its
//! agents may dispatch, decided by admins at the console, one sealed version per decision) and the gateway's
//! tasks (one per message, naming the run it started). Both are append-only and sealed.

use fiscus_domain::integrity::SealKey;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Result, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::agent_tables::GRANTS_SEALED;
pub use fiscus_store::agent_tables::TASKS_SEALED;

/// One decision about an application's allowlist. The latest version is in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolGrant {
    pub id: String,
    pub application_id: String,
    /// Counts up from 1 per application and environment.
    pub version: i64,
    /// Workflow version ids (`wfv_…`), sorted and unique; empty withdraws every workflow.
    pub versions: Vec<String>,
    /// `sha256:` of the decision (RFC 8785), as recorded in the audit trail.
    pub decision_hash: String,
    /// The operator (`opr_…`) who decided. A bare id, not an actor label: only an admin at the console
    /// decides a grant, so the kind is fixed by the record.
    pub decided_by: String,
    pub created_at: i64,
}

impl ToolGrant {
    pub fn allows(&self, version_id: &str) -> bool {
        self.versions.binary_search_by(|v| v.as_str().cmp(version_id)).is_ok()
    }
}

fiscus_store::row! {
    struct GrantRow {
        id: String,
        application_id: String,
        version: i64,
        versions: String,
        decision_hash: String,
        decided_by: String,
        created_at: i64,
    }
}

impl From<GrantRow> for ToolGrant {
    fn from(r: GrantRow) -> ToolGrant {
        ToolGrant {
            id: r.id,
            application_id: r.application_id,
            version: r.version,
            versions: r.versions.split_whitespace().map(str::to_string).collect(),
            decision_hash: r.decision_hash,
            decided_by: r.decided_by,
            created_at: r.created_at,
        }
    }
}

const GRANT_COLUMNS: &str = "id, application_id, version, versions, decision_hash, decided_by, created_at";

/// Records a decision; a concurrent decision of the same version is [`fiscus_store::StoreError::Conflict`].
pub async fn insert_grant(tx: &mut WriteTx, tenant: &Tenant, g: &ToolGrant) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO workflow_tool_grants (workspace_id, environment, {GRANT_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&g.id)
    .bind(&g.application_id)
    .bind(g.version)
    .bind(g.versions.join(" "))
    .bind(&g.decision_hash)
    .bind(&g.decided_by)
    .bind(g.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &GRANTS_SEALED, &tenant.workspace_id, &g.id).await
}

/// Every decision about an application's allowlist, newest first, each seal checked.
pub async fn grants(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
) -> Result<Vec<ToolGrant>> {
    fiscus_store::seals::check(conn, key, &GRANTS_SEALED, &tenant.workspace_id, "application_id", application_id)
        .await?;
    let rows = sqlx::query_as::<_, GrantRow>(&format!(
        "SELECT {GRANT_COLUMNS} FROM workflow_tool_grants WHERE workspace_id = $1 AND environment = $2 \
         AND application_id = $3 ORDER BY version DESC LIMIT 200"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(application_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(ToolGrant::from).collect())
}

/// The allowlist in force for an application (its latest decision), its seal checked.
pub async fn in_force(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
) -> Result<Option<ToolGrant>> {
    let row = sqlx::query_as::<_, GrantRow>(&format!(
        "SELECT {GRANT_COLUMNS} FROM workflow_tool_grants WHERE workspace_id = $1 AND environment = $2 \
         AND application_id = $3 ORDER BY version DESC LIMIT 1"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(application_id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(r) => {
            fiscus_store::seals::check(conn, key, &GRANTS_SEALED, &tenant.workspace_id, "id", &r.id).await?;
            Ok(Some(r.into()))
        }
        None => Ok(None),
    }
}

/// A message the gateway accepted and the run it started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayTask {
    /// The run (`wfr_…`), which is also the task's id.
    pub run_id: String,
    pub application_id: String,
    pub credential_id: String,
    pub context_id: String,
    pub message_id: String,
    /// `sha256:` of the RFC 8785 form of the message, to tell a retry from a different message.
    pub message_hash: String,
    pub created_at: i64,
}

fiscus_store::row! {
    struct TaskRow {
        /// The task's id, which is its run's (`wfr_…`).
        id: String,
        application_id: String,
        credential_id: String,
        context_id: String,
        message_id: String,
        message_hash: String,
        created_at: i64,
    }
}

impl From<TaskRow> for GatewayTask {
    fn from(r: TaskRow) -> GatewayTask {
        GatewayTask {
            run_id: r.id,
            application_id: r.application_id,
            credential_id: r.credential_id,
            context_id: r.context_id,
            message_id: r.message_id,
            message_hash: r.message_hash,
            created_at: r.created_at,
        }
    }
}

const TASK_COLUMNS: &str = "id, application_id, credential_id, context_id, message_id, message_hash, created_at";

/// Records a task in the transaction that starts its run; a second message of the same id from the same
/// application is [`fiscus_store::StoreError::Conflict`].
pub async fn insert_task(tx: &mut WriteTx, tenant: &Tenant, t: &GatewayTask) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO workflow_gateway_tasks (workspace_id, environment, {TASK_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&t.run_id)
    .bind(&t.application_id)
    .bind(&t.credential_id)
    .bind(&t.context_id)
    .bind(&t.message_id)
    .bind(&t.message_hash)
    .bind(t.created_at)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::seal(tx, &TASKS_SEALED, &tenant.workspace_id, &t.run_id).await
}

/// Which of an application's tasks to find: by the message that started it or by its run.
pub enum TaskKey<'a> {
    Message(&'a str),
    Run(&'a str),
}

/// An application's task, its seal checked.
pub async fn task(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
    by: TaskKey<'_>,
) -> Result<Option<GatewayTask>> {
    let (column, value) = match by {
        TaskKey::Message(m) => ("message_id", m),
        TaskKey::Run(r) => ("id", r),
    };
    let row = sqlx::query_as::<_, TaskRow>(&format!(
        "SELECT {TASK_COLUMNS} FROM workflow_gateway_tasks WHERE workspace_id = $1 AND environment = $2 \
         AND application_id = $3 AND {column} = $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(application_id)
    .bind(value)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(r) => {
            fiscus_store::seals::check(conn, key, &TASKS_SEALED, &tenant.workspace_id, "id", &r.id).await?;
            Ok(Some(r.into()))
        }
        None => Ok(None),
    }
}
