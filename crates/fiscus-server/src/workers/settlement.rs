//! The settlement worker: claims execution work, runs it through the action's connector, records what the
//! connector reported, and reconciles. Each item is finished in one transaction with its records, state
//! changes, outbox events and audit events; a crash before commit leaves the claim to go stale and be
//! taken again, and the unique settlement record keeps a second pass from settling twice.

use fiscus_domain::actions::settlement::{Expected, reconcile, reservation_after};
use fiscus_domain::actions::state::{ControlState, Event};
use fiscus_domain::clock::{MICROS_PER_SECOND, now_micros, rfc3339};
use fiscus_domain::credentials::Environment;
use fiscus_domain::evidence::seal;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::settlement::{Job, RecordRow};
use serde_json::json;

use super::connector::{ConnectorEvent, Instruction, connector_for};
use crate::areas::actions::service::{self, Actor};
use crate::state::AppState;

/// Claims and processes one batch; returns how many items it finished.
pub async fn run_once(state: &AppState, worker: &str) -> anyhow::Result<usize> {
    let now = now_micros();
    let mut tx = state.store.begin().await?;
    let jobs = fiscus_store::settlement::claim(&mut tx, worker, now, 60 * MICROS_PER_SECOND, 16).await?;
    tx.commit().await?;
    let mut done = 0;
    for job in jobs {
        match process(state, worker, &job).await {
            Ok(()) => done += 1,
            Err(e) => {
                tracing::warn!(job = %job.id, action = %job.action_id, error = %e, "settlement item failed; it will be retried")
            }
        }
    }
    Ok(done)
}

async fn process(state: &AppState, worker: &str, job: &Job) -> anyhow::Result<()> {
    let environment = Environment::parse(&job.environment).ok_or_else(|| anyhow::anyhow!("bad environment"))?;
    let tenant = Tenant { workspace_id: job.workspace_id.clone(), environment };
    let mut tx = state.store.begin().await?;
    let action = fiscus_store::actions::get_for_decision(&mut tx, &tenant, &job.action_id).await?;
    let mut current = service::parse_state(&action.control_state).map_err(|_| anyhow::anyhow!("bad state"))?;
    let now = now_micros();
    if current != ControlState::Executing {
        // Already processed (e.g. a retried claim after a commit the claimer did not see): nothing to do.
        fiscus_store::settlement::finish(&mut tx, &job.id, worker, now).await?;
        tx.commit().await?;
        return Ok(());
    }
    let connector =
        connector_for(&job.connector, environment).ok_or_else(|| anyhow::anyhow!("no connector {}", job.connector))?;
    let events = connector.execute(&Instruction {
        action_id: &action.id,
        reference: &action.reference,
        amount_minor: action.amount_minor,
        currency: &action.currency,
        counterparty: &action.counterparty,
    });
    let actor = Actor { kind: "worker", id: worker };
    let expected =
        Expected { reference: &action.reference, amount_minor: action.amount_minor, currency: &action.currency };
    for event in events {
        let (kind, report, reason) = match &event {
            ConnectorEvent::Settled(r) => ("settled", Some(r), None),
            ConnectorEvent::Returned(r) => ("returned", Some(r), None),
            ConnectorEvent::Failed { reason } => ("failed", None, Some(reason.clone())),
        };
        let mismatches = match (kind, report) {
            ("settled", Some(r)) => reconcile(&expected, r),
            _ => Vec::new(),
        };
        let reconciliation = match kind {
            "settled" if mismatches.is_empty() => "matched",
            "settled" => "mismatch",
            _ => "not_applicable",
        };
        let record_id = fiscus_domain::ids::new_id("stl");
        let payload = json!({
            "id": record_id,
            "action_id": action.id,
            "kind": kind,
            "connector": job.connector,
            "report": report,
            "reason": reason,
            "reconciliation": reconciliation,
            "mismatches": mismatches,
            "received_at": rfc3339(now),
        });
        let record_hash = seal(&payload).map_err(|_| anyhow::anyhow!("unsealable record"))?;
        fiscus_store::settlement::insert_record(
            &mut tx,
            &tenant,
            &action.id,
            &RecordRow {
                id: record_id.clone(),
                kind: kind.into(),
                connector: job.connector.clone(),
                connector_reference: report.map(|r| r.connector_reference.clone()).unwrap_or_default(),
                reference: report.map(|r| r.reference.clone()).unwrap_or_else(|| action.reference.clone()),
                amount_minor: report.map(|r| r.amount_minor).unwrap_or(0),
                currency: report.map(|r| r.currency.clone()).unwrap_or_else(|| action.currency.clone()),
                reconciliation: reconciliation.into(),
                mismatches: serde_json::to_string(&mismatches).unwrap_or_else(|_| "[]".into()),
                record_hash: record_hash.clone(),
                processed_by: worker.into(),
                received_at: now,
            },
        )
        .await?;
        let steps: Vec<(Event, &str)> = match (kind, reconciliation) {
            ("settled", "matched") => {
                vec![(Event::ConnectorSettled, "action.settled"), (Event::ReconciledMatch, "action.reconciled")]
            }
            ("settled", _) => vec![
                (Event::ConnectorSettled, "action.settled"),
                (Event::ReconciledMismatch, "action.reconciliation_exception"),
            ],
            ("returned", _) => vec![(Event::ConnectorReturned, "action.returned")],
            _ => vec![(Event::ConnectorFailed, "action.failed")],
        };
        for (step, name) in steps {
            let next = current.on(step).map_err(|e| anyhow::anyhow!(e.to_string()))?;
            let detail = json!({ "settlement_record": record_id, "record_hash": record_hash, "mismatches": mismatches, "reason": reason });
            service::record_transition(&mut tx, &tenant, &action.id, Some(current), next, name, &actor, detail.clone())
                .await
                .map_err(|_| anyhow::anyhow!("transition failed"))?;
            fiscus_store::audit::append(
                &mut tx,
                &tenant.workspace_id,
                fiscus_store::audit::NewAuditEvent {
                    environment: Some(environment.as_str()),
                    actor_kind: "worker",
                    actor_id: worker,
                    action: name,
                    request_id: None,
                    subject: Some(&action.id),
                    details: detail,
                    occurred_at: now,
                },
            )
            .await?;
            current = next;
        }
        // A delegated action's budget reservation follows the outcome (see `reservation_after`).
        if let Some(r) = reservation_after(current) {
            fiscus_store::delegations::settle_reservation(&mut tx, &tenant, &action.id, r, now).await?;
        }
    }
    if !fiscus_store::settlement::finish(&mut tx, &job.id, worker, now).await? {
        anyhow::bail!("the claim was taken over; leaving the item to its new worker");
    }
    tx.commit().await?;
    Ok(())
}
