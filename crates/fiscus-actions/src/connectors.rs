//! The execution connector interface, the sandbox connector, and the `iso20022` connector (configured, for
//! paying through a bank with files).

use crate::rules::settlement::{SandboxOutcome, SettlementReport, sandbox_outcome};

/// What a connector says happened to one action, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectorEvent {
    Settled(SettlementReport),
    Failed {
        reason: String,
    },
    /// The money came back: what was booked, and the bank's reason code when it gave one.
    Returned {
        report: SettlementReport,
        reason: Option<String>,
    },
    /// Handed to the bank's channel: what happens next arrives later (a status report, a statement entry).
    /// The action stays `executing`.
    Submitted,
}

/// The action as a connector receives it: what to pay, to whom, with which reference.
pub struct Instruction<'a> {
    pub action_id: &'a str,
    pub reference: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    pub counterparty: &'a str,
}

/// An execution connector. Production connectors are configured, never simulated.
pub trait Connector: Send + Sync {
    fn name(&self) -> &'static str;
    fn execute(&self, instruction: &Instruction<'_>) -> Vec<ConnectorEvent>;
}

/// Settles deterministically by reference (see `crate::rules::settlement::sandbox_outcome`).
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
                vec![
                    ConnectorEvent::Settled(report(i.amount_minor)),
                    ConnectorEvent::Returned { report: report(i.amount_minor), reason: None },
                ]
            }
        }
    }
}

/// The name of the bank file connector.
pub const ISO20022: &str = "iso20022";

/// Pays through the bank with `pain.001` files: executing a payment only hands it over (`Submitted`); the
/// settlement records it as a payment instruction, and the bank file worker puts it in exactly one file.
/// The bank's status reports and statements settle it later.
pub struct Iso20022Connector;

impl Connector for Iso20022Connector {
    fn name(&self) -> &'static str {
        ISO20022
    }

    fn execute(&self, _: &Instruction<'_>) -> Vec<ConnectorEvent> {
        vec![ConnectorEvent::Submitted]
    }
}

/// The connector serving `name` in an environment, if any: `sandbox` in the sandbox; `iso20022` where the
/// settings configure it (production, and the sandbox when they say so).
pub fn connector_for(
    name: &str,
    environment: fiscus_domain::credentials::Environment,
    settings: &fiscus_kernel::settings::Settings,
) -> Option<&'static dyn Connector> {
    use fiscus_domain::credentials::Environment;
    static SANDBOX: SandboxConnector = SandboxConnector;
    static BANK: Iso20022Connector = Iso20022Connector;
    match (name, environment, settings.iso20022.as_ref()) {
        ("sandbox", Environment::Sandbox, _) => Some(&SANDBOX),
        (ISO20022, Environment::Production, Some(_)) => Some(&BANK),
        (ISO20022, Environment::Sandbox, Some(files)) if files.sandbox => Some(&BANK),
        _ => None,
    }
}
