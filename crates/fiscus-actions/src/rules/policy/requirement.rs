//! A requirement (who must approve an action, and why), how two combine (the strictest of both), and how the
//! approvals given stand against it: distinct people, each filling one group's place at most (a bipartite
//! matching), expired approvals left out, and the sole-approver duty.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{GroupCount, Rule};
use crate::rules::envelope::RiskTier;

const HOUR_MICROS: i64 = 3_600_000_000;

/// The requirement an action got: who must approve it, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Distinct people who must approve.
    pub quorum: u32,
    /// Places by group, by group name.
    pub groups: Vec<GroupCount>,
    /// Approvals count for this many hours; none: until the action is decided.
    pub approval_expires_after_hours: Option<u32>,
    /// Set when a rule refuses the action: no approval can satisfy it.
    pub refused: Option<Refused>,
    /// The rules that matched, in the policy's order; empty when the default applied.
    pub matched_rules: Vec<String>,
    /// The proposer's tier, whose quorum is the floor.
    pub risk_tier: RiskTier,
}

/// The rule that refuses, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Refused {
    pub rule: String,
    pub reason: String,
}

impl Requirement {
    /// The tier's quorum alone: what applies when no rule matches.
    pub fn floor(tier: RiskTier, quorum: u32) -> Requirement {
        Requirement {
            quorum: quorum.max(1),
            groups: Vec::new(),
            approval_expires_after_hours: None,
            refused: None,
            matched_rules: Vec::new(),
            risk_tier: tier,
        }
    }

    pub(super) fn of_rule(rule: &Rule, tier: RiskTier) -> Requirement {
        let require = rule.require.clone().unwrap_or_default();
        let mut groups = require.groups;
        groups.sort();
        let seats: u32 = groups.iter().map(|g| g.count).sum();
        Requirement {
            quorum: require.quorum.unwrap_or(0).max(seats),
            groups,
            approval_expires_after_hours: require.approval_expires_after_hours,
            refused: rule.refuse.as_ref().map(|reason| Refused { rule: rule.name.clone(), reason: reason.clone() }),
            matched_rules: vec![rule.name.clone()],
            risk_tier: tier,
        }
    }

    /// The strictest of both: the larger quorum and count of each group, the shorter expiry, the first
    /// refusal, every matched rule. Joining never lowers anything.
    pub fn join(&self, other: &Requirement) -> Requirement {
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for g in self.groups.iter().chain(&other.groups) {
            let c = counts.entry(g.group.as_str()).or_default();
            *c = (*c).max(g.count);
        }
        let groups: Vec<GroupCount> =
            counts.into_iter().map(|(group, count)| GroupCount { group: group.to_string(), count }).collect();
        let seats: u32 = groups.iter().map(|g| g.count).sum();
        let mut matched_rules = self.matched_rules.clone();
        for r in &other.matched_rules {
            if !matched_rules.contains(r) {
                matched_rules.push(r.clone());
            }
        }
        Requirement {
            quorum: self.quorum.max(other.quorum).max(seats),
            groups,
            approval_expires_after_hours: match (self.approval_expires_after_hours, other.approval_expires_after_hours)
            {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            refused: self.refused.clone().or_else(|| other.refused.clone()),
            matched_rules,
            risk_tier: self.risk_tier.max(other.risk_tier),
        }
    }

    /// Whether an approval given at `at` still counts at `now` under this requirement's expiry.
    pub fn still_counts(&self, at: i64, now: i64) -> bool {
        self.approval_expires_after_hours.is_none_or(|h| now.saturating_sub(at) < i64::from(h) * HOUR_MICROS)
    }

    /// Whether this demands more of people than `other` anywhere: a larger quorum or group count, a shorter
    /// expiry, a refusal. (The rules' names are the why, not the strength.)
    pub fn stricter_than(&self, other: &Requirement) -> bool {
        let count = |r: &Requirement, group: &str| r.groups.iter().find(|g| g.group == group).map_or(0, |g| g.count);
        let shorter = match (self.approval_expires_after_hours, other.approval_expires_after_hours) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            _ => false,
        };
        self.quorum > other.quorum
            || self.groups.iter().any(|g| g.count > count(other, &g.group))
            || shorter
            || (self.refused.is_some() && other.refused.is_none())
    }

    /// Who must approve, in words ("3 people: 2 of treasury and 1 of cfo").
    pub fn in_words(&self) -> String {
        if let Some(r) = &self.refused {
            return format!("refused by rule `{}`: {}", r.rule, r.reason);
        }
        let people = if self.quorum == 1 { "1 person".to_string() } else { format!("{} people", self.quorum) };
        let mut words = if self.groups.is_empty() {
            format!("{people}, any approvers")
        } else {
            let groups: Vec<String> = self.groups.iter().map(|g| format!("{} of {}", g.count, g.group)).collect();
            format!("{people}: {}", and_list(&groups))
        };
        if let Some(h) = self.approval_expires_after_hours {
            words.push_str(&format!("; an approval counts for {h} hours"));
        }
        words
    }

    /// How the approvals given so far stand against this requirement. `barred` are the operators who may not
    /// be the sole approver (they approved the counterparty's bank details within the duty's window).
    pub fn standing(&self, approvals: &[Approval<'_>], barred: &[&str], now: i64) -> Standing {
        let mut current: Vec<&Approval<'_>> = Vec::new();
        let mut expired = 0;
        for a in approvals {
            if !self.still_counts(a.at, now) {
                expired += 1;
            } else if !current.iter().any(|c| c.operator_id == a.operator_id) {
                current.push(a);
            }
        }
        let mut quorum = self.quorum;
        if current.iter().any(|a| barred.contains(&a.operator_id)) {
            quorum = quorum.max(2);
        }
        // Places by group, each filled by a distinct person (a bipartite matching: one person in two groups
        // fills one place, so "2 of treasury and 1 of cfo" always takes three people).
        let places: Vec<&str> =
            self.groups.iter().flat_map(|g| std::iter::repeat_n(g.group.as_str(), g.count as usize)).collect();
        let filled = fill(&places, &current);
        let mut missing: Vec<GroupCount> = Vec::new();
        for (place, person) in places.iter().zip(&filled) {
            if person.is_none() {
                match missing.last_mut() {
                    Some(m) if m.group == *place => m.count += 1,
                    _ => missing.push(GroupCount { group: place.to_string(), count: 1 }),
                }
            }
        }
        let approvals = current.len() as u32;
        let in_groups: u32 = missing.iter().map(|m| m.count).sum();
        let people_needed = quorum.saturating_sub(approvals).max(in_groups);
        Standing {
            approvals,
            quorum,
            missing_groups: missing,
            missing_anyone: people_needed - in_groups,
            expired,
            met: self.refused.is_none() && people_needed == 0,
        }
    }
}

fn and_list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A standing approval, with the groups its operator was in when deciding.
#[derive(Clone, Debug)]
pub struct Approval<'a> {
    pub operator_id: &'a str,
    pub groups: &'a [String],
    pub at: i64,
}

/// How approvals stand against a requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// Distinct people whose approval counts.
    pub approvals: u32,
    /// The people needed in all (raised to 2 when a barred operator approved).
    pub quorum: u32,
    /// Places of groups nobody fills yet.
    pub missing_groups: Vec<GroupCount>,
    /// People needed beyond the groups' places, from anyone who may decide.
    pub missing_anyone: u32,
    /// Approvals that no longer count because they expired.
    pub expired: u32,
    pub met: bool,
}

impl Standing {
    /// Who still must approve, in words ("1 more of cfo and 1 more approver").
    pub fn still_needed(&self) -> String {
        if self.met {
            return "nobody: the requirement is met".into();
        }
        let mut parts: Vec<String> =
            self.missing_groups.iter().map(|g| format!("{} more of {}", g.count, g.group)).collect();
        if self.missing_anyone > 0 {
            let s = if self.missing_anyone == 1 { "" } else { "s" };
            parts.push(format!("{} more approver{s}", self.missing_anyone));
        }
        if parts.is_empty() {
            return "nobody can approve it: a rule refuses it".into();
        }
        and_list(&parts)
    }
}

/// A maximum matching of places to approvers (Kuhn's augmenting paths; a requirement has at most
/// `MAX_PEOPLE` places per rule and a handful of approvers, so this is tiny). `None` where a place is empty.
fn fill(places: &[&str], people: &[&Approval<'_>]) -> Vec<Option<usize>> {
    fn augment(
        place: usize,
        places: &[&str],
        people: &[&Approval<'_>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for (p, person) in people.iter().enumerate() {
            if seen[p] || !person.groups.iter().any(|g| g == places[place]) {
                continue;
            }
            seen[p] = true;
            if owner[p].is_none_or(|other| augment(other, places, people, owner, seen)) {
                owner[p] = Some(place);
                return true;
            }
        }
        false
    }
    let mut owner: Vec<Option<usize>> = vec![None; people.len()];
    for place in 0..places.len() {
        let mut seen = vec![false; people.len()];
        augment(place, places, people, &mut owner, &mut seen);
    }
    let mut filled = vec![None; places.len()];
    for (p, place) in owner.iter().enumerate() {
        if let Some(place) = place {
            filled[*place] = Some(p);
        }
    }
    filled
}
