//! Operator decisions on an action (the human plane). Only the console calls this, with a signed-in
//! operator; no API route reaches it, and a caller that is not an operator is refused here as well. The
//! decision is taken by `crate::rules::approval::decide` on the locked, seal-checked action,
//! sealed with exactly what it covered, and recorded with its event. Any error means no decision.

use crate::rules::approval::{self, Decision, DecisionFacts, Outcome, PriorApproval};
use crate::rules::transitions::{self, Event};
use crate::tables::actions::ActionDecision;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::events::EventType;
use fiscus_domain::evidence::seal;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use serde_json::json;

use super::Loaded;
use crate::steps::record::{ActionChange, record};
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::settings::Settings;

/// A decision recorded: what it did, and its id (`dec_…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decided {
    pub outcome: Outcome,
    pub decision_id: String,
}

/// What the operator was shown when deciding: the decision covers exactly these hashes. A decision given in a
/// batch names it; a person's reason is kept with the decision.
pub struct Seen<'a> {
    pub envelope_hash: &'a str,
    pub check_set_hash: &'a str,
    pub batch_id: Option<&'a str>,
    pub reason: Option<&'a str>,
}

#[expect(clippy::too_many_arguments, reason = "a decision is these facts together")]
pub fn decide<'a>(
    tx: &'a mut WriteTx,
    settings: &'a Settings,
    tenant: &'a Tenant,
    caller: &'a Caller,
    role: Role,
    action_id: &'a str,
    decision: Decision,
    seen: &'a Seen<'a>,
) -> fiscus_store::Boxed<'a, Result<Decided, Failure>> {
    Box::pin(async move {
        if caller.actor.kind != ActorKind::Operator {
            tracing::error!(actor = ?caller.actor, "a decision was asked for by a caller that is not an operator");
            return Err(Failure::Decision(Refusal::RoleMayNotDecide));
        }
        let operator_id = caller.actor.id.as_str();
        if seen.reason.is_some_and(|r| r.chars().count() > 500) {
            return Err(Failure::Invalid(vec![("reason", "at most 500 characters".into())]));
        }
        let loaded = Loaded::for_decision(tx, tenant, action_id).await?;
        loaded.verify_sealed(tx, tenant).await?;
        let action = &loaded.action;
        let prior: Vec<PriorApproval> = loaded
            .decisions
            .iter()
            .filter(|d| d.decision == Decision::Approve && d.invalidated_at.is_none())
            .map(|d| PriorApproval {
                operator_id: d.operator_id.clone(),
                envelope_hash: d.envelope_hash.clone(),
                check_set_hash: d.check_set_hash.clone(),
                groups: loaded.contexts.get(&d.id).map(|m| m.groups.clone()).unwrap_or_default(),
                at: d.created_at,
            })
            .collect();
        let now = now_micros();
        let requirement = loaded.requirement(settings);
        // What counts is the operator's membership now, sealed with the decision below.
        let groups = crate::tables::approver_groups::groups_of(tx.conn(), &tenant.workspace_id, operator_id).await?;
        let bank_details_approvers = super::policies::barred_approvers(tx, tenant, &loaded, now).await?;
        let sole_approver_barred = bank_details_approvers.iter().any(|b| b == operator_id);
        let mut barred = loaded.barred();
        barred.extend(bank_details_approvers.iter().map(String::as_str));
        let proposer = (action.proposed_by.kind == ActorKind::Operator).then_some(action.proposed_by.id.as_str());
        let outcome = approval::decide(
            &DecisionFacts {
                state: action.state,
                envelope_hash: &action.envelope_hash,
                check_set_hash: &loaded.check_set_hash,
                proposed_by_operator: proposer,
                operator_id,
                role,
                seen_envelope_hash: seen.envelope_hash,
                seen_check_set_hash: seen.check_set_hash,
                prior: &prior,
                requirement: &requirement,
                groups: &groups,
                barred: &barred,
                now,
            },
            decision,
        )
        .map_err(Failure::Decision)?;
        let checks: Vec<serde_json::Value> = loaded
        .latest
        .iter()
        .map(|c| json!({ "check_key": c.check_key, "version": c.version, "status": c.status.as_str(), "check_hash": c.check_hash }))
        .collect();
        let decision_id = fiscus_domain::ids::new_id("dec");
        let evidence = json!({
            "object": "action_decision",
            "id": decision_id,
            "workspace_id": tenant.workspace_id,
            "environment": tenant.environment.as_str(),
            "action_id": action_id,
            "operator_id": operator_id,
            "role": role.as_str(),
            "decision": decision.as_str(),
            "envelope_hash": action.envelope_hash,
            "check_set_hash": loaded.check_set_hash,
            "checks": checks,
            "decided_at": rfc3339(now),
        });
        let evidence_hash = seal(&evidence).map_err(|e| Failure::internal(format!("decision evidence: {e}")))?;
        crate::tables::actions::insert_decision(
            tx,
            tenant,
            action_id,
            &ActionDecision {
                id: decision_id.clone(),
                operator_id: operator_id.to_string(),
                role,
                decision,
                envelope_hash: action.envelope_hash.clone(),
                check_set_hash: loaded.check_set_hash.clone(),
                evidence_hash: evidence_hash.clone(),
                created_at: now,
                invalidated_at: None,
            },
        )
        .await?;
        let context = crate::tables::approval_policies::DecisionContext {
            decision_id: decision_id.clone(),
            action_id: action_id.to_string(),
            operator_id: operator_id.to_string(),
            groups,
            sole_approver_barred,
            batch_id: seen.batch_id.map(str::to_string),
            reason: seen.reason.map(str::trim).filter(|r| !r.is_empty()).map(str::to_string),
        };
        super::policies::record_context(tx, tenant, caller, context).await?;
        let (event, to) = match outcome {
            Outcome::QuorumReached { .. } => {
                (EventType::ActionApproved, transitions::next(action.state, Event::QuorumReached))
            }
            Outcome::Denied => (EventType::ActionDenied, transitions::next(action.state, Event::Deny)),
            // An approval short of the quorum changes no state; it is history and an event all the same.
            Outcome::Recorded { .. } => (EventType::ActionApprovalRecorded, Ok(action.state)),
        };
        let to = to.map_err(|e| Failure::internal(e.to_string()))?;
        record(
            tx,
            tenant,
            caller,
            ActionChange::of(
                action,
                to,
                event,
                json!({
                    "decision_id": decision_id, "decision": decision.as_str(), "role": role.as_str(),
                    "evidence_hash": evidence_hash, "check_set_hash": loaded.check_set_hash,
                }),
            ),
        )
        .await?;
        Ok(Decided { outcome, decision_id })
    })
}
