//! Promotion: an operator's decision to serve one exact evaluated, published checkpoint in the
//! workspace's Quant Models catalogue. A credential may request it; only a person at the console decides,
//! once. An approved promotion serves until the model's next promotion supersedes it or an operator
//! revokes it; a revoked checkpoint serves nothing again.

use serde::{Deserialize, Serialize};

use super::lifecycle::PromotionState;

/// An operator's decision on a pending promotion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromotionDecision {
    Approve,
    Deny,
}

impl PromotionDecision {
    pub fn parse(s: &str) -> Option<PromotionDecision> {
        match s {
            "approve" => Some(PromotionDecision::Approve),
            "deny" => Some(PromotionDecision::Deny),
            _ => None,
        }
    }
}

/// A move the promotion's state does not allow (it stands where it stands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAllowed(pub PromotionState);

impl std::fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the promotion is {}", self.0.as_str())
    }
}

/// The state a decision moves a pending promotion to.
pub fn decide(state: PromotionState, decision: PromotionDecision) -> Result<PromotionState, NotAllowed> {
    match (state, decision) {
        (PromotionState::Pending, PromotionDecision::Approve) => Ok(PromotionState::Active),
        (PromotionState::Pending, PromotionDecision::Deny) => Ok(PromotionState::Denied),
        (other, _) => Err(NotAllowed(other)),
    }
}

/// Revoking ends an active promotion.
pub fn revoke(state: PromotionState) -> Result<PromotionState, NotAllowed> {
    match state {
        PromotionState::Active => Ok(PromotionState::Revoked),
        other => Err(NotAllowed(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promotion_is_decided_once_and_only_an_active_one_is_revoked() {
        assert_eq!(decide(PromotionState::Pending, PromotionDecision::Approve), Ok(PromotionState::Active));
        assert_eq!(decide(PromotionState::Pending, PromotionDecision::Deny), Ok(PromotionState::Denied));
        for s in [PromotionState::Active, PromotionState::Denied, PromotionState::Revoked, PromotionState::Superseded] {
            assert_eq!(decide(s, PromotionDecision::Approve), Err(NotAllowed(s)));
        }
        assert_eq!(revoke(PromotionState::Active), Ok(PromotionState::Revoked));
        assert_eq!(revoke(PromotionState::Pending), Err(NotAllowed(PromotionState::Pending)));
    }
}
