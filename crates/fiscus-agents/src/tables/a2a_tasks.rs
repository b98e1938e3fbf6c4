//! A2A tasks: the record of each message an agent sent to the A2A endpoint and of the answer it was given.
//! Written once, in a terminal state, and sealed; read back only by the application that sent the message.

use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

/// Where a task ended. Tool calls complete before the answer is sent, so only terminal states are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// The operation answered with success (2xx).
    Completed,
    /// The operation answered with a problem document (4xx or 5xx).
    Failed,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<TaskState> {
        [TaskState::Completed, TaskState::Failed].into_iter().find(|x| x.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub id: String,
    pub application_id: String,
    pub credential_id: String,
    pub context_id: String,
    pub message_id: String,
    /// The skill (tool) the message named.
    pub skill: String,
    pub state: TaskState,
    /// The operation's HTTP status.
    pub http_status: i64,
    /// `sha256:` of the RFC 8785 form of the arguments.
    pub request_hash: String,
    /// `sha256:` of the operation's answer.
    pub response_hash: String,
    /// The message as received (JSON).
    pub message: String,
    /// The operation's answer (JSON).
    pub result: String,
    pub created_at: i64,
}

fiscus_store::row! {
    struct TaskRow {
        id: String,
        application_id: String,
        credential_id: String,
        context_id: String,
        message_id: String,
        skill: String,
        state: String,
        http_status: i64,
        request_hash: String,
        response_hash: String,
        message: String,
        result: String,
        created_at: i64,
    }
}

impl TryFrom<TaskRow> for Task {
    type Error = StoreError;

    fn try_from(r: TaskRow) -> Result<Task> {
        Ok(Task {
            state: TaskState::parse(&r.state).ok_or_else(|| corrupt("a2a_tasks", &r.id, "state", &r.state))?,
            id: r.id,
            application_id: r.application_id,
            credential_id: r.credential_id,
            context_id: r.context_id,
            message_id: r.message_id,
            skill: r.skill,
            http_status: r.http_status,
            request_hash: r.request_hash,
            response_hash: r.response_hash,
            message: r.message,
            result: r.result,
            created_at: r.created_at,
        })
    }
}

const COLUMNS: &str = "id, application_id, credential_id, context_id, message_id, skill, state, http_status, \
                       request_hash, response_hash, message, result, created_at";

/// Inserts a task; [`StoreError::Conflict`] when the application already sent a message with this id.
pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, t: &Task) -> Result<()> {
    let text = |v: &str| Stored::Text(v.to_string());
    let sealed_values = vec![
        text(&t.id),
        text(&tenant.workspace_id),
        text(tenant.environment.as_str()),
        text(&t.application_id),
        text(&t.credential_id),
        text(&t.context_id),
        text(&t.message_id),
        text(&t.skill),
        text(t.state.as_str()),
        Stored::Integer(t.http_status),
        text(&t.request_hash),
        text(&t.response_hash),
        text(&t.message),
        text(&t.result),
        Stored::Integer(t.created_at),
    ];
    let seal_mac = fiscus_store::seals::seal_of(tx.seal_key(), &fiscus_store::seals::A2A_TASKS, sealed_values.clone())?;
    sqlx::query(&format!(
        "INSERT INTO a2a_tasks (workspace_id, environment, {COLUMNS}, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&t.id)
    .bind(&t.application_id)
    .bind(&t.credential_id)
    .bind(&t.context_id)
    .bind(&t.message_id)
    .bind(&t.skill)
    .bind(t.state.as_str())
    .bind(t.http_status)
    .bind(&t.request_hash)
    .bind(&t.response_hash)
    .bind(&t.message)
    .bind(&t.result)
    .bind(t.created_at)
    .bind(seal_mac)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::log(tx, &fiscus_store::seals::A2A_TASKS, &sealed_values).await?;
    Ok(())
}

/// Whose tasks: an application's, or only those one of its credentials sent (a signed client sees only its
/// own, since another credential of the application may hold a wider grant).
#[derive(Clone, Copy, Debug)]
pub struct Owner<'a> {
    pub application_id: &'a str,
    pub credential_id: Option<&'a str>,
}

/// One task of its owner; another owner's or workspace's task is [`StoreError::NotFound`].
pub async fn get(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, owner: Owner<'_>, id: &str) -> Result<Task> {
    let task: Task = sqlx::query_as::<_, TaskRow>(&format!(
        "SELECT {COLUMNS} FROM a2a_tasks WHERE workspace_id = $1 AND environment = $2 AND application_id = $3 \
         AND ($4 IS NULL OR credential_id = $4) AND id = $5"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(owner.application_id)
    .bind(owner.credential_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()?;
    fiscus_store::seals::check_keys(
        conn,
        key,
        &fiscus_store::seals::A2A_TASKS,
        &tenant.workspace_id,
        "id",
        &[&task.id],
    )
    .await?;
    Ok(task)
}

/// The task an application's message became, if it was already received (message ids are the
/// application's: one task per application and message id, whichever credential sent it).
pub async fn by_message(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    application_id: &str,
    message_id: &str,
) -> Result<Option<Task>> {
    let task = sqlx::query_as::<_, TaskRow>(&format!(
        "SELECT {COLUMNS} FROM a2a_tasks WHERE workspace_id = $1 AND environment = $2 AND application_id = $3 \
         AND message_id = $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(application_id)
    .bind(message_id)
    .fetch_optional(&mut *conn)
    .await?
    .map(Task::try_from)
    .transpose()?;
    if let Some(task) = &task {
        fiscus_store::seals::check_keys(
            conn,
            key,
            &fiscus_store::seals::A2A_TASKS,
            &tenant.workspace_id,
            "id",
            &[&task.id],
        )
        .await?;
    }
    Ok(task)
}

/// Which of an application's tasks to list.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub context_id: Option<String>,
    pub state: Option<TaskState>,
    /// Only tasks created at or after this time (microseconds).
    pub since: Option<i64>,
}

/// A page of an application's tasks, newest first, strictly older than `before` (a task id) when given, and
/// how many tasks match the filter in all.
pub async fn list(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    owner: Owner<'_>,
    filter: &Filter,
    before: Option<&str>,
    limit: u32,
) -> Result<(Vec<Task>, i64)> {
    // Placeholders are numbered as the optional conditions are added, the same for both statements.
    let mut conditions = String::from("workspace_id = $1 AND environment = $2 AND application_id = $3");
    let mut n = 3;
    let mut binds: Vec<String> = Vec::new();
    if let Some(c) = owner.credential_id {
        n += 1;
        conditions.push_str(&format!(" AND credential_id = ${n}"));
        binds.push(c.to_string());
    }
    let mut since = None;
    if let Some(c) = &filter.context_id {
        n += 1;
        conditions.push_str(&format!(" AND context_id = ${n}"));
        binds.push(c.clone());
    }
    if let Some(s) = filter.state {
        n += 1;
        conditions.push_str(&format!(" AND state = ${n}"));
        binds.push(s.as_str().to_string());
    }
    if let Some(t) = filter.since {
        n += 1;
        conditions.push_str(&format!(" AND created_at >= ${n}"));
        since = Some(t);
    }
    let count_sql = format!("SELECT COUNT(*) FROM a2a_tasks WHERE {conditions}");
    let mut page_conditions = conditions.clone();
    let mut m = n;
    if before.is_some() {
        m += 1;
        page_conditions.push_str(&format!(" AND id < ${m}"));
    }
    let page_sql = format!("SELECT {COLUMNS} FROM a2a_tasks WHERE {page_conditions} ORDER BY id DESC LIMIT ${}", m + 1);

    let mut count = sqlx::query_scalar::<_, i64>(&count_sql)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(owner.application_id);
    let mut page = sqlx::query_as::<_, TaskRow>(&page_sql)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .bind(owner.application_id);
    for b in &binds {
        count = count.bind(b.clone());
        page = page.bind(b.clone());
    }
    if let Some(t) = since {
        count = count.bind(t);
        page = page.bind(t);
    }
    if let Some(b) = before {
        page = page.bind(b.to_string());
    }
    let total = count.fetch_one(&mut *conn).await?;
    let rows = page.bind(i64::from(limit)).fetch_all(&mut *conn).await?;
    let tasks: Vec<Task> = rows.into_iter().map(Task::try_from).collect::<Result<_>>()?;
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    fiscus_store::seals::check_keys(conn, key, &fiscus_store::seals::A2A_TASKS, &tenant.workspace_id, "id", &ids)
        .await?;
    Ok((tasks, total))
}
