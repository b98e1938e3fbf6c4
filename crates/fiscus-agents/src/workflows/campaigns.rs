//! Validation campaigns: every case of a suite run to its end in the request, deterministically, with
//! virtual waits (nothing waits), virtual reviews (the case's decisions) and virtual artifacts (reports
//! hashed, not kept); reads and computations are real, on data pinned once for the whole campaign. The
//! result is one sealed record.

use crate::rules::workflows::campaign::{self, Case, Suite};
use crate::rules::workflows::definition::Step;
use crate::rules::workflows::records::{CampaignBody, CampaignCase, CampaignStep};
use crate::rules::workflows::run::{self, Next, ReviewDecision, RunState, StepOutcome};
use crate::tables::workflows::{self as store, Campaign};
use fiscus_domain::audit_action::Change;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use serde_json::{Value, json};
use std::collections::HashMap;

use super::{canonical, checked, load_version, new_record, steps};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// Runs the suite (or, without one, one default case) on a version and seals the campaign. A prohibited
/// step, a suite of no case or a malformed case refuses the whole suite (422 `invalid_suite` with `problems`); nothing is recorded then.
pub async fn validate(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    version_id: &str,
    suite: Option<Suite>,
) -> Result<Campaign, Failure> {
    let version = load_version(services, tenant, version_id).await?;
    let definition = &version.body.definition;
    checked(definition)?;
    if let Err(problems) = campaign::check(definition, suite.as_ref()) {
        return Err(Failure::refused_with(
            ErrorCode::InvalidSuite,
            format!(
                "{} problem(s): {}",
                problems.len(),
                problems.iter().map(|p| p.reason.as_str()).collect::<Vec<_>>().join("; ")
            ),
            vec![("problems", json!(problems))],
        ));
    }
    let suite = suite.unwrap_or_default();
    let pins = steps::pin(services, &tenant.workspace_id, definition).await?;
    // Reads once: every case sees the same pinned data.
    let mut reads: HashMap<String, (StepOutcome, Value)> = HashMap::new();
    for pin in &pins {
        let step =
            &definition.steps[definition.position(&pin.step).ok_or_else(|| Failure::internal("pin of no step"))?];
        reads.insert(pin.step.clone(), steps::read(services, &tenant.workspace_id, step, pin).await?);
    }
    let cases = suite.cases();
    let definition_for_pool = definition.clone();
    let results = services
        .compute
        .run_inline(&tenant.workspace_id, move || {
            cases.iter().map(|c| run_case(&definition_for_pool, c, &reads)).collect::<Result<Vec<_>, Failure>>()
        })
        .await
        .map_err(|_| Failure::internal("a validation campaign's computation crashed"))??;
    let passed = results.iter().all(|c| c.passed);
    let body = CampaignBody {
        workflow_id: version.body.workflow_id.clone(),
        version_id: version.id.clone(),
        definition_hash: version.body.definition_hash.clone(),
        suite,
        pins,
        cases: results,
        passed,
    };
    let record = new_record("workflow campaign", "wfc", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_campaign(&mut tx, tenant, &record).await?;
    let details = json!({"version_uid": version.id, "passed": passed, "content_hash": record.content_hash});
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::WorkflowCampaignRecorded, &record.id, details, record.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(record)
}

/// One case, from the first step to its end.
fn run_case(
    definition: &crate::rules::workflows::definition::Definition,
    case: &Case,
    reads: &HashMap<String, (StepOutcome, Value)>,
) -> Result<CampaignCase, Failure> {
    let mut history: HashMap<String, StepOutcome> = HashMap::new();
    let mut outputs: HashMap<String, Value> = HashMap::new();
    let mut recorded: Vec<CampaignStep> = Vec::new();
    let end = loop {
        let i = match run::plan(definition, &history) {
            Next::Run(i) => i,
            Next::Complete => break RunState::Completed,
            Next::Fail { .. } => break RunState::Failed,
            Next::Cancel { .. } => break RunState::Cancelled,
        };
        if recorded.len() > definition.steps.len() {
            return Err(Failure::internal("a campaign case did not settle"));
        }
        let step = &definition.steps[i];
        let (outcome, output) = match step {
            Step::ReadPrices(_) | Step::ReadSeries(_) => {
                reads.get(step.id()).cloned().ok_or_else(|| Failure::internal("a read step was not read"))?
            }
            Step::Wait(w) => (StepOutcome::Completed, json!({"seconds": w.seconds, "virtual": true})),
            Step::Review(r) => {
                let decision = case.reviews.get(&r.id).copied().unwrap_or(ReviewDecision::Approve);
                (decision.outcome(), json!({"title": r.title, "decision": decision.as_str(), "virtual": true}))
            }
            other => steps::compute(other, &outputs, true),
        };
        let (_, output_hash) = canonical("campaign step", &output)?;
        history.insert(step.id().to_string(), outcome);
        outputs.insert(step.id().to_string(), output.clone());
        recorded.push(CampaignStep { step: step.id().to_string(), kind: step.kind(), outcome, output, output_hash });
    };
    let pairs: Vec<(String, String)> = recorded.iter().map(|s| (s.step.clone(), s.output_hash.clone())).collect();
    Ok(CampaignCase {
        name: case.name.clone(),
        state: end,
        expected: case.expect,
        passed: case.expect.is_none_or(|e| e == end),
        steps: recorded,
        evidence_hash: steps::evidence_hash(&pairs)?,
    })
}
