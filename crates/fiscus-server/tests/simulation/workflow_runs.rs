//! Workflow runs in the simulation: the worker's claim (`fiscus_server::workers::workflows::run_once`:
//! `workflows::claim`, stale after 30 s, capped per workspace) and each claimed run advanced as
//! `fiscus_agents::workflows::runtime::advance` advances it, one `step_once` pass after another until the
//! run waits or ends. A pass is two scheduler steps, split where production awaits the outside world:
//! - load (`step_once` up to the step's computation): `runs::load` (`workflows::get_run`, `steps_of`), then
//!   `runs::plan` (the domain's `run::plan` over the recorded history) and, for a step to run, its
//!   computation (the outside world: counted, its output a function of the run and the step, as a real step's
//!   is of its recorded inputs);
//! - write (`step_once`'s one transaction): a run ended already, `release`; the plan ended, `runs::end`
//!   (`move_run` to `completed` with the evidence hash of the history loaded) and `release`; a wait step not
//!   yet waiting, `move_run` to `waiting` due when its timer elapses, and `release`; otherwise `insert_step`
//!   numbered after the history loaded (a `Conflict`: another worker recorded it first, plan again) and, from
//!   any state but `running`, `move_run` to `running` (lost: nothing is written, plan again).
//!
//! A pass that fails (a database error, a lost commit answer) ends `advance` with an error: the worker
//! drops the run and its claim stays until it is stale, as `run_once` leaves it. Left out: the version's
//! read (immutable, kept in memory) and the invoking application's authority read at each step (it stays
//! active here), and the events `record_workflow` writes (the webhook kind covers the outbox).

use crate::check::RunEnd;
use crate::world::{Cap, SEC, Sim, Work};
use fiscus_agents::rules::workflows::definition::{Definition, Step as Planned};
use fiscus_agents::rules::workflows::records::{InputPin, RunBody, StepBody, VersionBody, WorkflowBody};
use fiscus_agents::rules::workflows::run::{Next, RunState, StepOutcome, plan};
use fiscus_agents::tables::workflows::{self as flows, Claimed, Run, Step};
use fiscus_domain::actor::Actor;
use fiscus_domain::evidence::seal;
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::WriteTx;
use fiscus_store::sealed_records::Record;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// `workers/workflows.rs`' `STALE_SECONDS`.
pub const STALE: i64 = 30 * SEC;
/// Runs held at once per workspace (`runs_per_workspace`; 1 so that it binds).
pub const CAP: i64 = 1;
/// A wait step's timer: short enough to elapse within the faulty phase now and then.
const WAIT_SECONDS: u32 = 5;

/// A workspace's workflow with its two versions, made once a store.
pub struct Installed {
    pub workflow_id: String,
    /// (version id, its definition): a read and a report, then a wait and a report.
    pub versions: Vec<(String, Definition)>,
}

#[derive(Default)]
pub struct World {
    /// (tenant, run id, its definition) of the runs this seed queued.
    pub runs: Vec<(Tenant, String, Definition)>,
    /// Committed endings of each run, by worker.
    pub endings: BTreeMap<String, Vec<String>>,
    /// Computations of each (run, step id) the outside world ran.
    pub computed: BTreeMap<(String, String), u32>,
}

/// A claimed run in a node's memory: what its last load planned for the next write, if anything.
pub struct Advancing {
    claimed: Claimed,
    definition: Definition,
    next: Option<Write>,
}

/// What `step_once` writes after its load.
enum Write {
    Release,
    End { run: Run, evidence: String },
    Wait { from: RunState, seconds: u32 },
    Record { from: RunState, step: Step },
}

/// A record as `fiscus_kernel::governed::new_record` makes it.
pub fn record<B: serde::Serialize>(prefix: &str, body: B, by: Actor, at: i64) -> Record<B> {
    let body_json = serde_json::to_string(&body).expect("json");
    let content_hash = fiscus_domain::evidence::seal_bytes(body_json.as_bytes());
    Record { id: new_id(prefix), body, body_json, content_hash, created_by: by, created_at: at }
}

/// Two steps: a read of pinned prices (the outside world here, as a computation) and a report of it, or a
/// wait (a durable timer: the run leaves the queue until it elapses, its claim let go) and a report.
fn definition(waits: bool) -> Definition {
    let first = if waits {
        json!({"kind": "wait", "id": "settle", "seconds": WAIT_SECONDS})
    } else {
        json!({"kind": "read_prices", "id": "prices", "instrument": "SPY", "observations": 20})
    };
    let id = first["id"].clone();
    let last = json!({"kind": "report", "id": "final", "after": [id], "title": "Final", "include": [id]});
    serde_json::from_value(json!({ "steps": [first, last] })).expect("definition")
}

/// A workflow of `tenant` with its two versions (in the store's shared set-up).
pub async fn install(tx: &mut WriteTx, tenant: &Tenant, now: i64) -> Installed {
    let by = Actor::application("app_sim");
    let body = WorkflowBody { name: new_id("name"), description: None, library: None };
    let w = record("wfl", body, by.clone(), now);
    let mut versions = Vec::new();
    for (n, waits) in [(1, false), (2, true)] {
        let definition = definition(waits);
        let body = VersionBody {
            workflow_id: w.id.clone(),
            version: n,
            definition: definition.clone(),
            definition_hash: format!("sha256:def{n}"),
            library: None,
        };
        let v = record("wfv", body, by.clone(), now);
        if n == 1 {
            flows::insert_workflow(tx, tenant, &w, &v).await.expect("workflow");
        } else {
            flows::insert_version(tx, tenant, &v).await.expect("version");
        }
        versions.push((v.id, definition));
    }
    Installed { workflow_id: w.id, versions }
}

/// A run of `installed` queued in the seed's set-up (`workflows::insert_run`: queued, due at once).
pub async fn queue(sim: &mut Sim<'_>, tx: &mut WriteTx, tenant: &Tenant, installed: &Installed, now: i64) {
    let (version_id, definition) = installed.versions[sim.rng.below(2) as usize].clone();
    let body = RunBody {
        workflow_id: installed.workflow_id.clone(),
        version_id,
        definition_hash: "sha256:def".into(),
        // The read step's data, pinned when the run is asked for (`runs::start`).
        pins: definition
            .steps
            .iter()
            .filter(|s| matches!(s, Planned::ReadPrices(_)))
            .map(|s| InputPin {
                step: s.id().to_string(),
                source: "SPY".into(),
                dataset: 1,
                content_hash: "sha256:ds1".into(),
            })
            .collect(),
    };
    let run = record("wfr", body, Actor::application("app_sim"), now);
    flows::insert_run(tx, tenant, &run).await.expect("queue a workflow run");
    sim.flows.runs.push((tenant.clone(), run.id, definition));
}

/// What the outside world computes for a step of a run: the same every time.
pub fn output_of(run_id: &str, step: &str) -> Value {
    json!({ "step": step, "of": run_id })
}

/// `runs::evidence_of`: over the recorded steps' ids and output hashes, in order.
pub fn evidence_of(steps: &[(String, String)]) -> String {
    seal(&json!(steps)).expect("evidence")
}

/// One claiming transaction (`run_once`'s).
pub async fn claim(sim: &mut Sim<'_>, node: usize) {
    let cap = Cap { table: flows::WORKFLOW_RUNS.table, live: "claimed_by IS NOT NULL", stale: STALE, cap: CAP };
    let claim =
        async |tx: &mut WriteTx, name: &str, now: i64, limit: i64| flows::claim(tx, name, now, STALE, limit, CAP).await;
    for claimed in sim.claim(node, "workflow runs", (1, 2), Some(&cap), claim).await {
        let definition = sim.flows.runs.iter().find(|r| r.1 == claimed.run_id).expect("a run of this seed").2.clone();
        sim.nodes[node].work.push(Work::Advance(Box::new(Advancing { claimed, definition, next: None })));
    }
}

/// One half of a `step_once` pass; `None` when `advance` is over (the run waits, ended, or the pass failed).
pub async fn step(sim: &mut Sim<'_>, node: usize, mut a: Advancing) -> Option<Advancing> {
    match a.next.take() {
        None => {
            a.next = Some(load(sim, node, &a).await);
            Some(a)
        }
        Some(write) => {
            if self::write(sim, node, &a, write).await {
                Some(a)
            } else {
                None
            }
        }
    }
}

/// `step_once` up to its transaction: load, plan, and the step's computation.
async fn load(sim: &mut Sim<'_>, node: usize, a: &Advancing) -> Write {
    let (tenant, run_id) = (&a.claimed.tenant, &a.claimed.run_id);
    let key = sim.store.seal_key();
    let run = flows::get_run(&mut sim.reads, key, tenant, run_id).await.expect("the run");
    let recorded = flows::steps_of(&mut sim.reads, key, tenant, run_id).await.expect("its steps");
    if run.state.is_ended() || run.state == RunState::AwaitingReview {
        return Write::Release;
    }
    let history: HashMap<String, StepOutcome> =
        recorded.iter().map(|s| (s.body.step.clone(), s.body.outcome)).collect();
    let i = match plan(&a.definition, &history) {
        Next::Run(i) => i,
        Next::Complete => {
            let pairs: Vec<(String, String)> =
                recorded.iter().map(|s| (s.body.step.clone(), s.body.output_hash.clone())).collect();
            return Write::End { run, evidence: evidence_of(&pairs) };
        }
        other => panic!("run {run_id}: every step of the simulation completes, planned {other:?}"),
    };
    let planned = &a.definition.steps[i];
    let output = match planned {
        Planned::Wait(w) if run.state != RunState::Waiting => {
            return Write::Wait { from: run.state, seconds: w.seconds };
        }
        Planned::Wait(w) => json!({ "seconds": w.seconds }),
        _ => {
            *sim.flows.computed.entry((run_id.clone(), planned.id().to_string())).or_default() += 1;
            sim.note(node, || format!("computes {} of {run_id}", planned.id()));
            output_of(run_id, planned.id())
        }
    };
    let body = StepBody {
        run_id: run_id.clone(),
        step: planned.id().to_string(),
        kind: planned.kind(),
        seq: recorded.len() as i64,
        output_hash: seal(&output).expect("output hash"),
        outcome: StepOutcome::Completed,
        output,
    };
    let step = record("wrs", body, Actor::worker(sim.name(node)), sim.now(node));
    Write::Record { from: run.state, step }
}

/// `step_once`'s transaction; `true` when the run has more to do now (`step_once` answered `Ok(true)`).
async fn write(sim: &mut Sim<'_>, node: usize, a: &Advancing, write: Write) -> bool {
    let (name, now, fate) = (sim.name(node), sim.now(node), sim.fate(2));
    let (tenant, run_id) = (&a.claimed.tenant, a.claimed.run_id.as_str());
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "advancing a workflow run");
        return false;
    }
    let (more, ended_by) = match write {
        Write::Release => (false, false),
        Write::End { run, evidence } => {
            let moved =
                flows::move_run(&mut tx, tenant, run_id, run.state, RunState::Completed, Some((&evidence, now)), None)
                    .await
                    .expect("end the run");
            (false, moved)
        }
        Write::Wait { from, seconds } => {
            let due = now + i64::from(seconds) * SEC;
            flows::move_run(&mut tx, tenant, run_id, from, RunState::Waiting, None, Some(due)).await.expect("wait");
            (false, false)
        }
        Write::Record { from, step } => {
            match flows::insert_step(&mut tx, tenant, &step).await {
                Err(StoreError::Conflict(_)) => {
                    sim.note(node, || format!("step {} of {run_id} recorded already: plans again", step.body.seq));
                    return true;
                }
                other => other.expect("record a step"),
            }
            if from != RunState::Running
                && !flows::move_run(&mut tx, tenant, run_id, from, RunState::Running, None, Some(now))
                    .await
                    .expect("move to running")
            {
                sim.note(node, || format!("{run_id} moved meanwhile: plans again"));
                return true;
            }
            sim.note(node, || format!("records step {} ({}) of {run_id}", step.body.seq, step.body.step));
            (true, false)
        }
    };
    if !more {
        flows::release(&mut tx, run_id, &name).await.expect("release");
    }
    if fate.crashes_at(1) {
        drop(tx);
        sim.crash(node, "advancing a workflow run, before commit");
        return false;
    }
    let ended = sim.end(node, tx, fate, 2).await;
    if ended_by && ended.committed {
        sim.flows.endings.entry(run_id.to_string()).or_default().push(name);
    }
    sim.note(node, || format!("  {run_id}: more {more}, ended it {ended_by} ({ended:?})"));
    more && ended.known
}

/// Each run of this seed as it ended, with what its steps must be.
pub async fn ends(sim: &mut Sim<'_>) -> Vec<RunEnd> {
    let key = sim.store.seal_key();
    let mut out = Vec::new();
    for (tenant, id, definition) in &sim.flows.runs {
        let run = flows::get_run(&mut sim.reads, key, tenant, id).await.expect("run");
        let steps = flows::steps_of(&mut sim.reads, key, tenant, id).await.expect("steps");
        let (claimed_by, due_at): (Option<String>, Option<i64>) =
            sqlx::query_as("SELECT claimed_by, due_at FROM workflow_runs WHERE id = $1")
                .bind(id)
                .fetch_one(&mut *sim.reads)
                .await
                .expect("claim");
        let pairs: Vec<(String, String)> =
            steps.iter().map(|s| (s.body.step.clone(), s.body.output_hash.clone())).collect();
        let expected = definition
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let output = match s {
                    Planned::Wait(w) => json!({ "seconds": w.seconds }),
                    _ => output_of(id, s.id()),
                };
                (i as i64, format!("{} {output}", s.id()))
            })
            .collect();
        let computed = &sim.flows.computed;
        out.push(RunEnd {
            kind: "workflow run",
            id: id.clone(),
            state: run.state.as_str().to_string(),
            claimed_by,
            due_at,
            digest: run.evidence_hash,
            digest_of_recorded: evidence_of(&pairs),
            recorded: steps.iter().map(|s| (s.body.seq, format!("{} {}", s.body.step, s.body.output))).collect(),
            expected,
            unmade: steps
                .iter()
                .filter(|s| s.body.step != "settle" && !computed.contains_key(&(id.clone(), s.body.step.clone())))
                .map(|s| s.body.seq)
                .collect(),
            endings: sim.flows.endings.get(id).cloned().unwrap_or_default(),
        });
    }
    out
}
