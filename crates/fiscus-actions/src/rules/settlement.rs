//! Settlement and reconciliation rules. The sandbox connector behaves like a payment provider's test mode:
//! its outcome is chosen by the action's reference, so tests and demos can produce every path.
//! Reconciliation matches a settlement record against the action on reference, amount and currency; only a
//! match completes the action.

use serde::Serialize;

/// What the sandbox connector will do with an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxOutcome {
    /// Settles the exact amount.
    Settle,
    /// Refuses the payment (reference ending `-fail`).
    Fail,
    /// Settles, then returns the funds (reference ending `-return`).
    Return,
    /// Settles one minor unit short (reference ending `-mismatch`).
    AmountMismatch,
}

pub fn sandbox_outcome(reference: &str) -> SandboxOutcome {
    let lower = reference.to_ascii_lowercase();
    if lower.ends_with("-fail") {
        SandboxOutcome::Fail
    } else if lower.ends_with("-return") {
        SandboxOutcome::Return
    } else if lower.ends_with("-mismatch") {
        SandboxOutcome::AmountMismatch
    } else {
        SandboxOutcome::Settle
    }
}

/// What a connector reported for one action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SettlementReport {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub connector_reference: String,
}

/// The expected side of the match.
pub struct Expected<'a> {
    pub reference: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
}

/// Mismatching fields (empty when the record matches the action exactly).
pub fn reconcile(expected: &Expected<'_>, report: &SettlementReport) -> Vec<&'static str> {
    let mut mismatches = Vec::new();
    if report.reference != expected.reference {
        mismatches.push("reference");
    }
    if report.amount_minor != expected.amount_minor {
        mismatches.push("amount_minor");
    }
    if report.currency != expected.currency {
        mismatches.push("currency");
    }
    mismatches
}

/// What a settlement record says the connector did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SettlementKind {
    Settled,
    Returned,
    Failed,
}

impl SettlementKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SettlementKind::Settled => "settled",
            SettlementKind::Returned => "returned",
            SettlementKind::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<SettlementKind> {
        [SettlementKind::Settled, SettlementKind::Returned, SettlementKind::Failed]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// The reconciliation verdict of one settlement record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reconciliation {
    /// A settlement that matched reference, amount and currency.
    Matched,
    /// A settlement that did not.
    Mismatch,
    /// A failure or a return: nothing to match.
    NotApplicable,
}

impl Reconciliation {
    pub fn as_str(self) -> &'static str {
        match self {
            Reconciliation::Matched => "matched",
            Reconciliation::Mismatch => "mismatch",
            Reconciliation::NotApplicable => "not_applicable",
        }
    }

    pub fn parse(s: &str) -> Option<Reconciliation> {
        [Reconciliation::Matched, Reconciliation::Mismatch, Reconciliation::NotApplicable]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A budget reservation's state: held while the action is in flight, then spent or given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReservationState {
    Reserved,
    Consumed,
    Released,
}

impl ReservationState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationState::Reserved => "reserved",
            ReservationState::Consumed => "consumed",
            ReservationState::Released => "released",
        }
    }
}

/// What happens to a delegated action's budget reservation when the action reaches `state`: spent when it
/// completed, given back when the connector failed or returned the funds. A reconciliation exception keeps
/// it reserved: money may have moved until people resolve it.
pub fn reservation_after(state: fiscus_domain::actions::ControlState) -> Option<ReservationState> {
    use fiscus_domain::actions::ControlState;
    match state {
        ControlState::Completed => Some(ReservationState::Consumed),
        ControlState::Failed | ControlState::Returned => Some(ReservationState::Released),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_chooses_the_sandbox_outcome() {
        assert_eq!(sandbox_outcome("INV-1"), SandboxOutcome::Settle);
        assert_eq!(sandbox_outcome("INV-1-FAIL"), SandboxOutcome::Fail);
        assert_eq!(sandbox_outcome("x-return"), SandboxOutcome::Return);
        assert_eq!(sandbox_outcome("x-mismatch"), SandboxOutcome::AmountMismatch);
    }

    #[test]
    fn reconciliation_names_every_mismatch() {
        let expected = Expected { reference: "R", amount_minor: 100, currency: "USD" };
        let exact = SettlementReport {
            reference: "R".into(),
            amount_minor: 100,
            currency: "USD".into(),
            connector_reference: "c".into(),
        };
        assert!(reconcile(&expected, &exact).is_empty());
        let off = SettlementReport { amount_minor: 99, currency: "EUR".into(), ..exact };
        assert_eq!(reconcile(&expected, &off), ["amount_minor", "currency"]);
    }
}
