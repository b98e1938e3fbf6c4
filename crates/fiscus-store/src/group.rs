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
//!
//! It is long because it is one state machine (lanes, members, savepoints, the group's commit); split, its
//! invariants would be spread over files that must change together.

use crate::appends::{self, Appended, Appends};
use crate::audit::{Head, PendingEvent};
use crate::{Backend, Result, StoreError, append_statement, dialect};
use fiscus_domain::integrity::SealKey;
use sqlx::any::AnyConnectOptions;
use sqlx::{AnyConnection, Connection as _, Executor};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

/// A member that handed its appends to the lane (see [`crate::appends`]), and where it waits for its outcome.
struct AppendMember {
    appends: Appends,
    reply: oneshot::Sender<Result<Appended>>,
}

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
    /// Appends left with the lane and not yet moved into a group (see [`Lane::append`]).
    pending: std::sync::Mutex<Vec<AppendMember>>,
    /// A leader task is moving pending appends into groups.
    leading: AtomicBool,
    backend: Backend,
    options: AnyConnectOptions,
    /// Audit events deferred to the group's end are sealed with it.
    seal_key: Arc<SealKey>,
    after_standing: Option<AfterStanding>,
    /// Members committed and durable commits done, for tests and metrics.
    members: AtomicU64,
    commits: AtomicU64,
    /// Groups written in one statement (see `append_statement`), for tests and metrics.
    one_statement: AtomicU64,
}

pub(crate) struct LaneState {
    conn: Option<AnyConnection>,
    /// The open group, if one is open.
    open: Option<Arc<Group>>,
    /// The open group's outer transaction was begun in the database. A group whose members so far only
    /// handed over appends begins it when it commits.
    begun: bool,
    /// Appends handed over by the group's members, written just before its COMMIT.
    appends: Vec<AppendMember>,
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
    /// The audit heads this lane's last groups left, by workspace: a group of appends whose heads are all
    /// here is written in one statement, which checks them (see `append_statement`). Forgotten on any
    /// failure; a head another writer moved since only costs that statement.
    heads: HashMap<String, Head>,
}

impl LaneState {
    fn new(conn: Option<AnyConnection>) -> LaneState {
        LaneState {
            conn,
            open: None,
            begun: false,
            appends: Vec::new(),
            released: 0,
            dirty: false,
            savepoint_ready: false,
            audit: Vec::new(),
            chains: HashSet::new(),
            audit_at_savepoint: 0,
            chains_at_savepoint: HashSet::new(),
            heads: HashMap::new(),
        }
    }

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

impl Group {
    fn new() -> Arc<Group> {
        Arc::new(Group { outcome: OnceLock::new(), standing: AtomicBool::new(false) })
    }
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
            state: Arc::new(Mutex::new(LaneState::new(None))),
            queued: AtomicUsize::new(0),
            pending: std::sync::Mutex::new(Vec::new()),
            leading: AtomicBool::new(false),
            backend,
            options,
            seal_key,
            after_standing,
            members: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            one_statement: AtomicU64::new(0),
        }
    }

    /// Members committed and `COMMIT`s that succeeded so far.
    pub(crate) fn stats(&self) -> (u64, u64) {
        (self.members.load(Ordering::Relaxed), self.commits.load(Ordering::Relaxed))
    }

    /// Groups written in one statement so far.
    pub(crate) fn one_statement_groups(&self) -> u64 {
        self.one_statement.load(Ordering::Relaxed)
    }

    /// Connects the lane, on the lanes' own thread (see [`lanes_runtime`]): a connection's socket is
    /// watched by the runtime it was opened on.
    async fn connect(&self) -> Result<AnyConnection> {
        let (options, backend) = (self.options.clone(), self.backend);
        let connected = lanes_runtime().spawn(async move {
            let mut conn = AnyConnection::connect_with(&options).await?;
            if backend == Backend::Sqlite {
                crate::sqlite_pragmas(&mut conn).await?;
            }
            Ok::<_, StoreError>(conn)
        });
        connected.await.map_err(|e| StoreError::Config(format!("the lanes' thread failed: {e}")))?
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
            Some(group) if state.begun => group.clone(),
            open => {
                let open = open.clone();
                // One round trip: the transaction and the member's savepoint.
                let sql = format!("{}; SAVEPOINT fiscus_member", dialect::begin_write(self.backend));
                if let Err(e) = state.conn().execute(sql.as_str()).await {
                    if open.is_some() {
                        // Members waiting with their appends share the failure.
                        self.abort(&mut state, &e.to_string()).await;
                    } else if let Some(conn) = state.conn.take() {
                        // The connection may be unusable (PostgreSQL went away); the next member reconnects.
                        let _ = conn.close().await;
                    }
                    return Err(e.into());
                }
                let group = match open {
                    Some(group) => group,
                    None => {
                        let group = Group::new();
                        state.open = Some(group.clone());
                        state.released = 0;
                        state.clear_deferred();
                        group
                    }
                };
                state.begun = true;
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

    /// Hands a member's appends to the lane and returns once its group committed them (see
    /// [`crate::appends`]). The member runs no statement and never takes the lane itself: it leaves its
    /// appends with the lane, and one task at a time (the *leader*, spawned by whichever member found none)
    /// takes the lane, moves everything left so far into the open group (or opens one, which begins in the
    /// database only when it commits) and commits it unless other writers are queued to join. A member is
    /// told its outcome once its group's COMMIT returned; a request dropped meanwhile loses only its answer.
    pub(crate) async fn append(self: &Arc<Self>, appends: Appends) -> Result<Appended> {
        let (reply, outcome) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).push(AppendMember { appends, reply });
        if !self.leading.swap(true, Ordering::SeqCst) {
            lanes_runtime().spawn(self.clone().lead());
        }
        // A member whose group ended without telling it (the lane failed in a way nobody answered for) is
        // not acknowledged.
        outcome.await.unwrap_or_else(|_| Err(StoreError::GroupCommit("the group ended without an outcome".into())))
    }

    /// The leader's work: while appends are left with the lane, take the lane and move them into a group.
    async fn lead(self: Arc<Self>) {
        loop {
            let mut state = self.acquire().await;
            let members = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
            if !members.is_empty() {
                self.join_appends(&mut state, members).await;
            }
            drop(state);
            self.leading.store(false, Ordering::SeqCst);
            // A member that left its appends after the take above, and found a leader, is served by another
            // round, unless it became the leader itself meanwhile.
            let more = !self.pending.lock().unwrap_or_else(|p| p.into_inner()).is_empty();
            if !more || self.leading.swap(true, Ordering::SeqCst) {
                return;
            }
        }
    }

    /// Adds `members` to the open group (opening one if none is) and commits it, unless writers are queued
    /// for the lane: then they join it, and the last of them commits it.
    async fn join_appends(self: &Arc<Self>, state: &mut LaneState, members: Vec<AppendMember>) {
        if state.conn.is_none() {
            match self.connect().await {
                Ok(conn) => state.conn = Some(conn),
                Err(e) => {
                    let why = e.to_string();
                    for member in members {
                        let _ = member.reply.send(Err(StoreError::GroupCommit(why.clone())));
                    }
                    return;
                }
            }
        }
        if state.open.is_none() {
            state.open = Some(Group::new());
            state.released = 0;
            state.begun = false;
            state.clear_deferred();
        }
        state.released += members.len();
        state.appends.extend(members);
        let hand_on = self.queued.load(Ordering::SeqCst) > 0 && state.released < MAX_GROUP;
        if !hand_on {
            self.finish(state, "").await;
        }
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
            } else if state.open.is_some() && self.queued.load(Ordering::SeqCst) == 0 {
                // Our group was committed by a writer that took the lane between our release and our queueing
                // (on another thread), so it did not count us; a leader may since have opened a group with
                // appends and handed it on because it *did* count us. We are the writer it handed on to: with
                // nobody else queued, commit it, or its members wait for ever.
                self.finish(&mut state, "").await;
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
    /// `before` is SQL sent in the same round trip ahead of the `COMMIT` (or of the appends' savepoint).
    async fn finish(&self, state: &mut LaneState, before: &str) {
        let Some(group) = state.open.take() else { return };
        let released = std::mem::take(&mut state.released);
        let begun = std::mem::take(&mut state.begun);
        let mut appends = std::mem::take(&mut state.appends);
        let mut appended: Vec<Result<Appended>> = Vec::new();
        // An unused savepoint set for a member that never came ends with the transaction.
        state.savepoint_ready = false;
        let result = if released == 0 {
            state.clear_deferred();
            if begun {
                state.conn().execute(format!("{before}ROLLBACK").as_str()).await.map(|_| ()).map_err(StoreError::from)
            } else {
                Ok(())
            }
        } else {
            // The group's audit events are chained and written inside the last savepoint, which the COMMIT's
            // round trip releases.
            let mut events = std::mem::take(&mut state.audit);
            state.clear_deferred();
            let key = self.seal_key.clone();
            let begin = dialect::begin_write(self.backend);
            async {
                let mut before = before.to_string();
                if !appends.is_empty() && !begun && self.backend == Backend::Postgres {
                    let batch: Vec<&Appends> = appends.iter().map(|m| &m.appends).collect();
                    let conn = state.conn.as_mut().expect("the lane holds a connection while it commits");
                    match append_statement::try_write(conn, &key, &batch, &state.heads).await {
                        Ok(Some(moved)) => {
                            appended = appends.iter().map(|_| Ok(Appended::Written)).collect();
                            state.heads.extend(moved);
                            self.one_statement.fetch_add(1, Ordering::Relaxed);
                            return Ok(());
                        }
                        Ok(None) => {}
                        Err(e) => {
                            // Expected when a head moved elsewhere or a key is held; the ordinary path sorts
                            // it out, member by member.
                            tracing::debug!(error = %e, "a group's one-statement write fell back");
                            state.heads.clear();
                        }
                    }
                }
                if !appends.is_empty() {
                    let open = if begun {
                        format!("{before}SAVEPOINT fiscus_appends")
                    } else {
                        format!("{begin}; SAVEPOINT fiscus_appends")
                    };
                    state.conn().execute(open.as_str()).await?;
                    before.clear();
                    let (outcomes, written) = write_appends(state.conn(), &mut appends).await?;
                    appended = outcomes;
                    events.extend(written);
                } else if !begun {
                    return Err(StoreError::Config("a group with members was never begun".into()));
                }
                let moved = crate::audit::write_chained(state.conn(), &key, events).await?;
                state.conn().execute(format!("{before}COMMIT").as_str()).await?;
                state.heads.extend(moved);
                Ok(())
            }
            .await
        };
        let outcome = match result {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, members = released, "a group commit failed; no member is acknowledged");
                state.heads.clear();
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
        match &outcome {
            Ok(()) => {
                for (member, appended) in appends.into_iter().zip(appended) {
                    let _ = member.reply.send(appended);
                }
            }
            Err(why) => {
                for member in appends {
                    let _ = member.reply.send(Err(StoreError::GroupCommit(why.clone())));
                }
            }
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
        state.heads.clear();
        for member in state.appends.drain(..) {
            let _ = member.reply.send(Err(StoreError::GroupCommit(why.to_string())));
        }
        state.begun = false;
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

/// Writes the group's appends inside the savepoint `fiscus_appends`; returns each member's outcome, in
/// order, and the audit events of the members written. Batched first; if a batched statement fails, the
/// batch is rolled back and each member written in a savepoint of its own, so a member whose rows fail gets
/// the error alone. An error returned here (the database itself failing) fails the group.
async fn write_appends(
    conn: &mut AnyConnection,
    members: &mut [AppendMember],
) -> Result<(Vec<Result<Appended>>, Vec<PendingEvent>)> {
    let mut events = Vec::new();
    let batch: Vec<&Appends> = members.iter().map(|m| &m.appends).collect();
    let outcomes = match appends::write(conn, &batch).await {
        Ok(outcomes) => outcomes.into_iter().map(Ok).collect::<Vec<_>>(),
        Err(e) => {
            tracing::warn!(error = %e, members = members.len(), "a batch of appends failed; writing them one by one");
            conn.execute("ROLLBACK TO SAVEPOINT fiscus_appends").await?;
            let mut outcomes = Vec::with_capacity(members.len());
            for member in members.iter() {
                conn.execute("SAVEPOINT fiscus_append").await?;
                match appends::write(conn, &[&member.appends]).await {
                    Ok(mut one) => {
                        conn.execute("RELEASE SAVEPOINT fiscus_append").await?;
                        outcomes.push(Ok(one.pop().unwrap_or(Appended::Written)));
                    }
                    Err(e) => {
                        conn.execute("ROLLBACK TO SAVEPOINT fiscus_append; RELEASE SAVEPOINT fiscus_append").await?;
                        outcomes.push(Err(e));
                    }
                }
            }
            outcomes
        }
    };
    for (member, outcome) in members.iter_mut().zip(&outcomes) {
        if matches!(outcome, Ok(Appended::Written)) {
            events.append(&mut member.appends.audit);
        }
    }
    Ok((outcomes, events))
}

/// The lanes' own runtime, one thread: the leader of each lane runs there, and the lanes' connections are
/// watched there. A group's commit is a chain of round trips, each of which wakes the leader; on the
/// request runtime that wake-up waits behind every request ready to run (about half a millisecond per round
/// trip under load on two cores), which made the chain, not the database, the bound on keyed writes. A
/// thread that mostly sleeps in `epoll_wait` is run as soon as its answer arrives.
fn lanes_runtime() -> &'static tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the lanes' runtime starts (it needs only a thread and an epoll descriptor)");
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("fiscus-lanes".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .expect("the lanes' thread starts");
        handle
    })
}
