//! What this node's background workers have done, so that a caller can wait for everything due to be worked
//! off without guessing a time: each worker reports the start and end of each pass and each task it spawned
//! (a compute job, a webhook queue), and `drained` resolves once every running worker has begun a pass after
//! the call, found nothing to claim and had nothing of its own in flight, with no work ended meanwhile.
//!
//! The tests use it instead of sleeping ("drain what is pending, then look"); it says nothing about work
//! that is not due yet (a webhook retry after its `Retry-After`, a workflow timer) or about other nodes.

use std::sync::Arc;
use tokio::sync::watch;

/// The background workers of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    Settlement,
    Compute,
    Workflows,
    AgentRuns,
    Webhooks,
    BankFiles,
    /// The transparency log's integrator.
    Evidence,
}

const WORKERS: usize = 7;

impl Worker {
    fn index(self) -> usize {
        match self {
            Worker::Settlement => 0,
            Worker::Compute => 1,
            Worker::Workflows => 2,
            Worker::AgentRuns => 3,
            Worker::Webhooks => 4,
            Worker::BankFiles => 5,
            Worker::Evidence => 6,
        }
    }
}

/// A logical clock ticked by every pass start and every end of work, and what each worker last did on it.
#[derive(Clone, Debug, Default)]
struct State {
    clock: u64,
    /// The worker runs on this node (only those are waited for).
    running: [bool; WORKERS],
    /// The clock at the start of the worker's last pass that claimed nothing with nothing in flight.
    idle_from: [u64; WORKERS],
    /// Tasks a worker spawned that have not ended.
    in_flight: [u64; WORKERS],
    /// The clock when work last ended (a pass that claimed something, a spawned task).
    work_ended: u64,
}

pub struct Progress {
    state: Arc<watch::Sender<State>>,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress { state: Arc::new(watch::Sender::new(State::default())) }
    }
}

/// A pass a worker has begun; `Progress::end` says what it did.
#[must_use]
pub struct Pass {
    worker: Worker,
    started: u64,
}

/// A task a worker spawned (a compute job, a webhook queue), taken before the spawn and moved into it; its
/// end, however it ends, is work ended.
pub struct Task {
    state: Arc<watch::Sender<State>>,
    worker: Worker,
}

impl Drop for Task {
    fn drop(&mut self) {
        let i = self.worker.index();
        self.state.send_modify(|s| {
            s.in_flight[i] = s.in_flight[i].saturating_sub(1);
            s.clock += 1;
            s.work_ended = s.clock;
        });
    }
}

impl Progress {
    /// The worker runs on this node from now on.
    pub fn started(&self, worker: Worker) {
        self.state.send_modify(|s| s.running[worker.index()] = true);
    }

    pub fn begin(&self, worker: Worker) -> Pass {
        let mut started = 0;
        self.state.send_modify(|s| {
            s.clock += 1;
            started = s.clock;
        });
        Pass { worker, started }
    }

    /// Ends a pass that claimed `claimed` items. The worker's loop reports a failed pass as one that claimed
    /// something: what it failed on is still due, so nothing is drained while it keeps failing.
    pub fn end(&self, pass: Pass, claimed: usize) {
        let i = pass.worker.index();
        self.state.send_modify(|s| {
            if claimed > 0 {
                s.clock += 1;
                s.work_ended = s.clock;
            } else if s.in_flight[i] == 0 {
                s.idle_from[i] = s.idle_from[i].max(pass.started);
            }
        });
    }

    /// A task the worker is about to spawn: take it before the spawn (so the pass that spawned it cannot be
    /// followed by an idle one while the task has not started) and drop it when the task ends.
    pub fn task(&self, worker: Worker) -> Task {
        self.state.send_modify(|s| s.in_flight[worker.index()] += 1);
        Task { state: self.state.clone(), worker }
    }

    /// A view of the workers' progress that wakes its holder whenever work ends (a job, a delivery queue, a
    /// pass that claimed something): for waiting on one item among others still running, where draining
    /// everything would wait for them all.
    pub fn watch(&self) -> Watch {
        let rx = self.state.subscribe();
        let seen = rx.borrow().work_ended;
        Watch { rx, seen }
    }

    /// Resolves when every running worker has begun a pass after the previous check, found nothing due and had
    /// nothing in flight, and no work ended in between: what was due when it was called (and what that work
    /// queued for another worker) is done.
    pub async fn drained(&self) {
        let mut rx = self.state.subscribe();
        loop {
            let mark = rx.borrow_and_update().clock;
            let Ok(seen) = rx
                .wait_for(|s| (0..WORKERS).all(|i| !s.running[i] || s.idle_from[i] > mark))
                .await
                .map(|s| s.work_ended)
            else {
                return;
            };
            if seen <= mark {
                return;
            }
        }
    }
}

/// See [`Progress::watch`].
pub struct Watch {
    rx: watch::Receiver<State>,
    /// The last end of work this view has answered for.
    seen: u64,
}

impl Watch {
    /// Resolves once work has ended after the view was made or last resolved (at once if some already has),
    /// so that what its holder looked at in between is never missed.
    pub async fn worked(&mut self) {
        let seen = self.seen;
        if let Ok(s) = self.rx.wait_for(|s| s.work_ended > seen).await {
            self.seen = s.work_ended;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn resolves(progress: &Progress) -> bool {
        tokio::time::timeout(Duration::from_millis(200), progress.drained()).await.is_ok()
    }

    #[tokio::test]
    async fn no_running_worker_is_drained_at_once() {
        assert!(resolves(&Progress::default()).await);
    }

    #[tokio::test]
    async fn a_pass_begun_before_the_call_or_one_with_work_is_not_enough() {
        let p = Arc::new(Progress::default());
        p.started(Worker::Settlement);
        p.started(Worker::Compute);
        let early = p.begin(Worker::Settlement);
        let waiting = tokio::spawn({
            let p = p.clone();
            async move { p.drained().await }
        });
        tokio::task::yield_now().await;
        p.end(early, 0);
        // Settlement's idle pass began before the call; compute has not passed at all.
        let busy = p.begin(Worker::Compute);
        p.end(busy, 1);
        let pass = p.begin(Worker::Settlement);
        p.end(pass, 0);
        assert!(!waiting.is_finished());
        // A compute job in flight keeps its worker from counting as idle.
        let job = p.task(Worker::Compute);
        let pass = p.begin(Worker::Compute);
        p.end(pass, 0);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(job);
        // Work ended after the settlement worker's idle pass: it takes idle passes of both after that.
        let mut rounds = 0;
        while !waiting.is_finished() {
            rounds += 1;
            assert!(rounds <= 3, "not drained after {rounds} idle rounds");
            for w in [Worker::Compute, Worker::Settlement] {
                let pass = p.begin(w);
                p.end(pass, 0);
            }
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        }
        assert!(rounds >= 1);
    }

    #[tokio::test]
    async fn a_watch_wakes_for_work_ended_since_it_was_made_even_before_it_is_awaited() {
        let p = Progress::default();
        let mut w = p.watch();
        let pass = p.begin(Worker::Compute);
        p.end(pass, 1);
        tokio::time::timeout(Duration::from_millis(200), w.worked()).await.expect("work ended before the wait");
        assert!(tokio::time::timeout(Duration::from_millis(50), w.worked()).await.is_err(), "nothing since");
        drop(p.task(Worker::Compute));
        tokio::time::timeout(Duration::from_millis(200), w.worked()).await.expect("a task ended");
    }

    #[tokio::test]
    async fn a_worker_that_keeps_claiming_never_drains() {
        let p = Progress::default();
        p.started(Worker::Webhooks);
        let pass = p.begin(Worker::Webhooks);
        p.end(pass, 3);
        assert!(!resolves(&p).await);
    }
}
