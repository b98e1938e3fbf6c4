//! The one event envelope. Every lifecycle event Fiscus emits (into the outbox today; to customers' webhook
//! endpoints and to workflows next) has this shape, in the manner of Stripe's and the CloudEvents envelope:
//! an id, a type from a closed list, when, where (workspace and environment), who (the [`Actor`]) and the
//! type's data. A consumer can dispatch on `type` and trust `data` to have that type's schema.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actions::ControlState;
use crate::actor::Actor;
use crate::credentials::Environment;
use crate::workflows::RunState;

/// Every event type. The names are part of the API: never renamed, only added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum EventType {
    #[serde(rename = "action.proposed")]
    ActionProposed,
    #[serde(rename = "action.submitted")]
    ActionSubmitted,
    #[serde(rename = "action.check_recorded")]
    ActionCheckRecorded,
    #[serde(rename = "action.approval_recorded")]
    ActionApprovalRecorded,
    #[serde(rename = "action.approved")]
    ActionApproved,
    #[serde(rename = "action.denied")]
    ActionDenied,
    #[serde(rename = "action.approval_invalidated")]
    ActionApprovalInvalidated,
    #[serde(rename = "action.executed")]
    ActionExecuted,
    #[serde(rename = "action.settled")]
    ActionSettled,
    #[serde(rename = "action.reconciled")]
    ActionReconciled,
    #[serde(rename = "action.reconciliation_exception")]
    ActionReconciliationException,
    #[serde(rename = "action.failed")]
    ActionFailed,
    #[serde(rename = "action.returned")]
    ActionReturned,
    #[serde(rename = "workflow.invoked")]
    WorkflowInvoked,
    #[serde(rename = "workflow.awaiting_review")]
    WorkflowAwaitingReview,
    #[serde(rename = "workflow.completed")]
    WorkflowCompleted,
    #[serde(rename = "workflow.cancelled")]
    WorkflowCancelled,
    #[serde(rename = "workflow.failed")]
    WorkflowFailed,
    /// An action entered `pending_approval` (proposed, submitted, or sent back to people): who must approve
    /// it is in its `detail`, so a chat or ticketing tool can notify them.
    #[serde(rename = "approval.requested")]
    ApprovalRequested,
    /// A new version of the approval policy came into force (a second admin approved it).
    #[serde(rename = "approval.policy_changed")]
    ApprovalPolicyChanged,
}

impl EventType {
    pub const ALL: [EventType; 20] = [
        EventType::ActionProposed,
        EventType::ActionSubmitted,
        EventType::ActionCheckRecorded,
        EventType::ActionApprovalRecorded,
        EventType::ActionApproved,
        EventType::ActionDenied,
        EventType::ActionApprovalInvalidated,
        EventType::ActionExecuted,
        EventType::ActionSettled,
        EventType::ActionReconciled,
        EventType::ActionReconciliationException,
        EventType::ActionFailed,
        EventType::ActionReturned,
        EventType::WorkflowInvoked,
        EventType::WorkflowAwaitingReview,
        EventType::WorkflowCompleted,
        EventType::WorkflowCancelled,
        EventType::WorkflowFailed,
        EventType::ApprovalRequested,
        EventType::ApprovalPolicyChanged,
    ];

    /// The scope that reads the objects events of this type are about: an application holding it may hear
    /// them whoever's object it is (`webhooks::may_hear`).
    pub fn read_scope(self) -> &'static str {
        if self.as_str().starts_with("workflow.") { "workflow:read" } else { "actions:read" }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::ActionProposed => "action.proposed",
            EventType::ActionSubmitted => "action.submitted",
            EventType::ActionCheckRecorded => "action.check_recorded",
            EventType::ActionApprovalRecorded => "action.approval_recorded",
            EventType::ActionApproved => "action.approved",
            EventType::ActionDenied => "action.denied",
            EventType::ActionApprovalInvalidated => "action.approval_invalidated",
            EventType::ActionExecuted => "action.executed",
            EventType::ActionSettled => "action.settled",
            EventType::ActionReconciled => "action.reconciled",
            EventType::ActionReconciliationException => "action.reconciliation_exception",
            EventType::ActionFailed => "action.failed",
            EventType::ActionReturned => "action.returned",
            EventType::WorkflowInvoked => "workflow.invoked",
            EventType::WorkflowAwaitingReview => "workflow.awaiting_review",
            EventType::WorkflowCompleted => "workflow.completed",
            EventType::WorkflowCancelled => "workflow.cancelled",
            EventType::WorkflowFailed => "workflow.failed",
            EventType::ApprovalRequested => "approval.requested",
            EventType::ApprovalPolicyChanged => "approval.policy_changed",
        }
    }

    pub fn parse(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lifecycle event: the shape stored in the outbox and delivered to subscribers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "id": "evt_01M81GEC05EFB9183ZPGT2DR8T",
    "type": "action.approved",
    "created_at": "2026-11-22T10:15:30.123456Z",
    "workspace_id": "wsp_01M81GEC05EFB9183ZPGT2DR8T",
    "environment": "sandbox",
    "actor": { "kind": "operator", "id": "opr_01M81GEC05EFB9183ZPGT2DR8T" },
    "data": {
        "action_id": "act_01M81GEC05EFB9183ZPGT2DR8T",
        "from_state": "pending_approval",
        "to_state": "approved",
        "envelope_hash": "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
        "detail": { "decision_id": "dec_01M81GEC05EFB9183ZPGT2DR8T" }
    }
}))]
pub struct Event {
    /// `evt_…`, unique; consumers deduplicate on it (delivery is at least once).
    #[schema(pattern = "^evt_[0-9A-Z]{26}$")]
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// RFC 3339, UTC, microseconds.
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(pattern = "^wsp_[0-9A-Z]{26}$")]
    pub workspace_id: String,
    pub environment: Environment,
    pub actor: Actor,
    pub data: EventData,
}

/// The data of an event, by the family of its type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum EventData {
    Action(ActionEventData),
    Workflow(WorkflowEventData),
    Policy(PolicyEventData),
}

/// The data of `approval.policy_changed`: the version now in force, the one it replaced, and what it did to
/// the actions awaiting approval or execution (a tightening applies to them; a loosening never does).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyEventData {
    #[schema(pattern = "^apv_[0-9A-Z]{26}$")]
    pub policy_id: String,
    pub version: i64,
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub policy_hash: String,
    /// The version it replaced; `null` for the first (always present).
    #[schema(required = true)]
    pub previous_version: Option<i64>,
    /// Actions whose requirement it tightened.
    pub tightened: u32,
    /// Of those, approved actions whose approvals no longer sufficed, sent back to people.
    pub reopened: u32,
}

/// The data of every `workflow.*` event: which run of which workflow version, the state change it records,
/// the hash of the definition that runs, and the event's own facts (the step awaiting review, the step
/// that failed, the evidence hash of an ended run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowEventData {
    #[schema(pattern = "^wfr_[0-9A-Z]{26}$")]
    pub run_id: String,
    #[schema(pattern = "^wfl_[0-9A-Z]{26}$")]
    pub workflow_id: String,
    #[schema(pattern = "^wfv_[0-9A-Z]{26}$")]
    pub version_id: String,
    /// `null` for the invocation, which creates the run (always present).
    #[schema(required = true)]
    pub from_state: Option<RunState>,
    pub to_state: RunState,
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub definition_hash: String,
    #[schema(value_type = Object)]
    pub detail: Value,
}

/// The data of every `action.*` event: which action, the state change it records (equal states when the
/// event changes none, e.g. a check or an approval short of the quorum), the envelope hash it concerns, and
/// the event's own facts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionEventData {
    #[schema(pattern = "^act_[0-9A-Z]{26}$")]
    pub action_id: String,
    /// `null` for the proposal, which creates the action (always present).
    #[schema(required = true)]
    pub from_state: Option<ControlState>,
    pub to_state: ControlState,
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub envelope_hash: String,
    /// What the event adds: decision and evidence hashes, check versions, settlement record ids…
    #[schema(value_type = Object)]
    pub detail: Value,
}

/// An event type a webhook endpoint can ask for, or `*` for every type: the schema of one entry of an
/// endpoint's `event_types`.
pub struct SubscribedEventType;

impl utoipa::PartialSchema for SubscribedEventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let names = std::iter::once("*").chain(EventType::ALL.iter().map(|e| e.as_str()));
        ObjectBuilder::new().schema_type(Type::String).enum_values(Some(names)).build().into()
    }
}

impl utoipa::ToSchema for SubscribedEventType {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_by_its_name() {
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).expect("type"), t.as_str());
        }
        assert_eq!(EventType::parse("action.teleported"), None);
    }
}
