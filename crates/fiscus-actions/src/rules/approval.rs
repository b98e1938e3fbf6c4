//! Human decisions on an action: the people its requirement names (`crate::rules::policy`: a quorum, groups,
//! an expiry) approve the current envelope hash and check set; the proposer never approves; one person never
//! counts twice; an operator who approved the counterparty's bank details lately is never the sole approver;
//! a denial ends it.

use crate::rules::envelope::RiskTier;
use crate::rules::policy::{Approval, Requirement};
use fiscus_domain::actions::ControlState;
use fiscus_domain::people::{Refusal, Role};

/// An operator who approved the counterparty's bank details fewer than this many days before deciding on a
/// payment bound to them is never its sole approver (the built-in separation of duties).
pub const SOLE_APPROVER_WINDOW_DAYS: u32 = 30;

/// What a person decides on an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Deny => "deny",
        }
    }

    pub fn parse(s: &str) -> Option<Decision> {
        match s {
            "approve" => Some(Decision::Approve),
            "deny" => Some(Decision::Deny),
            _ => None,
        }
    }
}

/// An earlier, still valid approval on this action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorApproval {
    pub operator_id: String,
    pub envelope_hash: String,
    pub check_set_hash: String,
    /// The approver groups the operator was in when approving.
    pub groups: Vec<String>,
    pub at: i64,
}

/// Everything the decision depends on.
pub struct DecisionFacts<'a> {
    pub state: ControlState,
    pub envelope_hash: &'a str,
    pub check_set_hash: &'a str,
    /// The operator who proposed the action, if an operator did (applications are not people).
    pub proposed_by_operator: Option<&'a str>,
    pub operator_id: &'a str,
    pub role: Role,
    /// The hashes the operator saw when deciding; a decision covers exactly what was shown.
    pub seen_envelope_hash: &'a str,
    pub seen_check_set_hash: &'a str,
    pub prior: &'a [PriorApproval],
    /// Who must approve (the action's recorded requirement).
    pub requirement: &'a Requirement,
    /// The approver groups the deciding operator is in now.
    pub groups: &'a [String],
    /// Operators who may not be the sole approver (separation of duties).
    pub barred: &'a [&'a str],
    pub now: i64,
}

/// The outcome of an accepted decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An approval that does not yet reach the quorum.
    Recorded {
        approvals: u32,
        quorum: u32,
    },
    /// The approval that reached the quorum.
    QuorumReached {
        approvals: u32,
    },
    Denied,
}

/// The effective quorum: the tier's minimum, or a configured higher number (never lower).
pub fn quorum(tier: RiskTier, configured: Option<u32>) -> u32 {
    configured.unwrap_or(0).max(tier.minimum_quorum())
}

pub fn decide(facts: &DecisionFacts<'_>, decision: Decision) -> Result<Outcome, Refusal> {
    if !facts.role.may_decide() {
        return Err(Refusal::RoleMayNotDecide);
    }
    let awaiting = match decision {
        Decision::Approve => facts.state == ControlState::PendingApproval,
        Decision::Deny => matches!(facts.state, ControlState::PendingApproval | ControlState::Approved),
    };
    if !awaiting {
        return Err(Refusal::NotAwaitingApproval);
    }
    if facts.seen_envelope_hash != facts.envelope_hash || facts.seen_check_set_hash != facts.check_set_hash {
        return Err(Refusal::StaleView);
    }
    if decision == Decision::Deny {
        return Ok(Outcome::Denied);
    }
    if facts.proposed_by_operator == Some(facts.operator_id) {
        return Err(Refusal::ProposerMayNotApprove);
    }
    if facts.requirement.refused.is_some() {
        return Err(Refusal::RefusedByPolicy);
    }
    // Expired approvals neither count nor keep their operator from approving again.
    let current: Vec<&PriorApproval> = facts
        .prior
        .iter()
        .filter(|p| p.envelope_hash == facts.envelope_hash && p.check_set_hash == facts.check_set_hash)
        .filter(|p| facts.requirement.still_counts(p.at, facts.now))
        .collect();
    if current.iter().any(|p| p.operator_id == facts.operator_id) {
        return Err(Refusal::AlreadyApproved);
    }
    let mut approvals: Vec<Approval<'_>> =
        current.iter().map(|p| Approval { operator_id: &p.operator_id, groups: &p.groups, at: p.at }).collect();
    approvals.push(Approval { operator_id: facts.operator_id, groups: facts.groups, at: facts.now });
    let standing = facts.requirement.standing(&approvals, facts.barred, facts.now);
    Ok(if standing.met {
        Outcome::QuorumReached { approvals: standing.approvals }
    } else {
        Outcome::Recorded { approvals: standing.approvals, quorum: standing.quorum }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(operator: &'a str, prior: &'a [PriorApproval], quorum: u32) -> DecisionFacts<'a> {
        let requirement = Box::leak(Box::new(Requirement::floor(RiskTier::T1, quorum)));
        DecisionFacts {
            state: ControlState::PendingApproval,
            envelope_hash: "sha256:e",
            check_set_hash: "sha256:c",
            proposed_by_operator: Some("opr_proposer"),
            operator_id: operator,
            role: Role::Approver,
            seen_envelope_hash: "sha256:e",
            seen_check_set_hash: "sha256:c",
            prior,
            requirement,
            groups: &[],
            barred: &[],
            now: 1_000,
        }
    }

    fn prior(op: &str) -> PriorApproval {
        PriorApproval {
            operator_id: op.into(),
            envelope_hash: "sha256:e".into(),
            check_set_hash: "sha256:c".into(),
            groups: Vec::new(),
            at: 500,
        }
    }

    #[test]
    fn a_t2_action_needs_two_distinct_approvers() {
        assert_eq!(quorum(RiskTier::T2, None), 2);
        assert_eq!(quorum(RiskTier::T1, Some(3)), 3);
        assert_eq!(quorum(RiskTier::T2, Some(1)), 2, "configuration only raises the quorum");
        assert_eq!(
            decide(&facts("opr_a", &[], 2), Decision::Approve),
            Ok(Outcome::Recorded { approvals: 1, quorum: 2 })
        );
        let one = [prior("opr_a")];
        assert_eq!(decide(&facts("opr_a", &one, 2), Decision::Approve), Err(Refusal::AlreadyApproved));
        assert_eq!(decide(&facts("opr_b", &one, 2), Decision::Approve), Ok(Outcome::QuorumReached { approvals: 2 }));
    }

    #[test]
    fn the_proposer_never_approves_but_may_deny() {
        assert_eq!(decide(&facts("opr_proposer", &[], 1), Decision::Approve), Err(Refusal::ProposerMayNotApprove));
        assert_eq!(decide(&facts("opr_proposer", &[], 1), Decision::Deny), Ok(Outcome::Denied));
    }

    #[test]
    fn approvals_on_an_older_check_set_do_not_count() {
        let stale = [PriorApproval { check_set_hash: "sha256:old".into(), ..prior("opr_a") }];
        assert_eq!(
            decide(&facts("opr_b", &stale, 2), Decision::Approve),
            Ok(Outcome::Recorded { approvals: 1, quorum: 2 })
        );
    }

    #[test]
    fn a_requirement_a_rule_refuses_is_never_approved() {
        let refused = Requirement {
            refused: Some(crate::rules::policy::Refused { rule: "no-crypto".into(), reason: "no".into() }),
            ..Requirement::floor(RiskTier::T1, 1)
        };
        let mut f = facts("opr_a", &[], 1);
        f.requirement = &refused;
        assert_eq!(decide(&f, Decision::Approve), Err(Refusal::RefusedByPolicy));
        assert_eq!(decide(&f, Decision::Deny), Ok(Outcome::Denied));
    }

    #[test]
    fn auditors_and_stale_views_are_refused() {
        let mut f = facts("opr_a", &[], 1);
        f.role = Role::Auditor;
        assert_eq!(decide(&f, Decision::Approve), Err(Refusal::RoleMayNotDecide));
        let mut f = facts("opr_a", &[], 1);
        f.seen_check_set_hash = "sha256:older";
        assert_eq!(decide(&f, Decision::Approve), Err(Refusal::StaleView));
        let mut f = facts("opr_a", &[], 1);
        f.state = ControlState::Draft;
        assert_eq!(decide(&f, Decision::Approve), Err(Refusal::NotAwaitingApproval));
    }
}
