//! The evaluator's tests: the example policy of docs/approval-policies.md in small, groups filled by distinct
//! people, the tier's floor, refusals, unknown facts, expiry, the sole-approver duty, the join and the checks.

use super::*;
use crate::rules::envelope::{ExecutionMode, RiskTier};

const DAY_MICROS: i64 = 86_400_000_000;
const HOUR_MICROS: i64 = 3_600_000_000;

const NOW: i64 = 1_800_000_000_000_000;

fn facts(amount_minor: i64, code: &str) -> Facts<'static> {
    Facts {
        kind: ActionKind::Payment,
        connector: "iso20022",
        execution_mode: ExecutionMode::HumanApproved,
        currency: Currency::parse(code).expect("currency"),
        amount_minor,
        proposer_id: "app_01KBTA0C4GZ2Q5R8V1XWJ3N6M9",
        counterparty: CounterpartyFacts {
            first_approved_at: Some(NOW - 400 * DAY_MICROS),
            details_approved_at: Some(NOW - 200 * DAY_MICROS),
            country: Some("DE".into()),
        },
        now: NOW,
    }
}

fn treasury() -> Policy {
    serde_json::from_value(serde_json::json!({ "rules": [
        { "name": "large-usd", "when": { "amount_at_least_minor": { "USD": 100_000_000 } },
          "require": { "groups": [ { "group": "treasury", "count": 2 }, { "group": "cfo", "count": 1 } ] } },
        { "name": "no-crypto-connector", "when": { "connectors": ["crypto"] }, "refuse": "not a connector we pay through" },
        { "name": "new-payee", "when": { "kinds": ["payment"], "counterparty": { "bank_details_changed_within_days": 30 } },
          "require": { "quorum": 2, "approval_expires_after_hours": 24 } }
    ]}))
    .expect("policy")
}

fn approval<'a>(id: &'a str, groups: &'a [String]) -> Approval<'a> {
    Approval { operator_id: id, groups, at: NOW - HOUR_MICROS }
}

#[test]
fn the_example_policy_is_valid_and_needs_three_people_for_ten_million_dollars() {
    let p = treasury();
    assert_eq!(p.check(), Ok(()));
    let r = p.evaluate(&facts(1_000_000_000, "USD"), RiskTier::T1, 1);
    assert_eq!(r.quorum, 3);
    assert_eq!(r.matched_rules, vec!["large-usd"]);
    assert_eq!(r.in_words(), "3 people: 1 of cfo and 2 of treasury");
    let t = ["treasury".to_string()];
    let c = ["cfo".to_string()];
    let two_treasury = [approval("opr_a", &t), approval("opr_b", &t)];
    let s = r.standing(&two_treasury, &[], NOW);
    assert!(!s.met);
    assert_eq!(s.still_needed(), "1 more of cfo");
    let all = [approval("opr_a", &t), approval("opr_b", &t), approval("opr_c", &c)];
    assert!(r.standing(&all, &[], NOW).met);
}

#[test]
fn one_person_in_two_groups_fills_one_place() {
    let r = treasury().evaluate(&facts(1_000_000_000, "USD"), RiskTier::T1, 1);
    let both = ["cfo".to_string(), "treasury".to_string()];
    let t = ["treasury".to_string()];
    let s = r.standing(&[approval("opr_a", &both), approval("opr_b", &t)], &[], NOW);
    assert!(!s.met, "{s:?}");
    assert_eq!(s.missing_groups, vec![GroupCount { group: "treasury".into(), count: 1 }]);
    // The matching moves the dual member to cfo when a second treasurer arrives.
    let s = r.standing(&[approval("opr_a", &both), approval("opr_b", &t), approval("opr_c", &t)], &[], NOW);
    assert!(s.met, "{s:?}");
}

#[test]
fn no_matching_rule_is_the_tier_s_quorum_never_no_approval() {
    let r = treasury().evaluate(&facts(5_000, "EUR"), RiskTier::T2, 2);
    assert_eq!((r.quorum, r.matched_rules.len(), r.refused.is_none()), (2, 0, true));
    let r = Policy::default().evaluate(&facts(5_000, "EUR"), RiskTier::T1, 0);
    assert_eq!(r.quorum, 1, "a floor of zero is still one person");
}

#[test]
fn the_proposer_s_tier_raises_never_lowers() {
    let p: Policy = serde_json::from_value(serde_json::json!({ "rules": [
        { "name": "small", "when": { "amount_below_minor": { "EUR": 10_000 } }, "require": { "quorum": 1 } }
    ]}))
    .expect("policy");
    assert_eq!(p.evaluate(&facts(5_000, "EUR"), RiskTier::T2, 2).quorum, 2);
}

#[test]
fn a_refusal_wins_and_names_its_rule() {
    let mut f = facts(5_000, "EUR");
    f.connector = "crypto";
    let r = treasury().evaluate(&f, RiskTier::T1, 1);
    assert_eq!(r.refused.as_ref().map(|x| x.rule.as_str()), Some("no-crypto-connector"));
    let t = ["treasury".to_string()];
    assert!(!r.standing(&[approval("opr_a", &t), approval("opr_b", &t)], &[], NOW).met);
}

#[test]
fn unknown_counterparty_facts_match() {
    let mut f = facts(5_000, "EUR");
    f.counterparty = CounterpartyFacts::default();
    let r = treasury().evaluate(&f, RiskTier::T1, 1);
    assert_eq!(r.matched_rules, vec!["new-payee"]);
    assert_eq!((r.quorum, r.approval_expires_after_hours), (2, Some(24)));
}

#[test]
fn expired_approvals_do_not_count() {
    let mut f = facts(5_000, "EUR");
    f.counterparty.details_approved_at = Some(NOW - DAY_MICROS);
    let r = treasury().evaluate(&f, RiskTier::T1, 1);
    let none: [String; 0] = [];
    let old = Approval { operator_id: "opr_a", groups: &none, at: NOW - 25 * HOUR_MICROS };
    let s = r.standing(&[old, approval("opr_b", &none)], &[], NOW);
    assert_eq!((s.approvals, s.expired, s.met), (1, 1, false));
}

#[test]
fn a_barred_operator_is_never_the_sole_approver() {
    let r = Requirement::floor(RiskTier::T1, 1);
    let none: [String; 0] = [];
    let s = r.standing(&[approval("opr_a", &none)], &["opr_a"], NOW);
    assert_eq!((s.met, s.quorum, s.still_needed().as_str()), (false, 2, "1 more approver"));
    assert!(r.standing(&[approval("opr_a", &none), approval("opr_b", &none)], &["opr_a"], NOW).met);
}

#[test]
fn join_is_the_strictest_and_never_loosens() {
    let p = treasury();
    let big = p.evaluate(&facts(1_000_000_000, "USD"), RiskTier::T1, 1);
    let small = p.evaluate(&facts(5_000, "USD"), RiskTier::T1, 1);
    assert_eq!(big.join(&small), big.join(&small).join(&small));
    assert_eq!(small.join(&big).quorum, 3);
    assert_eq!(big.join(&small).groups, big.groups);
    let expiring = Requirement { approval_expires_after_hours: Some(24), ..small.clone() };
    let shorter = Requirement { approval_expires_after_hours: Some(2), ..small.clone() };
    assert_eq!(expiring.join(&shorter).approval_expires_after_hours, Some(2));
    assert!(big.join(&small).stricter_than(&small) && !big.join(&small).stricter_than(&big));
    assert!(shorter.stricter_than(&expiring) && !expiring.stricter_than(&shorter));
}

#[test]
fn faults_are_all_named_with_where_they_are() {
    let bad: Policy = serde_json::from_value(serde_json::json!({ "rules": [
        { "name": "Bad Name", "when": { "currencies": ["XXXX"], "amount_at_least_minor": { "USD": 0 } },
          "require": { "groups": [ { "group": "cfo", "count": 0 } ] }, "refuse": "both" },
        { "name": "dup", "require": { "quorum": 11 } },
        { "name": "dup", "require": {} }
    ]}))
    .expect("policy");
    let faults = bad.check().expect_err("faults");
    for expected in [
        "rules[0].name",
        "rules[0].when.currencies[0]",
        "rules[0].when.amount_at_least_minor.USD",
        "rules[0]: exactly one",
        "rules[1].require.quorum",
        "rules[2].name: `dup`",
        "rules[2].require: state",
    ] {
        assert!(faults.iter().any(|f| f.starts_with(expected)), "{expected} missing from {faults:#?}");
    }
    assert!(serde_json::from_value::<Policy>(serde_json::json!({ "rules": [], "extra": 1 })).is_err());
}
