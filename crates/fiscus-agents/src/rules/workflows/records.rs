//! The content of every workflow record, as sealed (canonical JSON, RFC 8785) and served.

use super::campaign::Suite;
use super::definition::{Definition, StepKind};
use super::run::{RunState, StepOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an installed workflow came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowLibraryOrigin)]
pub struct LibraryOrigin {
    #[schema(example = "model_monitoring")]
    pub key: String,
    #[schema(example = 1)]
    pub version: u32,
    /// SHA-256 of the template's definition (RFC 8785).
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub definition_hash: String,
}

/// A workflow: a name that versions share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowBody {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<LibraryOrigin>,
}

/// A version of a workflow: an immutable definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionBody {
    pub workflow_id: String,
    pub version: i64,
    pub definition: Definition,
    /// SHA-256 of `definition` (RFC 8785): what runs and campaigns cite.
    pub definition_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<LibraryOrigin>,
}

/// An input a run reads, pinned when the run was created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowPin)]
pub struct InputPin {
    /// The read step.
    #[schema(example = "benchmark")]
    pub step: String,
    /// The instrument's symbol or the series' key.
    #[schema(example = "SPX")]
    pub source: String,
    /// The dataset read (its integer id) and its content hash.
    #[schema(example = 3)]
    pub dataset: i64,
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub content_hash: String,
}

/// A run: which version, on which pinned data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBody {
    pub workflow_id: String,
    pub version_id: String,
    pub definition_hash: String,
    pub pins: Vec<InputPin>,
}

/// A step's recorded outcome in a run (or a campaign's case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepBody {
    pub run_id: String,
    pub step: String,
    pub kind: StepKind,
    pub seq: i64,
    pub outcome: StepOutcome,
    pub output: Value,
    /// SHA-256 of `output` (RFC 8785): what the run's evidence hash chains, so the same step with the same
    /// output in another run has the same hash.
    pub output_hash: String,
}

/// A step as a campaign recorded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowCampaignStep)]
pub struct CampaignStep {
    #[schema(example = "var_95")]
    pub step: String,
    pub kind: StepKind,
    pub outcome: StepOutcome,
    /// The step's output (waits and artifacts are virtual: nothing waited, nothing stored).
    #[schema(value_type = Object)]
    pub output: Value,
    /// SHA-256 of `output` (RFC 8785).
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub output_hash: String,
}

/// One case of a campaign and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowCampaignCase)]
pub struct CampaignCase {
    #[schema(example = "default")]
    pub name: String,
    pub state: RunState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<RunState>,
    pub passed: bool,
    pub steps: Vec<CampaignStep>,
    /// SHA-256 over the steps' ids and output hashes, in order: the same suite on the same data gives the
    /// same evidence.
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub evidence_hash: String,
}

/// A validation campaign.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignBody {
    pub workflow_id: String,
    pub version_id: String,
    pub definition_hash: String,
    pub suite: Suite,
    pub pins: Vec<InputPin>,
    pub cases: Vec<CampaignCase>,
    pub passed: bool,
}

/// The manual baseline a proof of value is measured against (stated by the caller).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowValueBaseline)]
pub struct Baseline {
    /// Minutes a person spends doing one run's work by hand.
    #[schema(minimum = 1, maximum = 100000, example = 90)]
    pub minutes_per_run: u32,
    /// Minutes a person spends on one review step of a run.
    #[schema(minimum = 0, maximum = 100000, example = 15)]
    pub minutes_per_review: u32,
    /// What an hour of that person's time costs, in minor units of `currency`.
    #[schema(minimum = 0, maximum = 100000000000i64, example = 12000)]
    pub hourly_cost_minor: i64,
    /// ISO 4217.
    #[schema(value_type = fiscus_domain::fields::CurrencyCode, inline, example = "USD")]
    pub currency: String,
}

/// What a workflow's runs did, and what that saved against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowValueFigures)]
pub struct ValueFigures {
    pub runs: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// Runs that have not ended.
    pub in_progress: u64,
    /// Steps completed by the runtime (not people) in completed runs.
    pub steps_automated: u64,
    /// Review steps people decided in completed runs.
    pub reviews: u64,
    /// Median time from start to end of a completed run (null without one).
    pub median_run_seconds: Option<f64>,
    /// `completed × minutes_per_run`.
    pub manual_minutes: u64,
    /// `reviews × minutes_per_review`.
    pub review_minutes: u64,
    /// `manual_minutes − review_minutes` (negative when review costs more than the work it replaced).
    pub minutes_saved: i64,
    /// `minutes_saved × hourly_cost_minor / 60`, rounded half to even, in minor units of the currency.
    pub cost_saved_minor: i64,
}

/// A proof of value of a workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofBody {
    pub workflow_id: String,
    pub workflow_name: String,
    pub baseline: Baseline,
    pub figures: ValueFigures,
    /// The ended runs counted, by id, with their evidence hashes.
    pub evidence: Vec<(String, String)>,
}
