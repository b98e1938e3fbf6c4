//! A cache of credential resolutions and workspace rows, so that an authenticated request needs no database
//! round trip.
//!
//! With SQLite, correctness rests on a *generation file* beside the database (`<db>.credentials-generation`). Every
//! transaction that changes credential or workspace standing (rotation, revocation, suspension, production
//! access, entitlement) writes a fresh random generation there right after it commits, in whichever process
//! committed it (the server, or the admin CLI beside it). Each lookup reads the file first (a few
//! microseconds) and drops the whole cache when the generation moved, so a rotation is refused by the next
//! request after the committing command returns. Anything unexpected (the file unreadable) bypasses the cache.
//!
//! With PostgreSQL, several nodes share the database and no file can tell them all. There the generation is
//! a row (`cache_generation`) that every transaction changing standing increments, and each serving node
//! runs a *watch* ([`watch`]) on its own connection that polls it every [`POLL`]. When it moved, the watch
//! forgets the node's cache and then acknowledges the generation in its `cache_nodes` row, which doubles as
//! a heartbeat. The committing process (another node, or the admin CLI) returns only once every node with a
//! live heartbeat acknowledged its generation ([`await_nodes`]), so the very next request on any node
//! misses the cache. A request reads nothing from the database to use the cache: the cost of a change is
//! paid by the (rare) change, up to one poll interval.
//!
//! Failing closed: a node trusts its cache only while its own last heartbeat is recent ([`LEASE`] minus a
//! margin, measured on its monotonic clock from before the heartbeat was sent); a committer waits for every
//! node whose heartbeat is younger than [`LEASE`] by the database's clock. A node that cannot reach the
//! database, or whose watch is stuck, stops using its cache before committers stop waiting for it. A node
//! that never started a watch (the CLI) never uses its cache.

use crate::credentials::ResolvedCredential;
use crate::execution_clients::ResolvedClient;
use crate::workspaces::WorkspaceRow;
use rand::RngCore;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MAX_ENTRIES: usize = 50_000;

/// How often a node's watch reads the generation.
pub const POLL: Duration = Duration::from_millis(25);
/// How often a node's watch heartbeats when nothing changed.
pub const BEAT: Duration = Duration::from_millis(500);
/// How long a heartbeat counts for committers; a node itself trusts its cache for [`MARGIN`] less.
pub const LEASE: Duration = Duration::from_secs(3);
pub const MARGIN: Duration = Duration::from_secs(1);

pub struct TenancyCache {
    source: Source,
    state: Mutex<State>,
}

enum Source {
    /// SQLite: the generation file beside the database.
    File(PathBuf),
    /// PostgreSQL: this node's watch of the database generation.
    Node(Arc<NodeLease>),
}

/// What a node's watch tells its cache.
pub(crate) struct NodeLease {
    /// This node's row in `cache_nodes`.
    pub(crate) node_id: String,
    /// Moves whenever the database generation moved (or the watch lost track of it).
    generation: AtomicU64,
    /// Until when the cache may be used (monotonic); `None`: not at all.
    valid_until: Mutex<Option<Instant>>,
    pub(crate) watching: AtomicBool,
    pub(crate) stop: AtomicBool,
}

impl NodeLease {
    pub(crate) fn new(node_id: String) -> NodeLease {
        NodeLease {
            node_id,
            generation: AtomicU64::new(0),
            valid_until: Mutex::new(None),
            watching: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        }
    }

    fn valid(&self) -> bool {
        let until = *self.valid_until.lock().unwrap_or_else(|p| p.into_inner());
        until.is_some_and(|until| Instant::now() < until)
    }

    fn renew(&self, from: Instant) {
        *self.valid_until.lock().unwrap_or_else(|p| p.into_inner()) = Some(from + LEASE - MARGIN);
    }

    fn lapse(&self) {
        *self.valid_until.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[derive(Default)]
struct State {
    generation: Vec<u8>,
    api_keys: HashMap<String, Arc<ResolvedCredential>>,
    tokens: HashMap<String, Arc<ResolvedCredential>>,
    workspaces: HashMap<String, Arc<WorkspaceRow>>,
    clients: HashMap<String, Arc<ResolvedClient>>,
}

impl State {
    fn len(&self) -> usize {
        self.api_keys.len() + self.tokens.len() + self.workspaces.len() + self.clients.len()
    }

    fn clear(&mut self) {
        self.api_keys.clear();
        self.tokens.clear();
        self.workspaces.clear();
        self.clients.clear();
    }
}

/// Which map an entry lives in.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    ApiKey,
    Token,
}

/// The generation read before a lookup; an entry is stored only under the generation it was read at.
pub(crate) struct Ticket(Vec<u8>);

impl TenancyCache {
    pub fn new(generation_file: PathBuf) -> TenancyCache {
        TenancyCache { source: Source::File(generation_file), state: Mutex::new(State::default()) }
    }

    pub(crate) fn usable(&self) -> bool {
        self.read_generation().is_some()
    }

    pub(crate) fn node(lease: Arc<NodeLease>) -> TenancyCache {
        TenancyCache { source: Source::Node(lease), state: Mutex::new(State::default()) }
    }

    /// The current generation, or `None` when the cache must not be used (the file cannot be read for a
    /// reason other than "not written yet"; the node's lease is not current).
    fn read_generation(&self) -> Option<Vec<u8>> {
        match &self.source {
            Source::File(file) => match std::fs::read(file) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
                Err(_) => None,
            },
            Source::Node(lease) => {
                // The generation is read before the lease is checked: a watch forgets (moves the generation)
                // before it acknowledges, so a lookup that passes both saw every acknowledged change.
                let generation = lease.generation.load(Ordering::SeqCst);
                lease.valid().then(|| generation.to_le_bytes().to_vec())
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Checks the generation; returns the ticket for storing a miss, and the hit if any.
    fn check<T: Clone>(&self, pick: impl FnOnce(&State) -> Option<T>) -> Option<(Ticket, Option<T>)> {
        let generation = self.read_generation()?;
        let mut state = self.lock();
        if state.generation != generation {
            state.clear();
            state.generation = generation.clone();
        }
        let hit = pick(&state);
        Some((Ticket(generation), hit))
    }

    pub(crate) fn credential(&self, kind: Kind, lookup: &str) -> Option<(Ticket, Option<Arc<ResolvedCredential>>)> {
        self.check(|s| match kind {
            Kind::ApiKey => s.api_keys.get(lookup).cloned(),
            Kind::Token => s.tokens.get(lookup).cloned(),
        })
    }

    pub(crate) fn workspace(&self, id: &str) -> Option<(Ticket, Option<Arc<WorkspaceRow>>)> {
        self.check(|s| s.workspaces.get(id).cloned())
    }

    pub(crate) fn client(&self, id: &str) -> Option<(Ticket, Option<Arc<ResolvedClient>>)> {
        self.check(|s| s.clients.get(id).cloned())
    }

    pub(crate) fn store_client(&self, ticket: Ticket, id: &str, value: Arc<ResolvedClient>) {
        self.store(ticket, |s| {
            s.clients.insert(id.to_string(), value);
        });
    }

    fn store(&self, ticket: Ticket, insert: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        // A change committed while the database was read leaves the entry out.
        if state.generation != ticket.0 {
            return;
        }
        if state.len() >= MAX_ENTRIES {
            state.clear();
        }
        insert(&mut state);
    }

    pub(crate) fn store_credential(&self, ticket: Ticket, kind: Kind, lookup: &str, value: Arc<ResolvedCredential>) {
        self.store(ticket, |s| {
            match kind {
                Kind::ApiKey => s.api_keys.insert(lookup.to_string(), value),
                Kind::Token => s.tokens.insert(lookup.to_string(), value),
            };
        });
    }

    pub(crate) fn store_workspace(&self, ticket: Ticket, value: Arc<WorkspaceRow>) {
        self.store(ticket, |s| {
            s.workspaces.insert(value.id.clone(), value);
        });
    }

    /// Publishes a new generation. Written to a temporary file and renamed, so a reader sees the old or the
    /// new generation, never half of one. The writer is called before the commit (a failure aborts the
    /// change: better no rotation than one the server cannot see) and again after it (so nothing read
    /// between the two is kept).
    ///
    /// On a node of a PostgreSQL deployment it only forgets this node's cache; the database generation moves
    /// in the committing transaction (`WriteTx::commit`) and the watches tell every node.
    pub fn bump(&self) -> std::io::Result<()> {
        let file = match &self.source {
            Source::File(file) => file,
            Source::Node(lease) => {
                self.forget(lease);
                return Ok(());
            }
        };
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::write(&tmp, nonce).and_then(|_| std::fs::rename(&tmp, file));
        let mut state = self.lock();
        state.clear();
        // On failure this process's own cache becomes unusable rather than stale.
        state.generation = if written.is_ok() { nonce.to_vec() } else { b"unwritable".to_vec() };
        written
    }
}

impl TenancyCache {
    /// Forgets everything: moves the node's generation (so no lookup that started before stores its result)
    /// and empties the maps.
    fn forget(&self, lease: &NodeLease) {
        let generation = lease.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let mut state = self.lock();
        state.clear();
        state.generation = generation.to_le_bytes().to_vec();
    }
}

/// The database clock in microseconds since the epoch (PostgreSQL), so heartbeats of nodes on different
/// hosts are compared on one clock.
const DB_NOW: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";

/// A node's watch (PostgreSQL): runs until the store is closed. See the module documentation.
pub(crate) async fn watch(cache: Arc<TenancyCache>, lease: Arc<NodeLease>, options: sqlx::any::AnyConnectOptions) {
    let node_id = lease.node_id.clone();
    use sqlx::Connection as _;
    let mut conn: Option<sqlx::AnyConnection> = None;
    let mut seen: Option<i64> = None;
    let mut last_beat: Option<Instant> = None;
    while !lease.stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let round = async {
            if conn.is_none() {
                conn = Some(sqlx::AnyConnection::connect_with(&options).await?);
                // A new connection may have missed changes: forget, and acknowledge afresh.
                seen = None;
            }
            let Some(c) = conn.as_mut() else { return Ok::<(), sqlx::Error>(()) };
            let (generation,): (i64,) =
                sqlx::query_as("SELECT generation FROM cache_generation WHERE id = 1").fetch_one(&mut *c).await?;
            let moved = seen != Some(generation);
            if moved {
                // Forget before acknowledging: a committer that sees the acknowledgement may rely on it.
                cache.forget(&lease);
            }
            if moved || last_beat.is_none_or(|at| at.elapsed() >= BEAT) {
                sqlx::query(&format!(
                    "INSERT INTO cache_nodes (node_id, acked, heartbeat_at) VALUES ($1, $2, {DB_NOW}) \
                     ON CONFLICT (node_id) DO UPDATE SET acked = excluded.acked, heartbeat_at = excluded.heartbeat_at"
                ))
                .bind(&node_id)
                .bind(generation)
                .execute(&mut *c)
                .await?;
                seen = Some(generation);
                last_beat = Some(started);
                lease.renew(started);
            }
            Ok(())
        }
        .await;
        if let Err(e) = round {
            // Fail closed: without a working watch the cache is not used; the lease also runs out by itself.
            tracing::warn!(error = %e, "the credential cache watch lost the database; the cache is off until it is back");
            lease.lapse();
            cache.forget(&lease);
            if let Some(c) = conn.take() {
                let _ = c.close().await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        tokio::time::sleep(POLL).await;
    }
    lease.lapse();
    if let Some(mut c) = conn.take() {
        let _ = sqlx::query("DELETE FROM cache_nodes WHERE node_id = $1").bind(&node_id).execute(&mut c).await;
        let _ = c.close().await;
    }
}

/// Moves the database generation inside a transaction that changes standing (PostgreSQL); returns the new
/// generation, which the committer then waits for with [`await_nodes`].
pub(crate) async fn move_generation(conn: &mut sqlx::AnyConnection) -> crate::Result<i64> {
    let (generation,): (i64,) =
        sqlx::query_as("UPDATE cache_generation SET generation = generation + 1 WHERE id = 1 RETURNING generation")
            .fetch_one(&mut *conn)
            .await?;
    Ok(generation)
}

/// Waits until every node with a live heartbeat acknowledged `generation` (it forgot everything cached
/// before). A node that stops heartbeating stops using its cache [`MARGIN`] before its lease runs out here,
/// so waiting at most [`LEASE`] plus a little is enough; if that still is not reached, the change stands
/// (it is committed) but the caller is told it may not be seen everywhere yet.
pub(crate) async fn await_nodes(pool: &sqlx::AnyPool, generation: i64) -> crate::Result<()> {
    let deadline = Instant::now() + LEASE + MARGIN;
    loop {
        let (behind,): (i64,) = sqlx::query_as(&format!(
            "SELECT COUNT(*) FROM cache_nodes WHERE acked < $1 AND heartbeat_at > {DB_NOW} - $2"
        ))
        .bind(generation)
        .bind(LEASE.as_micros() as i64)
        .fetch_one(pool)
        .await?;
        if behind == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(crate::StoreError::Config(format!(
                "the change is committed, but {behind} node(s) did not confirm they forgot their cached credentials"
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
