//! Portfolio optimisation: mean-variance problems (an exact active-set solver for bounds-only problems,
//! clarabel for everything else), and risk parity by Newton's method.

mod active_set;
mod bounds_only;
mod conic;
mod constraints;
mod hessian;
pub mod mean_variance;
pub mod risk_parity;

pub use mean_variance::{
    Constraints, GroupLimit, Objective, OptimalPortfolio, Rebalance, optimise, optimise_from_returns,
    optimise_from_returns_with_budget, optimise_with_budget,
};
pub use risk_parity::{
    RiskParityPortfolio, equal_risk_contribution, equal_risk_contribution_with_budget, risk_budgeting,
    risk_budgeting_with_budget,
};
