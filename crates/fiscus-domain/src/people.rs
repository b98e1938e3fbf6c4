//! The people's plane: an operator's role and standing in a workspace, and the refusals every decision
//! people make on what machines propose shares (an action, a webhook endpoint, an execution client, an agent
//! space, production access). The rules of each decision live with what is decided.

/// Operator roles of a workspace (the human plane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Admin,
    Approver,
    Auditor,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Approver => "approver",
            Role::Auditor => "auditor",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "admin" => Some(Role::Admin),
            "approver" => Some(Role::Approver),
            "auditor" => Some(Role::Auditor),
            _ => None,
        }
    }

    /// Auditors read; they never decide.
    pub fn may_decide(self) -> bool {
        matches!(self, Role::Admin | Role::Approver)
    }
}

/// Where an operator stands in a workspace: invited (an enrolment link is out), active (may sign in), or
/// removed (never again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperatorStatus {
    Invited,
    Active,
    Removed,
}

impl OperatorStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperatorStatus::Invited => "invited",
            OperatorStatus::Active => "active",
            OperatorStatus::Removed => "removed",
        }
    }

    pub fn parse(s: &str) -> Option<OperatorStatus> {
        [OperatorStatus::Invited, OperatorStatus::Active, OperatorStatus::Removed].into_iter().find(|o| o.as_str() == s)
    }
}

/// Why a person's decision is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the action is not awaiting approval")]
    NotAwaitingApproval,
    #[error("this role may not decide")]
    RoleMayNotDecide,
    #[error("the proposer may not approve their own action")]
    ProposerMayNotApprove,
    #[error("this operator has already approved the action")]
    AlreadyApproved,
    #[error("the action or its checks changed since it was shown; review it again")]
    StaleView,
    #[error("an approval policy refuses this action: it can only be denied")]
    RefusedByPolicy,
}

impl Refusal {
    pub fn code(self) -> &'static str {
        match self {
            Refusal::NotAwaitingApproval => "not_awaiting_approval",
            Refusal::RoleMayNotDecide => "role_may_not_decide",
            Refusal::ProposerMayNotApprove => "proposer_may_not_approve",
            Refusal::AlreadyApproved => "already_approved",
            Refusal::StaleView => "stale_view",
            Refusal::RefusedByPolicy => "refused_by_policy",
        }
    }
}
