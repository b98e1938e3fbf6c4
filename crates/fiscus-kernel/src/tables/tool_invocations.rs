//! Hash-only audit rows of tool calls through the agent protocols, sealed like request evidence.

use fiscus_domain::integrity::Stored;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::corrupt;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

/// The agent protocol a tool was called through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Mcp,
    A2a,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Mcp => "mcp",
            Protocol::A2a => "a2a",
        }
    }

    pub fn parse(s: &str) -> Option<Protocol> {
        [Protocol::Mcp, Protocol::A2a].into_iter().find(|p| p.as_str() == s)
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The operation answered with success.
    Succeeded,
    /// The operation answered with a problem document.
    Failed,
    /// The tool is not offered to the caller; nothing was called.
    Refused,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Refused => "refused",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Succeeded, Outcome::Failed, Outcome::Refused].into_iter().find(|o| o.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub id: String,
    pub application_id: String,
    pub credential_id: String,
    pub protocol: Protocol,
    pub tool: String,
    /// `sha256:` of the RFC 8785 form of the arguments.
    pub request_hash: String,
    /// `sha256:` of the answer's body.
    pub response_hash: String,
    pub status: i64,
    pub outcome: Outcome,
    pub request_id: String,
    pub created_at: i64,
}

fiscus_store::row! {
    struct InvocationRow {
        id: String,
        application_id: String,
        credential_id: String,
        protocol: String,
        tool: String,
        request_hash: String,
        response_hash: String,
        status: i64,
        outcome: String,
        request_id: String,
        created_at: i64,
    }
}

impl TryFrom<InvocationRow> for Invocation {
    type Error = StoreError;

    fn try_from(r: InvocationRow) -> Result<Invocation> {
        let bad = |column: &str, value: &str| corrupt("tool_invocations", &r.id, column, value);
        Ok(Invocation {
            protocol: Protocol::parse(&r.protocol).ok_or_else(|| bad("protocol", &r.protocol))?,
            outcome: Outcome::parse(&r.outcome).ok_or_else(|| bad("outcome", &r.outcome))?,
            id: r.id,
            application_id: r.application_id,
            credential_id: r.credential_id,
            tool: r.tool,
            request_hash: r.request_hash,
            response_hash: r.response_hash,
            status: r.status,
            request_id: r.request_id,
            created_at: r.created_at,
        })
    }
}

const COLUMNS: &str = "id, application_id, credential_id, protocol, tool, request_hash, response_hash, status, outcome, \
                       request_id, created_at";

pub async fn insert(tx: &mut WriteTx, tenant: &Tenant, r: &Invocation) -> Result<()> {
    let text = |v: &str| Stored::Text(v.to_string());
    let sealed_values = vec![
        text(&r.id),
        text(&tenant.workspace_id),
        text(tenant.environment.as_str()),
        text(&r.application_id),
        text(&r.credential_id),
        text(r.protocol.as_str()),
        text(&r.tool),
        text(&r.request_hash),
        text(&r.response_hash),
        Stored::Integer(r.status),
        text(r.outcome.as_str()),
        text(&r.request_id),
        Stored::Integer(r.created_at),
    ];
    let seal_mac =
        fiscus_store::seals::seal_of(tx.seal_key(), &fiscus_store::seals::TOOL_INVOCATIONS, sealed_values.clone())?;
    sqlx::query(&format!(
        "INSERT INTO tool_invocations (workspace_id, environment, {COLUMNS}, seal_mac) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(&r.id)
    .bind(&r.application_id)
    .bind(&r.credential_id)
    .bind(r.protocol.as_str())
    .bind(&r.tool)
    .bind(&r.request_hash)
    .bind(&r.response_hash)
    .bind(r.status)
    .bind(r.outcome.as_str())
    .bind(&r.request_id)
    .bind(r.created_at)
    .bind(seal_mac)
    .execute(tx.conn())
    .await?;
    fiscus_store::seals::log(tx, &fiscus_store::seals::TOOL_INVOCATIONS, &sealed_values).await?;
    Ok(())
}

/// The newest `limit` invocations of one credential, newest first.
pub async fn recent(
    conn: &mut AnyConnection,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    credential_id: &str,
    limit: u32,
) -> Result<Vec<Invocation>> {
    let rows = sqlx::query_as::<_, InvocationRow>(&format!(
        "SELECT {COLUMNS} FROM tool_invocations WHERE workspace_id = $1 AND environment = $2 AND credential_id = $3 \
         ORDER BY id DESC LIMIT $4"
    ))
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(credential_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(Invocation::try_from)
    .collect::<Result<Vec<_>>>()?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    fiscus_store::seals::check_keys(
        conn,
        key,
        &fiscus_store::seals::TOOL_INVOCATIONS,
        &tenant.workspace_id,
        "id",
        &ids,
    )
    .await?;
    Ok(rows)
}
