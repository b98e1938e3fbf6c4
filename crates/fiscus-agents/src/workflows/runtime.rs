//! The durable runtime: what a worker does with a claimed run. It plans from the recorded history, runs
//! the next step and records its outcome (with the run's move) in one transaction, and goes on until the
//! run must wait (a timer, a person's review) or ends. A worker that dies anywhere leaves the history as
//! it was committed; whoever claims the run next plans from it again, so no recorded step runs again, and
//! a step computed but not recorded is computed again from the same recorded inputs, to the same output.

use crate::rules::workflows::definition::{MAX_STEPS, Step};
use crate::rules::workflows::run::{Next, RunState, StepOutcome};
use crate::tables::workflows::{self as store, Claimed};
use fiscus_domain::actor::Actor;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::events::EventType;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde_json::{Value, json};
use std::collections::HashMap;

use super::runs::{change, end, load, plan, step_record};
use super::steps;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::record_workflow;
use fiscus_kernel::governed::{Caller, Failure};

/// The scopes whose operations invoke runs: `POST /workflows/runs` and the workflow A2A gateway.
const INVOKING_SCOPES: [&str; 2] = ["workflow:manage", "agent:execution:invoke"];

/// Advances a claimed run as far as it can go now, then lets go of the claim.
pub async fn advance(services: &Services, worker: &str, claimed: &Claimed) -> Result<(), Failure> {
    let caller = Caller::bare(Actor::worker(worker));
    let tenant = &claimed.tenant;
    // Each pass records one step or ends the run; a definition has at most MAX_STEPS steps.
    for _ in 0..MAX_STEPS + 2 {
        if !step_once(services, &caller, worker, tenant, &claimed.run_id).await? {
            return Ok(());
        }
    }
    Err(Failure::internal(format!("run {} did not settle after every step", claimed.run_id)))
}

/// Does the run's next thing; `true` when there is more to do now.
async fn step_once(
    services: &Services,
    caller: &Caller,
    worker: &str,
    tenant: &Tenant,
    run_id: &str,
) -> Result<bool, Failure> {
    let (run, recorded) = load(services, tenant, run_id).await?;
    if run.state.is_ended() || run.state == RunState::AwaitingReview {
        let mut tx = services.store.begin().await?;
        store::release(&mut tx, run_id, worker).await?;
        tx.commit().await?;
        return Ok(false);
    }
    // Authority is read at each step, not when the run was invoked: the application that invoked it must
    // still be active and hold a scope that invokes runs (`workflow:manage`, or `agent:execution:invoke` for
    // the A2A gateway) within its workspace's entitlement, else the run fails here.
    if let Some(application) = run.record.created_by.application_id() {
        let held = {
            let mut conn = services.store.read().await?;
            fiscus_store::applications::authority(&mut conn, &tenant.workspace_id, application).await?
        };
        let stopped = if !held.is_some_and(|scopes| INVOKING_SCOPES.iter().any(|s| scopes.contains(s))) {
            Some((
                RunState::Failed,
                json!({ "reason": "authority_withdrawn",
                "detail": "the application that invoked the run is no longer active or no longer holds a scope that invokes runs" }),
            ))
        } else if !super::gateway::still_allowed(services, tenant, application, run_id, &run.record.body.version_id)
            .await?
        {
            // A run an agent started through the workflow gateway stops once an admin withdraws its version
            // from the application's allowlist (the workflow suspended for that application's agents).
            Some((
                RunState::Cancelled,
                json!({ "reason": "allowlist_withdrawn",
                "detail": "an admin withdrew the run's workflow version from its application's workflow-tool allowlist" }),
            ))
        } else {
            None
        };
        if let Some((to, detail)) = stopped {
            let mut tx = services.store.begin().await?;
            end(&mut tx, tenant, caller, &run, &recorded, to, detail).await?;
            store::release(&mut tx, run_id, worker).await?;
            tx.commit().await?;
            return Ok(false);
        }
    }
    let (version, next) = plan(services, tenant, &run, &recorded).await?;
    let i = match next {
        Next::Run(i) => i,
        ended => {
            let (to, detail) = match &ended {
                Next::Complete => (RunState::Completed, json!({})),
                Next::Fail { step } => (RunState::Failed, json!({"step": step})),
                Next::Cancel { step } => (RunState::Cancelled, json!({"reason": "review_rejected", "step": step})),
                Next::Run(_) => unreachable!("matched above"),
            };
            let mut tx = services.store.begin().await?;
            end(&mut tx, tenant, caller, &run, &recorded, to, detail).await?;
            store::release(&mut tx, run_id, worker).await?;
            tx.commit().await?;
            return Ok(false);
        }
    };
    let step = &version.body.definition.steps[i];
    let outputs: HashMap<String, Value> =
        recorded.iter().map(|s| (s.body.step.clone(), s.body.output.clone())).collect();
    let (outcome, output) = match step {
        Step::Review(r) => {
            // A person decides at the console; the run waits, claimed by nobody.
            let mut tx = services.store.begin().await?;
            if store::move_run(&mut tx, tenant, run_id, run.state, RunState::AwaitingReview, None, None).await? {
                let detail = json!({"step": r.id, "title": r.title});
                record_workflow(
                    &mut tx,
                    tenant,
                    caller,
                    change(&run, Some(run.state), RunState::AwaitingReview, EventType::WorkflowAwaitingReview, detail),
                )
                .await?;
            }
            store::release(&mut tx, run_id, worker).await?;
            tx.commit().await?;
            return Ok(false);
        }
        Step::Wait(w) if run.state != RunState::Waiting => {
            // A durable timer: the run is due again when it elapses.
            let due = now_micros() + i64::from(w.seconds) * 1_000_000;
            let mut tx = services.store.begin().await?;
            store::move_run(&mut tx, tenant, run_id, run.state, RunState::Waiting, None, Some(due)).await?;
            store::release(&mut tx, run_id, worker).await?;
            tx.commit().await?;
            return Ok(false);
        }
        Step::Wait(w) => (StepOutcome::Completed, json!({"seconds": w.seconds})),
        Step::ReadPrices(_) | Step::ReadSeries(_) => {
            let Some(pin) = run.record.body.pins.iter().find(|p| p.step == step.id()) else {
                return Err(Failure::internal(format!("run {run_id}: step {} was never pinned", step.id())));
            };
            match steps::read(services, &tenant.workspace_id, step, pin).await {
                Ok(read) => read,
                // The data is no longer what the run pinned (edited or gone): retrying cannot help, so the
                // run fails, visibly, naming why. A database that does not answer is retried.
                Err(Failure::Store(StoreError::Corrupt(why) | StoreError::Tampered(why))) => {
                    (StepOutcome::Failed, json!({"error": format!("the pinned data cannot be read as pinned: {why}")}))
                }
                Err(Failure::NotFound) => {
                    (StepOutcome::Failed, json!({"error": format!("dataset {} is gone", pin.dataset)}))
                }
                // The workspace lost its entitlement to the data after the run was queued: nothing is read.
                Err(Failure::Refused { code: code @ ErrorCode::EntitlementMissing, detail, .. }) => {
                    (StepOutcome::Failed, json!({"error": detail, "code": code.code()}))
                }
                Err(other) => return Err(other),
            }
        }
        Step::Measure(_) | Step::Check(_) | Step::Report(_) => {
            let step = step.clone();
            services
                .compute
                .run_inline(&tenant.workspace_id, move || steps::compute(&step, &outputs, false))
                .await
                .map_err(|_| Failure::internal("a workflow step's computation crashed"))?
        }
        connected => (
            StepOutcome::Failed,
            json!({"error": format!("{} steps are not run by this runtime", connected.kind().as_str())}),
        ),
    };
    let record = step_record(&run, step.id(), step.kind(), recorded.len(), outcome, output, caller)?;
    let mut tx = services.store.begin().await?;
    match store::insert_step(&mut tx, tenant, &record).await {
        // Another worker recorded it first (this one's claim had gone stale): plan again from the history.
        Err(StoreError::Conflict(_)) => return Ok(true),
        other => other?,
    }
    if run.state != RunState::Running
        && !store::move_run(&mut tx, tenant, run_id, run.state, RunState::Running, None, Some(now_micros())).await?
    {
        return Ok(true);
    }
    tx.commit().await?;
    Ok(true)
}
