//! The state of a workflow run, as stored, shown and announced by every layer (the kernel's record step,
//! the activity view). The rules of workflows (definitions, the plan of a run, reviews, campaigns, the
//! gateway) live with the agents, in `fiscus-agents` (`rules/workflows`).

use serde::{Deserialize, Serialize};

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowRunState)]
pub enum RunState {
    /// Created; a worker will start it.
    Queued,
    /// A worker is running (or will run) its next step.
    Running,
    /// A wait step's timer is running.
    Waiting,
    /// A review step waits for a person at the console.
    AwaitingReview,
    Completed,
    Failed,
    Cancelled,
}

impl RunState {
    pub const ALL: [RunState; 7] = [
        RunState::Queued,
        RunState::Running,
        RunState::Waiting,
        RunState::AwaitingReview,
        RunState::Completed,
        RunState::Failed,
        RunState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Waiting => "waiting",
            RunState::AwaitingReview => "awaiting_review",
            RunState::Completed => "completed",
            RunState::Failed => "failed",
            RunState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// An ended run never moves again.
    pub fn is_ended(self) -> bool {
        matches!(self, RunState::Completed | RunState::Failed | RunState::Cancelled)
    }
}
