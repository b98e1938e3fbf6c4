//! The names of a Financial Action every layer shares: its kind and its control state, as stored, sent in
//! events and shown. The rules that move an action between states, and every other rule of an action, live
//! with Financial Actions in `fiscus-actions` (`rules`): an event, the activity view, an execution client's
//! grant or a bank file only name a kind or a state.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Payment,
    Transfer,
    FxConversion,
    InvestmentOrder,
    CollateralMovement,
}

impl ActionKind {
    pub const ALL: [ActionKind; 5] = [
        ActionKind::Payment,
        ActionKind::Transfer,
        ActionKind::FxConversion,
        ActionKind::InvestmentOrder,
        ActionKind::CollateralMovement,
    ];

    /// The kind a stored or sent name stands for; anything else is `None` (never a default).
    pub fn parse(s: &str) -> Option<ActionKind> {
        ActionKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Payment => "payment",
            ActionKind::Transfer => "transfer",
            ActionKind::FxConversion => "fx_conversion",
            ActionKind::InvestmentOrder => "investment_order",
            ActionKind::CollateralMovement => "collateral_movement",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlState {
    Draft,
    PendingApproval,
    Approved,
    Denied,
    Executing,
    Settled,
    Completed,
    ReconciliationException,
    Failed,
    Returned,
}

impl ControlState {
    pub const ALL: [ControlState; 10] = [
        ControlState::Draft,
        ControlState::PendingApproval,
        ControlState::Approved,
        ControlState::Denied,
        ControlState::Executing,
        ControlState::Settled,
        ControlState::Completed,
        ControlState::ReconciliationException,
        ControlState::Failed,
        ControlState::Returned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ControlState::Draft => "draft",
            ControlState::PendingApproval => "pending_approval",
            ControlState::Approved => "approved",
            ControlState::Denied => "denied",
            ControlState::Executing => "executing",
            ControlState::Settled => "settled",
            ControlState::Completed => "completed",
            ControlState::ReconciliationException => "reconciliation_exception",
            ControlState::Failed => "failed",
            ControlState::Returned => "returned",
        }
    }

    pub fn parse(s: &str) -> Option<ControlState> {
        ControlState::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// No further move is possible.
    pub fn is_terminal(self) -> bool {
        matches!(self, ControlState::Denied | ControlState::Completed | ControlState::Failed | ControlState::Returned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip() {
        for s in ControlState::ALL {
            assert_eq!(ControlState::parse(s.as_str()), Some(s));
        }
    }
}
