//! A run of a workflow version: its states, and the deterministic plan of what runs next.
//!
//! The runtime is durable in the manner of Temporal: a run's history (each step's recorded outcome) is
//! the only state that matters, and what happens next is a pure function of the definition and that
//! history ([`plan`]). A worker that dies mid-step leaves the step unrecorded; the next worker plans the
//! same step again from the same history, and a step's outcome is recorded once (a second recording of
//! the same step is refused by the store), so no step's effect lands twice. Steps run one at a time, the
//! first ready step in the definition's order first, so the same inputs give the same history, and the
//! same evidence.

use super::definition::{Definition, Step};
use fiscus_domain::people::Role;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub use fiscus_domain::workflows::RunState;

/// A step's recorded outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowStepOutcome)]
pub enum StepOutcome {
    /// The step ran and its output is recorded.
    Completed,
    /// The step failed (its output says why); the run fails.
    Failed,
    /// A person rejected the run at this review step; the run is cancelled.
    Rejected,
}

impl StepOutcome {
    pub const ALL: [StepOutcome; 3] = [StepOutcome::Completed, StepOutcome::Failed, StepOutcome::Rejected];

    pub fn as_str(self) -> &'static str {
        match self {
            StepOutcome::Completed => "completed",
            StepOutcome::Failed => "failed",
            StepOutcome::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<StepOutcome> {
        StepOutcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// What the runtime does next, given the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Run this step (its index in the definition).
    Run(usize),
    /// Every step completed.
    Complete,
    /// A step failed: the run fails.
    Fail { step: String },
    /// A review was rejected: the run is cancelled.
    Cancel { step: String },
}

/// The next move of a run whose recorded outcomes are `history` (step id → outcome). Pure and
/// deterministic: the first step, in the definition's order, that has no outcome and whose dependencies
/// all completed. A definition is checked before it is stored, so a step is always ready while any is left.
pub fn plan(definition: &Definition, history: &HashMap<String, StepOutcome>) -> Next {
    for step in &definition.steps {
        match history.get(step.id()) {
            Some(StepOutcome::Failed) => return Next::Fail { step: step.id().to_string() },
            Some(StepOutcome::Rejected) => return Next::Cancel { step: step.id().to_string() },
            _ => {}
        }
    }
    let ready = definition.steps.iter().position(|step: &Step| {
        !history.contains_key(step.id())
            && step.after().iter().all(|dep| history.get(dep) == Some(&StepOutcome::Completed))
    });
    match ready {
        Some(i) => Next::Run(i),
        None => Next::Complete,
    }
}

/// A review decision by a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowReviewDecision)]
pub enum ReviewDecision {
    Approve,
    Reject,
}

impl ReviewDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Approve => "approve",
            ReviewDecision::Reject => "reject",
        }
    }

    pub fn parse(s: &str) -> Option<ReviewDecision> {
        match s {
            "approve" => Some(ReviewDecision::Approve),
            "reject" => Some(ReviewDecision::Reject),
            _ => None,
        }
    }

    pub fn outcome(self) -> StepOutcome {
        match self {
            ReviewDecision::Approve => StepOutcome::Completed,
            ReviewDecision::Reject => StepOutcome::Rejected,
        }
    }
}

/// Why a run cannot be reviewed or cancelled now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotPending(pub RunState);

/// Why a person's review is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewRefusal {
    /// An auditor reads; only an admin or an approver decides.
    Role(Role),
    NotPending(RunState),
}

/// A review is decided by an admin or an approver (a credential has no role and never reaches here), and
/// only while its run awaits review.
pub fn may_review(role: Role, state: RunState) -> Result<(), ReviewRefusal> {
    if !matches!(role, Role::Admin | Role::Approver) {
        return Err(ReviewRefusal::Role(role));
    }
    if state != RunState::AwaitingReview {
        return Err(ReviewRefusal::NotPending(state));
    }
    Ok(())
}

/// A run may be cancelled until it ends.
pub fn may_cancel(state: RunState) -> Result<(), NotPending> {
    if state.is_ended() { Err(NotPending(state)) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition() -> Definition {
        serde_json::from_value(json!({"steps": [
            {"kind": "read_prices", "id": "a", "instrument": "SPY", "observations": 10},
            {"kind": "read_series", "id": "b", "series": "DGS10", "observations": 10},
            {"kind": "measure", "id": "c", "after": ["a"], "input": "a", "measure": "mean"},
            {"kind": "review", "id": "d", "after": ["b", "c"], "title": "Look"}
        ]}))
        .expect("parses")
    }

    fn history(pairs: &[(&str, StepOutcome)]) -> HashMap<String, StepOutcome> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn steps_run_one_at_a_time_in_the_definitions_order_once_ready() {
        let d = definition();
        assert_eq!(plan(&d, &history(&[])), Next::Run(0));
        assert_eq!(plan(&d, &history(&[("a", StepOutcome::Completed)])), Next::Run(1));
        let two = history(&[("a", StepOutcome::Completed), ("b", StepOutcome::Completed)]);
        assert_eq!(plan(&d, &two), Next::Run(2));
        let three =
            history(&[("a", StepOutcome::Completed), ("b", StepOutcome::Completed), ("c", StepOutcome::Completed)]);
        assert_eq!(plan(&d, &three), Next::Run(3));
        let all = history(&[
            ("a", StepOutcome::Completed),
            ("b", StepOutcome::Completed),
            ("c", StepOutcome::Completed),
            ("d", StepOutcome::Completed),
        ]);
        assert_eq!(plan(&d, &all), Next::Complete);
    }

    #[test]
    fn a_failure_fails_and_a_rejection_cancels() {
        let d = definition();
        assert_eq!(plan(&d, &history(&[("a", StepOutcome::Failed)])), Next::Fail { step: "a".into() });
        let rejected = history(&[
            ("a", StepOutcome::Completed),
            ("b", StepOutcome::Completed),
            ("c", StepOutcome::Completed),
            ("d", StepOutcome::Rejected),
        ]);
        assert_eq!(plan(&d, &rejected), Next::Cancel { step: "d".into() });
    }

    #[test]
    fn only_a_run_awaiting_review_is_reviewable_and_an_ended_one_is_not_cancellable() {
        assert!(may_review(Role::Approver, RunState::AwaitingReview).is_ok());
        assert!(may_review(Role::Admin, RunState::AwaitingReview).is_ok());
        assert_eq!(may_review(Role::Auditor, RunState::AwaitingReview), Err(ReviewRefusal::Role(Role::Auditor)));
        assert_eq!(may_review(Role::Approver, RunState::Running), Err(ReviewRefusal::NotPending(RunState::Running)));
        assert!(may_cancel(RunState::Waiting).is_ok());
        assert_eq!(may_cancel(RunState::Completed), Err(NotPending(RunState::Completed)));
    }
}
