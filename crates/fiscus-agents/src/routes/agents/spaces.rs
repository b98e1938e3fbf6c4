//! `/agents/spaces…`, `/agents/runs/{runUid}`, `/agents/executions/{uid}`: the spaces operators promoted in
//! this workspace, runs of them, and each run's execution with the tool calls it made.

use crate::rules::spaces::{AgentRunState, ModelSelection, PlannedCall, RunMode, SpaceDefinition};
use crate::tables::spaces::{Call, Run, Version};
use axum::Json;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::list::ListPage;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::dispatch::Dispatcher;
use crate::routes::workflows::views::accepted;
use crate::spaces::runs::{self, AgentSpaceRunRequest, RETRY_AFTER_SECONDS, Started};
use crate::spaces::{self, Standing};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;
use fiscus_kernel::governed::Failure;

/// Whether a space runs.
#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentSpaceStatus {
    /// Its promoted version runs.
    Active,
    /// An operator suspended it: runs are refused (409) until a version is promoted again.
    Suspended,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentSpaceVersionView {
    #[schema(example = "asv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(minimum = 1)]
    pub version: i64,
    /// Its tools, secret-free knowledge bindings and playbook.
    pub definition: SpaceDefinition,
    /// `sha256:` of the definition (RFC 8785), as the marketplace lists it.
    pub definition_hash: String,
    pub record_hash: String,
    /// The operator who promoted it first.
    pub promoted_by: String,
    pub promoted_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentSpaceView {
    /// Always `agent_space`.
    pub object: &'static str,
    #[schema(example = "asp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(example = "market_watch")]
    pub key: String,
    pub name: String,
    pub description: String,
    pub status: AgentSpaceStatus,
    /// The promoted version in force (null while suspended).
    pub active_version: Option<AgentSpaceVersionView>,
    pub created_at: String,
}

fn version_view(v: Version) -> AgentSpaceVersionView {
    AgentSpaceVersionView {
        id: v.id,
        version: v.body.version,
        definition: v.body.definition,
        definition_hash: v.body.definition_hash,
        record_hash: v.content_hash,
        promoted_by: v.created_by.label(),
        promoted_at: rfc3339(v.created_at),
    }
}

fn space_view(s: Standing) -> AgentSpaceView {
    AgentSpaceView {
        object: "agent_space",
        status: if s.active.is_some() { AgentSpaceStatus::Active } else { AgentSpaceStatus::Suspended },
        active_version: s.active.map(version_view),
        id: s.space.id,
        key: s.space.body.key,
        name: s.space.body.name,
        description: s.space.body.description,
        created_at: rfc3339(s.space.created_at),
    }
}

/// The spaces operators promoted in this workspace and environment, each with the version in force.
///
/// Every space promoted at least once in the caller's workspace and environment, unpaged: `active` with the
/// version in force (its tools, secret-free knowledge bindings, playbook and `definition_hash`), or `suspended`
/// with none. Needs `agents:spaces:read`. Only an admin promotes or suspends a space, at the console; this read
/// runs nothing and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agents/spaces",
    responses((status = 200, description = "Spaces, oldest first", body = ListPage<AgentSpaceView>))
)]
pub async fn get_spaces(ctx: Ctx, State(state): State<AppState>) -> Result<Json<ListPage<AgentSpaceView>>, ApiError> {
    let all = spaces::all(&state, ctx.tenant()).await?;
    Ok(Json(ListPage::complete(all.into_iter().map(space_view).collect())))
}

/// One space with its version in force.
///
/// Its status and, while `active`, the version in force with its definition, `definition_hash` and the admin who
/// promoted it; another workspace's or environment's space is 404. Needs `agents:spaces:read`; reading runs
/// nothing and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agents/spaces/{uid}",
    params(("uid" = String, Path, description = "The space (`asp_…`)", example = "asp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The space", body = AgentSpaceView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_space(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<AgentSpaceView>, ApiError> {
    Ok(Json(space_view(spaces::standing(&state, ctx.tenant(), &uid).await?)))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentRunView {
    /// Always `agent_run`.
    pub object: &'static str,
    #[schema(example = "arn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub space_id: String,
    /// The version it ran under.
    pub version_id: String,
    pub definition_hash: String,
    /// Its execution (`aex_…`): the tool calls, at `/agents/executions/{uid}`.
    pub execution_id: String,
    pub state: AgentRunState,
    pub prompt: String,
    pub prompt_hash: String,
    pub execution_mode: RunMode,
    pub model_selection: ModelSelection,
    /// Whether it went on the queue.
    pub queued: bool,
    /// The calls the native runtime planned from the prompt, in order.
    pub plan: Vec<PlannedCall>,
    /// What the runtime concluded, once the run ended.
    pub answer: Option<String>,
    /// Once it ended: `sha256:` over its calls' record hashes, in order.
    pub output_hash: Option<String>,
    /// AI credits the run cost.
    pub credits: i64,
    pub record_hash: String,
    pub created_by: String,
    pub created_at: String,
    pub ended_at: Option<String>,
}

fn run_view(r: Run) -> AgentRunView {
    let b = r.record.body;
    AgentRunView {
        object: "agent_run",
        id: r.record.id,
        space_id: b.space_id,
        version_id: b.version_id,
        definition_hash: b.definition_hash,
        execution_id: b.execution_id,
        state: r.state,
        prompt: b.prompt,
        prompt_hash: b.prompt_hash,
        execution_mode: b.execution_mode,
        model_selection: b.model_selection,
        queued: b.queued,
        plan: b.plan,
        answer: r.answer,
        output_hash: r.output_hash,
        credits: b.credits,
        record_hash: r.record.content_hash,
        created_by: r.record.created_by.label(),
        created_at: rfc3339(r.record.created_at),
        ended_at: r.ended_at.map(rfc3339),
    }
}

fn location(r: &Run) -> String {
    format!("/api/v2/agents/runs/{}", r.record.id)
}

/// Runs the space under its promoted version: the native runtime (`auto_native`) plans tool calls from the
/// prompt and the version's playbook, and makes them as the calling application with only the scopes of
/// the space's tools, each call recorded and sealed. `sync` runs answer 201 with the ended run; `async`
/// runs (and `auto` runs of more than three calls, when a queue driver is configured) answer 202 and are carried
/// out by a worker. Costs 1 AI
/// credit. `Idempotency-Key` makes a retry return the first answer; the same key with another prompt is
/// 409 `idempotency_key_reused`.
///
/// Needs `agents:spaces:run`. Each call carries only the scopes the space's tools need that the caller held when
/// asking and that its application still holds at the call, and a space may declare read operations only: a run
/// proposes, approves and executes nothing and writes only its own sealed records, its audit event and the credit
/// it costs. A run refused before it starts (402, 409, 422, 429, 503) writes nothing and costs nothing.
#[utoipa::path(
    post,
    path = "/api/v2/agents/spaces/{uid}/runs",
    params(("uid" = String, Path, description = "The space (`asp_…`)", example = "asp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = AgentSpaceRunRequest, example = json!({"prompt": "How did AAPL move? Show its prices.", "execution_mode": "sync", "model_selection": "auto_native"})),
    responses(
        (status = 201, description = "Run in the request, ended", body = AgentRunView, headers(("Location" = String, description = "The run"))),
        (status = 202, description = "Accepted by the asynchronous worker", body = AgentRunView, headers(("Location" = String, description = "The run"))),
        (status = 402, description = "The AI credit balance does not cover a run (`credits_exhausted`)"),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "The space cannot run under its active version: suspended, or a declared tool is not served (`space_not_runnable`)"),
        (status = 422, description = "Bad input, or a prompt that names nothing the space's playbook handles"),
        (status = 429, description = "The runtime's capacity for this workspace is exhausted (`capacity_exhausted`)", headers(("Retry-After" = u64, description = "Seconds to wait before asking again"))),
        (status = 503, description = "The run asks for the queue (`async`) and no queue driver is configured (`queue_unavailable`); `auto` runs in the request then")
    )
)]
pub async fn post_run(
    ctx: Ctx,
    State(state): State<AppState>,
    Extension(dispatcher): Extension<Dispatcher>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<AgentSpaceRunRequest>,
) -> Result<Response, ApiError> {
    match runs::start(&state, &dispatcher, &ctx.principal, &ctx.caller(), &uid, body, &ctx.request_id).await {
        Ok(Started::Ended(run)) => Ok(created(Some(location(&run)), run_view(run))),
        Ok(Started::Queued(run)) => Ok(accepted(location(&run), run_view(run))),
        Err(f @ Failure::Refused { code: ErrorCode::CapacityExhausted, .. }) => {
            Err(ApiError::from(f).header(header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string()))
        }
        Err(f) => Err(f.into()),
    }
}

/// One run.
///
/// The state, the version and `definition_hash` it ran under, the prompt and `prompt_hash`, the mode, the calls
/// the native runtime planned, the credit it cost, and once it ended the answer and `output_hash`. Any run of the
/// caller's workspace and environment is readable, whichever application started it (404 otherwise). Needs
/// `agents:spaces:read`; reading changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agents/runs/{runUid}",
    params(("runUid" = String, Path, description = "The run (`arn_…`)", example = "arn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The run", body = AgentRunView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(run_uid): ApiPath<String>,
) -> Result<Json<AgentRunView>, ApiError> {
    Ok(Json(run_view(runs::load(&state, ctx.tenant(), &run_uid).await?.0)))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentCallView {
    #[schema(minimum = 1)]
    pub seq: i64,
    /// The playbook rule that asked for it.
    pub rule: String,
    pub tool: String,
    #[schema(value_type = Object)]
    pub arguments: Map<String, Value>,
    pub request_hash: String,
    /// The HTTP status the tool's operation answered.
    pub status: i64,
    /// The answer (null when larger than 64 KiB: `response_hash` still covers it).
    #[schema(value_type = Option<Object>)]
    pub response: Value,
    pub response_hash: String,
    pub record_hash: String,
    pub recorded_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AgentExecutionView {
    /// Always `agent_execution`.
    pub object: &'static str,
    #[schema(example = "aex_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub run_id: String,
    pub state: AgentRunState,
    /// Whether a worker carried it out (rather than the request).
    pub queued: bool,
    /// Every tool call made so far, in order.
    pub calls: Vec<AgentCallView>,
    pub output_hash: Option<String>,
    pub queued_at: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
}

fn call_view(c: Call) -> AgentCallView {
    AgentCallView {
        seq: c.body.seq,
        rule: c.body.rule,
        tool: c.body.tool,
        arguments: c.body.arguments,
        request_hash: c.body.request_hash,
        status: c.body.status,
        response: c.body.response,
        response_hash: c.body.response_hash,
        record_hash: c.content_hash,
        recorded_at: rfc3339(c.created_at),
    }
}

/// One execution: the tool calls of its run, as recorded.
///
/// Each call made so far, in order: the playbook rule that asked for it, tool, arguments, the HTTP status its
/// operation answered, the answer (null above 64 KiB, still covered by `response_hash`) and its record hash; with
/// the run's state, whether a worker carried it out, and its times. Needs `agents:spaces:read`; any run of the
/// workspace and environment is readable. Reading makes no call and changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/agents/executions/{uid}",
    params(("uid" = String, Path, description = "The execution (`aex_…`)", example = "aex_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The execution", body = AgentExecutionView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_execution(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<AgentExecutionView>, ApiError> {
    let (run, calls) = runs::load_execution(&state, ctx.tenant(), &uid).await?;
    Ok(Json(AgentExecutionView {
        object: "agent_execution",
        id: run.record.body.execution_id,
        run_id: run.record.id,
        state: run.state,
        queued: run.record.body.queued,
        calls: calls.into_iter().map(call_view).collect(),
        output_hash: run.output_hash,
        queued_at: rfc3339(run.record.created_at),
        started_at: run.started_at.map(rfc3339),
        ended_at: run.ended_at.map(rfc3339),
    }))
}
