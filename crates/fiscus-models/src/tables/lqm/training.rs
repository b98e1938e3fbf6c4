//! Retraining requests (reviewed once), the checkpoints trained under them, and their evaluations.

use super::{Fields, columns_differ, insert_record, opt_text, select_one, select_where, text, update_guarded};
use crate::rules::lqm::records::{CheckpointBody, EvaluationBody, RequestBody, SubmissionBody};
use crate::rules::lqm::retraining::RequestState;
use fiscus_domain::actor::Actor;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::Record;
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::model_tables::CHECKPOINTS_SEALED;
pub use fiscus_store::model_tables::EVALUATIONS_SEALED;
pub use fiscus_store::model_tables::REQUESTS_SEALED;
pub use fiscus_store::model_tables::SUBMISSIONS_SEALED;

/// A person's (or a credential's) review of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    pub by: Actor,
    pub at: i64,
    pub note: Option<String>,
}

/// A retraining request and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub record: Record<RequestBody>,
    pub state: RequestState,
    pub review: Option<Review>,
    /// The checkpoint trained under it, once trained.
    pub checkpoint_id: Option<String>,
}

fn request(f: &Fields) -> Result<Request> {
    let record: Record<RequestBody> = f.record()?;
    if f.text("model_id")? != record.body.model_id || f.text("contract_id")? != record.body.contract_id {
        return Err(StoreError::Corrupt(format!(
            "lqm_retraining_requests {}: columns differ from the body",
            record.id
        )));
    }
    let note = f.opt_text("decision_note")?;
    let review = f.stamp("decided_by", "decided_at")?.map(|(by, at)| Review { by, at, note });
    Ok(Request {
        state: f.parsed("state", RequestState::parse)?,
        review,
        checkpoint_id: f.opt_text("checkpoint_id")?,
        record,
    })
}

pub async fn insert_request(tx: &mut WriteTx, tenant: &Tenant, r: &Record<RequestBody>) -> Result<()> {
    let own = [
        ("model_id", text(&r.body.model_id)),
        ("contract_id", text(&r.body.contract_id)),
        ("state", text(RequestState::Pending.as_str())),
    ];
    insert_record(tx, &REQUESTS_SEALED, tenant, r, &own).await
}

pub async fn get_request(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Request> {
    request(&select_one(conn, key, &REQUESTS_SEALED, tenant, id).await?)
}

/// A model's requests, oldest first.
pub async fn requests_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Vec<Request>> {
    select_where(conn, key, &REQUESTS_SEALED, tenant, "model_id", text(model_id)).await?.iter().map(request).collect()
}

/// The tenant's requests standing in `state`, oldest first.
pub async fn requests_in(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    state: RequestState,
) -> Result<Vec<Request>> {
    select_where(conn, key, &REQUESTS_SEALED, tenant, "state", text(state.as_str()))
        .await?
        .iter()
        .map(request)
        .collect()
}

/// A decision a credential submitted on a request (see [`SubmissionBody`]).
pub type Submission = Record<SubmissionBody>;

fn submission(f: &Fields) -> Result<Submission> {
    let s: Submission = f.record()?;
    if f.text("request_id")? != s.body.request_id || f.text("decision")? != s.body.decision.as_str() {
        return Err(columns_differ("lqm_retraining_submissions", &s.id));
    }
    Ok(s)
}

/// Whether the request is still pending, holding its row until the transaction ends (a no-op update: the
/// sealed values do not change), so a decision cannot land between this check and the caller's write.
pub async fn still_pending(tx: &mut WriteTx, tenant: &Tenant, id: &str) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE lqm_retraining_requests SET state = state \
         WHERE workspace_id = $1 AND environment = $2 AND id = $3 AND state = $4",
    )
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(id)
    .bind(RequestState::Pending.as_str())
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records a decision a credential submitted; it changes nothing about the request.
pub async fn insert_submission(tx: &mut WriteTx, tenant: &Tenant, s: &Submission) -> Result<()> {
    let own = [("request_id", text(&s.body.request_id)), ("decision", text(s.body.decision.as_str()))];
    insert_record(tx, &SUBMISSIONS_SEALED, tenant, s, &own).await
}

/// The decisions submitted on a request, oldest first.
pub async fn submissions_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    request_id: &str,
) -> Result<Vec<Submission>> {
    select_where(conn, key, &SUBMISSIONS_SEALED, tenant, "request_id", text(request_id))
        .await?
        .iter()
        .map(submission)
        .collect()
}

/// Records the review of a pending request; `false` when it was no longer pending.
pub async fn review_request(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    to: RequestState,
    review: &Review,
) -> Result<bool> {
    let set = [
        ("state", text(to.as_str())),
        ("decided_by", text(&review.by.label())),
        ("decided_at", Stored::Integer(review.at)),
        ("decision_note", opt_text(review.note.as_deref())),
    ];
    update_guarded(tx, &REQUESTS_SEALED, tenant, id, &set, ("state", RequestState::Pending.as_str())).await
}

/// Spends an approved request on the checkpoint trained under it; `false` when it was no longer approved.
pub async fn mark_trained(tx: &mut WriteTx, tenant: &Tenant, id: &str, checkpoint_id: &str) -> Result<bool> {
    let set = [("state", text(RequestState::Trained.as_str())), ("checkpoint_id", text(checkpoint_id))];
    update_guarded(tx, &REQUESTS_SEALED, tenant, id, &set, ("state", RequestState::Approved.as_str())).await
}

pub type Checkpoint = Record<CheckpointBody>;

fn checkpoint(f: &Fields) -> Result<Checkpoint> {
    let c: Checkpoint = f.record()?;
    if f.text("model_id")? != c.body.model_id || f.text("request_id")? != c.body.request_id {
        return Err(StoreError::Corrupt(format!("lqm_checkpoints {}: columns differ from the body", c.id)));
    }
    Ok(c)
}

pub async fn insert_checkpoint(tx: &mut WriteTx, tenant: &Tenant, c: &Checkpoint) -> Result<()> {
    let own = [("model_id", text(&c.body.model_id)), ("request_id", text(&c.body.request_id))];
    insert_record(tx, &CHECKPOINTS_SEALED, tenant, c, &own).await
}

pub async fn get_checkpoint(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Checkpoint> {
    checkpoint(&select_one(conn, key, &CHECKPOINTS_SEALED, tenant, id).await?)
}

/// A model's checkpoints, oldest first (ids are time-ordered).
pub async fn checkpoints_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    model_id: &str,
) -> Result<Vec<Checkpoint>> {
    select_where(conn, key, &CHECKPOINTS_SEALED, tenant, "model_id", text(model_id))
        .await?
        .iter()
        .map(checkpoint)
        .collect()
}

pub type Evaluation = Record<EvaluationBody>;

fn evaluation(f: &Fields) -> Result<Evaluation> {
    let e: Evaluation = f.record()?;
    let verdict = f.text("verdict")?;
    if f.text("checkpoint_id")? != e.body.checkpoint_id || verdict != if e.body.passed { "passed" } else { "failed" } {
        return Err(StoreError::Corrupt(format!("lqm_evaluations {}: columns differ from the body", e.id)));
    }
    Ok(e)
}

/// Records a checkpoint's evaluation; a second one of the same checkpoint is `Conflict`.
pub async fn insert_evaluation(tx: &mut WriteTx, tenant: &Tenant, e: &Evaluation) -> Result<()> {
    let own = [
        ("checkpoint_id", text(&e.body.checkpoint_id)),
        ("verdict", text(if e.body.passed { "passed" } else { "failed" })),
    ];
    insert_record(tx, &EVALUATIONS_SEALED, tenant, e, &own).await
}

pub async fn get_evaluation(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Evaluation> {
    evaluation(&select_one(conn, key, &EVALUATIONS_SEALED, tenant, id).await?)
}

/// The evaluation of a checkpoint, if it has one.
pub async fn evaluation_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    checkpoint_id: &str,
) -> Result<Option<Evaluation>> {
    select_where(conn, key, &EVALUATIONS_SEALED, tenant, "checkpoint_id", text(checkpoint_id))
        .await?
        .first()
        .map(evaluation)
        .transpose()
}
