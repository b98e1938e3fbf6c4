//! The governed steps of Financial Actions through their lifecycle: propose, submit, record a check version,
//! decide (operators only), execute behind the gates, settle and reconcile; and the governed changes of what
//! payments name (bank accounts, delegations, statement entries). Each function works inside the caller's
//! transaction, on the action locked for the decision, and writes through the kernel's
//! [`record`], the one step that writes a transition with its history, beside the outbox event and audit
//! event the kernel announces.

pub mod bank_accounts;
pub mod batch;
pub mod check;
pub mod decide;
pub mod delegations;
pub mod execute;
pub mod gates;
pub mod loaded;
pub mod policies;
pub mod propose;
pub mod record;
pub mod settle;
pub mod statement_entries;
pub mod submit;

pub use loaded::Loaded;

use crate::rules::approval;
use crate::rules::envelope::RiskTier;

use fiscus_kernel::settings::Settings;

/// The approvals a risk tier needs: the tier's minimum or the configured number, whichever is higher.
pub fn quorum(settings: &Settings, tier: RiskTier) -> u32 {
    let configured = match tier {
        RiskTier::T1 => settings.approval_quorum_t1,
        RiskTier::T2 => settings.approval_quorum_t2,
    };
    approval::quorum(tier, Some(configured))
}
