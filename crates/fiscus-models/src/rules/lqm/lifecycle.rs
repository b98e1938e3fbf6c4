//! The gated lifecycle of an LQM: which operation is open, and why not when it is closed.
//!
//! A model moves registered → contracted → retraining requested → training authorised → trained →
//! evaluated → evidenced → published → promotion requested → promoted. Every step after registration is a
//! gated operation; a closed gate names every reason it is closed (reason codes clients match on, listed in
//! the developer manifest), and an operation attempted through a closed gate changes nothing.

use serde::Serialize;

/// A gated operation of the lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LqmOperation)]
pub enum Operation {
    Training,
    Evaluation,
    EvidencePacket,
    Publishing,
    Promotion,
    QlmComposition,
}

impl Operation {
    pub const ALL: [Operation; 6] = [
        Operation::Training,
        Operation::Evaluation,
        Operation::EvidencePacket,
        Operation::Publishing,
        Operation::Promotion,
        Operation::QlmComposition,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Training => "training",
            Operation::Evaluation => "evaluation",
            Operation::EvidencePacket => "evidence_packet",
            Operation::Publishing => "publishing",
            Operation::Promotion => "promotion",
            Operation::QlmComposition => "qlm_composition",
        }
    }
}

/// Why a gate is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LqmReason)]
pub enum Reason {
    /// No dataset is under contract for the model.
    NoDatasetContract,
    /// A retraining request awaits its review.
    RetrainingReviewPending,
    /// No approved retraining request is waiting to be trained.
    NoApprovedRetrainingRequest,
    /// The model has no checkpoint yet.
    NoCheckpoint,
    /// The checkpoint was revoked.
    CheckpointRevoked,
    /// The checkpoint was evaluated already (evaluation is deterministic; its record stands).
    AlreadyEvaluated,
    /// The checkpoint has no evaluation.
    NotEvaluated,
    /// Its evaluation did not meet its criteria.
    EvaluationFailed,
    /// An evidence packet was issued for it already.
    EvidencePacketIssued,
    /// No evidence packet was issued for it.
    NoEvidencePacket,
    /// It was published already.
    AlreadyPublished,
    /// It was not published to the model hub.
    NotPublished,
    /// A newer checkpoint of the model was promoted.
    Superseded,
    /// It is the promoted checkpoint already.
    AlreadyPromoted,
    /// A promotion of it awaits an operator's decision.
    PromotionPending,
    /// An operator denied its promotion.
    PromotionDenied,
    /// The model has no promoted checkpoint serving.
    NotPromoted,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NoDatasetContract => "no_dataset_contract",
            Reason::RetrainingReviewPending => "retraining_review_pending",
            Reason::NoApprovedRetrainingRequest => "no_approved_retraining_request",
            Reason::NoCheckpoint => "no_checkpoint",
            Reason::CheckpointRevoked => "checkpoint_revoked",
            Reason::AlreadyEvaluated => "already_evaluated",
            Reason::NotEvaluated => "not_evaluated",
            Reason::EvaluationFailed => "evaluation_failed",
            Reason::EvidencePacketIssued => "evidence_packet_issued",
            Reason::NoEvidencePacket => "no_evidence_packet",
            Reason::AlreadyPublished => "already_published",
            Reason::NotPublished => "not_published",
            Reason::Superseded => "superseded",
            Reason::AlreadyPromoted => "already_promoted",
            Reason::PromotionPending => "promotion_pending",
            Reason::PromotionDenied => "promotion_denied",
            Reason::NotPromoted => "not_promoted",
        }
    }
}

/// An evaluation's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
}

pub use fiscus_domain::lqm::PromotionState;

/// What is known of a model, for its model-level gates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelFacts {
    pub contracts: usize,
    pub pending_requests: usize,
    /// Approved requests not yet trained.
    pub approved_requests: usize,
    /// A checkpoint of the model is promoted and serving.
    pub serving: bool,
}

/// What is known of one checkpoint, for its gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointFacts {
    pub verdict: Option<Verdict>,
    pub evidence_packet: bool,
    pub published: bool,
    pub promotion: Option<PromotionState>,
    pub revoked: bool,
    /// A checkpoint of the same model trained after it was promoted.
    pub newer_promoted: bool,
}

/// Whether `op` is open; closed, every reason it is.
pub fn gate(op: Operation, model: &ModelFacts, checkpoint: Option<&CheckpointFacts>) -> Result<(), Vec<Reason>> {
    let mut closed = Vec::new();
    match op {
        Operation::Training => {
            if model.contracts == 0 {
                closed.push(Reason::NoDatasetContract);
            }
            if model.approved_requests == 0 {
                if model.pending_requests > 0 {
                    closed.push(Reason::RetrainingReviewPending);
                }
                closed.push(Reason::NoApprovedRetrainingRequest);
            }
        }
        Operation::QlmComposition => {
            if !model.serving {
                closed.push(Reason::NotPromoted);
            }
        }
        Operation::Evaluation | Operation::EvidencePacket | Operation::Publishing | Operation::Promotion => {
            let Some(c) = checkpoint else { return Err(vec![Reason::NoCheckpoint]) };
            if c.revoked {
                closed.push(Reason::CheckpointRevoked);
            }
            checkpoint_gate(op, c, &mut closed);
        }
    }
    if closed.is_empty() { Ok(()) } else { Err(closed) }
}

fn checkpoint_gate(op: Operation, c: &CheckpointFacts, closed: &mut Vec<Reason>) {
    let evaluated = |closed: &mut Vec<Reason>| match c.verdict {
        None => closed.push(Reason::NotEvaluated),
        Some(Verdict::Failed) => closed.push(Reason::EvaluationFailed),
        Some(Verdict::Passed) => {}
    };
    match op {
        Operation::Evaluation => {
            if c.verdict.is_some() {
                closed.push(Reason::AlreadyEvaluated);
            }
        }
        Operation::EvidencePacket => {
            evaluated(closed);
            if c.evidence_packet {
                closed.push(Reason::EvidencePacketIssued);
            }
        }
        Operation::Publishing => {
            if !c.evidence_packet {
                closed.push(Reason::NoEvidencePacket);
            }
            if c.published {
                closed.push(Reason::AlreadyPublished);
            }
        }
        Operation::Promotion => {
            evaluated(closed);
            if !c.published {
                closed.push(Reason::NotPublished);
            }
            if c.newer_promoted {
                closed.push(Reason::Superseded);
            }
            match c.promotion {
                Some(PromotionState::Active) => closed.push(Reason::AlreadyPromoted),
                Some(PromotionState::Pending) => closed.push(Reason::PromotionPending),
                Some(PromotionState::Denied) => closed.push(Reason::PromotionDenied),
                Some(PromotionState::Superseded) => closed.push(Reason::Superseded),
                Some(PromotionState::Revoked) | None => {}
            }
        }
        Operation::Training | Operation::QlmComposition => {}
    }
}

/// Where a model stands: the furthest step of its newest checkpoint, unless a retraining request is
/// waiting (then the next step is the request's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LqmStage)]
pub enum Stage {
    Registered,
    Contracted,
    RetrainingRequested,
    TrainingAuthorised,
    Trained,
    EvaluationFailed,
    Evaluated,
    Evidenced,
    Published,
    PromotionRequested,
    PromotionDenied,
    Promoted,
    Superseded,
    Revoked,
}

pub fn stage(model: &ModelFacts, newest: Option<&CheckpointFacts>) -> Stage {
    if model.approved_requests > 0 {
        return Stage::TrainingAuthorised;
    }
    if model.pending_requests > 0 {
        return Stage::RetrainingRequested;
    }
    let Some(c) = newest else {
        return if model.contracts == 0 { Stage::Registered } else { Stage::Contracted };
    };
    if c.revoked {
        return Stage::Revoked;
    }
    match c.promotion {
        Some(PromotionState::Active) => return Stage::Promoted,
        Some(PromotionState::Pending) => return Stage::PromotionRequested,
        Some(PromotionState::Denied) => return Stage::PromotionDenied,
        Some(PromotionState::Superseded) => return Stage::Superseded,
        Some(PromotionState::Revoked) => return Stage::Revoked,
        None => {}
    }
    match (c.verdict, c.evidence_packet, c.published) {
        (_, _, true) => Stage::Published,
        (_, true, false) => Stage::Evidenced,
        (Some(Verdict::Passed), false, false) => Stage::Evaluated,
        (Some(Verdict::Failed), false, false) => Stage::EvaluationFailed,
        (None, false, false) => Stage::Trained,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> CheckpointFacts {
        CheckpointFacts {
            verdict: None,
            evidence_packet: false,
            published: false,
            promotion: None,
            revoked: false,
            newer_promoted: false,
        }
    }

    #[test]
    fn training_needs_a_contract_and_an_approved_request() {
        let m = ModelFacts::default();
        assert_eq!(
            gate(Operation::Training, &m, None),
            Err(vec![Reason::NoDatasetContract, Reason::NoApprovedRetrainingRequest])
        );
        let pending = ModelFacts { contracts: 1, pending_requests: 1, ..m };
        assert_eq!(
            gate(Operation::Training, &pending, None),
            Err(vec![Reason::RetrainingReviewPending, Reason::NoApprovedRetrainingRequest])
        );
        assert_eq!(stage(&pending, None), Stage::RetrainingRequested);
        let approved = ModelFacts { contracts: 1, approved_requests: 1, ..m };
        assert_eq!(gate(Operation::Training, &approved, None), Ok(()));
        assert_eq!(stage(&approved, None), Stage::TrainingAuthorised);
        assert_eq!(stage(&m, None), Stage::Registered);
    }

    #[test]
    fn each_step_opens_the_next_and_only_the_next() {
        let m = ModelFacts { contracts: 1, ..ModelFacts::default() };
        let mut c = fresh();
        assert_eq!(gate(Operation::Evaluation, &m, None), Err(vec![Reason::NoCheckpoint]));
        assert_eq!(gate(Operation::Evaluation, &m, Some(&c)), Ok(()));
        assert_eq!(gate(Operation::EvidencePacket, &m, Some(&c)), Err(vec![Reason::NotEvaluated]));
        assert_eq!(gate(Operation::Promotion, &m, Some(&c)), Err(vec![Reason::NotEvaluated, Reason::NotPublished]));
        assert_eq!(stage(&m, Some(&c)), Stage::Trained);
        c.verdict = Some(Verdict::Failed);
        assert_eq!(gate(Operation::EvidencePacket, &m, Some(&c)), Err(vec![Reason::EvaluationFailed]));
        assert_eq!(stage(&m, Some(&c)), Stage::EvaluationFailed);
        c.verdict = Some(Verdict::Passed);
        assert_eq!(gate(Operation::Evaluation, &m, Some(&c)), Err(vec![Reason::AlreadyEvaluated]));
        assert_eq!(gate(Operation::Publishing, &m, Some(&c)), Err(vec![Reason::NoEvidencePacket]));
        c.evidence_packet = true;
        assert_eq!(gate(Operation::Publishing, &m, Some(&c)), Ok(()));
        assert_eq!(gate(Operation::Promotion, &m, Some(&c)), Err(vec![Reason::NotPublished]));
        c.published = true;
        assert_eq!(gate(Operation::Promotion, &m, Some(&c)), Ok(()));
        assert_eq!(stage(&m, Some(&c)), Stage::Published);
        c.promotion = Some(PromotionState::Pending);
        assert_eq!(gate(Operation::Promotion, &m, Some(&c)), Err(vec![Reason::PromotionPending]));
        c.promotion = Some(PromotionState::Active);
        assert_eq!(gate(Operation::Promotion, &m, Some(&c)), Err(vec![Reason::AlreadyPromoted]));
        assert_eq!(gate(Operation::QlmComposition, &m, None), Err(vec![Reason::NotPromoted]));
        assert_eq!(gate(Operation::QlmComposition, &ModelFacts { serving: true, ..m }, None), Ok(()));
        assert_eq!(stage(&m, Some(&c)), Stage::Promoted);
    }

    #[test]
    fn revoked_and_superseded_checkpoints_are_never_promoted() {
        let m = ModelFacts { contracts: 1, ..ModelFacts::default() };
        let ready =
            CheckpointFacts { verdict: Some(Verdict::Passed), evidence_packet: true, published: true, ..fresh() };
        let revoked = CheckpointFacts { revoked: true, promotion: Some(PromotionState::Revoked), ..ready };
        assert_eq!(gate(Operation::Promotion, &m, Some(&revoked)), Err(vec![Reason::CheckpointRevoked]));
        assert_eq!(stage(&m, Some(&revoked)), Stage::Revoked);
        let older = CheckpointFacts { newer_promoted: true, ..ready };
        assert_eq!(gate(Operation::Promotion, &m, Some(&older)), Err(vec![Reason::Superseded]));
        let denied = CheckpointFacts { promotion: Some(PromotionState::Denied), ..ready };
        assert_eq!(gate(Operation::Promotion, &m, Some(&denied)), Err(vec![Reason::PromotionDenied]));
    }
}
