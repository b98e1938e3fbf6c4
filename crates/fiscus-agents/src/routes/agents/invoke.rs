//! One tool call through an agent protocol (MCP or A2A): is the tool offered to this caller, call its
//! operation in process (`dispatch`), and the hash-only invocation row that records it.

use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::{seal, seal_bytes};
pub use fiscus_kernel::tables::tool_invocations::{Invocation, Outcome, Protocol};
use serde_json::{Map, Value};

use crate::dispatch::{self, Answer, Dispatched, Dispatcher};
use crate::tools::{self, Tool};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

/// The tools this caller is offered.
pub fn offered<'a>(ctx: &'a Ctx) -> impl Iterator<Item = &'static Tool> + 'a {
    tools::catalogue(&ctx.api).iter().filter(move |t| offers(ctx, t))
}

/// A tool is offered when the caller's scopes include its operation's and, for a signed client, its grant
/// names it.
pub fn offers(ctx: &Ctx, tool: &Tool) -> bool {
    tool.operation.scope.is_some_and(|s| ctx.principal.scopes.contains(s))
        && ctx.signed.as_ref().is_none_or(|c| c.grant.allows(tool.name()))
}

/// A call that did not reach its operation.
pub enum NotCalled {
    /// No tool of that name.
    Unknown,
    /// Not offered to this caller (`outside_grant` for a signed client, `scope_missing` otherwise); the
    /// refusal is already recorded.
    Refused(ErrorCode),
    /// The arguments do not fit the tool.
    BadArguments(String),
    /// The refusal could not be recorded.
    Store(ApiError),
}

/// A call that reached its operation.
pub struct Called {
    pub tool: &'static Tool,
    pub answer: Answer,
    pub outcome: Outcome,
    /// The invocation row, for the protocol to write (now, with its own records, or deferred).
    pub invocation: Invocation,
}

/// The `sha256:` of the RFC 8785 form of a call's arguments.
pub fn request_hash(arguments: &Map<String, Value>) -> String {
    seal(&Value::Object(arguments.clone())).unwrap_or_else(|_| seal_bytes(b""))
}

/// Calls tool `name` with `arguments` as the caller, if it is offered to them.
pub async fn call(
    state: &AppState,
    dispatcher: &Dispatcher,
    ctx: &Ctx,
    protocol: Protocol,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Called, NotCalled> {
    let Some(tool) = tools::find(&ctx.api, name) else { return Err(NotCalled::Unknown) };
    let request_hash = request_hash(arguments);
    if !offers(ctx, tool) {
        let code = if ctx.signed.is_some() { ErrorCode::OutsideGrant } else { ErrorCode::ScopeMissing };
        let row = invocation(ctx, protocol, tool, request_hash, 422, seal_bytes(b""), Outcome::Refused);
        write(state, ctx, &row).await.map_err(NotCalled::Store)?;
        return Err(NotCalled::Refused(code));
    }
    let caller = Dispatched { principal: ctx.principal.clone(), signed: ctx.signed.clone() };
    let answer = dispatch::call(dispatcher, &caller, tool, arguments, &ctx.request_id)
        .await
        .map_err(|bad| NotCalled::BadArguments(bad.0))?;
    let outcome = if answer.status >= 400 { Outcome::Failed } else { Outcome::Succeeded };
    let response_hash = seal_bytes(answer.text.as_bytes());
    let invocation = invocation(ctx, protocol, tool, request_hash, i64::from(answer.status), response_hash, outcome);
    Ok(Called { tool, answer, outcome, invocation })
}

fn invocation(
    ctx: &Ctx,
    protocol: Protocol,
    tool: &Tool,
    request_hash: String,
    status: i64,
    response_hash: String,
    outcome: Outcome,
) -> Invocation {
    Invocation {
        id: fiscus_domain::ids::new_id("inv"),
        application_id: ctx.principal.application_id.clone(),
        credential_id: ctx.principal.credential_id.clone(),
        protocol,
        tool: tool.name().to_string(),
        request_hash,
        response_hash,
        status,
        outcome,
        request_id: ctx.request_id.clone(),
        created_at: now_micros(),
    }
}

/// Writes an invocation row in its own transaction.
pub async fn write(state: &AppState, ctx: &Ctx, row: &Invocation) -> Result<(), ApiError> {
    let mut tx = state.store.begin().await?;
    fiscus_kernel::tables::tool_invocations::insert(&mut tx, ctx.tenant(), row).await?;
    tx.commit().await?;
    Ok(())
}

/// Records a call that reached its operation: a read that was answered with the next flush of the buffer
/// (its row is evidence of a read, not of a change), anything else before the answer is given.
pub async fn record(state: &AppState, ctx: &Ctx, called: Called) -> Result<Answer, ApiError> {
    if called.tool.read_only() && called.outcome != Outcome::Refused {
        match state.invocations.defer(ctx.tenant(), called.invocation) {
            Ok(()) => return Ok(called.answer),
            Err(row) => write(state, ctx, &row).await?,
        }
    } else {
        write(state, ctx, &called.invocation).await?;
    }
    Ok(called.answer)
}
