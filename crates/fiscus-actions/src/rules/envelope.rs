//! The action envelope: what is to be done, immutable once proposed, identified by `envelope_hash` =
//! `sha256:` of its RFC 8785 form. A change means a new action.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use fiscus_domain::actions::ActionKind;
use fiscus_domain::evidence::seal;
use fiscus_domain::fields;
use fiscus_domain::money::{Currency, MAX_AMOUNT_MINOR};

/// Who may carry the action out once it is authorised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    /// Executed on request after a quorum of operators approved it.
    HumanApproved,
    /// Executed by a machine identity within an operator-approved delegation, with fresh signed authority.
    MachineDelegated,
}

impl ExecutionMode {
    pub fn parse(s: &str) -> Option<ExecutionMode> {
        [ExecutionMode::HumanApproved, ExecutionMode::MachineDelegated].into_iter().find(|m| m.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionMode::HumanApproved => "human_approved",
            ExecutionMode::MachineDelegated => "machine_delegated",
        }
    }
}

/// Risk tier; it sets the approval quorum (T1 one approver, T2 two distinct approvers, raisable only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema)]
pub enum RiskTier {
    T1,
    T2,
}

impl RiskTier {
    /// The tier a stored name stands for; an unknown one is `None`, never read as the lower tier.
    pub fn parse(s: &str) -> Option<RiskTier> {
        [RiskTier::T1, RiskTier::T2].into_iter().find(|t| t.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RiskTier::T1 => "T1",
            RiskTier::T2 => "T2",
        }
    }

    /// The least number of distinct approvers the tier requires; configuration may only raise it.
    pub fn minimum_quorum(self) -> u32 {
        match self {
            RiskTier::T1 => 1,
            RiskTier::T2 => 2,
        }
    }
}

/// Where a proposal came from: an application (`POST /actions`), an external agent's draft
/// (`POST /agent-execution/proposals`, submitted separately) or an operator at the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Application,
    ExternalAgent,
    Operator,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Application => "application",
            Origin::ExternalAgent => "external_agent",
            Origin::Operator => "operator",
        }
    }

    pub fn parse(s: &str) -> Option<Origin> {
        [Origin::Application, Origin::ExternalAgent, Origin::Operator].into_iter().find(|o| o.as_str() == s)
    }
}

/// A proposal as clients send it (`POST /actions`, `POST /agent-execution/proposals`).
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposalRequest {
    pub kind: ActionKind,
    /// Amount in integer minor units of `currency` (e.g. cents), from 1 to 2^53 − 1.
    #[schema(value_type = fields::Amount, inline)]
    pub amount_minor: i64,
    /// Upper-case ISO 4217 code.
    #[schema(value_type = fields::CurrencyCode, inline)]
    pub currency: Currency,
    /// The counterparty's identifier.
    #[schema(value_type = fields::Text<1, 200>, inline)]
    pub counterparty: String,
    /// The execution connector (`sandbox` in the sandbox environment); one the environment does not have is 409
    /// `reference_not_found`.
    #[schema(value_type = fields::Text<1, 64>, inline)]
    pub connector: String,
    pub execution_mode: ExecutionMode,
    /// Required for `machine_delegated`, absent or null otherwise: a delegation of this workspace and
    /// environment (one it does not hold is 409 `reference_not_found`).
    #[serde(default)]
    #[schema(value_type = Option<fields::DelegationId>, inline)]
    pub delegation_id: Option<String>,
    pub risk_tier: RiskTier,
    /// The client's reference, carried to the connector and matched at reconciliation.
    #[schema(value_type = fields::Text<1, 140>, inline)]
    pub reference: String,
    /// Pre-trade checks whose latest version must be `passed` before execution.
    #[serde(default)]
    #[schema(value_type = fields::CheckKeys, inline)]
    pub required_checks: Vec<String>,
    /// Free-form JSON object (up to 16 KiB); part of the envelope.
    #[serde(default)]
    #[schema(value_type = Option<fields::Object>, inline)]
    pub metadata: Option<Value>,
}

/// A validated envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub kind: ActionKind,
    pub amount_minor: i64,
    pub currency: Currency,
    pub counterparty: String,
    pub connector: String,
    pub execution_mode: ExecutionMode,
    pub delegation_id: Option<String>,
    pub risk_tier: RiskTier,
    pub reference: String,
    pub required_checks: Vec<String>,
    pub metadata: Value,
}

pub fn is_check_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.' || b == b'-')
}

impl ProposalRequest {
    /// The rule between fields that the derived schema cannot state, as JSON Schema (2020-12): a
    /// `delegation_id` exactly when the execution mode is `machine_delegated`.
    pub fn schema_conditions() -> Value {
        json!({
            "if": { "properties": { "execution_mode": { "const": "machine_delegated" } }, "required": ["execution_mode"] },
            "then": { "required": ["delegation_id"], "properties": { "delegation_id": { "type": "string" } } },
            "else": { "properties": { "delegation_id": { "type": "null" } } }
        })
    }

    /// Every rule at once, by field.
    pub fn validate(self) -> Result<Envelope, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        if self.amount_minor <= 0 || self.amount_minor > MAX_AMOUNT_MINOR {
            errors.push((
                "amount_minor",
                format!("must be an integer number of minor units from 1 to {MAX_AMOUNT_MINOR}"),
            ));
        }
        let text = |field: &'static str, v: &str, max: usize, errors: &mut Vec<(&'static str, String)>| {
            if !fields::text_ok(v, 1, max) {
                errors.push((field, format!("must be 1 to {max} printable characters")));
            }
        };
        text("counterparty", &self.counterparty, 200, &mut errors);
        text("connector", &self.connector, 64, &mut errors);
        text("reference", &self.reference, 140, &mut errors);
        match (self.execution_mode, &self.delegation_id) {
            (ExecutionMode::MachineDelegated, None) => {
                errors.push(("delegation_id", "is required for machine_delegated actions".into()))
            }
            (ExecutionMode::HumanApproved, Some(_)) => {
                errors.push(("delegation_id", "is only for machine_delegated actions".into()))
            }
            (ExecutionMode::MachineDelegated, Some(d)) if !fiscus_domain::ids::is_id_of("dlg", d) => {
                errors.push(("delegation_id", "must be a delegation id (dlg_…)".into()))
            }
            _ => {}
        }
        // Counted as sent (before duplicates are merged), as the document's `maxItems` counts.
        let too_many = self.required_checks.len() > 32;
        let mut required_checks = self.required_checks;
        required_checks.sort();
        required_checks.dedup();
        if too_many || !required_checks.iter().all(|k| is_check_key(k)) {
            errors.push(("required_checks", "at most 32 keys of lower-case letters, digits, `_`, `.`, `-`".into()));
        }
        let metadata = self.metadata.unwrap_or_else(|| json!({}));
        if !metadata.is_object() || metadata.to_string().len() > 16 * 1024 {
            errors.push(("metadata", "must be a JSON object of at most 16 KiB".into()));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Envelope {
            kind: self.kind,
            amount_minor: self.amount_minor,
            currency: self.currency,
            counterparty: self.counterparty,
            connector: self.connector,
            execution_mode: self.execution_mode,
            delegation_id: self.delegation_id,
            risk_tier: self.risk_tier,
            reference: self.reference,
            required_checks,
            metadata,
        })
    }
}

impl Envelope {
    /// The sealed form: the envelope, bound to its action, workspace and environment.
    pub fn payload(&self, action_id: &str, workspace_id: &str, environment: &str) -> Value {
        json!({
            "action_id": action_id,
            "workspace_id": workspace_id,
            "environment": environment,
            "kind": self.kind.as_str(),
            "amount_minor": self.amount_minor,
            "currency": self.currency.code(),
            "counterparty": self.counterparty,
            "connector": self.connector,
            "execution_mode": self.execution_mode.as_str(),
            "delegation_id": self.delegation_id,
            "risk_tier": self.risk_tier.as_str(),
            "reference": self.reference,
            "required_checks": self.required_checks,
            "metadata": self.metadata,
        })
    }

    pub fn hash(&self, action_id: &str, workspace_id: &str, environment: &str) -> Option<String> {
        seal(&self.payload(action_id, workspace_id, environment)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn request() -> ProposalRequest {
        ProposalRequest {
            kind: ActionKind::Payment,
            amount_minor: 125_000,
            currency: Currency::parse("USD").expect("usd"),
            counterparty: "cp_acme".into(),
            connector: "sandbox".into(),
            execution_mode: ExecutionMode::HumanApproved,
            delegation_id: None,
            risk_tier: RiskTier::T1,
            reference: "INV-1".into(),
            required_checks: vec!["kyc".into(), "best_execution".into(), "kyc".into()],
            metadata: None,
        }
    }

    #[test]
    fn names_parse_back_and_unknown_ones_are_refused() {
        for k in ActionKind::ALL {
            assert_eq!(ActionKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(RiskTier::parse("T2"), Some(RiskTier::T2));
        assert_eq!(RiskTier::parse("t2"), None, "never read as T1");
        assert_eq!(ExecutionMode::parse("machine_delegated"), Some(ExecutionMode::MachineDelegated));
        assert_eq!(ActionKind::parse("refund"), None);
    }

    #[test]
    fn a_valid_proposal_becomes_an_envelope_with_sorted_unique_checks() {
        let env = request().validate().expect("valid");
        assert_eq!(env.required_checks, ["best_execution", "kyc"]);
        let h1 = env.hash("act_1", "wsp_1", "sandbox").expect("hash");
        let h2 = env.hash("act_2", "wsp_1", "sandbox").expect("hash");
        assert_ne!(h1, h2, "the hash binds the action");
    }

    #[test]
    fn delegation_rules_follow_the_execution_mode() {
        let mut r = request();
        r.execution_mode = ExecutionMode::MachineDelegated;
        let fields: Vec<&str> = r.validate().expect_err("invalid").into_iter().map(|e| e.0).collect();
        assert_eq!(fields, ["delegation_id"]);
        let mut r = request();
        r.amount_minor = 0;
        r.reference = String::new();
        let fields: Vec<&str> = r.validate().expect_err("invalid").into_iter().map(|e| e.0).collect();
        assert_eq!(fields, ["amount_minor", "reference"]);
    }
}
