//! The simulated world of one seed: a clock that is only a number, nodes (simulated workers) with their own
//! skew and memory, the faults the seed injects (a node stopping on purpose among them: `Sim::stop`), the
//! outside world the workers act on, and the scheduler that interleaves the nodes' steps (quiescing is in
//! `quiesce.rs`).
//!
//! A step is at most one write transaction run to its end (commit, rollback or crash) before another step
//! starts: SQLite has one writer, so two open write transactions in one thread would wait on each other for
//! ever. Steps that touch no database (a webhook send, a computation) interleave freely with other nodes'.
//! A crash inside a transaction drops it at one of its statements; a crash between steps drops the node's
//! memory. PostgreSQL's overlapping transactions (`SKIP LOCKED`) are not simulated here.

use crate::rng::Rng;
use crate::{agent_runs, compute, settlement, webhooks, workflow_runs};
use fiscus_store::{Store, WriteTx};
use sqlx::pool::PoolConnection;

pub const SEC: i64 = 1_000_000;

/// A variant of a worker that is wrong on purpose, to show the invariants catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    None,
    /// The webhook worker records an attempt as succeeded before sending it (at-least-once lost on a crash).
    RecordBeforeSend,
    /// The settlement worker calls the connector after committing the settlement, not inside its transaction.
    SettleEffectAfterCommit,
    /// The Agent Space runtime resumes after the calls it knows of and numbers a call after the last one
    /// recorded, not by its place in the plan: a call made twice (a run taken over) lands twice.
    CallAfterLastRecorded,
}

/// What one seed's run is asked to do.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub seed: u64,
    pub verbose: bool,
    pub broken: Broken,
}

/// What becomes of a step's transaction, chosen by the seed before the step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Commit,
    /// The node dies at this point of the step (0 = before its first statement); at the step's last point,
    /// after its commit, before it learns the outcome.
    CrashAt(u32),
    /// The database fails the step: its transaction is rolled back and the worker sees an error.
    Error,
    /// The commit happens but its answer is lost: the worker sees an error.
    AckLost,
    /// The outside world (connector, receiver) acted but the worker never hears back.
    Timeout,
}

impl Fate {
    pub fn crashes_at(self, point: u32) -> bool {
        self == Fate::CrashAt(point)
    }
}

/// How a step's transaction ended, as the world saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    pub committed: bool,
    /// The worker learnt that it committed (not crashed, answer not lost).
    pub known: bool,
}

/// One simulated worker. Its name is what the claims record; a node that comes back after a crash is a
/// new process (empty memory), under the same name or a new one.
pub struct Node {
    pub name: String,
    pub index: usize,
    pub incarnation: u32,
    /// Added to the simulated time to make this node's clock.
    pub skew: i64,
    pub alive: bool,
    pub revive_at: i64,
    /// What this process is in the middle of: claimed items it is working on (each a task in production).
    pub work: Vec<Work>,
}

pub enum Work {
    Compute(compute::Running),
    Settle(fiscus_actions::tables::settlement::Job),
    Serve(webhooks::Serving),
    // Boxed: a run's record in memory is several times the size of the other kinds' work.
    Advance(Box<workflow_runs::Advancing>),
    Execute(Box<agent_runs::Executing>),
}

/// The claim loops every node runs.
#[derive(Clone, Copy, Debug)]
pub enum Loop {
    ComputeClaim,
    SettleClaim,
    FanOut,
    HookClaim,
    /// The claim of the kind of run the seed has (workflow or Agent Space runs).
    RunClaim,
}

pub struct Sim<'a> {
    pub store: &'a Store,
    /// The seed's one connection for reads: taking one from the pool for each read cost more than the read.
    pub reads: PoolConnection<sqlx::Any>,
    pub cfg: Config,
    pub rng: Rng,
    /// Simulated time, microseconds.
    pub t: i64,
    pub nodes: Vec<Node>,
    pub faults: bool,
    pub log: Vec<String>,
    pub violations: Vec<String>,
    pub compute: compute::World,
    pub settle: settlement::World,
    pub hooks: webhooks::World,
    pub flows: workflow_runs::World,
    pub agents: agent_runs::World,
    pub steps: u64,
    /// Claims and fan-outs that took something, so quiescing knows whether a round moved anything.
    pub took: u64,
}

impl<'a> Sim<'a> {
    pub fn new(store: &'a Store, reads: PoolConnection<sqlx::Any>, cfg: Config, t: i64) -> Sim<'a> {
        let mut rng = Rng::new(cfg.seed);
        let count = rng.between(2, 3) as usize;
        let nodes = (0..count)
            .map(|i| Node {
                name: format!("node{i}"),
                index: i,
                incarnation: 0,
                skew: 0,
                alive: true,
                revive_at: 0,
                work: Vec::new(),
            })
            .collect();
        Sim {
            store,
            reads,
            cfg,
            rng,
            t,
            nodes,
            faults: true,
            log: Vec::new(),
            violations: Vec::new(),
            compute: compute::World::default(),
            settle: settlement::World::default(),
            hooks: webhooks::World::default(),
            flows: workflow_runs::World::default(),
            agents: agent_runs::World::default(),
            steps: 0,
            took: 0,
        }
    }

    pub fn now(&self, node: usize) -> i64 {
        self.t + self.nodes[node].skew
    }

    pub fn name(&self, node: usize) -> String {
        self.nodes[node].name.clone()
    }

    /// A line of the schedule (kept only when it will be printed: building them costs time per seed).
    pub fn note(&mut self, node: usize, what: impl FnOnce() -> String) {
        if self.cfg.verbose {
            let line = format!("t={:>9.3}s {:<10} {}", self.t as f64 / 1e6, self.nodes[node].name, what());
            self.log.push(line);
        }
    }

    pub fn violation(&mut self, what: String) {
        if self.cfg.verbose {
            self.log.push(format!("VIOLATION {what}"));
        }
        self.violations.push(what);
    }

    /// The fate of a step with `points` places to crash (the last one after its commit).
    pub fn fate(&mut self, points: u32) -> Fate {
        if !self.faults {
            return Fate::Commit;
        }
        match self.rng.below(1000) {
            0..40 => Fate::CrashAt(self.rng.below(u64::from(points) + 1) as u32),
            40..70 => Fate::Error,
            70..90 => Fate::AckLost,
            90..120 => Fate::Timeout,
            _ => Fate::Commit,
        }
    }

    /// Kills `node`: its memory goes; it comes back later, as itself or under a new name.
    pub fn crash(&mut self, node: usize, why: &str) {
        self.note(node, || format!("CRASH ({why})"));
        let back = self.rng.between(0, 90 * SEC);
        let n = &mut self.nodes[node];
        n.alive = false;
        n.work.clear();
        n.revive_at = self.t + back;
    }

    pub fn revive(&mut self, node: usize) {
        let renamed = self.rng.chance(500);
        let n = &mut self.nodes[node];
        n.alive = true;
        n.incarnation += 1;
        if renamed {
            n.name = format!("node{}.{}", n.index, n.incarnation);
        }
        self.note(node, || "back".to_string());
    }

    /// Ends a step's transaction as its fate says (a crash before the last point was handled by the step).
    pub async fn end(&mut self, node: usize, tx: WriteTx, fate: Fate, last: u32) -> Ended {
        match fate {
            Fate::Error => {
                drop(tx);
                self.note(node, || "  db error: rolled back".to_string());
                Ended { committed: false, known: false }
            }
            _ => {
                if let Err(e) = tx.commit().await {
                    self.violation(format!("a commit failed unexpectedly: {e}"));
                    return Ended { committed: false, known: false };
                }
                if fate.crashes_at(last) {
                    self.crash(node, "after commit");
                    return Ended { committed: true, known: false };
                }
                if fate == Fate::AckLost {
                    self.note(node, || "  commit answer lost".to_string());
                    return Ended { committed: true, known: false };
                }
                Ended { committed: true, known: true }
            }
        }
    }

    pub async fn run_loop(&mut self, node: usize, which: Loop) {
        match which {
            Loop::ComputeClaim => compute::claim(self, node).await,
            Loop::SettleClaim => settlement::claim(self, node).await,
            Loop::FanOut => webhooks::fan_out(self, node).await,
            Loop::HookClaim => webhooks::claim(self, node).await,
            Loop::RunClaim if !self.flows.runs.is_empty() => workflow_runs::claim(self, node).await,
            Loop::RunClaim => agent_runs::claim(self, node).await,
        }
    }

    /// Steps `work` of `node` once; puts it back unless it is done (or the node died).
    pub async fn step_work(&mut self, node: usize, work: Work) {
        let next = match work {
            Work::Compute(r) => compute::step(self, node, r).await.map(Work::Compute),
            Work::Settle(j) => settlement::step(self, node, j).await.map(Work::Settle),
            Work::Serve(s) => webhooks::step(self, node, s).await.map(Work::Serve),
            Work::Advance(a) => workflow_runs::step(self, node, *a).await.map(|a| Work::Advance(Box::new(a))),
            Work::Execute(e) => agent_runs::step(self, node, *e).await.map(|e| Work::Execute(Box::new(e))),
        };
        if let Some(w) = next
            && self.nodes[node].alive
        {
            self.nodes[node].work.push(w);
        }
    }

    /// The clock faults: the whole clock leaps past stale times, or one node's clock runs ahead or behind.
    fn clock_faults(&mut self) {
        if self.rng.chance(8) {
            let leap = self.rng.between(20 * SEC, 120 * SEC);
            self.t += leap;
            self.log_world(|| format!("clock leaps {}s", leap / SEC));
        }
        if self.rng.chance(8) {
            let node = self.rng.below(self.nodes.len() as u64) as usize;
            let skew = self.rng.between(-20 * SEC, 90 * SEC);
            self.nodes[node].skew = skew;
            self.note(node, || format!("clock skew now {}s", skew / SEC));
        }
    }

    pub fn log_world(&mut self, what: impl FnOnce() -> String) {
        if self.cfg.verbose {
            let line = format!("t={:>9.3}s {:<10} {}", self.t as f64 / 1e6, "world", what());
            self.log.push(line);
        }
    }

    /// The faulty phase: `steps` scheduler steps.
    pub async fn run(&mut self, steps: u32) {
        const LOOPS: [Loop; 5] = [Loop::ComputeClaim, Loop::SettleClaim, Loop::FanOut, Loop::HookClaim, Loop::RunClaim];
        for _ in 0..steps {
            self.steps += 1;
            self.t += self.rng.between(0, 400_000);
            self.clock_faults();
            if self.rng.chance(20) {
                webhooks::new_event(self).await;
            }
            for i in 0..self.nodes.len() {
                if !self.nodes[i].alive && self.nodes[i].revive_at <= self.t {
                    self.revive(i);
                }
            }
            let live: Vec<usize> = (0..self.nodes.len()).filter(|&i| self.nodes[i].alive).collect();
            if live.is_empty() {
                continue;
            }
            let node = live[self.rng.below(live.len() as u64) as usize];
            let busy = self.nodes[node].work.len() as u64;
            if busy > 0 && self.rng.chance(700) {
                let pick = self.rng.below(busy) as usize;
                let work = self.nodes[node].work.swap_remove(pick);
                self.step_work(node, work).await;
            } else if busy > 0 || self.rng.chance(400) {
                let which = LOOPS[self.rng.below(LOOPS.len() as u64) as usize];
                self.run_loop(node, which).await;
            }
            // Otherwise an idle node waits for its next poll: time passes, nothing is read (which keeps a
            // seed's cost to the steps that can interleave).
            if self.faults && self.rng.chance(3) {
                self.stop(node).await;
            }
            webhooks::land(self, false);
        }
    }

    /// A node stopping on purpose (`fiscus_server::serve`'s `hand_back`): its worker tasks are aborted (what
    /// they had not committed is rolled back; a webhook request already sent may still reach the receiver),
    /// then every claim it holds is handed back in one transaction (`fiscus_store::hand_back::all`), and it
    /// goes; it comes back later like a crashed node.
    async fn stop(&mut self, node: usize) {
        let name = self.name(node);
        webhooks::abort(self, node);
        let mut tx = self.begin().await;
        let back = match fiscus_store::hand_back::all(&mut tx, &name).await {
            Ok(back) => back,
            Err(e) => return self.violation(format!("hand back failed: {e}")),
        };
        // The hand-back's own transaction can fail: the claims then go stale like a crashed node's.
        let fate = if self.rng.chance(200) { Fate::Error } else { Fate::Commit };
        let ended = self.end(node, tx, fate, 1).await;
        self.note(node, || format!("stops: hands back {back:?} ({ended:?})"));
        self.crash(node, "stopped");
    }

    /// A write transaction (the store's lane, as the workers' own).
    pub async fn begin(&self) -> WriteTx {
        self.store.begin().await.expect("begin")
    }

    /// One claiming transaction of a worker's pass, whichever queue: `claim` is the store's own claim for
    /// this node's name, the clock and a limit drawn from `limits`; a crash before it or at its commit, a
    /// lost answer, and after a committed claim the queue's fair cap checked as its claim counts live claims.
    /// Answers what the node knows it took (nothing when it crashed or its answer was lost).
    pub async fn claim<T: Held>(
        &mut self,
        node: usize,
        what: &str,
        (lo, hi): (i64, i64),
        cap: Option<&Cap>,
        claim: impl AsyncFnOnce(&mut WriteTx, &str, i64, i64) -> fiscus_store::Result<Vec<T>>,
    ) -> Vec<T> {
        let (name, now, fate) = (self.name(node), self.now(node), self.fate(1));
        let limit = self.rng.between(lo, hi);
        let mut tx = self.begin().await;
        if fate.crashes_at(0) {
            drop(tx);
            self.crash(node, &format!("claiming {what}"));
            return Vec::new();
        }
        let claimed = match claim(&mut tx, &name, now, limit).await {
            Ok(c) => c,
            Err(e) => {
                self.violation(format!("{what} claim failed: {e}"));
                return Vec::new();
            }
        };
        let ended = self.end(node, tx, fate, 1).await;
        if claimed.is_empty() {
            return Vec::new();
        }
        self.took += 1;
        self.note(node, || {
            let ids: Vec<&str> = claimed.iter().map(Held::named).collect();
            format!("claims {what} {ids:?} ({ended:?})")
        });
        if let (true, Some(cap)) = (ended.committed, cap) {
            for held in &claimed {
                self.check_cap(cap, held.workspace_id(), now).await;
            }
        }
        if ended.known { claimed } else { Vec::new() }
    }

    /// At most `cap.cap` live claims of the queue in a workspace, counted as its claim's fair pick counts
    /// them (`fair`).
    async fn check_cap(&mut self, cap: &Cap, workspace_id: &str, now: i64) {
        let Cap { table, live, stale, cap } = *cap;
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE workspace_id = $1 AND {live} AND claimed_at >= $2");
        let (n,): (i64,) = sqlx::query_as(&sql)
            .bind(workspace_id)
            .bind(now - stale)
            .fetch_one(&mut *self.reads)
            .await
            .expect("count live claims");
        if n > cap {
            self.violation(format!("workspace {workspace_id} holds {n} live claims of {table}, above its cap {cap}"));
        }
    }
}

/// What a claim took, as the simulation names it and checks its workspace's cap.
pub trait Held {
    /// How the schedule names it (an action's settlement by its action).
    fn named(&self) -> &str;
    fn workspace_id(&self) -> &str;
}

/// A queue's fair cap: its table, what makes a row a live claim besides its age, its claims' stale time and
/// the cap.
#[derive(Clone, Copy)]
pub struct Cap {
    pub table: &'static str,
    pub live: &'static str,
    pub stale: i64,
    pub cap: i64,
}

impl Held for fiscus_models::tables::compute::Job {
    fn named(&self) -> &str {
        &self.id
    }
    fn workspace_id(&self) -> &str {
        &self.tenant.workspace_id
    }
}

impl Held for fiscus_actions::tables::settlement::Job {
    fn named(&self) -> &str {
        &self.action_id
    }
    fn workspace_id(&self) -> &str {
        &self.tenant.workspace_id
    }
}

impl Held for fiscus_kernel::tables::webhook_deliveries::Claimed {
    fn named(&self) -> &str {
        &self.endpoint_id
    }
    fn workspace_id(&self) -> &str {
        &self.tenant.workspace_id
    }
}

impl Held for fiscus_store::run_claims::Claimed {
    fn named(&self) -> &str {
        &self.run_id
    }
    fn workspace_id(&self) -> &str {
        &self.tenant.workspace_id
    }
}
