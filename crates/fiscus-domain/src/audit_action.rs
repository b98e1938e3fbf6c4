//! What an audit event records: one closed vocabulary, in three parts that never share a word.
//!
//! - a lifecycle [`EventType`] (`action.approved`, …) when the change is announced to subscribers;
//! - a catalogue [`Operation`] id (`post_oauth_token`, …) when a request changed something that announces no
//!   event (the request's operation is the most precise name there is);
//! - a [`Change`] of an area, the console or the deployment's CLI that announces no event and is not one
//!   request's operation (a compute job that fails in a worker, an operator's sign-in, `fiscus admin …`).
//!
//! The stored word is what the chain hashes, so a word, once written, is never renamed: add a variant instead.

use crate::catalogue::{OPERATIONS, Operation};
use crate::events::EventType;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditAction {
    Event(EventType),
    Operation(&'static Operation),
    Change(Change),
}

impl AuditAction {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Event(e) => e.as_str(),
            AuditAction::Operation(op) => op.id,
            AuditAction::Change(c) => c.as_str(),
        }
    }

    /// A stored word back; `None` for a word no part of the vocabulary has.
    pub fn parse(word: &str) -> Option<AuditAction> {
        EventType::parse(word)
            .map(AuditAction::Event)
            .or_else(|| Change::parse(word).map(AuditAction::Change))
            .or_else(|| OPERATIONS.iter().find(|op| op.id == word).map(AuditAction::Operation))
    }
}

impl From<EventType> for AuditAction {
    fn from(e: EventType) -> AuditAction {
        AuditAction::Event(e)
    }
}

impl From<Change> for AuditAction {
    fn from(c: Change) -> AuditAction {
        AuditAction::Change(c)
    }
}

macro_rules! changes {
    ($($(#[$doc:meta])* $variant:ident => $word:literal,)*) => {
        /// A recorded change that is neither an announced event nor one request's operation.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Change {
            $($(#[$doc])* $variant,)*
        }

        impl Change {
            pub const ALL: &'static [Change] = &[$(Change::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Change::$variant => $word,)*
                }
            }
        }
    };
}

changes! {
    // The deployment's operator at the command line (`fiscus admin …`).
    AdminWorkspaceCreate => "admin.workspace.create",
    AdminWorkspaceEntitlement => "admin.workspace.entitlement",
    AdminApplicationCreate => "admin.application.create",
    AdminApplicationStatus => "admin.application.status",
    AdminApiKeyIssue => "admin.api_key.issue",
    AdminApiKeyRevoke => "admin.api_key.revoke",
    AdminApiKeyRotate => "admin.api_key.rotate",
    AdminOAuthClientCreate => "admin.oauth_client.create",
    AdminOAuthClientRotate => "admin.oauth_client.rotate",
    AdminOperatorInvite => "admin.operator.invite",
    AdminCreditsGrant => "admin.credits.grant",
    // People at the console.
    ConsoleLogin => "console.login",
    ConsoleLoginFailed => "console.login_failed",
    ConsoleEnrolled => "console.enrolled",
    ConsoleProductionAccess => "console.production_access",
    // The governed core.
    DelegationDecision => "delegation.decision",
    ExecutionClientRegistered => "execution_client.registered",
    ExecutionClientDecision => "execution_client.decision",
    WebhookEndpointDecision => "webhook_endpoint.decision",
    WebhookEndpointDisabled => "webhook_endpoint.disabled",
    CounterpartyCreated => "counterparty.created",
    BankAccountProposed => "bank_account.proposed",
    BankAccountDecision => "bank_account.decision",
    PaymentFileRecorded => "payment_file.recorded",
    PaymentFilePublished => "payment_file.published",
    BankMessageImported => "bank_message.imported",
    StatementEntryResolved => "statement_entry.resolved",
    ApprovalPolicyProposed => "approval_policy.proposed",
    ApprovalPolicyDecision => "approval_policy.decision",
    ApproverGroupChanged => "approver_group.changed",
    /// A worker set a record aside that failed its seal (issue 54): named here so its workspace's trail says so.
    RecordSetAside => "record.set_aside",
    // Data and compute.
    DataImport => "data.import",
    ComputeJobCreated => "compute.job.created",
    ComputeJobCancelRequested => "compute.job.cancel_requested",
    ComputeJobSucceeded => "compute.job.succeeded",
    ComputeJobCancelled => "compute.job.cancelled",
    ComputeJobFailed => "compute.job.failed",
    ResearchSnapshotCreated => "research.snapshot.created",
    // Models (LQM and QLM).
    LqmModelRegistered => "lqm.model.registered",
    LqmContractSealed => "lqm.contract.sealed",
    LqmCheckpointTrained => "lqm.checkpoint.trained",
    LqmCheckpointEvaluated => "lqm.checkpoint.evaluated",
    LqmCheckpointPublished => "lqm.checkpoint.published",
    LqmEvidencePacketIssued => "lqm.evidence_packet.issued",
    LqmPromotionRequested => "lqm.promotion.requested",
    LqmPromotionApproved => "lqm.promotion.approved",
    LqmPromotionDenied => "lqm.promotion.denied",
    LqmPromotionRevoked => "lqm.promotion.revoked",
    LqmRetrainingRequested => "lqm.retraining.requested",
    LqmRetrainingApproved => "lqm.retraining.approved",
    LqmRetrainingRejected => "lqm.retraining.rejected",
    LqmRetrainingCancelled => "lqm.retraining.cancelled",
    LqmRetrainingDecisionSubmitted => "lqm.retraining.decision_submitted",
    QlmCreated => "qlm.created",
    QlmRebound => "qlm.rebound",
    QlmInvoked => "qlm.invoked",
    QlmEvaluated => "qlm.evaluated",
    // Investment.
    InvestmentUniverseCreated => "investment.universe.created",
    InvestmentUniverseHandedOff => "investment.universe.handed_off",
    InvestmentModelPortfolioCreated => "investment.model_portfolio.created",
    InvestmentModelPortfolioApproved => "investment.model_portfolio.approved",
    InvestmentModelPortfolioRejected => "investment.model_portfolio.rejected",
    InvestmentOperationOpened => "investment.operation.opened",
    InvestmentRecordCreated => "investment.record.created",
    InvestmentRestrictedListAdded => "investment.restricted_list.added",
    InvestmentCollateralPolicySet => "investment.collateral_policy.set",
    // Agents, workflows and calls.
    AgentSpacePromoted => "agent_space.promoted",
    AgentSpaceSuspended => "agent_space.suspended",
    AgentSpaceRunStarted => "agent_space.run_started",
    WorkflowVersionCreated => "workflow.version.created",
    WorkflowReviewApproved => "workflow.review.approved",
    WorkflowInstalled => "workflow.installed",
    WorkflowCampaignRecorded => "workflow.campaign.recorded",
    WorkflowProofOfValueRecorded => "workflow.proof_of_value.recorded",
    WorkflowToolsDecision => "workflow_tools.decision",
    CallCreated => "call.created",
    CallConsentRecorded => "call.consent_recorded",
    CallRecordingStored => "call.recording_stored",
    CallTranscribed => "call.transcribed",
}

impl Change {
    pub fn parse(word: &str) -> Option<Change> {
        Change::ALL.iter().copied().find(|c| c.as_str() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_three_parts_never_share_a_word_and_every_word_reads_back() {
        let mut words = HashSet::new();
        let all = EventType::ALL
            .iter()
            .map(|e| AuditAction::Event(*e))
            .chain(OPERATIONS.iter().map(AuditAction::Operation))
            .chain(Change::ALL.iter().map(|c| AuditAction::Change(*c)));
        for action in all {
            assert!(words.insert(action.as_str()), "{} is used twice", action.as_str());
            assert_eq!(AuditAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(AuditAction::parse("system.reboot"), None);
    }
}
