//! The control state machine of a Financial Action: which event moves an action from which state. The
//! state names (`fiscus_domain::actions::ControlState`) are Fiscus's (the seed leaves them open) and
//! are documented in the OpenAPI and crates/fiscus-kernel/README.md.
//!
//! ```text
//! draft ──submit──► pending_approval ──quorum──► approved ──execute (gates)──► executing
//!   │                 ▲      │                     │                            │
//!   └──deny──► denied ◄┼──────┘◄────deny────────────┤                            ├─► settled ──reconcile──► completed
//!                      └──────── new check version ─┘                            │      └─ mismatch ─► reconciliation_exception
//!                                                                                ├─► failed (budget released)
//!                                                                                └─ settled ─► returned (budget released)
//! ```
//! Only `completed` is done: acceptance and the connector's acknowledgement are not completion.

use fiscus_domain::actions::ControlState;
use serde::{Deserialize, Serialize};

/// What moves an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Submit,
    QuorumReached,
    Deny,
    ApprovalInvalidated,
    ExecutionAccepted,
    /// A machine-delegated action accepted on its delegation's standing (operator-approved) authority.
    DelegatedExecutionAccepted,
    ConnectorSettled,
    ConnectorFailed,
    ConnectorReturned,
    ReconciledMatch,
    ReconciledMismatch,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("an action in state {from:?} cannot take {event:?}")]
pub struct InvalidTransition {
    pub from: ControlState,
    pub event: Event,
}

/// The one table of allowed moves: the state an action in `from` reaches on `event`, or why it cannot.
pub fn next(from: ControlState, event: Event) -> Result<ControlState, InvalidTransition> {
    use ControlState as S;
    use Event as E;
    let next = match (from, event) {
        (S::Draft, E::Submit) => S::PendingApproval,
        (S::PendingApproval, E::QuorumReached) => S::Approved,
        (S::Draft | S::PendingApproval | S::Approved, E::Deny) => S::Denied,
        (S::Approved, E::ApprovalInvalidated) => S::PendingApproval,
        (S::Approved, E::ExecutionAccepted) => S::Executing,
        (S::PendingApproval | S::Approved, E::DelegatedExecutionAccepted) => S::Executing,
        (S::Executing, E::ConnectorSettled) => S::Settled,
        (S::Executing, E::ConnectorFailed) => S::Failed,
        (S::Settled | S::Completed, E::ConnectorReturned) => S::Returned,
        (S::Settled, E::ReconciledMatch) => S::Completed,
        (S::Settled, E::ReconciledMismatch) => S::ReconciliationException,
        (from, event) => return Err(InvalidTransition { from, event }),
    };
    Ok(next)
}

/// Reconciliation status, reported beside the control state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReconciliationStatus {
    /// Nothing sent to a connector yet.
    NotStarted,
    /// Sent; no settlement record yet.
    AwaitingSettlement,
    /// A settlement record matched the action's reference, amount and currency.
    Matched,
    /// A settlement record did not match; visible for people to resolve.
    Exception,
    /// The connector failed or returned the funds.
    Unsettled,
}

impl ReconciliationStatus {
    pub fn of(state: ControlState) -> ReconciliationStatus {
        match state {
            ControlState::Executing | ControlState::Settled => ReconciliationStatus::AwaitingSettlement,
            ControlState::Completed => ReconciliationStatus::Matched,
            ControlState::ReconciliationException => ReconciliationStatus::Exception,
            ControlState::Failed | ControlState::Returned => ReconciliationStatus::Unsettled,
            _ => ReconciliationStatus::NotStarted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_happy_path_ends_only_at_completed() {
        let mut s = ControlState::Draft;
        for e in [
            Event::Submit,
            Event::QuorumReached,
            Event::ExecutionAccepted,
            Event::ConnectorSettled,
            Event::ReconciledMatch,
        ] {
            s = next(s, e).expect("allowed");
        }
        assert_eq!(s, ControlState::Completed);
        assert!(s.is_terminal());
    }

    #[test]
    fn nothing_executes_without_approval_and_a_denial_ends_it() {
        assert!(next(ControlState::PendingApproval, Event::ExecutionAccepted).is_err());
        assert!(next(ControlState::Draft, Event::ExecutionAccepted).is_err());
        let denied = next(ControlState::Approved, Event::Deny).expect("deny");
        for e in [Event::Submit, Event::QuorumReached, Event::ExecutionAccepted] {
            assert!(next(denied, e).is_err());
        }
    }

    #[test]
    fn a_new_check_version_returns_an_approved_action_to_approval() {
        assert_eq!(next(ControlState::Approved, Event::ApprovalInvalidated), Ok(ControlState::PendingApproval));
        assert!(next(ControlState::Executing, Event::ApprovalInvalidated).is_err());
    }
}
