//! Compute jobs in the simulation: the worker's claim (`fiscus_server::workers::compute::run_once`), and
//! each claimed job's life as `fiscus_models::compute::execute` lives it (heartbeats while computing, then
//! one transaction that ends the job with its sealed result).
//! The engine is the outside world here: a computation is counted, and its output is a function of the
//! job's request, as the real engine's is (the datasets it reads are immutable).

use crate::world::{Cap, SEC, Sim, Work};
use fiscus_domain::actor::Actor;
use fiscus_domain::compute::{JobKind, JobState};
use fiscus_domain::ids::new_id;
use fiscus_domain::tenancy::Tenant;
use fiscus_models::tables::compute::{self as jobs, Ending, Job, JobResult};
use fiscus_store::WriteTx;
use std::collections::BTreeMap;

/// `fiscus_models::compute::STALE_AFTER`.
pub const STALE: i64 = 30 * SEC;
/// Jobs running at once per workspace (the pool's `per_workspace`; small so that it binds).
pub const CAP: i64 = 1;

#[derive(Default)]
pub struct World {
    /// (tenant, job id) of the jobs this seed queued.
    pub jobs: Vec<(Tenant, String)>,
    /// Committed endings of each job, by worker.
    pub endings: BTreeMap<String, Vec<String>>,
    /// Computations the engine ran for each job (at least once; a retaken job is computed again).
    pub computed: BTreeMap<String, u32>,
}

/// A claimed job in a node's memory.
pub struct Running {
    job: Job,
    beats: u32,
    computed: bool,
}

/// What the engine answers for a request: the same output every time.
pub fn output_of(request_hash: &str) -> String {
    format!("{{\"of\":\"{request_hash}\"}}")
}

pub async fn queue(sim: &mut Sim<'_>, tx: &mut WriteTx, tenant: &Tenant, now: i64) {
    let id = new_id("cmp");
    let request_hash = format!("sha256:{id}");
    let by = Actor::application("app_sim");
    let job = jobs::NewJob {
        id: &id,
        kind: JobKind::Simulation,
        request: "{}",
        request_hash: &request_hash,
        engine_version: "sim",
        credits: 1,
        created_by: &by,
        created_at: now,
        project: None,
    };
    jobs::insert(tx, tenant, &job, JobState::Queued).await.expect("queue a compute job");
    sim.compute.jobs.push((tenant.clone(), id));
}

/// One claiming transaction for as many job threads as the node has free.
pub async fn claim(sim: &mut Sim<'_>, node: usize) {
    let cap = Cap { table: "compute_jobs", live: "state = 'running'", stale: STALE, cap: CAP };
    let claim =
        async |tx: &mut WriteTx, name: &str, now: i64, limit: i64| jobs::claim(tx, name, now, STALE, limit, CAP).await;
    for job in sim.claim(node, "compute jobs", (1, 2), Some(&cap), claim).await {
        let beats = sim.rng.below(3) as u32;
        sim.nodes[node].work.push(Work::Compute(Running { job, beats, computed: false }));
    }
}

/// One step of a claimed job: a heartbeat, the computation, or the ending transaction.
pub async fn step(sim: &mut Sim<'_>, node: usize, mut r: Running) -> Option<Running> {
    let (name, now) = (sim.name(node), sim.now(node));
    if r.beats > 0 {
        r.beats -= 1;
        if sim.faults && sim.rng.chance(100) {
            sim.note(node, || format!("heartbeat of {} times out", r.job.id));
            return Some(r);
        }
        let progress = 100 * i64::from(3 - r.beats.min(3));
        return match jobs::heartbeat(&mut sim.reads, &r.job.id, &name, progress, now).await {
            // The claim was retaken: the computation stops and nothing is written (`Stop::Abandoned`).
            Ok(None) => {
                sim.note(node, || format!("heartbeat: lost {}; abandons it", r.job.id));
                None
            }
            Ok(Some(_)) => Some(r),
            Err(e) => {
                sim.violation(format!("heartbeat failed: {e}"));
                Some(r)
            }
        };
    }
    if !r.computed {
        r.computed = true;
        *sim.compute.computed.entry(r.job.id.clone()).or_default() += 1;
        sim.note(node, || format!("computes {}", r.job.id));
        return Some(r);
    }
    let fate = sim.fate(2);
    let result = JobResult {
        id: new_id("cres"),
        job_id: r.job.id.clone(),
        output: output_of(&r.job.request_hash),
        output_hash: "sha256:out".into(),
        result_hash: format!("by:{name}"),
        created_at: now,
    };
    let mut tx = sim.begin().await;
    if fate.crashes_at(0) {
        drop(tx);
        sim.crash(node, "ending a compute job");
        return None;
    }
    let ending = Ending::Succeeded { result: &result };
    match jobs::finish(&mut tx, &r.job.tenant, &r.job.id, Some(&name), now, ending).await {
        Ok(true) => {}
        Ok(false) => {
            sim.note(node, || format!("finish {}: claim lost, nothing written", r.job.id));
            return None;
        }
        Err(e) => {
            sim.violation(format!("compute finish failed: {e}"));
            return None;
        }
    }
    if fate.crashes_at(1) {
        drop(tx);
        sim.crash(node, "ending a compute job, before commit");
        return None;
    }
    let ended = sim.end(node, tx, fate, 2).await;
    sim.note(node, || format!("finishes {} ({ended:?})", r.job.id));
    if ended.committed {
        sim.compute.endings.entry(r.job.id.clone()).or_default().push(name);
    }
    None
}
