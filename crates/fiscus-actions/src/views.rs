//! Financial Action shapes as the API shows them.

use serde::Serialize;
use serde_json::Value;

use crate::rules::checks::CheckStatus;
use crate::rules::envelope::{ExecutionMode, Origin, RiskTier};
use crate::rules::gates::FailedGate;
use crate::rules::settlement::{Reconciliation, SettlementKind};
use crate::rules::transitions::ReconciliationStatus;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::events::EventType;

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct EnvelopeView {
    pub kind: ActionKind,
    pub amount_minor: i64,
    pub currency: String,
    pub counterparty: String,
    pub connector: String,
    pub execution_mode: ExecutionMode,
    pub delegation_id: Option<String>,
    pub risk_tier: RiskTier,
    pub reference: String,
    pub required_checks: Vec<String>,
    pub metadata: Value,
}

impl From<crate::rules::envelope::Envelope> for EnvelopeView {
    fn from(e: crate::rules::envelope::Envelope) -> EnvelopeView {
        EnvelopeView {
            kind: e.kind,
            amount_minor: e.amount_minor,
            currency: e.currency.code().to_string(),
            counterparty: e.counterparty,
            connector: e.connector,
            execution_mode: e.execution_mode,
            delegation_id: e.delegation_id,
            risk_tier: e.risk_tier,
            reference: e.reference,
            required_checks: e.required_checks,
            metadata: e.metadata,
        }
    }
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ApprovalStatusView {
    /// Distinct operators whose approval covers the current envelope hash and check set (and has not
    /// expired).
    pub current: u32,
    /// The distinct people the requirement needs in all.
    pub required: u32,
    /// Whether the approvals given meet the requirement.
    pub met: bool,
    /// Who still must approve, in words ("1 more of cfo").
    #[schema(example = "1 more of cfo")]
    pub still_needed: String,
    /// The requirement in words ("3 people: 1 of cfo and 2 of treasury").
    #[schema(example = "3 people: 1 of cfo and 2 of treasury")]
    pub in_words: String,
    /// The requirement the action got from the approval policy (at proposal, or a later tightening).
    pub requirement: crate::rules::policy::Requirement,
    /// The policy version it was evaluated under; null when no policy was in force (the deployment's
    /// default: the risk tier's quorum).
    pub policy: Option<crate::tables::approval_policies::PolicyRef>,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct CheckVersionView {
    /// Always `pre_trade_check`.
    pub object: String,
    pub id: String,
    pub check_key: String,
    pub version: i64,
    pub status: CheckStatus,
    pub source_type: String,
    pub source_reference: String,
    pub source_hash: String,
    pub metrics: Value,
    pub metadata: Value,
    /// `sha256:` of the RFC 8785 form of this version.
    pub check_hash: String,
    pub recorded_by: String,
    pub created_at: String,
}

/// Every version of every pre-trade check of an action, in order: by check key, then version (1 first).
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct CheckHistoryView {
    /// Always `pre_trade_check_history`.
    pub object: String,
    pub action_id: String,
    /// `sha256:` over the latest version of each check: what approvals cover now.
    pub check_set_hash: String,
    pub data: Vec<CheckVersionView>,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct HistoryView {
    pub from_state: Option<ControlState>,
    pub to_state: ControlState,
    pub event: EventType,
    pub actor: Actor,
    pub detail: Value,
    pub at: String,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ActionView {
    /// Always `financial_action`.
    pub object: String,
    pub id: String,
    pub environment: Environment,
    pub control_state: ControlState,
    pub reconciliation_status: ReconciliationStatus,
    pub envelope: EnvelopeView,
    /// `sha256:` of the RFC 8785 form of the envelope (bound to the action, workspace and environment).
    pub envelope_hash: String,
    pub origin: Origin,
    pub proposed_by: Actor,
    pub approvals: ApprovalStatusView,
    /// The latest version of each recorded check.
    pub checks: Vec<CheckVersionView>,
    /// `sha256:` over the latest check versions; approvals cover exactly this set.
    pub check_set_hash: String,
    /// Always false: a proposal executes nothing by itself.
    pub executes_on_creation: bool,
    pub created_at: String,
    pub updated_at: String,
    /// State history, oldest first (single-object reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryView>>,
}

/// The agent gateway's view: status and hash, never counterparty, connector or metadata details.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct AgentActionView {
    /// Always `financial_action_status`.
    pub object: String,
    pub id: String,
    pub control_state: ControlState,
    pub reconciliation_status: ReconciliationStatus,
    pub kind: ActionKind,
    pub amount_minor: i64,
    pub currency: String,
    pub reference: String,
    pub envelope_hash: String,
    pub approvals: ApprovalStatusView,
    pub updated_at: String,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ExecutionAccepted {
    /// Always `execution_request`.
    pub object: String,
    pub action_id: String,
    pub accepted: bool,
    pub control_state: ControlState,
    /// Acceptance is not completion: the action completes when a settlement record is reconciled.
    pub completion: String,
}

/// The body of a 422 `execution_refused` (beside the problem members).
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ExecutionRefusal {
    pub failed_gates: Vec<FailedGate>,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct SettlementView {
    /// Always `settlement_record`.
    pub object: String,
    pub id: String,
    pub kind: SettlementKind,
    pub connector: String,
    pub connector_reference: String,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub reconciliation: Reconciliation,
    pub mismatches: Vec<String>,
    pub record_hash: String,
    pub received_at: String,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ExpectedView {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ReconciliationView {
    /// Always `reconciliation`.
    pub object: String,
    pub action_id: String,
    pub control_state: ControlState,
    pub reconciliation_status: ReconciliationStatus,
    /// What a settlement must match.
    pub expected: ExpectedView,
    pub settlements: Vec<SettlementView>,
    /// Settlement records that did not match: visible for people to resolve, never silently done.
    pub exceptions: Vec<SettlementView>,
    /// True only when a settlement was reconciled against the action.
    pub completed: bool,
}
