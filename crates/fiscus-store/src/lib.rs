//! Persistence for Fiscus.
//!
//! One repository code path serves both backends: queries are portable SQL with `$n` binds run through
//! sqlx's `Any` driver, and the few dialect differences (how a write transaction begins, row locking) live in
//! [`dialect`]. Every repository function takes a [`Tenant`](fiscus_domain::tenancy::Tenant) or a workspace id
//! first, with one deliberate exception: resolving a presented credential, which is how a request learns its
//! workspace in the first place (`credentials::resolve_*`).
//!
//! One sealed row of a tenant by its id is read one way: [`seals::get_tenant_row`] for a table with a row type
//! of its own (the row, then its seal; `NotFound` for another workspace's or environment's row, `Tampered`
//! for an edited one), or `sealed_records::select_one` for the records kept as sealed canonical fields (seal
//! checked in the same query). Reads written out by hand are the ones these cannot say: a row locked for a
//! decision (`FOR UPDATE`), a row whose seal its caller checks together with its children (an action with its
//! checks and decisions, `fiscus_actions::steps::loaded`), or a row found by another key than its id
//! (an A2A task of one owner, a universe by its uid).
//!
//! How it works, in prose: `README.md` beside this crate.
//!
//! It is long because `Store` is the one handle every repository goes through (connections, group commit, the
//! credential cache and its watch); the repositories themselves are modules.

/// A struct read from query rows, a column for each field by the field's name: the struct as written, and
/// its `FromRow` for the `Any` driver. (What sqlx's `FromRow` derive does; the derive is not used because
/// its proc-macro crate compiles sqlx's drivers, SQLite's C included, a second time for the build machine.)
/// A field read in another way (renamed, converted, skipped) has a hand-written `FromRow` beside its struct.
#[macro_export]
macro_rules! row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $fty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field : $fty ),*
        }

        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $name {
            fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok($name { $( $field: row.try_get(stringify!($field))? ),* })
            }
        }
    };
}

pub mod agent_tables;
mod append_statement;
pub mod appends;
pub mod applications;
pub mod audit;
pub mod cache;
pub mod cluster;
pub mod copy_in;
pub mod credentials;
pub mod data_tables;
pub mod dialect;
mod error;
pub mod evidence_db;
pub mod execution_clients;
pub mod fair;
mod group;
pub mod hand_back;
pub mod idempotency;
pub mod investment_tables;
mod migrations;
pub mod model_tables;
pub mod operators;
pub mod outbox;
pub mod payment_tables;
pub mod run_claims;
pub mod sealed_records;
pub mod sealed_tables;
pub mod seals;
pub mod set_aside;
pub mod tlog;
pub mod workspaces;

pub use error::{StoreError, corrupt, stored_actor};
pub use evidence_db::{EvidenceConn, EvidenceTx, evidence_url};
/// A database connection (pooled or inside a [`WriteTx`]); repository functions take one.
pub use sqlx::AnyConnection as Connection;

use fiscus_domain::integrity::SealKey;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyConnection, AnyPool, Connection as _, Executor};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

pub type Result<T> = std::result::Result<T, StoreError>;

/// A future boxed where it is made. A release build compiles an awaited `async fn`'s body again in every
/// crate that awaits it (generic code is not shared across crates there, and a body counts as generic):
/// beginning and committing a write pulls the whole group commit in, and a read the pool's acquire, so
/// these entry points, awaited by every crate above, return this and compile once, here. One allocation
/// per transaction or connection is nothing beside what they do (docs/build-time.md).
pub type Boxed<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The database: a pool and the knowledge of which backend it is.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// SQLite allows one writer at a time. Queuing writers of this process on an async mutex is cheaper and
    /// fairer than letting them spin in SQLite's busy handler; other processes (the admin CLI) still meet
    /// the busy timeout. PostgreSQL needs no such lock. Used only without group commit.
    sqlite_writer: Option<Arc<Mutex<()>>>,
    /// The group-commit lanes (see [`group`]); none when group commit is off. SQLite has one writer, so one
    /// lane; PostgreSQL runs [`POSTGRES_LANES`] side by side, each member taking the next.
    lanes: Arc<[Arc<group::Lane>]>,
    next_lane: Arc<std::sync::atomic::AtomicUsize>,
    /// Credential and workspace cache (see [`cache`]): keyed on a generation file with SQLite, on this
    /// node's watch of the database generation with PostgreSQL.
    cache: Option<Arc<cache::TenancyCache>>,
    /// PostgreSQL: this node's lease on its cache, renewed by its watch (see [`Store::watch_standing`]).
    node: Option<Arc<cache::NodeLease>>,
    /// The integrity key (derived from the server key, never stored in the database) that MACs audit events,
    /// chain heads and sealed rows (see [`seals`] and `fiscus_domain::integrity`).
    seal_key: Arc<SealKey>,
    /// Where the transparency log's integrated state lives (see [`evidence_db`]).
    evidence: evidence_db::EvidenceDb,
    /// PostgreSQL: the database URL, for the connection a large import's COPY takes (see [`copy_in`]).
    copy_url: Option<Arc<str>>,
}

/// A write transaction.
///
/// With group commit (the default, see [`group`]) it is a savepoint inside the process's one writer
/// transaction: `commit` returns once the group it joined is durable, and dropping it rolls back only its own
/// changes. Without group commit, on SQLite it holds the process's writer lock and began with
/// `BEGIN IMMEDIATE`, so it never fails half-way with a lock upgrade error; on PostgreSQL it is a plain
/// `BEGIN` at READ COMMITTED. Either way repositories lock the rows they decide on (`dialect::for_update`).
pub struct WriteTx {
    inner: Inner,
    cache: Option<Arc<cache::TenancyCache>>,
    /// PostgreSQL: a standing change moves the database generation and waits for every node (see [`cache`]).
    nodes: Option<AnyPool>,
    standing_changed: bool,
    seal_key: Arc<SealKey>,
    copy_url: Option<Arc<str>>,
    /// Staging tables whose rows this transaction took (see [`copy_in`]): dropped once it has committed or
    /// rolled back, since the drop waits for its lock on them.
    staged: Vec<copy_in::Staging>,
}

enum Inner {
    Lane {
        lane: Arc<group::Lane>,
        /// `None` only once the member finished (committed).
        state: Option<OwnedMutexGuard<group::LaneState>>,
        group: Arc<group::Group>,
    },
    Single {
        tx: sqlx::Transaction<'static, sqlx::Any>,
        _writer: Option<OwnedMutexGuard<()>>,
    },
    /// Moved out by `commit`.
    Taken,
}

impl WriteTx {
    pub fn conn(&mut self) -> &mut AnyConnection {
        match &mut self.inner {
            Inner::Lane { state, .. } => state.as_mut().expect("a live member holds the lane").conn(),
            Inner::Single { tx, .. } => tx,
            Inner::Taken => unreachable!("a committed transaction is gone"),
        }
    }

    /// The integrity key, for MACs written in this transaction.
    pub fn seal_key(&self) -> &SealKey {
        &self.seal_key
    }

    /// PostgreSQL, for `rows` enough to be worth a COPY and while a COPY slot is free: the URL its staging
    /// connection takes, and the slot.
    pub fn copy_url(&self, rows: usize) -> Option<(Arc<str>, copy_in::Slot)> {
        let url = self.copy_url.clone().filter(|_| rows >= copy_in::COPY_FROM_ROWS)?;
        Some((url, copy_in::slot()?))
    }

    /// A staging table to drop when this transaction ends.
    pub fn staged(&mut self, staging: copy_in::Staging) {
        self.staged.push(staging);
    }

    /// Declares that this transaction changes credential or workspace standing, so caches must forget.
    /// Repository functions that make such changes call it themselves.
    pub(crate) fn standing_changed(&mut self) -> Result<()> {
        if let (Some(cache), false) = (&self.cache, self.standing_changed) {
            cache.bump().map_err(|e| StoreError::Config(format!("cannot publish a credential generation: {e}")))?;
        }
        self.standing_changed = true;
        Ok(())
    }

    /// The commit group's lane this transaction is a member of (none when group commit is off).
    pub(crate) fn lane_state(&mut self) -> Option<&mut group::LaneState> {
        match &mut self.inner {
            Inner::Lane { state: Some(state), .. } => Some(state),
            _ => None,
        }
    }

    /// Undoes everything this transaction changed so far and goes on with an empty transaction, which still
    /// commits (and so waits for the durability of anything it read that others wrote in its group).
    pub async fn discard_changes(&mut self) -> Result<()> {
        match &mut self.inner {
            Inner::Lane { lane, state: Some(state), .. } => lane.discard_member_changes(state).await,
            Inner::Lane { state: None, .. } => Ok(()),
            // `Store::begin` set this savepoint right after `BEGIN`.
            Inner::Single { tx, .. } => {
                tx.execute("ROLLBACK TO SAVEPOINT fiscus_member").await?;
                Ok(())
            }
            Inner::Taken => Ok(()),
        }
    }

    /// Commits. With group commit, returns once the group this transaction joined is durable; an error
    /// means none of it is (the group was rolled back).
    pub fn commit(mut self) -> Boxed<'static, Result<()>> {
        Box::pin(async move {
            let standing = self.standing_changed;
            let generation = match (&self.nodes, standing) {
                (Some(_), true) => Some(cache::move_generation(self.conn()).await?),
                _ => None,
            };
            let committed = self.finish_commit(standing).await;
            for staging in std::mem::take(&mut self.staged) {
                if let Err(e) = staging.discard().await {
                    tracing::warn!(error = %e, "a staging table was not dropped (it is swept at the next start)");
                }
            }
            committed?;
            if let (Some(pool), Some(generation)) = (&self.nodes, generation) {
                if let Some(cache) = &self.cache {
                    let _ = cache.bump();
                }
                cache::await_nodes(pool, generation).await?;
            }
            Ok(())
        })
    }

    async fn finish_commit(&mut self, standing: bool) -> Result<()> {
        match std::mem::replace(&mut self.inner, Inner::Taken) {
            Inner::Lane { lane, state, group } => {
                let state = state.expect("a live member holds the lane");
                lane.commit(state, group, standing).await?;
                // The group's last member published the generation after the COMMIT (see `Store::connect`).
                Ok(())
            }
            Inner::Single { tx, _writer } => {
                tx.commit().await?;
                if let (Some(cache), true) = (&self.cache, standing)
                    && let Err(e) = cache.bump()
                {
                    tracing::error!(error = %e, "could not publish a credential generation after commit");
                }
                Ok(())
            }
            Inner::Taken => Ok(()),
        }
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        // A member dropped before committing leaves its savepoint marked dirty in the lane; whoever takes the
        // lane next rolls it back. A flush makes sure someone does, and commits the rest of the group.
        if let Inner::Lane { lane, state, .. } = &mut self.inner
            && state.take().is_some()
        {
            lane.spawn_flush();
        }
        // Rolled back: its staging tables go once the rollback released them.
        let staged = std::mem::take(&mut self.staged);
        if !staged.is_empty()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                for staging in staged {
                    let _ = staging.discard().await;
                }
            });
        }
    }
}

impl Store {
    /// Connects to `url`: `sqlite://path` (created if missing, WAL mode) or `postgres://…`.
    pub async fn connect(url: &str, max_connections: u32, seal_key: SealKey) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError::Config(format!(
                "unsupported database URL (expected sqlite:// or postgres://): {}",
                redact_url(url)
            )));
        };
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                format!("{url}{}mode=rwc", if url.contains('?') { '&' } else { '?' })
            }
            _ => url.to_string(),
        };
        let options = AnyConnectOptions::from_str(&url)?;
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            // An SQLite connection is a file handle: there is no server to lose it, so the ping before each
            // use is a round trip through the connection's thread for nothing (a third of a small read).
            .test_before_acquire(backend != Backend::Sqlite)
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        sqlite_pragmas(conn).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options.clone())
            .await?;
        let sqlite_writer = (backend == Backend::Sqlite).then(|| Arc::new(Mutex::new(())));
        let node =
            (backend == Backend::Postgres).then(|| Arc::new(cache::NodeLease::new(fiscus_domain::ids::new_id("node"))));
        let cache = match &node {
            Some(lease) => Some(Arc::new(cache::TenancyCache::node(lease.clone()))),
            None => sqlite_file(&url).map(|db| {
                let mut name = db.into_os_string();
                name.push(".credentials-generation");
                Arc::new(cache::TenancyCache::new(name.into()))
            }),
        };
        // With PostgreSQL the generation is published by the committing transaction itself.
        let seal_key = Arc::new(seal_key);
        let lanes = new_lanes(backend, &options, &seal_key, if node.is_some() { None } else { cache.clone() });
        let evidence = match backend {
            Backend::Sqlite => evidence_db::EvidenceDb::open_beside(&url, max_connections).await?,
            Backend::Postgres => evidence_db::EvidenceDb::shared(pool.clone(), backend),
        };
        let copy_url = (backend == Backend::Postgres).then(|| Arc::from(url.as_str()));
        Ok(Store {
            pool,
            backend,
            sqlite_writer,
            lanes,
            next_lane: Arc::default(),
            cache,
            node,
            seal_key,
            evidence,
            copy_url,
        })
    }

    /// Whether a lookup would use the cache right now (with PostgreSQL: this node's watch holds a current
    /// lease). For tests and diagnostics.
    pub fn cache_usable(&self) -> bool {
        self.cache.as_ref().is_some_and(|c| c.usable())
    }

    /// Starts this node's watch of the standing generation (PostgreSQL; nothing to do with SQLite), after
    /// which the node caches credential resolutions and workspace rows. Only serving nodes call it: a process
    /// without a watch (the CLI) never uses its cache. See [`cache`].
    pub fn watch_standing(&self) {
        let (Some(lease), Some(cache)) = (&self.node, &self.cache) else { return };
        if lease.watching.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let options = (*self.pool.connect_options()).clone();
        tokio::spawn(cache::watch(cache.clone(), lease.clone(), options));
    }

    /// Turns group commit off (each write transaction commits on its own) or back on. On by default.
    pub fn with_group_commit(mut self, on: bool) -> Store {
        if !on {
            self.lanes = Arc::new([]);
        } else if self.lanes.is_empty() {
            let options = (*self.pool.connect_options()).clone();
            let cache = if self.node.is_some() { None } else { self.cache.clone() };
            self.lanes = new_lanes(self.backend, &options, &self.seal_key, cache);
        }
        self
    }

    /// Write transactions committed and durable commits that carried them, since this store was opened (both
    /// 0 without group commit). Their ratio is the mean group size.
    pub fn group_commit_stats(&self) -> (u64, u64) {
        self.lanes.iter().map(|lane| lane.stats()).fold((0, 0), |(m, c), (dm, dc)| (m + dm, c + dc))
    }

    /// Groups of appends written in one statement (PostgreSQL only, see `append_statement`) since this store
    /// was opened.
    pub fn one_statement_groups(&self) -> u64 {
        self.lanes.iter().map(|lane| lane.one_statement_groups()).sum()
    }

    /// The integrity key, for verifying MACs.
    pub fn seal_key(&self) -> &SealKey {
        &self.seal_key
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Applies pending migrations of this backend. Safe to run from several nodes at once: sqlx takes an
    /// advisory lock on PostgreSQL, and SQLite serialises writers.
    pub async fn migrate(&self) -> Result<()> {
        // One folder while the two backends' DDL is identical (portable types, `$n` binds); it splits per
        // backend the day a migration needs to differ.
        let migrator = migrations::main().await.map_err(|e| StoreError::Migration(e.to_string()))?;
        let newer = migrations::run(migrator, &self.pool).await.map_err(StoreError::Migration)?;
        if !newer.is_empty() {
            tracing::warn!(
                versions = ?newer,
                "the database was migrated by a newer release; serving it as the online-migration rule allows \
                 (upgrade this node)"
            );
        }
        if self.backend() == Backend::Postgres {
            evidence_db::store_uncompressed(&self.pool).await?;
            copy_in::prepare(&self.pool).await?;
        }
        self.evidence.migrate(&self.pool).await
    }

    /// The lane the next writer takes (none without group commit).
    fn next_lane(&self) -> Option<&Arc<group::Lane>> {
        match self.lanes.len() {
            0 => None,
            1 => Some(&self.lanes[0]),
            n => Some(&self.lanes[self.next_lane.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n]),
        }
    }

    /// Begins a write transaction (see [`WriteTx`]).
    pub fn begin(&self) -> Boxed<'_, Result<WriteTx>> {
        Box::pin(async move {
            let lane = self.next_lane();
            let inner = match lane {
                Some(lane) => {
                    let (state, group) = lane.begin().await?;
                    Inner::Lane { lane: lane.clone(), state: Some(state), group }
                }
                None => {
                    let writer = match &self.sqlite_writer {
                        Some(lock) => Some(lock.clone().lock_owned().await),
                        None => None,
                    };
                    let mut tx = self.pool.begin_with(dialect::begin_write(self.backend)).await?;
                    tx.execute("SAVEPOINT fiscus_member").await?;
                    Inner::Single { tx, _writer: writer }
                }
            };
            Ok(WriteTx {
                inner,
                cache: self.cache.clone(),
                nodes: self.node.as_ref().map(|_| self.pool.clone()),
                standing_changed: false,
                seal_key: self.seal_key.clone(),
                copy_url: self.copy_url.clone(),
                staged: Vec::new(),
            })
        })
    }

    /// Writes `appends` (rows of append-only tables, the request's idempotency record and its audit events)
    /// and returns once they are durable, or says what holds the key if it was held (then nothing was
    /// written). With group commit the lane writes them with its group, batched with other members' (see
    /// [`appends`]); without, in a transaction of their own.
    pub fn append(&self, appends: appends::Appends) -> Boxed<'_, Result<appends::Appended>> {
        Box::pin(async move {
            // A workspace's appends all take the same lane: each group locks the workspace's audit head from its
            // chaining to its COMMIT, so groups of one workspace on different lanes would only wait for each
            // other, where on one lane they join the same group.
            let lane = match (self.lanes.len(), appends.workspace()) {
                (0, _) => None,
                (n, Some(workspace_id)) if n > 1 => Some(&self.lanes[lane_of(workspace_id, n)]),
                _ => self.next_lane(),
            };
            if let Some(lane) = lane {
                return lane.append(appends).await;
            }
            let _writer = match &self.sqlite_writer {
                Some(lock) => Some(lock.clone().lock_owned().await),
                None => None,
            };
            let mut tx = self.pool.begin_with(dialect::begin_write(self.backend)).await?;
            let outcome = appends::write(&mut tx, &[&appends]).await?.pop().unwrap_or(appends::Appended::Written);
            if matches!(outcome, appends::Appended::Written) {
                audit::write_chained(&mut tx, &self.seal_key, appends.audit).await?;
                tx.commit().await?;
            }
            Ok(outcome)
        })
    }

    /// A connection to read the transparency log's integrated state (tiles, trees, index, checkpoints; see
    /// [`evidence_db`]).
    pub fn evidence_read(&self) -> Boxed<'_, Result<evidence_db::EvidenceConn>> {
        Box::pin(self.evidence.read())
    }

    /// A write transaction on the transparency log's integrated state (the integrator's and the signer's).
    pub fn evidence_begin(&self) -> Boxed<'_, Result<evidence_db::EvidenceTx>> {
        Box::pin(self.evidence.begin())
    }

    /// A pooled connection for reads.
    pub fn read(&self) -> Boxed<'_, Result<sqlx::pool::PoolConnection<sqlx::Any>>> {
        Box::pin(async move { Ok(self.pool.acquire().await?) })
    }

    /// Checks the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<()> {
        let mut conn = self.read().await?;
        conn.ping().await?;
        Ok(())
    }

    /// Resolves a presented API key (by its public lookup), from the cache when there is one.
    pub async fn resolve_api_key(&self, lookup: &str) -> Result<Option<Arc<credentials::ResolvedCredential>>> {
        self.resolve(cache::Kind::ApiKey, lookup).await
    }

    /// Resolves a presented OAuth access token (by its public lookup), from the cache when there is one.
    pub async fn resolve_access_token(&self, lookup: &str) -> Result<Option<Arc<credentials::ResolvedCredential>>> {
        self.resolve(cache::Kind::Token, lookup).await
    }

    async fn resolve(&self, kind: cache::Kind, lookup: &str) -> Result<Option<Arc<credentials::ResolvedCredential>>> {
        let cached = self.cache.as_ref().and_then(|c| c.credential(kind, lookup));
        let ticket = match cached {
            Some((_, Some(hit))) => return Ok(Some(hit)),
            Some((ticket, None)) => Some(ticket),
            None => None,
        };
        let mut conn = self.read().await?;
        let found = match kind {
            cache::Kind::ApiKey => credentials::resolve_api_key(&mut conn, lookup).await?,
            cache::Kind::Token => credentials::resolve_access_token(&mut conn, lookup).await?,
        }
        .map(Arc::new);
        if let (Some(cache), Some(ticket), Some(row)) = (&self.cache, ticket, &found) {
            cache.store_credential(ticket, kind, lookup, row.clone());
        }
        Ok(found)
    }

    /// Resolves a signed execution client by id (a request's `keyid`), from the cache when there is one. A
    /// decision about a client changes standing, so the cache forgets it as it forgets a rotated key.
    pub async fn resolve_client(&self, client_id: &str) -> Result<Option<Arc<execution_clients::ResolvedClient>>> {
        let cached = self.cache.as_ref().and_then(|c| c.client(client_id));
        let ticket = match cached {
            Some((_, Some(hit))) => return Ok(Some(hit)),
            Some((ticket, None)) => Some(ticket),
            None => None,
        };
        let mut conn = self.read().await?;
        let found = execution_clients::resolve(&mut conn, &self.seal_key, client_id).await?.map(Arc::new);
        if let (Some(cache), Some(ticket), Some(row)) = (&self.cache, ticket, &found) {
            cache.store_client(ticket, client_id, row.clone());
        }
        Ok(found)
    }

    /// A workspace row, from the cache when there is one.
    pub async fn workspace(&self, workspace_id: &str) -> Result<Arc<workspaces::WorkspaceRow>> {
        let cached = self.cache.as_ref().and_then(|c| c.workspace(workspace_id));
        let ticket = match cached {
            Some((_, Some(hit))) => return Ok(hit),
            Some((ticket, None)) => Some(ticket),
            None => None,
        };
        let mut conn = self.read().await?;
        let row = Arc::new(workspaces::get(&mut conn, workspace_id).await?);
        if let (Some(cache), Some(ticket)) = (&self.cache, ticket) {
            cache.store_workspace(ticket, row.clone());
        }
        Ok(row)
    }

    pub async fn close(&self) {
        if let Some(lease) = &self.node
            && lease.watching.load(std::sync::atomic::Ordering::SeqCst)
        {
            // Stop the watch and leave the node list, so committers stop waiting for this node at once.
            lease.stop.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = sqlx::query("DELETE FROM cache_nodes WHERE node_id = $1")
                .bind(&lease.node_id)
                .execute(&self.pool)
                .await;
        }
        self.pool.close().await;
        self.evidence.close().await;
    }
}

/// Hides a password in a database URL before it is printed.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..scheme_end + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// The database file of a `sqlite://` URL (none for in-memory databases).
fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or("");
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    Some(std::path::PathBuf::from(path))
}

/// Group-commit lanes on PostgreSQL. One lane's members wait on each other's round trips; several lanes
/// overlap them (and PostgreSQL groups their commits' WAL flushes itself). They meet only on rows two members
/// both change (an audit head, at a group's end, in workspace order; a row being decided), where the later
/// one waits for the earlier one's commit.
pub const POSTGRES_LANES: usize = 4;

fn new_lanes(
    backend: Backend,
    options: &AnyConnectOptions,
    seal_key: &Arc<SealKey>,
    cache: Option<Arc<cache::TenancyCache>>,
) -> Arc<[Arc<group::Lane>]> {
    let count = match backend {
        Backend::Sqlite => 1,
        Backend::Postgres => POSTGRES_LANES,
    };
    (0..count).map(|_| new_lane(backend, options.clone(), seal_key.clone(), cache.clone())).collect()
}

/// A group-commit lane. The cache generation is published again once a group holding a standing change is
/// durable, so nothing read between the pre-commit publication and the commit is kept.
fn new_lane(
    backend: Backend,
    options: AnyConnectOptions,
    seal_key: Arc<SealKey>,
    cache: Option<Arc<cache::TenancyCache>>,
) -> Arc<group::Lane> {
    let after_standing = cache.map(|cache| {
        Arc::new(move || {
            if let Err(e) = cache.bump() {
                tracing::error!(error = %e, "could not publish a credential generation after commit");
            }
        }) as group::AfterStanding
    });
    Arc::new(group::Lane::new(backend, options, seal_key, after_standing))
}

/// Settings of every SQLite connection. WAL lets readers run beside the writer; synchronous=FULL makes every
/// acknowledged commit durable across power loss, not only across a process crash.
pub(crate) async fn sqlite_pragmas(conn: &mut AnyConnection) -> std::result::Result<(), sqlx::Error> {
    conn.execute("PRAGMA journal_mode = WAL").await?;
    conn.execute("PRAGMA synchronous = FULL").await?;
    conn.execute("PRAGMA busy_timeout = 10000").await?;
    conn.execute("PRAGMA foreign_keys = ON").await?;
    Ok(())
}

/// A column holding an actor's label, read as the `Actor` it names (an unknown kind fails the read).
pub fn actor_column(
    row: &sqlx::any::AnyRow,
    column: &str,
) -> std::result::Result<fiscus_domain::actor::Actor, sqlx::Error> {
    use sqlx::Row as _;
    fiscus_domain::actor::Actor::try_from(row.try_get::<String, _>(column)?)
        .map_err(|e| sqlx::Error::ColumnDecode { index: column.to_string(), source: Box::new(e) })
}

/// Booleans are stored as 0/1 on both backends.
pub(crate) fn flag(b: bool) -> i64 {
    i64::from(b)
}

/// A stable lane for a workspace (FNV-1a of its id; any stable spread will do).
fn lane_of(workspace_id: &str, lanes: usize) -> usize {
    let hash =
        workspace_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    (hash % lanes as u64) as usize
}
