//! Proofs of value: a workflow's runs measured against the manual baseline the caller states, sealed.

use crate::rules::workflows::definition::StepKind;
use crate::rules::workflows::records::{Baseline, ProofBody};
use crate::rules::workflows::run::{RunState, StepOutcome};
use crate::rules::workflows::value::{RunFacts, figures};
use crate::tables::workflows::{self as store, Proof};
use fiscus_domain::audit_action::Change;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde::Deserialize;
use serde_json::json;

use super::new_record;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// The most recent runs a proof counts.
pub const MAX_RUNS: usize = 1000;

/// What to measure.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ProofOfValueRequest)]
pub struct ProofRequest {
    /// The workflow (`wfl_…`): every version's runs count.
    #[schema(pattern = "^wfl_[0-9A-HJKMNP-TV-Z]{26}$", example = "wfl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub workflow_uid: String,
    #[serde(deserialize_with = "fiscus_domain::api::objects::object")]
    pub baseline: Baseline,
}

/// Measures a workflow's runs (its most recent 1,000) against the baseline and seals the result.
pub async fn prove(services: &Services, caller: &Caller, tenant: &Tenant, req: ProofRequest) -> Result<Proof, Failure> {
    let b = &req.baseline;
    let mut errors = Vec::new();
    if !(1..=100_000).contains(&b.minutes_per_run) {
        errors.push(("baseline.minutes_per_run", "1 to 100000".to_string()));
    }
    if b.minutes_per_review > 100_000 {
        errors.push(("baseline.minutes_per_review", "0 to 100000".to_string()));
    }
    if !(0..=100_000_000_000).contains(&b.hourly_cost_minor) {
        errors.push(("baseline.hourly_cost_minor", "0 to 100000000000".to_string()));
    }
    if fiscus_domain::money::Currency::parse(&b.currency).is_none() {
        errors.push(("baseline.currency", format!("`{}` is not an ISO 4217 currency", b.currency)));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let not_here = || Failure::missing("workflow_uid", format!("no workflow `{}` here", req.workflow_uid));
    if !fiscus_domain::ids::is_id_of("wfl", &req.workflow_uid) {
        return Err(not_here());
    }
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let workflow = match store::get_workflow(&mut conn, key, tenant, &req.workflow_uid).await {
        Err(StoreError::NotFound) => return Err(not_here()),
        other => other?,
    };
    let mut runs = store::runs_of(&mut conn, key, tenant, &workflow.id).await?;
    runs.sort_by(|a, b| a.record.id.cmp(&b.record.id));
    let runs: Vec<_> = runs.into_iter().rev().take(MAX_RUNS).collect();
    let mut facts = Vec::with_capacity(runs.len());
    let mut evidence = Vec::new();
    for run in &runs {
        let mut f = RunFacts {
            state: run.state,
            duration_micros: run.ended_at.map(|end| end - run.record.created_at),
            steps_automated: 0,
            reviews: 0,
        };
        if run.state == RunState::Completed {
            for s in store::steps_of(&mut conn, key, tenant, &run.record.id).await? {
                match (s.body.kind, s.body.outcome) {
                    (StepKind::Review, _) => f.reviews += 1,
                    (_, StepOutcome::Completed) => f.steps_automated += 1,
                    _ => {}
                }
            }
        }
        if let Some(hash) = &run.evidence_hash {
            evidence.push((run.record.id.clone(), hash.clone()));
        }
        facts.push(f);
    }
    drop(conn);
    let body = ProofBody {
        workflow_id: workflow.id.clone(),
        workflow_name: workflow.body.name.clone(),
        figures: figures(&req.baseline, &facts),
        baseline: req.baseline,
        evidence,
    };
    let proof = new_record("proof of value", "wpv", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_proof(&mut tx, tenant, &proof).await?;
    let details =
        json!({"workflow_uid": workflow.id, "content_hash": proof.content_hash, "runs": proof.body.figures.runs});
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::WorkflowProofOfValueRecorded, &proof.id, details, proof.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(proof)
}
