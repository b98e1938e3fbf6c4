//! Execution gates. An execution request is accepted only when every gate passes; a refusal names each
//! failed gate. Every gate fails closed: a fact that could not be established is a failure.

use serde::Serialize;

use crate::rules::checks::{CheckStatus, LatestCheck};
use crate::rules::delegation::{AuthorityRefusal, BudgetRefusal, DelegationRefusal};
use crate::rules::envelope::ExecutionMode;
use fiscus_domain::actions::ControlState;
use fiscus_domain::credentials::Environment;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Approved by the quorum on the current envelope hash and check set.
    Authorised,
    /// Every required check's latest version is `passed`, and no check's latest version is `failed`.
    PreTradeChecks,
    /// Production needs production access, which only operators enable.
    Environment,
    /// The connector exists and serves this environment.
    Connector,
    /// Machine-delegated: an active, unexpired delegation whose terms cover this envelope.
    Delegation,
    /// Machine-delegated: fresh signed machine authority evidence from the delegated identity.
    MachineAuthority,
    /// Machine-delegated: per-action, daily and monthly budgets can reserve the amount.
    Budget,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Authorised => "authorised",
            Gate::PreTradeChecks => "pre_trade_checks",
            Gate::Environment => "environment",
            Gate::Connector => "connector",
            Gate::Delegation => "delegation",
            Gate::MachineAuthority => "machine_authority",
            Gate::Budget => "budget",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FailedGate {
    pub gate: Gate,
    pub reason: String,
}

/// What the gates look at. The machine-delegation facts are `None` when they could not be established.
pub struct GateFacts<'a> {
    pub state: ControlState,
    pub quorum_met_on_current: bool,
    /// Why the approval policy holds the action whatever its mode (a refusing rule, or a rule that needs
    /// people for a machine-delegated action they have not yet approved).
    pub policy_hold: Option<String>,
    pub required_checks: &'a [String],
    pub latest_checks: &'a [LatestCheck],
    pub environment: Environment,
    pub production_access: bool,
    pub connector_available: bool,
    pub execution_mode: ExecutionMode,
    pub delegation: Option<Result<(), DelegationRefusal>>,
    pub machine_authority: Option<Result<(), AuthorityRefusal>>,
    pub budget: Option<Result<(), BudgetRefusal>>,
}

fn fail(gate: Gate, reason: impl Into<String>) -> FailedGate {
    FailedGate { gate, reason: reason.into() }
}

/// Why the approval policy holds an action whatever its other gates say: a refusing rule holds any action,
/// and a rule that matched a machine-delegated action pulls it back under people's approval until they meet
/// its requirement (with no matching rule, the operator-approved delegation suffices).
pub fn policy_hold(
    requirement: &crate::rules::policy::Requirement,
    standing: &crate::rules::policy::Standing,
    mode: ExecutionMode,
) -> Option<String> {
    if requirement.refused.is_some() {
        return Some(requirement.in_words());
    }
    (mode == ExecutionMode::MachineDelegated && !requirement.matched_rules.is_empty() && !standing.met).then(|| {
        format!(
            "the approval policy ({}) needs people's approval of this action: {} still",
            requirement.matched_rules.join(", "),
            standing.still_needed()
        )
    })
}

/// Why an execution is refused before any gate's evidence is read (so no machine-authority nonce is spent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotStartable {
    /// Nobody with authority has approved it (a draft, one pending a person's approval, denied): the seed's
    /// "422 not authorized", answered as the `authorised` gate failing.
    Unauthorised(FailedGate),
    /// It is already executing or has ended: its lifecycle, not its authority (409 `action_state_conflict`).
    Conflict,
}

/// Whether an execution can start from this state at all: approved, or for a machine-delegated action
/// (whose authority is its operator-approved delegation) pending approval too.
pub fn execution_can_start(mode: ExecutionMode, state: ControlState) -> Result<(), NotStartable> {
    let startable = match mode {
        ExecutionMode::MachineDelegated => matches!(state, ControlState::PendingApproval | ControlState::Approved),
        ExecutionMode::HumanApproved => state == ControlState::Approved,
    };
    if startable {
        return Ok(());
    }
    let why = match state {
        ControlState::Draft => "the action is a draft: it has not been submitted for approval",
        ControlState::PendingApproval => "the action is pending_approval: the people it needs have not approved it",
        ControlState::Denied => "the action is denied: a person refused it",
        _ => return Err(NotStartable::Conflict),
    };
    Err(NotStartable::Unauthorised(fail(Gate::Authorised, why)))
}

pub fn evaluate(f: &GateFacts<'_>) -> Vec<FailedGate> {
    let mut failed = Vec::new();
    if let Some(hold) = &f.policy_hold {
        failed.push(fail(Gate::Authorised, hold.clone()));
    } else if f.execution_mode == ExecutionMode::MachineDelegated {
        // Authority comes from the operator-approved delegation (checked by the delegation gate).
        if execution_can_start(f.execution_mode, f.state).is_err() {
            failed.push(fail(Gate::Authorised, format!("the action is {}", f.state.as_str())));
        }
    } else if f.state != ControlState::Approved {
        failed.push(fail(Gate::Authorised, format!("the action is {}, not approved", f.state.as_str())));
    } else if !f.quorum_met_on_current {
        failed.push(fail(
            Gate::Authorised,
            "the approvals do not meet the action's requirement on the current envelope and check set",
        ));
    }
    for key in f.required_checks {
        match f.latest_checks.iter().find(|c| &c.check_key == key) {
            None => failed.push(fail(Gate::PreTradeChecks, format!("required check `{key}` has not been recorded"))),
            Some(c) if c.status != CheckStatus::Passed => failed.push(fail(
                Gate::PreTradeChecks,
                format!("required check `{key}` is {} (version {})", c.status.as_str(), c.version),
            )),
            Some(_) => {}
        }
    }
    for c in
        f.latest_checks.iter().filter(|c| c.status == CheckStatus::Failed && !f.required_checks.contains(&c.check_key))
    {
        failed.push(fail(Gate::PreTradeChecks, format!("check `{}` failed (version {})", c.check_key, c.version)));
    }
    if f.environment == Environment::Production && !f.production_access {
        failed.push(fail(Gate::Environment, "production access is not enabled for this workspace"));
    }
    if !f.connector_available {
        failed.push(fail(Gate::Connector, "the connector is not available in this environment"));
    }
    if f.execution_mode == ExecutionMode::MachineDelegated {
        let verdicts = [
            (Gate::Delegation, f.delegation.as_ref().map(|r| r.as_ref().map_err(ToString::to_string))),
            (Gate::MachineAuthority, f.machine_authority.as_ref().map(|r| r.as_ref().map_err(ToString::to_string))),
            (Gate::Budget, f.budget.as_ref().map(|r| r.as_ref().map_err(ToString::to_string))),
        ];
        for (gate, verdict) in verdicts {
            match verdict {
                Some(Ok(_)) => {}
                Some(Err(reason)) => failed.push(fail(gate, reason)),
                None => failed.push(fail(gate, "could not be established")),
            }
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passed(key: &str) -> LatestCheck {
        LatestCheck { check_key: key.into(), version: 1, status: CheckStatus::Passed, check_hash: "sha256:x".into() }
    }

    fn facts<'a>(required: &'a [String], latest: &'a [LatestCheck]) -> GateFacts<'a> {
        GateFacts {
            state: ControlState::Approved,
            quorum_met_on_current: true,
            policy_hold: None,
            required_checks: required,
            latest_checks: latest,
            environment: Environment::Sandbox,
            production_access: false,
            connector_available: true,
            execution_mode: ExecutionMode::HumanApproved,
            delegation: None,
            machine_authority: None,
            budget: None,
        }
    }

    fn gates(f: &GateFacts<'_>) -> Vec<Gate> {
        evaluate(f).into_iter().map(|g| g.gate).collect()
    }

    #[test]
    fn an_approved_action_with_passed_checks_passes_every_gate() {
        let required = vec!["kyc".to_string()];
        let latest = vec![passed("kyc")];
        assert!(evaluate(&facts(&required, &latest)).is_empty());
    }

    #[test]
    fn each_refusal_names_its_gate() {
        let required = vec!["kyc".to_string(), "limits".to_string()];
        let latest = vec![
            LatestCheck { status: CheckStatus::Failed, ..passed("kyc") },
            LatestCheck { status: CheckStatus::Failed, ..passed("other") },
        ];
        let mut f = facts(&required, &latest);
        f.state = ControlState::PendingApproval;
        f.environment = Environment::Production;
        f.connector_available = false;
        assert_eq!(
            gates(&f),
            [
                Gate::Authorised,
                Gate::PreTradeChecks,
                Gate::PreTradeChecks,
                Gate::PreTradeChecks,
                Gate::Environment,
                Gate::Connector
            ]
        );
    }

    #[test]
    fn machine_delegated_gates_fail_closed_on_missing_facts() {
        let mut f = facts(&[], &[]);
        f.execution_mode = ExecutionMode::MachineDelegated;
        f.delegation = Some(Ok(()));
        assert_eq!(gates(&f), [Gate::MachineAuthority, Gate::Budget]);
    }

    #[test]
    fn the_policy_holds_a_refused_action_and_a_delegated_one_its_rules_want_people_for() {
        use crate::rules::envelope::RiskTier;
        use crate::rules::policy::{Refused, Requirement};
        let floor = Requirement::floor(RiskTier::T1, 1);
        let short = floor.standing(&[], &[], 0);
        assert_eq!(
            policy_hold(&floor, &short, ExecutionMode::MachineDelegated),
            None,
            "no rule: the delegation suffices"
        );
        let ruled = Requirement { matched_rules: vec!["large".into()], ..floor.clone() };
        let held = policy_hold(&ruled, &ruled.standing(&[], &[], 0), ExecutionMode::MachineDelegated);
        assert!(held.is_some_and(|h| h.contains("large") && h.contains("1 more approver")));
        assert_eq!(policy_hold(&ruled, &short, ExecutionMode::HumanApproved), None, "the quorum gate says it");
        let refused = Requirement { refused: Some(Refused { rule: "no".into(), reason: "never".into() }), ..floor };
        assert!(policy_hold(&refused, &short, ExecutionMode::HumanApproved).is_some());
    }
}
