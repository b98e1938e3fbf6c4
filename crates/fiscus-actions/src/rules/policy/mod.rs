//! Approval policies: the organisation's rules of who must approve a Financial Action, written as data people
//! can read (a JSON document of named rules), and the one evaluator every proposal, dry run, decision and
//! execution gate asks.
//!
//! A rule matches on the action's kind, connector, execution mode, currency, amount (bands per currency),
//! counterparty facts (how new it is, how recently its bank details changed, its country) and proposer, and
//! yields a requirement (a quorum, approver groups "N of group", an approval expiry) or a refusal. The
//! requirement of an action is the strictest of every matching rule and of its risk tier's quorum (which is
//! also the deployment's default when no rule matches: never "no approval"); an explicit refusal wins.
//!
//! Why typed rules of our own and not a policy language such as Cedar: Cedar answers allow or deny, where a
//! rule here yields a requirement, and the combination is a join in a small lattice (largest quorum and group
//! counts, shortest expiry, any refusal) that a language would have to encode by convention. These types are
//! the whole language: the document is checked field by field as a request is, evaluation is a pure total
//! function of the policy and the facts (no clock, no I/O: the caller passes `now`), and the join makes "a
//! tightening applies to pending actions, a loosening never does" one line (`recorded.join(&new)`).
//! Unknown facts match (fail closed): a counterparty Fiscus holds no approved details for is "new" and "just
//! changed", and one of unknown country is in every country list.

use std::collections::BTreeMap;

use fiscus_domain::actions::ActionKind;
use fiscus_domain::money::{Currency, MAX_AMOUNT_MINOR};
use serde::{Deserialize, Serialize};

use crate::rules::envelope::{ExecutionMode, RiskTier};

mod requirement;

pub use requirement::{Approval, Refused, Requirement, Standing};

/// At most this many rules in a policy.
pub const MAX_RULES: usize = 100;
/// At most this many people in one requirement (a quorum, or one group's count).
pub const MAX_PEOPLE: u32 = 10;
/// The longest approval expiry: a year.
pub const MAX_EXPIRY_HOURS: u32 = 8_760;
/// The longest look-back of a counterparty condition.
pub const MAX_DAYS: u32 = 3_650;

const DAY_MICROS: i64 = 86_400_000_000;

/// A policy: named rules, every one evaluated (order only orders the names in a requirement).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[schema(max_items = 100)]
    pub rules: Vec<Rule>,
}

/// One rule: when every stated condition holds, its requirement (or refusal) applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Unique in the policy; shown to approvers and proposers ("needed by rule `large-usd`").
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,63}$", example = "large-usd-payments")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 500)]
    pub description: Option<String>,
    /// The conditions, all of which must hold; none stated matches every action.
    #[serde(default)]
    pub when: Conditions,
    /// What people must do: exactly one of `require` and `refuse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require: Option<Require>,
    /// Refuse the action outright, with this reason (shown to the proposer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 500)]
    pub refuse: Option<String>,
}

/// What an action must be for a rule to apply. Lists match any of their members.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Conditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<ActionKind>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectors: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_modes: Option<Vec<ExecutionMode>>,
    /// ISO 4217 codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currencies: Option<Vec<String>>,
    /// Per currency, the least amount (minor units) the rule applies from; an action in a currency not named
    /// here does not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_at_least_minor: Option<BTreeMap<String, i64>>,
    /// Per currency, the amount (minor units) the rule applies below; a currency not named does not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_below_minor: Option<BTreeMap<String, i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty: Option<CounterpartyConditions>,
    /// Who proposed it: application (`app_…`) or operator (`opr_…`) ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposers: Option<Vec<String>>,
}

/// Facts about the counterparty a payment or transfer pays. An unknown fact matches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CounterpartyConditions {
    /// Its first bank details were approved fewer than this many days ago (or it has none approved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 3650)]
    pub new_within_days: Option<u32>,
    /// The bank details the payment would use were approved fewer than this many days ago.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 3650)]
    pub bank_details_changed_within_days: Option<u32>,
    /// ISO 3166 alpha-2 countries of the account (the IBAN's country, else the holder's address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub countries: Option<Vec<String>>,
}

/// What a matching rule requires of people.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Require {
    /// Distinct people in all (at least the sum of the group counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 10)]
    pub quorum: Option<u32>,
    /// Approvers from named groups: each person fills one place only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupCount>,
    /// An approval counts for this many hours after it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 8760)]
    pub approval_expires_after_hours: Option<u32>,
}

/// "`count` of `group`".
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupCount {
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,63}$", example = "treasury")]
    pub group: String,
    #[schema(minimum = 1, maximum = 10)]
    pub count: u32,
}

/// What the evaluation reads of an action.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    pub kind: ActionKind,
    pub connector: &'a str,
    pub execution_mode: ExecutionMode,
    pub currency: Currency,
    pub amount_minor: i64,
    /// The proposer's id (`app_…`, `opr_…`, …).
    pub proposer_id: &'a str,
    pub counterparty: CounterpartyFacts,
    /// Now, in microseconds since the epoch (counterparty ages are measured from it).
    pub now: i64,
}

/// What Fiscus knows of the counterparty; `None` is unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterpartyFacts {
    /// When its first bank details were approved.
    pub first_approved_at: Option<i64>,
    /// When the bank details the payment would use were approved.
    pub details_approved_at: Option<i64>,
    /// The account's ISO 3166 country.
    pub country: Option<String>,
}

fn slug_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

impl Policy {
    /// Every fault of the document at once, each with where it is (`rules[2].when.currencies[0]`).
    pub fn check(&self) -> Result<(), Vec<String>> {
        let mut faults = Vec::new();
        if self.rules.len() > MAX_RULES {
            faults.push(format!("rules: at most {MAX_RULES} rules"));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, rule) in self.rules.iter().enumerate() {
            let at = format!("rules[{i}]");
            if !slug_ok(&rule.name) {
                faults.push(format!("{at}.name: lower-case letters, digits, `-` and `_`, 1 to 64 of them"));
            } else if !names.insert(rule.name.as_str()) {
                faults.push(format!("{at}.name: `{}` names another rule too", rule.name));
            }
            if rule.description.as_ref().is_some_and(|d| d.trim().is_empty() || d.chars().count() > 500) {
                faults.push(format!("{at}.description: 1 to 500 characters"));
            }
            rule.when.check(&at, &mut faults);
            match (&rule.require, &rule.refuse) {
                (Some(r), None) => r.check(&format!("{at}.require"), &mut faults),
                (None, Some(reason)) if reason.trim().is_empty() || reason.chars().count() > 500 => {
                    faults.push(format!("{at}.refuse: a reason of 1 to 500 characters"));
                }
                (None, Some(_)) => {}
                _ => faults.push(format!("{at}: exactly one of `require` and `refuse`")),
            }
        }
        if faults.is_empty() { Ok(()) } else { Err(faults) }
    }

    /// Every group the rules name, once each, by name.
    pub fn groups(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .rules
            .iter()
            .filter_map(|r| r.require.as_ref())
            .flat_map(|r| r.groups.iter().map(|g| g.group.as_str()))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The requirement of an action with these facts: the strictest of every matching rule and of `floor`, the
    /// quorum its tier requires in this deployment (the default when no rule matches).
    pub fn evaluate(&self, facts: &Facts<'_>, tier: RiskTier, floor: u32) -> Requirement {
        let mut req = Requirement::floor(tier, floor);
        for rule in self.rules.iter().filter(|r| r.when.matches(facts)) {
            req = req.join(&Requirement::of_rule(rule, tier));
        }
        req
    }
}

fn check_list<T>(at: &str, name: &str, list: &Option<Vec<T>>, ok: impl Fn(&T) -> bool, faults: &mut Vec<String>) {
    let Some(list) = list else { return };
    if list.is_empty() || list.len() > 50 {
        faults.push(format!("{at}.{name}: 1 to 50 members (leave it out to match any)"));
    }
    for (j, item) in list.iter().enumerate() {
        if !ok(item) {
            faults.push(format!("{at}.{name}[{j}]: not a valid value"));
        }
    }
}

fn check_days(at: &str, days: Option<u32>, faults: &mut Vec<String>) {
    if days.is_some_and(|d| d == 0 || d > MAX_DAYS) {
        faults.push(format!("{at}: 1 to {MAX_DAYS} days"));
    }
}

impl Conditions {
    fn check(&self, rule: &str, faults: &mut Vec<String>) {
        let at = format!("{rule}.when");
        check_list(&at, "kinds", &self.kinds, |_| true, faults);
        check_list(&at, "connectors", &self.connectors, |c| slug_ok(c), faults);
        check_list(&at, "execution_modes", &self.execution_modes, |_| true, faults);
        check_list(&at, "currencies", &self.currencies, |c| Currency::parse(c).is_some(), faults);
        let proposer = |p: &String| ["app", "opr", "mid"].iter().any(|k| fiscus_domain::ids::is_id_of(k, p));
        check_list(&at, "proposers", &self.proposers, proposer, faults);
        for (name, bands) in
            [("amount_at_least_minor", &self.amount_at_least_minor), ("amount_below_minor", &self.amount_below_minor)]
        {
            let Some(bands) = bands else { continue };
            if bands.is_empty() {
                faults.push(format!("{at}.{name}: name at least one currency"));
            }
            for (code, minor) in bands {
                if Currency::parse(code).is_none() {
                    faults.push(format!("{at}.{name}.{code}: not an ISO 4217 currency"));
                }
                if !(1..=MAX_AMOUNT_MINOR).contains(minor) {
                    faults.push(format!("{at}.{name}.{code}: 1 to {MAX_AMOUNT_MINOR} minor units"));
                }
            }
        }
        if let Some(c) = &self.counterparty {
            let at = format!("{at}.counterparty");
            check_days(&format!("{at}.new_within_days"), c.new_within_days, faults);
            check_days(&format!("{at}.bank_details_changed_within_days"), c.bank_details_changed_within_days, faults);
            let country = |s: &String| s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase());
            check_list(&at, "countries", &c.countries, country, faults);
        }
    }

    /// Whether every stated condition holds for `facts`.
    pub fn matches(&self, f: &Facts<'_>) -> bool {
        fn any<T: PartialEq>(list: &Option<Vec<T>>, v: &T) -> bool {
            list.as_ref().is_none_or(|l| l.contains(v))
        }
        let code = f.currency.code();
        any(&self.kinds, &f.kind)
            && self.connectors.as_ref().is_none_or(|l| l.iter().any(|c| c == f.connector))
            && any(&self.execution_modes, &f.execution_mode)
            && self.currencies.as_ref().is_none_or(|l| l.iter().any(|c| c == code))
            && self.amount_at_least_minor.as_ref().is_none_or(|b| b.get(code).is_some_and(|m| f.amount_minor >= *m))
            && self.amount_below_minor.as_ref().is_none_or(|b| b.get(code).is_some_and(|m| f.amount_minor < *m))
            && self.proposers.as_ref().is_none_or(|l| l.iter().any(|p| p == f.proposer_id))
            && self.counterparty.as_ref().is_none_or(|c| c.matches(&f.counterparty, f.now))
    }
}

impl CounterpartyConditions {
    fn matches(&self, f: &CounterpartyFacts, now: i64) -> bool {
        let within = |days: Option<u32>, at: Option<i64>| {
            days.is_none_or(|d| at.is_none_or(|at| now.saturating_sub(at) < i64::from(d) * DAY_MICROS))
        };
        within(self.new_within_days, f.first_approved_at)
            && within(self.bank_details_changed_within_days, f.details_approved_at)
            && self.countries.as_ref().is_none_or(|l| f.country.as_ref().is_none_or(|c| l.contains(c)))
    }
}

impl Require {
    fn check(&self, at: &str, faults: &mut Vec<String>) {
        if self.quorum.is_some_and(|q| q == 0 || q > MAX_PEOPLE) {
            faults.push(format!("{at}.quorum: 1 to {MAX_PEOPLE} people"));
        }
        if self.approval_expires_after_hours.is_some_and(|h| h == 0 || h > MAX_EXPIRY_HOURS) {
            faults.push(format!("{at}.approval_expires_after_hours: 1 to {MAX_EXPIRY_HOURS} hours"));
        }
        if self.quorum.is_none() && self.groups.is_empty() && self.approval_expires_after_hours.is_none() {
            faults.push(format!("{at}: state a quorum, groups or an expiry"));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (j, g) in self.groups.iter().enumerate() {
            if !slug_ok(&g.group) {
                faults.push(format!("{at}.groups[{j}].group: lower-case letters, digits, `-` and `_`"));
            } else if !seen.insert(g.group.as_str()) {
                faults.push(format!("{at}.groups[{j}].group: `{}` is named twice", g.group));
            }
            if g.count == 0 || g.count > MAX_PEOPLE {
                faults.push(format!("{at}.groups[{j}].count: 1 to {MAX_PEOPLE} people"));
            }
        }
        if self.groups.iter().map(|g| g.count).sum::<u32>() > MAX_PEOPLE {
            faults.push(format!("{at}.groups: at most {MAX_PEOPLE} people in all"));
        }
    }
}

#[cfg(test)]
mod tests;
