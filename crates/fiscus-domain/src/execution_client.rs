//! Signed execution clients: external agents that authenticate with an Ed25519 key (RFC 9421 signatures,
//! see `fiscus_http::http_signature`) and may act only within a *grant* that people set at the console.
//!
//! A client is registered as a draft (by the CLI, or later by an operator) with its public key; it can do
//! nothing until an admin grants it an allowlist at the console. Each grant, change or revocation is a new,
//! sealed, versioned decision; the latest decision is the client's standing. A grant never carries approval
//! or execution authority: a signed client that submits or executes a Financial Action meets the same gates
//! as any application (approvals by people, machine authority for delegated execution).

use crate::actions::ActionKind;
use crate::catalogue::{self, Operation};
use crate::credentials::Environment;
use crate::evidence::{self, seal};
use serde::Serialize;
use serde_json::json;

/// Operations every active signed client may call: the gateway describing the client to itself, and the
/// protocol entry points (what the protocols then dispatch is decided by the grant, tool by tool, and for
/// the workflow gateway by the application's separate workflow-tool allowlist, seed: "The workflow gateway
/// also needs a separate explicit workflow-tool allowlist").
pub const ALWAYS_AVAILABLE: [&str; 7] = [
    "get_agent_execution_capabilities",
    "get_agent_execution_service_level",
    "get_agent_execution_usage",
    "get_agent_execution_requests_uid",
    "post_agent_execution_mcp",
    "post_agent_execution_a2a",
    "post_agent_execution_workflows_a2a",
];

/// Operations that are never granted through this allowlist: the bearer MCP endpoint is for bearer
/// credentials.
const NEVER_GRANTED: [&str; 1] = ["post_root_mcp"];

pub const MAX_OPERATIONS: usize = 200;
pub const MAX_RATE_PER_MINUTE: u32 = 100_000;
pub const MAX_MONTHLY_QUOTA: u64 = 1_000_000_000;
pub const MAX_NAME_LEN: usize = 100;

/// Whether `op` can be put on a client's allowlist.
pub fn grantable(op: &Operation) -> bool {
    op.scope.is_some() && !ALWAYS_AVAILABLE.contains(&op.id) && !NEVER_GRANTED.contains(&op.id)
}

/// The catalogue operations an admin may grant, in catalogue order.
pub fn grantable_operations() -> impl Iterator<Item = &'static Operation> {
    catalogue::OPERATIONS.iter().filter(|op| grantable(op))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientStatus {
    /// Registered, never granted: every signed request is refused.
    Draft,
    /// The latest decision grants an allowlist.
    Active,
    /// The latest decision revoked the client: refused for good.
    Revoked,
}

impl ClientStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientStatus::Draft => "draft",
            ClientStatus::Active => "active",
            ClientStatus::Revoked => "revoked",
        }
    }
}

/// What an admin decided about a client; stored with every grant version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Grant,
    Revoke,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Grant => "grant",
            Decision::Revoke => "revoke",
        }
    }

    pub fn parse(s: &str) -> Option<Decision> {
        [Decision::Grant, Decision::Revoke].into_iter().find(|d| d.as_str() == s)
    }

    /// The standing after this decision.
    pub fn status(self) -> ClientStatus {
        match self {
            Decision::Grant => ClientStatus::Active,
            Decision::Revoke => ClientStatus::Revoked,
        }
    }
}

/// The allowlist of an active client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Catalogue operation ids, sorted and unique.
    pub operations: Vec<String>,
    /// Financial Action kinds the client may propose, submit or ask to execute; sorted and unique.
    pub action_kinds: Vec<ActionKind>,
    pub environment: Environment,
    /// UTC microseconds; after it every signed request is refused.
    pub expires_at: Option<i64>,
    pub rate_limit_per_minute: u32,
    pub monthly_quota: u64,
}

/// Why a grant cannot be given (each names the form field).
pub type FieldErrors = Vec<(&'static str, String)>;

impl Grant {
    /// A grant in canonical form (sorted, unique lists), or the field errors.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        operations: Vec<String>,
        action_kinds: Vec<String>,
        environment: Environment,
        client_environment: Environment,
        expires_at: Option<i64>,
        rate_limit_per_minute: u32,
        monthly_quota: u64,
        now: i64,
    ) -> Result<Grant, FieldErrors> {
        let mut errors = FieldErrors::new();
        let mut ops: Vec<String> = Vec::new();
        for id in operations {
            match catalogue::by_id(&id) {
                Some(op) if grantable(op) => ops.push(id),
                _ => errors.push(("operations", format!("`{id}` is not an operation that can be granted"))),
            }
        }
        ops.sort();
        ops.dedup();
        if ops.len() > MAX_OPERATIONS {
            errors.push(("operations", format!("at most {MAX_OPERATIONS} operations")));
        }
        let mut kinds = Vec::new();
        for k in action_kinds {
            match ActionKind::parse(&k) {
                Some(kind) => kinds.push(kind),
                None => errors.push(("action_kinds", format!("`{k}` is not an action kind"))),
            }
        }
        kinds.sort_by_key(|k| k.as_str());
        kinds.dedup();
        if environment != client_environment {
            errors.push(("environment", "a client acts only in the environment it was registered in".into()));
        }
        if expires_at.is_some_and(|at| at <= now) {
            errors.push(("expires_at", "must be in the future".into()));
        }
        if !(1..=MAX_RATE_PER_MINUTE).contains(&rate_limit_per_minute) {
            errors.push(("rate_limit_per_minute", format!("must be 1 to {MAX_RATE_PER_MINUTE}")));
        }
        if !(1..=MAX_MONTHLY_QUOTA).contains(&monthly_quota) {
            errors.push(("monthly_quota", format!("must be 1 to {MAX_MONTHLY_QUOTA}")));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Grant {
            operations: ops,
            action_kinds: kinds,
            environment,
            expires_at,
            rate_limit_per_minute,
            monthly_quota,
        })
    }

    /// Whether the grant lets the client call `operation_id` (directly, or as a tool).
    pub fn allows(&self, operation_id: &str) -> bool {
        ALWAYS_AVAILABLE.contains(&operation_id)
            || self.operations.binary_search_by(|o| o.as_str().cmp(operation_id)).is_ok()
    }

    pub fn allows_kind(&self, kind: ActionKind) -> bool {
        self.action_kinds.contains(&kind)
    }

    pub fn operations_stored(&self) -> String {
        self.operations.join(" ")
    }

    pub fn action_kinds_stored(&self) -> String {
        self.action_kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(" ")
    }
}

/// The evidence hash of one decision about a client: what the operator decided, for which client and
/// version (RFC 8785 + SHA-256, recomputable outside Fiscus).
pub fn decision_hash(client_id: &str, version: i64, decision: Decision, grant: Option<&Grant>) -> String {
    let payload = json!({
        "object": "execution_client_decision",
        "client_id": client_id,
        "version": version,
        "decision": decision.as_str(),
        "grant": grant.map(|g| json!({
            "operations": g.operations,
            "action_kinds": g.action_kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "environment": g.environment.as_str(),
            "expires_at": g.expires_at,
            "rate_limit_per_minute": g.rate_limit_per_minute,
            "monthly_quota": g.monthly_quota,
        })),
    });
    // Only strings and integers: canonicalisation cannot fail.
    seal(&payload).unwrap_or_else(|_| evidence::seal_bytes(payload.to_string().as_bytes()))
}

/// A client name: 1 to 100 characters, no control characters.
pub fn valid_name(name: &str) -> bool {
    let n = name.trim();
    !n.is_empty() && n.chars().count() <= MAX_NAME_LEN && !n.chars().any(char::is_control)
}

/// A short fingerprint of a public key for people to compare (`sha256:` + the first 16 hex digits).
pub fn key_fingerprint(public_key_b64: &str) -> String {
    let full = evidence::seal_bytes(public_key_b64.as_bytes());
    full.chars().take("sha256:".len() + 16).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(ops: &[&str], kinds: &[&str]) -> Result<Grant, FieldErrors> {
        Grant::new(
            ops.iter().map(|s| s.to_string()).collect(),
            kinds.iter().map(|s| s.to_string()).collect(),
            Environment::Sandbox,
            Environment::Sandbox,
            None,
            60,
            10_000,
            0,
        )
    }

    #[test]
    fn a_grant_is_canonical_and_allows_exactly_its_operations_and_the_gateway_reads() {
        let g = grant(
            &["post_agent_execution_proposals", "get_actions_uid", "post_agent_execution_proposals"],
            &["transfer", "payment"],
        )
        .expect("valid");
        assert_eq!(g.operations, vec!["get_actions_uid", "post_agent_execution_proposals"]);
        assert_eq!(g.action_kinds, vec![ActionKind::Payment, ActionKind::Transfer]);
        assert!(g.allows("get_actions_uid"));
        assert!(g.allows("get_agent_execution_capabilities"));
        assert!(!g.allows("post_agent_execution_actions_uid_execute"));
        assert!(g.allows_kind(ActionKind::Payment));
        assert!(!g.allows_kind(ActionKind::FxConversion));
    }

    #[test]
    fn unknown_never_granted_and_out_of_range_values_are_field_errors() {
        let errors = grant(&["no_such_op", "post_agent_execution_workflows_a2a", "post_oauth_token"], &["gift"])
            .expect_err("invalid");
        let fields: Vec<_> = errors.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, vec!["operations", "operations", "operations", "action_kinds"]);
        let e = Grant::new(vec![], vec![], Environment::Production, Environment::Sandbox, Some(5), 0, 0, 10)
            .expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, vec!["environment", "expires_at", "rate_limit_per_minute", "monthly_quota"]);
    }

    #[test]
    fn the_decision_hash_covers_every_term() {
        let g = grant(&["get_actions_uid"], &["payment"]).expect("valid");
        let h = decision_hash("ecl_1", 1, Decision::Grant, Some(&g));
        assert!(h.starts_with("sha256:"));
        let mut wider = g.clone();
        wider.monthly_quota += 1;
        assert_ne!(h, decision_hash("ecl_1", 1, Decision::Grant, Some(&wider)));
        assert_ne!(h, decision_hash("ecl_1", 2, Decision::Grant, Some(&g)));
        assert_ne!(h, decision_hash("ecl_1", 1, Decision::Revoke, None));
    }
}
