//! Group commit: the write transactions of concurrent requests are committed together, one durable commit
//! (one fsync) per group, instead of one each.
//!
//! A *lane* is one writer connection (a process has one on SQLite, several on PostgreSQL, see
//! `crate::POSTGRES_LANES`). A [`crate::WriteTx`] takes a lane, opens the outer
//! transaction if none is open, and does its work inside its own `SAVEPOINT`, so a member that fails or is
//! dropped rolls back only its own changes. When a member commits it releases its savepoint; then:
//!
//! - if nobody is queued for the lane (or the group is big enough), it commits the outer transaction at once
//!   and the whole group is durable;
//! - otherwise it hands the lane on and queues for it again behind the writers that were waiting. They join
//!   the same outer transaction; when the lane comes back, either one of them has committed the group already
//!   (its outcome is recorded) or this member commits it.
//!
//! A member's `commit` returns only once its group's `COMMIT` has returned, so a request is acknowledged only
//! after its changes are durable, and if the group's `COMMIT` fails every member gets the error (none is
//! acknowledged). The outer transaction is never left open while nobody is writing: the last member of a
//! burst commits it, so other processes (the admin CLI, other nodes) write between groups.
//!
//! A member that is dropped without finishing (its handler failed, or its request future was cancelled)
//! cannot run SQL in `Drop`. Its savepoint stays marked *dirty*; the next holder of the lane rolls it back
//! before anything else, and a task is spawned to take the lane and finish the group if nobody else will.

use crate::audit::PendingEvent;
use crate::{Backend, Result, StoreError, dialect};
use fiscus_domain::integrity::SealKey;
use sqlx::any::AnyConnectOptions;
use sqlx::{AnyConnection, Connection as _, Executor};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Members committed in one outer transaction at most; beyond this the member commits without waiting for
/// more, which bounds how long the first member of a long burst waits.
const MAX_GROUP: usize = 64;

/// Called with the lane held after a group committed in which some member changed standing (the cache
/// generation is published there, see [`crate::cache`]).
pub(crate) type AfterStanding = Arc<dyn Fn() + Send + Sync>;

pub(crate) struct Lane {
    state: Arc<Mutex<LaneState>>,
    /// Tasks waiting for the lane right now (new members and members waiting for their group).
    queued: AtomicUsize,
    backend: Backend,
    options: AnyConnectOptions,
    /// Audit events deferred to the group's end are sealed with it.
    seal_key: Arc<SealKey>,
    after_standing: Option<AfterStanding>,
    /// Members committed and durable commits done, for tests and metrics.
    members: AtomicU64,
    commits: AtomicU64,
}

pub(crate) struct LaneState {
    conn: Option<AnyConnection>,
    /// The open outer transaction's group, if one is open.
    open: Option<Arc<Group>>,
    /// Members whose savepoint was released into the open group.
    released: usize,
    /// A member's savepoint is open: set when a member begins, cleared when it releases or rolls back. Found
    /// set by a new holder, it means the member was dropped half-way, and its work is rolled back first.
    dirty: bool,
    /// A fresh savepoint was already set for the next member, in the same round trip that released the
    /// previous one (see [`Lane::commit`]).
    savepoint_ready: bool,
    /// Audit events of the group's members, in order, chained and written just before the group's COMMIT
    /// (see [`crate::audit::append`]).
    audit: Vec<PendingEvent>,
    /// Workspaces whose chain this group found to exist (checked once per group).
    chains: HashSet<String>,
    /// `audit.len()` and `chains` when the current member began, restored if its savepoint is rolled back.
    audit_at_savepoint: usize,
    chains_at_savepoint: HashSet<String>,
}

impl LaneState {
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("the lane holds a connection while a member runs")
    }

    pub(crate) fn knows_chain(&self, workspace_id: &str) -> bool {
        self.chains.contains(workspace_id)
    }

    pub(crate) fn mark_chain_known(&mut self, workspace_id: &str) {
        self.chains.insert(workspace_id.to_string());
    }

    /// Keeps an audit event for the group's end.
    pub(crate) fn defer_audit(&mut self, event: PendingEvent) {
        self.audit.push(event);
    }

    /// The current member begins: what it defers from now on is its own.
    fn mark_savepoint(&mut self) {
        self.audit_at_savepoint = self.audit.len();
        self.chains_at_savepoint.clone_from(&self.chains);
    }

    /// The current member's savepoint was rolled back: so is what it deferred.
    fn restore_savepoint(&mut self) {
        self.audit.truncate(self.audit_at_savepoint);
        self.chains.clone_from(&self.chains_at_savepoint);
    }

    /// A new or ended group defers nothing yet.
    fn clear_deferred(&mut self) {
        self.audit.clear();
        self.chains.clear();
        self.audit_at_savepoint = 0;
        self.chains_at_savepoint.clear();
    }
}

/// One outer transaction and what became of it.
pub(crate) struct Group {
    outcome: OnceLock<std::result::Result<(), String>>,
    standing: AtomicBool,
}

/// Decrements the queue count when the waiter got the lane or gave up waiting.
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Spawns a flush of the lane if dropped armed.
struct FlushOnDrop(Option<Arc<Lane>>);

impl FlushOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        if let Some(lane) = self.0.take() {
            lane.spawn_flush();
        }
    }
}

impl Lane {
    pub(crate) fn new(
        backend: Backend,
        options: AnyConnectOptions,
        seal_key: Arc<SealKey>,
        after_standing: Option<AfterStanding>,
    ) -> Lane {
        Lane {
            state: Arc::new(Mutex::new(LaneState {
                conn: None,
                open: None,
                released: 0,
                dirty: false,
                savepoint_ready: false,
                audit: Vec::new(),
                chains: HashSet::new(),
                audit_at_savepoint: 0,
                chains_at_savepoint: HashSet::new(),
            })),
            queued: AtomicUsize::new(0),
            backend,
            options,
            seal_key,
            after_standing,
            members: AtomicU64::new(0),
            commits: AtomicU64::new(0),
        }
    }

    /// Members committed and `COMMIT`s that succeeded so far.
    pub(crate) fn stats(&self) -> (u64, u64) {
        (self.members.load(Ordering::Relaxed), self.commits.load(Ordering::Relaxed))
    }

    async fn connect(&self) -> Result<AnyConnection> {
        let mut conn = AnyConnection::connect_with(&self.options).await?;
        if self.backend == Backend::Sqlite {
            crate::sqlite_pragmas(&mut conn).await?;
        }
        Ok(conn)
    }

    /// Takes the lane (FIFO), after rolling back whatever a dropped member left behind.
    /// If the waiting task is cancelled, a flush is spawned: the holder it was queued behind may have left
    /// the group open for it, or it was itself a member waiting to commit its group.
    async fn acquire(self: &Arc<Self>) -> OwnedMutexGuard<LaneState> {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let queued = Queued(&self.queued);
        let flush = FlushOnDrop(Some(self.clone()));
        let mut state = self.state.clone().lock_owned().await;
        flush.disarm();
        drop(queued);
        if state.dirty {
            self.roll_back_member(&mut state).await;
        }
        state
    }

    /// Starts a member: takes the lane, opens the outer transaction if needed, and sets the member's savepoint.
    pub(crate) async fn begin(self: &Arc<Self>) -> Result<(OwnedMutexGuard<LaneState>, Arc<Group>)> {
        let mut state = self.acquire().await;
        if state.conn.is_none() {
            state.conn = Some(self.connect().await?);
        }
        let group = match &state.open {
            Some(group) => group.clone(),
            None => {
                // One round trip: the transaction and the member's savepoint.
                let sql = format!("{}; SAVEPOINT fiscus_member", dialect::begin_write(self.backend));
                if let Err(e) = state.conn().execute(sql.as_str()).await {
                    // The connection may be unusable (PostgreSQL went away); the next member reconnects.
                    if let Some(conn) = state.conn.take() {
                        let _ = conn.close().await;
                    }
                    return Err(e.into());
                }
                let group = Arc::new(Group { outcome: OnceLock::new(), standing: AtomicBool::new(false) });
                state.open = Some(group.clone());
                state.released = 0;
                state.clear_deferred();
                state.savepoint_ready = true;
                group
            }
        };
        if !std::mem::take(&mut state.savepoint_ready)
            && let Err(e) = state.conn().execute("SAVEPOINT fiscus_member").await
        {
            self.abort(&mut state, &e.to_string()).await;
            return Err(e.into());
        }
        state.dirty = true;
        state.mark_savepoint();
        Ok((state, group))
    }

    /// Rolls back the current member's savepoint (the member failed or was dropped); the group goes on.
    pub(crate) async fn roll_back_member(&self, state: &mut LaneState) {
        state.restore_savepoint();
        let done = async {
            state.conn().execute("ROLLBACK TO SAVEPOINT fiscus_member; RELEASE SAVEPOINT fiscus_member").await?;
            Ok::<(), sqlx::Error>(())
        }
        .await;
        state.dirty = false;
        if let Err(e) = done {
            self.abort(state, &e.to_string()).await;
        }
    }

    /// Undoes the current member's changes so far and starts its savepoint afresh (the member goes on).
    pub(crate) async fn discard_member_changes(&self, state: &mut LaneState) -> Result<()> {
        state.restore_savepoint();
        if let Err(e) = state.conn().execute("ROLLBACK TO SAVEPOINT fiscus_member").await {
            self.abort(state, &e.to_string()).await;
            return Err(e.into());
        }
        Ok(())
    }

    /// Commits a member: releases its savepoint into the group and returns once the group is durable.
    pub(crate) async fn commit(
        self: &Arc<Self>,
        mut state: OwnedMutexGuard<LaneState>,
        group: Arc<Group>,
        standing: bool,
    ) -> Result<()> {
        if standing {
            group.standing.store(true, Ordering::SeqCst);
        }
        // Round trips are what a member holds the lane for, so the release shares one with what follows it:
        // the group's COMMIT when nobody is waiting, or the next member's savepoint when someone is.
        let hand_on = self.queued.load(Ordering::SeqCst) > 0 && state.released + 1 < MAX_GROUP;
        state.dirty = false;
        state.released += 1;
        if !hand_on {
            // A failed release fails the COMMIT with it, and with it the whole group.
            self.finish(&mut state, "RELEASE SAVEPOINT fiscus_member; ").await;
        } else {
            if let Err(e) = state.conn().execute("RELEASE SAVEPOINT fiscus_member; SAVEPOINT fiscus_member").await {
                self.abort(&mut state, &e.to_string()).await;
                return Err(e.into());
            }
            state.savepoint_ready = true;
            // Let the waiting writers add their work to this transaction, then come back for the outcome.
            drop(state);
            let mut state = self.acquire().await;
            if group.outcome.get().is_none() {
                match &state.open {
                    Some(open) if Arc::ptr_eq(open, &group) => self.finish(&mut state, "").await,
                    // Cannot happen: a group leaves the lane only with its outcome set.
                    _ => return Err(StoreError::Config("group commit lost track of a transaction".into())),
                }
            }
        }
        match group.outcome.get() {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(StoreError::GroupCommit(e.clone())),
            None => Err(StoreError::GroupCommit("the group ended without an outcome".into())),
        }
    }

    /// Commits the open outer transaction (or rolls it back when no member kept anything) and records the
    /// outcome for every member.
    /// `before` is SQL sent in the same round trip ahead of the `COMMIT`.
    async fn finish(&self, state: &mut LaneState, before: &str) {
        let Some(group) = state.open.take() else { return };
        let released = std::mem::take(&mut state.released);
        // An unused savepoint set for a member that never came ends with the transaction.
        state.savepoint_ready = false;
        let result = if released == 0 {
            state.clear_deferred();
            state.conn().execute(format!("{before}ROLLBACK").as_str()).await.map(|_| ()).map_err(StoreError::from)
        } else {
            // The group's audit events are chained and written inside the last member's savepoint, which the
            // COMMIT's round trip releases.
            let events = std::mem::take(&mut state.audit);
            state.clear_deferred();
            match crate::audit::write_chained(state.conn(), &self.seal_key, events).await {
                Ok(()) => {
                    state.conn().execute(format!("{before}COMMIT").as_str()).await.map(|_| ()).map_err(StoreError::from)
                }
                Err(e) => Err(e),
            }
        };
        let outcome = match result {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, members = released, "a group commit failed; no member is acknowledged");
                // Whatever state the connection is in, it is not trusted again.
                if let Some(conn) = state.conn.take() {
                    let _ = conn.close().await;
                }
                Err(e.to_string())
            }
        };
        let ok = outcome.is_ok();
        if ok && released > 0 {
            self.members.fetch_add(released as u64, Ordering::Relaxed);
            self.commits.fetch_add(1, Ordering::Relaxed);
        }
        let _ = group.outcome.set(outcome);
        if ok
            && released > 0
            && group.standing.load(Ordering::SeqCst)
            && let Some(after) = &self.after_standing
        {
            after();
        }
    }

    /// Ends the open group with a failure: everything in it is rolled back and every member gets an error.
    async fn abort(&self, state: &mut LaneState, why: &str) {
        state.clear_deferred();
        state.dirty = false;
        state.savepoint_ready = false;
        state.released = 0;
        tracing::error!(error = why, "a write group is rolled back");
        let rolled_back = match state.conn.as_mut() {
            Some(conn) => conn.execute("ROLLBACK").await.is_ok(),
            None => false,
        };
        if !rolled_back && let Some(conn) = state.conn.take() {
            let _ = conn.close().await;
        }
        if let Some(group) = state.open.take() {
            let _ = group.outcome.set(Err(why.to_string()));
        }
    }

    /// Takes the lane and commits the open group if nobody else is about to; used after a member was dropped
    /// or stopped waiting, so no member waits for a commit nobody will do and no transaction stays open.
    pub(crate) async fn flush(self: Arc<Self>) {
        let mut state = self.acquire().await;
        if state.open.is_some() && self.queued.load(Ordering::SeqCst) == 0 {
            self.finish(&mut state, "").await;
        }
    }

    pub(crate) fn spawn_flush(self: &Arc<Self>) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(self.clone().flush());
        }
    }
}
