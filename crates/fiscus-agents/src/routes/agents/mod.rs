//! Agents, MCP and A2A: the tool catalogue generated from the operation catalogue (`tools`), calling a tool
//! as its own route in process (`dispatch`) once it is offered to the caller (`invoke`), the MCP endpoints
//! (`mcp`) and the A2A endpoints (`a2a`, and `workflow_a2a` for allowlisted workflows) over JSON-RPC
//! (`jsonrpc`), and the catalogue and invocation reads.

pub mod a2a;
pub mod invoke;
pub mod jsonrpc;
pub mod mcp;
pub mod spaces;
pub mod workflow_a2a;

use axum::Json;
use axum::extract::State;
use fiscus_domain::clock::rfc3339;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::tools;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiQuery;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(mcp::post_root_mcp))
        .routes(routes!(mcp::post_agent_execution_mcp))
        .routes(routes!(a2a::post_agent_execution_a2a))
        .routes(routes!(workflow_a2a::post_agent_execution_workflows_a2a))
        .routes(routes!(spaces::get_spaces))
        .routes(routes!(spaces::get_space))
        .routes(routes!(spaces::post_run))
        .routes(routes!(spaces::get_run))
        .routes(routes!(spaces::get_execution))
        .routes(routes!(get_tools))
        .routes(routes!(get_invocations))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ToolView {
    /// The tool's name: its operation id.
    #[schema(example = "get_actions_uid")]
    pub name: String,
    pub title: String,
    pub description: String,
    #[schema(example = "GET")]
    pub method: String,
    #[schema(example = "/api/v2/actions/{uid}")]
    pub path: String,
    pub scope: String,
    pub read_only: bool,
    /// Whether this caller may call it now (its scopes and, for a signed client, its grant).
    pub granted: bool,
    /// Its arguments (path, query, `body`, `idempotency_key`); MCP's `tools/list` gives their JSON Schemas.
    pub arguments: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ToolCatalogue {
    /// Always `list`.
    pub object: String,
    pub data: Vec<ToolView>,
}

/// The tool catalogue (every operation an agent may use, as MCP and A2A offer it) with its grant state for
/// this caller.
///
/// One tool per served, scoped operation, except the MCP, A2A and workflow gateway entry points and the OAuth
/// endpoints: method, path, scope, `read_only`, argument names, and `granted` (whether this caller's scopes and,
/// for a signed client, its grant let it call the tool now). Needs `agents:mcp:read`. Tools not granted are listed
/// too; listing calls nothing and grants nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agents/tools",
    responses((status = 200, description = "Tool catalogue with grant state", body = ToolCatalogue))
)]
pub async fn get_tools(ctx: Ctx) -> Json<ToolCatalogue> {
    let data = tools::catalogue(&ctx.api)
        .iter()
        .map(|t| ToolView {
            name: t.name().to_string(),
            title: t.title.clone(),
            description: t.description.clone(),
            method: t.operation.method.as_str().to_string(),
            path: t.operation.full_path(),
            scope: t.operation.scope.unwrap_or_default().to_string(),
            read_only: t.read_only(),
            granted: invoke::offers(&ctx, t),
            arguments: t.arguments.keys().cloned().collect(),
        })
        .collect();
    Json(ToolCatalogue { object: "list".into(), data })
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct InvocationsQuery {
    /// How many of the newest invocations (1 to 100, default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct InvocationView {
    /// Always `tool_invocation`.
    pub object: String,
    pub id: String,
    pub protocol: InvocationProtocol,
    pub tool: String,
    /// `sha256:` of the RFC 8785 form of the arguments.
    pub request_hash: String,
    /// `sha256:` of the answer's body.
    pub response_hash: String,
    /// The operation's HTTP status (422 for a tool not offered).
    pub status: i64,
    pub outcome: InvocationOutcome,
    pub request_id: String,
    pub created_at: String,
}

/// The agent protocol of a tool call.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InvocationProtocol {
    Mcp,
    A2a,
}

impl From<invoke::Protocol> for InvocationProtocol {
    fn from(p: invoke::Protocol) -> Self {
        match p {
            invoke::Protocol::Mcp => InvocationProtocol::Mcp,
            invoke::Protocol::A2a => InvocationProtocol::A2a,
        }
    }
}

/// How a tool call ended: the operation answered with success, with a problem, or the tool was not offered.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InvocationOutcome {
    Succeeded,
    Failed,
    Refused,
}

impl From<invoke::Outcome> for InvocationOutcome {
    fn from(o: invoke::Outcome) -> Self {
        match o {
            invoke::Outcome::Succeeded => InvocationOutcome::Succeeded,
            invoke::Outcome::Failed => InvocationOutcome::Failed,
            invoke::Outcome::Refused => InvocationOutcome::Refused,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct InvocationList {
    /// Always `list`.
    pub object: String,
    /// Newest first.
    pub data: Vec<InvocationView>,
}

/// Hash-only audit rows of this credential's tool calls: tool, hashes, outcome and time, no payloads.
///
/// The newest tool calls this credential made through MCP or A2A (`limit`, 1 to 100, default 20): tool, protocol,
/// SHA-256 of the arguments and of the answer, HTTP status and outcome (`refused` when the tool was not offered).
/// Rows of read calls still buffered are written first, so the list is current. Needs `agents:mcp:read`. Only the
/// calling credential's rows are shown, and never the arguments or answers themselves.
#[utoipa::path(
    get,
    path = "/api/v2/agents/invocations",
    params(InvocationsQuery),
    responses((status = 200, description = "Hash-only audit rows for this credential", body = InvocationList))
)]
pub async fn get_invocations(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<InvocationsQuery>,
) -> Result<Json<InvocationList>, ApiError> {
    let limit = fiscus_http::query::limit(q.limit, fiscus_domain::pagination::ITEMS)?;
    // Buffered read-call rows are written first, so the caller sees its own calls.
    state.invocations.flush(&state.store).await?;
    let mut conn = state.store.read().await?;
    let rows = fiscus_kernel::tables::tool_invocations::recent(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        &ctx.principal.credential_id,
        limit,
    )
    .await?;
    Ok(Json(InvocationList {
        object: "list".into(),
        data: rows
            .into_iter()
            .map(|r| InvocationView {
                object: "tool_invocation".into(),
                created_at: rfc3339(r.created_at),
                id: r.id,
                protocol: r.protocol.into(),
                tool: r.tool,
                request_hash: r.request_hash,
                response_hash: r.response_hash,
                status: r.status,
                outcome: r.outcome.into(),
                request_id: r.request_id,
            })
            .collect(),
    }))
}
