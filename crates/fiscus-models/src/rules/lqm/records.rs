//! The content of each LQM record, as sealed and hashed: what a registration, a contract, a retraining
//! request, a checkpoint, an evaluation, an evidence packet, a publication, a promotion and a QLM version
//! say. Each is stored as canonical JSON (RFC 8785) and cited by the SHA-256 of that JSON, so a record's
//! hash is a function of its content alone and anyone holding the content can recompute it.
//!
//! Algorithm-specific parts (hyperparameters, fitted parameters, metrics) are JSON values whose shape the
//! algorithm defines (the server's `lqm::fit`).

use fiscus_domain::actor::Actor;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::family::{Algorithm, TaskFamily};
use super::licence::Terms;

/// A model's registration: its canonical identity and LQM profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelBody {
    pub name: String,
    pub task_family: TaskFamily,
    pub intended_use: String,
    /// The model's own licence (an SPDX identifier).
    pub license: String,
    /// Whether its outputs are used commercially (non-commercial data may train only a model that is not).
    pub commercial_use: bool,
}

/// Which values of a dataset a model learns from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContractTarget {
    /// One instrument's prices in a prices dataset: adjusted closes (`close` where a bar has none) as
    /// `price`s, or their simple daily `return`s.
    Instrument {
        #[schema(pattern = "^[A-Za-z0-9._^-]{1,64}$", example = "AAPL")]
        symbol: String,
        transform: TargetTransform,
    },
    /// One series of an economics dataset.
    Series {
        #[schema(pattern = "^[A-Za-z0-9._^-]{1,64}$", example = "wti_spot")]
        key: String,
    },
}

/// How prices become the learnt series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetTransform {
    Price,
    Return,
}

/// The shape of the learnt data (its hash is the contract's feature-schema hash).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureSchema {
    pub target: ContractTarget,
    /// Always `[{"name": "date", "type": "date"}, {"name": "value", "type": "number"}]` today: one dated
    /// value per observation, oldest first.
    pub columns: Vec<Column>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
}

/// The dataset as the contract saw it: its identity and provenance, never its rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetRef {
    pub id: i64,
    pub kind: String,
    pub name: String,
    pub version: i64,
    pub source: String,
    pub licence: String,
    pub file_sha256: String,
    pub content_hash: String,
    pub importer_version: String,
    #[serde(with = "fiscus_domain::actor::as_label")]
    pub imported_by: Actor,
}

/// A dataset contract: immutable, hashes only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractBody {
    pub model_id: String,
    pub dataset: DatasetRef,
    pub licence_terms: Terms,
    pub feature_schema: FeatureSchema,
    /// Observations of the target in the dataset, and how many of the newest are held out for evaluation
    /// (training never sees them).
    pub observations: i64,
    pub holdout: i64,
    pub first_date: String,
    pub last_date: String,
    /// SHA-256 of the dataset's source: its file hash, source and licence.
    pub source_hash: String,
    pub feature_schema_hash: String,
    /// SHA-256 of the dataset's lineage: its identity, version, importer, mapping and content hash.
    pub lineage_hash: String,
    /// SHA-256 of the target's observations as read (dates and values): what training and evaluation
    /// read again and compare before they run.
    pub data_hash: String,
}

/// A retraining request: which data, which algorithm, why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestBody {
    pub model_id: String,
    pub contract_id: String,
    pub contract_hash: String,
    pub algorithm: Algorithm,
    /// The algorithm's hyperparameters, every default applied.
    pub hyperparameters: Value,
    pub reason: String,
}

/// A decision a credential submitted on a retraining request over the API. It decides nothing: a person
/// confirms it (or decides otherwise) at the console. `request_hash` binds it to the request it was about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionBody {
    pub request_id: String,
    pub request_hash: String,
    pub decision: crate::rules::lqm::retraining::Decision,
    pub note: Option<String>,
}

/// The exact data a checkpoint was fitted on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LqmDataVersion)]
pub struct DataVersion {
    /// The dataset's integer id and content hash (datasets are immutable: one id, one content).
    pub dataset: i64,
    pub dataset_content_hash: String,
    pub contract_hash: String,
    /// The training observations (the contract's observations less its holdout) and their SHA-256.
    pub observations: i64,
    pub first_date: String,
    pub last_date: String,
    pub data_hash: String,
}

/// A checkpoint: fitted parameters and the exact data version. Its content hash is the checkpoint hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointBody {
    pub model_id: String,
    pub request_id: String,
    pub algorithm: Algorithm,
    pub hyperparameters: Value,
    pub fitted: Value,
    pub data_version: DataVersion,
    /// The engine that fitted it (`fiscus-quant` and its version).
    pub engine: String,
}

/// An evaluation of a checkpoint on its contract's held-out observations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluationBody {
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    /// The held-out observations: count, dates and SHA-256.
    pub holdout: Holdout,
    /// The criteria it was held to, every default applied.
    pub criteria: Value,
    pub metrics: Value,
    pub passed: bool,
    /// Who trained the checkpoint and who evaluated it; `independent` when they differ.
    #[serde(with = "fiscus_domain::actor::as_label")]
    pub trained_by: Actor,
    #[serde(with = "fiscus_domain::actor::as_label")]
    pub evaluated_by: Actor,
    pub independent: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LqmHoldout)]
pub struct Holdout {
    pub observations: i64,
    pub first_date: String,
    pub last_date: String,
    pub data_hash: String,
}

/// An evidence packet: the hashes that make one checkpoint's case, in one record (SR 11-7's
/// documentation of development, data, review and validation), issued once its evaluation passed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidencePacketBody {
    pub model: PacketModel,
    pub contract: PacketContract,
    pub retraining_request: PacketRequest,
    pub checkpoint: PacketCheckpoint,
    pub evaluation: PacketEvaluation,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketModel {
    pub id: String,
    pub registration_hash: String,
    pub name: String,
    pub task_family: TaskFamily,
    pub intended_use: String,
    pub license: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketContract {
    pub id: String,
    pub contract_hash: String,
    pub dataset: i64,
    pub licence: String,
    pub licence_terms: Terms,
    pub source_hash: String,
    pub feature_schema_hash: String,
    pub lineage_hash: String,
    pub data_hash: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketRequest {
    pub id: String,
    pub request_hash: String,
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub requested_by: Actor,
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub reviewed_by: Actor,
    /// When the review was recorded (RFC 3339).
    pub reviewed_at: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketCheckpoint {
    pub id: String,
    pub checkpoint_hash: String,
    pub algorithm: Algorithm,
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub trained_by: Actor,
    pub engine: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketEvaluation {
    pub id: String,
    pub evaluation_hash: String,
    pub passed: bool,
    pub independent: bool,
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub evaluated_by: Actor,
    #[schema(value_type = Object)]
    pub metrics: Value,
}

/// A file of a published bundle, content-addressed in the model hub.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// Its name in the bundle (`checkpoint.json`, `evaluation.json`, `evidence-packet.json`,
    /// `provenance.intoto.json`).
    #[schema(example = "checkpoint.json")]
    pub name: String,
    /// `sha256:` of its bytes: also its address in the hub.
    pub sha256: String,
    pub size: i64,
}

/// Who built and published a bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Builder {
    /// The builder's identity, as the SLSA provenance names it.
    #[schema(example = "https://fiscus.dev/builders/lqm@v1")]
    pub id: String,
    /// The Fiscus version that built it.
    pub version: String,
    /// Who trained the checkpoint and who published it (`application:app_…`; never credential material).
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub trained_by: Actor,
    #[serde(with = "fiscus_domain::actor::as_label")]
    #[schema(value_type = String, pattern = "^(application|operator|worker|cli|runtime):.+$", example = "application:app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub published_by: Actor,
}

/// A publication: one link of the tenant's supply chain. Its content hash is the new head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicationBody {
    /// `fiscus-hub://{workspace}/{environment}/{model}`.
    pub repository: String,
    /// 1 for the model's first publication, then one more each time.
    pub revision: i64,
    pub model_id: String,
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    pub evaluation_hash: String,
    pub evidence_packet_hash: String,
    pub builder: Builder,
    /// `sha256:` of the bundle's manifest (its artifacts' names, hashes and sizes, RFC 8785).
    pub bundle_hash: String,
    pub artifacts: Vec<Artifact>,
    /// The head before this publication (`sha256:` and 64 zeros for the first).
    pub previous_head: String,
    /// When it was published (RFC 3339, microseconds).
    pub published_at: String,
}

/// The head a tenant's first publication links to.
pub const GENESIS_HEAD: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// A promotion request with its control evidence: the exact checkpoint, and the evaluation, evidence
/// packet and publication that make its case, each by hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromotionBody {
    pub model_id: String,
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    pub evaluation_hash: String,
    pub evidence_packet_hash: String,
    pub publication_id: String,
    /// The publication's head: where the checkpoint stands on the supply chain.
    pub publication_head: String,
    pub note: Option<String>,
}

/// A QLM: a governed model profile composed from promoted LQMs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QlmBody {
    pub name: String,
    pub description: String,
}

/// One component of a QLM version: a role and the exact checkpoint it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    #[schema(example = "forecast")]
    pub role: String,
    pub model_id: String,
    pub checkpoint_id: String,
    pub checkpoint_hash: String,
    /// The promotion that made the checkpoint eligible when it was pinned.
    pub promotion_id: String,
}

/// A version of a QLM: exact checkpoints by role. A new version is a rebinding an operator decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QlmVersionBody {
    pub qlm_id: String,
    pub version: i64,
    pub pins: Vec<Pin>,
    /// The version it replaces, by hash (none for the first).
    pub previous_version_hash: Option<String>,
    pub reason: String,
}

/// A run of a QLM version (an invocation or an evaluation), as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QlmRunBody {
    pub qlm_id: String,
    pub version: i64,
    pub version_hash: String,
    /// SHA-256 of the request as given (RFC 8785).
    pub request_hash: String,
    /// One output per component, in the version's order.
    pub outputs: Value,
}
