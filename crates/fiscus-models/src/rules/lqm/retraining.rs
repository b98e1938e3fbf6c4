//! The review of a retraining request: a person approves, rejects or cancels a pending request, once.
//!
//! Approval authorises the training of one candidate checkpoint and nothing else: no promotion, no
//! activation. Rejection and cancellation execute nothing. A request that is not pending is not reviewable.

use serde::{Deserialize, Serialize};

/// Where a retraining request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = RetrainingRequestState)]
pub enum RequestState {
    /// Awaiting review.
    Pending,
    /// Approved: one candidate may be trained under it.
    Approved,
    Rejected,
    Cancelled,
    /// Its candidate was trained (the approval is spent).
    Trained,
}

impl RequestState {
    pub const ALL: [RequestState; 5] = [
        RequestState::Pending,
        RequestState::Approved,
        RequestState::Rejected,
        RequestState::Cancelled,
        RequestState::Trained,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RequestState::Pending => "pending",
            RequestState::Approved => "approved",
            RequestState::Rejected => "rejected",
            RequestState::Cancelled => "cancelled",
            RequestState::Trained => "trained",
        }
    }

    pub fn parse(s: &str) -> Option<RequestState> {
        RequestState::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// A reviewer's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = RetrainingDecision)]
pub enum Decision {
    Approve,
    Reject,
    Cancel,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
            Decision::Cancel => "cancel",
        }
    }
}

/// Whether an actor of `kind` may decide a retraining request: only a person (an operator at the console).
/// The seed makes the decision a human one, and a credential never carries the authority of a control, so an
/// application (whatever its scopes), a worker or the CLI only ever submits a decision for a person.
pub fn may_decide(kind: fiscus_domain::actor::ActorKind) -> bool {
    kind == fiscus_domain::actor::ActorKind::Operator
}

/// The request is not awaiting review (it stands where it stands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotReviewable(pub RequestState);

/// The state a decision moves a request to.
pub fn decide(state: RequestState, decision: Decision) -> Result<RequestState, NotReviewable> {
    if state != RequestState::Pending {
        return Err(NotReviewable(state));
    }
    Ok(match decision {
        Decision::Approve => RequestState::Approved,
        Decision::Reject => RequestState::Rejected,
        Decision::Cancel => RequestState::Cancelled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_person_decides() {
        use fiscus_domain::actor::ActorKind;
        assert!(may_decide(ActorKind::Operator));
        for kind in [ActorKind::Application, ActorKind::Worker, ActorKind::Cli, ActorKind::Runtime] {
            assert!(!may_decide(kind), "{kind:?}");
        }
    }

    #[test]
    fn only_a_pending_request_is_decided_and_only_once() {
        assert_eq!(decide(RequestState::Pending, Decision::Approve), Ok(RequestState::Approved));
        assert_eq!(decide(RequestState::Pending, Decision::Reject), Ok(RequestState::Rejected));
        assert_eq!(decide(RequestState::Pending, Decision::Cancel), Ok(RequestState::Cancelled));
        for s in [RequestState::Approved, RequestState::Rejected, RequestState::Cancelled, RequestState::Trained] {
            assert_eq!(decide(s, Decision::Approve), Err(NotReviewable(s)));
        }
        for s in RequestState::ALL {
            assert_eq!(RequestState::parse(s.as_str()), Some(s));
        }
    }
}
