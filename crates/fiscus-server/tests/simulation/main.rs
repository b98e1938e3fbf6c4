//! Deterministic simulation of the workers' claims and retries (issue 35): compute jobs, settlement items,
//! webhook deliveries, workflow runs and Agent Space runs (one run a seed, of either kind), run by the
//! store's real claim, heartbeat, finish, record, step, call and hand-back statements on a real SQLite
//! store, by simulated nodes whose steps a seeded scheduler interleaves, with crashes, database errors,
//! lost answers, timeouts, clock jumps and nodes stopping on purpose injected; after the faults stop and
//! the nodes quiesce, the invariants of each kind are checked (`check`).
//!
//! `FISCUS_SIM_SEEDS=n` runs seeds 0..n (default 10,000); `FISCUS_SIM_SEED=k` runs seed k alone and prints
//! its schedule. A failing seed is named in the panic with the command that replays it. What a seed costs
//! is round trips to SQLite's connection thread (two thread switches each, and on a loaded machine a wait
//! for a core each): about 30 transactions and 100 statements before runs were added, which added
//! 15-20 % of CPU (a claim, a transaction per step or call, the start and the end, a few reads); 22-24 ms
//! of wall time with the machine's load average at 5-7. The summary line gives the time of each phase.
//! The two halves may take up to five minutes each (`.config/nextest.toml`); 10,000 seeds took two. The
//! suite's PostgreSQL run leaves the seeded halves out: the simulation runs on its own SQLite store
//! whatever the suite's database, so a second run would repeat the first (`FISCUS_SIM_SEEDS` set runs them
//! anyway).

mod agent_runs;
mod check;
mod compute;
mod quiesce;
mod rng;
mod settlement;
mod webhooks;
mod workflow_runs;
mod world;

use fiscus_domain::credentials::Environment;
use fiscus_domain::ids::new_id;
use fiscus_domain::integrity::SealKey;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, workspaces};
use std::time::{Duration, Instant};
use world::{Broken, Config, SEC, Sim};

/// Where the simulated clock of a fresh store starts.
const EPOCH: i64 = 1_790_000_000_000_000;

/// A migrated store on a file in memory when the machine has one (`/dev/shm`): a commit's fsync is what a
/// seed would otherwise spend its time on, and durability is not what is simulated. Group commit stays on,
/// as in production (a dropped transaction is rolled back by the lane), and is the faster here too.
async fn open() -> (Store, tempfile::TempDir) {
    let dir = tempfile::Builder::new()
        .prefix("fiscus-sim")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("sim.db").display());
    let store = Store::connect(&url, 4, SealKey::derive(b"fiscus-simulation")).await.expect("connect");
    store.migrate().await.expect("migrate");
    (store, dir)
}

/// What one seed left: its violations and schedule.
struct Outcome {
    violations: Vec<String>,
    log: Vec<String>,
    steps: u64,
    end: i64,
    /// Time spent setting up, in the faulty phase, quiescing and checking.
    phases: [Duration; 4],
}

/// Workspaces a store's seeds share, each with an application and an active endpoint hearing every event, a
/// workflow with its versions and an Agent Space with its version:
/// made once a store, as a seed's own cost five round trips a workspace (a fifth of a seed's time). A seed
/// has work only in the workspaces it picks and events only for the endpoints it puts in play, and every
/// seed leaves all of its work done, so a workspace's earlier seeds hold none of its claims or caps.
struct Shared {
    /// Each workspace, its endpoint and the endpoint's application.
    workspaces: Vec<(Tenant, String, String)>,
    /// Each workspace's workflow and its versions, and its space and the space's version.
    runnables: Vec<(workflow_runs::Installed, (String, String))>,
}

/// Workspaces at most in one seed.
const WORKSPACES: usize = 3;

async fn shared(store: &Store, t: i64) -> Shared {
    let mut tx = store.begin().await.expect("begin");
    let (mut workspaces, mut runnables) = (Vec::new(), Vec::new());
    for _ in 0..WORKSPACES {
        let workspace_id = new_id("wsp");
        let ws = workspaces::NewWorkspace {
            id: &workspace_id,
            name: "Simulated",
            entitlement: &ScopeSet::all(),
            is_demo: false,
            created_at: t,
        };
        workspaces::insert(&mut tx, &ws).await.expect("workspace");
        let tenant = Tenant { workspace_id, environment: Environment::Sandbox };
        let (endpoint, application) = webhooks::endpoint(&mut tx, &tenant, t - 10).await;
        let workflow = workflow_runs::install(&mut tx, &tenant, t - 10).await;
        let space = agent_runs::install(&mut tx, &tenant, t - 10).await;
        runnables.push((workflow, space));
        workspaces.push((tenant, endpoint, application));
    }
    tx.commit().await.expect("commit the shared workspaces");
    Shared { workspaces, runnables }
}

/// Runs one seed on `store` from time `t`: work of each kind queued in the shared workspaces it picks, the
/// faulty phase, quiescence, the invariants.
async fn run_seed(store: &Store, shared: &Shared, cfg: Config, t: i64) -> Outcome {
    let started = Instant::now();
    let reads = store.read().await.expect("read connection");
    let mut sim = Sim::new(store, reads, cfg, t);
    let mut tx = store.begin().await.expect("begin");
    let count = sim.rng.between(2, WORKSPACES as i64) as usize;
    for (tenant, endpoint, application) in &shared.workspaces[..count] {
        for _ in 0..sim.rng.between(0, 2) {
            compute::queue(&mut sim, &mut tx, tenant, t).await;
        }
        for _ in 0..sim.rng.between(0, 2) {
            settlement::enqueue(&mut sim, &mut tx, tenant, t).await;
        }
        if sim.rng.chance(700) {
            sim.hooks.endpoints.insert(endpoint.clone(), Vec::new());
            sim.hooks.owners.insert(endpoint.clone(), (tenant.clone(), application.clone()));
        }
    }
    // One run, a workflow's or an Agent Space's, in a workspace of the seed's: a run costs a handful of
    // transactions (a fifth of a seed), and the two kinds share their claim (`run_claims`).
    let at = sim.rng.below(count as u64) as usize;
    let (tenant, (workflow, space)) = (&shared.workspaces[at].0, &shared.runnables[at]);
    if sim.rng.chance(500) {
        workflow_runs::queue(&mut sim, &mut tx, tenant, workflow, t).await;
    } else {
        agent_runs::queue(&mut sim, &mut tx, tenant, space, t).await;
    }
    let endpoints: Vec<String> = sim.hooks.endpoints.keys().cloned().collect();
    for endpoint in &endpoints {
        for _ in 0..sim.rng.between(1, 3) {
            webhooks::event(&mut sim, &mut tx, endpoint, t).await;
        }
    }
    tx.commit().await.expect("commit the seed's work");
    let set_up = Instant::now();
    let steps = sim.rng.between(20, 70) as u32;
    sim.run(steps).await;
    let ran = Instant::now();
    if !sim.quiesce().await {
        sim.violation("the nodes did not finish the work once the faults stopped".into());
    }
    let quiesced = Instant::now();
    check(&mut sim).await;
    let phases = [set_up - started, ran - set_up, quiesced - ran, quiesced.elapsed()];
    Outcome { violations: sim.violations, log: sim.log, steps: sim.steps, end: sim.t, phases }
}

/// Reads what the run left and checks every kind's invariants.
async fn check(sim: &mut Sim<'_>) {
    let conn = &mut sim.reads;
    let mut jobs = Vec::new();
    for (_, id) in &sim.compute.jobs {
        let (state, claimed_by, request_hash): (String, Option<String>, String) =
            sqlx::query_as("SELECT state, claimed_by, request_hash FROM compute_jobs WHERE id = $1")
                .bind(id)
                .fetch_one(&mut **conn)
                .await
                .expect("job");
        let results: Vec<(String,)> = sqlx::query_as("SELECT output FROM compute_results WHERE job_id = $1")
            .bind(id)
            .fetch_all(&mut **conn)
            .await
            .expect("results");
        jobs.push(check::JobEnd {
            id: id.clone(),
            state,
            claimed_by,
            results: results.into_iter().map(|(o,)| o).collect(),
            expected: compute::output_of(&request_hash),
            endings: sim.compute.endings.get(id).cloned().unwrap_or_default(),
            computed: sim.compute.computed.get(id).copied().unwrap_or(0),
        });
    }
    let mut items = Vec::new();
    for (_, action_id) in &sim.settle.actions {
        let (item_state, action_state, records): (String, String, i64) = sqlx::query_as(
            "SELECT j.state, a.control_state, (SELECT COUNT(*) FROM settlement_records r WHERE r.action_id = a.id) \
             FROM settlement_jobs j JOIN actions a ON a.id = j.action_id WHERE j.action_id = $1",
        )
        .bind(action_id)
        .fetch_one(&mut **conn)
        .await
        .expect("item");
        items.push(check::ItemEnd {
            action_id: action_id.clone(),
            item_state,
            action_state,
            records: records as usize,
            calls: sim.settle.calls.get(action_id).cloned().unwrap_or_default(),
        });
    }
    let mut endpoints = Vec::new();
    for (id, events) in &sim.hooks.endpoints {
        // The endpoint is shared with the store's other seeds: only this seed's events are its.
        let mut events = events.clone();
        events.sort();
        let binds: Vec<String> = (2..events.len() + 2).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT event_id, state FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id IN ({}) \
             ORDER BY event_id",
            binds.join(", ")
        );
        let mut query = sqlx::query_as(&sql).bind(id);
        for event in &events {
            query = query.bind(event);
        }
        let delivery_states: Vec<(String, String)> = query.fetch_all(&mut **conn).await.expect("deliveries");
        let claimed: Option<(Option<String>,)> =
            sqlx::query_as("SELECT claimed_by FROM webhook_queues WHERE endpoint_id = $1")
                .bind(id)
                .fetch_optional(&mut **conn)
                .await
                .expect("queue");
        endpoints.push(check::EndpointEnd {
            id: id.clone(),
            events,
            received: sim.hooks.received.get(id).cloned().unwrap_or_default(),
            delivery_states,
            claimed_by: claimed.and_then(|(c,)| c),
        });
    }
    let mut runs = workflow_runs::ends(sim).await;
    runs.extend(agent_runs::ends(sim).await);
    let found = check::compute(&jobs)
        .into_iter()
        .chain(check::settlement(&items))
        .chain(check::webhooks(&endpoints))
        .chain(check::runs(&runs));
    for v in found.collect::<Vec<_>>() {
        sim.violation(v);
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.trim().parse().unwrap_or_else(|_| panic!("{name} must be a number")))
}

/// Seeds run on one store before a fresh one is opened: some of the claims' statements (the fair pick's
/// count of live claims per workspace, the fan-out's subscribers) read more rows the more earlier seeds
/// left, which made a seed three times slower after 1,500 of them; opening and migrating a store costs
/// about 300 ms, under a millisecond a seed at this size.
const SEEDS_PER_STORE: u64 = 500;

/// Runs `seeds` one after another (each leaves its store quiet), [`SEEDS_PER_STORE`] to a store; answers the
/// first failing seed with its outcome, how many seeds and steps ran, and the time each phase took.
async fn run_many(
    seeds: impl Iterator<Item = u64>,
    broken: Broken,
    verbose: bool,
) -> (Option<(u64, Outcome)>, u64, u64, [Duration; 4]) {
    let mut opened = None;
    let mut t = EPOCH;
    let mut common = None;
    let (mut count, mut steps, mut phases) = (0, 0, [Duration::ZERO; 4]);
    for seed in seeds {
        if count % SEEDS_PER_STORE == 0 {
            let (store, dir) = open().await;
            common = Some(shared(&store, EPOCH).await);
            opened = Some((store, dir));
            t = EPOCH;
        }
        let ((store, _), common) = (opened.as_ref().expect("a store"), common.as_ref().expect("its workspaces"));
        let outcome = run_seed(store, common, Config { seed, verbose, broken }, t).await;
        count += 1;
        steps += outcome.steps;
        for (total, phase) in phases.iter_mut().zip(outcome.phases) {
            *total += phase;
        }
        if verbose {
            eprintln!("seed {seed}:\n{}", outcome.log.join("\n"));
        }
        t = outcome.end + 3600 * SEC;
        if !outcome.violations.is_empty() {
            return (Some((seed, outcome)), count, steps, phases);
        }
    }
    (None, count, steps, phases)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// Runs this half of the seeds (`FISCUS_SIM_SEEDS`, default 10,000; even seeds here, odd ones in the other
/// test, so the test runner puts the two halves on two cores), or `FISCUS_SIM_SEED` alone, verbosely.
fn simulate(half: u64) {
    let asked = env_number("FISCUS_SIM_SEEDS");
    if asked.is_none() && env_number("FISCUS_SIM_SEED").is_none() && std::env::var("FISCUS_TEST_DATABASE_URL").is_ok() {
        eprintln!("skipped on the suite's PostgreSQL run: the simulation's store is SQLite either way");
        return;
    }
    let (seeds, verbose): (Box<dyn Iterator<Item = u64>>, bool) = match env_number("FISCUS_SIM_SEED") {
        Some(seed) if seed % 2 == half => (Box::new(std::iter::once(seed)), true),
        Some(_) => return,
        None => (Box::new((half..asked.unwrap_or(10_000)).step_by(2)), false),
    };
    let started = Instant::now();
    let (failed, seeds, steps, phases) = runtime().block_on(run_many(seeds, Broken::None, verbose));
    if let Some((seed, outcome)) = failed {
        panic!(
            "seed {seed} broke an invariant:\n  {}\nreplay it: FISCUS_SIM_SEED={seed} cargo nextest run -p fiscus-store \
             --test simulation --no-capture",
            outcome.violations.join("\n  ")
        );
    }
    let took = started.elapsed();
    let [set_up, faulty, quiescing, checking] = phases;
    eprintln!(
        "simulation: {seeds} seeds, {steps} steps in {took:.1?} ({:.1?} a seed; set-up {set_up:.1?}, faulty phase \
         {faulty:.1?}, quiescing {quiescing:.1?}, checks {checking:.1?})",
        took / seeds.max(1) as u32
    );
}

#[test]
fn seeded_simulation_even_seeds() {
    simulate(0);
}

#[test]
fn seeded_simulation_odd_seeds() {
    simulate(1);
}

/// The invariants catch a worker that is wrong on purpose, within a few hundred seeds.
fn caught(broken: Broken) -> Vec<String> {
    let (failed, ..) = runtime().block_on(run_many(0..500, broken, false));
    failed.map(|(_, o)| o.violations).unwrap_or_default()
}

#[test]
fn a_webhook_worker_recording_before_sending_is_caught() {
    let violations = caught(Broken::RecordBeforeSend);
    assert!(violations.iter().any(|v| v.contains("at-least-once lost")), "{violations:?}");
}

#[test]
fn a_settlement_worker_calling_the_connector_after_committing_is_caught() {
    let violations = caught(Broken::SettleEffectAfterCommit);
    assert!(violations.iter().any(|v| v.contains("0 connector calls")), "{violations:?}");
}

#[test]
fn an_agent_runtime_numbering_calls_after_the_last_recorded_is_caught() {
    let violations = caught(Broken::CallAfterLastRecorded);
    assert!(violations.iter().any(|v| v.contains("recorded twice, out of sequence")), "{violations:?}");
}
