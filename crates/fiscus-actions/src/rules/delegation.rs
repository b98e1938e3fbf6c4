//! Machine identities and delegations: bounded standing authority that an operator activates, used by a
//! machine identity that proves itself per execution with a fresh Ed25519 signature.
//!
//! It is long because a delegation's terms, its nested budgets and the evidence of machine authority are one
//! set of rules the execution gates apply together, kept here with their tests.

use base64::Engine;
use ed25519_dalek::{Signature, Verifier};
use fiscus_domain::public_keys::{decode_public_key, public_key_bytes};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::rules::envelope::{Envelope, ExecutionMode, RiskTier};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::clock::{MICROS_PER_SECOND, Micros, parse_rfc3339};
use fiscus_domain::evidence::seal;
use fiscus_domain::fields;
use fiscus_domain::money::{Currency, MAX_AMOUNT_MINOR};

/// How far a machine authority timestamp may be from the server's clock.
pub const AUTHORITY_WINDOW_SECONDS: i64 = 120;

#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentityRequest {
    /// A name people recognise.
    #[schema(value_type = fields::Text<1, 200>, inline)]
    pub name: String,
    /// The identity's Ed25519 public key: 32 bytes, standard base64. Bytes that are not a curve point are
    /// kept (RFC 8032 decodes the key when verifying), the identity says `key_usable: false`, and no
    /// evidence it signs can ever verify.
    #[schema(value_type = fields::PublicKey, inline)]
    pub public_key: String,
}

impl IdentityRequest {
    pub fn validate(&self) -> Result<(), Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        if !fields::text_ok(&self.name, 1, 200) {
            errors.push(("name", "must be 1 to 200 characters".to_string()));
        }
        // 32 bytes in base64 is the schema's pattern. Whether they decode to a curve point is not a rule JSON
        // Schema can state, so it is not a refusal here: such a key verifies nothing (`UnusableKey`).
        if !public_key_bytes(&self.public_key) {
            errors.push(("public_key", "must be 32 bytes in standard base64".to_string()));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// The seed's delegation fields. Budgets are integer minor units of `currency`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegationRequest {
    pub action: ActionKind,
    #[schema(value_type = fields::Text<1, 200>, inline)]
    pub counterparty: String,
    #[schema(value_type = fields::Text<1, 200>, inline)]
    pub connector: String,
    #[schema(value_type = fields::CurrencyCode, inline)]
    pub currency: Currency,
    /// Always `machine_delegated`: a delegation is standing authority for a machine identity.
    #[schema(value_type = fields::MachineDelegatedOnly, inline)]
    pub execution_mode: ExecutionMode,
    pub risk_tier: RiskTier,
    /// The most one action may move. The budgets nest: per action ≤ daily ≤ monthly (terms where they do not
    /// are 409 `conflict` naming the fields: a budget above the one containing it states a limit that can
    /// never be reached, and no JSON Schema can order three members). An action must fit all three.
    #[schema(value_type = fields::Amount, inline)]
    pub per_action_budget_minor: i64,
    /// The most the delegation's actions may move in one UTC day: at least `per_action_budget_minor`.
    #[schema(value_type = fields::Amount, inline)]
    pub daily_budget_minor: i64,
    /// The most the delegation's actions may move in one UTC calendar month: at least `daily_budget_minor`.
    #[schema(value_type = fields::Amount, inline)]
    pub monthly_budget_minor: i64,
    /// How many days the delegation lasts from its creation: from 1 to 366. Standing authority is renewed
    /// at least yearly; the delegation's `expires_at` is its creation time plus this many days. (A length
    /// rather than a timestamp, so the rule is one a schema states: a time "in the future" is not.)
    #[schema(minimum = 1, maximum = 366, example = 180)]
    pub valid_for_days: u16,
}

/// Validated terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Terms {
    pub action: ActionKind,
    pub counterparty: String,
    pub connector: String,
    pub currency: Currency,
    pub risk_tier: RiskTier,
    pub per_action: i64,
    pub daily: i64,
    pub monthly: i64,
    pub expires_at: Micros,
}

impl DelegationRequest {
    /// The budgets that do not nest (per action ≤ daily ≤ monthly), each by field, with why.
    pub fn unnested_budgets(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let pairs = [
            ("per_action_budget_minor", self.per_action_budget_minor, "daily_budget_minor", self.daily_budget_minor),
            ("daily_budget_minor", self.daily_budget_minor, "monthly_budget_minor", self.monthly_budget_minor),
        ];
        for (field, value, container, limit) in pairs {
            if value > limit {
                out.push((
                    field,
                    format!("{value} is above {container} ({limit}): budgets nest, per action ≤ daily ≤ monthly"),
                ));
            }
        }
        out
    }

    pub fn validate(self, now: Micros) -> Result<Terms, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        if self.execution_mode != ExecutionMode::MachineDelegated {
            errors.push(("execution_mode", "a delegation is for machine_delegated execution".to_string()));
        }
        for (field, v) in [("counterparty", &self.counterparty), ("connector", &self.connector)] {
            if !fields::text_ok(v, 1, 200) {
                errors.push((field, "must be 1 to 200 characters".to_string()));
            }
        }
        for (field, v) in [
            ("per_action_budget_minor", self.per_action_budget_minor),
            ("daily_budget_minor", self.daily_budget_minor),
            ("monthly_budget_minor", self.monthly_budget_minor),
        ] {
            if v <= 0 || v > MAX_AMOUNT_MINOR {
                errors.push((field, format!("must be from 1 to {MAX_AMOUNT_MINOR}")));
            }
        }
        if !(1..=366).contains(&self.valid_for_days) {
            errors.push(("valid_for_days", "must be from 1 to 366".to_string()));
        }
        let expires_at = now + i64::from(self.valid_for_days) * 86_400 * MICROS_PER_SECOND;
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Terms {
            action: self.action,
            counterparty: self.counterparty,
            connector: self.connector,
            currency: self.currency,
            risk_tier: self.risk_tier,
            per_action: self.per_action_budget_minor,
            daily: self.daily_budget_minor,
            monthly: self.monthly_budget_minor,
            expires_at,
        })
    }
}

impl Terms {
    /// The hash an operator's activation covers.
    pub fn hash(&self, delegation_id: &str, identity_id: &str) -> String {
        seal(&json!({
            "delegation_id": delegation_id,
            "identity_id": identity_id,
            "action": self.action.as_str(),
            "counterparty": self.counterparty,
            "connector": self.connector,
            "currency": self.currency.code(),
            "execution_mode": "machine_delegated",
            "risk_tier": self.risk_tier.as_str(),
            "per_action_budget_minor": self.per_action,
            "daily_budget_minor": self.daily,
            "monthly_budget_minor": self.monthly,
            "expires_at": fiscus_domain::clock::rfc3339(self.expires_at),
        }))
        .unwrap_or_default()
    }

    /// Whether the delegation's terms cover an envelope.
    pub fn covers(&self, e: &Envelope) -> Result<(), DelegationRefusal> {
        if e.kind != self.action {
            return Err(DelegationRefusal::KindOutside { covered: self.action, asked: e.kind });
        }
        if e.counterparty != self.counterparty {
            return Err(DelegationRefusal::CounterpartyOutside);
        }
        if e.connector != self.connector {
            return Err(DelegationRefusal::ConnectorOutside);
        }
        if e.currency != self.currency {
            return Err(DelegationRefusal::CurrencyOutside);
        }
        if e.risk_tier > self.risk_tier {
            return Err(DelegationRefusal::TierAbove);
        }
        Ok(())
    }
}

/// A delegation's status. Only an operator moves it (see [`DelegationMove`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelegationStatus {
    Draft,
    Active,
    Suspended,
    Revoked,
}

impl DelegationStatus {
    pub const ALL: [DelegationStatus; 4] =
        [DelegationStatus::Draft, DelegationStatus::Active, DelegationStatus::Suspended, DelegationStatus::Revoked];

    pub fn as_str(self) -> &'static str {
        match self {
            DelegationStatus::Draft => "draft",
            DelegationStatus::Active => "active",
            DelegationStatus::Suspended => "suspended",
            DelegationStatus::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<DelegationStatus> {
        DelegationStatus::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// A machine identity's status: usable, or revoked for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdentityStatus {
    Active,
    Revoked,
}

impl IdentityStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityStatus::Active => "active",
            IdentityStatus::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<IdentityStatus> {
        [IdentityStatus::Active, IdentityStatus::Revoked].into_iter().find(|d| d.as_str() == s)
    }
}

/// Why the delegation gate refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DelegationRefusal {
    #[error("no delegation")]
    Missing,
    #[error("the delegation does not exist in this workspace")]
    NotFound,
    #[error("the delegation is {}", .0.as_str())]
    NotActive(DelegationStatus),
    #[error("the delegation has expired")]
    Expired,
    #[error("the delegated identity is revoked")]
    IdentityRevoked,
    #[error("the delegation covers {} actions, not {}", .covered.as_str(), .asked.as_str())]
    KindOutside { covered: ActionKind, asked: ActionKind },
    #[error("the counterparty is outside the delegation")]
    CounterpartyOutside,
    #[error("the connector is outside the delegation")]
    ConnectorOutside,
    #[error("the currency is outside the delegation")]
    CurrencyOutside,
    #[error("the action's risk tier is above the delegation's")]
    TierAbove,
}

/// Why the machine-authority gate refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthorityRefusal {
    #[error("{0}")]
    NoDelegation(DelegationRefusal),
    #[error("machine authority evidence is required")]
    Missing,
    #[error("the evidence is not from the delegated identity")]
    WrongIdentity,
    #[error("the nonce must be 16 to 128 visible characters")]
    BadNonce,
    #[error("the timestamp is not RFC 3339")]
    BadTimestamp,
    #[error("the machine authority evidence is stale or from the future")]
    Stale,
    #[error("the identity's key is not an Ed25519 curve point: nothing verifies with it")]
    UnusableKey,
    #[error("the signature is not 64 bytes of base64")]
    MalformedSignature,
    #[error("the signature does not verify with the identity's key")]
    BadSignature,
    #[error("the nonce was used before (replayed evidence)")]
    Replayed,
}

/// Why the budget gate refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetRefusal {
    #[error("{0}")]
    NoDelegation(DelegationRefusal),
    #[error("{amount} exceeds the per-action budget of {limit}")]
    PerAction { amount: i64, limit: i64 },
    #[error("the daily budget of {limit} has {left} left")]
    Daily { limit: i64, left: i64 },
    #[error("the monthly budget of {limit} has {left} left")]
    Monthly { limit: i64, left: i64 },
}

/// Whether a delegation stands at `now`: active, unexpired, and its identity not revoked. Anything else is
/// a refusal naming why.
pub fn standing(
    status: DelegationStatus,
    expires_at: Micros,
    identity_status: IdentityStatus,
    now: Micros,
) -> Result<(), DelegationRefusal> {
    if status != DelegationStatus::Active {
        return Err(DelegationRefusal::NotActive(status));
    }
    if expires_at <= now {
        return Err(DelegationRefusal::Expired);
    }
    if identity_status != IdentityStatus::Active {
        return Err(DelegationRefusal::IdentityRevoked);
    }
    Ok(())
}

/// An operator's move on a delegation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelegationMove {
    Activate,
    Suspend,
    Revoke,
}

impl DelegationMove {
    pub fn parse(s: &str) -> Option<DelegationMove> {
        match s {
            "activate" => Some(DelegationMove::Activate),
            "suspend" => Some(DelegationMove::Suspend),
            "revoke" => Some(DelegationMove::Revoke),
            _ => None,
        }
    }

    /// The status after the move, from `status`; `None` when the move is not allowed. Activation is only
    /// from a draft (a suspended delegation is re-proposed, not silently revived); revocation is final.
    pub fn apply(self, status: DelegationStatus) -> Option<DelegationStatus> {
        use DelegationStatus::{Active, Draft, Revoked, Suspended};
        match (self, status) {
            (DelegationMove::Activate, Draft) => Some(Active),
            (DelegationMove::Suspend, Active) => Some(Suspended),
            (DelegationMove::Revoke, Draft | Active | Suspended) => Some(Revoked),
            _ => None,
        }
    }
}

/// Machine authority evidence sent with a delegated execution request.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MachineAuthority {
    #[schema(value_type = fields::IdentityId, inline)]
    pub identity_id: String,
    /// RFC 3339, within ±120 s of the server's clock.
    #[schema(value_type = fields::Timestamp, inline)]
    pub timestamp: String,
    /// 16 to 128 visible ASCII characters, never used twice by the identity.
    #[schema(value_type = fields::Nonce, inline)]
    pub nonce: String,
    /// Standard base64 of the Ed25519 signature over `fiscus-machine-authority-v1\n<envelope_hash>\n<timestamp>\n<nonce>`.
    #[schema(value_type = fields::Signature, inline)]
    pub signature: String,
}

/// The exact bytes a machine identity signs.
pub fn authority_message(envelope_hash: &str, timestamp: &str, nonce: &str) -> String {
    format!("fiscus-machine-authority-v1\n{envelope_hash}\n{timestamp}\n{nonce}")
}

/// Checks shape, freshness and signature (not the nonce's novelty, which needs the store).
pub fn check_authority(
    a: &MachineAuthority,
    public_key: &str,
    envelope_hash: &str,
    now: Micros,
) -> Result<(), AuthorityRefusal> {
    if !(16..=128).contains(&a.nonce.len()) || !a.nonce.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AuthorityRefusal::BadNonce);
    }
    let Some(at) = parse_rfc3339(&a.timestamp) else { return Err(AuthorityRefusal::BadTimestamp) };
    if (now - at).abs() > AUTHORITY_WINDOW_SECONDS * MICROS_PER_SECOND {
        return Err(AuthorityRefusal::Stale);
    }
    let Some(key) = decode_public_key(public_key) else { return Err(AuthorityRefusal::UnusableKey) };
    let Some(signature) = base64::engine::general_purpose::STANDARD
        .decode(&a.signature)
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
        .map(|b| Signature::from_bytes(&b))
    else {
        return Err(AuthorityRefusal::MalformedSignature);
    };
    key.verify(authority_message(envelope_hash, &a.timestamp, &a.nonce).as_bytes(), &signature)
        .map_err(|_| AuthorityRefusal::BadSignature)
}

/// Whether `amount` fits the budgets given what is already reserved or consumed.
pub fn budget_allows(amount: i64, terms: &Terms, used_today: i64, used_this_month: i64) -> Result<(), BudgetRefusal> {
    if amount > terms.per_action {
        return Err(BudgetRefusal::PerAction { amount, limit: terms.per_action });
    }
    // Checked, not saturating: a sum that does not fit is over any budget, never a reason to wave it through.
    let over = |used: i64, limit: i64| used.checked_add(amount).is_none_or(|total| total > limit);
    let left = |limit: i64, used: i64| limit.checked_sub(used).unwrap_or(0).max(0);
    if amount <= 0 || over(used_today, terms.daily) {
        return Err(BudgetRefusal::Daily { limit: terms.daily, left: left(terms.daily, used_today) });
    }
    if over(used_this_month, terms.monthly) {
        return Err(BudgetRefusal::Monthly { limit: terms.monthly, left: left(terms.monthly, used_this_month) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn terms() -> Terms {
        Terms {
            action: ActionKind::Payment,
            counterparty: "cp".into(),
            connector: "sandbox".into(),
            currency: Currency::parse("USD").expect("usd"),
            risk_tier: RiskTier::T1,
            per_action: 100,
            daily: 300,
            monthly: 500,
            expires_at: 0,
        }
    }

    #[test]
    fn budgets_count_what_is_already_used() {
        let t = terms();
        assert!(budget_allows(100, &t, 200, 200).is_ok());
        assert!(budget_allows(101, &t, 0, 0).is_err());
        assert!(budget_allows(100, &t, 201, 201).is_err());
        assert!(budget_allows(100, &t, 0, 401).is_err());
    }

    #[test]
    fn budgets_nest_or_the_request_is_refused_naming_the_fields() {
        let request = |per_action: i64, daily: i64, monthly: i64| -> DelegationRequest {
            serde_json::from_value(serde_json::json!({
                "action": "payment", "counterparty": "cp", "connector": "sandbox", "currency": "EUR",
                "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": per_action,
                "daily_budget_minor": daily, "monthly_budget_minor": monthly, "valid_for_days": 30
            }))
            .expect("request")
        };
        let fields =
            |r: DelegationRequest| -> Vec<&'static str> { r.unnested_budgets().into_iter().map(|(f, _)| f).collect() };
        assert!(request(5_000, 5_000, 5_000).unnested_budgets().is_empty(), "equal budgets nest");
        assert_eq!(fields(request(9_000, 5_000, 100_000)), ["per_action_budget_minor"]);
        assert_eq!(fields(request(1_000, 5_000, 4_000)), ["daily_budget_minor"]);
        assert_eq!(fields(request(9_000, 5_000, 4_000)), ["per_action_budget_minor", "daily_budget_minor"]);
    }

    #[test]
    fn budget_sums_at_the_integer_edge_refuse_instead_of_wrapping_or_saturating() {
        let t = Terms { per_action: i64::MAX, daily: i64::MAX, monthly: i64::MAX, ..terms() };
        let half = 1_i64 << 62;
        assert!(budget_allows(half, &t, 0, 0).is_ok());
        assert!(budget_allows(half, &t, half - 1, half - 1).is_ok(), "2^62 + 2^62 - 1 fits exactly at the edge");
        assert!(budget_allows(half, &t, half, half).is_err(), "2^62 + 2^62 does not fit: refused, not saturated");
        assert!(budget_allows(half, &t, i64::MAX - 1, i64::MAX - 1).is_err(), "the sum would overflow");
        assert!(budget_allows(i64::MAX, &t, 1, 1).is_err());
    }

    #[test]
    fn a_fresh_signature_by_the_identity_verifies_and_nothing_else_does() {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let public = base64::engine::general_purpose::STANDARD.encode(key.verifying_key().to_bytes());
        let now = parse_rfc3339("2026-11-21T12:00:00Z").expect("time");
        let ts = "2026-11-21T12:00:30Z";
        let nonce = "n-0123456789abcdef";
        let sig = key.sign(authority_message("sha256:e", ts, nonce).as_bytes());
        let a = MachineAuthority {
            identity_id: "mid_x".into(),
            timestamp: ts.into(),
            nonce: nonce.into(),
            signature: base64::engine::general_purpose::STANDARD.encode(sig.to_bytes()),
        };
        assert_eq!(check_authority(&a, &public, "sha256:e", now), Ok(()));
        assert_eq!(check_authority(&a, &public, "sha256:other", now), Err(AuthorityRefusal::BadSignature));
        assert_eq!(
            check_authority(&a, &public, "sha256:e", now + 200 * MICROS_PER_SECOND),
            Err(AuthorityRefusal::Stale)
        );
        let other = SigningKey::from_bytes(&[8u8; 32]);
        let other_public = base64::engine::general_purpose::STANDARD.encode(other.verifying_key().to_bytes());
        assert_eq!(check_authority(&a, &other_public, "sha256:e", now), Err(AuthorityRefusal::BadSignature));
    }
}
