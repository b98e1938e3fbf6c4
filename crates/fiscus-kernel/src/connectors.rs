//! The execution connector interface and the sandbox connector.

use fiscus_domain::actions::settlement::{SandboxOutcome, SettlementReport, sandbox_outcome};

/// What a connector says happened to one action, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectorEvent {
    Settled(SettlementReport),
    Failed { reason: String },
    Returned(SettlementReport),
}

/// The action as a connector receives it: what to pay, to whom, with which reference.
pub struct Instruction<'a> {
    pub action_id: &'a str,
    pub reference: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    pub counterparty: &'a str,
}

/// An execution connector. Production connectors are configured, never simulated; none ships yet.
pub trait Connector: Send + Sync {
    fn name(&self) -> &'static str;
    fn execute(&self, instruction: &Instruction<'_>) -> Vec<ConnectorEvent>;
}

/// Settles deterministically by reference (see `fiscus_domain::actions::settlement::sandbox_outcome`).
pub struct SandboxConnector;

impl Connector for SandboxConnector {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn execute(&self, i: &Instruction<'_>) -> Vec<ConnectorEvent> {
        let report = |amount_minor: i64| SettlementReport {
            reference: i.reference.to_string(),
            amount_minor,
            currency: i.currency.to_string(),
            connector_reference: format!("sbx_{}", i.action_id),
        };
        match sandbox_outcome(i.reference) {
            SandboxOutcome::Settle => vec![ConnectorEvent::Settled(report(i.amount_minor))],
            SandboxOutcome::AmountMismatch => vec![ConnectorEvent::Settled(report(i.amount_minor - 1))],
            SandboxOutcome::Fail => {
                vec![ConnectorEvent::Failed { reason: "sandbox: the counterparty's bank refused the payment".into() }]
            }
            SandboxOutcome::Return => {
                vec![ConnectorEvent::Settled(report(i.amount_minor)), ConnectorEvent::Returned(report(i.amount_minor))]
            }
        }
    }
}

/// The connector serving `name` in an environment, if any.
pub fn connector_for(
    name: &str,
    environment: fiscus_domain::credentials::Environment,
) -> Option<&'static dyn Connector> {
    static SANDBOX: SandboxConnector = SandboxConnector;
    match (name, environment) {
        ("sandbox", fiscus_domain::credentials::Environment::Sandbox) => Some(&SANDBOX),
        _ => None,
    }
}
