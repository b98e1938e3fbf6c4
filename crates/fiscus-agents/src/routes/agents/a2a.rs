//! A2A (Agent2Agent protocol, version 1.0) over its JSON-RPC binding: `POST /api/v2/agent-execution/a2a`, with
//! the agent card at `/.well-known/agent-card.json` of the gateway (and of the host).
//!
//! The skills are the generated tools (`tools.rs`), offered as MCP offers them: by the caller's scopes and,
//! for a signed execution client, its grant. Fiscus is not a language model, so a message names its skill
//! in a data part: `{"data": {"skill": "get_actions", "arguments": {"limit": 5}}}`; a message with only text
//! or files is `-32005` (content type not supported). The call completes before the answer, so
//! `SendMessage` returns a task that is already terminal (`TASK_STATE_COMPLETED`, with the operation's answer
//! as an artifact, or `TASK_STATE_FAILED`, with its problem document as the status message), persisted per
//! workspace and readable only by the application that sent the message. A message sent again with the same
//! `messageId` returns its first task rather than calling the tool twice. A skill outside the grant is
//! `-32602` with an `ErrorInfo` whose reason is `OUTSIDE_GRANT` (or `SCOPE_MISSING`), recorded as a refused
//! invocation. Streaming and push notifications are not offered (`-32004`, `-32003`). Requests must carry
//! `A2A-Version: 1.0`; none means 0.3, which is `-32009`, as the protocol says.
//!
//! It is long because it is one protocol binding: the card, the JSON-RPC methods and their task views, which must
//! agree with each other.

use crate::tables::a2a_tasks::{self, Filter, Owner, Task, TaskState};
use axum::Json;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::{now_micros, parse_rfc3339, rfc3339};
use fiscus_domain::evidence::seal;
use fiscus_domain::ids::new_id;
use fiscus_store::StoreError;
use serde_json::{Map, Value, json};

use super::invoke::{self, NotCalled, Outcome, Protocol};
use super::jsonrpc::{self, JsonRpcId, JsonRpcRequest, JsonRpcResponse, RpcJson, err, ok};
use crate::dispatch::Dispatcher;
use crate::tools::{self, Slot, Tool};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::issuer::issuer;
use fiscus_http::problem::ApiError;

/// The protocol version served.
pub const VERSION: &str = "1.0";
/// Where the card is, below the gateway and below the host.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
pub const GATEWAY_CARD_PATH: &str = "/api/v2/agent-execution/.well-known/agent-card.json";

const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";
const MAX_ID: usize = 128;
const MAX_PARTS: usize = 64;
const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 100;

/// Error details as A2A carries them: a list holding one `google.rpc.ErrorInfo`.
fn info(reason: &str, domain: &str, metadata: Value) -> Option<Value> {
    Some(json!([{ "@type": ERROR_INFO, "reason": reason, "domain": domain, "metadata": metadata }]))
}

pub(super) fn a2a_err(id: JsonRpcId, code: i64, reason: &str, message: impl Into<String>) -> JsonRpcResponse {
    err(id, code, message, info(reason, "a2a-protocol.org", json!({})))
}

pub(super) fn invalid(id: JsonRpcId, message: impl Into<String>) -> JsonRpcResponse {
    err(id, -32602, message, None)
}

/// The agent card: the JSON-RPC interface at this origin and the given skills.
pub fn card<'a>(origin: &str, skills: impl Iterator<Item = &'a Tool>) -> Value {
    json!({
        "name": "Fiscus",
        "description": "Governed finance operations of one workspace as skills. A message names its skill in a data \
                        part: {\"data\": {\"skill\": \"<tool name>\", \"arguments\": {...}}}; the task carries the \
                        operation's answer. Skills never approve anything: people approve every Financial Action \
                        at the Fiscus console.",
        "supportedInterfaces": [{
            "url": format!("{origin}/api/v2/agent-execution/a2a"),
            "protocolBinding": "JSONRPC",
            "protocolVersion": VERSION,
        }],
        "provider": { "organization": "Fiscus", "url": origin },
        "version": env!("CARGO_PKG_VERSION"),
        "documentationUrl": format!("{origin}/docs"),
        "capabilities": { "streaming": false, "pushNotifications": false, "extendedAgentCard": true },
        "securitySchemes": {
            "bearer": { "httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "A Fiscus key or OAuth access token with agent:execution:invoke; signed execution \
                                clients sign each request with RFC 9421 HTTP Message Signatures (Ed25519) instead.",
            }},
        },
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": skills.map(skill).collect::<Vec<_>>(),
    })
}

fn skill(tool: &Tool) -> Value {
    json!({
        "id": tool.name(),
        "name": tool.title,
        "description": tool.description,
        "tags": [tool.operation.group.name(), if tool.read_only() { "read" } else { "write" }],
        "inputModes": ["application/json"],
        "outputModes": ["application/json"],
    })
}

/// The public card (every skill of the catalogue; which of them a caller may use is its grant's business,
/// answered by `GetExtendedAgentCard`).
pub async fn public_card(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(api) = state.http.api.get() else {
        return ApiError::internal().into_response();
    };
    let mut response = Json(card(&issuer(&headers), tools::catalogue(api).iter())).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response
}

/// Whether a requested `A2A-Version` is this one (major and minor; the patch is ignored).
fn supported(version: &str) -> bool {
    version == VERSION || version.strip_prefix(VERSION).is_some_and(|rest| rest.starts_with('.'))
}

/// A2A for agents: `SendMessage` calls one granted skill; `GetTask`, `ListTasks` and `CancelTask` read the
/// application's tasks; `GetExtendedAgentCard` lists the skills this caller may use.
///
/// Deviation from the seed, on purpose: the seed answers an operation outside the grant or control boundary
/// with 422. Here it is HTTP 200 carrying the JSON-RPC error -32602 (its `google.rpc.ErrorInfo` reason is
/// `OUTSIDE_GRANT`), as the A2A 1.0 JSON-RPC binding requires (errors travel in 200 responses) and as the
/// `a2a-sdk` client reads them; 422 stays the answer to a body that is not a JSON-RPC request at all. A write
/// skill the controls refuse is a failed task holding the problem document.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/a2a",
    request_body(content = JsonRpcRequest, example = json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "msg-1", "role": "ROLE_USER",
                   "parts": [{"data": {"skill": "get_actions", "arguments": {"limit": 5}}}]}}
    })),
    params(("A2A-Version" = Option<String>, Header, description = "The A2A protocol version; 1.0 (none means 0.3, which is refused with -32009)")),
    responses(
        (status = 200, description = "The JSON-RPC response: a result, or an error (-32001 task not found, -32002 not cancelable, -32003/-32004 push or streaming not offered, -32005 content type not supported, -32009 version not supported, -32601 unknown method, -32602 invalid params or a skill outside the grant)", body = JsonRpcResponse),
        (status = 202, description = "A notification (no id), acknowledged and ignored"),
        (status = 400, description = "A JSON-RPC batch: the JSON-RPC error -32600 with a null id (batches are not run); a request carrying U+0000 in any string or member name: the error -32602 with its id; or a body that is not JSON (a problem document)", body = JsonRpcResponse),
    )
)]
pub async fn post_agent_execution_a2a(
    ctx: Ctx,
    State(state): State<AppState>,
    Extension(dispatcher): Extension<Dispatcher>,
    headers: HeaderMap,
    RpcJson(message): RpcJson,
) -> Result<Response, ApiError> {
    jsonrpc::check(&message)?;
    let Some(id) = message.id else { return Ok(StatusCode::ACCEPTED.into_response()) };
    if let Some(answer) = version_refused(&headers, &id) {
        return Ok(Json(answer).into_response());
    }
    let params = message.params.unwrap_or_default();
    let answer = match message.method.as_str() {
        "SendMessage" => send_message(&state, &dispatcher, &ctx, id, &params).await?,
        "GetTask" => get_task(&state, &ctx, id, &params).await?,
        "ListTasks" => list_tasks(&state, &ctx, id, &params).await?,
        "CancelTask" => cancel_task(&state, &ctx, id, &params).await?,
        "GetExtendedAgentCard" => ok(id, card(&issuer(&headers), invoke::offered(&ctx))),
        other => not_offered(id, other),
    };
    Ok(Json(answer).into_response())
}

/// The `-32009` answer when the request's `A2A-Version` is not this one (none means 0.3, as the protocol
/// says).
pub(super) fn version_refused(headers: &HeaderMap, id: &JsonRpcId) -> Option<JsonRpcResponse> {
    let version = headers.get("a2a-version").and_then(|v| v.to_str().ok()).map(str::trim).unwrap_or("");
    let version = if version.is_empty() { "0.3" } else { version };
    if supported(version) {
        return None;
    }
    let why = format!("A2A version {version} is not supported; send A2A-Version: {VERSION}");
    Some(a2a_err(id.clone(), -32009, "VERSION_NOT_SUPPORTED", why))
}

/// The answer to a method neither gateway offers: streaming and push notifications (their A2A errors), or
/// none of that name (-32601).
pub(super) fn not_offered(id: JsonRpcId, method: &str) -> JsonRpcResponse {
    match method {
        "SendStreamingMessage" | "SubscribeToTask" => {
            a2a_err(id, -32004, "UNSUPPORTED_OPERATION", "streaming is not offered (capabilities.streaming is false)")
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => a2a_err(
            id,
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "push notifications are not offered; register a webhook endpoint for lifecycle events",
        ),
        other => err(id, -32601, format!("method not found: {other}"), None),
    }
}

/// Whose tasks the caller sees: its application's, and for a signed client only its own (another credential
/// of the application may hold a wider grant, and a task carries the answer of the skill it called).
fn owner(ctx: &Ctx) -> Owner<'_> {
    Owner {
        application_id: &ctx.principal.application_id,
        credential_id: ctx.signed.as_ref().map(|_| ctx.principal.credential_id.as_str()),
    }
}

/// A short identifier parameter: a string of 1 to 128 characters.
pub(super) fn short_id<'a>(params: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= MAX_ID => Ok(Some(s)),
        Some(_) => Err(format!("{name} must be a string of 1 to {MAX_ID} characters")),
    }
}

/// What a message asks for: one skill and its arguments, from its single data part.
pub(super) enum Ask {
    Call {
        skill: String,
        arguments: Map<String, Value>,
    },
    /// Parts, but none of them data.
    NoData,
    Invalid(String),
}

pub(super) fn ask(message: &Map<String, Value>) -> Ask {
    let Some(Value::Array(parts)) = message.get("parts") else {
        return Ask::Invalid("message.parts must be a list of parts".into());
    };
    if parts.is_empty() || parts.len() > MAX_PARTS {
        return Ask::Invalid(format!("message.parts holds 1 to {MAX_PARTS} parts"));
    }
    let data: Vec<&Value> = parts.iter().filter_map(|p| p.get("data")).collect();
    let [data] = data.as_slice() else {
        return if data.is_empty() {
            Ask::NoData
        } else {
            Ask::Invalid("a message names one skill, in one data part".into())
        };
    };
    let Some(skill) = data.get("skill").and_then(Value::as_str) else {
        return Ask::Invalid("the data part must be {\"skill\": \"<tool name>\", \"arguments\": {...}}".into());
    };
    let arguments = match data.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), whole_numbers(v))).collect(),
        Some(_) => return Ask::Invalid("the data part's arguments must be an object".into()),
    };
    Ask::Call { skill: skill.to_string(), arguments }
}

/// A data part is a `google.protobuf.Value`, which holds every number as a double, so SDKs send `5` as
/// `5.0`; a whole number is given back its integer form before the operation sees it (amounts in minor
/// units, limits). Fractions are left as they are.
fn whole_numbers(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(whole_numbers).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), whole_numbers(v))).collect()),
        _ => v.clone(),
    }
}

async fn send_message(
    state: &AppState,
    dispatcher: &Dispatcher,
    ctx: &Ctx,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let Some(Value::Object(message)) = params.get("message") else {
        return Ok(invalid(id, "params.message is required"));
    };
    let message_id = match short_id(message, "messageId") {
        Ok(Some(m)) => m.to_string(),
        Ok(None) => return Ok(invalid(id, "message.messageId is required")),
        Err(e) => return Ok(invalid(id, format!("message.{e}"))),
    };
    if message.get("role").and_then(Value::as_str) != Some("ROLE_USER") {
        return Ok(invalid(id, "message.role must be ROLE_USER"));
    }
    let (context_id, task_id) = match (short_id(message, "contextId"), short_id(message, "taskId")) {
        (Ok(c), Ok(t)) => (c.map(str::to_string), t.map(str::to_string)),
        (Err(e), _) | (_, Err(e)) => return Ok(invalid(id, format!("message.{e}"))),
    };
    let history = history_wanted(params.get("configuration").and_then(|c| c.get("historyLength")));
    let tenant = ctx.tenant();
    let application = &ctx.principal.application_id;
    // Every task is terminal once answered, so a message cannot continue one.
    if let Some(task_id) = task_id {
        return with_task(state, ctx, id, &task_id, |id, t| {
            let why = format!("task {} is {}; send a new message without taskId", t.id, t.state.as_str());
            a2a_err(id, -32004, "UNSUPPORTED_OPERATION", why)
        })
        .await;
    }
    let message_json = Value::Object(message.clone());
    let message_hash = seal(&message_json).map_err(|_| ApiError::internal())?;
    // A message sent again (a retry) is answered with its first task.
    {
        let mut conn = state.store.read().await?;
        if let Some(first) =
            a2a_tasks::by_message(&mut conn, state.store.seal_key(), tenant, application, &message_id).await?
        {
            return Ok(again(ctx, id, &first, &message_hash, history));
        }
    }
    let (skill, arguments) = match ask(message) {
        Ask::Call { skill, arguments } => (skill, arguments),
        Ask::NoData => {
            return Ok(a2a_err(
                id,
                -32005,
                "CONTENT_TYPE_NOT_SUPPORTED",
                "Fiscus reads a skill call from a data part: {\"data\": {\"skill\": \"<tool name>\", \"arguments\": {...}}}",
            ));
        }
        Ask::Invalid(why) => return Ok(invalid(id, why)),
    };
    // A write skill's operation is keyed by the message: the same message sent twice at once (a client's
    // retry racing its first try) has one effect, whatever the agent put in the arguments otherwise.
    let mut arguments = arguments;
    if let Some(tool) = tools::find(&ctx.api, &skill)
        && tool.arguments.get("idempotency_key") == Some(&Slot::IdempotencyKey)
    {
        // Hashed: a message id may hold characters a header value may not.
        let key = format!("a2a-{}", fiscus_domain::evidence::seal_bytes(message_id.as_bytes()));
        arguments.entry("idempotency_key").or_insert_with(|| Value::String(key));
    }
    let called = match invoke::call(state, dispatcher, ctx, Protocol::A2a, &skill, &arguments).await {
        Ok(c) => c,
        Err(NotCalled::Unknown) => {
            return Ok(err(id, -32602, format!("unknown skill: {skill}"), info("UNKNOWN_SKILL", "fiscus", json!({}))));
        }
        Err(NotCalled::Refused(code)) => {
            return Ok(err(
                id,
                -32602,
                format!("the skill {skill} is not offered to this caller"),
                info(&code.code().to_uppercase(), "fiscus", json!({ "code": code.code(), "title": code.title() })),
            ));
        }
        Err(NotCalled::BadArguments(bad)) => return Ok(invalid(id, bad)),
        Err(NotCalled::Store(e)) => return Err(e),
    };
    let task = Task {
        id: new_id("task"),
        application_id: application.clone(),
        credential_id: ctx.principal.credential_id.clone(),
        context_id: context_id.unwrap_or_else(|| new_id("ctx")),
        message_id: message_id.clone(),
        skill: called.tool.name().to_string(),
        state: if called.outcome == Outcome::Failed { TaskState::Failed } else { TaskState::Completed },
        http_status: i64::from(called.answer.status),
        request_hash: called.invocation.request_hash.clone(),
        response_hash: called.invocation.response_hash.clone(),
        message: message_json.to_string(),
        result: called.answer.text.clone(),
        created_at: now_micros(),
    };
    // The task and its invocation row are one record: both or neither.
    let mut tx = state.store.begin().await?;
    fiscus_kernel::tables::tool_invocations::insert(&mut tx, tenant, &called.invocation).await?;
    match a2a_tasks::insert(&mut tx, tenant, &task).await {
        Ok(()) => tx.commit().await?,
        // The same message arrived twice at once and the other copy was recorded first. This call reached its
        // operation too (which answered from its idempotency record), so its invocation row is kept.
        Err(StoreError::Conflict(_)) => {
            drop(tx);
            invoke::write(state, ctx, &called.invocation).await?;
            let mut conn = state.store.read().await?;
            let first =
                a2a_tasks::by_message(&mut conn, state.store.seal_key(), tenant, application, &message_id).await?;
            return match first {
                Some(first) => Ok(again(ctx, id, &first, &message_hash, history)),
                None => Err(ApiError::internal()),
            };
        }
        Err(e) => return Err(e.into()),
    }
    Ok(ok(id, json!({ "task": view(&task, history, true) })))
}

/// The answer to a message whose id was already used: its task, or an error when the message differs or the
/// task is not the caller's to read.
fn again(ctx: &Ctx, id: JsonRpcId, first: &Task, message_hash: &str, history: bool) -> JsonRpcResponse {
    let same = serde_json::from_str::<Value>(&first.message).ok().and_then(|m| seal(&m).ok());
    let readable = owner(ctx).credential_id.is_none_or(|c| c == first.credential_id);
    if same.as_deref() == Some(message_hash) && readable {
        ok(id, json!({ "task": view(first, history, true) }))
    } else {
        invalid(id, format!("messageId {} was already used for a different message", first.message_id))
    }
}

/// `historyLength` 0 asks for no history; anything else (or nothing) for all of it (one message).
fn history_wanted(length: Option<&Value>) -> bool {
    length.and_then(Value::as_i64) != Some(0)
}

fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Completed => "TASK_STATE_COMPLETED",
        TaskState::Failed => "TASK_STATE_FAILED",
    }
}

/// A stored task as A2A's `Task` (ProtoJSON).
fn view(task: &Task, history: bool, artifacts: bool) -> Value {
    let answer: Value = serde_json::from_str(&task.result).unwrap_or(Value::Null);
    let part = if answer.is_null() && !task.result.is_empty() {
        json!({ "text": task.result, "mediaType": "text/plain" })
    } else {
        let media = if task.state == TaskState::Failed { "application/problem+json" } else { "application/json" };
        json!({ "data": answer, "mediaType": media })
    };
    let mut status = json!({ "state": state_name(task.state), "timestamp": rfc3339(task.created_at) });
    let mut out = json!({
        "id": task.id,
        "contextId": task.context_id,
        "status": {},
        "metadata": {
            "skill": task.skill,
            "httpStatus": task.http_status,
            "requestHash": task.request_hash,
            "responseHash": task.response_hash,
        },
    });
    match task.state {
        TaskState::Failed => {
            status["message"] = json!({
                "messageId": format!("{}-status", task.id),
                "role": "ROLE_AGENT",
                "taskId": task.id,
                "contextId": task.context_id,
                "parts": [part],
            });
        }
        TaskState::Completed if artifacts => {
            out["artifacts"] =
                json!([{ "artifactId": format!("{}-result", task.id), "name": task.skill, "parts": [part] }]);
        }
        TaskState::Completed => {}
    }
    out["status"] = status;
    if history && let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(&task.message) {
        m.insert("taskId".into(), json!(task.id));
        m.insert("contextId".into(), json!(task.context_id));
        out["history"] = json!([m]);
    }
    out
}

/// The caller's task `task_id` answered by `found`, or `-32001` when the caller has no such task.
async fn with_task(
    state: &AppState,
    ctx: &Ctx,
    id: JsonRpcId,
    task_id: &str,
    found: impl FnOnce(JsonRpcId, Task) -> JsonRpcResponse,
) -> Result<JsonRpcResponse, ApiError> {
    let mut conn = state.store.read().await?;
    match a2a_tasks::get(&mut conn, state.store.seal_key(), ctx.tenant(), owner(ctx), task_id).await {
        Ok(t) => Ok(found(id, t)),
        Err(StoreError::NotFound) => Ok(a2a_err(id, -32001, "TASK_NOT_FOUND", format!("no task {task_id}"))),
        Err(e) => Err(e.into()),
    }
}

/// The required `params.id` of `GetTask` and `CancelTask`, or why it is invalid (`-32602`).
/// The task id a `GetTask` or `CancelTask` names (`params.id`), for both gateways.
pub(super) fn task_param(params: &Map<String, Value>) -> Result<String, String> {
    match short_id(params, "id") {
        Ok(Some(t)) => Ok(t.to_string()),
        Ok(None) => Err("params.id is required".into()),
        Err(e) => Err(format!("params.{e}")),
    }
}

async fn get_task(
    state: &AppState,
    ctx: &Ctx,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let task_id = match task_param(params) {
        Ok(t) => t,
        Err(why) => return Ok(invalid(id, why)),
    };
    let history = history_wanted(params.get("historyLength"));
    with_task(state, ctx, id, &task_id, |id, t| ok(id, view(&t, history, true))).await
}

async fn cancel_task(
    state: &AppState,
    ctx: &Ctx,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let task_id = match task_param(params) {
        Ok(t) => t,
        Err(why) => return Ok(invalid(id, why)),
    };
    with_task(state, ctx, id, &task_id, |id, t| {
        let why = format!("task {} is {}; only a task still working can be canceled", t.id, t.state.as_str());
        a2a_err(id, -32002, "TASK_NOT_CANCELABLE", why)
    })
    .await
}

async fn list_tasks(
    state: &AppState,
    ctx: &Ctx,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let mut filter = Filter::default();
    match short_id(params, "contextId") {
        Ok(c) => filter.context_id = c.map(str::to_string),
        Err(e) => return Ok(invalid(id, format!("params.{e}"))),
    }
    // A state Fiscus never stores (a task here is never working) matches nothing.
    let mut none_match = false;
    match params.get("status").and_then(Value::as_str) {
        None | Some("TASK_STATE_UNSPECIFIED") => {}
        Some("TASK_STATE_COMPLETED") => filter.state = Some(TaskState::Completed),
        Some("TASK_STATE_FAILED") => filter.state = Some(TaskState::Failed),
        Some(
            "TASK_STATE_SUBMITTED"
            | "TASK_STATE_WORKING"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_INPUT_REQUIRED"
            | "TASK_STATE_REJECTED"
            | "TASK_STATE_AUTH_REQUIRED",
        ) => none_match = true,
        Some(other) => return Ok(invalid(id, format!("params.status: unknown task state {other}"))),
    }
    if let Some(after) = params.get("statusTimestampAfter") {
        match after.as_str().and_then(parse_rfc3339) {
            Some(t) => filter.since = Some(t),
            None => return Ok(invalid(id, "params.statusTimestampAfter must be an RFC 3339 timestamp")),
        }
    }
    let page_size = match params.get("pageSize") {
        None | Some(Value::Null) => DEFAULT_PAGE,
        Some(v) => match v.as_u64() {
            Some(0) => DEFAULT_PAGE,
            Some(n) if n <= u64::from(MAX_PAGE) => n as u32,
            _ => return Ok(invalid(id, format!("params.pageSize must be 1 to {MAX_PAGE}"))),
        },
    };
    let before = match short_id(params, "pageToken") {
        Ok(t) => t,
        Err(e) => return Ok(invalid(id, format!("params.{e}"))),
    };
    let history = history_wanted(params.get("historyLength"));
    let artifacts = params.get("includeArtifacts").and_then(Value::as_bool).unwrap_or(false);
    let (mut tasks, total) = if none_match {
        (Vec::new(), 0)
    } else {
        let mut conn = state.store.read().await?;
        a2a_tasks::list(&mut conn, state.store.seal_key(), ctx.tenant(), owner(ctx), &filter, before, page_size + 1)
            .await?
    };
    let more = tasks.len() > page_size as usize;
    tasks.truncate(page_size as usize);
    let next = if more { tasks.last().map(|t| t.id.clone()).unwrap_or_default() } else { String::new() };
    Ok(ok(
        id,
        json!({
            "tasks": tasks.iter().map(|t| view(t, history, artifacts)).collect::<Vec<_>>(),
            "nextPageToken": next,
            "pageSize": page_size,
            "totalSize": total,
        }),
    ))
}
