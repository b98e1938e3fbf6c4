//! The workflow A2A gateway, `POST /api/v2/agent-execution/workflows/a2a`: A2A 1.0 over its JSON-RPC binding,
//! as `a2a.rs`, whose skills are workflow versions rather than operations.
//!
//! A message names a version in a data part (`{"data": {"skill": "wfv_…"}}`); the gateway starts a run of it
//! on the durable runtime only if the version is on the application's workflow-tool allowlist (decided by an
//! admin at the console, separately from any signed client's grant) and stays inside the gateway's boundary
//! (steps Fiscus runs itself). The task is the run: its id is the run's id, `GetTask` reads the run as it
//! stands, `CancelTask` cancels it. The answer waits a short while for the run to end: an ended run answers
//! 200 with a terminal task, a run still going (waiting on a timer, or on a person's review at the console)
//! answers 202 with a working task to poll. Off the allowlist is a 422 `outside_grant` problem, outside the
//! boundary a 422 `step_kind_unavailable`, as the seed documents for this gateway; protocol errors are
//! JSON-RPC errors in a 200, as in `a2a.rs`.

use std::time::Duration;

use crate::tables::workflow_gateway::{GatewayTask, TaskKey};
use crate::tables::workflows::Run;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::rfc3339;
use fiscus_domain::evidence::seal;
use fiscus_domain::ids::new_id;
use fiscus_domain::workflows::RunState;
use serde_json::{Map, Value, json};

use super::a2a::{self, Ask as Message, a2a_err, ask, invalid, short_id};
use super::jsonrpc::{self, JsonRpcId, JsonRpcRequest, JsonRpcResponse, RpcJson, ok};
use crate::routes::workflows::views::run_view;
use crate::workflows::gateway::{self, Agent, Dispatched};
use crate::workflows::runs;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::issuer::issuer;
use fiscus_http::problem::ApiError;
use fiscus_kernel::governed::Failure;

/// How long a message's answer waits for its run to end before answering 202 with a working task.
const SETTLE: Duration = Duration::from_secs(3);

/// A2A for workflows: `SendMessage` starts an allowlisted workflow version, `GetTask` and `CancelTask` read
/// and cancel its run, `GetExtendedAgentCard` lists the versions this application may dispatch.
///
/// Needs `agent:execution:invoke` (a signed client's grant must name this operation), and the version must be on
/// the application's workflow-tool allowlist, which only an admin decides at the console (else 422
/// `outside_grant`); a version with agent, integration, Financial Action, code-runner, sub-workflow or network
/// steps is 422 `step_kind_unavailable`. A message sent again with its `messageId` returns its first task; a
/// signed client reads and cancels only the tasks it started. The gateway approves nothing: review steps wait for
/// a person at the console.
#[utoipa::path(
    post,
    path = "/api/v2/agent-execution/workflows/a2a",
    request_body(content = JsonRpcRequest, example = json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "msg-liquidity-1", "role": "ROLE_USER",
                   "parts": [{"data": {"skill": "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD"}}]}}
    })),
    params(("A2A-Version" = Option<String>, Header, description = "The A2A protocol version; 1.0 (none means 0.3, which is refused with -32009)")),
    responses(
        (status = 200, description = "The JSON-RPC response: a task whose run has ended (TASK_STATE_COMPLETED with the run as an artifact, TASK_STATE_FAILED, TASK_STATE_CANCELED), or a JSON-RPC error (-32001 task not found, -32002 not cancelable, -32003/-32004 push or streaming not offered, -32005 content type not supported, -32009 version not supported, -32601 unknown method, -32602 invalid params)", body = JsonRpcResponse),
        (status = 202, description = "The run was accepted and has not ended yet (it waits on a timer or on a person's review at the console): a TASK_STATE_WORKING task to read again with GetTask", body = JsonRpcResponse),
        (status = 400, description = "A JSON-RPC batch: the JSON-RPC error -32600 with a null id (batches are not run); a request carrying U+0000 in any string or member name: the error -32602 with its id; or a body that is not JSON (a problem document)", body = JsonRpcResponse),
        (status = 204, description = "A notification (no id), acknowledged with no body"),
        (status = 422, description = "The workflow version is not on the application's workflow-tool allowlist (`outside_grant`), or has steps outside the gateway's boundary (`step_kind_unavailable`, with `steps`), or the body is not a JSON-RPC request")
    )
)]
pub async fn post_agent_execution_workflows_a2a(
    ctx: Ctx,
    State(state): State<AppState>,
    headers: HeaderMap,
    RpcJson(message): RpcJson,
) -> Result<Response, ApiError> {
    jsonrpc::check(&message)?;
    // A notification (no id) asks for no answer; 204 keeps 202 for the accepted run and its task.
    let Some(id) = message.id else { return Ok(StatusCode::NO_CONTENT.into_response()) };
    if let Some(answer) = a2a::version_refused(&headers, &id) {
        return Ok(Json(answer).into_response());
    }
    let params = message.params.unwrap_or_default();
    let agent = Agent {
        application_id: &ctx.principal.application_id,
        credential_id: &ctx.principal.credential_id,
        own_tasks_only: ctx.signed.is_some(),
    };
    let answer = match message.method.as_str() {
        "SendMessage" => return send_message(&state, &ctx, &agent, id, &params).await,
        "GetTask" => get_task(&state, &ctx, &agent, id, &params).await?,
        "CancelTask" => cancel_task(&state, &ctx, &agent, id, &params).await?,
        "GetExtendedAgentCard" => ok(id, extended_card(&state, &ctx, &headers).await?),
        other => a2a::not_offered(id, other),
    };
    Ok(Json(answer).into_response())
}

async fn send_message(
    state: &AppState,
    ctx: &Ctx,
    agent: &Agent<'_>,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<Response, ApiError> {
    let answer = |r: JsonRpcResponse| Ok(Json(r).into_response());
    let Some(Value::Object(message)) = params.get("message") else {
        return answer(invalid(id, "params.message is required"));
    };
    let message_id = match short_id(message, "messageId") {
        Ok(Some(m)) => m.to_string(),
        Ok(None) => return answer(invalid(id, "message.messageId is required")),
        Err(e) => return answer(invalid(id, format!("message.{e}"))),
    };
    if message.get("role").and_then(Value::as_str) != Some("ROLE_USER") {
        return answer(invalid(id, "message.role must be ROLE_USER"));
    }
    let context_id = match (short_id(message, "contextId"), short_id(message, "taskId")) {
        (Ok(c), Ok(None)) => c.map_or_else(|| new_id("ctx"), str::to_string),
        (Ok(_), Ok(Some(task))) => {
            let why = format!("a message starts a new run; read task {task} with GetTask instead");
            return answer(a2a_err(id, -32004, "UNSUPPORTED_OPERATION", why));
        }
        (Err(e), _) | (_, Err(e)) => return answer(invalid(id, format!("message.{e}"))),
    };
    let version_id = match ask(message) {
        Message::Call { skill, arguments } if arguments.is_empty() => skill,
        Message::Call { .. } => {
            return answer(invalid(id, "a workflow takes no arguments; its inputs are pinned data"));
        }
        Message::NoData => {
            return answer(a2a_err(
                id,
                -32005,
                "CONTENT_TYPE_NOT_SUPPORTED",
                "Fiscus reads the workflow version from a data part: {\"data\": {\"skill\": \"wfv_…\"}}",
            ));
        }
        Message::Invalid(why) => return answer(invalid(id, why)),
    };
    if !fiscus_domain::ids::is_id_of("wfv", &version_id) {
        return answer(invalid(id, format!("the skill must be a workflow version id (wfv_…), not `{version_id}`")));
    }
    let message_hash = seal(&Value::Object(message.clone())).map_err(|_| ApiError::internal())?;
    let tenant = ctx.tenant();
    let ask = gateway::Ask { message_id, message_hash, context_id, version_id };
    let task = match gateway::dispatch(state, &ctx.caller(), tenant, agent, ask).await? {
        Dispatched::Started(t) | Dispatched::Again(t) => t,
        Dispatched::Reused(first) => {
            let why = format!("messageId {} was already used for a different message", first.message_id);
            return answer(invalid(id, why));
        }
    };
    let run = gateway::settle(state, tenant, &task.run_id, SETTLE).await?;
    let status = if run.state.is_ended() { StatusCode::OK } else { StatusCode::ACCEPTED };
    let view = view(state, ctx, &task, run).await?;
    Ok((status, Json(ok(id, json!({ "task": view })))).into_response())
}

/// The required `params.id` of `GetTask` and `CancelTask`: a run id.
fn not_found(id: JsonRpcId, task_id: &str) -> JsonRpcResponse {
    a2a_err(id, -32001, "TASK_NOT_FOUND", format!("no task {task_id}"))
}

/// The agent's task `task_id`, or `None` when it has none of that id.
async fn find(state: &AppState, ctx: &Ctx, agent: &Agent<'_>, task_id: &str) -> Result<Option<GatewayTask>, ApiError> {
    if !fiscus_domain::ids::is_id_of("wfr", task_id) {
        return Ok(None);
    }
    Ok(gateway::task(state, ctx.tenant(), agent, TaskKey::Run(task_id)).await?)
}

async fn get_task(
    state: &AppState,
    ctx: &Ctx,
    agent: &Agent<'_>,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let task_id = match a2a::task_param(params) {
        Ok(t) => t,
        Err(why) => return Ok(invalid(id, why)),
    };
    let Some(task) = find(state, ctx, agent, &task_id).await? else { return Ok(not_found(id, &task_id)) };
    let (run, _) = runs::load(state, ctx.tenant(), &task.run_id).await?;
    Ok(ok(id, view(state, ctx, &task, run).await?))
}

async fn cancel_task(
    state: &AppState,
    ctx: &Ctx,
    agent: &Agent<'_>,
    id: JsonRpcId,
    params: &Map<String, Value>,
) -> Result<JsonRpcResponse, ApiError> {
    let task_id = match a2a::task_param(params) {
        Ok(t) => t,
        Err(why) => return Ok(invalid(id, why)),
    };
    let Some(task) = find(state, ctx, agent, &task_id).await? else { return Ok(not_found(id, &task_id)) };
    let run = match runs::cancel(state, &ctx.caller(), ctx.tenant(), &task.run_id).await {
        Ok(run) => run,
        Err(Failure::Refused { detail, .. }) => {
            let why = format!("task {task_id} cannot be canceled: {detail}");
            return Ok(a2a_err(id, -32002, "TASK_NOT_CANCELABLE", why));
        }
        Err(e) => return Err(e.into()),
    };
    Ok(ok(id, view(state, ctx, &task, run).await?))
}

fn state_name(state: RunState) -> &'static str {
    match state {
        RunState::Queued | RunState::Running | RunState::Waiting | RunState::AwaitingReview => "TASK_STATE_WORKING",
        RunState::Completed => "TASK_STATE_COMPLETED",
        RunState::Failed => "TASK_STATE_FAILED",
        RunState::Cancelled => "TASK_STATE_CANCELED",
    }
}

/// What a person reading the task should know about where its run stands (every state but completion,
/// whose artifact says it all).
fn status_text(state: RunState) -> Option<&'static str> {
    match state {
        RunState::Queued => Some("The run is queued for a worker."),
        RunState::Running => Some("The run is running its steps."),
        RunState::Waiting => Some("The run waits on a timer step."),
        RunState::AwaitingReview => Some("The run awaits a person's review at the Fiscus console."),
        RunState::Failed => Some("The run failed; its recorded steps say where and why."),
        RunState::Cancelled => Some("The run was cancelled."),
        RunState::Completed => None,
    }
}

/// A task as A2A's `Task` (ProtoJSON): the run's state, and once it has ended the run with its sealed steps
/// as the artifact.
async fn view(state: &AppState, ctx: &Ctx, task: &GatewayTask, run: Run) -> Result<Value, ApiError> {
    let run_state = run.state;
    let timestamp = rfc3339(run.ended_at.unwrap_or(run.record.created_at));
    let mut status = json!({ "state": state_name(run_state), "timestamp": timestamp });
    if let Some(text) = status_text(run_state) {
        status["message"] = json!({
            "messageId": format!("{}-status", task.run_id),
            "role": "ROLE_AGENT",
            "taskId": task.run_id,
            "contextId": task.context_id,
            "parts": [{ "text": text, "mediaType": "text/plain" }],
        });
    }
    let mut out = json!({
        "id": task.run_id,
        "contextId": task.context_id,
        "status": status,
        "metadata": {
            "skill": run.record.body.version_id,
            "workflowId": run.record.body.workflow_id,
            "definitionHash": run.record.body.definition_hash,
            "runState": run_state.as_str(),
            "evidenceHash": run.evidence_hash,
            "messageId": task.message_id,
        },
    });
    if run_state.is_ended() {
        let (_, steps) = runs::load(state, ctx.tenant(), &task.run_id).await?;
        let data = serde_json::to_value(run_view(run, Some(steps))).map_err(|_| ApiError::internal())?;
        out["artifacts"] = json!([{
            "artifactId": format!("{}-run", task.run_id),
            "name": "workflow_run",
            "parts": [{ "data": data, "mediaType": "application/json" }],
        }]);
    }
    Ok(out)
}

/// The card of the workflow gateway for this application: one skill per allowlisted version.
async fn extended_card(state: &AppState, ctx: &Ctx, headers: &HeaderMap) -> Result<Value, ApiError> {
    let tenant = ctx.tenant();
    let allowed = gateway::in_force(state, tenant, &ctx.principal.application_id).await?;
    let mut skills = Vec::new();
    for v in allowed.map(|g| g.versions).unwrap_or_default() {
        // A version is never deleted; one that cannot be read is left out rather than described wrongly.
        let Ok(version) = crate::workflows::load_version(state, tenant, &v).await else { continue };
        skills.push(json!({
            "id": version.id,
            "name": format!("Workflow {} version {}", version.body.workflow_id, version.body.version),
            "description": format!(
                "Runs version {} of workflow {} ({} steps; definition {}).",
                version.body.version,
                version.body.workflow_id,
                version.body.definition.steps.len(),
                version.body.definition_hash
            ),
            "tags": ["workflow"],
            "inputModes": ["application/json"],
            "outputModes": ["application/json"],
        }));
    }
    let origin = issuer(headers);
    let mut card = a2a::card(&origin, std::iter::empty());
    card["name"] = json!("Fiscus workflows");
    card["description"] = json!(
        "Workflow versions an admin allowlisted for this application, as skills. A message names one in a data \
         part: {\"data\": {\"skill\": \"wfv_…\"}}; the task is the run. Review steps wait for people at the \
         Fiscus console."
    );
    card["supportedInterfaces"][0]["url"] = json!(format!("{origin}/api/v2/agent-execution/workflows/a2a"));
    card["skills"] = Value::Array(skills);
    Ok(card)
}
