//! Quiescing a seed's world: the faults stop, every node comes back and finishes what it holds, then the
//! nodes run only the claim loops the store has due work for, and time moves on to when something falls due
//! next, until no work is unfinished. Split from `world.rs` to keep each file to one concern.

use crate::world::{Loop, SEC, Sim};
use crate::{agent_runs, compute, settlement, webhooks, workflow_runs};

impl Sim<'_> {
    /// Faults stop, every node comes back with a true clock and finishes what it holds in memory; then one
    /// node at a time (the seed picks which) runs only the claim loops the store has due work for, and when
    /// nothing is due but work is unfinished, time moves to when something next falls due (a retry, a stale
    /// claim). False when the work is not done within [`QUIESCE_ROUNDS`] rounds.
    pub async fn quiesce(&mut self) -> bool {
        self.faults = false;
        self.log_world(|| "faults stop; quiescing".to_string());
        for i in 0..self.nodes.len() {
            if !self.nodes[i].alive {
                self.revive(i);
            }
            self.nodes[i].skew = 0;
        }
        for node in 0..self.nodes.len() {
            self.drain(node).await;
        }
        for _ in 0..QUIESCE_ROUNDS {
            webhooks::land(self, false);
            let due = self.due().await;
            if !due.unfinished {
                // A request still on the wire lands after all (the receiver's log is checked as it ends).
                webhooks::land(self, true);
                return true;
            }
            let node = self.rng.below(self.nodes.len() as u64) as usize;
            let took = self.took;
            for (is_due, which) in [
                (due.fan_out, Loop::FanOut),
                (due.queues, Loop::HookClaim),
                (due.compute, Loop::ComputeClaim),
                (due.settlement, Loop::SettleClaim),
                (due.runs, Loop::RunClaim),
            ] {
                if is_due {
                    self.run_loop(node, which).await;
                }
            }
            self.drain(node).await;
            if self.took == took {
                // Nothing could be taken now (what is due is held by a live claim, or waits for a retry).
                self.t = due.wake.unwrap_or(self.t + 61 * SEC).max(self.t + 1);
                self.log_world(|| "time moves on".to_string());
            }
        }
        false
    }

    /// Steps everything `node` holds in memory to its end (no faults: every step finishes).
    async fn drain(&mut self, node: usize) {
        while let Some(work) = self.nodes[node].work.pop() {
            self.steps += 1;
            self.step_work(node, work).await;
        }
    }

    /// What the store has for the claim loops now, whether any work is unfinished, and when the earliest
    /// thing not due yet falls due. One statement; every condition is one of the claims' own, read through
    /// the queues' indexes so that its cost does not grow with the rows earlier seeds left.
    async fn due(&mut self) -> Due {
        let now = self.t;
        type Row = (
            i64,
            i64,
            i64,
            i64,
            i64,
            i64,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let r: Row = sqlx::query_as(
            "SELECT \
             (SELECT COUNT(*) FROM compute_jobs WHERE state = 'queued' OR (state = 'running' AND claimed_at < $2)), \
             (SELECT COUNT(*) FROM settlement_jobs \
              WHERE (state = 'pending' AND available_at <= $1) OR (state = 'claimed' AND claimed_at < $3)), \
             (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL), \
             (SELECT COUNT(*) FROM webhook_queues \
              WHERE next_due_at <= $1 AND (claimed_by IS NULL OR claimed_at < $4)), \
             (SELECT COUNT(*) FROM workflow_runs WHERE state IN ('queued', 'running', 'waiting') AND due_at <= $1 \
              AND (claimed_at IS NULL OR claimed_at < $5)) \
             + (SELECT COUNT(*) FROM agent_runs WHERE state IN ('queued', 'running') AND due_at <= $1 \
              AND (claimed_at IS NULL OR claimed_at < $6)), \
             (SELECT COUNT(*) FROM compute_jobs WHERE state IN ('queued', 'running')) \
             + (SELECT COUNT(*) FROM settlement_jobs WHERE state IN ('pending', 'claimed')) \
             + (SELECT COUNT(*) FROM webhook_queues WHERE next_due_at IS NOT NULL OR claimed_by IS NOT NULL) \
             + (SELECT COUNT(*) FROM workflow_runs WHERE state IN ('queued', 'running', 'waiting', 'awaiting_review')) \
             + (SELECT COUNT(*) FROM agent_runs WHERE state IN ('queued', 'running')), \
             (SELECT MIN(claimed_at) FROM compute_jobs WHERE state = 'running' AND claimed_at >= $2), \
             (SELECT MIN(claimed_at) FROM settlement_jobs WHERE state = 'claimed' AND claimed_at >= $3), \
             (SELECT MIN(available_at) FROM settlement_jobs WHERE state = 'pending' AND available_at > $1), \
             (SELECT MIN(next_due_at) FROM webhook_queues WHERE next_due_at > $1), \
             (SELECT MIN(claimed_at) FROM webhook_queues WHERE claimed_by IS NOT NULL AND claimed_at >= $4), \
             (SELECT MIN(claimed_at) FROM workflow_runs WHERE state IN ('queued', 'running', 'waiting') \
              AND claimed_at >= $5), \
             (SELECT MIN(due_at) FROM workflow_runs WHERE state IN ('queued', 'running', 'waiting') AND due_at > $1), \
             (SELECT MIN(claimed_at) FROM agent_runs WHERE state IN ('queued', 'running') AND claimed_at >= $6)",
        )
        .bind(now)
        .bind(now - compute::STALE)
        .bind(now - settlement::STALE)
        .bind(now - webhooks::STALE)
        .bind(now - workflow_runs::STALE)
        .bind(now - agent_runs::STALE)
        .fetch_one(&mut *self.reads)
        .await
        .expect("due work");
        // When each thing not due now becomes due: a claim once it is stale, a retry, an item or a timer at
        // its time.
        let wake = [
            r.6.map(|c| c + compute::STALE + 1),
            r.7.map(|c| c + settlement::STALE + 1),
            r.8,
            r.9,
            r.10.map(|c| c + webhooks::STALE + 1),
            r.11.map(|c| c + workflow_runs::STALE + 1),
            r.12,
            r.13.map(|c| c + agent_runs::STALE + 1),
        ]
        .into_iter()
        .flatten()
        .min();
        Due {
            compute: r.0 > 0,
            settlement: r.1 > 0,
            fan_out: r.2 > 0,
            queues: r.3 > 0,
            runs: r.4 > 0,
            unfinished: r.0 + r.1 + r.2 + r.3 + r.4 + r.5 > 0,
            wake,
        }
    }
}

/// Rounds of quiescing before the work is declared stuck (a seed needs a handful).
const QUIESCE_ROUNDS: u32 = 100;

/// What [`Sim::due`] found.
struct Due {
    compute: bool,
    settlement: bool,
    fan_out: bool,
    queues: bool,
    runs: bool,
    unfinished: bool,
    wake: Option<i64>,
}
