//! The state of an LQM checkpoint's promotion, as stored and shown by every layer (the activity view). The
//! rules of the LQM Builder (families, licences, the lifecycle's gates, retraining, promotion) live with the
//! models, in `fiscus-models` (`rules/lqm`).

use serde::Serialize;

/// Where a checkpoint's promotion stands (its latest request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LqmPromotionState)]
pub enum PromotionState {
    /// Awaiting an operator.
    Pending,
    /// Serving in the Quant Models catalogue.
    Active,
    /// Replaced by the promotion of a newer checkpoint.
    Superseded,
    /// Withdrawn by an operator: it serves nothing.
    Revoked,
    /// An operator refused it.
    Denied,
}

impl PromotionState {
    pub const ALL: [PromotionState; 5] = [
        PromotionState::Pending,
        PromotionState::Active,
        PromotionState::Superseded,
        PromotionState::Revoked,
        PromotionState::Denied,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PromotionState::Pending => "pending",
            PromotionState::Active => "active",
            PromotionState::Superseded => "superseded",
            PromotionState::Revoked => "revoked",
            PromotionState::Denied => "denied",
        }
    }

    pub fn parse(s: &str) -> Option<PromotionState> {
        PromotionState::ALL.into_iter().find(|p| p.as_str() == s)
    }
}
