//! Agent Space runs in the simulation: the worker's claim (`fiscus_server::workers::agent_runs::run_once`:
//! `spaces::claim`, stale after 60 s, capped per workspace) and each claimed run carried out as
//! `fiscus_agents::spaces::runs::execute` carries it out, one scheduler step for each thing it awaits:
//! - load: `runs::load` (`spaces::get_run`, `calls_of`); an ended run is left as it is;
//! - start: a queued run moved to `running` in a transaction of its own (`move_run` with its start; not moved:
//!   `execute` answers a conflict), then the run read again;
//! - call: the next planned call whose sequence number (its place in the plan, from 1) is not recorded, made
//!   (the tool is the outside world: it counts each call, and answers each planned call the same every time);
//! - record: `insert_call` in a transaction of its own; a `Conflict` (another worker recorded it first) reads
//!   the calls again, which is how a call never lands twice;
//! - end (`runs::end`): `move_run` from `running` to `completed` with the answer and the output hash over the
//!   calls' record hashes in order (its end lets go of the claim), then the run read again (not moved and
//!   not ended: a conflict).
//!
//! A step that fails (a database error, a lost commit answer) ends `execute` with an error: the worker
//! drops the run, whose claim stays until it is stale (there is no heartbeat), as `run_once` leaves it.
//! Left out: the application's authority read before each call (it stays active here) and the call's
//! dispatch through the service's routes (the tool answers at once).

use crate::check::RunEnd;
use crate::workflow_runs::record;
use crate::world::{Broken, Cap, SEC, Sim, Work};
use fiscus_agents::rules::spaces::records::{CallBody, RunBody, SpaceBody, VersionBody};
use fiscus_agents::rules::spaces::{AgentRunState, ModelSelection, PlannedCall, RunMode, library};
use fiscus_agents::tables::spaces::{self, Call, Claimed, Run};
use fiscus_domain::actor::Actor;
use fiscus_domain::evidence::{seal, seal_bytes};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::{CredentialKind, Tenant};
use fiscus_store::{StoreError, WriteTx};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// `workers/agent_runs.rs`' `STALE_SECONDS`.
pub const STALE: i64 = 60 * SEC;
/// Runs held at once per workspace (`runs_per_workspace`; 1 so that it binds).
pub const CAP: i64 = 1;

#[derive(Default)]
pub struct World {
    /// (tenant, run id, its plan) of the runs this seed queued.
    pub runs: Vec<(Tenant, String, Vec<PlannedCall>)>,
    /// Committed endings of each run, by worker.
    pub endings: BTreeMap<String, Vec<String>>,
    /// Calls the tool answered, by (run, sequence number).
    pub made: BTreeMap<(String, i64), u32>,
}

/// A claimed run in a node's memory, where `execute` is in it.
pub struct Executing {
    claimed: Claimed,
    /// Read by the load (`None`: load next).
    run: Option<Run>,
    recorded: Vec<Call>,
    /// A call made, to be recorded next.
    made: Option<Call>,
}

/// A space of `tenant` with its first version (in the store's shared set-up); answers their ids.
pub async fn install(tx: &mut WriteTx, tenant: &Tenant, now: i64) -> (String, String) {
    let by = Actor::application("app_sim");
    let body = SpaceBody { key: new_id("key").to_lowercase(), name: "Watch".into(), description: "Prices".into() };
    let space = record("asp", body, by.clone(), now);
    let body = VersionBody {
        space_id: space.id.clone(),
        version: 1,
        definition: library::find("market_watch").expect("shipped").definition(),
        definition_hash: "sha256:def".into(),
    };
    let version = record("asv", body, by, now);
    spaces::insert_space(tx, tenant, &space).await.expect("space");
    spaces::insert_version(tx, tenant, &version).await.expect("space version");
    (space.id, version.id)
}

/// A queued run of 2 or 3 planned calls (`runs::start` on the queue: `insert_run` queued, due at once).
pub async fn queue(sim: &mut Sim<'_>, tx: &mut WriteTx, tenant: &Tenant, space: &(String, String), now: i64) {
    let calls = sim.rng.between(2, 3);
    let plan: Vec<PlannedCall> = (1..=calls)
        .map(|i| {
            let mut arguments = Map::new();
            arguments.insert("uid".into(), Value::String(format!("TICK{i}")));
            PlannedCall { rule: format!("rule{i}"), tool: "get_data_instruments_uid_prices".into(), arguments }
        })
        .collect();
    let body = RunBody {
        space_id: space.0.clone(),
        version_id: space.1.clone(),
        definition_hash: "sha256:def".into(),
        execution_id: new_id("aex"),
        prompt: "How did they move?".into(),
        prompt_hash: "sha256:prompt".into(),
        execution_mode: RunMode::Async,
        model_selection: ModelSelection::AutoNative,
        queued: true,
        plan: plan.clone(),
        application_id: "app_sim".into(),
        credential_id: "key_sim".into(),
        credential_kind: CredentialKind::ApiKey,
        service_class: "standard".into(),
        scopes: vec!["data:read".into()],
        credits: 1,
    };
    let run = record("arn", body, Actor::application("app_sim"), now);
    spaces::insert_run(tx, tenant, &run, AgentRunState::Queued).await.expect("queue an agent run");
    sim.agents.runs.push((tenant.clone(), run.id, plan));
}

/// What the tool answers to a planned call: the same every time.
pub fn response_of(run_id: &str, planned: &PlannedCall) -> String {
    json!({ "object": "list", "data": [planned.rule, run_id] }).to_string()
}

/// `runs::end`'s output hash: over the calls' record hashes, in order.
pub fn output_hash(hashes: &[&str]) -> String {
    seal(&json!(hashes)).expect("output hash")
}

/// One claiming transaction (`run_once`'s).
pub async fn claim(sim: &mut Sim<'_>, node: usize) {
    let cap = Cap { table: spaces::AGENT_RUNS.table, live: "claimed_by IS NOT NULL", stale: STALE, cap: CAP };
    let claim = async |tx: &mut WriteTx, name: &str, now: i64, limit: i64| {
        spaces::claim(tx, name, now, STALE, limit, CAP).await
    };
    for claimed in sim.claim(node, "agent runs", (1, 2), Some(&cap), claim).await {
        let executing = Executing { claimed, run: None, recorded: Vec::new(), made: None };
        sim.nodes[node].work.push(Work::Execute(Box::new(executing)));
    }
}

/// One step of `execute`; `None` when it is over (the run ended, or a step failed).
pub async fn step(sim: &mut Sim<'_>, node: usize, mut e: Executing) -> Option<Executing> {
    let key = sim.store.seal_key();
    let (tenant, run_id) = (e.claimed.tenant.clone(), e.claimed.run_id.clone());
    let Some(run) = &e.run else {
        let run = spaces::get_run(&mut sim.reads, key, &tenant, &run_id).await.expect("the run");
        e.recorded = spaces::calls_of(&mut sim.reads, key, &tenant, &run_id).await.expect("its calls");
        if run.state.is_ended() {
            sim.note(node, || format!("{run_id} ended already"));
            return None;
        }
        e.run = Some(run);
        return Some(e);
    };
    if run.state == AgentRunState::Queued {
        return start(sim, node, e).await;
    }
    if let Some(call) = e.made.take() {
        return record_call(sim, node, e, call).await;
    }
    let plan = &run.record.body.plan;
    let next = if sim.cfg.broken == Broken::CallAfterLastRecorded {
        // The wrong variant: it resumes after the calls it knows of and numbers a call after the last one
        // recorded when it records it, not by the call's place in the plan.
        plan.get(e.recorded.len()).map(|p| (e.recorded.len() as i64 + 1, p))
    } else {
        plan.iter()
            .enumerate()
            .map(|(i, p)| (i as i64 + 1, p))
            .find(|(seq, _)| !e.recorded.iter().any(|c| c.body.seq == *seq))
    };
    let Some((seq, planned)) = next else {
        return end(sim, node, e).await;
    };
    let text = response_of(&run_id, planned);
    *sim.agents.made.entry((run_id.clone(), seq)).or_default() += 1;
    sim.note(node, || format!("calls {} for {run_id} #{seq}", planned.rule));
    let body = CallBody {
        run_id: run_id.clone(),
        seq,
        rule: planned.rule.clone(),
        tool: planned.tool.clone(),
        arguments: planned.arguments.clone(),
        request_hash: seal(&Value::Object(planned.arguments.clone())).expect("request hash"),
        status: 200,
        response: serde_json::from_str(&text).expect("json"),
        response_hash: seal_bytes(text.as_bytes()),
    };
    e.made = Some(record("acl", body, Actor::runtime("auto_native"), sim.now(node)));
    Some(e)
}

/// A queued run moved to `running`, then read again.
async fn start(sim: &mut Sim<'_>, node: usize, mut e: Executing) -> Option<Executing> {
    let (now, fate) = (sim.now(node), sim.fate(1));
    let (tenant, run_id) = (&e.claimed.tenant, e.claimed.run_id.as_str());
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "starting an agent run");
        return None;
    }
    let (from, to) = (AgentRunState::Queued, AgentRunState::Running);
    let moved = spaces::move_run(&mut tx, tenant, run_id, from, to, Some(now), None).await.expect("start");
    let ended = sim.end(node, tx, fate, 1).await;
    sim.note(node, || format!("starts {run_id}: moved {moved} ({ended:?})"));
    if !ended.known || !moved {
        return None;
    }
    let run = spaces::get_run(&mut sim.reads, sim.store.seal_key(), tenant, run_id).await.expect("the run");
    e.run = Some(run);
    Some(e)
}

/// A call made, recorded in a transaction of its own.
async fn record_call(sim: &mut Sim<'_>, node: usize, mut e: Executing, mut call: Call) -> Option<Executing> {
    let fate = sim.fate(1);
    let (tenant, run_id) = (e.claimed.tenant.clone(), e.claimed.run_id.clone());
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "recording an agent run's call");
        return None;
    }
    if sim.cfg.broken == Broken::CallAfterLastRecorded {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM agent_run_calls WHERE run_id = $1")
            .bind(&run_id)
            .fetch_one(tx.conn())
            .await
            .expect("count calls");
        call.body.seq = n + 1;
        call = record("acl", call.body, call.created_by, call.created_at);
    }
    match spaces::insert_call(&mut tx, &tenant, &call).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            drop(tx);
            sim.note(node, || format!("call #{} of {run_id} recorded already: reads the calls", call.body.seq));
            let key = sim.store.seal_key();
            e.recorded = spaces::calls_of(&mut sim.reads, key, &tenant, &run_id).await.expect("its calls");
            return Some(e);
        }
        Err(other) => {
            sim.violation(format!("recording call #{} of {run_id}: {other}", call.body.seq));
            return None;
        }
    }
    let ended = sim.end(node, tx, fate, 1).await;
    sim.note(node, || format!("records call #{} of {run_id} ({ended:?})", call.body.seq));
    if !ended.known {
        return None;
    }
    e.recorded.push(call);
    Some(e)
}

/// `runs::end`: the run ended `completed` (every call answered 200) with its answer and output hash.
async fn end(sim: &mut Sim<'_>, node: usize, e: Executing) -> Option<Executing> {
    let (name, now, fate) = (sim.name(node), sim.now(node), sim.fate(1));
    let (tenant, run_id) = (&e.claimed.tenant, e.claimed.run_id.as_str());
    let tools: Vec<String> = e.recorded.iter().map(|c| format!("{} ({})", c.body.tool, c.body.status)).collect();
    let answer = format!("Called {} tool(s): {}.", e.recorded.len(), tools.join(", "));
    let hashes: Vec<&str> = e.recorded.iter().map(|c| c.content_hash.as_str()).collect();
    let output = output_hash(&hashes);
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "ending an agent run");
        return None;
    }
    let (from, to) = (AgentRunState::Running, AgentRunState::Completed);
    let moved =
        spaces::move_run(&mut tx, tenant, run_id, from, to, None, Some((&answer, &output, now))).await.expect("end");
    let ended = sim.end(node, tx, fate, 1).await;
    sim.note(node, || format!("ends {run_id}: moved {moved} ({ended:?})"));
    if moved && ended.committed {
        sim.agents.endings.entry(run_id.to_string()).or_default().push(name);
    }
    None
}

/// Each run of this seed as it ended, with what its calls must be.
pub async fn ends(sim: &mut Sim<'_>) -> Vec<RunEnd> {
    let key = sim.store.seal_key();
    let mut out = Vec::new();
    for (tenant, id, plan) in &sim.agents.runs {
        let run = spaces::get_run(&mut sim.reads, key, tenant, id).await.expect("run");
        let calls = spaces::calls_of(&mut sim.reads, key, tenant, id).await.expect("calls");
        let (claimed_by, due_at): (Option<String>, Option<i64>) =
            sqlx::query_as("SELECT claimed_by, due_at FROM agent_runs WHERE id = $1")
                .bind(id)
                .fetch_one(&mut *sim.reads)
                .await
                .expect("claim");
        let hashes: Vec<&str> = calls.iter().map(|c| c.content_hash.as_str()).collect();
        let made = &sim.agents.made;
        out.push(RunEnd {
            kind: "agent run",
            id: id.clone(),
            state: run.state.as_str().to_string(),
            claimed_by,
            due_at,
            digest: run.output_hash,
            digest_of_recorded: output_hash(&hashes),
            recorded: calls.iter().map(|c| (c.body.seq, format!("{} {}", c.body.rule, c.body.response))).collect(),
            expected: plan
                .iter()
                .enumerate()
                .map(|(i, p)| (i as i64 + 1, format!("{} {}", p.rule, response_of(id, p))))
                .collect(),
            unmade: calls
                .iter()
                .filter(|c| !made.contains_key(&(id.clone(), c.body.seq)))
                .map(|c| c.body.seq)
                .collect(),
            endings: sim.agents.endings.get(id).cloned().unwrap_or_default(),
        });
    }
    out
}
