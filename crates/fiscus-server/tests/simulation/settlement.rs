//! Settlement in the simulation: the worker's claim (`fiscus_server::workers::settlement::run_once`) and
//! each item processed as `fiscus_actions::steps::settle::settle` processes it, in one transaction: the action
//! read for decision (an action no longer executing is only finished), the connector called inside the
//! transaction, the action moved by the state machine's own transitions (`transitions::next`), the sealed
//! settlement record, and `settlement::finish` guarding the claim (lost: everything rolled back). What
//! `settle` adds beyond the store (history, outbox, audit, a delegated budget) is left out.
//!
//! The connector is the outside world: it records every instruction it executed, with the action id the
//! real `Instruction` carries, so a bank can deduplicate on it.

use crate::world::{Broken, Fate, SEC, Sim, Work};
use fiscus_actions::rules::envelope::{Envelope, ExecutionMode, Origin, RiskTier};
use fiscus_actions::rules::settlement::{Reconciliation, SettlementKind};
use fiscus_actions::rules::transitions::{self, Event};
use fiscus_actions::tables::actions::{self, Action};
use fiscus_actions::tables::settlement::{self as items, Job, SettlementRecord};
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actions::ControlState;
use fiscus_domain::actor::Actor;
use fiscus_domain::ids::new_id;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::WriteTx;
use std::collections::BTreeMap;

/// The worker's stale time (`workers/settlement.rs`).
pub const STALE: i64 = 60 * SEC;

/// One instruction the connector executed.
#[derive(Clone, Debug)]
pub struct Call {
    pub worker: String,
    /// The transaction it was made in committed.
    pub committed: bool,
    /// It was made after the action's settlement had been committed.
    pub after_recorded: bool,
}

#[derive(Default)]
pub struct World {
    /// (tenant, action id) of the actions this seed put in execution.
    pub actions: Vec<(Tenant, String)>,
    pub calls: BTreeMap<String, Vec<Call>>,
    pub recorded: BTreeMap<String, bool>,
}

pub async fn enqueue(sim: &mut Sim<'_>, tx: &mut WriteTx, tenant: &Tenant, now: i64) {
    let id = new_id("act");
    let envelope = Envelope {
        kind: ActionKind::Payment,
        amount_minor: 125_000,
        currency: Currency::parse("EUR").expect("EUR"),
        counterparty: "cp_acme".into(),
        connector: "sandbox".into(),
        execution_mode: ExecutionMode::HumanApproved,
        delegation_id: None,
        risk_tier: RiskTier::T1,
        reference: format!("INV-{id}"),
        required_checks: vec![],
        metadata: serde_json::json!({}),
    };
    let envelope_hash = envelope.hash(&id, &tenant.workspace_id, tenant.environment.as_str()).expect("hash");
    let action = Action {
        id: id.clone(),
        environment: tenant.environment,
        envelope,
        envelope_hash,
        state: ControlState::Executing,
        origin: Origin::Application,
        proposed_by: Actor::application("app_sim"),
        created_at: now,
        updated_at: now,
    };
    actions::insert(tx, tenant, &action).await.expect("insert action");
    items::enqueue(tx, tenant, &id, "sandbox", now).await.expect("enqueue settlement");
    sim.settle.actions.push((tenant.clone(), id));
}

pub async fn claim(sim: &mut Sim<'_>, node: usize) {
    let claim =
        async |tx: &mut WriteTx, name: &str, now: i64, limit: i64| items::claim(tx, name, now, STALE, limit).await;
    for job in sim.claim(node, "settlement items", (1, 3), None, claim).await {
        sim.nodes[node].work.push(Work::Settle(job));
    }
}

/// Processes one claimed item (`workers/settlement.rs::process`); a failure leaves it claimed, to go stale.
pub async fn step(sim: &mut Sim<'_>, node: usize, job: Job) -> Option<Job> {
    let (name, now, fate) = (sim.name(node), sim.now(node), sim.fate(4));
    let after_commit = sim.cfg.broken == Broken::SettleEffectAfterCommit;
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "settling");
        return None;
    }
    let action = match actions::get_for_decision(&mut tx, &job.tenant, &job.action_id).await {
        Ok(a) => a,
        Err(e) => {
            sim.violation(format!("reading action {}: {e}", job.action_id));
            return None;
        }
    };
    if action.state != ControlState::Executing {
        let held = items::finish(&mut tx, &job.id, &name, now).await.expect("finish");
        let ended = sim.end(node, tx, fate, 4).await;
        sim.note(node, || format!("settle {}: already done (held {held}, {ended:?})", job.action_id));
        return None;
    }
    if fate.crashes_at(1) {
        drop(tx);
        sim.crash(node, "settling, before the connector");
        return None;
    }
    let call = if after_commit { None } else { Some(connector(sim, &job.action_id, &name)) };
    if fate == Fate::Timeout {
        drop(tx);
        sim.note(node, || format!("settle {}: failed after the connector acted; stays claimed", job.action_id));
        return None;
    }
    if fate.crashes_at(2) {
        drop(tx);
        sim.crash(node, "settling, after the connector");
        return None;
    }
    let mut current = action.state;
    for event in [Event::ConnectorSettled, Event::ReconciledMatch] {
        let next = transitions::next(current, event).expect("a settled payment's transitions");
        if let Err(e) = actions::transition(&mut tx, &job.tenant, &job.action_id, current, next, now).await {
            sim.violation(format!("moving {} to {next:?}: {e}", job.action_id));
            return None;
        }
        current = next;
    }
    let record = SettlementRecord {
        id: new_id("stl"),
        kind: SettlementKind::Settled,
        connector: "sandbox".into(),
        connector_reference: format!("bank-{}", job.action_id),
        reference: action.envelope.reference.clone(),
        amount_minor: action.envelope.amount_minor,
        currency: "EUR".into(),
        reconciliation: Reconciliation::Matched,
        mismatches: vec![],
        record_hash: "sha256:record".into(),
        processed_by: name.clone(),
        received_at: now,
    };
    if let Err(e) = items::insert_record(&mut tx, &job.tenant, &job.action_id, &record).await {
        sim.violation(format!("recording the settlement of {}: {e}", job.action_id));
        return None;
    }
    if fate.crashes_at(3) {
        drop(tx);
        sim.crash(node, "settling, before the claim check");
        return None;
    }
    if !items::finish(&mut tx, &job.id, &name, now).await.expect("finish") {
        sim.note(node, || format!("settle {}: claim lost, rolled back", job.action_id));
        return None;
    }
    let ended = sim.end(node, tx, fate, 4).await;
    sim.note(node, || format!("settles {} ({ended:?})", job.action_id));
    // The wrong variant: the bank is told only once the worker knows the settlement committed, so a crash
    // (or a lost answer) between the two loses the payment.
    if after_commit && ended.known {
        let i = connector(sim, &job.action_id, &name);
        sim.settle.calls.get_mut(&job.action_id).expect("its call")[i].committed = true;
    }
    if ended.committed {
        sim.settle.recorded.insert(job.action_id.clone(), true);
        if let Some(i) = call {
            sim.settle.calls.get_mut(&job.action_id).expect("its call")[i].committed = true;
        }
    }
    None
}

/// The connector executes an instruction for `action_id`; answers its index in the bank's log.
fn connector(sim: &mut Sim<'_>, action_id: &str, worker: &str) -> usize {
    let after_recorded = sim.settle.recorded.get(action_id).copied().unwrap_or(false);
    let calls = sim.settle.calls.entry(action_id.to_string()).or_default();
    calls.push(Call { worker: worker.to_string(), committed: false, after_recorded });
    calls.len() - 1
}
