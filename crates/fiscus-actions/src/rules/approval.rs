//! Human decisions on an action: a quorum of independent operators approves the current envelope hash and
//! check set; the proposer never approves; one person never counts twice; a denial ends it.

use crate::rules::envelope::RiskTier;
use fiscus_domain::actions::ControlState;
use fiscus_domain::people::{Refusal, Role};

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
    pub quorum: u32,
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
    let current: Vec<&PriorApproval> = facts
        .prior
        .iter()
        .filter(|p| p.envelope_hash == facts.envelope_hash && p.check_set_hash == facts.check_set_hash)
        .collect();
    if current.iter().any(|p| p.operator_id == facts.operator_id) {
        return Err(Refusal::AlreadyApproved);
    }
    let mut distinct: Vec<&str> = current.iter().map(|p| p.operator_id.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let approvals = distinct.len() as u32 + 1;
    Ok(if approvals >= facts.quorum {
        Outcome::QuorumReached { approvals }
    } else {
        Outcome::Recorded { approvals, quorum: facts.quorum }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(operator: &'a str, prior: &'a [PriorApproval], quorum: u32) -> DecisionFacts<'a> {
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
            quorum,
        }
    }

    fn prior(op: &str) -> PriorApproval {
        PriorApproval { operator_id: op.into(), envelope_hash: "sha256:e".into(), check_set_hash: "sha256:c".into() }
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
