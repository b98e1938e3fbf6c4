//! Collateral eligibility and haircut policy: which asset classes count as collateral and what share of
//! their market value is removed. A workspace's policy is versioned; every snapshot names the version and
//! the hash of the rules it applied.
//!
//! Without a policy of its own a workspace uses [`default_rules`]: haircuts in the manner of the Basel III
//! comprehensive approach's standard supervisory haircuts (cash 0 %, sovereign bonds 4 %, listed equities
//! and funds 25 %), simplified to asset classes because the book does not carry issuer rating, maturity or
//! index membership; commodities, FX and crypto are not eligible.

use serde::{Deserialize, Serialize};

use fiscus_data_core::rules::records::ASSET_CLASSES;

/// The class cash balances are matched as.
pub const CASH: &str = "cash";

/// An eligible asset class and its haircut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CollateralRule {
    /// An instrument asset class (`equity`, `etf`, `bond`, …) or `cash`.
    #[schema(example = "equity")]
    pub asset_class: String,
    /// The share of market value removed, 0 to below 1.
    #[schema(minimum = 0, exclusive_maximum = 1, example = 0.25)]
    pub haircut: f64,
    /// Only positions priced in these currencies (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub currencies: Vec<String>,
}

/// The policy used when a workspace has set none.
pub fn default_rules() -> Vec<CollateralRule> {
    [(CASH, 0.0), ("bond", 0.04), ("equity", 0.25), ("etf", 0.25), ("fund", 0.25)]
        .into_iter()
        .map(|(c, h)| CollateralRule { asset_class: c.to_string(), haircut: h, currencies: Vec::new() })
        .collect()
}

/// Every rule checked: a known class once, a haircut in [0, 1), upper-case ISO 4217 currencies.
pub fn validate(rules: &[CollateralRule]) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    if rules.is_empty() || rules.len() > 50 {
        errors.push("a policy has from 1 to 50 rules".to_string());
    }
    for (i, r) in rules.iter().enumerate() {
        if r.asset_class != CASH && !ASSET_CLASSES.contains(&r.asset_class.as_str()) {
            errors.push(format!(
                "rule {i}: `{}` is not an asset class ({}, cash)",
                r.asset_class,
                ASSET_CLASSES.join(", ")
            ));
        }
        if rules[..i].iter().any(|o| o.asset_class == r.asset_class) {
            errors.push(format!("rule {i}: `{}` has a rule already", r.asset_class));
        }
        if !(r.haircut.is_finite() && (0.0..1.0).contains(&r.haircut)) {
            errors.push(format!("rule {i}: a haircut is from 0 to below 1"));
        }
        for c in &r.currencies {
            if fiscus_domain::money::Currency::parse(c).is_none() {
                errors.push(format!("rule {i}: `{c}` is not an accepted ISO 4217 code"));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_is_valid_and_bad_rules_are_named() {
        assert_eq!(validate(&default_rules()), Ok(()));
        let bad = vec![
            CollateralRule { asset_class: "art".into(), haircut: 0.5, currencies: vec![] },
            CollateralRule { asset_class: "equity".into(), haircut: 1.0, currencies: vec!["usd".into()] },
            CollateralRule { asset_class: "equity".into(), haircut: 0.1, currencies: vec![] },
        ];
        let errors = validate(&bad).expect_err("refused");
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(validate(&[]).is_err());
    }
}
