//! Runs: starting one on pinned data (`workflow.invoked`), reading them, cancelling one, and a person's
//! review decision at the console.

use crate::rules::workflows::definition::Step;
use crate::rules::workflows::records::{RunBody, StepBody};
use crate::rules::workflows::run::{self, Next, ReviewDecision, ReviewRefusal, RunState, StepOutcome};
use crate::tables::workflows::{self as store, Run, Version};
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::ids::new_id;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde_json::json;

use super::{canonical, checked, load_version, new_record, runnable, steps};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{WorkflowChange, owner_of, record_workflow};
use fiscus_kernel::governed::{Caller, Failure};

/// Starts a run of a version: its read steps are pinned to their newest observed datasets, the run is
/// queued for the worker, and `workflow.invoked` is written with it.
pub async fn start(services: &Services, caller: &Caller, tenant: &Tenant, version_id: &str) -> Result<Run, Failure> {
    start_for(services, caller, tenant, version_id, None).await
}

/// As [`start`], for the workflow gateway: `task` (the message that asked for the run) is recorded with the
/// run, in its transaction, under the run's id. A message already recorded is `Store(Conflict)` and starts
/// nothing.
pub async fn start_for(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    version_id: &str,
    task: Option<crate::tables::workflow_gateway::GatewayTask>,
) -> Result<Run, Failure> {
    let version = match load_version(services, tenant, version_id).await {
        Err(Failure::NotFound) => {
            return Err(Failure::missing("version_uid", format!("no workflow version `{version_id}` here")));
        }
        other => other?,
    };
    let definition = &version.body.definition;
    checked(definition)?;
    runnable(definition)?;
    let pins = steps::pin(services, &tenant.workspace_id, definition).await?;
    let body = RunBody {
        workflow_id: version.body.workflow_id.clone(),
        version_id: version.id.clone(),
        definition_hash: version.body.definition_hash.clone(),
        pins,
    };
    let (json, hash) = canonical("workflow run", &body)?;
    let record = Record {
        id: new_id("wfr"),
        body,
        body_json: json,
        content_hash: hash,
        created_by: caller.actor.clone(),
        created_at: now_micros(),
    };
    let mut tx = services.store.begin().await?;
    store::insert_run(&mut tx, tenant, &record).await?;
    if let Some(task) = task {
        let task = crate::tables::workflow_gateway::GatewayTask { run_id: record.id.clone(), ..task };
        crate::tables::workflow_gateway::insert_task(&mut tx, tenant, &task).await?;
    }
    record_workflow(
        &mut tx,
        tenant,
        caller,
        WorkflowChange {
            run_id: &record.id,
            owner: owner_of(&caller.actor),
            workflow_id: &record.body.workflow_id,
            version_id: &record.body.version_id,
            definition_hash: &record.body.definition_hash,
            from: None,
            to: RunState::Queued,
            event: EventType::WorkflowInvoked,
            detail: json!({ "pins": record.body.pins }),
        },
    )
    .await?;
    tx.commit().await?;
    services.workflows_wake.notify_one();
    Ok(Run { record, state: RunState::Queued, evidence_hash: None, ended_at: None })
}

/// A run of the tenant with its recorded steps.
pub async fn load(services: &Services, tenant: &Tenant, id: &str) -> Result<(Run, Vec<store::Step>), Failure> {
    if !fiscus_domain::ids::is_id_of("wfr", id) {
        return Err(Failure::NotFound);
    }
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let run = store::get_run(&mut conn, key, tenant, id).await?;
    let steps = store::steps_of(&mut conn, key, tenant, id).await?;
    Ok((run, steps))
}

/// The run's version and what runs next, from its recorded history.
pub async fn plan(
    services: &Services,
    tenant: &Tenant,
    run: &Run,
    recorded: &[store::Step],
) -> Result<(Version, Next), Failure> {
    let version = load_version(services, tenant, &run.record.body.version_id).await?;
    checked(&version.body.definition)?;
    let history = recorded.iter().map(|s| (s.body.step.clone(), s.body.outcome)).collect();
    let next = run::plan(&version.body.definition, &history);
    Ok((version, next))
}

/// The evidence hash of what a run recorded so far.
pub fn evidence_of(recorded: &[store::Step]) -> Result<String, Failure> {
    let pairs: Vec<(String, String)> =
        recorded.iter().map(|s| (s.body.step.clone(), s.body.output_hash.clone())).collect();
    steps::evidence_hash(&pairs)
}

/// Ends a run in `to` (completed, failed or cancelled) with its evidence hash, and writes its event.
pub async fn end(
    tx: &mut fiscus_store::WriteTx,
    tenant: &Tenant,
    caller: &Caller,
    run: &Run,
    recorded: &[store::Step],
    to: RunState,
    detail: serde_json::Value,
) -> Result<bool, Failure> {
    let evidence = evidence_of(recorded)?;
    let now = now_micros();
    if !store::move_run(tx, tenant, &run.record.id, run.state, to, Some((&evidence, now)), None).await? {
        return Ok(false);
    }
    let event = match to {
        RunState::Completed => EventType::WorkflowCompleted,
        RunState::Failed => EventType::WorkflowFailed,
        RunState::Cancelled => EventType::WorkflowCancelled,
        other => return Err(Failure::internal(format!("a run does not end in {}", other.as_str()))),
    };
    let mut detail = detail;
    detail["evidence_hash"] = json!(evidence);
    record_workflow(tx, tenant, caller, change(run, Some(run.state), to, event, detail)).await?;
    Ok(true)
}

pub fn change<'a>(
    run: &'a Run,
    from: Option<RunState>,
    to: RunState,
    event: EventType,
    detail: serde_json::Value,
) -> WorkflowChange<'a> {
    WorkflowChange {
        run_id: &run.record.id,
        owner: run.record.created_by.application_id(),
        workflow_id: &run.record.body.workflow_id,
        version_id: &run.record.body.version_id,
        definition_hash: &run.record.body.definition_hash,
        from,
        to,
        event,
        detail,
    }
}

fn not_pending(state: RunState) -> Failure {
    Failure::refused_with(
        ErrorCode::RunNotPending,
        format!("the run is {}", state.as_str()),
        vec![("state", json!(state.as_str()))],
    )
}

/// Cancels a run that has not ended (`workflow.cancelled`); what it recorded so far stays, sealed.
pub async fn cancel(services: &Services, caller: &Caller, tenant: &Tenant, id: &str) -> Result<Run, Failure> {
    let (run, recorded) = load(services, tenant, id).await?;
    run::may_cancel(run.state).map_err(|e| not_pending(e.0))?;
    let mut tx = services.store.begin().await?;
    if !end(&mut tx, tenant, caller, &run, &recorded, RunState::Cancelled, json!({"reason": "cancelled"})).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the run moved meanwhile; read it again"));
    }
    tx.commit().await?;
    Ok(load(services, tenant, id).await?.0)
}

/// A person's decision on the review a run awaits. Only an operator with the role to decide (the domain's
/// `may_review`) decides, at the console, the only adapter that calls this; approval lets the run go on,
/// rejection cancels it. The decision is the review step's recorded output, covered by the run's evidence
/// hash.
#[allow(clippy::too_many_arguments)]
pub async fn review(
    services: &Services,
    caller: &Caller,
    role: Role,
    tenant: &Tenant,
    id: &str,
    step_id: &str,
    decision: ReviewDecision,
    note: Option<&str>,
) -> Result<Run, Failure> {
    if caller.actor.kind != ActorKind::Operator {
        return Err(Failure::refused(ErrorCode::Conflict, "only a person at the console reviews a workflow run"));
    }
    let (run, recorded) = load(services, tenant, id).await?;
    match run::may_review(role, run.state) {
        Ok(()) => {}
        Err(ReviewRefusal::NotPending(s)) => return Err(not_pending(s)),
        Err(ReviewRefusal::Role(r)) => {
            return Err(Failure::refused(ErrorCode::Conflict, format!("an {} does not decide a review", r.as_str())));
        }
    }
    let (version, next) = plan(services, tenant, &run, &recorded).await?;
    let Next::Run(i) = next else { return Err(Failure::internal("a run awaiting review has no step to review")) };
    let Step::Review(step) = &version.body.definition.steps[i] else {
        return Err(Failure::internal("a run awaiting review waits on a step that is not a review"));
    };
    if step.id != step_id {
        // The page showed another step: a stale page decides nothing.
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!("the run awaits review at `{}`, not `{step_id}`", step.id),
        ));
    }
    let output = json!({
        "title": step.title,
        "decision": decision.as_str(),
        "reviewer": caller.actor.id,
        "note": note,
    });
    let outcome = decision.outcome();
    let step_record = step_record(
        &run,
        step_id,
        crate::rules::workflows::definition::StepKind::Review,
        recorded.len(),
        outcome,
        output,
        caller,
    )?;
    let mut tx = services.store.begin().await?;
    match store::insert_step(&mut tx, tenant, &step_record).await {
        Err(StoreError::Conflict(_)) => return Err(not_pending(RunState::Running)),
        other => other?,
    }
    let mut all = recorded.clone();
    all.push(step_record);
    match decision {
        ReviewDecision::Approve => {
            if !store::move_run(
                &mut tx,
                tenant,
                id,
                RunState::AwaitingReview,
                RunState::Running,
                None,
                Some(now_micros()),
            )
            .await?
            {
                return Err(not_pending(RunState::Running));
            }
            fiscus_kernel::governed::record::audit(
                &mut tx,
                caller,
                &fiscus_kernel::governed::record::AuditEntry::of_tenant(
                    tenant,
                    Change::WorkflowReviewApproved,
                    id,
                    json!({"step": step_id, "note": note}),
                    now_micros(),
                ),
            )
            .await?;
        }
        ReviewDecision::Reject => {
            if !end(
                &mut tx,
                tenant,
                caller,
                &run,
                &all,
                RunState::Cancelled,
                json!({"reason": "review_rejected", "step": step_id}),
            )
            .await?
            {
                return Err(not_pending(RunState::Running));
            }
        }
    }
    tx.commit().await?;
    services.workflows_wake.notify_one();
    Ok(load(services, tenant, id).await?.0)
}

/// A step's record: its output in canonical form and the hash the run's evidence chains.
pub fn step_record(
    run: &Run,
    step: &str,
    kind: crate::rules::workflows::definition::StepKind,
    seq: usize,
    outcome: StepOutcome,
    output: serde_json::Value,
    caller: &Caller,
) -> Result<store::Step, Failure> {
    let output_hash = canonical("step output", &output)?.1;
    let body = StepBody {
        run_id: run.record.id.clone(),
        step: step.to_string(),
        kind,
        seq: seq as i64,
        outcome,
        output,
        output_hash,
    };
    new_record("workflow step", "wrs", body, caller.actor.clone())
}

/// A run waiting for a person, with what the console shows of it.
pub struct Waiting {
    pub run: Run,
    pub workflow_name: String,
    /// The review step it waits at, and what the reviewer is asked.
    pub step: String,
    pub title: String,
    pub steps: Vec<store::Step>,
}

/// The tenant's runs awaiting review, oldest first.
pub async fn awaiting_review(services: &Services, tenant: &Tenant) -> Result<Vec<Waiting>, Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let waiting = store::runs_in(&mut conn, key, tenant, RunState::AwaitingReview).await?;
    drop(conn);
    let mut out = Vec::with_capacity(waiting.len());
    for run in waiting {
        let mut conn = services.store.read().await?;
        let recorded = store::steps_of(&mut conn, key, tenant, &run.record.id).await?;
        let workflow = store::get_workflow(&mut conn, key, tenant, &run.record.body.workflow_id).await?;
        drop(conn);
        let (version, next) = plan(services, tenant, &run, &recorded).await?;
        let Next::Run(i) = next else { continue };
        let Step::Review(r) = &version.body.definition.steps[i] else { continue };
        out.push(Waiting {
            workflow_name: workflow.body.name,
            step: r.id.clone(),
            title: r.title.clone(),
            steps: recorded,
            run,
        });
    }
    Ok(out)
}
