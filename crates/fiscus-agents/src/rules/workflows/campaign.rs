//! Validation campaigns: a workflow version's suite run deterministically with virtual waits and virtual
//! artifacts, before anyone relies on it.
//!
//! The seed's rule: validation runs deterministic computations and conditions locally; agent,
//! integration, Financial Action, code-runner, sub-workflow and external-network steps are prohibited. A
//! version holding any of them is refused whole (422 `invalid_suite` naming each), as is a suite that
//! names a review decision for a step that is not a review.

use super::definition::{Definition, StepKind};
use super::run::{ReviewDecision, RunState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Cases one campaign may hold.
pub const MAX_CASES: usize = 20;

/// A campaign's suite (the request body; without a body, a single case approving every review). A suite
/// sent holds 1 to 20 cases: an empty one is refused (the seed's "422 invalid suite"), since a campaign of
/// no case would pass having tested nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowSuite)]
pub struct Suite {
    #[serde(default)]
    #[schema(min_items = 1, max_items = 20, required = true)]
    pub cases: Vec<Case>,
}

/// One case: how its reviews are decided, and what it expects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowSuiteCase)]
pub struct Case {
    #[schema(value_type = fiscus_domain::fields::Text<1, 100>, inline, example = "approved")]
    pub name: String,
    /// The decision taken at each review step (by step id); a review not named is approved.
    #[serde(default)]
    #[schema(example = json!({"model_risk_review": "approve"}))]
    pub reviews: BTreeMap<String, ReviewDecision>,
    /// The state the case must end in to pass; without one, the case passes whatever it ends in.
    #[serde(default)]
    pub expect: Option<RunState>,
}

/// A problem with the suite: the step (if any), its kind, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = WorkflowSuiteProblem)]
pub struct SuiteProblem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<StepKind>,
    pub reason: String,
}

impl Suite {
    /// The cases to run: the suite's, or one default case.
    pub fn cases(&self) -> Vec<Case> {
        if self.cases.is_empty() {
            vec![Case { name: "default".into(), reviews: BTreeMap::new(), expect: None }]
        } else {
            self.cases.clone()
        }
    }
}

/// Everything that makes the suite invalid for this definition: each prohibited step, each case that is
/// malformed or names a review that is not one.
pub fn check(definition: &Definition, suite: Option<&Suite>) -> Result<(), Vec<SuiteProblem>> {
    let mut problems: Vec<SuiteProblem> = definition
        .connected_steps()
        .into_iter()
        .map(|(step, kind)| SuiteProblem {
            step: Some(step),
            kind: Some(kind),
            reason: format!("{} steps are prohibited in validation", kind.as_str()),
        })
        .collect();
    let empty = Suite::default();
    let sent = suite.is_some();
    let suite = suite.unwrap_or(&empty);
    if sent && suite.cases.is_empty() {
        problems.push(SuiteProblem {
            step: None,
            kind: None,
            reason: "a suite holds at least one case (send no body for the default case)".into(),
        });
    }
    if suite.cases.len() > MAX_CASES {
        problems.push(SuiteProblem { step: None, kind: None, reason: format!("at most {MAX_CASES} cases") });
    }
    for (i, case) in suite.cases.iter().enumerate() {
        if !fiscus_domain::fields::text_ok(&case.name, 1, 100) {
            problems.push(SuiteProblem {
                step: None,
                kind: None,
                reason: format!("cases[{i}].name must be 1 to 100 characters of text"),
            });
        }
        if suite.cases.iter().take(i).any(|c| c.name == case.name) {
            problems.push(SuiteProblem {
                step: None,
                kind: None,
                reason: format!("case `{}` is named twice", case.name),
            });
        }
        for step in case.reviews.keys() {
            let kind = definition.position(step).map(|p| definition.steps[p].kind());
            if kind != Some(StepKind::Review) {
                problems.push(SuiteProblem {
                    step: Some(step.clone()),
                    kind,
                    reason: format!("case `{}` decides `{step}`, which is not a review step", case.name),
                });
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_prohibited_step_is_named() {
        let d: Definition = serde_json::from_value(json!({"steps": [
            {"kind": "agent", "id": "a"},
            {"kind": "integration", "id": "b"},
            {"kind": "financial_action", "id": "c"},
            {"kind": "code_runner", "id": "d"},
            {"kind": "sub_workflow", "id": "e"},
            {"kind": "external_network", "id": "f"},
            {"kind": "wait", "id": "g", "seconds": 1}
        ]}))
        .expect("parses");
        let problems = check(&d, None).expect_err("refused");
        let named: Vec<(&str, StepKind)> =
            problems.iter().map(|p| (p.step.as_deref().unwrap_or(""), p.kind.expect("kind"))).collect();
        assert_eq!(
            named,
            vec![
                ("a", StepKind::Agent),
                ("b", StepKind::Integration),
                ("c", StepKind::FinancialAction),
                ("d", StepKind::CodeRunner),
                ("e", StepKind::SubWorkflow),
                ("f", StepKind::ExternalNetwork)
            ]
        );
    }

    #[test]
    fn a_case_may_decide_only_review_steps() {
        let d: Definition =
            serde_json::from_value(json!({"steps": [{"kind": "wait", "id": "w", "seconds": 1}]})).expect("parses");
        let suite: Suite =
            serde_json::from_value(json!({"cases": [{"name": "x", "reviews": {"w": "approve"}}]})).expect("suite");
        let problems = check(&d, Some(&suite)).expect_err("refused");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].reason.contains("not a review step"));
        assert_eq!(Suite::default().cases().len(), 1);
        // No body is the default case; a suite sent with no case would pass having tested nothing.
        assert!(check(&d, None).is_ok());
        let empty = check(&d, Some(&Suite::default())).expect_err("refused");
        assert!(empty[0].reason.contains("at least one case"), "{empty:?}");
    }
}
