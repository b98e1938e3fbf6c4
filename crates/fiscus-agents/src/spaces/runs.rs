//! Runs of a space: started under its active version (planned by the native runtime from the prompt), in the
//! request or on the queue, each tool call made as the asking application with only the scopes of the
//! space's tools, every call recorded and sealed, and the run ended with an answer and an output hash.
//!
//! `start` and `execute` take, beside the services, the [`Dispatcher`] the composition hands down: a run's
//! tool calls go through the service's own routes (`dispatch`), so a tool can never do what its operation
//! would refuse.

use fiscus_domain::audit_action::Change;
use std::sync::Arc;

use crate::rules::spaces::records::{CallBody, RunBody};
use crate::rules::spaces::{AgentRunState, MAX_PROMPT, ModelSelection, RUN_CREDITS, RunMode, plan};
use crate::tables::spaces::{self as store, Call, Run};
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::{seal, seal_bytes};
use fiscus_domain::ids::new_id;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::{Principal, Tenant};
use fiscus_kernel::tables::credits::{EntryKind, NewEntry};
use fiscus_store::StoreError;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::dispatch::{self, Dispatched, Dispatcher};
use crate::tools;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};
use fiscus_kernel::settings::AgentQueue;

/// A tool's answer larger than this is kept as its hash only.
const MAX_KEPT_RESPONSE: usize = 64 * 1024;
/// What a client waits before asking again when the runtime is full.
pub const RETRY_AFTER_SECONDS: u64 = 5;

/// What to run.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpaceRunRequest {
    /// What to do, in words; the native runtime plans its calls from them.
    #[schema(value_type = fiscus_domain::fields::Text<1, 4000>, inline, example = "How did AAPL move? Show its prices.")]
    pub prompt: String,
    /// `auto` (in the request when it plans at most three calls, else on the queue), `sync` or `async`.
    #[serde(default = "auto")]
    pub execution_mode: RunMode,
    /// `auto_native`: the deterministic local runtime.
    #[serde(default = "native")]
    pub model_selection: ModelSelection,
}

fn auto() -> RunMode {
    RunMode::Auto
}

fn native() -> ModelSelection {
    ModelSelection::AutoNative
}

/// A run as started: ended in the request, or queued.
pub enum Started {
    Ended(Run),
    Queued(Run),
}

/// Starts a run of space `space_id` for `principal`. Refused, with nothing written, when the prompt names
/// nothing the playbook handles (422), the space is suspended or its active version declares a tool that is
/// no longer served (409), it asks for the queue (`async`) and there is no queue driver (503), the workspace's
/// runs fill the runtime's capacity (429), or the credits do not cover it (402).
pub async fn start(
    services: &Services,
    dispatcher: &Dispatcher,
    principal: &Principal,
    caller: &Caller,
    space_id: &str,
    request: AgentSpaceRunRequest,
    request_id: &str,
) -> Result<Started, Failure> {
    let tenant = &principal.tenant;
    if !fiscus_domain::fields::text_ok(&request.prompt, 1, MAX_PROMPT) {
        return Err(Failure::Invalid(vec![("prompt", format!("1 to {MAX_PROMPT} characters of text"))]));
    }
    let standing = super::standing(services, tenant, space_id).await?;
    let Some(version) = standing.active else {
        return Err(Failure::refused(
            ErrorCode::SpaceNotRunnable,
            "the space is suspended: an operator must promote a version before it runs again",
        ));
    };
    let definition = &version.body.definition;
    let problems = definition.check();
    if !problems.is_empty() {
        return Err(Failure::refused(
            ErrorCode::SpaceNotRunnable,
            format!("the active version {} cannot run here: {}", version.id, problems.join("; ")),
        ));
    }
    let calls = plan(definition, &request.prompt);
    if calls.is_empty() {
        let words: Vec<&str> = definition.playbook.iter().flat_map(|r| r.when_any.iter().map(String::as_str)).collect();
        return Err(Failure::Invalid(vec![(
            "prompt",
            format!("names nothing this space's playbook handles; its rules answer to: {}", words.join(", ")),
        )]));
    }
    let queue_available = services.settings.agent_queue != AgentQueue::None;
    let queued = request.execution_mode.queued(calls.len(), queue_available);
    if queued && !queue_available {
        return Err(Failure::refused(
            ErrorCode::QueueUnavailable,
            "this run would go on the queue and no queue driver is configured (agent_queue = \"none\"); ask for \
             execution_mode sync",
        ));
    }
    // The space's grant: the caller's scopes, narrowed to those of the tools the space declares.
    let mut tool_scopes = Vec::new();
    for t in &definition.tools {
        if let Some(s) = fiscus_domain::catalogue::by_id(t).and_then(|op| op.scope) {
            tool_scopes.push(s);
        }
    }
    let declared = ScopeSet::parse(&tool_scopes.join(" ")).map_err(|e| Failure::internal(e.to_string()))?;
    let scopes = principal.scopes.intersection(&declared);
    let now = now_micros();
    let body = RunBody {
        space_id: space_id.to_string(),
        version_id: version.id.clone(),
        definition_hash: version.body.definition_hash.clone(),
        execution_id: new_id("aex"),
        prompt_hash: seal_bytes(request.prompt.as_bytes()),
        prompt: request.prompt,
        execution_mode: request.execution_mode,
        model_selection: request.model_selection,
        queued,
        plan: calls,
        application_id: principal.application_id.clone(),
        credential_id: principal.credential_id.clone(),
        credential_kind: principal.credential_kind,
        service_class: principal.service_class.clone(),
        scopes: scopes.iter().map(str::to_string).collect(),
        credits: RUN_CREDITS,
    };
    let run = new_record("agent run", "arn", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    // Capacity is counted in the transaction that adds to it (serialised per workspace by the credit lock
    // below on PostgreSQL, and by SQLite's one writer), so two requests cannot both take the last place.
    let debit = NewEntry {
        id: &new_id("crd"),
        kind: EntryKind::Consumption,
        credits: RUN_CREDITS,
        reason: "agent space run",
        reference: Some(&run.id),
        created_at: now,
    };
    let Some(_) = fiscus_kernel::tables::credits::debit(&mut tx, tenant, &debit).await? else {
        return Err(Failure::refused(
            ErrorCode::CreditsExhausted,
            format!(
                "a run costs {RUN_CREDITS} AI credit and the balance does not cover it; see GET /ai-credits/balance"
            ),
        ));
    };
    let in_flight = store::in_flight(tx.conn(), tenant).await?;
    if in_flight >= i64::from(services.settings.agent_capacity) {
        return Err(Failure::refused_with(
            ErrorCode::CapacityExhausted,
            format!(
                "this workspace has {in_flight} runs queued or running, the runtime's capacity for it; try again \
                 in {RETRY_AFTER_SECONDS} s"
            ),
            vec![("retry_after", json!(RETRY_AFTER_SECONDS))],
        ));
    }
    let first = if queued { AgentRunState::Queued } else { AgentRunState::Running };
    store::insert_run(&mut tx, tenant, &run, first).await?;
    let details = json!({
        "space_id": run.body.space_id, "version_id": run.body.version_id, "execution_id": run.body.execution_id,
        "prompt_hash": run.body.prompt_hash, "calls": run.body.plan.len(), "queued": queued,
    });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::AgentSpaceRunStarted, &run.id, details, now)).await?;
    tx.commit().await?;
    if queued {
        services.spaces_wake.notify_one();
        let mut conn = services.store.read().await?;
        return Ok(Started::Queued(store::get_run(&mut conn, services.store.seal_key(), tenant, &run.id).await?));
    }
    Ok(Started::Ended(execute(services, dispatcher, tenant, &run.id, request_id).await?))
}

/// A run with its calls; another tenant's is `NotFound`.
pub async fn load(services: &Services, tenant: &Tenant, run_id: &str) -> Result<(Run, Vec<Call>), Failure> {
    if !fiscus_domain::ids::is_id_of("arn", run_id) {
        return Err(Failure::NotFound);
    }
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let run = store::get_run(&mut conn, key, tenant, run_id).await?;
    let calls = store::calls_of(&mut conn, key, tenant, run_id).await?;
    Ok((run, calls))
}

/// The run of an execution, with its calls.
pub async fn load_execution(
    services: &Services,
    tenant: &Tenant,
    execution_id: &str,
) -> Result<(Run, Vec<Call>), Failure> {
    if !fiscus_domain::ids::is_id_of("aex", execution_id) {
        return Err(Failure::NotFound);
    }
    let run = {
        let mut conn = services.store.read().await?;
        store::run_of_execution(&mut conn, services.store.seal_key(), tenant, execution_id).await?
    };
    load(services, tenant, &run.record.id).await
}

/// The caller a run's calls are made as: its application and credential, with the space's scopes only.
fn principal_of(tenant: &Tenant, body: &RunBody) -> Result<Principal, Failure> {
    Ok(Principal {
        tenant: tenant.clone(),
        application_id: body.application_id.clone(),
        credential_id: body.credential_id.clone(),
        credential_kind: body.credential_kind,
        scopes: ScopeSet::from_stored(&body.scopes.join(" ")),
        service_class: body.service_class.clone(),
    })
}

/// Carries a run to its end from what it recorded: each planned call not recorded yet is made and recorded
/// (a call recorded already is never made again; a call made but not recorded when a worker died is made
/// again, which a read allows), then the run ends `completed` when every call succeeded, else `failed`.
pub async fn execute(
    services: &Services,
    dispatcher: &Dispatcher,
    tenant: &Tenant,
    run_id: &str,
    request_id: &str,
) -> Result<Run, Failure> {
    let (mut run, mut recorded) = load(services, tenant, run_id).await?;
    if run.state.is_ended() {
        return Ok(run);
    }
    if run.state == AgentRunState::Queued {
        let mut tx = services.store.begin().await?;
        let moved = store::move_run(
            &mut tx,
            tenant,
            run_id,
            AgentRunState::Queued,
            AgentRunState::Running,
            Some(now_micros()),
            None,
        )
        .await?;
        tx.commit().await?;
        if !moved {
            return Err(Failure::refused(ErrorCode::Conflict, "the run moved meanwhile"));
        }
        run = load(services, tenant, run_id).await?.0;
    }
    let granted = principal_of(tenant, &run.record.body)?;
    for (i, planned) in run.record.body.plan.iter().enumerate() {
        let seq = i as i64 + 1;
        if recorded.iter().any(|c| c.body.seq == seq) {
            continue;
        }
        // The space is read at each call too: a space an operator suspended (or promoted another version
        // of) since the run was asked for makes no further call, and the run ends saying so (issue 54).
        let standing = super::standing(services, tenant, &run.record.body.space_id).await?;
        match &standing.active {
            None => return end(services, tenant, &run, &recorded, Some("the space was suspended")).await,
            Some(v) if v.id != run.record.body.version_id => {
                let why = "the space's version in force is no longer the one the run was planned under";
                return end(services, tenant, &run, &recorded, Some(why)).await;
            }
            Some(_) => {}
        }
        // Authority is read at the moment of each call: the application must still be active, and the call
        // carries only the scopes captured when the run was asked for that the application and its
        // workspace still hold now.
        let Some(now_held) = ({
            let mut conn = services.store.read().await?;
            fiscus_store::applications::authority(&mut conn, &tenant.workspace_id, &granted.application_id).await?
        }) else {
            let why = "the application that asked for the run is no longer active";
            return end(services, tenant, &run, &recorded, Some(why)).await;
        };
        let principal = Principal { scopes: granted.scopes.intersection(&now_held), ..granted.clone() };
        let caller = Dispatched { principal: Arc::new(principal), signed: None };
        let request_hash = seal(&Value::Object(planned.arguments.clone())).unwrap_or_else(|_| seal_bytes(b""));
        let (status, text, json_body) = match tools::find(dispatcher.document(), &planned.tool) {
            Some(tool) => match dispatch::call(dispatcher, &caller, tool, &planned.arguments, request_id).await {
                Ok(answer) => (i64::from(answer.status), answer.text, answer.json),
                Err(bad) => (422, json!({ "error": bad.0 }).to_string(), true),
            },
            None => (404, json!({ "error": "no such tool" }).to_string(), true),
        };
        let response = if json_body && text.len() <= MAX_KEPT_RESPONSE {
            serde_json::from_str(&text).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        let body = CallBody {
            run_id: run_id.to_string(),
            seq,
            rule: planned.rule.clone(),
            tool: planned.tool.clone(),
            arguments: planned.arguments.clone(),
            request_hash,
            status,
            response,
            response_hash: seal_bytes(text.as_bytes()),
        };
        let call = new_record("agent run call", "acl", body, fiscus_domain::actor::Actor::runtime("auto_native"))?;
        let mut tx = services.store.begin().await?;
        match store::insert_call(&mut tx, tenant, &call).await {
            Ok(()) => {
                tx.commit().await?;
                recorded.push(call);
            }
            // Another worker recorded this call first (it took the run over): read what it recorded.
            Err(StoreError::Conflict(_)) => {
                drop(tx);
                recorded = load(services, tenant, run_id).await?.1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    end(services, tenant, &run, &recorded, None).await
}

/// Ends a running run with its answer and output hash (over its calls' record hashes, in order).
async fn end(
    services: &Services,
    tenant: &Tenant,
    run: &Run,
    calls: &[Call],
    refusal: Option<&str>,
) -> Result<Run, Failure> {
    let failed: Vec<&Call> = calls.iter().filter(|c| c.body.status >= 400).collect();
    let to = if refusal.is_some() || !failed.is_empty() { AgentRunState::Failed } else { AgentRunState::Completed };
    let answer = match refusal {
        Some(why) => format!("Not carried out: {why}."),
        None => format!(
            "Called {} tool(s): {}.{}",
            calls.len(),
            calls.iter().map(|c| format!("{} ({})", c.body.tool, c.body.status)).collect::<Vec<_>>().join(", "),
            if failed.is_empty() { String::new() } else { format!(" {} call(s) failed.", failed.len()) }
        ),
    };
    let hashes: Vec<&str> = calls.iter().map(|c| c.content_hash.as_str()).collect();
    let output_hash = seal(&json!(hashes)).map_err(|_| Failure::internal("output hash"))?;
    let mut tx = services.store.begin().await?;
    let moved = store::move_run(
        &mut tx,
        tenant,
        &run.record.id,
        AgentRunState::Running,
        to,
        None,
        Some((&answer, &output_hash, now_micros())),
    )
    .await?;
    tx.commit().await?;
    let (ended, _) = load(services, tenant, &run.record.id).await?;
    if !moved && !ended.state.is_ended() {
        return Err(Failure::refused(ErrorCode::Conflict, "the run moved meanwhile"));
    }
    Ok(ended)
}
