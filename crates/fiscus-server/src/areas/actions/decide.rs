//! Operator decisions on an action (the human plane). Only the console calls this, with a signed-in
//! operator; no API route reaches it. The decision is taken by `fiscus_domain::actions::approval::decide`
//! on the locked action, sealed with exactly what it covered, and recorded with its state change, history,
//! outbox event and audit event in one transaction. Any error means no decision.

use fiscus_domain::actions::approval::{self, Decision, DecisionFacts, Outcome, PriorApproval, Refusal, Role};
use fiscus_domain::actions::state::Event;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::evidence::seal;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::actions::DecisionRow;
use serde_json::json;

use super::service::{self, Actor};
use crate::http::problem::ApiError;
use crate::state::AppState;

pub struct Decider<'a> {
    pub operator_id: &'a str,
    pub role: Role,
}

pub struct Seen<'a> {
    pub envelope_hash: &'a str,
    pub check_set_hash: &'a str,
}

#[derive(Debug)]
pub enum DecideError {
    Refused(Refusal),
    Failed(ApiError),
}

impl From<ApiError> for DecideError {
    fn from(e: ApiError) -> Self {
        DecideError::Failed(e)
    }
}

impl From<fiscus_store::StoreError> for DecideError {
    fn from(e: fiscus_store::StoreError) -> Self {
        DecideError::Failed(e.into())
    }
}

pub async fn decide(
    state: &AppState,
    tenant: &Tenant,
    action_id: &str,
    who: &Decider<'_>,
    decision: Decision,
    seen: &Seen<'_>,
) -> Result<Outcome, DecideError> {
    let mut tx = state.store.begin().await?;
    let row = fiscus_store::actions::get_for_decision(&mut tx, tenant, action_id).await?;
    let loaded = service::load(tx.conn(), tenant, row).await?;
    loaded.verify_sealed(&mut tx, tenant).await?;
    let prior: Vec<PriorApproval> = loaded
        .decisions
        .iter()
        .filter(|d| d.decision == "approve" && d.invalidated_at.is_none())
        .map(|d| PriorApproval {
            operator_id: d.operator_id.clone(),
            envelope_hash: d.envelope_hash.clone(),
            check_set_hash: d.check_set_hash.clone(),
        })
        .collect();
    let proposer = (loaded.row.proposed_by_kind == "operator").then_some(loaded.row.proposed_by_id.as_str());
    let quorum = service::quorum(&state.settings, service::risk_tier(&loaded.row)?);
    let outcome = approval::decide(
        &DecisionFacts {
            state: loaded.state,
            envelope_hash: &loaded.row.envelope_hash,
            check_set_hash: &loaded.check_set_hash,
            proposed_by_operator: proposer,
            operator_id: who.operator_id,
            role: who.role,
            seen_envelope_hash: seen.envelope_hash,
            seen_check_set_hash: seen.check_set_hash,
            prior: &prior,
            quorum,
        },
        decision,
    )
    .map_err(DecideError::Refused)?;
    let now = now_micros();
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
        "operator_id": who.operator_id,
        "role": who.role.as_str(),
        "decision": decision.as_str(),
        "envelope_hash": loaded.row.envelope_hash,
        "check_set_hash": loaded.check_set_hash,
        "checks": checks,
        "decided_at": rfc3339(now),
    });
    let evidence_hash = seal(&evidence).map_err(|_| ApiError::internal())?;
    fiscus_store::actions::insert_decision(
        &mut tx,
        tenant,
        action_id,
        &DecisionRow {
            id: decision_id.clone(),
            operator_id: who.operator_id.to_string(),
            role: who.role.as_str().into(),
            decision: decision.as_str().into(),
            envelope_hash: loaded.row.envelope_hash.clone(),
            check_set_hash: loaded.check_set_hash.clone(),
            evidence_hash: evidence_hash.clone(),
            created_at: now,
            invalidated_at: None,
        },
    )
    .await?;
    let actor = Actor { kind: "operator", id: who.operator_id };
    let detail = json!({ "decision_id": decision_id, "evidence_hash": evidence_hash, "envelope_hash": loaded.row.envelope_hash, "check_set_hash": loaded.check_set_hash });
    let (event, to) = match outcome {
        Outcome::QuorumReached { .. } => {
            ("action.approved", Some(loaded.state.on(Event::QuorumReached).map_err(|_| ApiError::internal())?))
        }
        Outcome::Denied => ("action.denied", Some(loaded.state.on(Event::Deny).map_err(|_| ApiError::internal())?)),
        Outcome::Recorded { .. } => ("action.approval_recorded", None),
    };
    match to {
        Some(next) => {
            service::record_transition(
                &mut tx,
                tenant,
                action_id,
                Some(loaded.state),
                next,
                event,
                &actor,
                detail.clone(),
            )
            .await?
        }
        None => {
            // An approval short of the quorum changes no state; it is history and an event all the same.
            fiscus_store::actions::record_history(
                &mut tx,
                tenant,
                &fiscus_store::actions::HistoryEntry {
                    action_id,
                    from_state: Some(loaded.state.as_str()),
                    to_state: loaded.state.as_str(),
                    event,
                    actor_kind: "operator",
                    actor_id: who.operator_id,
                    detail: detail.clone(),
                    created_at: now,
                },
            )
            .await?;
            fiscus_store::actions::enqueue_event(
                &mut tx,
                tenant,
                event,
                action_id,
                &json!({ "type": event, "action_id": action_id, "detail": detail }),
                now,
            )
            .await?;
        }
    }
    fiscus_store::audit::append(
        &mut tx,
        &tenant.workspace_id,
        fiscus_store::audit::NewAuditEvent {
            environment: Some(tenant.environment.as_str()),
            actor_kind: "operator",
            actor_id: who.operator_id,
            action: event,
            request_id: crate::http::request_id::current().as_deref(),
            subject: Some(action_id),
            details: json!({ "decision": decision.as_str(), "evidence_hash": evidence_hash, "role": who.role.as_str() }),
            occurred_at: now,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(outcome)
}
