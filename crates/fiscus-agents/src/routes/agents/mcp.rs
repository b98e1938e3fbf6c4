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
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;
use serde_json::{Map, Value, json};

use super::invoke::{self, NotCalled, Outcome, Protocol};
use super::jsonrpc::{self, JsonRpcId, JsonRpcRequest, JsonRpcResponse, RpcJson, err, ok};
use crate::dispatch::Dispatcher;
use crate::tools::Tool;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

pub const LATEST: &str = "2025-11-25";
/// Revisions a client may ask for; the answer repeats the client's when it is one of these.
pub const SUPPORTED: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

pub async fn serve(
    state: &AppState,
    dispatcher: &Dispatcher,
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
    jsonrpc::check(&message)?;
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
        "tools/list" => ok(id, json!({ "tools": invoke::offered(ctx).map(Tool::mcp).collect::<Vec<_>>() })),
        "tools/call" => return Ok(call(state, dispatcher, ctx, id, &params).await?.into_response()),
        other => err(id, -32601, format!("method not found: {other}"), None),
    };
    Ok(Json(answer).into_response())
}

async fn call(
    state: &AppState,
    dispatcher: &Dispatcher,
    ctx: &Ctx,
    id: JsonRpcId,
    params: &Value,
) -> Result<Reply, ApiError> {
    let rpc = |r| Ok(Reply::Rpc(r));
    let Some(name) = params["name"].as_str() else {
        return rpc(err(id, -32602, "tools/call needs params.name", None));
    };
    let arguments = match &params["arguments"] {
        Value::Null => Map::new(),
        Value::Object(m) => m.clone(),
        _ => return rpc(err(id, -32602, "params.arguments must be an object", None)),
    };
    let called = match invoke::call(state, dispatcher, ctx, Protocol::Mcp, name, &arguments).await {
        Ok(c) => c,
        Err(NotCalled::Unknown) => return rpc(err(id, -32602, format!("unknown tool: {name}"), None)),
        Err(NotCalled::Refused(code)) => {
            return rpc(err(
                id,
                -32602,
                format!("the tool {name} is not offered to this caller"),
                Some(json!({ "code": code.code(), "title": code.title() })),
            ));
        }
        Err(NotCalled::BadArguments(bad)) => return rpc(err(id, -32602, bad, None)),
        Err(NotCalled::Store(e)) => return Err(e),
    };
    let structured = called.tool.output_schema.is_some();
    let failed = called.outcome == Outcome::Failed;
    let answer = invoke::record(state, ctx, called).await?;
    // The answer's JSON goes into the result as it is (`structuredContent`) and as text, without being
    // parsed and written again: it is the operation's own serializer's output.
    let structured = !failed && structured && answer.is_object();
    Ok(Reply::Call { id, text: answer.text, failed, structured })
}

/// What a request is answered with.
enum Reply {
    Rpc(JsonRpcResponse),
    /// A `tools/call` result, written directly around the operation's JSON.
    Call {
        id: JsonRpcId,
        text: String,
        failed: bool,
        structured: bool,
    },
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        match self {
            Reply::Rpc(r) => Json(r).into_response(),
            Reply::Call { id, text, failed, structured } => {
                let (Ok(id), Ok(quoted)) = (serde_json::to_string(&id), serde_json::to_string(&text)) else {
                    return ApiError::internal().into_response();
                };
                let mut out = String::with_capacity(text.len() * 2 + id.len() + 128);
                out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
                out.push_str(&id);
                out.push_str(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
                out.push_str(&quoted);
                out.push_str("}],\"isError\":");
                out.push_str(if failed { "true" } else { "false" });
                if structured {
                    out.push_str(",\"structuredContent\":");
                    out.push_str(&text);
                }
                out.push_str("}}");
                ([(axum::http::header::CONTENT_TYPE, "application/json")], out).into_response()
            }
        }
    }
}

/// MCP for bearer credentials: the tool catalogue as the credential's scopes allow.
///
/// One JSON-RPC message per POST, with no session: `initialize`, `ping`, `tools/list` (the tools whose operation's
/// scope the credential holds) and `tools/call`, which calls the tool's operation in process as this credential,
/// its scope checked again. Needs `agents:mcp:read`; a call outside the credential's scopes is the JSON-RPC error
/// -32602 with `data.code` `scope_missing`. Every call leaves a hash-only row (`GET /agents/invocations`). No tool
/// approves anything: people's decisions are not operations.
#[utoipa::path(
    post,
    path = "/api/mcp",
    request_body(content = JsonRpcRequest, example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    responses(
        (status = 200, description = "The JSON-RPC response (a result, or an error such as -32601 unknown method)", body = JsonRpcResponse),
        (status = 202, description = "A notification, acknowledged"),
        (status = 400, description = "A JSON-RPC batch: the JSON-RPC error -32600 with a null id (batches are not run); a request carrying U+0000 in any string or member name: the error -32602 with its id; or a body that is not JSON (a problem document)", body = JsonRpcResponse),
    )
)]
pub async fn post_root_mcp(
    ctx: Ctx,
    State(state): State<AppState>,
    Extension(dispatcher): Extension<Dispatcher>,
    headers: HeaderMap,
    RpcJson(message): RpcJson,
) -> Result<Response, ApiError> {
    serve(&state, &dispatcher, &ctx, &headers, message).await
}

/// MCP on the agent gateway: for signed execution clients, the tools of their grant (bearer credentials with
/// `agent:execution:invoke`: the tools of their scopes).
///
/// Deviation from the seed, on purpose: the seed answers a tool outside the grant with 422. Here it is HTTP
/// 200 carrying the JSON-RPC error -32602 with `data.code` `outside_grant`, because the `mcp` SDK (1.x) takes
/// any other status than 200 or 202 for a broken connection and would drop the session; 422 stays the answer
/// to a body that is not a JSON-RPC request at all.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/mcp",
    request_body(content = JsonRpcRequest, example = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    responses(
        (status = 200, description = "The JSON-RPC response; a tool outside the grant is the JSON-RPC error -32602 with data.code outside_grant", body = JsonRpcResponse),
        (status = 202, description = "A notification, acknowledged"),
        (status = 400, description = "A JSON-RPC batch: the JSON-RPC error -32600 with a null id (batches are not run); a request carrying U+0000 in any string or member name: the error -32602 with its id; or a body that is not JSON (a problem document)", body = JsonRpcResponse),
    )
)]
pub async fn post_agent_execution_mcp(
    ctx: Ctx,
    State(state): State<AppState>,
    Extension(dispatcher): Extension<Dispatcher>,
    headers: HeaderMap,
    RpcJson(message): RpcJson,
) -> Result<Response, ApiError> {
    serve(&state, &dispatcher, &ctx, &headers, message).await
}
