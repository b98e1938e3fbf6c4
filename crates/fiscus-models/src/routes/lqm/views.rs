//! How LQM records are served.
//!
//! It is long because every LQM record's view is here, one per record type, so that the served shapes are written
//! once and the routes only choose.

use crate::rules::lqm::family::{Algorithm, TaskFamily};
use crate::rules::lqm::licence::Terms;
use crate::rules::lqm::lifecycle::{Operation, PromotionState, Reason, Stage};
use crate::rules::lqm::records::{
    Artifact, Builder, ContractTarget, DataVersion, Holdout, PacketCheckpoint, PacketContract, PacketEvaluation,
    PacketModel, PacketRequest,
};
use crate::rules::lqm::retraining::{Decision, RequestState};
use crate::tables::lqm::models::{Contract, Model};
use crate::tables::lqm::supply_chain::{EvidencePacket, Promotion, Publication};
use crate::tables::lqm::training::{Checkpoint, Evaluation, Request, Submission};
use fiscus_domain::clock::rfc3339;
use serde::Serialize;
use serde_json::Value;

use crate::lqm::registry::Dossier;
use crate::lqm::training::Reviewable;

/// A registered model: its canonical identity and LQM profile.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LqmModelView {
    /// Always `lqm_model`.
    pub object: &'static str,
    #[schema(example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub name: String,
    pub task_family: TaskFamily,
    pub intended_use: String,
    pub license: String,
    pub commercial_use: bool,
    /// `sha256:` of the registration (RFC 8785); the row is sealed.
    pub content_hash: String,
    pub registered_by: String,
    pub created_at: String,
}

pub fn model(m: Model) -> LqmModelView {
    LqmModelView {
        object: "lqm_model",
        id: m.id,
        name: m.body.name,
        task_family: m.body.task_family,
        intended_use: m.body.intended_use,
        license: m.body.license,
        commercial_use: m.body.commercial_use,
        content_hash: m.content_hash,
        registered_by: m.created_by.label(),
        created_at: rfc3339(m.created_at),
    }
}

/// The dataset as its contract saw it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ContractDatasetView {
    /// The dataset's integer id.
    #[schema(example = 2)]
    pub id: i64,
    pub kind: String,
    pub name: String,
    pub version: i64,
    pub source: String,
    pub licence: String,
    pub file_sha256: String,
    pub content_hash: String,
}

/// An immutable dataset contract: hashes, never rows.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ContractView {
    /// Always `lqm_dataset_contract`.
    pub object: &'static str,
    #[schema(example = "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub model_id: String,
    pub dataset: ContractDatasetView,
    pub licence_terms: Terms,
    pub target: ContractTarget,
    /// The observations of the target, and how many of the newest are held out for evaluation.
    pub observations: i64,
    pub holdout: i64,
    pub first_date: String,
    pub last_date: String,
    pub source_hash: String,
    pub feature_schema_hash: String,
    pub lineage_hash: String,
    /// SHA-256 of the target's observations (dates and values, RFC 8785).
    pub data_hash: String,
    /// `sha256:` of the whole contract; the row is sealed.
    pub contract_hash: String,
    pub created_by: String,
    pub created_at: String,
}

pub fn contract(c: Contract) -> ContractView {
    let d = c.body.dataset;
    ContractView {
        object: "lqm_dataset_contract",
        id: c.id,
        model_id: c.body.model_id,
        dataset: ContractDatasetView {
            id: d.id,
            kind: d.kind,
            name: d.name,
            version: d.version,
            source: d.source,
            licence: d.licence,
            file_sha256: d.file_sha256,
            content_hash: d.content_hash,
        },
        licence_terms: c.body.licence_terms,
        target: c.body.feature_schema.target,
        observations: c.body.observations,
        holdout: c.body.holdout,
        first_date: c.body.first_date,
        last_date: c.body.last_date,
        source_hash: c.body.source_hash,
        feature_schema_hash: c.body.feature_schema_hash,
        lineage_hash: c.body.lineage_hash,
        data_hash: c.body.data_hash,
        contract_hash: c.content_hash,
        created_by: c.created_by.label(),
        created_at: rfc3339(c.created_at),
    }
}

/// A review of a retraining request.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ReviewView {
    pub decision: Decision,
    pub decided_by: String,
    pub decided_at: String,
    pub note: Option<String>,
}

/// A decision a credential submitted over the API: it decides nothing until a person confirms it at the
/// console.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SubmissionView {
    #[schema(example = "lrs_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub decision: Decision,
    pub note: Option<String>,
    /// The request's hash the submission was about.
    pub request_hash: String,
    /// `sha256:` of the submission (RFC 8785).
    pub submission_hash: String,
    pub submitted_by: String,
    pub submitted_at: String,
}

/// A retraining request.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RequestView {
    /// Always `lqm_retraining_request`.
    pub object: &'static str,
    #[schema(example = "lrr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub model_id: String,
    pub contract_id: String,
    pub contract_hash: String,
    pub algorithm: Algorithm,
    /// Every default applied.
    #[schema(value_type = Object)]
    pub hyperparameters: Value,
    pub reason: String,
    /// `pending` (reviewable), `approved` (one candidate may be trained), `rejected`, `cancelled` or
    /// `trained` (the approval is spent).
    pub state: RequestState,
    /// `sha256:` of the request (RFC 8785).
    pub request_hash: String,
    pub requested_by: String,
    pub created_at: String,
    /// A person's decision at the console, once decided.
    pub review: Option<ReviewView>,
    /// Decisions credentials submitted over the API, oldest first; none of them decides the request.
    pub submitted_decisions: Vec<SubmissionView>,
    /// The checkpoint trained under it.
    pub checkpoint_id: Option<String>,
}

pub fn submission(s: Submission) -> SubmissionView {
    SubmissionView {
        id: s.id,
        decision: s.body.decision,
        note: s.body.note,
        request_hash: s.body.request_hash,
        submission_hash: s.content_hash,
        submitted_by: s.created_by.label(),
        submitted_at: rfc3339(s.created_at),
    }
}

pub fn reviewable(r: Reviewable) -> RequestView {
    RequestView { submitted_decisions: r.submissions.into_iter().map(submission).collect(), ..request(r.request) }
}

pub fn request(r: Request) -> RequestView {
    let decision = match r.state {
        RequestState::Approved | RequestState::Trained => Some(Decision::Approve),
        RequestState::Rejected => Some(Decision::Reject),
        RequestState::Cancelled => Some(Decision::Cancel),
        RequestState::Pending => None,
    };
    RequestView {
        object: "lqm_retraining_request",
        id: r.record.id,
        model_id: r.record.body.model_id,
        contract_id: r.record.body.contract_id,
        contract_hash: r.record.body.contract_hash,
        algorithm: r.record.body.algorithm,
        hyperparameters: r.record.body.hyperparameters,
        reason: r.record.body.reason,
        state: r.state,
        request_hash: r.record.content_hash,
        requested_by: r.record.created_by.label(),
        created_at: rfc3339(r.record.created_at),
        review: r.review.zip(decision).map(|(v, decision)| ReviewView {
            decision,
            decided_by: v.by.label(),
            decided_at: rfc3339(v.at),
            note: v.note,
        }),
        submitted_decisions: Vec::new(),
        checkpoint_id: r.checkpoint_id,
    }
}

/// An evaluation of a checkpoint on held-out observations.
#[derive(Serialize, utoipa::ToSchema)]
pub struct EvaluationView {
    /// Always `lqm_evaluation`.
    pub object: &'static str,
    #[schema(example = "lev_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    pub holdout: Holdout,
    /// The criterion it was held to, its default applied.
    #[schema(value_type = Object)]
    pub criteria: Value,
    /// The family's measurements (forecasting: `mae`, `rmse`, `mape`, `relative_mae`, `naive_mae`, `mase`; anomaly
    /// detection: `outliers`, `outlier_rate`, `max_abs_z`; risk: `breaches`, `observed_rate`,
    /// `likelihood_ratio`, `p_value`).
    #[schema(value_type = Object)]
    pub metrics: Value,
    pub passed: bool,
    pub trained_by: String,
    pub evaluated_by: String,
    /// The evaluator is not who trained the checkpoint.
    pub independent: bool,
    /// `sha256:` of the evaluation (RFC 8785).
    pub evaluation_hash: String,
    pub created_at: String,
}

pub fn evaluation(e: Evaluation) -> EvaluationView {
    EvaluationView {
        object: "lqm_evaluation",
        id: e.id,
        checkpoint_id: e.body.checkpoint_id,
        checkpoint_hash: e.body.checkpoint_hash,
        holdout: e.body.holdout,
        criteria: e.body.criteria,
        metrics: e.body.metrics,
        passed: e.body.passed,
        trained_by: e.body.trained_by.label(),
        evaluated_by: e.body.evaluated_by.label(),
        independent: e.body.independent,
        evaluation_hash: e.content_hash,
        created_at: rfc3339(e.created_at),
    }
}

/// A checkpoint: fitted parameters and the exact data version, with its evaluation once evaluated.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CheckpointView {
    /// Always `lqm_checkpoint`.
    pub object: &'static str,
    #[schema(example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub model_id: String,
    pub request_id: String,
    pub algorithm: Algorithm,
    #[schema(value_type = Object)]
    pub hyperparameters: Value,
    /// The fitted parameters (Holt-Winters: smoothing parameters and initial state; robust z: median and
    /// scale; VaR: `var` and `cvar`).
    #[schema(value_type = Object)]
    pub fitted: Value,
    pub data_version: DataVersion,
    pub engine: String,
    /// `sha256:` over the fitted parameters and the data version (RFC 8785): the checkpoint's identity.
    pub checkpoint_hash: String,
    pub trained_by: String,
    pub created_at: String,
    pub evaluation: Option<EvaluationView>,
}

pub fn checkpoint(c: Checkpoint, e: Option<Evaluation>) -> CheckpointView {
    CheckpointView {
        object: "lqm_checkpoint",
        id: c.id,
        model_id: c.body.model_id,
        request_id: c.body.request_id,
        algorithm: c.body.algorithm,
        hyperparameters: c.body.hyperparameters,
        fitted: c.body.fitted,
        data_version: c.body.data_version,
        engine: c.body.engine,
        checkpoint_hash: c.content_hash,
        trained_by: c.created_by.label(),
        created_at: rfc3339(c.created_at),
        evaluation: e.map(evaluation),
    }
}

/// Whether a gated operation is open, and why not.
#[derive(Serialize, utoipa::ToSchema)]
pub struct EligibilityView {
    pub operation: Operation,
    pub eligible: bool,
    /// Every reason it is closed (empty when open).
    pub reasons: Vec<Reason>,
    /// The checkpoint a checkpoint-level operation was judged for (the newest).
    pub checkpoint_id: Option<String>,
}

/// A checkpoint in the manifest.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ManifestCheckpoint {
    pub id: String,
    pub checkpoint_hash: String,
    pub algorithm: Algorithm,
    /// `passed`, `failed`, or null before evaluation.
    #[schema(example = "passed")]
    pub evaluation: Option<&'static str>,
    /// Its evidence packet and publication, once issued and published.
    pub evidence_packet_id: Option<String>,
    pub publication_id: Option<String>,
}

/// A retraining request in the manifest.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ManifestRequest {
    pub id: String,
    pub state: RequestState,
    pub algorithm: Algorithm,
}

/// The developer manifest: where a model stands and which gated operation is open.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ManifestView {
    /// Always `lqm_developer_manifest`.
    pub object: &'static str,
    pub model: LqmModelView,
    pub stage: Stage,
    /// Its contracts' ids, oldest first.
    pub contracts: Vec<String>,
    pub retraining_requests: Vec<ManifestRequest>,
    /// Oldest first.
    pub checkpoints: Vec<ManifestCheckpoint>,
    /// The checkpoint promoted into the Quant Models catalogue, if one is.
    pub serving_checkpoint: Option<String>,
    pub operations: Vec<EligibilityView>,
}

pub fn manifest(d: Dossier) -> ManifestView {
    let newest = d.newest().map(|c| c.checkpoint.id.clone());
    let operations = d
        .eligibility()
        .into_iter()
        .map(|(op, gate)| {
            let reasons = gate.err().unwrap_or_default();
            EligibilityView {
                operation: op,
                eligible: reasons.is_empty(),
                reasons,
                checkpoint_id: match op {
                    Operation::Training | Operation::QlmComposition => None,
                    _ => newest.clone(),
                },
            }
        })
        .collect();
    let stage = d.stage();
    let serving =
        d.promotions.iter().find(|p| p.state == PromotionState::Active).map(|p| p.record.body.checkpoint_id.clone());
    ManifestView {
        object: "lqm_developer_manifest",
        stage,
        contracts: d.contracts.into_iter().map(|c| c.id).collect(),
        retraining_requests: d
            .requests
            .into_iter()
            .map(|r| ManifestRequest { id: r.record.id, state: r.state, algorithm: r.record.body.algorithm })
            .collect(),
        checkpoints: d
            .checkpoints
            .into_iter()
            .map(|c| ManifestCheckpoint {
                evaluation: c.evaluation.as_ref().map(|e| if e.body.passed { "passed" } else { "failed" }),
                evidence_packet_id: c.packet.map(|p| p.id),
                publication_id: c.publication.map(|p| p.id),
                id: c.checkpoint.id,
                checkpoint_hash: c.checkpoint.content_hash,
                algorithm: c.checkpoint.body.algorithm,
            })
            .collect(),
        serving_checkpoint: serving,
        operations,
        model: model(d.model),
    }
}

/// An evidence packet: the hashes that make a checkpoint's case.
#[derive(Serialize, utoipa::ToSchema)]
pub struct EvidencePacketView {
    /// Always `lqm_evidence_packet`.
    pub object: &'static str,
    #[schema(example = "lep_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub checkpoint_id: String,
    pub model: PacketModel,
    pub contract: PacketContract,
    pub retraining_request: PacketRequest,
    pub checkpoint: PacketCheckpoint,
    pub evaluation: PacketEvaluation,
    /// `sha256:` of the packet (RFC 8785); the row is sealed.
    pub packet_hash: String,
    pub issued_by: String,
    pub created_at: String,
}

pub fn packet(p: EvidencePacket) -> EvidencePacketView {
    EvidencePacketView {
        object: "lqm_evidence_packet",
        id: p.id,
        checkpoint_id: p.body.checkpoint.id.clone(),
        model: p.body.model,
        contract: p.body.contract,
        retraining_request: p.body.retraining_request,
        checkpoint: p.body.checkpoint,
        evaluation: p.body.evaluation,
        packet_hash: p.content_hash,
        issued_by: p.created_by.label(),
        created_at: rfc3339(p.created_at),
    }
}

/// A publication: one link of the workspace's supply chain of published models.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PublicationView {
    /// Always `lqm_publication`.
    pub object: &'static str,
    #[schema(example = "lpb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    /// The repository in the model hub (`fiscus-hub://{workspace}/{environment}/{model}`) and its revision.
    pub repository: String,
    pub revision: i64,
    pub model_id: String,
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    pub evaluation_hash: String,
    pub evidence_packet_hash: String,
    pub builder: Builder,
    /// `sha256:` of the bundle's manifest (its artifacts, RFC 8785).
    pub bundle_hash: String,
    /// The bundle's files in the model hub, each addressed by its hash; `provenance.intoto.json` is an
    /// in-toto v1 statement with a SLSA v1 provenance predicate about the other three.
    pub artifacts: Vec<Artifact>,
    /// The supply-chain head this publication links to (`sha256:` and 64 zeros for the first)…
    pub previous_head: String,
    /// …and the head it made: the SHA-256 of its record (RFC 8785), which includes `previous_head`.
    pub head: String,
    /// The workspace's supply-chain head now (this publication's, or a later one's).
    pub supply_chain_head: String,
    pub published_by: String,
    /// RFC 3339 with microseconds, as the record (and so the head) has it.
    pub published_at: String,
}

pub fn publication(p: Publication, supply_chain_head: String) -> PublicationView {
    PublicationView {
        object: "lqm_publication",
        id: p.id,
        repository: p.body.repository,
        revision: p.body.revision,
        model_id: p.body.model_id,
        checkpoint_id: p.body.checkpoint_id,
        checkpoint_hash: p.body.checkpoint_hash,
        evaluation_hash: p.body.evaluation_hash,
        evidence_packet_hash: p.body.evidence_packet_hash,
        builder: p.body.builder,
        bundle_hash: p.body.bundle_hash,
        artifacts: p.body.artifacts,
        previous_head: p.body.previous_head,
        head: p.content_hash,
        supply_chain_head,
        published_by: p.created_by.label(),
        published_at: p.body.published_at,
    }
}

/// A decision or an ending, with who and when.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StampView {
    /// `operator:opr_…`.
    pub by: String,
    pub at: String,
    pub note: Option<String>,
}

/// A promotion request and its control evidence.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PromotionView {
    /// Always `lqm_promotion`.
    pub object: &'static str,
    #[schema(example = "lpm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub model_id: String,
    /// `pending` (awaiting an operator at the console), `active` (serving in the Quant Models catalogue),
    /// `superseded`, `revoked` or `denied`.
    pub state: PromotionState,
    /// The control evidence: the exact checkpoint, and the evaluation, evidence packet and publication that
    /// make its case, each by hash.
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    pub evaluation_hash: String,
    pub evidence_packet_hash: String,
    pub publication_id: String,
    pub publication_head: String,
    pub note: Option<String>,
    /// `sha256:` of the request and its evidence (RFC 8785); the row is sealed.
    pub promotion_hash: String,
    pub requested_by: String,
    pub requested_at: String,
    /// The operator's decision (approve or deny).
    pub decision: Option<StampView>,
    /// Who superseded or revoked it.
    pub ended: Option<StampView>,
}

pub fn promotion(p: Promotion) -> PromotionView {
    let b = p.record.body;
    PromotionView {
        object: "lqm_promotion",
        id: p.record.id,
        model_id: b.model_id,
        state: p.state,
        checkpoint_id: b.checkpoint_id,
        checkpoint_hash: b.checkpoint_hash,
        evaluation_hash: b.evaluation_hash,
        evidence_packet_hash: b.evidence_packet_hash,
        publication_id: b.publication_id,
        publication_head: b.publication_head,
        note: b.note,
        promotion_hash: p.record.content_hash,
        requested_by: p.record.created_by.label(),
        requested_at: rfc3339(p.record.created_at),
        decision: p.decision.map(|r| StampView { by: r.by.label(), at: rfc3339(r.at), note: r.note }),
        ended: p.ended.map(|(by, at)| StampView { by: by.label(), at: rfc3339(at), note: None }),
    }
}
