//! Retraining requests and their review, training a candidate checkpoint under an approved request, and
//! evaluating a checkpoint on the observations its contract held out.

use crate::rules::lqm::family::Algorithm;
use crate::rules::lqm::lifecycle::{self, ModelFacts, Operation};
use crate::rules::lqm::records::{CheckpointBody, DataVersion, EvaluationBody, Holdout, RequestBody, SubmissionBody};
use crate::rules::lqm::retraining::{self, Decision, RequestState};
use crate::tables::lqm::models;
use crate::tables::lqm::training::{self, Checkpoint, Evaluation, Request, Review, Submission};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde::Deserialize;
use serde_json::{Value, json};

use super::fit::{self, Criteria};
use super::{crashed, gate_closed, invalid, registry};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};

/// `POST /lqm/models/{uid}/retraining-requests`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrainingInput {
    /// A contract of this model: the data to train on.
    #[schema(pattern = "^lqc_[0-9A-HJKMNP-TV-Z]{26}$", example = "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub contract_uid: String,
    /// An algorithm of the model's task family (default: the family's, `holt_winters`, `robust_z` or
    /// `historical_var`).
    #[serde(default)]
    pub algorithm: Option<Algorithm>,
    /// The algorithm's hyperparameters (defaults apply to what is left out): `holt_winters` takes `trend`,
    /// `damped`, `seasonal` (`none`, `additive`, `multiplicative`) and `period`; `robust_z` takes
    /// `threshold`; the VaR algorithms take `cutoff`.
    #[serde(default)]
    #[schema(value_type = Option<Object>, example = json!({"trend": true}))]
    pub hyperparameters: Option<Value>,
    /// Why the model should be retrained.
    #[schema(value_type = fiscus_domain::fields::Text<1, 2000>, inline, example = "Quarterly recalibration on the latest observed data")]
    pub reason: String,
}

/// `POST /lqm/retraining-requests/{requestUid}/decision`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    pub decision: Decision,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline, example = "Data contract and scope reviewed; candidate training authorised")]
    pub note: Option<String>,
}

/// `POST /lqm/checkpoints/{uid}/evaluation`.
#[derive(Clone, Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluationInput {
    #[serde(default, deserialize_with = "fiscus_domain::api::objects::optional_object")]
    pub criteria: Option<Criteria>,
}

pub async fn request(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    model_id: &str,
    r: RetrainingInput,
) -> Result<Request, Failure> {
    if !fiscus_domain::fields::text_ok(&r.reason, 1, 2000) {
        return Err(invalid("reason", "from 1 to 2000 characters, not blank, no control characters"));
    }
    let model = registry::model(services, tenant, model_id).await?;
    // The model's task family is the model's own (chosen at registration): an algorithm or hyperparameters
    // of another family are well-formed (the body's schema states each algorithm's members) but conflict
    // with this model, so they are 409.
    let family = model.body.task_family;
    let algorithm = r.algorithm.unwrap_or(family.default_algorithm());
    if algorithm.family() != family {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!(
                "the model is a {} model; {} is a {} algorithm",
                family.as_str(),
                algorithm.as_str(),
                algorithm.family().as_str()
            ),
        ));
    }
    if r.algorithm.is_none()
        && let Some(Value::Object(given)) = &r.hyperparameters
        && let Some(other) = given.keys().find(|k| !fit::members(algorithm).contains(&k.as_str()))
    {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!(
                "the model is a {} model, trained with {} unless `algorithm` names another: `{other}` is not one of its hyperparameters ({})",
                family.as_str(),
                algorithm.as_str(),
                fit::members(algorithm).join(", ")
            ),
        ));
    }
    let hyperparameters = fit::hyperparameters(algorithm, r.hyperparameters)?;
    let mut conn = services.store.read().await?;
    let contract = match models::get_contract(&mut conn, services.store.seal_key(), tenant, &r.contract_uid).await {
        Err(StoreError::NotFound) => {
            return Err(Failure::missing("contract_uid", "no such contract in this workspace"));
        }
        other => other?,
    };
    drop(conn);
    if contract.body.model_id != model.id {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!("the contract {} is model {}'s", contract.id, contract.body.model_id),
        ));
    }
    let body = RequestBody {
        model_id: model.id.clone(),
        contract_id: contract.id.clone(),
        contract_hash: contract.content_hash.clone(),
        algorithm,
        hyperparameters,
        reason: r.reason,
    };
    let record = new_record("retraining request", "lrr", body, caller.actor.clone())?;
    let now = record.created_at;
    let mut tx = services.store.begin().await?;
    training::insert_request(&mut tx, tenant, &record).await?;
    let details = json!({ "model": model.id, "contract": contract.id, "algorithm": algorithm.as_str() });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::LqmRetrainingRequested, &record.id, details, now))
        .await?;
    tx.commit().await?;
    Ok(Request { record, state: RequestState::Pending, review: None, checkpoint_id: None })
}

pub async fn get_request(services: &Services, tenant: &Tenant, id: &str) -> Result<Request, Failure> {
    let mut conn = services.store.read().await?;
    Ok(training::get_request(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// A request with the decisions credentials submitted on it, oldest first.
pub struct Reviewable {
    pub request: Request,
    pub submissions: Vec<Submission>,
}

pub async fn reviewable(services: &Services, tenant: &Tenant, id: &str) -> Result<Reviewable, Failure> {
    let mut conn = services.store.read().await?;
    let request = training::get_request(&mut conn, services.store.seal_key(), tenant, id).await?;
    let submissions = training::submissions_of(&mut conn, services.store.seal_key(), tenant, id).await?;
    Ok(Reviewable { request, submissions })
}

/// The tenant's requests awaiting a person's decision, each with its submissions.
pub async fn pending(services: &Services, tenant: &Tenant) -> Result<Vec<Reviewable>, Failure> {
    let mut conn = services.store.read().await?;
    let key = services.store.seal_key();
    let mut out = Vec::new();
    for request in training::requests_in(&mut conn, key, tenant, RequestState::Pending).await? {
        let submissions = training::submissions_of(&mut conn, key, tenant, &request.record.id).await?;
        out.push(Reviewable { request, submissions });
    }
    Ok(out)
}

fn not_reviewable(s: RequestState) -> Failure {
    Failure::refused_with(
        ErrorCode::NotReviewable,
        format!("the request is {}, not pending: it was decided already", s.as_str()),
        vec![("state", json!(s.as_str()))],
    )
}

fn check_note(note: Option<&str>) -> Result<(), Failure> {
    if note.is_some_and(|n| !fiscus_domain::fields::prose_ok(n, 2000)) {
        return Err(invalid("note", "at most 2000 characters"));
    }
    Ok(())
}

/// Records the decision a credential submits on a pending request over the API. It decides nothing: the
/// request stays `pending` until a person decides it at the console, where the submission is shown beside
/// what the request would train on. A credential never carries the authority of a control (seed, general
/// rule 2), so no scope makes this an approval.
pub async fn submit(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    id: &str,
    d: DecisionInput,
) -> Result<Reviewable, Failure> {
    check_note(d.note.as_deref())?;
    let r = get_request(services, tenant, id).await?;
    retraining::decide(r.state, d.decision).map_err(|e| not_reviewable(e.0))?;
    let body = SubmissionBody {
        request_id: r.record.id.clone(),
        request_hash: r.record.content_hash.clone(),
        decision: d.decision,
        note: d.note,
    };
    let submission = new_record("retraining decision submission", "lrs", body, caller.actor.clone())?;
    let now = submission.created_at;
    let mut tx = services.store.begin().await?;
    // Guarded by the request's state in the same transaction: a submission never lands on a decided request.
    if !training::still_pending(&mut tx, tenant, id).await? {
        let again = get_request(services, tenant, id).await?;
        return Err(not_reviewable(again.state));
    }
    training::insert_submission(&mut tx, tenant, &submission).await?;
    let details = json!({
        "model": r.record.body.model_id, "decision": d.decision.as_str(), "request_hash": r.record.content_hash,
        "submission": submission.id,
    });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::LqmRetrainingDecisionSubmitted, id, details, now))
        .await?;
    tx.commit().await?;
    reviewable(services, tenant, id).await
}

/// A person's decision on a pending request, at the console: approval authorises the training of one
/// candidate and nothing else; rejection and cancellation execute nothing. `request_hash` is the hash the
/// person's page showed: a request that is not that one is not decided.
pub async fn decide(
    services: &Services,
    person: &Caller,
    tenant: &Tenant,
    id: &str,
    d: DecisionInput,
    request_hash: &str,
) -> Result<Request, Failure> {
    if !retraining::may_decide(person.actor.kind) {
        return Err(Failure::refused(ErrorCode::Conflict, "only a person at the console decides a retraining request"));
    }
    check_note(d.note.as_deref())?;
    let r = get_request(services, tenant, id).await?;
    if r.record.content_hash != request_hash {
        return Err(Failure::refused(ErrorCode::Conflict, "the request is not the one shown; nothing was decided"));
    }
    let to = retraining::decide(r.state, d.decision).map_err(|e| not_reviewable(e.0))?;
    let now = now_micros();
    let review = Review { by: person.actor.clone(), at: now, note: d.note };
    let mut tx = services.store.begin().await?;
    if !training::review_request(&mut tx, tenant, id, to, &review).await? {
        let again = get_request(services, tenant, id).await?;
        return Err(not_reviewable(again.state));
    }
    let action = match d.decision {
        Decision::Approve => Change::LqmRetrainingApproved,
        Decision::Reject => Change::LqmRetrainingRejected,
        Decision::Cancel => Change::LqmRetrainingCancelled,
    };
    let details = json!({ "model": r.record.body.model_id, "decision": d.decision.as_str(), "request_hash": r.record.content_hash });
    audit(&mut tx, person, &AuditEntry::of_tenant(tenant, action, id, details, now)).await?;
    tx.commit().await?;
    Ok(Request { state: to, review: Some(review), ..r })
}

/// Trains the candidate an approved request authorises: fits the algorithm on the contract's training
/// observations (read again and checked against the contract's hash) and records the checkpoint, whose
/// hash covers the fitted parameters and the exact data version. The approval is spent by it.
pub async fn train(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    request_id: &str,
) -> Result<Checkpoint, Failure> {
    let r = get_request(services, tenant, request_id).await?;
    let facts = ModelFacts {
        contracts: 1,
        pending_requests: usize::from(r.state == RequestState::Pending),
        approved_requests: usize::from(r.state == RequestState::Approved),
        serving: false,
    };
    if let Err(reasons) = lifecycle::gate(Operation::Training, &facts, None) {
        return Err(gate_closed(Operation::Training, &reasons));
    }
    let contract = super::contracts::get(services, tenant, &r.record.body.contract_id).await?;
    let observations = super::contracts::observations(services, tenant, &contract).await?;
    let (train, _) = observations.split((contract.body.observations - contract.body.holdout) as usize);
    let (algorithm, hyper) = (r.record.body.algorithm, r.record.body.hyperparameters.clone());
    let values = train.values.clone();
    let fitted = crashed(
        services.compute.run_inline(&tenant.workspace_id, move || fit::fit(algorithm, &hyper, &values)).await,
    )??;
    let last = train.dates.len() - 1;
    let body = CheckpointBody {
        model_id: r.record.body.model_id.clone(),
        request_id: r.record.id.clone(),
        algorithm,
        hyperparameters: r.record.body.hyperparameters.clone(),
        fitted,
        data_version: DataVersion {
            dataset: contract.body.dataset.id,
            dataset_content_hash: contract.body.dataset.content_hash.clone(),
            contract_hash: contract.content_hash.clone(),
            observations: train.values.len() as i64,
            first_date: train.dates[0].clone(),
            last_date: train.dates[last].clone(),
            data_hash: train.hash()?,
        },
        engine: fit::ENGINE.to_string(),
    };
    let c = new_record("checkpoint", "ckp", body, caller.actor.clone())?;
    let now = c.created_at;
    let mut tx = services.store.begin().await?;
    training::insert_checkpoint(&mut tx, tenant, &c).await?;
    if !training::mark_trained(&mut tx, tenant, request_id, &c.id).await? {
        // Another training took the approval first: this one records nothing.
        return Err(gate_closed(Operation::Training, &[lifecycle::Reason::NoApprovedRetrainingRequest]));
    }
    let details = json!({ "model": c.body.model_id, "request": request_id, "checkpoint_hash": c.content_hash,
                          "algorithm": algorithm.as_str() });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::LqmCheckpointTrained, &c.id, details, now)).await?;
    tx.commit().await?;
    Ok(c)
}

/// A checkpoint with its evaluation, if any.
pub async fn checkpoint(
    services: &Services,
    tenant: &Tenant,
    id: &str,
) -> Result<(Checkpoint, Option<Evaluation>), Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let c = training::get_checkpoint(&mut conn, key, tenant, id).await?;
    let e = training::evaluation_of(&mut conn, key, tenant, id).await?;
    Ok((c, e))
}

/// Evaluates a checkpoint on its contract's held-out observations (which training never saw), against
/// its family's criterion; recorded once, passed or failed.
pub async fn evaluate(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    checkpoint_id: &str,
    input: EvaluationInput,
) -> Result<Evaluation, Failure> {
    let (c, _) = checkpoint(services, tenant, checkpoint_id).await?;
    let dossier = registry::dossier(services, tenant, &c.body.model_id).await?;
    let here = dossier.checkpoint(checkpoint_id).ok_or_else(|| Failure::internal("a checkpoint left its model"))?;
    if let Err(reasons) = lifecycle::gate(Operation::Evaluation, &dossier.facts, Some(&here.facts)) {
        return Err(gate_closed(Operation::Evaluation, &reasons));
    }
    let criteria = input.criteria.unwrap_or_default().for_family(dossier.model.body.task_family)?;
    let request = get_request(services, tenant, &c.body.request_id).await?;
    let contract = super::contracts::get(services, tenant, &request.record.body.contract_id).await?;
    let observations = super::contracts::observations(services, tenant, &contract).await?;
    let (train, holdout) = observations.split(c.body.data_version.observations as usize);
    if train.hash()? != c.body.data_version.data_hash {
        return Err(StoreError::Tampered(format!("checkpoint {} training data no longer matches", c.id)).into());
    }
    let (algorithm, hyper, fitted) = (c.body.algorithm, c.body.hyperparameters.clone(), c.body.fitted.clone());
    let (tv, hv, crit) = (train.values.clone(), holdout.values.clone(), criteria.clone());
    let scored = crashed(
        services
            .compute
            .run_inline(&tenant.workspace_id, move || fit::evaluate(algorithm, &hyper, &fitted, &tv, &hv, &crit))
            .await,
    )??;
    let evaluated_by = caller.actor.clone();
    let last = holdout.dates.len() - 1;
    let body = EvaluationBody {
        checkpoint_id: c.id.clone(),
        checkpoint_hash: c.content_hash.clone(),
        holdout: Holdout {
            observations: holdout.values.len() as i64,
            first_date: holdout.dates[0].clone(),
            last_date: holdout.dates[last].clone(),
            data_hash: holdout.hash()?,
        },
        criteria: serde_json::to_value(&criteria).map_err(|e| Failure::internal(e.to_string()))?,
        metrics: scored.metrics,
        passed: scored.passed,
        independent: evaluated_by != c.created_by,
        trained_by: c.created_by.clone(),
        evaluated_by,
    };
    let e = new_record("evaluation", "lev", body, caller.actor.clone())?;
    let now = e.created_at;
    let mut tx = services.store.begin().await?;
    match training::insert_evaluation(&mut tx, tenant, &e).await {
        Err(StoreError::Conflict(_)) => {
            return Err(gate_closed(Operation::Evaluation, &[lifecycle::Reason::AlreadyEvaluated]));
        }
        other => other?,
    }
    let details = json!({ "checkpoint": c.id, "passed": e.body.passed, "evaluation_hash": e.content_hash });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::LqmCheckpointEvaluated, &e.id, details, now)).await?;
    tx.commit().await?;
    Ok(e)
}
