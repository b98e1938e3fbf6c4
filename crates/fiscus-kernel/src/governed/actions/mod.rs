//! Financial Actions through their lifecycle: propose, submit, record a check version, decide (operators
//! only), execute behind the gates, settle and reconcile. Each function works inside the caller's
//! transaction, on the action locked for the decision, and writes through [`super::record`].

pub mod check;
pub mod decide;
pub mod execute;
pub mod gates;
pub mod loaded;
pub mod propose;
pub mod settle;
pub mod submit;

pub use loaded::Loaded;

use fiscus_domain::actions::approval;
use fiscus_domain::actions::envelope::RiskTier;

use crate::settings::Settings;

/// The approvals a risk tier needs: the tier's minimum or the configured number, whichever is higher.
pub fn quorum(settings: &Settings, tier: RiskTier) -> u32 {
    let configured = match tier {
        RiskTier::T1 => settings.approval_quorum_t1,
        RiskTier::T2 => settings.approval_quorum_t2,
    };
    approval::quorum(tier, Some(configured))
}
