//! MCP (Model Context Protocol, revision 2025-11-25) over Streamable HTTP, stateless, JSON responses.
//!
//! Two endpoints speak it: `POST /api/mcp` for bearer credentials (scope `agents:mcp:read`) and `POST
//! /api/v2/agent-execution/mcp` on the agent gateway (signed execution clients, or bearer credentials with
//! `agent:execution:invoke`). One JSON-RPC request per POST; notifications and responses are acknowledged
//! with 202 and no body; no session is kept (no `Mcp-Session-Id`); GET and DELETE are 405.
//!
//! The tools are the generated catalogue (`tools.rs`), offered only as the caller's scopes and, for a signed
//! client, its grant allow. A `tools/call` of a tool that is not offered to the caller is a JSON-RPC error
//! (`-32602`, `data.code` = `outside_grant` or `scope_missing`) in a 200 response, as MCP prefers for an
//! unknown tool, so SDKs report it as an error of that call rather than a broken transport; the REST route
//! of the same operation answers 422 `outside_grant`. A tool whose operation answers an error is a tool
//! result with `isError: true` and the problem document as its text.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::{seal, seal_bytes};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::dispatch::{self, Dispatched};
use super::tools::{self, Tool};
use crate::http::ctx::Ctx;
use crate::http::json::ApiJson;
use crate::http::problem::ApiError;
use crate::state::AppState;

pub const LATEST: &str = "2025-11-25";
/// Revisions a client may ask for; the answer repeats the client's when it is one of these.
pub const SUPPORTED: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// A JSON-RPC request id: a string or an integer.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum JsonRpcId {
    Number(i64),
    Text(String),
}

/// A JSON-RPC 2.0 request or notification (a notification has no `id`).
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[schema(example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))]
pub struct JsonRpcRequest {
    /// Always `2.0`.
    #[schema(pattern = "^2\\.0$")]
    pub jsonrpc: String,
    /// Absent for a notification.
    pub id: Option<JsonRpcId>,
    /// `initialize`, `ping`, `tools/list`, `tools/call`, or a notification such as `notifications/initialized`.
    #[schema(min_length = 1, max_length = 128)]
    pub method: String,
    #[schema(value_type = Option<Object>)]
    pub params: Option<Map<String, Value>>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct JsonRpcError {
    /// JSON-RPC error code: -32601 unknown method, -32602 invalid params or a tool not offered, -32600
    /// invalid request.
    pub code: i64,
    pub message: String,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A JSON-RPC 2.0 response: `result` or `error`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JsonRpcResponse {
    /// Always `2.0`.
    pub jsonrpc: String,
    pub id: JsonRpcId,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
}

fn ok(id: JsonRpcId, result: Value) -> JsonRpcResponse {
    JsonRpcResponse { jsonrpc: "2.0".into(), id, result: Some(result), error: None }
}

fn err(id: JsonRpcId, code: i64, message: impl Into<String>, data: Option<Value>) -> JsonRpcResponse {
    JsonRpcResponse {
        jsonrpc: "2.0".into(),
        id,
        result: None,
        error: Some(JsonRpcError { code, message: message.into(), data }),
    }
}

/// The tools this caller is offered.
pub fn offered<'a>(ctx: &'a Ctx) -> impl Iterator<Item = &'static Tool> + 'a {
    tools::catalogue().iter().filter(move |t| offers(ctx, t))
}

pub fn offers(ctx: &Ctx, tool: &Tool) -> bool {
    tool.operation.scope.is_some_and(|s| ctx.principal.scopes.contains(s))
        && ctx.signed.as_ref().is_none_or(|c| c.grant.allows(tool.name()))
}

pub async fn serve(
    state: &AppState,
    ctx: &Ctx,
    headers: &HeaderMap,
    message: JsonRpcRequest,
) -> Result<Response, ApiError> {
    if let Some(version) = headers.get("mcp-protocol-version") {
        let version = version.to_str().unwrap_or("");
        if !SUPPORTED.contains(&version) {
            return Err(ApiError::new(ErrorCode::MalformedRequest)
                .detail(format!("MCP-Protocol-Version {version:?} is not supported; use one of {SUPPORTED:?}")));
        }
    }
    let mut invalid = Vec::new();
    if message.jsonrpc != "2.0" {
        invalid.push(("jsonrpc", "must be \"2.0\"".to_string()));
    }
    if message.method.is_empty() || message.method.chars().count() > 128 {
        invalid.push(("method", "1 to 128 characters".to_string()));
    }
    if !invalid.is_empty() {
        return Err(ApiError::invalid_fields(invalid));
    }
    // A notification (or a response to us, which we never ask for) is acknowledged without a body.
    let Some(id) = message.id else { return Ok(StatusCode::ACCEPTED.into_response()) };
    let params = message.params.map_or(Value::Null, Value::Object);
    let answer = match message.method.as_str() {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or(LATEST);
            let version = if SUPPORTED.contains(&asked) { asked } else { LATEST };
            ok(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "fiscus", "title": "Fiscus", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": "Finance operations of this workspace as tools, limited to your scopes (and, for a \
                                     signed client, its grant). Tools never approve anything: people approve every \
                                     Financial Action at the Fiscus console.",
                }),
            )
        }
        "ping" => ok(id, json!({})),
        "tools/list" => ok(id, json!({ "tools": offered(ctx).map(Tool::mcp).collect::<Vec<_>>() })),
        "tools/call" => call(state, ctx, id, &params).await?,
        other => err(id, -32601, format!("method not found: {other}"), None),
    };
    Ok(Json(answer).into_response())
}

async fn call(state: &AppState, ctx: &Ctx, id: JsonRpcId, params: &Value) -> Result<JsonRpcResponse, ApiError> {
    let Some(name) = params["name"].as_str() else {
        return Ok(err(id, -32602, "tools/call needs params.name", None));
    };
    let arguments = match &params["arguments"] {
        Value::Null => Map::new(),
        Value::Object(m) => m.clone(),
        _ => return Ok(err(id, -32602, "params.arguments must be an object", None)),
    };
    let request_hash = seal(&Value::Object(arguments.clone())).unwrap_or_else(|_| seal_bytes(b""));
    let Some(tool) = tools::find(name) else {
        return Ok(err(id, -32602, format!("unknown tool: {name}"), None));
    };
    if !offers(ctx, tool) {
        let code = if ctx.signed.is_some() { ErrorCode::OutsideGrant } else { ErrorCode::ScopeMissing };
        record(state, ctx, tool, &request_hash, 422, &seal_bytes(b""), "refused").await?;
        return Ok(err(
            id,
            -32602,
            format!("the tool {name} is not offered to this caller"),
            Some(json!({ "code": code.code(), "title": code.title() })),
        ));
    }
    let caller = Dispatched { principal: ctx.principal.clone(), signed: ctx.signed.clone() };
    let answer = match dispatch::call(state, &caller, tool, &arguments, &ctx.request_id).await {
        Ok(a) => a,
        Err(bad) => return Ok(err(id, -32602, bad.0, None)),
    };
    let text = answer.text;
    let failed = answer.status >= 400;
    record(
        state,
        ctx,
        tool,
        &request_hash,
        i64::from(answer.status),
        &seal_bytes(text.as_bytes()),
        if failed { "failed" } else { "succeeded" },
    )
    .await?;
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": failed });
    if !failed && tool.output_schema.is_some() && answer.body.is_object() {
        result["structuredContent"] = answer.body;
    }
    Ok(ok(id, result))
}

/// The hash-only audit row of one tool call.
async fn record(
    state: &AppState,
    ctx: &Ctx,
    tool: &Tool,
    request_hash: &str,
    status: i64,
    response_hash: &str,
    outcome: &str,
) -> Result<(), ApiError> {
    let row = fiscus_store::tool_invocations::Invocation {
        id: fiscus_domain::ids::new_id("inv"),
        application_id: ctx.principal.application_id.clone(),
        credential_id: ctx.principal.credential_id.clone(),
        protocol: "mcp".into(),
        tool: tool.name().to_string(),
        request_hash: request_hash.to_string(),
        response_hash: response_hash.to_string(),
        status,
        outcome: outcome.to_string(),
        request_id: ctx.request_id.clone(),
        created_at: now_micros(),
    };
    // A read that was answered is recorded with the next flush; anything else before the answer is given.
    let row = if tool.read_only() && outcome != "refused" {
        match state.invocations.defer(ctx.tenant(), row) {
            Ok(()) => return Ok(()),
            Err(row) => row,
        }
    } else {
        row
    };
    let mut tx = state.store.begin().await?;
    fiscus_store::tool_invocations::insert(&mut tx, ctx.tenant(), &row).await?;
    tx.commit().await?;
    Ok(())
}

/// MCP for bearer credentials: the tool catalogue as the credential's scopes allow.
#[utoipa::path(
    post,
    path = "/api/mcp",
    request_body(content = JsonRpcRequest, example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    responses(
        (status = 200, description = "The JSON-RPC response (a result, or an error such as -32601 unknown method)", body = JsonRpcResponse),
        (status = 202, description = "A notification, acknowledged"),
    )
)]
pub async fn post_root_mcp(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(message): ApiJson<JsonRpcRequest>,
) -> Result<Response, ApiError> {
    serve(&state, &ctx, &headers, message).await
}

/// MCP on the agent gateway: for signed execution clients, the tools of their grant (bearer credentials with
/// `agent:execution:invoke`: the tools of their scopes).
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/mcp",
    request_body(content = JsonRpcRequest, example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    responses(
        (status = 200, description = "The JSON-RPC response; a tool outside the grant is the JSON-RPC error -32602 with data.code outside_grant", body = JsonRpcResponse),
        (status = 202, description = "A notification, acknowledged"),
    )
)]
pub async fn post_agent_execution_mcp(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(message): ApiJson<JsonRpcRequest>,
) -> Result<Response, ApiError> {
    serve(&state, &ctx, &headers, message).await
}
